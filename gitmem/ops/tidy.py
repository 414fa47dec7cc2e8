"""``gitmem tidy``: near-duplicate memories merged, contradictions flagged, memories of long-deleted code retired.

Three checks over the valid (not retired) memories, each pair only when both are on the same code
(``compare.same_code``):

* **Near-duplicates** (``compare.near_duplicates`` at ``compare.DUPLICATE_JACCARD``, the function
  consolidation uses for new memories): groups around one memory kept, the **most complete** (most text:
  ``memories.text_chars``; then the newest ``updated``; then the id), every other member at or over the
  threshold against it (no chains: A≈B and B≈C do not merge A with C unless A≈C). Only memories of the
  same scope (a team memory is never retired into a local one) and type (a `decision` is never merged into a
  `discovery`), never an invariant, never a pair that a
  contradiction rule separates (``compare.contradiction``, types ignored: ``timeout = 30`` and ``timeout = 60``
  read alike but must not become one memory). ``--apply``: the kept memory takes the union of the
  group's facts, tags and anchors (in that order, its own first; cut to ``[memory] max_chars`` by
  ``memories.fit``) and supersedes the others (``lifecycle.link``): they are retired and linked both
  ways, all in one ``memories.write``. The kept one's text is not rewritten; when it takes facts from a
  memory of lower provenance it takes that provenance too (``provenance.lowered``: a merge never raises a level).
* **Contradictions**: pairs of ``compare.RULE_TYPES`` memories on the same code that disagree: by the
  model when ``[llm]`` is configured (``capture.llm.judge_contradictions``, at most ``MAX_LLM_PAIRS`` pairs
  a run, the rest by rules), by the rules otherwise or when the model fails (a note says so). Flagged for
  review, never changed: resolve one with ``gitmem supersede`` / ``retire`` / an edit.
* **Long-deleted**: memories whose anchors on code are all deleted at the working tree (the catalog's
  statuses, ``ops.stale``), every deleting commit known and the newest of them at least ``[tidy]
  deleted_days`` old (committer time). ``--apply`` retires them (``lifecycle.retire``, with the reason).
  A deletion not committed yet, or in history this clone lacks, is not proposed.

Writes only through ``memories.write`` (commit ``.gitmem/`` to share the result).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .. import compare, provenance
from ..config import deleted_days as configured_days
from ..errors import GitmemError
from ..infra import utc_now
from ..memories import fit, max_chars, text_chars, write
from ..model import KIND_COMMIT, Anchor, Memory, MemoryStatus, Status, unique_anchors
from ..store import Store
from .lifecycle import link, retire

#: Most pairs a run sends to the model (a request of ``capture.llm.PAIRS_PER_REQUEST`` pairs takes seconds);
#: the others are judged by the rules.
MAX_LLM_PAIRS = 60
#: Seconds per day.
DAY_S = 86_400


@dataclass
class DuplicateGroup:
    """Memories that say one thing twice: ``keep`` and the others (``merged``: each with its similarity to
    ``keep``), on the code of ``anchors`` (the keys shared with ``keep``)."""

    keep: Memory
    merged: list[tuple[Memory, float]]
    anchors: list[str]


@dataclass
class Flagged:
    """Two memories on the same code (``anchors``) that disagree: the ``rule`` that says so (``negation``,
    ``value``, ``use``, or ``llm``) and one line quoting both (``reason``)."""

    a: Memory
    b: Memory
    rule: str
    reason: str
    anchors: list[str]


@dataclass
class LongDeleted:
    """A memory whose anchored code is all deleted: since ``since`` (UTC), by ``commit``, ``days`` ago."""

    memory: Memory
    since: str
    commit: str
    days: int


@dataclass
class TidyReport:
    """What ``tidy`` found, and with ``applied`` what it wrote (``written``: merged-into ids, ``retired``)."""

    duplicates: list[DuplicateGroup] = field(default_factory=list)
    contradictions: list[Flagged] = field(default_factory=list)
    deleted: list[LongDeleted] = field(default_factory=list)
    checked: int = 0
    deleted_days: int = 0
    how: str = "rules"
    applied: bool = False
    written: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def findings(self) -> int:
        """Duplicate groups + contradictions + long-deleted memories."""
        return len(self.duplicates) + len(self.contradictions) + len(self.deleted)

    def summary(self) -> str:
        """``N finding(s): X near-duplicate group(s), Y contradiction(s), Z of code deleted for D+ days`` (for
        ``doctor`` and ``stale``)."""
        return (f"{self.findings} finding(s): {len(self.duplicates)} near-duplicate group(s), "
                f"{len(self.contradictions)} contradiction(s), {len(self.deleted)} memor"
                f"{'y' if len(self.deleted) == 1 else 'ies'} of code deleted for {self.deleted_days}+ days")

    @property
    def to_apply(self) -> int:
        """Findings ``--apply`` acts on: duplicate groups and long-deleted memories (contradictions are for review)."""
        return len(self.duplicates) + len(self.deleted)


def _where(a: Anchor) -> str:
    """The file of ``a`` as a key: its path, with its repository in front for a cross-repository anchor."""
    return a.key.partition("::")[0]


def _neighbours(mems: list[Memory]) -> dict[str, list[Memory]]:
    """id → the other memories on the same code (``compare.same_code``), by id: those sharing an anchor key, and
    for a file anchored whole every memory anchored in that file (and the other way round). Indexed by key, so
    the cost follows the memories per symbol, not per file."""
    by_key: dict[str, list[Memory]] = {}
    in_path: dict[str, list[Memory]] = {}
    whole: dict[str, list[Memory]] = {}
    for m in mems:
        for a in m.anchors:
            if a.kind == KIND_COMMIT or not a.path:
                continue
            by_key.setdefault(a.key, []).append(m)
            in_path.setdefault(_where(a), []).append(m)
            if not a.symbol:
                whole.setdefault(_where(a), []).append(m)
    out: dict[str, list[Memory]] = {}
    for m in mems:
        near: dict[str, Memory] = {}
        for a in m.anchors:
            if a.kind == KIND_COMMIT or not a.path:
                continue
            group = by_key.get(a.key, []) + whole.get(_where(a), [])
            if not a.symbol:
                group += in_path.get(_where(a), [])
            near.update((o.id, o) for o in group if o.id != m.id)
        out[m.id] = sorted(near.values(), key=lambda o: o.id)
    return out


def find_duplicates(mems: list[Memory], near: dict[str, list[Memory]] | None = None) -> list[DuplicateGroup]:
    """The near-duplicate groups of ``mems`` (module docstring), the kept memories' order: most complete first."""
    near = near if near is not None else _neighbours(mems)
    order = sorted(mems, key=lambda m: (-text_chars(m), _neg(m.updated), m.id))
    taken: set[str] = set()
    groups = []
    for m in order:
        if m.id in taken or m.invariant:
            continue
        # one type per group: a ``decision`` merged into a ``discovery`` would lose what it is (and the
        # contradiction rules, which read decisions and constraints, would no longer see it)
        pool = [o for o in near.get(m.id, []) if o.id not in taken and o.scope == m.scope and o.type == m.type
                and not o.invariant]
        found = [(o, round(s, 3)) for o, s in compare.near_duplicates(m, pool, compare.DUPLICATE_JACCARD)
                 if compare.contradiction(m, o, any_type=True) is None]
        if not found:
            continue
        taken |= {m.id, *(o.id for o, _ in found)}
        shared = sorted({k for o, _ in found for k in compare.same_code(m, o)})
        groups.append(DuplicateGroup(m, found, shared))
    return groups


def _neg(stamp: str) -> tuple[int, ...]:
    """A key that sorts UTC stamps newest first."""
    return tuple(-ord(c) for c in stamp)


def _pairs(mems: list[Memory], near: dict[str, list[Memory]], skip: set[frozenset[str]]
           ) -> list[tuple[Memory, Memory, list[str]]]:
    """Pairs of ``RULE_TYPES`` memories on the same code, each once (by id), not in ``skip``."""
    out = []
    for m in mems:
        if m.type not in compare.RULE_TYPES:
            continue
        for o in near.get(m.id, []):
            if o.id <= m.id or o.type not in compare.RULE_TYPES or frozenset((m.id, o.id)) in skip:
                continue
            keys = compare.same_code(m, o)
            if keys:
                out.append((m, o, keys))
    return out


def find_contradictions(store: Store, mems: list[Memory], groups: list[DuplicateGroup], *, use_llm: bool,
                        notes: list[str], near: dict[str, list[Memory]] | None = None) -> tuple[list[Flagged], str]:
    """The contradicting pairs among ``mems`` (module docstring) and how they were judged: ``rules`` or ``llm``.
    Pairs within a duplicate group are left out (they are one memory)."""
    near = near if near is not None else _neighbours(mems)
    skip = {frozenset((g.keep.id, o.id)) for g in groups for o, _ in g.merged}
    pairs = _pairs(mems, near, skip)
    verdicts: list[tuple[bool, str] | None] = [None] * len(pairs)
    how = "rules"
    from ..capture import llm as llm_mod

    cfg = llm_mod.llm_config(store.config.get("llm")) if use_llm else None
    if cfg is not None and pairs:
        asked = pairs[:MAX_LLM_PAIRS]
        try:
            verdicts[:len(asked)] = llm_mod.judge_contradictions(cfg, [(a.text, b.text) for a, b, _ in asked])
            how = "llm"
            if len(pairs) > len(asked):
                notes.append(f"{len(pairs) - len(asked)} pair(s) over the model's {MAX_LLM_PAIRS} judged by rules")
        except GitmemError as e:
            notes.append(f"{e.message}: judged by rules")
    out = []
    for (a, b, keys), verdict in zip(pairs, verdicts, strict=True):
        if verdict is not None:
            if verdict[0]:
                out.append(Flagged(a, b, "llm", verdict[1] or "the model says they disagree", keys))
            continue
        found = compare.contradiction(a, b)
        if found is not None:
            out.append(Flagged(a, b, found.rule, found.reason, keys))
    return out, how


def find_long_deleted(store: Store, statuses: list[MemoryStatus], days: int, now: float | None = None
                      ) -> list[LongDeleted]:
    """The memories of ``statuses`` whose code anchors are all deleted by known commits, the newest at least
    ``days`` days before ``now`` (seconds since the epoch; default: the clock), oldest deletion first."""
    now = time.time() if now is None else now
    out = []
    for ms in statuses:
        code = [a for a in ms.anchors if a.anchor.kind != KIND_COMMIT]
        if ms.memory.retired or not code or any(a.status != Status.DELETED or not a.anchor.local for a in code):
            continue
        commits = [a.commit for a in code]
        if any(c is None for c in commits):
            continue
        try:
            times = {c: store.repo.commit_time(c) for c in commits if c}
        except GitmemError:
            continue
        last = max(times, key=lambda c: times[c])
        age = (now - times[last]) / DAY_S
        if age >= days:
            since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(times[last]))
            out.append(LongDeleted(ms.memory, since, last, int(age)))
    return sorted(out, key=lambda d: (d.since, d.memory.id))


def find(store: Store, *, use_llm: bool = True, statuses: list[MemoryStatus] | None = None,
         now: float | None = None) -> TidyReport:
    """Every finding (module docstring), nothing written. ``statuses``: the not-fresh statuses at the working
    tree when the caller has them (``ops.stale.stale``), else they are computed. ``use_llm``: let the model
    judge contradictions when ``[llm]`` is configured.

    Raises:
        GitError: the repository cannot be read.
    """
    from .stale import stale

    mems = sorted(store.load_all().memories.values(), key=lambda m: m.id)
    near = _neighbours(mems)
    rep = TidyReport(checked=len(mems), deleted_days=configured_days(store.config))
    rep.duplicates = find_duplicates(mems, near)
    rep.contradictions, rep.how = find_contradictions(store, mems, rep.duplicates, use_llm=use_llm,
                                                      notes=rep.notes, near=near)
    rep.deleted = find_long_deleted(store, stale(store) if statuses is None else statuses, rep.deleted_days, now)
    return rep


def merge(store: Store, group: DuplicateGroup) -> list[Memory]:
    """Merge ``group`` (see module docstring) and write it in one ``memories.write``; returns the memories
    written, the kept one first.

    Raises:
        OSError: a memory file cannot be written.
    """
    now = utc_now()
    keep = group.keep
    olds = [o for o, _ in group.merged]
    for o in olds:
        before = provenance.memory_hash(keep)
        keep.facts = list(dict.fromkeys([*keep.facts, *o.facts]))
        if provenance.memory_hash(keep) != before:  # merging never raises a level
            provenance.lowered(keep, o)
        keep.tags = list(dict.fromkeys([*keep.tags, *o.tags]))
        keep.anchors = unique_anchors([*keep.anchors, *o.anchors])
        keep.confidence = max(keep.confidence, o.confidence)
        link(keep, o, now)
    keep.updated = now
    kept = fit(keep, max_chars(store))
    write(store, [kept, *olds])
    return [kept, *olds]


def apply(store: Store, rep: TidyReport) -> TidyReport:
    """Carry out ``rep``: merge each duplicate group, retire each long-deleted memory; contradictions are left
    for review. Returns ``rep`` with ``applied``, ``written`` and ``retired`` filled.

    Raises:
        OSError: a memory file cannot be written (what was written before stays written).
    """
    for g in rep.duplicates:
        merge(store, g)
        rep.written.append(g.keep.id)
        rep.retired += [o.id for o, _ in g.merged]
    for d in rep.deleted:
        retire(store, d.memory.id, f"tidy: all its code deleted since {d.since[:10]} ({d.commit[:12]})")
        rep.retired.append(d.memory.id)
    rep.applied = True
    return rep


def tidy(store: Store, *, do_apply: bool = False, use_llm: bool = True) -> TidyReport:
    """``gitmem tidy``: ``find``, then ``apply`` when ``do_apply``.

    Raises:
        GitError, OSError: see ``find`` and ``apply``.
    """
    rep = find(store, use_llm=use_llm)
    return apply(store, rep) if do_apply else rep
