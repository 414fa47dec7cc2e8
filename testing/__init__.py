"""Builders for tests: real git repositories in temp dirs (importable by tests and benchmarks)."""
