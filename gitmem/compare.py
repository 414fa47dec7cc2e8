"""Two memories on the same code: is one a near-copy of the other, and do their statements disagree?

Owns the measures ``gitmem tidy`` and consolidation share (one owner: ``capture.consolidate``
and ``ops.tidy`` both call ``near_duplicates`` / ``contradiction``):

* **same code** (``same_code``): the memories share an anchor key (``path::Qualified.Name``, or
  ``path`` for two file anchors), or one has a file anchor on a path the other anchors a symbol in.
  Commit anchors do not count (a commit is not code).
* **near-duplicate** (``similarity``): token-set Jaccard of the two texts' words (title, body and facts;
  words of 3+ letters or digits, lower-cased). Duplicates are memories on the same code with
  ``similarity >= DUPLICATE_JACCARD``. Chosen over the WordLlama embedding cosine on the planted set
  of ``bench/tidy.py`` (gitmem's own history; bench/README.md, "tidy.py"): at 0.6 Jaccard merges no
  compatible pair (the highest scores 0.55) and finds 90 % of the paraphrases; cosine finds 94 % at 0.80
  but sits 0.01 above a compatible pair and loses 15 points of recall by 0.85, and it needs a model.
* **contradiction** (``contradiction``): rules over two ``decision`` / ``constraint`` /
  ``preference`` memories on the same code (``RULE_TYPES``), each sentence lower-cased, stop
  words out, words stemmed by dropping a plural or tense ending:

  - ``negation``: one memory negates a verb phrase (``never``, ``must not``, ``do not``, ``don't``,
    ``should not``, ``cannot``, ``is not``, ``no longer``, ``avoid`` …, then its next two or three
    content words: ``never call save twice``; one code span: ``never `alembic upgrade` ``; or the word
    before and the one after: ``hooks must never hang`` → hook, hang) that the other states un-negated,
    the words adjacent and no negation before them in that sentence (``call save twice``; a code span
    starting with it: ``use `alembic upgrade head` ``);
  - ``value``: both give a value to the same name, differently (``timeout = 30`` / ``the timeout
    is 60 seconds``: ``=`` takes any value, ``:``, ``is``, ``at``, ``to`` … only a number or a quoted /
    code value; numbers compared after time units); a name one memory gives two values ("from 30 to
    60") is left out;
  - ``use``: ``use X for|to|when SLOT`` and ``use Y …`` with the same slot (its first two words)
    and X ≠ Y, or one says ``use X instead of Y`` and the other ``use Y``.

  Measured on ``bench/tidy.py``'s planted set (precision and false flags in bench/README.md).

Pure functions of ``Memory`` values: no I/O, no git. Must not import: lancedb, numpy, an LLM client.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Set
from dataclasses import dataclass

from .model import KIND_COMMIT, Memory

#: Jaccard similarity at or above which two memories on the same code are one memory twice. From the
#: planted set of bench/tidy.py: the highest compatible pair of real memories on one code scored 0.55 (false
#: merges are worse than missed ones); 90 % of the paraphrases score 0.6 or more.
DUPLICATE_JACCARD = 0.6
#: Memory types whose statements the rules compare (what a memory tells the reader to do or holds true).
RULE_TYPES = ("decision", "constraint", "preference")

_WORD = re.compile(r"[^\W_]{3,}")


# -- same code ------------------------------------------------------------------------------------


def code_keys(m: Memory) -> set[str]:
    """The keys of ``m``'s anchors on code (``path::Name`` or ``path``), commit anchors left out."""
    return set(_code(m)[0])


def _code(m: Memory) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(anchor keys on code, paths anchored whole, every path anchored) of ``m``."""
    return _code_of(tuple((a.key.partition("::")[0], a.symbol) for a in m.anchors  # REPO:path for a foreign one
                          if a.kind != KIND_COMMIT and a.path))


@functools.lru_cache(maxsize=65_536)
def _code_of(anchors: tuple[tuple[str | None, str | None], ...]) -> tuple[frozenset[str], frozenset[str],
                                                                          frozenset[str]]:
    keys, files, paths = set(), set(), set()
    for path, symbol in anchors:
        assert path is not None
        paths.add(path)
        keys.add(f"{path}::{symbol}" if symbol else path)
        if not symbol:
            files.add(path)
    return frozenset(keys), frozenset(files), frozenset(paths)


def same_code(a: Memory, b: Memory) -> list[str]:
    """The anchor keys by which ``a`` and ``b`` are about the same code, sorted ([] when they are not):
    a key both have, or a file one of them anchors whole and the other anchors a symbol in (the file's key)."""
    ka, fa, pa = _code(a)
    kb, fb, pb = _code(b)
    if not pa & pb:
        return []
    return sorted((ka & kb) | (fa & pb) | (fb & pa))


# -- near duplicates --------------------------------------------------------------------------------


def words(text: str) -> set[str]:
    """The distinct lower-cased words of ``text`` (3+ letters or digits, ``_`` splits)."""
    return {w.lower() for w in _WORD.findall(text)}


def jaccard(a: Set[str], b: Set[str]) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    return len(a & b) / len(a | b) if a or b else 0.0


def memory_words(m: Memory) -> frozenset[str]:
    """The words ``similarity`` compares: of the title, body and facts (cached by text: tidy compares each memory
    with every other one on its code)."""
    return _words_cached(m.text)


@functools.lru_cache(maxsize=65_536)
def _words_cached(text: str) -> frozenset[str]:
    return frozenset(words(text))


def similarity(a: Memory, b: Memory) -> float:
    """Token-set Jaccard of the words of ``a`` and ``b`` (``memory_words``), in [0, 1]."""
    return jaccard(memory_words(a), memory_words(b))


def near_duplicates(m: Memory, others: list[Memory], threshold: float = 0.0) -> list[tuple[Memory, float]]:
    """The memories of ``others`` on the same code as ``m`` (``same_code``) whose ``similarity`` with ``m`` is at
    least ``threshold``, most similar first (ties: by id); ``m`` itself (by id) left out."""
    mine = memory_words(m)
    out = []
    for o in others:
        if o.id == m.id or not same_code(m, o):
            continue
        out.append((o, jaccard(mine, memory_words(o))))
    return sorted((x for x in out if x[1] >= threshold), key=lambda x: (-x[1], x[0].id))


def near_duplicate(new: Memory, existing: list[Memory]) -> tuple[Memory, float] | None:
    """The memory of ``existing`` on the same code as ``new`` whose text overlaps it most, with the overlap
    (``similarity``); None when none is on the same code."""
    found = near_duplicates(new, existing)
    return found[0] if found else None


# -- contradictions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Contradiction:
    """Why two memories disagree: ``rule`` (``negation``, ``value``, ``use``; ``llm`` for a model's verdict)
    and one line quoting both sides (``reason``)."""

    rule: str
    reason: str


_STOP = frozenset("""a an the to of in on at by for with from into and or but it its this that these those be
been being was were will would there here then than so as any all each every our their your his her we you
they he she i me my also just very when which who what is are am must should shall will can could may might
do does did has have had""".split())
_NEG = (r"never|must\s+not|mustn't|should\s+not|shouldn't|do\s+not|don't|does\s+not|doesn't|did\s+not|"
        r"didn't|cannot|can't|can\s+not|may\s+not|is\s+not|isn't|are\s+not|aren't|no\s+longer|avoid|not")
_NEG_RE = re.compile(rf"\b(?:{_NEG})\b")
_SENTENCE = re.compile(r"(?<![\w.])(?:[.!?](?=\s|$))|[;\n]|(?<=\w)[.!?](?=\s|$)")
_TOKEN = re.compile(r"`[^`]+`|[\w.\-/]+")
#: Seconds per time unit, for ``value``: 60 seconds and 1 minute are one value.
_TIME_UNITS = {"ms": 0.001, "millisecond": 0.001, "milliseconds": 0.001, "s": 1, "sec": 1, "secs": 1,
               "second": 1, "seconds": 1, "min": 60, "mins": 60, "minute": 60, "minutes": 60, "h": 3600,
               "hour": 3600, "hours": 3600, "d": 86400, "day": 86400, "days": 86400}
_NUMBER = r"-?\d+(?:\.\d+)?"
_UNIT = r"(?:\s*(?:%|[a-z]+))?"
_QUOTED = r"`[^`]+`|\"[^\"]+\"|'[^']+'"
#: ``name = value``: any value as written (a bracketed group whole); ``name: value`` and ``name is|are|of|at|to|
#: equals value``: a number (with its unit) or a quoted / code value only (plain words after "is" or a colon
#: describe, they do not set a value).
_GROUP = r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}"
_ASSIGN = re.compile(rf"(`[^`]+`|[A-Za-z_][\w.\-]*)\s*(?::=|==|=)\s*({_QUOTED}|{_GROUP}|{_NUMBER}{_UNIT}|[^\s,;)]+)"
                     rf"|(`[^`]+`|[A-Za-z_][\w.\-]*):\s*({_QUOTED}|{_NUMBER}{_UNIT})(?![\w.])")
_VERBAL = re.compile(rf"(`[^`]+`|[A-Za-z_][\w.\-]*)\s+(?:is|are|of|at|to|equals|defaults\s+to|set\s+to|"
                     rf"is\s+set\s+to|becomes)\s+({_QUOTED}|{_NUMBER}{_UNIT})(?![\w.])")
_USE = re.compile(r"\buse\s+(`[^`]+`|[\w.\-/]+(?:\s+[\w.\-/]+){0,2}?)\s+(?:(?:for|to|when|in|as)\s+(.+)|"
                  r"instead\s+of\s+(`[^`]+`|[\w.\-/]+))")
_USE_END = re.compile(r"\buse\s+(`[^`]+`|[\w.\-/]+(?:\s+[\w.\-/]+){0,2})\s*$")


def _stem(w: str) -> str:
    """``w`` without a plural or tense ending (``calls`` → ``call``, ``capped`` → ``capp``): crude, both sides alike."""
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


def _content(text: str) -> list[str]:
    """The stemmed content words of ``text``: code spans as one word, stop words and negations out."""
    out = []
    for tok in _TOKEN.findall(text.lower()):
        tok = tok.strip("`.-/")
        if tok and tok not in _STOP:
            out.append(_stem(tok))
    return out


def sentences(m: Memory) -> list[str]:
    """The lower-cased sentences of ``m``'s title, body and facts (split at ``.!?`` before a space, ``;``, lines)."""
    return list(_sentences(m.text))


#: Memory texts whose analysis is kept (tidy compares each memory with every other one on its code).
_CACHED_TEXTS = 16_384


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def _sentences(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in _SENTENCE.split(text.lower()) if s.strip())


#: Words of a negated verb phrase compared (at most; at least two).
_PHRASE_WORDS = 3


def negated_phrases(m: Memory) -> list[tuple[tuple[str, ...], str]]:
    """Each verb phrase ``m`` negates: (its content words, the sentence); see the module docstring."""
    return list(_negated(m.text))


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def _negated(text: str) -> tuple[tuple[tuple[str, ...], str], ...]:
    out: list[tuple[tuple[str, ...], str]] = []
    for s in _sentences(text):
        for hit in _NEG_RE.finditer(s):
            rest = s[hit.end():]
            after = [w for w in _content(rest) if not _NEG_RE.fullmatch(w)]
            before = [w for w in _content(s[:hit.start()]) if not _NEG_RE.fullmatch(w)]
            if rest.lstrip().startswith("`") and after:
                out.append(((after[0],), s))  # a command or name in code: specific on its own
            elif len(after) >= 2:
                out.append((tuple(after[:_PHRASE_WORDS]), s))
            elif after and before:
                out.append(((before[-1], after[0]), s))  # "hooks must never hang": (hook, hang)
    return tuple(out)


def _states(m: Memory, phrase: tuple[str, ...]) -> str | None:
    """A sentence of ``m`` holding ``phrase`` (content words, in order, adjacent) with no negation before it."""
    n = len(phrase)
    for s, negs, toks in _tokens(m.text):
        for i in range(len(toks) - n + 1):
            got = tuple(w for _, w in toks[i:i + n])
            same = got == phrase or (n == 1 and got[0].startswith(phrase[0] + " "))
            if same and not any(e <= toks[i][0] for e in negs):
                return s
    return None


def _number(value: str) -> tuple[float, float, str] | None:
    """(the number as written, in seconds for a time, its unit class: ``time``, the unit, or "") of a numeric
    value; None for any other value."""
    hit = re.fullmatch(rf"({_NUMBER})\s*(%|[a-z]+)?", value.strip())
    if hit is None:
        return None
    n, unit = float(hit.group(1)), (hit.group(2) or "")
    if unit in _TIME_UNITS:
        return n, n * _TIME_UNITS[unit], "time"
    return n, n, unit


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def _tokens(text: str) -> tuple[tuple[str, tuple[int, ...], tuple[tuple[int, str], ...]], ...]:
    """Per sentence of ``text``: (the sentence, where each negation in it ends, (position, stemmed word) of its
    content words)."""
    out = []
    for s in _sentences(text):
        negs = tuple(h.end() for h in _NEG_RE.finditer(s))
        toks = [(t.start(), _stem(t.group().lower().strip("`.-/"))) for t in _TOKEN.finditer(s)]
        out.append((s, negs, tuple((pos, w) for pos, w in toks if w and w not in _STOP)))
    return tuple(out)


def values(m: Memory) -> dict[str, str]:
    """The names ``m`` gives one value each (lower-cased name → value as written); names given two values left out."""
    return dict(_values(m.text))


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def _values(text: str) -> tuple[tuple[str, str], ...]:
    seen: dict[str, set[str]] = {}
    shown: dict[str, str] = {}
    for s in _sentences(text):
        for rx in (_ASSIGN, _VERBAL):
            for hit in rx.finditer(s):
                got = [g for g in hit.groups() if g is not None]
                name = got[0].strip("`").lower()
                value = got[1].strip().strip("`\"'").rstrip(".,")
                if name in _STOP or not value or name.startswith(("http", "www")):
                    continue
                num = _number(value)
                seen.setdefault(name, set()).add(value.lower() if num is None else f"{num[1]:g} {num[2]}")
                shown.setdefault(name, value)
    return tuple((n, shown[n]) for n, vs in seen.items() if len(vs) == 1)


def _differ(v1: str, v2: str) -> bool:
    """Whether two values of one name disagree: numbers by magnitude (times in seconds; a bare number against a
    time agrees when it is equal as written or as seconds; units of different kinds are not compared), anything
    else as lower-cased text."""
    n1, n2 = _number(v1), _number(v2)
    if n1 is not None and n2 is not None:
        if n1[2] and n2[2]:
            return n1[2] == n2[2] and n1[1] != n2[1]
        if "time" in (n1[2], n2[2]):  # "timeout = 60" and "1 minute": a bare number may be seconds
            return n1[0] != n2[0] and n1[1] != n2[1]
        return n1[0] != n2[0]
    return v1.lower() != v2.lower()


def uses(m: Memory) -> tuple[dict[tuple[str, ...], str], set[str], set[str]]:
    """What ``m`` says to use: ({slot (first two content words after for/to/when/in/as): what}, what it says to use
    instead of something, what it says to use anything instead of)."""
    slots, used, instead_of = _uses(m.text)
    return dict(slots), set(used), set(instead_of)


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def _uses(text: str) -> tuple[tuple[tuple[tuple[str, ...], str], ...], frozenset[str], frozenset[str]]:
    slots: dict[tuple[str, ...], str] = {}
    used: set[str] = set()
    instead_of: set[str] = set()
    for s in _sentences(text):
        if _NEG_RE.search(s[: s.find("use ")] if "use " in s else s):
            continue  # "never use X for Y" is the negation rule's
        for hit in _USE.finditer(s):
            what = " ".join(_content(hit.group(1)))
            if hit.group(3):
                instead_of.add(" ".join(_content(hit.group(3))))
                used.add(what)
                continue
            slot = tuple(_content(hit.group(2))[:2])
            if what and len(slot) == 2:
                slots.setdefault(slot, what)
                used.add(what)
        hit2 = _USE_END.search(s)
        if hit2:
            used.add(" ".join(_content(hit2.group(1))))
    return tuple(slots.items()), frozenset(used), frozenset(instead_of)


def contradiction(a: Memory, b: Memory, *, any_type: bool = False) -> Contradiction | None:
    """Whether ``a`` and ``b`` disagree by the rules (module docstring), the first rule that fires; None when
    one is not of ``RULE_TYPES`` (unless ``any_type``: what keeps two memories from being merged) or no rule
    fires. Being on the same code is the caller's test (``same_code``)."""
    if not any_type and (a.type not in RULE_TYPES or b.type not in RULE_TYPES):
        return None
    for x, y in ((a, b), (b, a)):
        for phrase, said in negated_phrases(x):
            other = _states(y, phrase)
            if other is not None:
                return Contradiction("negation", f"{x.id}: \"{_clip(said)}\" — {y.id}: \"{_clip(other)}\"")
    va, vb = values(a), values(b)
    for name in sorted(va.keys() & vb.keys()):
        if _differ(va[name], vb[name]):
            return Contradiction("value", f"{name}: {va[name]} ({a.id}) vs {vb[name]} ({b.id})")
    (sa, ua, ia), (sb, ub, ib) = uses(a), uses(b)
    for slot in sorted(sa.keys() & sb.keys()):
        if sa[slot] != sb[slot]:
            return Contradiction("use", f"use {sa[slot]} ({a.id}) vs use {sb[slot]} ({b.id}) "
                                        f"for \"{' '.join(slot)}\"")
    for x_id, instead, y_id, used in ((a.id, ia, b.id, ub), (b.id, ib, a.id, ua)):
        clash = sorted(instead & used)
        if clash:
            return Contradiction("use", f"{x_id} says not {clash[0]} (instead of), {y_id} says use {clash[0]}")
    return None


def _clip(text: str, n: int = 90) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"
