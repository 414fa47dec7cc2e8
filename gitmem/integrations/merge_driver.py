"""The git merge driver for memory files: front matter merged field by field, the body as text.

Registered by ``gitmem init`` / ``gitmem hooks install``: a line in
``.gitmem/.gitattributes`` (``memories/*.md merge=gitmem``, committed) and
``merge.gitmem.driver`` in the clone's git config, which runs
``python -m gitmem merge-file %O %A %B %P``.

Rules (base O, ours A, theirs B):

* anchors: union by anchor key (the side that changed an anchor's record wins;
  both changed it: the side with the later ``updated``); tags, facts,
  ``supersedes``, ``superseded_by``: union, ours first;
* single values (title, type, confidence, scope, source, author, retired,
  invariant, reviewed, …): the side that changed it; both changed it differently: the
  side with the later ``updated``; ``updated``: the later of the two;
* provenance: then the lower of the two sides' (``provenance.lowered``: a merge never makes
  model text look person-written); a review lapses by itself when the merged text differs from
  the text reviewed; keys unknown to this version (``Memory.extra``): both sides', ours first;
* body: the side that changed it; both changed it differently: a conflict —
  the merged front matter with the body in ordinary conflict markers, exit 1,
  which ``gitmem doctor`` and every command then report for that file.

A version that does not parse (already conflicted, hand-broken) falls back to
git's own text merge (``git merge-file``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from .. import provenance
from ..errors import MemoryFileError
from ..infra import atomic_write
from ..layout import ATTRIBUTES_FILE
from ..memfile import dumps, loads
from ..model import Memory

DRIVER_NAME = "gitmem"
ATTRIBUTES_LINE = "memories/*.md merge=gitmem"
_SINGLE = ("type", "title", "author", "source", "origin", "session", "model", "confidence", "created", "scope",
           "retired", "invariant", "reviewed")
_LISTS = ("tags", "facts", "supersedes", "superseded_by")


def _pick(base: Any, ours: Any, theirs: Any, theirs_later: bool) -> Any:
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return theirs if theirs_later else ours


def _union(base: list[Any], ours: list[Any], theirs: list[Any]) -> list[Any]:
    """Three-way union: what either side added, minus what either side removed from the base."""
    b = set(base)
    return [x for x in dict.fromkeys([*ours, *theirs]) if not (x in b and (x not in ours or x not in theirs))]


def decided_fields(base: Memory | None, ours: Memory, theirs: Memory) -> list[tuple[str, str]]:
    """The single values both sides changed differently, each with the side ``merge_memories`` keeps for it:
    ``[(field, "ours" | "theirs"), ...]`` in ``_SINGLE`` order (the side with the later ``updated``; theirs only
    when strictly later). What a merge decided without a conflict, for a command to say (``gitmem personal
    pull``); [] when nothing was decided that way."""
    base = base or ours
    later = (theirs.updated or "") > (ours.updated or "")
    out = []
    for f in _SINGLE:
        b, o, t = getattr(base, f), getattr(ours, f), getattr(theirs, f)
        if o != t and o != b and t != b:
            out.append((f, "theirs" if later else "ours"))
    return out


def merge_memories(base: Memory | None, ours: Memory, theirs: Memory) -> tuple[Memory, bool]:
    """The merged memory and whether the bodies conflict (see the module docstring)."""
    base = base or ours
    later = (theirs.updated or "") > (ours.updated or "")
    merged = Memory(id=ours.id, type=ours.type, title=ours.title)
    for f in _SINGLE:
        setattr(merged, f, _pick(getattr(base, f), getattr(ours, f), getattr(theirs, f), later))
    for f in _LISTS:
        setattr(merged, f, _union(getattr(base, f), getattr(ours, f), getattr(theirs, f)))
    b = {a.key: a for a in base.anchors}
    o = {a.key: a for a in ours.anchors}
    t = {a.key: a for a in theirs.anchors}
    anchors = []
    for key in dict.fromkeys([*o, *t]):
        if key in o and key in t:
            anchors.append(_pick(b.get(key), o[key], t[key], later))
        elif key in o:
            if key in b and o[key] == b[key] and key not in t:
                continue  # theirs removed an anchor ours left alone
            anchors.append(o[key])
        else:
            if key in b and t[key] == b[key]:
                continue  # ours removed it
            anchors.append(t[key])
    merged.anchors = anchors
    merged.updated = max(ours.updated or "", theirs.updated or "")
    merged.extra = {**theirs.extra, **ours.extra}
    for side in (ours, theirs):  # merging never raises a level: the lower side's provenance wins
        provenance.lowered(merged, side)
    conflict = False
    if ours.body == theirs.body or theirs.body == base.body:
        merged.body = ours.body
    elif ours.body == base.body:
        merged.body = theirs.body
    else:
        conflict = True
        merged.body = ""
    return merged, conflict


def merge_file(base_path: str, ours_path: str, theirs_path: str, name: str = "") -> int:
    """Merge three versions into ``ours_path`` (git's %O %A %B); returns 0 when clean, 1 on a conflict."""
    paths = [Path(base_path), Path(ours_path), Path(theirs_path)]
    try:
        texts = [p.read_text("utf-8") if p.exists() and p.stat().st_size else "" for p in paths]
        base = loads(texts[0], path=name) if texts[0] else None
        ours, theirs = loads(texts[1], path=name), loads(texts[2], path=name)
    except (MemoryFileError, UnicodeDecodeError, OSError):
        proc = subprocess.run(["git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs",
                               ours_path, base_path, theirs_path], capture_output=True)
        return 0 if proc.returncode == 0 else 1
    merged, conflict = merge_memories(base, ours, theirs)
    text = dumps(merged)
    if conflict:
        body = (f"<<<<<<< ours\n{ours.body.rstrip()}\n=======\n{theirs.body.rstrip()}\n>>>>>>> theirs\n")
        text = text.rstrip("\n") + "\n" + body if text.endswith("---\n") else text + body
    atomic_write(Path(ours_path), text.encode("utf-8"))  # git's %A temp file: git moves it into place
    return 1 if conflict else 0


def install(repo_root: Path, python: str = sys.executable) -> list[str]:
    """Register the driver: the ``.gitmem/.gitattributes`` line and the clone's git config; returns changes."""
    from ..git import Repo

    changed = []
    attrs = repo_root / ATTRIBUTES_FILE
    lines = attrs.read_text("utf-8").splitlines() if attrs.exists() else []
    if ATTRIBUTES_LINE not in lines:
        atomic_write(attrs, ("\n".join([*lines, ATTRIBUTES_LINE]) + "\n").encode("utf-8"))
        changed.append(ATTRIBUTES_FILE)
    repo = Repo(repo_root)
    driver = f'"{python}" -m gitmem merge-file %O %A %B %P'
    if repo.local_config(f"merge.{DRIVER_NAME}.driver") != driver:
        repo.set_local_config(f"merge.{DRIVER_NAME}.name", "gitmem memory files (field by field)")
        repo.set_local_config(f"merge.{DRIVER_NAME}.driver", driver)
        changed.append(f"git config merge.{DRIVER_NAME}.driver")
    return changed
