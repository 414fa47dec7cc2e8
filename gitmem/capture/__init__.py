"""Capture: the hot path from agent hook events to the local spool (stdlib only)."""
