"""Task guesses before the first edit: which symbols of the files in focus the task is about.

Before any edit, the focus holds files (given with ``--file``, named in the prompt) but no changed symbol, so
every memory on those files is as near as any other (``score.TIER_SAME_FILE``) and recency alone orders them.
``add_task_symbols`` guesses the symbols the task will touch from the prompt's words matched against the
words of each focus file's symbol names (``serializing JSON`` ~ ``_serialize_json``, ``Mux.handle`` for "handle
the route"), and adds them to ``Focus.symbols`` with the weight ``WEIGHT_GUESSED`` (below a changed or named
symbol, above the rest of the file), so their memories rank above the file's other memories.

Only files with no changed or named symbol are guessed for: mid-task, the diff says which symbols changed.

Must not import: lancedb.
"""

from __future__ import annotations

import math

from ..anchors import Resolver
from ..textsplit import name_base, name_parts, query_terms, split_identifiers
from .focus import Focus

#: Weight of a guessed symbol (multiplies the proximity tier): a guess from words, so below a changed or
#: named symbol (1.0) and a file the branch touched (0.7); its same-symbol proximity 0.75 is above the
#: file's other memories (``TIER_SAME_FILE`` 0.6), its enclosing one (0.8 × 0.75 = 0.6) level with them.
WEIGHT_GUESSED = 0.75
#: Share of ``WEIGHT_GUESSED`` a symbol gets whatever its match score (the rest scales with the score): a guess
#: matching a third of its name's words still ranks above the file's other memories (its same-symbol proximity
#: 0.75 × 0.85 = 0.64 > ``TIER_SAME_FILE`` 0.6), a full match at 0.75.
GUESS_FLOOR = 0.85
#: Files guessed for, at most (the highest-weighted focus files first): each costs one symbol table (parsed
#: once, cached by blob).
MAX_GUESS_FILES = 20
#: Guessed symbols kept per file, at most (the best matches): a prompt word shared by most of a file's
#: symbols (``json`` in ``json.rs``) would otherwise bring the whole file.
MAX_GUESSES_PER_FILE = 5
#: Prompt terms shorter than this are not matched (``a``, ``to``, ``id``: too common to point at a name).
MIN_TERM = 3
#: Words that say what to do, not where (``fix the parser``): never matched against names.
_ACTION_WORDS = frozenset(
    "add adds added adding fix fixes fixed fixing remove removes removed removing update updates updated use uses "
    "used using make makes made allow allows allowed support supports change changes changed the and for with "
    "from into when not this that should can new now also more less all any its".split())


def stem(word: str) -> str:
    """A light English stem of a lower-case word, enough to meet a name's word: ``serializing`` / ``serialized``
    / ``serializes`` / ``serialize`` -> ``serializ``; ``headers`` -> ``header``. Suffixes stripped, longest first,
    only when at least four letters remain (a crude Porter step 1: Porter, "An algorithm for suffix
    stripping", 1980)."""
    for suffix in ("ing", "ed", "es", "e", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def name_words(name: str) -> set[str]:
    """Stems of the words of a symbol's own name (its last part, split at snake and camel case)."""
    leaf = name_parts(name_base(name))[-1]
    return {stem(t) for t in query_terms(split_identifiers(leaf)) if len(t) >= MIN_TERM}


def prompt_stems(prompt: str) -> set[str]:
    """Stems of the prompt's terms (``textsplit.query_terms``: identifiers split too), short and action words
    left out."""
    return {stem(t) for t in query_terms(prompt) if len(t) >= MIN_TERM and t not in _ACTION_WORDS}


def guess_symbols(names: list[str], stems: set[str], limit: int = MAX_GUESSES_PER_FILE) -> list[tuple[str, float]]:
    """The symbols of one file (``names``: its qualified names) the prompt's ``stems`` point at, best first, at
    most ``limit``: (name, score in (0, 1]).

    A symbol's score is the IDF-weighted share of its name's words that the prompt holds,
    Σ_matched idf(w) / Σ_all idf(w), with idf(w) = ln(1 + N / df(w)) over the file's N symbols (Sparck Jones,
    "A statistical interpretation of term specificity", 1972): a word in every name of the file (``json`` in
    ``json.rs``) counts little, a rare one much. Symbols whose matched words are all in more than half the
    file's names are left out (they point at the whole file, which is already in focus).
    """
    words = {n: name_words(n) for n in names}
    df: dict[str, int] = {}
    for ws in words.values():
        for w in ws:
            df[w] = df.get(w, 0) + 1
    n = max(1, len(names))
    idf = {w: math.log(1 + n / d) for w, d in df.items()}
    scored: list[tuple[str, float]] = []
    for name, ws in words.items():
        hit = ws & stems
        if not hit or all(df[w] * 2 > n for w in hit):
            continue
        scored.append((name, sum(idf[w] for w in hit) / sum(idf[w] for w in ws)))
    scored.sort(key=lambda x: (-x[1], len(x[0]), x[0]))
    return scored[:limit]


def add_task_symbols(focus: Focus, resolver: Resolver, rev: str | None) -> None:
    """Add to ``focus.symbols`` the symbols of its files that the prompt's words point at (module docstring),
    with weight ``WEIGHT_GUESSED`` × the file's weight × (``GUESS_FLOOR`` + the rest × the match score), why
    ``guessed from the prompt``.

    Files: up to ``MAX_GUESS_FILES`` of ``focus.files`` (highest weight first) that have no symbol in focus
    yet, read at ``rev`` (a commit, or ``git.WORKTREE``). Does nothing without a prompt; a file gitmem cannot
    parse is skipped. Cost: one symbol table per file (``Resolver.table``, cached by blob).
    """
    stems = prompt_stems(focus.prompt)
    if not stems or not focus.files:
        return
    with_symbols = {p for p, _ in focus.symbols}
    ordered = sorted(focus.files.items(), key=lambda x: (-x[1][0], x[0]))
    for path, (w, _) in [x for x in ordered if x[0] not in with_symbols][:MAX_GUESS_FILES]:
        table = resolver.table(rev, path)
        if not table:
            continue
        for name, score in guess_symbols(list(table), stems):
            weight = WEIGHT_GUESSED * w * (GUESS_FLOOR + (1 - GUESS_FLOOR) * score)
            focus.add_symbol(path, name, weight, "guessed from the prompt")
