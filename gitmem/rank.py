"""The ranker: score memories by code proximity, text relevance and recency; pack a token budget.

Scoring (every weight is a named constant below, each with why):

1. **Proximity** of each memory's anchors to the focus set (``focus.Focus``):
   same symbol > enclosing or nested symbol > same file > import neighbour
   (a file a focus file imports, or one that imports a focus file:
   ``Focus.imports``) > same directory, times the weight of the focus source
   (dirty, named, given, branch). A memory's proximity is the best over its
   anchors.
2. **Text relevance** to the prompt: the index's hybrid search (BM25 + vector,
   already fused by reciprocal rank fusion).
3. **Recency**: newest first, a weak signal that breaks ties.

The three rankings are fused with weighted reciprocal rank fusion,
``score = Σ_l w_l / (RRF_K + rank_l)`` (Cormack, Clarke & Büttcher, SIGIR 2009),
where the proximity list's weight is also scaled by each memory's proximity,
then multiplied by a type weight, a confidence factor and, for memories whose
anchors are not fresh, a staleness penalty.

Packing: ``pack`` renders the ranked memories as Markdown: the top few in full,
the rest as a compact index, adding items best-first while the rendered text
fits the token budget (tokens estimated as characters / CHARS_PER_TOKEN).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from dataclasses import dataclass, field

from .focus import Focus
from .model import KIND_COMMIT, Anchor, Memory, MemoryStatus, Status

# -- proximity tiers ---------------------------------------------------------------------------
#: The anchored symbol itself is in focus (changed, or named in the prompt).
TIER_SAME_SYMBOL = 1.0
#: The anchored symbol encloses, or is nested in, a symbol in focus (class ↔ method).
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
#: RRF constant k = 60, the value of Cormack et al. 2009 (robust across collections).
RRF_K = 60
#: Proximity is the primary signal for "memories about the code I'm touching".
W_PROXIMITY = 1.0
#: Text relevance weighs half a proximity ranking: RRF with k = 60 scores rank 5 nearly as high as
#: rank 1, so at full weight any memory that shares a few words with the prompt would outrank the
#: memory on the very symbol the prompt names (tests/test_rank.py shows both effects).
W_TEXT = 0.5
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

# -- packing -----------------------------------------------------------------------------------
#: Token estimate: about 4 characters per token for English and code (OpenAI's rule of thumb).
CHARS_PER_TOKEN = 4
#: No index line is shorter than this (id 26 + type + dashes + age + status); below it the budget is full.
MIN_INDEX_LINE_CHARS = 48
#: Body text shown per detailed memory, in characters, before it is cut with "…".
MAX_DETAIL_BODY_CHARS = 1200
#: Anchors listed per detailed memory (the one that made it near first), the rest counted: a memory
#: of a large change can have a hundred, and listing them all spent a 1500-token budget on paths.
MAX_DETAIL_ANCHORS = 5


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
        anchor_statuses: per-anchor statuses, when evaluated.
    """

    memory: Memory
    score: float = 0.0
    proximity: float = 0.0
    near: str = ""
    text_rank: int | None = None
    status: Status = Status.FRESH
    status_detail: MemoryStatus | None = None
    reasons: list[str] = field(default_factory=list)


def token_estimate(text: str) -> int:
    """Estimated tokens of ``text``: ceil(characters / CHARS_PER_TOKEN)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def anchor_proximity(a: Anchor, focus: Focus, dirs: dict[str, tuple[float, str, str]] | None = None
                     ) -> tuple[float, str]:
    """Proximity in [0, 1] of one anchor to the focus set, with a short reason.

    ``dirs``: ``focus.dirs()``, when the caller scores many anchors against one focus.
    """
    if a.kind == KIND_COMMIT or not a.path:
        return 0.0, ""
    best, why = 0.0, ""

    def take(v: float, reason: str) -> None:
        nonlocal best, why
        if v > best:
            best, why = v, reason

    if a.symbol:
        for (path, name), (w, src) in focus.symbols.items():
            if path != a.path:
                continue
            if name == a.symbol:
                take(TIER_SAME_SYMBOL * w, f"{src} {path}::{name}")
            elif name.startswith(a.symbol + ".") or a.symbol.startswith(name + "."):
                take(TIER_ENCLOSING * w, f"{src} {path}::{name}")
        last = a.symbol.rsplit(".", 1)[-1]
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


def proximity(m: Memory, focus: Focus, dirs: dict[str, tuple[float, str, str]] | None = None) -> tuple[float, str]:
    """Best anchor proximity of ``m`` to the focus set."""
    best = (0.0, "")
    dirs = dirs if dirs is not None else focus.dirs()
    for a in m.anchors:
        p = anchor_proximity(a, focus, dirs)
        if p[0] > best[0]:
            best = p
    return best


def rank(memories: list[Memory], focus: Focus, text_ranking: list[str] | None = None) -> list[Scored]:
    """Rank ``memories`` for ``focus``; ``text_ranking`` is memory ids by text relevance, best first.

    Returns only memories with some proximity or text relevance, best first;
    when the focus is empty and there is no text ranking, all memories by recency.
    Ties break by ``updated`` (newer first), then id.
    """
    scored = {m.id: Scored(m) for m in memories}
    dirs = focus.dirs()
    for s in scored.values():
        s.proximity, s.near = proximity(s.memory, focus, dirs)
    prox_list = sorted((s for s in scored.values() if s.proximity > 0),
                       key=lambda s: (-s.proximity, _neg_time(s.memory), s.memory.id))
    for r, s in enumerate(prox_list, 1):
        # Weighted by the proximity itself: plain RRF would give a memory on the very symbol named
        # in the prompt (1.0) barely more than one on a file the branch touched (0.42).
        s.score += W_PROXIMITY * s.proximity / (RRF_K + r)
        s.reasons.append(s.near)
    for r, mid in enumerate(text_ranking or [], 1):
        if mid in scored:
            scored[mid].score += W_TEXT / (RRF_K + r)
            scored[mid].text_rank = r
            scored[mid].reasons.append(f"text #{r}")
    relevant = [s for s in scored.values() if s.score > 0]
    if not relevant and focus.empty and not text_ranking:
        relevant = list(scored.values())
    by_time = sorted(relevant, key=lambda s: (_neg_time(s.memory), s.memory.id))
    for r, s in enumerate(by_time, 1):
        s.score += W_RECENCY / (RRF_K + r)
    for s in relevant:
        s.score *= TYPE_WEIGHT.get(s.memory.type, 1.0)
        s.score *= (1 - CONFIDENCE_SPAN) + CONFIDENCE_SPAN * s.memory.confidence
    return sorted(relevant, key=lambda s: (-s.score, _neg_time(s.memory), s.memory.id))


def apply_status(ranked: list[Scored], statuses: dict[str, MemoryStatus], *, omit_stale: bool) -> list[Scored]:
    """Attach statuses; penalise (or with ``omit_stale`` drop) stale and deleted memories; re-sort."""
    out = []
    for s in ranked:
        ms = statuses.get(s.memory.id)
        if ms is not None:
            s.status_detail = ms
            s.status = ms.status
        if s.status in (Status.STALE, Status.DELETED):
            if omit_stale:
                continue
            s.score *= STALE_PENALTY
        out.append(s)
    return sorted(out, key=lambda s: (-s.score, _neg_time(s.memory), s.memory.id))


@functools.lru_cache(maxsize=65536)
def _epoch(stamp: str) -> float | None:
    """Seconds since the epoch of a ``YYYY-MM-DDTHH:MM:SSZ`` stamp; None when it is not one.

    ``fromisoformat`` (C) rather than ``strptime``: 30x faster, and 10,000 memories are ranked per session start.
    """
    if len(stamp) != 20 or not stamp.endswith("Z") or stamp[10] != "T":
        return None
    try:
        return dt.datetime.fromisoformat(stamp[:-1]).replace(tzinfo=dt.UTC).timestamp()
    except ValueError:
        return None


def _neg_time(m: Memory) -> float:
    """Minus the memory's update time in seconds since the epoch (0 when unknown): newest sorts first."""
    t = _epoch(m.updated or m.created)
    return 0.0 if t is None else -t


def age(m: Memory, now: dt.datetime | None = None) -> str:
    """Compact age of a memory: ``5m``, ``3h``, ``2d``, ``7w``, ``1y`` ("?" when unknown)."""
    t = _epoch(m.updated or m.created)
    if t is None:
        return "?"
    secs = max(0, int((now or dt.datetime.now(dt.UTC)).timestamp() - t))
    for unit, size in (("y", 31_536_000), ("w", 604_800), ("d", 86_400), ("h", 3_600), ("m", 60)):
        if secs >= size:
            return f"{secs // size}{unit}"
    return "now"


def status_note(s: Scored) -> str:
    """``fresh`` or ``⚠ stale: <reason>`` / ``moved: <reason>`` for the first non-fresh anchor."""
    if s.status == Status.FRESH or s.status_detail is None:
        return "fresh"
    worst = max(s.status_detail.anchors, key=lambda a: a.status.severity)
    mark = "⚠ " if s.status in (Status.STALE, Status.DELETED) else ""
    return f"{mark}{s.status.value}: {worst.anchor.key} {worst.reason}".strip()


def _main_anchor(m: Memory) -> str:
    return m.anchors[0].key if m.anchors else "-"


def render_detail(s: Scored) -> str:
    """Full text of one memory for the context (title, anchors, status, body, facts)."""
    m = s.memory
    near = s.near.rsplit(" ", 1)[-1] if s.near else ""
    keys = sorted((a.key for a in m.anchors), key=lambda k: k != near and k.partition("::")[0] != near)
    anchors = ", ".join(keys[:MAX_DETAIL_ANCHORS]) or "-"
    if len(keys) > MAX_DETAIL_ANCHORS:
        anchors += f" (+{len(keys) - MAX_DETAIL_ANCHORS} more: gitmem show {m.id})"
    lines = [f"### {m.id} · {m.type} · {m.title}",
             f"anchors: {anchors} · {age(m)} · {status_note(s)}"]
    body = m.body.strip()
    if len(body) > MAX_DETAIL_BODY_CHARS:
        body = body[:MAX_DETAIL_BODY_CHARS].rsplit(" ", 1)[0] + " …"
    if body:
        lines.append(body)
    lines.extend(f"- {f}" for f in m.facts)
    return "\n".join(lines) + "\n"


def render_index_line(s: Scored) -> str:
    """One compact line: id, type, title, main anchor, age, status."""
    m = s.memory
    return f"- {m.id} [{m.type}] {m.title} — {_main_anchor(m)} · {age(m)} · {status_note(s)}\n"


HEADER = "# gitmem: memories about the code in focus\n"
FOOTER = "Expand an id: `gitmem show ID` or the MCP tool `get` · search: `gitmem recall QUERY` or MCP `search`\n"


@dataclass
class Packed:
    """The packed context: rendered text, the items it holds, and its size.

    Attributes:
        text: Markdown ("" when nothing fits or nothing is relevant).
        detailed: ids shown in full, in order.
        indexed: ids shown as index lines, in order.
        tokens: estimated tokens of ``text``.
        left_out: ranked memories that did not fit.
    """

    text: str
    detailed: list[str]
    indexed: list[str]
    tokens: int
    left_out: int


def pack(ranked: list[Scored], budget_tokens: int, detail: int = 3) -> Packed:
    """Fit ``ranked`` into ``budget_tokens``: the first ``detail`` in full, then index lines.

    Greedy best-first: an item that does not fit is skipped (a later, shorter
    one may still fit). The footer is always included when anything is.
    """
    if not ranked or budget_tokens <= 0:
        return Packed("", [], [], 0, len(ranked))
    fixed = HEADER + "\n" + FOOTER
    used = len(fixed)
    limit = budget_tokens * CHARS_PER_TOKEN
    details: list[str] = []
    lines: list[str] = []
    detailed: list[str] = []
    indexed: list[str] = []
    for s in ranked:
        if len(detailed) < detail:
            block = render_detail(s) + "\n"
            if used + len(block) <= limit:
                details.append(block)
                detailed.append(s.memory.id)
                used += len(block)
                continue
        if limit - used < MIN_INDEX_LINE_CHARS:
            break  # full: rendering the other 10,000 lines to skip them all costs half a second
        line = render_index_line(s)
        extra = len(line) + (len("\nOther memories:\n") if not lines else 0)
        if used + extra <= limit:
            lines.append(line)
            indexed.append(s.memory.id)
            used += extra
    if not detailed and not indexed:
        return Packed("", [], [], 0, len(ranked))
    text = HEADER + "\n" + "".join(details)
    if lines:
        text += "Other memories:\n" + "".join(lines) + "\n"
    text += FOOTER
    return Packed(text, detailed, indexed, token_estimate(text), len(ranked) - len(detailed) - len(indexed))
