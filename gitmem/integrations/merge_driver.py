"""The git merge driver for memory files: front matter merged field by field, the body as text.

Registered by ``gitmem init`` / ``gitmem hooks install``: a line in
``.gitmem/.gitattributes`` (``memories/*.md merge=gitmem``, committed) and
``merge.gitmem.driver`` in the clone's git config, which runs
``python -m gitmem merge-file %O %A %B %P``.

Rules (base O, ours A, theirs B):

* anchors: matched by identity, not by text (``match_anchors``): an anchor of a side is the base's
  anchor it has the key of, or that it followed (its ``was``, the key before the code moved or was
  renamed, names the base anchor's key or ``was``: "followed there" and "re-anchored here" are one
  anchor), else the one with its code (an equal fingerprint, the only such anchor). Then per anchor,
  where it is (path and symbol, with its ``was``) and what code it holds (fingerprint, with the
  commit, span and kind recorded with it) are merged apart: each from the side that changed it, so a
  move on one side and a re-anchor over changed code on the other give the moved anchor with the new
  fingerprint — what the merged code is. A real conflict is reported as one (``AnchorConflict``): both
  sides moved it to different places, both re-anchored it over different code, or one side removed it
  while the other re-anchored it over changed code (a removal wins over a move or a refresh of the same
  code). Anchors only one side added are kept; both added one: matched the same way, the later side's
  record kept;
* tags, facts, ``supersedes``, ``superseded_by``: union, ours first;
* single values (title, type, confidence, scope, source, author, retired,
  invariant, reviewed, …): the side that changed it; both changed it differently: the
  side with the later ``updated``; ``updated``: the later of the two;
* provenance: then the lower of the two sides' (``provenance.lowered``: a merge never makes
  model text look person-written); a review lapses by itself when the merged text differs from
  the text reviewed; keys unknown to this version (``Memory.extra``): both sides', ours first;
* body: the side that changed it; both changed it differently: a conflict —
  the merged front matter with the body in ordinary conflict markers, exit 1,
  which ``gitmem doctor`` and every command then report for that file. An anchor conflict is
  written the same way inside the ``anchors:`` list (ours, then theirs, each side's record
  whole, the marker lines saying what each side did) and said on stderr; keeping one side's
  lines and dropping the markers leaves a valid file.

A version that does not parse (already conflicted, hand-broken) falls back to
git's own text merge (``git merge-file``).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import provenance
from ..errors import MemoryFileError
from ..infra import atomic_write
from ..layout import ATTRIBUTES_FILE
from ..memfile import anchor_yaml, dumps, loads
from ..model import KIND_COMMIT, Anchor, Memory

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


@dataclass
class AnchorConflict:
    """One anchor the two sides changed in ways that cannot both hold: ``ours`` / ``theirs`` its record on each
    side (None: that side removed it), ``why`` what each side did, one line (``a.py::f moved to b.py::f on ours,
    to c.py::f on theirs``)."""

    ours: Anchor | None
    theirs: Anchor | None
    why: str


@dataclass
class Merged:
    """A three-way merge of one memory: ``memory`` (for a conflicted anchor, ours' record, else theirs', in its
    place), ``body_conflict`` (both sides rewrote the body differently: ``memory.body`` is empty) and
    ``anchor_conflicts``."""

    memory: Memory
    body_conflict: bool = False
    anchor_conflicts: list[AnchorConflict] = field(default_factory=list)

    @property
    def conflict(self) -> bool:
        return self.body_conflict or bool(self.anchor_conflicts)


def _link(a: Anchor, b: Anchor) -> int:
    """How strongly anchor ``a`` (of a side) names the same anchor as ``b`` (of the base): 0 for not at all. The
    same key (2); ``a`` followed ``b``'s code from ``b``'s place (``a.was`` is ``b``'s key: 2); both descend
    from one earlier place (``b.was`` is ``a``'s key or ``was``: a move back, a move on: 1); plus 2 when the
    code is the same (equal fingerprints), so the anchor that kept the code wins over a new anchor that took
    the old name."""
    if a.repo != b.repo or (a.kind == KIND_COMMIT) != (b.kind == KIND_COMMIT):
        return 0
    score = 2 * (a.key == b.key) + 2 * (a.was is not None and a.was == b.local_key)
    if b.was is not None and b.was in (a.local_key, a.was):
        score += 1
    if score and a.fingerprint and a.fingerprint == b.fingerprint:
        score += 2
    return score


def match_anchors(side: list[Anchor], base: list[Anchor]) -> dict[int, int]:
    """Which anchor of ``base`` each anchor of ``side`` is, by identity: ``{side index: base index}``, one to one;
    an anchor of ``side`` with no entry is new there.

    First by name (``_link``: the key, the ``was`` history of moves and renames; the strongest links first,
    ties in list order), then, among those left, by code alone: the same fingerprint and kind, when exactly one
    anchor on each side has it (a key changed by hand, with no ``was``)."""
    pairs = sorted(((-_link(a, b), i, j) for i, a in enumerate(side) for j, b in enumerate(base)
                    if _link(a, b)))
    out: dict[int, int] = {}
    taken: set[int] = set()
    for _, i, j in pairs:
        if i not in out and j not in taken:
            out[i] = j
            taken.add(j)

    def code(a: Anchor) -> tuple[str | None, str, str | None] | None:
        return (a.repo, a.kind, a.fingerprint) if a.fingerprint and a.kind != KIND_COMMIT else None

    left = [i for i in range(len(side)) if i not in out]
    free = [j for j in range(len(base)) if j not in taken]
    for i in left:
        c = code(side[i])
        same = [j for j in free if c is not None and code(base[j]) == c]
        if len(same) == 1 and sum(1 for k in left if code(side[k]) == c) == 1:
            out[i] = same[0]
            free.remove(same[0])
    return out


def _place(a: Anchor) -> tuple[str | None, str | None, str | None]:
    return a.repo, a.path, a.symbol


def _merge_anchor(b: Anchor | None, o: Anchor | None, t: Anchor | None,
                  theirs_later: bool) -> tuple[Anchor | None, AnchorConflict | None]:
    """One anchor merged from its base, ours and theirs records (None: absent there); see the module docstring."""
    if o is None and t is None:
        return None, None
    if b is None:
        if o is not None and t is not None:
            return _pick(None, o, t, theirs_later), None
        return o or t, None
    if o is None or t is None:
        kept = o or t
        assert kept is not None
        if kept.fingerprint == b.fingerprint:
            return None, None  # removed on one side, only moved or refreshed on the other: removed
        removed, changed = ("ours", "theirs") if o is None else ("theirs", "ours")
        return None, AnchorConflict(o, t, f"{b.key} removed on {removed}, re-anchored over changed code "
                                          f"on {changed} (as {kept.key})")
    moved_o, moved_t = _place(o) != _place(b), _place(t) != _place(b)
    if moved_o and moved_t and _place(o) != _place(t):
        return None, AnchorConflict(o, t, f"{b.key} moved to {o.key} on ours, to {t.key} on theirs")
    code_o, code_t = o.fingerprint != b.fingerprint, t.fingerprint != b.fingerprint
    if code_o and code_t and o.fingerprint != t.fingerprint:
        return None, AnchorConflict(o, t, f"{b.key} re-anchored over different code on each side "
                                          f"(ours as {o.key}, theirs as {t.key})")
    # What code it holds: the side that re-anchored it over changed code; else the side that moved it (its
    # commit and span are the moved code's); else the record either side refreshed (the later when both).
    if code_o != code_t:
        code = o if code_o else t
    elif moved_o != moved_t:
        code = o if moved_o else t
    else:
        code = _pick(b, o, t, theirs_later)
    where = o if moved_o and not moved_t else t if moved_t and not moved_o else code
    merged = replace(code, path=where.path, symbol=where.symbol, repo=where.repo, was=where.was)
    if merged.was == merged.local_key:
        merged = replace(merged, was=None)  # moved back on one side
    return merged, None


def merge_anchors(base: list[Anchor], ours: list[Anchor], theirs: list[Anchor],
                  theirs_later: bool) -> tuple[list[Anchor], list[AnchorConflict]]:
    """The anchors of a memory merged by identity (``match_anchors``, ``_merge_anchor``), ours' order first, then
    what only theirs has; and the conflicts, each with its record (ours', else theirs') in the list in its place.
    ``theirs_later``: theirs was updated later (decides between two refreshes of the same anchor)."""
    to_base_o, to_base_t = match_anchors(ours, base), match_anchors(theirs, base)
    new_o = [i for i in range(len(ours)) if i not in to_base_o]
    new_t = [k for k in range(len(theirs)) if k not in to_base_t]
    both_new = {new_o[i]: new_t[k] for i, k in match_anchors([ours[i] for i in new_o],
                                                              [theirs[k] for k in new_t]).items()}
    of_base_t = {j: k for k, j in to_base_t.items()}
    groups: list[tuple[Anchor | None, Anchor | None, Anchor | None]] = []
    done_t: set[int] = set()
    for i, a in enumerate(ours):
        k: int | None
        if i in to_base_o:
            j = to_base_o[i]
            k = of_base_t.get(j)
            groups.append((base[j], a, theirs[k] if k is not None else None))
        else:
            k = both_new.get(i)
            groups.append((None, a, theirs[k] if k is not None else None))
        if k is not None:
            done_t.add(k)
    for n, a in enumerate(theirs):
        if n in done_t:
            continue
        jt = to_base_t.get(n)
        groups.append((base[jt] if jt is not None else None, None, a))
    anchors: list[Anchor] = []
    conflicts: list[AnchorConflict] = []
    seen: set[str] = set()
    for b, o, t in groups:
        merged, conflict = _merge_anchor(b, o, t, theirs_later)
        if conflict is not None:
            conflicts.append(conflict)
            merged = conflict.ours or conflict.theirs
        if merged is not None and (conflict is not None or merged.key not in seen):
            seen.add(merged.key)
            anchors.append(merged)
    return anchors, conflicts


def merge(base: Memory | None, ours: Memory, theirs: Memory) -> Merged:
    """The merged memory, with what conflicts (see the module docstring). ``base`` None: the file was added on
    both sides (ours taken as the base)."""
    base = base or ours
    later = (theirs.updated or "") > (ours.updated or "")
    merged = Memory(id=ours.id, type=ours.type, title=ours.title)
    for f in _SINGLE:
        setattr(merged, f, _pick(getattr(base, f), getattr(ours, f), getattr(theirs, f), later))
    for f in _LISTS:
        setattr(merged, f, _union(getattr(base, f), getattr(ours, f), getattr(theirs, f)))
    merged.anchors, conflicts = merge_anchors(base.anchors, ours.anchors, theirs.anchors, later)
    merged.updated = max(ours.updated or "", theirs.updated or "")
    merged.extra = {**theirs.extra, **ours.extra}
    for side in (ours, theirs):  # merging never raises a level: the lower side's provenance wins
        provenance.lowered(merged, side)
    body_conflict = False
    if ours.body == theirs.body or theirs.body == base.body:
        merged.body = ours.body
    elif ours.body == base.body:
        merged.body = theirs.body
    else:
        body_conflict = True
        merged.body = ""
    return Merged(merged, body_conflict, conflicts)


def merge_memories(base: Memory | None, ours: Memory, theirs: Memory) -> tuple[Memory, bool]:
    """The merged memory and whether anything conflicts (the bodies, an anchor): ``merge`` without the details."""
    res = merge(base, ours, theirs)
    return res.memory, res.conflict


def _with_anchor_conflicts(text: str, conflicts: list[AnchorConflict]) -> str:
    """``text`` (a dumped memory holding each conflict's placeholder record) with each placeholder's lines in the
    ``anchors:`` list replaced by the two sides' records in conflict markers."""
    head = text.find("\nanchors:\n")
    for c in conflicts:
        placeholder = anchor_yaml(c.ours or c.theirs)  # type: ignore[arg-type]
        at = text.find(placeholder, head)
        if head < 0 or at < 0:  # not expected: every conflict's record is in the list
            continue
        block = (f"<<<<<<< ours: {c.why}\n{anchor_yaml(c.ours) if c.ours else ''}=======\n"
                 f"{anchor_yaml(c.theirs) if c.theirs else ''}>>>>>>> theirs\n")
        text = text[:at] + block + text[at + len(placeholder):]
    return text


def merge_file(base_path: str, ours_path: str, theirs_path: str, name: str = "") -> int:
    """Merge three versions into ``ours_path`` (git's %O %A %B); returns 0 when clean, 1 on a conflict (each
    anchor conflict also said on stderr, one line: the file, what each side did, what to do)."""
    paths = [Path(base_path), Path(ours_path), Path(theirs_path)]
    try:
        texts = [p.read_text("utf-8") if p.exists() and p.stat().st_size else "" for p in paths]
        base = loads(texts[0], path=name) if texts[0] else None
        ours, theirs = loads(texts[1], path=name), loads(texts[2], path=name)
    except (MemoryFileError, UnicodeDecodeError, OSError):
        proc = subprocess.run(["git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs",
                               ours_path, base_path, theirs_path], capture_output=True)
        return 0 if proc.returncode == 0 else 1
    res = merge(base, ours, theirs)
    text = _with_anchor_conflicts(dumps(res.memory), res.anchor_conflicts)
    if res.body_conflict:
        body = (f"<<<<<<< ours\n{ours.body.rstrip()}\n=======\n{theirs.body.rstrip()}\n>>>>>>> theirs\n")
        text = text.rstrip("\n") + "\n" + body if text.endswith("---\n") else text + body
    atomic_write(Path(ours_path), text.encode("utf-8"))  # git's %A temp file: git moves it into place
    for c in res.anchor_conflicts:
        print(f"gitmem: {name or ours.id}: anchor conflict: {c.why}: keep one side's lines between the "
              f"markers and drop the marker lines, then `git add {name or '<file>'}`", file=sys.stderr)
    return 1 if res.conflict else 0


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
