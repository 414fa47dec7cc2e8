"""Stop words: which terms of a prompt carry no content, in the languages prompts come in.

Owns: the stop-word data (``resources/stopwords.json``: the per-language lists of the ``stop-words``
package on PyPI, 33 languages, English narrowed by the ``stopwords`` package (``generate``), as
``textsplit.query_terms`` splits them), the guess of a prompt's
language by its stop words, the coding-request words (``REQUEST_WORDS``), and ``content_terms``: a
text's search terms without any of them. The prompt hook searches with content terms only, so a
prompt that shares only "the" or "de" with a memory matches nothing.

Regenerate the data (after upgrading ``stop-words`` or ``stopwords``, which the ``test`` extra installs)::

    python -m gitmem.stopwords            # rewrites gitmem/resources/stopwords.json
    python -m gitmem.stopwords --check    # exit 1 when the file differs from what it would write

``tests/test_relevance.py`` runs the check, so a stale file fails the tests.

Why a language guess and not the union of every list: the lists share words that are content words in
another language (German and Dutch ``die``, Dutch ``door``, Swedish ``men``, Spanish ``con``, German
``bin``). A prompt's language is the one whose list holds most of its terms (stop-word counting,
Grefenstette 1995, "Comparing two language identification schemes"); only the stop words of that
language (all tied ones) are dropped, so "why does the worker die" keeps ``die`` and "warum stirbt der
Prozess, wenn die Datei fehlt" drops it.

Guarantees: deterministic; the data is read once per process, by the prompt hook only (one JSON file,
~100 KB, ~2 ms).
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
#: The PyPI packages the data is generated from (``python -m gitmem.stopwords``): ``stop-words`` for every
#: language, ``stopwords`` to keep only its English words that ``stop-words`` lists too (``generate``).
SOURCE_PACKAGES = ("stop-words", "stopwords")
ENGLISH = "en"
#: The languages of ``is_stop`` for a word of code (an identifier an error message quotes): English.
ENGLISH_ONLY = frozenset({ENGLISH})
#: Words of requests to a coding agent that name no subject of the code base: every prompt may hold them
#: ("explain the code", "please help me look at this"), in English (the language of code) and, for the words
#: of "explain the code / the function, please, help, thanks", in French, German, Spanish, Italian and
#: Portuguese (shared forms listed once); dropped whatever the prompt's language. Small on purpose (measured:
#: dropping "show", "make", "look", "need" too cost ``bench/retrieval.py``'s hook 0.015 of recall@10): a
#: word that names a subject (``test``, ``cache``, ``login``) is left to the score floor (``rank.relevance``),
#: whose IDF weighs how common it is.
REQUEST_WORDS = frozenset({
    "code", "explain", "explained", "explaining", "please", "pls", "thanks", "thank", "hello", "hi", "hey",
    "help", "ok", "okay", "yes", "works", "worked",
    # "the function": this code, whichever it is (a prompt naming one names it: ``rank.mentions``)
    "function", "functions", "fonction", "fonctions", "funktion", "funktionen", "función", "funcion",
    "funciones", "funzione", "funzioni", "função", "funcao",
    # fr
    "explique", "expliquer", "expliquez", "merci", "aide", "aider", "aidez", "bonjour", "stp", "svp", "plaît",
    # de
    "erkläre", "erklär", "erklären", "erklärt", "bitte", "danke", "hilfe", "helfen", "hallo",
    # es
    "explica", "explicar", "explícame", "explicame", "código", "codigo", "gracias", "ayuda", "ayudar",
    "ayúdame", "ayudame", "favor", "hola",
    # it
    "spiega", "spiegare", "spiegami", "codice", "grazie", "aiuto", "aiutami", "ciao",
    # pt
    "obrigado", "obrigada", "ajuda", "ajudar", "olá",
})
#: ASCII terms shorter than this are no content (``s`` and ``t`` of "it's", "don't"; a lone digit or
#: letter); other scripts keep their single characters (one Chinese character can be a word).
MIN_ASCII_TERM_CHARS = 2

_by_word: dict[str, str] | None = None


def _load() -> dict[str, str]:
    """term → the languages whose stop-word list holds it, space-separated (``"de nl"``): the data file's
    ``words``, read once (one ``json.load``: ~2 ms; no per-word work at load). ``{}`` when the data cannot be
    read, so a broken install searches with every term rather than failing a hook."""
    global _by_word
    if _by_word is None:
        try:
            with open(DATA_FILE, "rb") as f:
                words = json.load(f)["words"]
            _by_word = words if isinstance(words, dict) else {}
        except (OSError, ValueError, KeyError, TypeError):
            _by_word = {}
    return _by_word


def languages(terms: Iterable[str]) -> frozenset[str]:
    """The languages (ISO 639-1 codes, as the data names them) whose stop words are most of ``terms``
    (lower-cased ``query_terms``): those tied at the highest count; empty when no term is a stop word."""
    by = _load()
    counts: dict[str, int] = {}
    for t in terms:
        for lang in by.get(t, "").split():
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
    return any(lang in langs for lang in _load().get(term, "").split())


def content_terms(text: str) -> list[str]:
    """The content terms of ``text``: ``textsplit.query_terms`` (lower-cased, identifiers split, distinct,
    first occurrence first) without the stop words of the text's language (``languages``), the request
    words and one-letter ASCII terms. ``[]`` when nothing is left ("explain the code", "et alors ?")."""
    terms = query_terms(text)
    langs = languages(terms)
    return [t for t in terms if not is_stop(t, langs)]


# -- the data file ----------------------------------------------------------------------------------------------


def generate() -> dict[str, object]:
    """The data file's content from the installed ``stop-words`` and ``stopwords`` packages: ``{"source",
    "words": {term: "the ISO 639-1 codes of the languages listing it, space-separated"}}``.

    Every language of ``stop-words`` (the most used of the two, 33 languages); for English only the words both
    packages list: ``stop-words``' English list (1,300 words) holds content words of programming (``fix``,
    ``http``, ``copy``, ``date``, ``computer``), ``stopwords``' (Snowball's 175) does not. Each list word is split
    as ``query_terms`` splits text (``aren't`` → ``aren``, ``t``), so a term of a prompt is looked up as it is
    searched.

    Raises:
        ImportError: a package is not installed (``pip install stop-words stopwords``: the ``test`` extra).
    """
    import importlib.metadata

    import stop_words as main_package  # type: ignore[import-untyped]  # no type information shipped
    import stopwords as snowball  # type: ignore[import-untyped]

    def split(words: Iterable[str]) -> set[str]:
        return {t for w in words for t in query_terms(w)}

    by_word: dict[str, set[str]] = {}
    for code in sorted(main_package.LANGUAGE_MAPPING):
        terms = split(main_package.get_stop_words(code, cache=False))
        if code == ENGLISH:
            terms &= split(snowball.get_stopwords(ENGLISH))
        for t in terms:
            by_word.setdefault(t, set()).add(code)
    versions = ", ".join(f"{p} {importlib.metadata.version(p)}" for p in SOURCE_PACKAGES)
    return {"source": f"{versions} (PyPI), regenerated by python -m gitmem.stopwords",
            "words": {w: " ".join(sorted(langs)) for w, langs in sorted(by_word.items())}}


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
