"""Fusing rankings: weighted reciprocal rank fusion, and the prompt hook's ranking of a prompt's memories.

Owns: ``RRF_K`` and ``rrf`` (the one reciprocal rank fusion of gitmem: ``search.hybrid`` fuses its BM25
and vector rankings with it, ``rank.score`` its proximity, text and recency rankings, the prompt hook
its text rankings), and ``prompt_ranking`` with its named weights: the order of the memories a
prompt names or matches, the same function for the prompt hook and ``bench/retrieval.py``.

Guarantees: pure and deterministic (ties keep the first-seen order); no file, database or index
access: callers hand in ids, scores and hits.
Must not import: anything outside the standard library (the prompt hook imports it).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

#: Reciprocal rank fusion constant k, from Cormack, Clarke and Büttcher (2009), "Reciprocal rank fusion
#: outperforms Condorcet and individual rank learning methods" (SIGIR '09), where k = 60 was fixed in a
#: pilot and used throughout (robust across collections).
RRF_K = 60

#: Prompt ranking: a memory on a file the prompt names, on a symbol it names (a named symbol beats its
#: file); text relevance adds at most 1, so a named memory always ranks above one the text alone finds.
NAMED_PATH_SCORE = 2.0
NAMED_SYMBOL_SCORE = 3.0
#: A catalog BM25 hit is relevant when it scores at least this fraction of the best hit's score.
MIN_RELATIVE_BM25 = 0.5


def ranks(ids: Iterable[str]) -> dict[str, int]:
    """id → its 1-based rank in ``ids`` (best first); a repeated id keeps its first (best) rank."""
    out: dict[str, int] = {}
    for mid in ids:
        if mid not in out:
            out[mid] = len(out) + 1
    return out


def rrf(rankings: Iterable[tuple[Iterable[str], float]], k: int = RRF_K) -> dict[str, float]:
    """Weighted reciprocal rank fusion: id → ``Σ_l w_l / (k + rank_l(id))`` over the rankings holding the id.

    ``rankings``: (ids best first, weight w_l) pairs; ranks as ``ranks`` gives them (1-based, a repeated id
    keeps its best). Formula: Cormack, Clarke & Büttcher 2009 (``RRF_K``), weighted as in ``rank.score``.
    The dict keeps first-seen order (callers sort it).
    """
    out: dict[str, float] = {}
    for ids, weight in rankings:
        for mid, rank in ranks(ids).items():
            out[mid] = out.get(mid, 0.0) + weight / (k + rank)
    return out


def bm25_relevance(hits: Sequence[tuple[str, float]]) -> dict[str, float]:
    """id → BM25 score relative to the best hit, in (0, 1], for the hits scoring at least ``MIN_RELATIVE_BM25``
    of the best (``hits``: (id, score) best first, higher is better, as ``catalog.db.search`` returns)."""
    if not hits or hits[0][1] <= 0:
        return {}
    best = hits[0][1]
    out: dict[str, float] = {}
    for mid, score in hits:
        if score >= MIN_RELATIVE_BM25 * best and mid not in out:
            out[mid] = score / best
    return out


def text_relevance(bm25: Sequence[tuple[str, float]], hybrid: Sequence[Mapping[str, Any]] | None) -> dict[str, float]:
    """id → text relevance to the prompt in (0, 1], best first in first-seen order.

    Without ``hybrid`` (no warm process): the catalog's BM25 relative to its best hit (``bm25_relevance``).
    With ``hybrid`` (the warm process's hits, best first, each a mapping with ``id``: LanceDB's BM25 and
    vector rankings already fused by ``rrf`` and floored by ``search.hybrid.relevant``): the reciprocal rank
    fusion of the two lists, the catalog BM25 hits kept by ``bm25_relevance`` and the hybrid hits, each
    weight 1 (as ``search.hybrid`` fuses BM25 and vectors), divided by the best fused score, so a memory
    both find ranks first and one only the vectors find (a prompt sharing no word with it) still counts.
    """
    lexical = bm25_relevance(bm25)
    if hybrid is None:
        return lexical
    fused = rrf([(list(lexical), 1.0), ([str(h["id"]) for h in hybrid], 1.0)])
    best = max(fused.values(), default=0.0)
    return {mid: s / best for mid, s in fused.items()} if best > 0 else {}


def prompt_ranking(path_ids: Iterable[str], symbol_ids: Iterable[str], bm25: Sequence[tuple[str, float]],
                   hybrid: Sequence[Mapping[str, Any]] | None = None) -> list[tuple[str, float]]:
    """The prompt hook's ranking: (memory id, score) best first.

    ``path_ids``: memories on files the prompt names (``NAMED_PATH_SCORE``); ``symbol_ids``: on symbols it
    names (``NAMED_SYMBOL_SCORE``; a memory keeps its best named score); ``bm25``: the catalog's BM25 hits
    (``catalog.db.search``); ``hybrid``: the warm process's hybrid hits, or None when it did not answer.
    Score = named score + ``text_relevance`` (≤ 1). Ties keep the order named paths, named symbols, text.
    """
    ranked: dict[str, float] = {}
    for mid in path_ids:
        ranked[mid] = max(ranked.get(mid, 0.0), NAMED_PATH_SCORE)
    for mid in symbol_ids:
        ranked[mid] = max(ranked.get(mid, 0.0), NAMED_SYMBOL_SCORE)
    for mid, t in text_relevance(bm25, hybrid).items():
        ranked[mid] = ranked.get(mid, 0.0) + t
    return sorted(ranked.items(), key=lambda kv: -kv[1])
