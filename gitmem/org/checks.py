"""The last check of each cross-repository anchor (issue 21), one JSON file per clone; stdlib only.

Owns ``layout.xrepo_checks_file`` (``<common-dir>/gitmem/xrepo-checks.json``): per foreign anchor (its key, the
commit it was made at and its fingerprint: an anchor made again starts anew), the status its last successful
check found at the other repository (``gitmem stale``, ``gitmem org check``: ``gitmem.org.xrepo``), the reason,
the other repository's commit it was checked at, and where the code is now. ``anchors.Resolver`` answers a
foreign anchor's status from here, so every reader of statuses (the catalog, the hooks, ``show``, ``list``) has
the last check without running git in the other repository; an anchor never checked is as it was made (its
symbol was found at the other repository's ref then: fresh).

Must not import: anything outside the standard library, ``model``, ``infra`` and ``layout``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import infra
from ..model import Anchor, AnchorStatus, Change, Status

#: The file's format; another version is ignored (the next check writes it again).
FORMAT = 1


@dataclass(frozen=True)
class Checked:
    """One foreign anchor's last successful check.

    Attributes:
        status: fresh, moved, stale or deleted (never unchecked: a failed check leaves the last one).
        reason: one line, ``ledger@1a2b3c4: `retry_after` body changed`` ("" when fresh).
        commit: the other repository's commit it was checked at (its ref's commit then).
        changed_in: the other repository's commit that made it not fresh, when one can be named.
        path_now, symbol_now: where the code is at ``commit`` (None when deleted).
        changes: what changed (``model.Change`` values).
        at: when it was checked (UTC ISO-8601).
    """

    status: str
    reason: str
    commit: str
    changed_in: str | None = None
    path_now: str | None = None
    symbol_now: str | None = None
    changes: tuple[str, ...] = ()
    at: str = ""


def record_key(a: Anchor) -> str:
    """The key of ``a`` in the file: its text form, the commit it was made at, its fingerprint."""
    return f"{a.key}\x1f{a.commit or ''}\x1f{a.fingerprint or ''}"


def load(path: Path) -> dict[str, Checked]:
    """The checks recorded in ``path``; {} when the file is missing, unreadable or of another format."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or not isinstance(raw.get("anchors"), dict):
        return {}
    out: dict[str, Checked] = {}
    for k, v in raw["anchors"].items():
        try:
            out[k] = Checked(status=Status(v["status"]).value, reason=str(v.get("reason", "")),
                             commit=str(v.get("commit", "")), changed_in=v.get("changed_in"),
                             path_now=v.get("path_now"), symbol_now=v.get("symbol_now"),
                             changes=tuple(str(c) for c in v.get("changes", ())), at=str(v.get("at", "")))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return out


def save(path: Path, checks: dict[str, Checked]) -> None:
    """Write ``checks`` to ``path`` atomically (sorted keys: the same checks give the same bytes).

    Raises:
        OSError: the file cannot be written.
    """
    data: dict[str, Any] = {"format": FORMAT, "anchors": {
        k: {"status": c.status, "reason": c.reason, "commit": c.commit, "changed_in": c.changed_in,
            "path_now": c.path_now, "symbol_now": c.symbol_now, "changes": list(c.changes), "at": c.at}
        for k, c in sorted(checks.items())}}
    path.parent.mkdir(parents=True, exist_ok=True)
    infra.atomic_write(path, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode("utf-8"))


def as_status(a: Anchor, c: Checked | None) -> AnchorStatus:
    """``a``'s status as last checked (``c``); as made (fresh, where it was) when never checked."""
    if c is None:
        return AnchorStatus(a, Status.FRESH, path_now=a.path, symbol_now=a.symbol, old_span=a.span,
                            new_span=a.span)
    status = Status(c.status)
    changes = [Change(x) for x in c.changes if x in Change._value2member_map_]
    return AnchorStatus(a, status, path_now=c.path_now, symbol_now=c.symbol_now, commit=c.changed_in,
                        changes=changes, old_span=a.span, reason=c.reason)
