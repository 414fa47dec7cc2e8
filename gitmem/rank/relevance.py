"""Relevance floors: whether a memory a search found concerns the prompt at all, or only came first.

Owns: the score floors of what the hooks inject unasked (``DEFAULT_MIN_BM25``, ``DEFAULT_MIN_COVERAGE``,
``DEFAULT_MIN_SIMILARITY``, ``[relevance]`` in config.toml through ``config.relevance_floors``), the absolute
text score they apply to (``match_score``, ``self_score``), and the floors themselves (``text_floor``,
``lexical_floor``, ``vector_floor``). A ranking only says
which hit is best; a floor says whether the best is any good. Without one, the prompt hook injected the
best BM25 hit of a prompt that shared one word with it ("the"), and with the warm process up the nearest
vector of a nonsense prompt.

The text score: BM25 (Robertson & Zaragoza 2009) of the memory for the prompt's content terms
(``stopwords.content_terms``), with k1 = 1.2, b = 0 (no length normalisation: memories are short notes),
and Lucene's smoothed IDF, ``ln(1 + (N - n + 0.5) / (n + 0.5))``, N the memories in the store but at least
``MIN_STORE_SIZE``. It is an absolute score, comparable across prompts and stores: one match of a term
that 1 memory in 100 holds scores ≈ 4.2, of one that every fifth memory holds ≈ 1.6. (FTS5's own ``bm25()``
ranks, but its IDF is 0 for a term half the store holds and clamps to 1e-6: in a store of 2 memories every
match scores ~1e-6, so no absolute floor can apply to it.)

Calibration (``bench/relevance.py``, bench/README.md): the floors were set on gitmem's own history as
memories, prompts that concern nothing in it (other repositories' commit subjects, requests that name no
subject in 8 languages) against held-out commit messages whose relevant memories are known (as in
``bench/retrieval.py``), and ``bench/retrieval.py`` itself: the text floors are near the strictest that keep
the hook's recall there (see their constant), the vector floor is where subject-less requests stop getting
anything (WordLlama does not separate paraphrases from noise: see its constant).

Guarantees: pure, deterministic; no file or database access (callers hand in texts and counts).
Must not import: anything outside the standard library (the prompt hook imports it).
"""

from __future__ import annotations

import math
import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

#: BM25's term-frequency saturation (Robertson & Zaragoza 2009; FTS5's and Lucene's default).
BM25_K1 = 1.2
#: The store size below which IDF is computed as if the store had this many memories (the others without the
#: term): a handful of memories says nothing about how common a word is, so in a new store any content word
#: they share with a prompt counts as fairly rare (a term 1 of 2 memories holds: IDF 4.2, as 1 in 100).
MIN_STORE_SIZE = 100
#: ``[relevance] min_bm25`` and ``min_coverage``: a memory found by text is injected unasked only when its
#: ``match_score`` reaches ``text_floor``: ``min_coverage`` of what the prompt would score against itself
#: (``self_score``: its content terms that some memory holds, matched once), but never more than ``min_bm25``.
#: A short prompt must be mostly matched (one shared word of four is a coincidence: "restore the logging
#: plugin" and a memory on ``git restore``); a long one (a pasted commit message, 15 content terms) needs
#: ``min_bm25`` ≈ two matches of terms one memory in 30 holds. Calibrated on data (module docstring;
#: bench/README.md): min_bm25 8 kept the held-out commit messages' recall@10 with vectors where 10 lowered it
#: (0.737 → 0.717); min_coverage 0.6 leaves a short prompt one filler word in three ("which gateway
#: convention do tokens follow": 0.70). Other repositories' subjects then get 2.3 memories per prompt instead
#: of 3.4 without vectors (bench/README.md).
DEFAULT_MIN_BM25 = 8.0
DEFAULT_MIN_COVERAGE = 0.6
#: ``[relevance] min_similarity``: a memory found by the vectors alone (no text match above the floor) is
#: injected unasked only when its cosine similarity to the prompt reaches this. Calibrated on data (module
#: docstring; bench/README.md): WordLlama puts other repositories' commit subjects and their nearest memory at
#: 0.10-0.60 (median 0.30, 90th percentile 0.45) and subject-less requests ("explain the code", in 8 languages)
#: at 0.15-0.53 (90th percentile 0.32), but a prompt and the memory it paraphrases at only 0.20-0.40: no floor
#: keeps paraphrases and cuts noise, so the floor cuts noise (from 0.35 on, none of the 34 subject-less requests
#: gets anything) and paraphrases rely on a lower floor set by hand or a better embedding model.
DEFAULT_MIN_SIMILARITY = 0.45
#: A memory found by the vectors whose text also matches the prompt, if too weakly for the text floor, needs only
#: the search's own vector floor (``DEFAULT_MIN_SHARED_SIMILARITY``, as ``search.hybrid.MIN_VECTOR_SIMILARITY``)
#: when its text reaches the text floor with ``min_bm25`` scaled by ``SHARED_TEXT_FRACTION`` (``min_coverage``
#: kept: a short prompt's coincidental word does not count): the words and the meaning agree. Calibrated on data
#: (bench/README.md): with 0.45 for these too, ``bench/retrieval.py``'s hook+vectors recall@10 fell from 0.702
#: to 0.645 (with this rule: 0.705); relaxing the whole text floor for them brought more foreign subjects back.
SHARED_TEXT_FRACTION = 0.3
DEFAULT_MIN_SHARED_SIMILARITY = 0.15

#: The organisation index's hits are floored (``org_floor``) without that index's term counts (the prompt hook
#: reads no LanceDB): each content term counts as held by this many memories of ``MIN_STORE_SIZE`` (a rare term,
#: IDF ≈ 4.2), so the floor asks for ``min_coverage`` of the prompt's content terms, or two of them once that is
#: more than ``min_bm25`` (8 ≈ 2 × 4.2): one shared word of a longer prompt is never enough.
ORG_TERM_DOCS = 1

_TOKEN = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """``text`` lower-cased with diacritics removed, as the full-text index (FTS5 ``unicode61``) folds it."""
    text = text.lower()
    if text.isascii():
        return text
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def idf(docs: int, n: int) -> float:
    """Lucene's smoothed inverse document frequency of a term ``docs`` memories of ``n`` hold (n taken as at
    least ``MIN_STORE_SIZE``): ``ln(1 + (N - docs + 0.5) / (docs + 0.5))``, > 0 for every docs ≤ N."""
    big_n = max(n, MIN_STORE_SIZE, docs)
    return math.log(1.0 + (big_n - docs + 0.5) / (docs + 0.5))


def tokens(text: str) -> list[str]:
    """The terms of ``text`` as the full-text index holds them (runs of letters and digits, ``fold``-ed)."""
    return _TOKEN.findall(fold(text))


def match_score(terms: Sequence[str], text: str, docs: Mapping[str, int], n: int) -> float:
    """BM25 (k1 = ``BM25_K1``, b = 0, ``idf``) of a memory's full-text ``text`` for the content ``terms`` (distinct,
    lower-cased: ``stopwords.content_terms``); ``docs``: term → memories holding it, ``n``: memories in the store.
    0.0 when it holds none of them."""
    counts: dict[str, int] = {}
    for tok in tokens(text):
        counts[tok] = counts.get(tok, 0) + 1
    score = 0.0
    for t in dict.fromkeys(fold(t) for t in terms):
        f = counts.get(t, 0)
        if f:
            score += idf(max(docs.get(t, 1), 1), n) * f * (BM25_K1 + 1) / (f + BM25_K1)
    return score


def self_score(terms: Sequence[str], docs: Mapping[str, int], n: int) -> float:
    """What a memory holding each of the content ``terms`` once scores (``match_score``'s sum of ``idf``), over the
    terms some memory holds (``docs`` > 0): the most the prompt can be matched in this store, the base of
    ``min_coverage``. A word no memory holds ("lorem", a name from another code base) can be matched by none, so
    it says nothing about which memory the prompt concerns."""
    return sum(idf(d, n) for t in dict.fromkeys(fold(t) for t in terms) if (d := docs.get(t, 0)) > 0)


def text_floor(prompt_score: float, min_bm25: float, min_coverage: float) -> float:
    """The ``match_score`` a memory needs for a prompt whose ``self_score`` is ``prompt_score``:
    ``min(min_bm25, min_coverage × prompt_score)``."""
    return min(min_bm25, min_coverage * prompt_score)


def lexical_floor(hits: Sequence[tuple[str, float]], scores: Mapping[str, float],
                  min_bm25: float) -> list[tuple[str, float]]:
    """``hits`` ((id, ranking score) best first, as ``catalog.db.search_terms`` returns) whose ``scores``
    (id → ``match_score``) reach ``min_bm25``, order and ranking scores kept."""
    return [(mid, s) for mid, s in hits if scores.get(mid, 0.0) >= min_bm25]


def vector_floor(hybrid: Sequence[Mapping[str, Any]] | None, lexical: Iterable[str], min_similarity: float,
                 shared: Iterable[str] = (), min_shared_similarity: float | None = None,
                 ) -> list[Mapping[str, Any]] | None:
    """The warm process's hybrid hits (each ``{"id", "similarity", ...}``, best first) that the text floor kept
    (their id in ``lexical``) or whose cosine ``similarity`` reaches ``min_similarity`` — or, for a memory that
    shares a content term with the prompt (its id in ``shared``), ``min_shared_similarity`` (None: the same
    floor); None stays None (no warm process). A hit the warm process found by its own full-text side only is
    dropped unless the catalog's text floor kept it too: one owner of the text floor."""
    if hybrid is None:
        return None
    kept, near = set(lexical), set(shared)
    low = min_similarity if min_shared_similarity is None else min_shared_similarity
    out = []
    for h in hybrid:
        sim = h.get("similarity")
        floor = low if h.get("id") in near else min_similarity
        if h.get("id") in kept or (isinstance(sim, (int, float)) and not isinstance(sim, bool) and sim >= floor):
            out.append(h)
    return out


def org_floor(terms: Sequence[str], hits: Sequence[Mapping[str, Any]], min_bm25: float,
              min_coverage: float) -> list[Mapping[str, Any]]:
    """The organisation index's ``hits`` (each ``{"title", "body", "anchors", ...}``: ``shapes.org_hit_json``, best
    first) whose own text (title, body and anchors) reaches ``text_floor`` for the prompt's content ``terms``
    (``stopwords.content_terms``), every term counted as ``ORG_TERM_DOCS`` memories hold it; order kept. ``[]``
    without content terms."""
    if not terms:
        return []
    docs = {fold(t): ORG_TERM_DOCS for t in terms}
    need = text_floor(self_score(terms, docs, 0), min_bm25, min_coverage)
    out = []
    for h in hits:
        text = "\n".join([str(h.get("title") or ""), str(h.get("body") or ""), *map(str, h.get("anchors") or ())])
        score = match_score(terms, text, docs, 0)
        if score > 0 and score >= need:
            out.append(h)
    return out
