"""Stop words: which terms of a prompt carry no content, in the languages prompts come in.

Owns: the stop-word data (``resources/stopwords.json``: the per-language lists of the ``stopwords``
package on PyPI, 42 languages, as ``textsplit.query_terms`` splits them), the guess of a prompt's
language by its stop words, the coding-request words (``REQUEST_WORDS``), and ``content_terms``: a
text's search terms without any of them. The prompt hook searches with content terms only, so a
prompt that shares only "the" or "de" with a memory matches nothing.

Regenerate the data (after upgrading the ``stopwords`` package, which the ``test`` extra installs)::

    python -m gitmem.stopwords            # rewrites gitmem/resources/stopwords.json
    python -m gitmem.stopwords --check    # exit 1 when the file differs from what it would write

``tests/test_relevance.py`` runs the check, so a stale file fails the tests.

Why a language guess and not the union of every list: the lists share words that are content words in
another language (German and Dutch ``die``, Dutch ``door``, Swedish ``men``, Spanish ``con``, German
``bin``). A prompt's language is the one whose list holds most of its terms (stop-word counting,
Grefenstette 1995, "Comparing two language identification schemes"); only the stop words of that
language (all tied ones) are dropped, so "why does the worker die" keeps ``die`` and "warum stirbt der
Prozess, wenn die Datei fehlt" drops it.

Guarantees: deterministic; the data is read once per process (one JSON file, ~50 KB).
Must not import: anything outside the standard library (the prompt hook imports it).
"""

from __future__ import annotations

import json
import os
import sys

from .textsplit import query_terms

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from collections.abc import Iterable

#: The data file, beside this module.
DATA_FILE = os.path.join(os.path.dirname(__file__), "resources", "stopwords.json")
#: The PyPI package the data is generated from (``python -m gitmem.stopwords``).
SOURCE_PACKAGE = "stopwords"
#: Words of requests to a coding agent that name no subject of the code base: every prompt may hold them
#: ("explain the code", "please help me look at this"). English, the language of agents' prompts and of
#: code; dropped whatever the prompt's language. Small on purpose: a word that names a subject (``test``,
#: ``cache``, ``login``) is left to the score floor (``rank.relevance``), whose IDF weighs how common it is.
REQUEST_WORDS = frozenset({
    "code", "explain", "explained", "explaining", "please", "pls", "thanks", "thank", "hello", "hi", "hey",
    "help", "tell", "show", "want", "need", "like", "know", "think", "look", "let", "make", "ok", "okay", "yes",
    "thing", "things", "something", "anything", "stuff", "works", "worked",
})
#: ASCII terms shorter than this are no content (``s`` and ``t`` of "it's", "don't"; a lone digit or
#: letter); other scripts keep their single characters (one Chinese character can be a word).
MIN_ASCII_TERM_CHARS = 2

_by_word: dict[str, frozenset[str]] | None = None


def _load() -> dict[str, frozenset[str]]:
    """term → the languages whose stop-word list holds it (read once; ``{}`` when the data cannot be read,
    so a broken install searches with every term rather than failing a hook)."""
    global _by_word
    if _by_word is None:
        try:
            with open(DATA_FILE, "rb") as f:
                data = json.load(f)
            langs: dict[str, list[str]] = data["languages"]
            by: dict[str, set[str]] = {}
            for lang, words in langs.items():
                for w in words:
                    by.setdefault(w, set()).add(lang)
            _by_word = {w: frozenset(ls) for w, ls in by.items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            _by_word = {}
    return _by_word


def languages(terms: Iterable[str]) -> frozenset[str]:
    """The languages (ISO 639-1 codes, as the data names them) whose stop words are most of ``terms``
    (lower-cased ``query_terms``): those tied at the highest count; empty when no term is a stop word."""
    by = _load()
    counts: dict[str, int] = {}
    for t in terms:
        for lang in by.get(t, ()):
            counts[lang] = counts.get(lang, 0) + 1
    if not counts:
        return frozenset()
    best = max(counts.values())
    return frozenset(lang for lang, n in counts.items() if n == best)


def is_stop(term: str, langs: frozenset[str]) -> bool:
    """Whether ``term`` (lower-cased) carries no content in a prompt of ``langs`` (``languages``): a stop word
    of one of them, a ``REQUEST_WORDS`` word, or an ASCII term shorter than ``MIN_ASCII_TERM_CHARS``."""
    if term in REQUEST_WORDS or (term.isascii() and len(term) < MIN_ASCII_TERM_CHARS):
        return True
    return bool(_load().get(term, frozenset()) & langs)


def content_terms(text: str) -> list[str]:
    """The content terms of ``text``: ``textsplit.query_terms`` (lower-cased, identifiers split, distinct,
    first occurrence first) without the stop words of the text's language (``languages``), the request
    words and one-letter ASCII terms. ``[]`` when nothing is left ("explain the code", "et alors ?")."""
    terms = query_terms(text)
    langs = languages(terms)
    return [t for t in terms if not is_stop(t, langs)]


# -- the data file ----------------------------------------------------------------------------------------------


def generate() -> dict[str, object]:
    """The data file's content from the installed ``stopwords`` package: ``{"source", "languages": {code:
    [terms, sorted]}}``, each list word split as ``query_terms`` splits text (``aren't`` → ``aren``, ``t``),
    so a term of a prompt is looked up as it is searched.

    Raises:
        ImportError: the ``stopwords`` package is not installed (``pip install stopwords``).
    """
    import importlib.metadata

    import stopwords as package  # type: ignore[import-untyped]  # no type information shipped

    out: dict[str, list[str]] = {}
    for code, name in sorted(package.LANGUAGE_MAPPING.items()):
        terms: set[str] = set()
        for word in package.get_stopwords(name):
            terms.update(query_terms(word))
        if terms:
            out[code] = sorted(terms)
    version = importlib.metadata.version(SOURCE_PACKAGE)
    return {"source": f"{SOURCE_PACKAGE} {version} (PyPI), regenerated by python -m gitmem.stopwords",
            "languages": out}


def _serialise(data: dict[str, object]) -> bytes:
    return (json.dumps(data, ensure_ascii=False, indent=0, sort_keys=True) + "\n").encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    """``python -m gitmem.stopwords [--check]``: write ``DATA_FILE`` from the ``stopwords`` package, or with
    ``--check`` exit 1 (saying so) when the file differs from what would be written."""
    args = sys.argv[1:] if argv is None else argv
    want = _serialise(generate())
    if "--check" in args:
        try:
            with open(DATA_FILE, "rb") as f:
                have = f.read()
        except OSError:
            have = b""
        if have != want:
            print(f"{DATA_FILE} is out of date: run python -m gitmem.stopwords", file=sys.stderr)
            return 1
        return 0
    with open(DATA_FILE, "wb") as f:
        f.write(want)
    print(f"wrote {DATA_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
