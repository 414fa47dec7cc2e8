"""What a failed tool call names: the salient terms of its error, for the after-failure hook (``core``).

Owns: the failure's text (``failure_text``: the agent's error message and the tool's output) and its
salient terms (``failure_terms``): exception names (``KeyError``, ``pkg.errors.TimeoutExceeded``; not
the generic ones, ``GENERIC_EXCEPTIONS``), the names an exception's message quotes (``KeyError:
'user_id'``, ``cannot import name 'parse_dates'``), test ids (``tests/test_a.py::TestX::test_b``, in
the output or the command), error codes (``E501``, ``TS2345``, ``ERR_REQUIRE_ESM``, ``ENOENT``), and
the frames of a Python traceback (``File "src/x.py", line 3, in parse``). Never the whole output: a
term is something a memory about this failure would name, so that a generic failure (``exit code
1``, an assertion without names) has none and gets nothing.

Must not import: anything outside the standard library (it runs after every failed tool call).
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from .events import AfterToolFailure

#: Characters of a failure's text read (its first and last halves: an error's head and tail hold the names).
MAX_TEXT_CHARS = 20_000
#: Exception names every failure of a kind has: they say nothing about which failure it is.
GENERIC_EXCEPTIONS = frozenset({"Exception", "Error", "BaseException", "AssertionError", "RuntimeError",
                                "SystemExit", "CalledProcessError", "ExceptionGroup", "BaseExceptionGroup",
                                "KeyboardInterrupt", "Failure", "Failed", "TypeError", "ValueError"})
#: errno names (POSIX): an error code as specific as a number.
ERRNO = frozenset({"ENOENT", "EACCES", "EPERM", "EEXIST", "ECONNREFUSED", "ECONNRESET", "EADDRINUSE", "ETIMEDOUT",
                   "ENOSPC", "EPIPE", "EBUSY", "EISDIR", "ENOTDIR", "EMFILE", "ENOTEMPTY", "EAGAIN", "EINVAL"})
#: Most terms and frames kept per failure.
MAX_TERMS = 12
MAX_FRAMES = 12

_EXCEPTION = re.compile(r"\b((?:[A-Za-z_]\w*\.)*([A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault|Warning"
                        r"|Exceeded|Timeout)))\b")
#: ``Name: message`` lines of an exception (its message quotes the names that matter).
_EXCEPTION_LINE = re.compile(r"^\s*(?:E\s+)?(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Failure|Fault"
                             r"|Exceeded|Timeout)\b:?\s*(.*)$", re.M)
_QUOTED = re.compile(r"""['"`]([A-Za-z_][\w.:/-]{2,80})['"`]""")
#: A test id (``path.py::Test::name``). The lookbehind starts a match only where a run of path characters
#: starts: without it every position inside a long run is tried, quadratic in the run (a 50k-character
#: command took 3.9 s).
_TEST_ID = re.compile(r"(?<![\w./-])([\w./-]+\.\w{1,5})::([\w.:\[\]-]+)")
_FRAME = re.compile(r'File "([^"]+)", line \d+, in ([A-Za-z_]\w*)')
_CODE = re.compile(r"\b([A-Z]{1,4}\d{3,5}|ERR_[A-Z0-9_]{3,}|E[A-Z]{3,11})\b")


def is_stop_word(word: str) -> bool:
    """Whether a quoted name of an error message is an English stop word (``'the'``, ``'which'``: code names
    things in English; ``stopwords``), which the full-text search would match in most memories."""
    from ... import stopwords

    return stopwords.is_stop(word.lower(), stopwords.ENGLISH_ONLY)


def failure_text(event: AfterToolFailure) -> str:
    """The failure's text: the agent's error, then the tool's ``stderr`` / ``stdout`` / ``output`` when it kept
    them (``AfterTool.response``); cut to its first and last ``MAX_TEXT_CHARS`` / 2 characters."""
    parts = [event.error]
    r = event.response
    if isinstance(r, dict):
        parts.extend(v for k in ("stderr", "stdout", "output") if isinstance(v := r.get(k), str))
    elif isinstance(r, str):
        parts.append(r)
    text = "\n".join(p for p in parts if p)
    half = MAX_TEXT_CHARS // 2
    return text if len(text) <= MAX_TEXT_CHARS else text[:half] + "\n" + text[-half:]


def _test_names(rest: str) -> str | None:
    """``TestX::test_b[1]`` → ``TestX.test_b``."""
    names = [n.split("[", 1)[0] for n in rest.split("::") if n]
    return ".".join(n for n in names if n) or None


def failure_terms(text: str, command: str = "") -> tuple[list[str], list[tuple[str, str | None]]]:
    """(the distinctive terms of a failure's ``text``, the (path, qualified name) places it names) — see the
    module docstring; ``command``: the failed shell command, whose test ids count too. Both without
    repeats, at most ``MAX_TERMS`` / ``MAX_FRAMES``."""
    terms: list[str] = []
    frames: list[tuple[str, str | None]] = []

    def term(t: str) -> None:
        if t and t not in terms and len(terms) < MAX_TERMS:
            terms.append(t)

    def frame(path: str, name: str | None) -> None:
        if (path, name) not in frames and len(frames) < MAX_FRAMES:
            frames.append((path, name))

    if isinstance(text, str) and text.startswith("{"):
        try:  # Gemini CLI's error object
            text = " ".join(str(v) for v in json.loads(text).values())
        except (ValueError, AttributeError):
            pass
    half = MAX_TEXT_CHARS // 2
    if len(command) > MAX_TEXT_CHARS:  # as the text (``failure_text``): its first and last characters
        command = command[:half] + "\n" + command[-half:]
    for source in (command, text):
        for m in _TEST_ID.finditer(source):
            names = _test_names(m.group(2))
            frame(m.group(1), names)
            if names:
                term(names.rsplit(".", 1)[-1])
    for _full, leaf in _EXCEPTION.findall(text):
        if leaf not in GENERIC_EXCEPTIONS:
            term(leaf)
    for m in _EXCEPTION_LINE.finditer(text):
        for q in _QUOTED.findall(m.group(1)):
            if not is_stop_word(q):  # ``KeyError: 'the'`` names nothing a memory would be about
                term(q.strip(".:/"))
    for code in _CODE.findall(text):
        if not code.startswith("E") or code[1:].isdigit() or code in ERRNO or code.startswith("ERR_") \
                or any(c.isdigit() for c in code):
            term(code)
    for path, func in _FRAME.findall(text):
        frame(path, None if func.startswith("<") else func)
    return terms, frames
