"""How a prompt is read: the paths it names, ``path::Symbol`` pairs, identifiers and plain words.

Owns the reading of a prompt, for the agent hooks (``prompt_mentions``) and for ``gitmem context
--prompt`` (``rank.focus`` calls ``read_prompt`` and resolves what it read against the focus files).
A term is an **identifier** by its shape (``snake_case``, ``camelCase``, ``PascalCase`` with an inner
capital, ``dotted.names``, ``name(`` and back-quoted words): the writer marked it as code. Any other
word of ``MIN_WORD_CHARS`` characters or more is a **word**: it may name a symbol (a class
``Session``, a method ``timeout``) but is more often English ("guard against undefined timeout
option"), so a reader gives it weight only where the code says it is a name (a symbol of a focus
file: ``focus``) or with ``WORD_WEIGHT`` (``name_weight``).

``name_weight`` weighs a name by how many anchored symbols share it (a smoothed inverse document
frequency): a name shared by fifty methods says little about which one the task is on.

Guarantees: deterministic; no file or database access.
Must not import: anything outside the standard library (the prompt hook imports it).
"""

from __future__ import annotations

import bisect
import math
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection

_IDENT_LIKE = re.compile(r"`([^`\s]{3,})`|\b(?:(?<![\w$])|(?<=(?<![\w$])\$))"
                         r"([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+|[A-Za-z_$]*_[\w$]+|"
                         r"[a-z][a-z0-9]*[A-Z][\w$]*|[A-Z][a-z0-9]+[A-Z][\w$]*|[A-Za-z_$][\w$]{2,}(?=\())")
# Each expression starts a match only where a run of its characters starts (the look-behinds; a match found
# inside a run is also found from the run's start): without them, every position of a long run retries the
# whole run, a cost in the square of the run's length.
_PATHISH = re.compile(r"(?<![\w.$@-])[\w.$@-]+(?:/[\w.$@-]+)+|(?<![\w-])[\w-]+\.[A-Za-z]{1,5}\b")
_QUALIFIED = re.compile(r"(?<!\S)(\S+?)::([A-Za-z_$][\w$.]*)")
_WORD = re.compile(r"(?<![\w$.`/-])[A-Za-z][a-z0-9]*(?![\w$`/]|\.\w|-\w)")
#: Longest run of non-space characters read: a path, ``path::Symbol`` or identifier a person types is shorter
#: (a repo path is rarely past 200 characters); a longer run is pasted data (base64, a minified line, a hash
#: list) and is dropped before the expressions above run, since their backtracking costs the square of a run's
#: length (a 20,000-character run took 15 s, a 100 KB one minutes).
MAX_RUN_CHARS = 256
_LONG_RUN = re.compile(rf"(?<!\S)\S{{{MAX_RUN_CHARS + 1},}}")

#: Shortest plain word read as a possible name: shorter ones are words like "id", "io", "to".
MIN_WORD_CHARS = 3
#: Weight of a plain word matched to symbols outside the focus files, relative to an identifier (1).
#: A word is English far more often than a name ("remove", "error", "list", "timeout"), so its match
#: must stay under what proximity knows for certain: with ``score.NAMED_CERTAINTY`` (0.95) and
#: ``score.TIER_SAME_SYMBOL`` (1.0) a word's best proximity is 0.95 × 0.3 ≈ 0.29, below a file in
#: focus (``TIER_SAME_FILE`` 0.6) and an import neighbour (0.4), just above a focus directory (0.25).
WORD_WEIGHT = 0.3
#: Floor of ``name_weight``: a name shared by every anchored symbol still says a little (it was typed).
MIN_NAME_WEIGHT = 0.1


class Reading:
    """A prompt as read by ``read_prompt``.

    Attributes:
        paths: repo-relative paths of the given ``paths`` that the prompt names (whole, as a
            suffix ``auth/jwt.py``, or by a base name only one of them has).
        qualified: (path, symbol) for each ``path::Symbol`` whose path is one of ``paths``.
        identifiers: names with an identifier's shape, in the order read (``a::b`` gives ``b``;
            ``name(`` gives ``name``), never a path or a named file.
        words: the other words of ``MIN_WORD_CHARS``+ characters, in the order read, without
            repeats and without the identifiers.
    """

    __slots__ = ("identifiers", "paths", "qualified", "words")  # a plain class: ``typing`` is not on the hot path

    def __init__(self, paths: set[str], qualified: list[tuple[str, str]], identifiers: list[str],
                 words: list[str]) -> None:
        self.paths = paths
        self.qualified = qualified
        self.identifiers = identifiers
        self.words = words

    def __repr__(self) -> str:
        return (f"Reading(paths={sorted(self.paths)!r}, qualified={self.qualified!r}, "
                f"identifiers={self.identifiers!r}, words={self.words!r})")


def read_prompt(prompt: str, paths: Collection[str], words: bool = True) -> Reading:
    """Read ``prompt`` against ``paths`` (the repo-relative paths that can be named: anchored or tracked);
    ``words`` False leaves ``Reading.words`` empty (a reader that takes no plain word saves its scan).

    Cost: one pass of three regular expressions over the prompt (runs of more than ``MAX_RUN_CHARS``
    non-space characters left out: linear in the prompt's length), plus one scan of ``paths`` per distinct
    path-like token with a slash. Raises nothing.
    """
    prompt = _LONG_RUN.sub(" ", prompt)
    named: set[str] = set()
    by_base: dict[str, list[str]] = {}
    for p in paths:
        by_base.setdefault(p.rsplit("/", 1)[-1], []).append(p)
    path_set = paths if isinstance(paths, (set, frozenset, dict)) else set(paths)
    spans: list[tuple[int, int]] = []  # where a named path is: no identifier is read inside it
    suffix_hits: dict[str, list[str]] = {}  # built at the first path-like token with a slash
    for m in _PATHISH.finditer(prompt):
        tok = m.group(0).strip("./")
        before = len(named)
        if tok in path_set:
            named.add(tok)
        elif "/" in tok:
            if not suffix_hits:
                suffix_hits = _by_suffix(paths)
            hits = suffix_hits.get(tok, ())
            if len(hits) == 1:
                named.add(hits[0])
        elif len(by_base.get(tok, [])) == 1:
            named.add(by_base[tok][0])
        if len(named) > before or "/" in tok:
            spans.append(m.span())
    qualified = []
    for m in _QUALIFIED.finditer(prompt):
        path = m.group(1).strip("`'\"(")
        if path in path_set:
            qualified.append((path, m.group(2)))
    identifiers: list[str] = []
    seen: set[str] = set()
    span_starts = [a for a, _ in spans]
    for m in _IDENT_LIKE.finditer(prompt):
        tok = (m.group(1) or m.group(2) or "").strip("`()")
        if "/" in tok or tok in named or not tok or _in_spans(m.start(), spans, span_starts):
            continue
        leaf = tok.split("::")[-1]
        if leaf and leaf not in seen:
            seen.add(leaf)
            identifiers.append(leaf)
    plain: list[str] = []
    for m in _WORD.finditer(prompt) if words else ():
        w = m.group(0)
        if len(w) >= MIN_WORD_CHARS and w not in seen:
            seen.add(w)
            plain.append(w)
    return Reading(named, qualified, identifiers, plain)


def _by_suffix(paths: Collection[str]) -> dict[str, list[str]]:
    """Each ``/``-suffix of ``paths`` (``auth/jwt.py`` of ``src/auth/jwt.py``) -> the paths ending with it;
    one pass over the paths (a scan per token cost tokens × paths: 3,000 paths named of 20,000 took 24 s)."""
    out: dict[str, list[str]] = {}
    for p in paths:
        i = p.find("/")
        while i >= 0:
            out.setdefault(p[i + 1:], []).append(p)
            i = p.find("/", i + 1)
    return out or {"": []}


def _in_spans(pos: int, spans: list[tuple[int, int]], starts: list[int]) -> bool:
    """Whether ``pos`` is inside one of ``spans`` (sorted, disjoint (start, end) pairs; ``starts`` their starts)."""
    i = bisect.bisect_right(starts, pos) - 1
    return i >= 0 and pos < spans[i][1]


def prompt_mentions(prompt: str, anchored: set[str]) -> tuple[set[str], set[str]]:
    """(anchored paths a prompt names, identifier-like words it holds): ``read_prompt``'s paths and
    identifiers, for the prompt hook (its plain words are not taken as symbol names: ``run``,
    ``config``; the hook has no focus file to check them against)."""
    reading = read_prompt(prompt, anchored, words=False)
    return reading.paths, set(reading.identifiers)


def name_weight(shared_by: int, symbols: int) -> float:
    """Weight in [``MIN_NAME_WEIGHT``, 1] of a name that ``shared_by`` of ``symbols`` anchored symbols bear.

    The smoothed inverse document frequency of BM25 (Robertson & Zaragoza, "The Probabilistic Relevance
    Framework: BM25 and Beyond", 2009, eq. 3.3, with the +1 inside the logarithm that Lucene uses so it
    never goes negative), ``idf(n) = ln(1 + (N - n + 0.5) / (n + 0.5))``, divided by ``idf(1)`` so a
    name only one symbol bears weighs 1: N = 1,000 symbols, a name on 1 → 1.0, on 5 → 0.78, on 50 →
    0.43. ``shared_by`` ≤ 1 (or ``symbols`` ≤ 1): 1.0.
    """
    if shared_by <= 1 or symbols <= 1:
        return 1.0
    n = min(shared_by, symbols)

    def idf(k: int) -> float:
        return math.log(1 + (symbols - k + 0.5) / (k + 0.5))

    return max(MIN_NAME_WEIGHT, idf(n) / idf(1))
