"""Run the real ``gitmem`` CLI in a subprocess, as a user does: ``gitmem``, ``ok``, ``listed``; and a memory builder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gitmem.model import Memory


def gitmem(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m gitmem ARGS`` in ``cwd`` (this interpreter), output captured as text; 120 s at most."""
    return subprocess.run([sys.executable, "-m", "gitmem", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def ok(cwd: Path, *args: str) -> str:
    """``gitmem(cwd, *args)``, asserted to exit 0; returns stdout."""
    p = gitmem(cwd, *args)
    assert p.returncode == 0, f"gitmem {' '.join(args)} exited {p.returncode}: {p.stderr}"
    return p.stdout


def listed(cwd: Path) -> set[str]:
    """Ids of the memories ``gitmem list --json`` shows in ``cwd``."""
    return {m["id"] for m in json.loads(ok(cwd, "list", "--json"))}


def memory(mid: str, title: str, scope: str = "team", body: str = "") -> Memory:
    """A decision memory with fixed times (no anchors), for tests that write memory files directly."""
    return Memory(id=mid, type="decision", title=title, body=body, scope=scope,
                  created="2026-11-30T10:00:00Z", updated="2026-11-30T10:00:00Z")
