"""Property-based tests (hypothesis): memory files round-trip; fingerprints see code, not formatting.

Memory files: any memory either writes to a file that reads back as the same memory (after the
documented normalisation: lone surrogates -> U+FFFD, CR/CRLF -> LF, no NUL, trailing spaces of body
lines, titles on one line) and writes again byte-for-byte, or is refused with a one-line error.

Fingerprints: programs are generated from templates in Python, JavaScript, TypeScript, Go, Rust and
Java with hypothesis choosing names, literals and layout. Layout (whitespace, blank lines, line
breaks inside brackets, indentation in brace languages) and comments / docstrings leave the
fingerprint alone; renaming an identifier, changing a literal or an operator in the body changes it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from gitmem import memfile
from gitmem.code.symbols import extract_symbols, file_fingerprint
from gitmem.errors import MemoryFileError
from gitmem.model import KIND_COMMIT, KIND_FILE, Anchor, Memory

# --------------------------------------------------------------------------- memory files

_FRAGMENTS = ["---", "\n---\n", "---\n", " ---", "--- x", "...", "\n...\n", " lead", "trail ", "\t", "\ttab\t",
              "\r\n", "\r", "\n\n", "  \n  ", "- a", "? k", ": v", "k: v", "#c", " #c", "null", "~", "yes", "no",
              "on", "'", '"', "''", "&a", "*a", "!x", "!!python/object:os.system", "%YAML 1.1", "@", "`", "|",
              ">", "{a: 1}", "[1, 2]", "0x1F", "1e3", "0123", "2020-01-01", "2026-11-30T17:22:49Z", "\x85",
              "\u2028", "\u2029", "\ufeff", "\udcff", "\ud83d", "\0", "\x07", "\x1b[31m", "🚀", "👩‍💻", "é", "e\u0301",
              "\u202e", "日本語", "<<<<<<< HEAD", ">>>>>>> b", "=======", "<private>x</private>", "x" * 3000]
_fragment = (st.sampled_from(_FRAGMENTS)
             | st.text(st.characters(codec=None), max_size=12)  # any code point, lone surrogates included
             | st.text(st.characters(categories=["Cc", "Cf", "Zs", "Zl", "Zp", "So"]), max_size=4))
text = st.lists(_fragment, max_size=6).map("".join)

SHA = st.text("0123456789abcdef", min_size=40, max_size=40) | st.text("0123456789abcdef", min_size=64, max_size=64)
_path = st.from_regex(r"[a-z_][a-z0-9_. -]{0,8}(/[a-zA-Z0-9_][a-zA-Z0-9_.@+ -]{0,8}){0,2}\.(py|go|ts|md)",
                      fullmatch=True)
_ident = r"[A-Za-z_$][A-Za-z0-9_$]{0,6}"
_symbol = st.from_regex(rf"{_ident}(\.{_ident}){{0,2}}(#[2-9])?", fullmatch=True)
_fingerprint = st.from_regex(r"(ts1|raw1):[0-9a-f]{32}", fullmatch=True)
symbol_anchor = st.builds(Anchor, path=_path, symbol=_symbol, commit=st.none() | SHA,
                          kind=st.sampled_from(["function", "method", "class", "struct", "property"]),
                          span=st.none() | st.tuples(st.integers(1, 10**6), st.integers(1, 10**6)),
                          fingerprint=st.none() | _fingerprint)
file_anchor = st.builds(Anchor, path=_path, commit=st.none() | SHA, kind=st.just(KIND_FILE),
                        fingerprint=st.none() | _fingerprint)
commit_anchor = st.builds(Anchor, path=st.none(), commit=SHA, kind=st.just(KIND_COMMIT))
anchor = symbol_anchor | file_anchor | commit_anchor

memory = st.builds(
    Memory, id=st.from_regex(r"[0-9A-HJKMNP-TV-Z]{26}|[a-z][a-z0-9_-]{0,20}", fullmatch=True),
    type=st.sampled_from(["decision", "gotcha", "constraint", "todo"]), title=text, body=text,
    facts=st.lists(text, max_size=4), tags=st.lists(text, max_size=4),
    anchors=st.lists(anchor, max_size=3, unique_by=lambda a: a.key), author=text,
    source=st.sampled_from(["user", "agent", "llm", "commit"]), session=st.none() | text, model=st.none() | text,
    confidence=st.floats(0, 1), created=text, updated=text, supersedes=st.lists(text, max_size=2),
    superseded_by=st.lists(text, max_size=2), retired=st.none() | text, invariant=st.booleans(),
    scope=st.sampled_from(["team", "local"]))

# The examples are derandomized (a fixed seed): CI must not turn red on a generator edge case found by
# chance. A random run once produced a Rust variant that does not parse (`if e<0{` … `/* Īį */`): the
# generator (its Rust template), not gitmem; the test rejects such a variant as "does not parse". To explore
# new examples, drop derandomize=True locally.


def _clean(s: str) -> str:
    """The documented cleaning of stored text: lone surrogates -> U+FFFD, CR/CRLF -> LF, no NUL."""
    s = re.sub("[\ud800-\udfff]", "\ufffd", s)
    return s.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "")


def _line(s: str) -> str:
    """The documented one-line form of the fields gitmem shows on its own lines (author, session, model, tags):
    each run of line breaks and control characters a space, ends stripped."""
    return re.sub("[\x00-\x1f\x7f-\x9f\u2028\u2029]+", " ", _clean(s)).strip()


def _normalised(m: Memory) -> Memory:
    """What ``m`` must read back as: the contract of memfile, written independently of it."""
    def opt(s: str | None) -> str | None:
        return _clean(s) or None if s is not None else None

    def opt_line(s: str | None) -> str | None:
        return _line(s) or None if s is not None else None

    facts = [f for f in (_clean(f).strip() for f in m.facts) if f]
    anchors = [Anchor(path=a.path, symbol=a.symbol, commit=a.commit, kind=a.kind,
                      span=a.span, fingerprint=a.fingerprint or None) if a.kind != KIND_COMMIT
               else Anchor(path=None, commit=a.commit, kind=KIND_COMMIT) for a in m.anchors]
    return Memory(
        id=m.id, type=m.type, title=_clean(m.title).replace("\n", " ").strip(),
        body="\n".join(line.rstrip() for line in _clean(m.body).split("\n")).strip("\n"),
        facts=facts, tags=sorted({t for t in (_line(t) for t in m.tags) if t}), anchors=anchors,
        author=_line(m.author), source=m.source, session=opt_line(m.session), model=opt_line(m.model),
        confidence=m.confidence, created=_clean(m.created), updated=_clean(m.updated),
        supersedes=sorted({_clean(s) for s in m.supersedes}),
        superseded_by=sorted({_clean(s) for s in m.superseded_by}),
        retired=opt(m.retired), invariant=m.invariant, scope=m.scope)


def _one_line(e: MemoryFileError) -> None:
    assert str(e) and "\n" not in str(e)


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(memory)
@example(Memory(id="01JD3V6Q4W8N5X2Y7Z9A0B1C2D", type="decision", title="x", tags=["\0"], facts=["\0", " "]))
@example(Memory(id="01JD3V6Q4W8N5X2Y7Z9A0B1C2D", type="decision", title="x", body="line  \n  \n",
                session="\udcff", model="m\ud83d", retired="\ud800", supersedes=["\udcff"]))
def test_memory_file_survives_write_read_write(m: Memory) -> None:
    want = _normalised(m)
    try:
        text = memfile.dumps(m)
    except MemoryFileError as e:  # refused: only when the memory cannot make a valid file
        _one_line(e)
        assert not want.title, f"refused a writable memory: {e}"
        return
    assert want.title, "wrote a memory with an empty title (the reader refuses it)"
    data = text.encode("utf-8")  # never a lone surrogate
    back = memfile.parse_bytes(data, Path(f"{m.id}.md"))
    assert back == want
    assert memfile.dumps(back) == text
    assert text.endswith("\n") and not text.endswith("\n\n") and "\r" not in text and "\0" not in text


# An anchor the user or a rename can produce: any path, any symbol name.
_hostile_anchor = st.builds(
    Anchor, path=st.text(st.characters(codec=None), min_size=1, max_size=12) | _path.map(lambda p: "a::" + p),
    symbol=st.none() | st.text(st.characters(codec=None), max_size=8), commit=st.none() | SHA,
    kind=st.sampled_from(["function", KIND_FILE]), fingerprint=st.none() | _fingerprint)


@settings(max_examples=100, derandomize=True, deadline=None)
@given(st.lists(_hostile_anchor, min_size=1, max_size=2))
@example([Anchor(path="a::b.py", kind=KIND_FILE)])
@example([Anchor(path="../etc/passwd", kind=KIND_FILE)])
@example([Anchor(path="src/\udcff.py", kind=KIND_FILE)])
def test_an_anchor_is_written_as_it_is_or_refused(anchors: list[Anchor]) -> None:
    m = Memory(id="01JD3V6Q4W8N5X2Y7Z9A0B1C2D", type="decision", title="t", anchors=anchors)
    try:
        text = memfile.dumps(m)
    except MemoryFileError as e:
        _one_line(e)
        return
    back = memfile.loads(text)
    assert [(a.path, a.symbol or None, a.commit) for a in back.anchors] == \
        [(a.path, a.symbol or None, a.commit) for a in anchors]
    assert memfile.dumps(back) == text


@pytest.mark.parametrize("bad, needle", [
    (dict(title=" \0\r\n "), "'title'"),
    (dict(type="wish"), "unknown type"),
    (dict(confidence=float("nan")), "confidence"),
    (dict(confidence=2.0), "confidence"),
    (dict(id="../x"), "invalid id"),
    (dict(anchors=[Anchor(path="/etc/passwd", kind=KIND_FILE)]), "outside the repository"),
    (dict(anchors=[Anchor(path=None, commit="HEAD", kind=KIND_COMMIT)]), "SHA"),
])
def test_writer_refuses_what_the_reader_would_refuse(bad: dict, needle: str) -> None:
    m = Memory(**{**dict(id="01JD3V6Q4W8N5X2Y7Z9A0B1C2D", type="decision", title="t"), **bad})
    with pytest.raises(MemoryFileError) as e:
        memfile.dumps(m)
    assert needle in str(e.value) and "\n" not in str(e.value)


# Hand-made files: the same data laid out as a person (or another YAML library) might write it.
_hand_style = st.fixed_dictionaries({
    "flow": st.sampled_from([None, True, False]), "width": st.sampled_from([20, 80, 100_000]),
    "indent": st.sampled_from([2, 4]), "unicode": st.booleans(), "crlf": st.booleans(), "bom": st.booleans(),
    "body_prefix": st.sampled_from(["", "\n", "\n\n  \n"]),
    "body_suffix": st.sampled_from(["", "\n", "   \n\n", "\n\t\n"]), "comment": st.booleans(),
    "bare_time": st.booleans(), "string_anchor": st.booleans(),
})


@settings(max_examples=120, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(memory, _hand_style)
def test_hand_made_file_is_stable_after_one_normalisation(m: Memory, style: dict) -> None:
    try:
        fm = memfile.to_front_matter(m)
    except MemoryFileError:
        assume(False)
    if style["bare_time"]:
        fm["created"] = "2026-11-30T17:22:49Z"  # dumped quoted below unless the YAML is edited by hand
    if style["string_anchor"]:  # `- src/a.py::f` is accepted as shorthand for `- anchor: src/a.py::f`
        fm["anchors"] = [a["anchor"] for a in fm.get("anchors", [])]
        fm = {k: v for k, v in fm.items() if v != []}
    front = yaml.safe_dump(fm, default_flow_style=style["flow"], width=style["width"], indent=style["indent"],
                           allow_unicode=style["unicode"], sort_keys=False)
    if style["bare_time"]:
        # YAML reads a timestamp
        front = front.replace("created: '2026-11-30T17:22:49Z'", "created: 2026-11-30T17:22:49Z")
    if style["comment"]:
        front = "# written by hand\n" + front
    body = _clean(m.body)
    raw = f"---\n{front}---\n{style['body_prefix']}{body}{style['body_suffix']}"
    if style["crlf"]:
        raw = raw.replace("\n", "\r\n")
    if style["bom"]:
        raw = "\ufeff" + raw
    try:
        first = memfile.loads(raw)
    except MemoryFileError as e:
        # Only a body that itself looks like the end of the front matter may be refused.
        _one_line(e)
        pytest.fail(f"hand-made file refused: {e}\n{raw!r}")
    once = memfile.dumps(first)
    again = memfile.loads(once)
    assert memfile.dumps(again) == once
    assert again == _normalised(first), "the normalised file says something else than the hand-made one"
    said = yaml.safe_load(front)  # what the hand-made YAML says (a short width may fold odd line breaks)
    assert again.title == _clean(said["title"]).replace("\n", " ").strip()
    assert again.facts == [f for f in (_clean(f).strip() for f in said.get("facts", [])) if f]
    assert again.tags == sorted({t for t in (_line(t) for t in said.get("tags", [])) if t})
    assert [a.key for a in again.anchors] == [a.key for a in m.anchors]


# --------------------------------------------------------------------------- fingerprints

# Templates: ``$NAME`` placeholders, and layout markers the renderer fills in:
#   ·  optional space          ␣  required space           ↵  optional line break inside brackets
#   ¶  statement line break    →/←  one level deeper / shallower (before a ¶)
#   ✎  end-of-line comment     ；  statement `;` (JS and Go may leave it out before a line break)
#   ⸴  optional trailing comma before a closing bracket (Go: comma then line break, or nothing)
#   ⦅⦆ optional parentheses around a whole assigned / returned value (Python, JS, TS formatters add them)
#   📄 optional docstring (Python)
_BODY = frozenset({"X", "G", "N1", "N2", "OP", "CMP", "S"})
#: case id -> (language, file name, qualified symbol name, template, placeholders only in the symbol's body)
TEMPLATES = {
    "python": ("python", "m.py", "$F",
               "📄import␣os✎¶¶def␣$F(↵$A,↵·$B⸴↵)·->·int:→¶📄$X·=·⦅$A·$OP·$N1⦆✎¶"
               "if␣⦅$X·$CMP·$N2⦆:→¶return␣$G(↵$X,↵·$B,↵·$S⸴↵)✎←¶return␣⦅$X⦆✎←¶", _BODY),
    "python-method": ("python", "m.py", "$K.$F",
                      "class␣$K:→¶📄@$D·(↵$N1↵)✎¶def␣$F(↵self,↵·$A⸴↵):→¶📄"
                      "return␣⦅$G(↵self.$B,↵·$A·$OP·$N2⸴↵)·$CMP·$S⦆✎←¶←¶", {"G", "B", "N2", "OP", "CMP", "S"}),
    "javascript": ("javascript", "m.js", "$F",
                   "import␣os␣from·'os'；¶function␣$F(↵$A,↵·$B⸴↵)·{→¶const␣$X·=·⦅$A·$OP·$N1⦆；✎¶"
                   "if·(↵$X·$CMP·$N2↵)·{→¶return␣$G(↵$X,↵·$B,↵·$S⸴↵)；✎←¶}✎¶return␣⦅$X⦆；✎←¶}¶", _BODY),
    "javascript-method": ("javascript", "m.js", "$K.$F",
                          "export␣class␣$K·{→¶$F(↵$A,↵·$B⸴↵)·{→¶const␣$X·=·⦅$G⦆·=>·$G·$OP·$N1；✎¶"
                          "return␣⦅$X(↵$B⸴↵)·$CMP·$N2⦆；✎←¶}✎←¶}¶", _BODY - {"S"}),
    "typescript": ("typescript", "m.ts", "$F",
                   "export␣function␣$F(↵$A:·number,↵·$B:·number⸴↵):·number·{→¶let␣$X·=·⦅$A·$OP·$N1⦆；✎¶"
                   "if·(↵$X·$CMP·$N2↵)·{→¶return␣$G(↵$X,↵·$B,↵·$S⸴↵)；✎←¶}✎¶return␣⦅$X⦆；✎←¶}¶", _BODY),
    "typescript-method": ("typescript", "m.ts", "$K.$F",
                          "class␣$K·{→¶@$D(↵$S↵)✎¶private␣$F(↵$A:·number,↵·$B:·string⸴↵):·boolean·{→¶"
                          "const␣$X·=·⦅$G⦆·=>·$G·$OP·$N1；✎¶return␣$X(↵$A⸴↵)·$CMP·$N2；✎←¶}✎←¶}¶",
                          _BODY - {"S"}),
    "go": ("go", "m.go", "$F",
           "package␣p✎¶¶func␣$F(↵$A␣int,↵·$B␣int⸴)·int·{→¶$X·:=·$A·$OP·$N1；✎¶"
           "if␣$X·$CMP·$N2·{→¶return␣$G(↵$X,↵·$B,↵·$S⸴)；✎←¶}✎¶return␣$X；✎←¶}¶", _BODY),
    "go-method": ("go", "m.go", "$K.$F",
                  "package␣p¶¶func·(↵$A␣*$K⸴)·$F(↵$B␣int⸴)·(↵bool,↵·error⸴)·{→¶"
                  "$X·:=·func(↵$G␣int⸴)·int·{·return␣$G·$OP·$N1·}；✎¶return␣$X(↵$B⸴)·$CMP·$N2,↵·nil；✎←¶}¶",
                  _BODY - {"S"}),
    "rust": ("rust", "m.rs", "$F",
             "fn␣$F(↵$A:·i32,↵·$B:·i32⸴↵)·->·i32·{→¶let␣$X·=·$A·$OP·$N1；✎¶"
             "if␣$X·$CMP·$N2·{→¶return␣$G(↵$X,↵·$B,↵·$S⸴↵)；✎←¶}✎¶$X✎←¶}¶", _BODY),
    "rust-method": ("rust", "m.rs", "$K.$F",
                    "impl␣$K·{→¶#[$D]✎¶pub␣fn␣$F(↵&self,↵·$A:·i32⸴↵)·->·bool·{→¶"
                    "let␣$X·=·|$G:·i32|·$G·$OP·$N1；✎¶$X(↵$A⸴↵)·$CMP·$N2✎←¶}✎←¶}¶", _BODY - {"S"}),
    "java": ("java", "M.java", "C.$F",
             "class␣C·{→¶int␣$F(↵int␣$A,↵·int␣$B↵)·{→¶int␣$X·=·$A·$OP·$N1；✎¶"
             "if·(↵$X·$CMP·$N2↵)·{→¶return␣$G(↵$X,↵·$B,↵·$S↵)；✎←¶}✎¶return␣$X；✎←¶}✎←¶}¶", _BODY),
    "java-method": ("java", "M.java", "$K.$F",
                    "class␣$K·{→¶@$D(↵$S↵)✎¶public␣boolean␣$F(↵int␣$A,↵·int␣$B↵)·{→¶"
                    "java.util.function.IntUnaryOperator␣$X·=·$G·->·$G·$OP·$N1；✎¶"
                    "return␣$X.applyAsInt(↵$A↵)·$CMP·$N2；✎←¶}✎←¶}¶", _BODY - {"S"}),
}
_KEYWORDS = set("""
and as assert async await break case catch chan class const continue crate def default defer del delete do dyn
elif else enum except export extends extern false final finally fn for from func function global go goto if impl
implements import in instanceof int interface is lambda let long loop map match mod move mut new nil none nonlocal
not null number of or package pass private protected pub public raise range ref return select self short static
struct super switch this throw throws trait true try type typeof unsafe use var void where while with yield i32
string any never declare readonly keyof infer get set abstract boolean byte char double float native synchronized
transient volatile strictfp macro union become override priv unsized virtual box print len cap make os p c m
""".split())
ident = st.from_regex(r"[a-z][a-zA-Z0-9]{0,6}", fullmatch=True).filter(lambda s: s.lower() not in _KEYWORDS)
_comment_text = st.text(st.characters(categories=["L", "N", "Zs", "So"], include_characters=".,:;!?-=+#()'\"",
                                      exclude_characters="\x85\u2028\u2029"), max_size=12)
program = st.fixed_dictionaries({
    "names": st.lists(ident, min_size=7, max_size=7, unique_by=str.lower),
    "N1": st.integers(0, 10**6), "N2": st.integers(0, 10**6),
    "OP": st.sampled_from(["+", "-", "*", "/", "%", "|", "&", "^"]),
    "CMP": st.sampled_from(["<", ">", "<=", ">=", "==", "!="]),
    "S": st.text("abcxyz 019_é🚀", max_size=6),
})


def _params(p: dict) -> dict[str, str]:
    f, a, b, x, g, k, d = p["names"]
    return {"F": f, "A": a, "B": b, "X": x, "G": g, "K": k, "D": d, "N1": str(p["N1"]), "N2": str(p["N2"]),
            "OP": p["OP"], "CMP": p["CMP"], "S": p["S"]}


class _Layout:
    """Fills a template's layout markers: the plain layout, or one drawn by hypothesis."""

    def __init__(self, language: str, draw=None) -> None:
        self.language, self.draw = language, draw
        self.python = language == "python"
        self.unit = draw(st.sampled_from(["    ", "  ", "\t", "   "])) if draw and self.python else "    "

    def pick(self, plain, options):
        return plain if self.draw is None else self.draw(st.sampled_from(options))

    def comment(self, text: str, *, block: bool) -> str:
        if self.python:
            return f"# {text}"
        return f"/* {text} */" if block else f"// {text}"

    def indent(self, level: int) -> str:
        if self.python or self.draw is None:
            return self.unit * level
        return self.draw(st.text(" \t", max_size=6))  # brace languages: indentation means nothing

    def newline(self, level: int) -> str:
        if self.draw is None:
            return "\n" + self.indent(level)
        out = "\n"
        for _ in range(self.draw(st.integers(0, 2))):  # blank lines (whitespace only) and comment lines
            if self.draw(st.booleans()):
                out += self.draw(st.text(" \t", max_size=4)) + "\n"
            else:
                c = self.comment(self.draw(_comment_text), block=self.draw(st.booleans()))
                # Python: a comment line at the block's indentation (see test_python_dedented_comment...)
                at = self.indent(level) if self.python else self.draw(st.text(" \t", max_size=8))
                out += at + c + "\n"
        return out + self.indent(level)

    def string(self, s: str) -> str:
        quote = '"' if self.language in ("go", "rust", "java") else self.pick('"', ['"', "'"])
        return quote + s + quote

    def render(self, template: str, params: dict[str, str]) -> str:
        out, level = [], 0
        text = template
        for key in sorted(params, key=len, reverse=True):
            value = self.string(params[key]) if key == "S" else params[key]
            text = text.replace("$" + key, value)
        gap_in_brackets = ["", " ", "\n", "\n\t\t", "  # c\n  "] if self.python else \
            ["", " ", "\n", "\n  \t", " /* c */ ", " // c\n"]  # Go: only after ( and , in the templates
        for ch in text:
            if ch == "·":
                out.append(self.pick("", ["", " ", "  ", "\t"]))
            elif ch == "␣":
                out.append(self.pick(" ", [" ", "  ", "\t"]))
            elif ch == "↵":
                out.append(self.pick("", gap_in_brackets))
            elif ch == "¶":
                out.append(self.newline(level))
            elif ch == "→":
                level += 1
            elif ch == "←":
                level -= 1
            elif ch == "✎":
                if self.draw is not None and self.draw(st.booleans()):
                    out.append(self.draw(st.text(" \t", min_size=1, max_size=3))
                               + self.comment(self.draw(_comment_text), block=self.draw(st.booleans())))
            elif ch == "；":
                keep = self.language not in ("javascript", "typescript", "go") or self.pick(True, [True, False])
                out.append(";" if keep else "")
            elif ch == "⸴":
                if self.language == "go":  # a line break before `)` needs the comma
                    out.append(self.pick("", ["", ",", ",\n", ",\n\t"]))
                else:
                    out.append(self.pick("", ["", ","]))
            elif ch == "⦅":
                paren = self.pick(False, [False, True])
                out.append("(" if paren else "")
                self._paren = paren
            elif ch == "⦆":
                out.append(")" if self._paren else "")
            elif ch == "📄":
                if self.draw is not None and self.draw(st.booleans()):
                    doc = self.draw(_comment_text).replace("'", "").replace('"', "").replace("\\", "")
                    q = self.draw(st.sampled_from(['"""', "'''", '"', "'"]))
                    out.append(f"{q}{doc}{q}" + self.newline(level))
            else:
                out.append(ch)
        return "".join(out)


def _symbol_of(src: str, language: str, qualified: str):
    from tree_sitter_language_pack import get_parser

    tree = get_parser(language).parse(src.encode())
    assert not tree.root_node.has_error, f"generated {language} does not parse:\n{src}"
    table = extract_symbols(src.encode(), language)
    assert qualified in table, f"{qualified} not in {list(table)}:\n{src}"
    return table[qualified]


def _python_meaning(src: str) -> str:
    """The Python AST without docstrings: equal for two sources that mean the same."""
    import ast

    tree = ast.parse(src)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            node.body = body[1:]
    return ast.dump(tree)


def _case(case: str, p: dict) -> tuple[str, str, str, str, frozenset[str], dict[str, str]]:
    language, path, qualified, template, body_only = TEMPLATES[case]
    params = _params(p)
    qualified = qualified.replace("$K", params["K"]).replace("$F", params["F"])
    return language, path, qualified, template, frozenset(body_only), params


@pytest.mark.parametrize("case", list(TEMPLATES))
@settings(max_examples=15, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=program, data=st.data())
def test_fingerprint_ignores_layout_and_comments(case: str, p: dict, data: st.DataObject) -> None:
    language, path, qualified, template, _, params = _case(case, p)
    plain = _Layout(language).render(template, params)
    variant = _Layout(language, data.draw).render(template, params)
    if language == "python":
        assert _python_meaning(variant) == _python_meaning(plain), "the generator changed the meaning"
    a, b = _symbol_of(plain, language, qualified), _symbol_of(variant, language, qualified)
    assert (b.fingerprint, b.signature_fp, b.body_fp, b.decorators_fp) == \
        (a.fingerprint, a.signature_fp, a.body_fp, a.decorators_fp), f"{plain}\n---- reformatted:\n{variant}"
    assert file_fingerprint(variant.encode(), path) == file_fingerprint(plain.encode(), path), variant


@pytest.mark.parametrize("case", list(TEMPLATES))
@settings(max_examples=15, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=program, data=st.data())
def test_fingerprint_sees_token_edits(case: str, p: dict, data: st.DataObject) -> None:
    language, path, qualified, template, body_only, params = _case(case, p)
    edits = [k for k in ("A", "B", "X", "G", "D", "N1", "N2", "OP", "CMP", "S") if "$" + k in template]
    edit = data.draw(st.sampled_from(edits), label="edit")
    changed = dict(params)
    if edit in ("A", "B", "X", "G", "D"):  # rename an identifier to one not used yet
        used = {v.lower() for v in params.values()}
        changed[edit] = data.draw(ident.filter(lambda s: s.lower() not in used), label="new name")
    elif edit in ("N1", "N2"):
        changed[edit] = str(data.draw(st.integers(0, 10**6).filter(lambda n: str(n) != params[edit])))
    elif edit in ("OP", "CMP"):
        options = ["+", "-", "*", "/", "%", "|", "&", "^"] if edit == "OP" else ["<", ">", "<=", ">=", "==", "!="]
        changed[edit] = data.draw(st.sampled_from([o for o in options if o != params[edit]]))
    else:
        changed["S"] = data.draw(st.text("abcxyz 019_é🚀", max_size=6).filter(lambda s: s != params["S"]))
    plain = _Layout(language).render(template, params)
    edited = _Layout(language, data.draw).render(template, changed)  # edited and reformatted
    a, b = _symbol_of(plain, language, qualified), _symbol_of(edited, language, qualified)
    assert b.fingerprint != a.fingerprint, f"{edit} edit not seen:\n{plain}\n---- edited:\n{edited}"
    assert file_fingerprint(edited.encode(), path) != file_fingerprint(plain.encode(), path)
    if edit in body_only:
        assert b.body_fp != a.body_fp and (b.signature_fp, b.decorators_fp) == (a.signature_fp, a.decorators_fp)
    if edit == "D":
        assert b.decorators_fp != a.decorators_fp and b.body_fp == a.body_fp


@pytest.mark.xfail(strict=True, reason="tree-sitter-python: a comment line left of the block between a decorator "
                                       "and its def is a syntax error there, so the decorator comes loose")
def test_python_dedented_comment_between_decorator_and_def() -> None:
    plain = extract_symbols(b"class A:\n    @cached\n    def f(self):\n        return 1\n", "python")["A.f"]
    odd = extract_symbols(b"class A:\n    @cached\n# note\n    def f(self):\n        return 1\n", "python")["A.f"]
    assert odd.fingerprint == plain.fingerprint
