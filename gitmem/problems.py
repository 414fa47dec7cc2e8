"""Jobs that failed to do what they exist for, kept until they next succeed: what ``doctor`` reports.

A git hook never fails a commit, so when one of its jobs cannot be done (the pre-commit share
could not stage a memory, a re-anchor could not be written) the hook says so in one line at
that moment, and records the failure here so that ``gitmem doctor`` reports it as a problem
(exit 1) until the same job succeeds again (``clear``). One JSON file per job in
``<common-dir>/gitmem/problems/`` (``Layout.problems_dir``): ``{"job", "at", "message", "hint"}``.

Standard library only (hooks import it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from . import infra, layout

#: The jobs that record problems.
SHARE = "share"
FOLLOW_MOVES = "follow-moves"
#: A pre-commit step stopped at its time limit before it shared (cleared when a later commit has).
SHARE_PENDING = "share-pending"


@dataclass
class Problem:
    """A job that failed: ``job`` (``SHARE``…), ``at`` (UTC stamp), one-line ``message`` and ``hint``."""

    job: str
    at: str
    message: str
    hint: str


def _path(root: Path, job: str) -> Path:
    return layout.of(root).problems_dir / f"{job}.json"


def record(root: Path, job: str, message: str, hint: str) -> None:
    """Record that ``job`` failed in the work tree at ``root`` (replacing its earlier record). Never raises."""
    try:
        path = _path(root, job)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"job": job, "at": infra.utc_now(), "message": message, "hint": hint}
        infra.atomic_write(path, json.dumps(data).encode("utf-8"))
    except OSError:
        pass


def clear(root: Path, job: str) -> None:
    """``job`` did its work: forget its failure. Never raises."""
    try:
        _path(root, job).unlink(missing_ok=True)
    except OSError:
        pass


def current(root: Path) -> list[Problem]:
    """The recorded failures of the clone of ``root``, oldest first ([] when none or unreadable)."""
    try:
        files = sorted(layout.of(root).problems_dir.glob("*.json"))
    except OSError:
        return []
    out = []
    for f in files:
        try:
            d = json.loads(f.read_text("utf-8"))
            out.append(Problem(str(d["job"]), str(d["at"]), str(d["message"]), str(d.get("hint", ""))))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return sorted(out, key=lambda p: p.at)
