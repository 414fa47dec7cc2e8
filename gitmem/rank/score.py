"""The ranker: score memories by code proximity, text relevance and recency.

Scoring (every weight is a named constant below, each with why):

1. **Proximity** of each memory's anchors to the focus set (``focus.Focus``):
   same symbol > enclosing or nested symbol > same file > import neighbour
   (a file a focus file imports, or one that imports a focus file:
   ``Focus.imports``) > same directory, times the weight of the focus source
   (dirty, named, given, branch). A memory's proximity is the best over its
   anchors.
2. **Text relevance** to the prompt: the index's hybrid search (BM25 + vector,
   already fused by reciprocal rank fusion).
3. **Recency**: newest first, a weak signal that breaks ties. With decay on
   (``[ranking] decay``), each memory's recency score is multiplied by its decay
   factor (``usage.fade``: 0.5 ** (idle time / half-life), idle since it was
   written, last given, searched or opened, or its code last committed; 1 for
   constraints): of two equally relevant memories, the one nobody used on code
   nobody touched for long comes second. Relevance is never decayed, so a memory
   on the very code being edited is not buried (the agent hooks order near-ties
   by the same factor: ``integrations.agents.core``).

The three rankings are fused with weighted reciprocal rank fusion,
``score = Σ_l w_l / (RRF_K + rank_l)`` (Cormack, Clarke & Büttcher, SIGIR 2009),
where the proximity list's weight is also scaled by each memory's proximity,
then multiplied by a type weight, a confidence factor, a provenance factor
(``TRUST_WEIGHT``: text nobody has read sinks under a person's at near-equal
relevance) and, for memories whose anchors are not fresh, a staleness penalty.

Packing is ``rank.render``'s (the one renderer and packer); ``pack`` and ``item``
here only turn ``Scored`` into its ``render.Item``.

Owns: the named weights, ``rank``, ``proximity``, ``apply_status``, ``Scored``.
Must not import: lancedb, an LLM client (the index's text ranking comes in as ids).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field

from .. import provenance
from ..code import contain
from ..model import KIND_COMMIT, Anchor, Memory, MemoryStatus, Status
from ..textsplit import name_leaf
from . import render
from .focus import Focus
from .fusion import RRF_K
from .render import CHARS_PER_TOKEN, MIN_INDEX_LINE_CHARS, Packed, token_estimate

__all__ = ["CHARS_PER_TOKEN", "MIN_INDEX_LINE_CHARS", "Packed", "Scored", "age", "anchor_proximity", "apply_status",
           "item", "order_key", "pack", "proximity", "rank", "status_note", "text_weight", "token_estimate"]

# -- proximity tiers ---------------------------------------------------------------------------
#: The anchored symbol itself is in focus (changed, or named in the prompt).
TIER_SAME_SYMBOL = 1.0
#: The anchored symbol encloses, or is nested in, a symbol in focus (class ↔ method; a Go or Rust type and
#: its methods declared apart, a C++ class and its out-of-line definitions: ``code.contain``). A memory on the
#: type comes below the changed method's own memories (1.0) and above its siblings' (same file, 0.6). A type
#: changed only through one member is not in focus itself (``focus.changed_symbols(through_members=False)``),
#: so its other members are not "nested in a changed symbol".
TIER_ENCLOSING = 0.8
#: The anchor is on a file in focus (a file anchor, or another symbol of that file).
TIER_SAME_FILE = 0.6
#: The anchor is on a file that a file in focus imports, or that imports a file in focus.
#: Between same file and same directory (DESIGN.md §4): an import is a real dependency (the
#: contract being called, or the caller that breaks), a shared directory only a convention.
#: 0.4 ≈ the geometric mean of its neighbours (√(0.6 × 0.25) = 0.39), and it keeps a neighbour
#: of a dirty file (0.4) just below a file the branch touched (WEIGHT_BRANCH 0.7 × 0.6 = 0.42).
TIER_IMPORT = 0.4
#: The anchor is on a file in the same directory as a file in focus.
TIER_SAME_DIR = 0.25
#: Factor for a match by a bare identifier of the prompt (``Focus.names``): the name matches that
#: symbol in any file and plain words too (a project called ``axios`` has a symbol ``axios``), so
#: it is the same symbol only probably. Just below 1, it orders such a match under the same tier
#: known for certain (the symbol changed in the working tree, or named as ``path::Symbol``), and
#: keeps a named symbol above a text-relevant file the branch touched (tests/test_rank.py).
NAMED_CERTAINTY = 0.95

# -- fusion ------------------------------------------------------------------------------------
#: Proximity is the primary signal for "memories about the code I'm touching".
W_PROXIMITY = 1.0
#: Text relevance weighs half a proximity ranking: RRF with k = 60 scores rank 5 nearly as high as
#: rank 1, so at full weight any memory that shares a few words with the prompt would outrank the
#: memory on the very symbol the prompt names (tests/test_rank.py shows both effects).
W_TEXT = 0.5
#: Share of ``W_TEXT`` a text hit keeps when it lies far from the files in focus (no proximity): files were
#: given, named, dirty or on the branch, so a memory elsewhere that shares words with the prompt is less likely
#: the one than the same hit on those files; between them it grows with the proximity up to full weight at
#: ``TIER_SAME_FILE`` (``text_weight``). Half: measured on bench/moments.py before the first edit (issue 25,
#: bench/README.md), where a hit on a sibling file outranked the given file's own memories.
TEXT_FAR_SHARE = 0.5
#: Recency only breaks near-ties: a fifth of a full ranking's weight.
W_RECENCY = 0.2

#: Rules and traps are what an agent most needs to see; open questions least.
TYPE_WEIGHT = {"constraint": 1.15, "gotcha": 1.15, "decision": 1.05, "bugfix": 1.0, "todo": 0.9}
#: A stale or deleted memory still shows, with its warning, and drops below fresh ones only at
#: near-equal relevance: the memory about the very code being edited is the one whose warning
#: matters most, so it must not sink (0.95 ≈ moving down three places in a 60-long RRF list).
STALE_PENALTY = 0.95
#: Confidence c in [0, 1] scales the score by (1 - CONFIDENCE_SPAN) + CONFIDENCE_SPAN * c.
CONFIDENCE_SPAN = 0.3
#: Provenance level → score factor (``provenance.WEIGHT``, where each value's why is written; the hooks order
#: by the same table): text a person wrote or reviewed 1.0, a commit message 0.97, captured or imported text
#: nobody read 0.93, a model's 0.92 — below person text of near-equal relevance, never buried (the memory on
#: the very code being edited still comes first).
TRUST_WEIGHT = provenance.WEIGHT

@dataclass
class Scored:
    """One ranked memory.

    Attributes:
        memory: the memory.
        score: fused score (higher is better; comparable only within one ranking).
        proximity: best proximity of its anchors to the focus, in [0, 1].
        near: the anchor and focus reason that gave the proximity ("" if none).
        text_rank: 1-based rank in the text-relevance list, or None.
        status: the memory's status (filled by the caller; FRESH when unknown).
        status_detail: per-anchor statuses, when evaluated.
        fade: the decay factor its recency score was multiplied by (1: none).
        status_reason: the worst anchor's keyed reason as the catalog recorded it, when the status was taken
            from there (``catalog.sync.holding_statuses``) rather than evaluated (then ``status_detail`` is None).
    """

    memory: Memory
    score: float = 0.0
    proximity: float = 0.0
    near: str = ""
    text_rank: int | None = None
    status: Status = Status.FRESH
    status_detail: MemoryStatus | None = None
    reasons: list[str] = field(default_factory=list)
    fade: float = 1.0
    status_reason: str | None = None


def anchor_proximity(a: Anchor, focus: Focus, dirs: dict[str, tuple[float, str, str]] | None = None
                     ) -> tuple[float, str]:
    """Proximity in [0, 1] of one anchor to the focus set, with a short reason.

    ``dirs``: ``focus.dirs()``, when the caller scores many anchors against one focus.
    """
    if a.kind == KIND_COMMIT or not a.path or not a.local:  # another repository's code is never in focus here
        return 0.0, ""
    best, why = 0.0, ""

    def take(v: float, reason: str) -> None:
        nonlocal best, why
        if v > best:
            best, why = v, reason

    if a.symbol:
        for (path, name), (w, src) in focus.symbols.items():
            if path == a.path and name == a.symbol:
                take(TIER_SAME_SYMBOL * w, f"{src} {path}::{name}")
            elif _encloses(a.path, a.symbol, path, name):
                take(TIER_ENCLOSING * w, f"{src} {path}::{name}")
        last = name_leaf(a.symbol)
        for n, w in focus.names.items():
            if n == a.symbol or n == last or (len(n) > len(last) and n.endswith("." + a.symbol)):
                take(TIER_SAME_SYMBOL * NAMED_CERTAINTY * w, f"named {n}")
            elif a.symbol.startswith(n + "."):
                take(TIER_ENCLOSING * NAMED_CERTAINTY * w, f"named {n}")
    fw = focus.files.get(a.path)
    iw = focus.imports.get(a.path)
    if iw:
        take(TIER_IMPORT * iw[0], iw[1])
    if fw:
        take(TIER_SAME_FILE * fw[0], f"{fw[1]} {a.path}")
    else:
        near = (dirs if dirs is not None else focus.dirs()).get(a.path.rpartition("/")[0])
        if near:
            take(TIER_SAME_DIR * near[0], f"near {near[1]} {near[2]}")
    return best, why


def _encloses(path: str, symbol: str, focus_path: str, focus_name: str) -> bool:
    """Does the anchored ``path::symbol`` enclose, or sit in, the focus symbol ``focus_path::focus_name``?

    By qualified name (``Mux`` ↔ ``Mux.get``, ``Mux.Inner.run``) in the same file, or in a file where the
    language declares a type's members apart (``code.contain.apart_near``: a Go method ``func (m *Mux) Get`` in
    another file of the package, a Rust ``impl``, a C++ ``Mux::get`` defined in the header's source file).
    """
    if not (focus_name.startswith(symbol + ".") or symbol.startswith(focus_name + ".")):
        return False
    return path == focus_path or contain.apart_near(path, focus_path)


def proximity(m: Memory, focus: Focus, dirs: dict[str, tuple[float, str, str]] | None = None,
              memo: dict[tuple[bool, str | None, str | None], tuple[float, str]] | None = None) -> tuple[float, str]:
    """Best anchor proximity of ``m`` to the focus set.

    ``memo``: anchor proximities already computed against this focus, by (commit anchor, path, symbol), the
    only fields ``anchor_proximity`` reads: many memories share an anchor (a file's ~1,200 memories at
    100,000 sit on ~40 symbols), so a ranking pays once per distinct anchor.
    """
    best = (0.0, "")
    dirs = dirs if dirs is not None else focus.dirs()
    for a in m.anchors:
        if memo is None:
            p = anchor_proximity(a, focus, dirs)
        else:
            key = (a.kind == KIND_COMMIT or not a.local, a.path, a.symbol)
            got = memo.get(key)
            if got is None:
                got = memo[key] = anchor_proximity(a, focus, dirs)
            p = got
        if p[0] > best[0]:
            best = p
    return best


def text_weight(proximity: float, has_files: bool, far_share: float = TEXT_FAR_SHARE) -> float:
    """The weight of a memory's text-relevance ranking in the fusion: ``W_TEXT`` when the focus has no file
    (the prompt alone) or the memory is on a focus file (``proximity`` ≥ ``TIER_SAME_FILE``), else
    ``W_TEXT`` × (``far_share`` + (1 − ``far_share``) × ``proximity`` / ``TIER_SAME_FILE``): an import neighbour
    (0.4) keeps 83 %, a memory with no proximity ``far_share``."""
    if not has_files:
        return W_TEXT
    return W_TEXT * (far_share + (1 - far_share) * min(1.0, proximity / TIER_SAME_FILE))


def rank(memories: list[Memory], focus: Focus, text_ranking: list[str] | None = None,
         fading: dict[str, float] | None = None) -> list[Scored]:
    """Rank ``memories`` for ``focus``; ``text_ranking`` is memory ids by text relevance, best first.

    ``fading``: id → decay factor in (0, 1] (``usage.fading``; missing ids 1), multiplying each
    memory's recency score; None or ``{}``: no decay.

    Returns only memories with some proximity or text relevance, best first;
    when the focus is empty and there is no text ranking, all memories by recency.
    Ties break by ``updated`` (newer first), then id.
    """
    scored = {m.id: Scored(m) for m in memories}
    dirs = focus.dirs()
    memo: dict[tuple[bool, str | None, str | None], tuple[float, str]] = {}
    for s in scored.values():
        s.proximity, s.near = proximity(s.memory, focus, dirs, memo)
    neg_time = {mid: _neg_time(s.memory) for mid, s in scored.items()}  # parsed once, not once per sort
    prox_list = sorted((s for s in scored.values() if s.proximity > 0),
                       key=lambda s: (-s.proximity, neg_time[s.memory.id], s.memory.id))
    for r, s in enumerate(prox_list, 1):
        # Weighted by the proximity itself: plain RRF would give a memory on the very symbol named
        # in the prompt (1.0) barely more than one on a file the branch touched (0.42).
        s.score += W_PROXIMITY * s.proximity / (RRF_K + r)
        s.reasons.append(s.near)
    has_files = bool(focus.files)
    # identical texts are equal evidence: each gets the rank of the first of them, also past the search's cut-off
    first_rank: dict[str, int] = {}
    for r, mid in enumerate(text_ranking or [], 1):
        if mid in scored:
            first_rank.setdefault(_text_key(scored[mid].memory), r)
    if first_rank:
        for s in scored.values():
            tr = first_rank.get(_text_key(s.memory))
            if tr is not None:
                s.score += text_weight(s.proximity, has_files) / (RRF_K + tr)
                s.text_rank = tr
                s.reasons.append(f"text #{tr}")
    relevant = [s for s in scored.values() if s.score > 0]
    if not relevant and focus.empty and not text_ranking:
        relevant = list(scored.values())
    by_time = sorted(relevant, key=lambda s: (neg_time[s.memory.id], s.memory.id))
    fade = fading or {}
    for r, s in enumerate(by_time, 1):
        s.fade = fade.get(s.memory.id, 1.0)
        s.score += W_RECENCY * s.fade / (RRF_K + r)
    for s in relevant:
        s.score *= TYPE_WEIGHT.get(s.memory.type, 1.0)
        s.score *= (1 - CONFIDENCE_SPAN) + CONFIDENCE_SPAN * s.memory.confidence
        s.score *= provenance.weight_of(s.memory)
    return sorted(relevant, key=lambda s: (-s.score, neg_time[s.memory.id], s.memory.id))


def _text_key(m: Memory) -> str:
    """A memory's text as the text ranking reads it, for telling identical texts apart from similar ones: title
    and body, case and runs of white space folded. Memories with the same key share one text rank in ``rank`` (the
    "standard competition" ranking of ties: 1, 1, 3): a search orders equal scores arbitrarily, and two memories
    saying the same thing (a history's many "Update README.md") must then be ordered by proximity and recency,
    not by that arbitrary order, nor split by the search's cut-off (``TEXT_CANDIDATES``)."""
    return " ".join(f"{m.title}\n{m.body}".split()).casefold()


def apply_status(ranked: list[Scored], statuses: dict[str, MemoryStatus], *, omit_stale: bool) -> list[Scored]:
    """Attach statuses; penalise (or with ``omit_stale`` drop) stale and deleted memories; re-sort."""
    out = []
    for s in ranked:
        ms = statuses.get(s.memory.id)
        if ms is not None:
            s.status_detail = ms
            s.status = ms.status
        if s.status in (Status.STALE, Status.DELETED, Status.UNWRITTEN):  # unwritten: not in this checkout
            if omit_stale:
                continue
            s.score *= STALE_PENALTY
        out.append(s)
    return sorted(out, key=order_key)


def order_key(s: Scored) -> tuple[float, float, str]:
    """The order of a ranking once statuses are attached (``apply_status``): score, then newest, then id (unique
    per memory, so no two memories tie)."""
    return -s.score, _neg_time(s.memory), s.memory.id


def _neg_time(m: Memory) -> float:
    """Minus the memory's update time in seconds since the epoch (0 when unknown): newest sorts first."""
    t = render.epoch(m.updated or m.created)
    return 0.0 if t is None else -t


def age(m: Memory, now: dt.datetime | None = None) -> str:
    """Compact age of a memory: ``5 min``, ``3 h``, ``2 d``, ``3 wk``, ``4 mo``, ``1 y`` ("?" when unknown):
    ``render.age``."""
    return render.age(m.updated or m.created, None if now is None else now.timestamp())


def status_note(s: Scored) -> str:
    """``fresh`` or ``⚠ stale: <anchor> <reason>`` / ``moved: <anchor> <reason>`` for the worst anchor."""
    if s.status == Status.FRESH or (s.status_detail is None and s.status_reason is None):
        return "fresh"
    reason = (s.status_reason if s.status_detail is None
              else max(s.status_detail.anchors, key=lambda a: a.status.severity).keyed_reason)
    mark = "⚠ " if s.status in (Status.STALE, Status.DELETED, Status.UNWRITTEN) else ""
    return f"{mark}{s.status.value}: {reason}"


def item(s: Scored) -> render.Item:
    """``s`` as the renderer's ``Item`` (anchors in the memory's order; the one that made it near in ``near``)."""
    m = s.memory
    trust = provenance.of(m)
    return render.Item(m.id, m.type, m.title, body=m.body, facts=m.facts, anchors=[a.key for a in m.anchors],
                       near=s.near, updated=m.updated or m.created, status=status_note(s),
                       was={a.key: a.was for a in m.anchors if a.was}, trust=trust.label, rule=trust.rule)


def pack(ranked: Iterable[Scored], budget_tokens: int, detail: int = 3, total: int | None = None) -> Packed:
    """``render.pack`` of ``ranked`` in the ``CONTEXT`` style: the first ``detail`` that fit in full, then
    index lines; ``left_out`` counts every ranked memory not shown (``total``: how many are ranked, needed when
    ``ranked`` is an iterator, which is consumed only as far as the budget reaches)."""
    if total is None:
        ranked = list(ranked)
        total = len(ranked)
    return render.pack((item(s) for s in ranked), budget_tokens, detail=detail, total=total)
