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
  fingerprint — what the merged code is. A symbol's name is part of its fingerprint: a rename on one
  side against a re-anchor on the other gives the re-anchored code's fingerprint under the new name,
  computed from the code in git's objects (``CodeLookup``) once the rename is checked to have changed
  nothing but the name. A real conflict is reported as one (``AnchorConflict``): both sides moved it
  to different places, both re-anchored it over different code, or one side removed it while the other
  re-anchored it over changed code (a removal wins over a move, a rename or a refresh of the same
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

import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import provenance
from ..errors import GitmemError, MemoryFileError
from ..infra import atomic_write
from ..layout import ATTRIBUTES_FILE
from ..memfile import anchor_yaml, dumps, loads
from ..model import KIND_COMMIT, Anchor, Memory, Symbol

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
    later = (theirs.updated or "") > (ours.updated or "")
    out = []
    for f in _SINGLE:
        b, o, t = getattr(base, f) if base else None, getattr(ours, f), getattr(theirs, f)
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


def _three(base: Any, ours: Any, theirs: Any) -> tuple[Any, bool]:
    """A three-way merge of one value: (the merged value, whether both sides changed it differently)."""
    if ours == theirs or theirs == base:
        return ours, False
    if ours == base:
        return theirs, False
    return ours, True


_NAME = re.compile(r"^(.*?)(\(.*\))?(#\d+)?$", re.S)


def _leaf(symbol: str) -> tuple[str, str, str]:
    """``Class.method(int)`` → ``("Class.", "method", "(int)")``: what is before the symbol's own name, the name,
    what is after it (its parameters' types, a ``#2``)."""
    m = _NAME.match(symbol)
    core, rest = (m.group(1), (m.group(2) or "") + (m.group(3) or "")) if m else (symbol, "")
    head, dot, name = core.rpartition(".")
    return head + dot, name, rest


class CodeLookup:
    """The code behind anchors, read from git's objects while git runs the merge driver (its work tree is the
    repository's): where a recorded fingerprint's symbol is (``find``), and what a symbol's fingerprint becomes
    under another name (``renamed_fp``). Only asked when both sides changed an anchor's fingerprint and one of
    them renamed it; a missing object, an unknown language or no such symbol gives None."""

    def __init__(self, root: Path, heads: list[str]) -> None:
        """``heads``: the commits the two sides' code may be found in (HEAD, the merged commit), besides each
        anchor's own commit and the commits after it up to them that change its file."""
        from ..anchors import Resolver
        from ..git import Repo

        self.repo = Repo(root)
        self.resolver = Resolver(self.repo)
        self.heads = [h for h in heads if h]

    @classmethod
    def here(cls) -> CodeLookup | None:
        """The lookup for the merge git is running in the current folder (HEAD; the merged side's commit from
        ``GITHEAD_<sha>`` (``git merge``) or the pick a rebase is at), None outside a repository."""
        import os

        heads = ["HEAD", *(k[len("GITHEAD_"):] for k in os.environ if k.startswith("GITHEAD_"))]
        try:
            look = cls(Path.cwd(), [])
            done = look.repo.git_dir / "rebase-merge" / "done"
            if done.is_file():
                last = done.read_text("utf-8", "replace").strip().splitlines()[-1:]
                heads += [w for w in (last[0].split()[1:2] if last else []) if re.fullmatch(r"[0-9a-f]{7,64}", w)]
            for h in heads:
                try:
                    look.heads.append(look.repo.resolve(h))
                except GitmemError:
                    continue
            return look
        except (GitmemError, OSError):
            return None

    def find(self, a: Anchor) -> tuple[bytes, Symbol] | None:
        """The file text and the symbol holding ``a``'s recorded fingerprint: at its commit, else in the commits
        after it changing its file (the code it was made on was not committed yet), else at the heads."""
        if not a.fingerprint or not a.path or not a.symbol:
            return None
        revs = [a.commit] if a.commit else []
        for head in self.heads:
            try:
                revs += self.repo.commits_touching(a.commit, head, a.path)[:MAX_LOOKUP] if a.commit else []
            except GitmemError:
                pass
            revs.append(head)
        for rev in dict.fromkeys(revs):
            try:
                table = self.resolver.table(rev, a.path) or {}
            except GitmemError:
                continue
            for sym in table.values():
                if sym.fingerprint == a.fingerprint or a.fingerprint in sym.parts:
                    data = self.resolver.source(rev, a.path)
                    if data is not None:
                        return data, sym
        return None

    def renamed_fp(self, code: tuple[bytes, Symbol], path: str, old: str, new: str, name: str) -> str | None:
        """The fingerprint of ``code``'s symbol once its own name ``old`` is ``new`` everywhere in its lines
        (its definition and its calls of itself), read as symbol ``name`` of ``path``; None when not found."""
        from ..code.symbols import symbol_table

        data, sym = code
        lines = data.split(b"\n")
        word = re.compile(rb"(?<![\w$])" + re.escape(old.encode()) + rb"(?![\w$])")
        lo, hi = sym.start_line - 1, sym.end_line
        lines[lo:hi] = [word.sub(new.encode(), ln) for ln in lines[lo:hi]]
        table = symbol_table(b"\n".join(lines), path)
        got = table.get(name)
        return got.fingerprint if got else None


#: How many commits after an anchor's commit (changing its file) ``CodeLookup.find`` reads, per head.
MAX_LOOKUP = 8


def _renaming(b: Anchor, renamed: Anchor, code: CodeLookup | None) -> tuple[str, str] | None:
    """``(old name, new name)`` when ``renamed`` is the base's code under another own name (the base's code
    renamed so has ``renamed``'s fingerprint: nothing else changed); else None (or no code to tell by)."""
    if code is None or not (b.symbol and renamed.symbol and renamed.path):
        return None
    was, now = _leaf(b.symbol), _leaf(renamed.symbol)
    if was[0] != now[0] or was[1] == now[1] or not was[1] or not now[1]:
        return None  # not the same symbol under another own name (in another class, say)
    base_code = code.find(b)
    if base_code is None or code.renamed_fp(base_code, renamed.path, was[1], now[1],
                                            renamed.symbol) != renamed.fingerprint:
        return None
    return was[1], now[1]


def _compose_rename(b: Anchor, renamed: Anchor, changed: Anchor, code: CodeLookup | None) -> str | None:
    """The fingerprint of ``changed``'s code under ``renamed``'s name, when ``renamed`` only renamed the base's
    code and ``changed`` kept its name; else None."""
    names = _renaming(b, renamed, code) if changed.symbol == b.symbol else None
    found = code.find(changed) if code is not None and names else None
    if names is None or found is None or code is None or renamed.path is None or renamed.symbol is None:
        return None
    return code.renamed_fp(found, renamed.path, names[0], names[1], renamed.symbol)


def _merge_anchor(b: Anchor | None, o: Anchor | None, t: Anchor | None, theirs_later: bool,
                  code: CodeLookup | None = None) -> tuple[Anchor | None, AnchorConflict | None]:
    """One anchor merged from its base, ours and theirs records (None: absent there); see the module docstring.
    ``code``: where to read the code when both sides changed the fingerprint and one renamed the symbol."""
    if o is None and t is None:
        return None, None
    if b is None:
        if o is not None and t is not None:
            return _pick(None, o, t, theirs_later), None
        return o or t, None
    if o is None or t is None:
        kept = o or t
        assert kept is not None
        if kept.fingerprint == b.fingerprint or _renaming(b, kept, code) is not None:
            return None, None  # removed on one side, only moved, renamed or refreshed on the other: removed
        removed, changed = ("ours", "theirs") if o is None else ("theirs", "ours")
        return None, AnchorConflict(o, t, f"{b.key} removed on {removed}, re-anchored over changed code "
                                          f"on {changed} (as {kept.key})")
    path, path_both = _three(b.path, o.path, t.path)
    symbol, symbol_both = _three(b.symbol, o.symbol, t.symbol)
    repo, repo_both = _three(b.repo, o.repo, t.repo)
    if path_both or symbol_both or repo_both:
        return None, AnchorConflict(o, t, f"{b.key} moved to {o.key} on ours, to {t.key} on theirs")
    moved_o, moved_t = o.local_key != b.local_key or o.repo != b.repo, t.local_key != b.local_key or t.repo != b.repo
    code_o, code_t = o.fingerprint != b.fingerprint, t.fingerprint != b.fingerprint
    if code_o and code_t and o.fingerprint != t.fingerprint:
        fingerprint, base_side = None, o
        # One side only renamed it (the name is part of the fingerprint), the other re-anchored it over changed
        # code: the merged code is the changed code under the new name.
        if t.symbol != b.symbol and o.symbol == b.symbol:
            fingerprint, base_side = _compose_rename(b, t, o, code), o
        elif o.symbol != b.symbol and t.symbol == b.symbol:
            fingerprint, base_side = _compose_rename(b, o, t, code), t
        if fingerprint is None:
            return None, AnchorConflict(o, t, f"{b.key} re-anchored over different code on each side "
                                              f"(ours as {o.key}, theirs as {t.key})")
        chosen = replace(base_side, fingerprint=fingerprint)
    elif code_o != code_t:
        chosen = o if code_o else t  # the side that re-anchored it over changed code
    elif moved_o != moved_t:
        chosen = o if moved_o else t  # its commit and span are the moved code's
    else:
        chosen = _pick(b, o, t, theirs_later)
    merged = replace(chosen, path=path, symbol=symbol, repo=repo)
    # ``was``: the key before the first move, kept across later moves, cleared when it moves back
    if merged.local_key == b.local_key:
        return replace(merged, was=b.was), None
    first = b.was or b.local_key
    return replace(merged, was=None if first == merged.local_key else first), None


def _needs_code(b: Anchor | None, o: Anchor | None, t: Anchor | None) -> bool:
    """Whether merging this anchor may read code: one side renamed its symbol and changed its fingerprint (a
    rename does), the other changed its fingerprint or removed it."""
    if b is None:
        return False
    sides = [a for a in (o, t) if a is not None]
    renamed = [a for a in sides if a.symbol != b.symbol and a.fingerprint != b.fingerprint]
    return bool(renamed) and (len(sides) == 1 or all(a.fingerprint != b.fingerprint for a in sides))


def merge_anchors(base: list[Anchor], ours: list[Anchor], theirs: list[Anchor], theirs_later: bool,
                  code: Callable[[], CodeLookup | None] | None = None) -> tuple[list[Anchor], list[AnchorConflict]]:
    """The anchors of a memory merged by identity (``match_anchors``, ``_merge_anchor``), ours' order first, then
    what only theirs has; and the conflicts, each with its record (ours', else theirs') in the list in its place.
    ``theirs_later``: theirs was updated later (decides between two refreshes of the same anchor). ``code``: gives
    the ``CodeLookup`` to read the code with when one side renamed an anchor (called at most once, only then);
    without it such an anchor changed on both sides is a conflict."""
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
        lookup = code() if code is not None and _needs_code(b, o, t) else None
        merged, conflict = _merge_anchor(b, o, t, theirs_later, lookup)
        if conflict is not None:
            conflicts.append(conflict)
            merged = conflict.ours or conflict.theirs
        if merged is not None and (conflict is not None or merged.key not in seen):
            seen.add(merged.key)
            anchors.append(merged)
    return anchors, conflicts


def merge(base: Memory | None, ours: Memory, theirs: Memory,
          code: Callable[[], CodeLookup | None] | None = None) -> Merged:
    """The merged memory, with what conflicts (see the module docstring). ``base`` None: the file was added on
    both sides (git's add/add, e.g. the commit that wrote it cherry-picked onto both branches): nothing is taken
    as the base, so a value the sides differ in is decided as one both changed (the later ``updated``), lists
    and anchors are united (anchors matched by identity), and two different texts are a conflict. ``code``: see
    ``merge_anchors``."""
    later = (theirs.updated or "") > (ours.updated or "")
    merged = Memory(id=ours.id, type=ours.type, title=ours.title)
    for f in _SINGLE:
        setattr(merged, f, _pick(getattr(base, f) if base else None, getattr(ours, f), getattr(theirs, f), later))
    for f in _LISTS:
        setattr(merged, f, _union(getattr(base, f) if base else [], getattr(ours, f), getattr(theirs, f)))
    merged.anchors, conflicts = merge_anchors(base.anchors if base else [], ours.anchors, theirs.anchors, later,
                                              code)
    merged.updated = max(ours.updated or "", theirs.updated or "")
    merged.extra = {**theirs.extra, **ours.extra}
    for side in (ours, theirs):  # merging never raises a level: the lower side's provenance wins
        provenance.lowered(merged, side)
    body_conflict = False
    base_body = base.body if base else None
    if ours.body == theirs.body or theirs.body == base_body:
        merged.body = ours.body
    elif ours.body == base_body:
        merged.body = theirs.body
    else:
        body_conflict = True
        merged.body = ""
    return Merged(merged, body_conflict, conflicts)


def merge_memories(base: Memory | None, ours: Memory, theirs: Memory) -> tuple[Memory, bool]:
    """The merged memory and whether anything conflicts (the bodies, an anchor): ``merge`` without the details."""
    res = merge(base, ours, theirs)
    return res.memory, res.conflict


def _one_line(text: str) -> str:
    """``text`` with its line breaks and other unprintable characters written as escapes (``\\n``, ``\\x1b``): an
    anchor's key comes from a memory file, and a key holding a line break would end the marker line and start
    lines of its own in the ``anchors:`` list (a fake marker, a fake anchor), or write to the terminal."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _with_anchor_conflicts(text: str, conflicts: list[AnchorConflict]) -> str:
    """``text`` (a dumped memory holding each conflict's placeholder record) with each placeholder's lines in the
    ``anchors:`` list replaced by the two sides' records in conflict markers."""
    pos = text.find("\nanchors:\n")
    for c in conflicts:  # in the list's order: each found after the one before
        placeholder = anchor_yaml(c.ours or c.theirs)  # type: ignore[arg-type]
        at = text.find(placeholder, pos)
        if pos < 0 or at < 0:  # not expected: every conflict's record is in the list
            continue
        block = (f"<<<<<<< ours: {_one_line(c.why)}\n{anchor_yaml(c.ours) if c.ours else ''}=======\n"
                 f"{anchor_yaml(c.theirs) if c.theirs else ''}>>>>>>> theirs\n")
        text = text[:at] + block + text[at + len(placeholder):]
        pos = at + len(block)
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
    looked: list[CodeLookup | None] = []

    def code() -> CodeLookup | None:
        if not looked:
            looked.append(CodeLookup.here())
        return looked[0]

    try:
        res = merge(base, ours, theirs, code)
    except Exception:  # noqa: BLE001 - reading the code is a help: a merge driver never dies of it
        res = merge(base, ours, theirs)  # (an anchor that needed the code is then a conflict)
    text = _with_anchor_conflicts(dumps(res.memory), res.anchor_conflicts)
    if res.body_conflict:
        body = (f"<<<<<<< ours\n{ours.body.rstrip()}\n=======\n{theirs.body.rstrip()}\n>>>>>>> theirs\n")
        text = text.rstrip("\n") + "\n" + body if text.endswith("---\n") else text + body
    atomic_write(Path(ours_path), text.encode("utf-8"))  # git's %A temp file: git moves it into place
    for c in res.anchor_conflicts:
        print(f"gitmem: {_one_line(name or ours.id)}: anchor conflict: {_one_line(c.why)}: keep one side's lines "
              f"between the markers and drop the marker lines, then `git add {name or '<file>'}`", file=sys.stderr)
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
