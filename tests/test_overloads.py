"""Several definitions of one name, on real repositories and real tree-sitter parses.

An anchor to an overloaded name means its implementation, with the overload
signatures belonging to it; conditional alternatives are one symbol; separate
implementations (Java overloads, Rust ``cfg`` variants) are followed one by one;
anchors recorded by the previous naming (``f`` on the first stub, ``f#3``,
``Parser.parse#2``) still resolve.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gitmem.anchors import Resolver
from gitmem.code.symbols import extract_symbols, lookup
from gitmem.errors import AnchorError
from gitmem.git import Repo
from gitmem.model import Anchor, Change, Status
from testing.repos import commit, make_repo

PY = '''\
from typing import overload


class Response:
    @overload
    def iter_content(self, chunk_size: int, decode_unicode: bool = ...) -> bytes: ...
    @overload
    def iter_content(self, chunk_size: None = ..., decode_unicode: bool = ...) -> str: ...
    def iter_content(self, chunk_size=1, decode_unicode=False):
        def generate():
            yield self.raw.read(chunk_size)
        return generate()
'''

TS = '''\
export function parse(input: string): number;
export function parse(input: number): number;
export function parse(input: any): number {
  return Number(input) + 1;
}
'''

JAVA = '''\
class Parser {
    int parse(String s) {
        return s.length();
    }

    int parse(int n) {
        return n * 2;
    }
}
'''


def _repo(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Repo]:
    root = make_repo(tmp_path / "r", files)
    return root, Repo(root)


# --------------------------------------------------------------------------- Python


def test_python_overloads_are_one_symbol_named_plainly() -> None:
    tab = extract_symbols(PY.encode(), "python")
    assert list(tab) == ["Response", "Response.iter_content", "Response.iter_content.generate"]
    sym = tab["Response.iter_content"]
    assert (sym.start_line, sym.end_line) == (5, 12)  # from the first stub to the implementation's end
    assert sym.aliases == ("Response.iter_content#2", "Response.iter_content#3")
    assert tab["Response.iter_content.generate"].aliases == ("Response.iter_content#3.generate",)


def test_python_implementation_change_is_stale(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"models.py": PY})
    a = Resolver(repo).make("models.py", "Response.iter_content")
    c = commit(root, "read more", {"models.py": PY.replace("read(chunk_size)", "read(chunk_size * 2)")})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.STALE and st.changes == [Change.BODY] and st.commit == c
    inner = Resolver(repo).make("models.py", "Response.iter_content.generate")
    assert inner.symbol == "Response.iter_content.generate"


def test_python_stub_change_is_a_signature_change(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"models.py": PY})
    a = Resolver(repo).make("models.py", "Response.iter_content")
    c = commit(root, "bytes or bytearray", {"models.py": PY.replace("-> bytes: ...", "-> bytes | bytearray: ...")})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.STALE and st.changes == [Change.SIGNATURE]


def test_python_stubs_reordered_is_fresh(tmp_path: Path) -> None:
    stub1 = "    @overload\n    def iter_content(self, chunk_size: int, decode_unicode: bool = ...) -> bytes: ...\n"
    stub2 = ("    @overload\n"
             "    def iter_content(self, chunk_size: None = ..., decode_unicode: bool = ...) -> str: ...\n")
    assert stub1 in PY and stub2 in PY
    root, repo = _repo(tmp_path, {"models.py": PY})
    a = Resolver(repo).make("models.py", "Response.iter_content")
    c = commit(root, "reorder", {"models.py": PY.replace(stub1 + stub2, stub2 + stub1)})
    assert Resolver(repo).status(a, c).status == Status.FRESH


def test_python_conditional_definitions_count_every_branch(tmp_path: Path) -> None:
    src = ('import sys\nfrom typing import TYPE_CHECKING\n\n'
           'if TYPE_CHECKING:\n    def load(path: str) -> bytes: ...\n'
           'elif sys.version_info >= (3, 11):\n    def load(path):\n        return open(path, "rb").read()\n'
           'else:\n    def load(path):\n        with open(path, "rb") as f:\n            return f.read()\n\n'
           'try:\n    from _speedups import dump\n'
           'except ImportError:\n    def dump(data):\n        return bytes(data)\n')
    tab = extract_symbols(src.encode(), "python")
    assert list(tab) == ["load", "dump"] and tab["load"].aliases == ("load#2", "load#3")
    root, repo = _repo(tmp_path, {"io.py": src})
    a = Resolver(repo).make("io.py", "load")
    for old, new in [('open(path, "rb").read()', 'open(path, "rb").read(-1)'),  # the 3.11 branch
                     ("return f.read()", "return f.read(-1)"),                  # the fallback
                     ("-> bytes: ...", "-> bytearray: ...")]:                   # the typing-only one
        c = commit(root, f"edit {old}", {"io.py": src.replace(old, new)})
        assert Resolver(repo).status(a, c).status == Status.STALE, old
    c = commit(root, "back", {"io.py": src})
    assert Resolver(repo).status(a, c).status == Status.FRESH


def test_anchor_recorded_on_the_stub_resolves_to_the_implementation(tmp_path: Path) -> None:
    # An earlier gitmem named the first stub "Response.iter_content" and the implementation "#3",
    # each with its own fingerprint: both anchors now mean the implementation, and see its changes.
    root, repo = _repo(tmp_path, {"models.py": PY})
    head = repo.head()
    parts = extract_symbols(PY.encode(), "python")["Response.iter_content"].parts
    assert len(parts) == 3
    old_stub = Anchor(path="models.py", symbol="Response.iter_content", commit=head, kind="method",
                      span=(5, 6), fingerprint=parts[0])
    old_impl = dataclasses.replace(old_stub, symbol="Response.iter_content#3", span=(9, 12), fingerprint=parts[2])
    old_inner = Anchor(path="models.py", symbol="Response.iter_content#3.generate", commit=head,
                       kind="function", span=(10, 11),
                       fingerprint=extract_symbols(PY.encode(), "python")["Response.iter_content.generate"].fingerprint)
    for a in (old_stub, old_impl, old_inner):
        st = Resolver(repo).status(a)
        assert st.status == Status.FRESH and st.symbol_now in ("Response.iter_content",
                                                               "Response.iter_content.generate"), a.symbol
    c = commit(root, "read more", {"models.py": PY.replace("read(chunk_size)", "read(chunk_size * 2)")})
    for a in (old_stub, old_impl, old_inner):
        st = Resolver(repo).status(a, c)
        assert st.status == Status.STALE and st.commit == c, a.symbol
    assert Resolver(repo).make("models.py", "Response.iter_content#3").symbol == "Response.iter_content"


# --------------------------------------------------------------------------- TypeScript


def test_typescript_overloads(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"parse.ts": TS})
    a = Resolver(repo).make("parse.ts", "parse")
    assert a.span == (1, 5)
    body = commit(root, "body", {"parse.ts": TS.replace("+ 1", "+ 2")})
    st = Resolver(repo).status(a, body)
    assert st.status == Status.STALE and st.changes == [Change.BODY]
    sig = commit(root, "stub", {"parse.ts": TS.replace("(input: number): number;", "(input: bigint): number;")})
    st = Resolver(repo).status(a, sig)
    assert st.status == Status.STALE and st.changes == [Change.SIGNATURE]
    lines = TS.splitlines(keepends=True)
    swapped = commit(root, "reorder", {"parse.ts": "".join([lines[1], lines[0], *lines[2:]])})
    assert Resolver(repo).status(a, swapped).status == Status.FRESH


def test_typescript_anchor_of_the_previous_fingerprint_is_fresh(tmp_path: Path) -> None:
    # ts1.2 hashed the signatures in order with the implementation: that fingerprint is a part now.
    root, repo = _repo(tmp_path, {"parse.ts": TS})
    sym = extract_symbols(TS.encode(), "typescript")["parse"]
    old = Anchor(path="parse.ts", symbol="parse", commit=repo.head(), kind="function", span=(1, 5),
                 fingerprint=sym.parts[0])
    assert old.fingerprint != sym.fingerprint
    assert Resolver(repo).status(old).status == Status.FRESH
    c = commit(root, "body", {"parse.ts": TS.replace("+ 1", "+ 2")})
    assert Resolver(repo).status(old, c).status == Status.STALE


# --------------------------------------------------------------------------- Java, Rust


def test_java_overloads_are_named_by_parameter_types() -> None:
    tab = extract_symbols(JAVA.encode(), "java")
    assert list(tab) == ["Parser", "Parser.parse(String)", "Parser.parse(int)"]
    assert tab["Parser.parse(String)"].aliases == ("Parser.parse",)
    assert tab["Parser.parse(int)"].aliases == ("Parser.parse#2",)
    varargs = "class A { void f(final java.util.List<String> a, int... b) {} void f() {} }"
    assert list(extract_symbols(varargs.encode(), "java")) == ["A", "A.f(List<String>,int...)", "A.f()"]


def test_java_overloads_followed_on_their_own(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"Parser.java": JAVA})
    s = Resolver(repo).make("Parser.java", "Parser.parse(String)")
    n = Resolver(repo).make("Parser.java", "Parser.parse(int)")
    # a sibling added before both: each stays fresh, at its own place
    added = JAVA.replace("class Parser {\n", "class Parser {\n    int parse(long x) {\n        return 0;\n    }\n\n")
    c1 = commit(root, "parse(long)", {"Parser.java": added})
    for a, name in ((s, "Parser.parse(String)"), (n, "Parser.parse(int)")):
        st = Resolver(repo).status(a, c1)
        assert st.status == Status.FRESH and st.symbol_now == name and st.new_span[0] > a.span[0]
    # one body changes: only its anchor is stale
    c2 = commit(root, "int twice", {"Parser.java": added.replace("n * 2", "n * 3")})
    assert Resolver(repo).status(s, c2).status == Status.FRESH
    assert Resolver(repo).status(n, c2).status == Status.STALE
    # the siblings removed: parse(String) is unique again and named plainly; still followed
    c3 = commit(root, "only String", {"Parser.java": "class Parser {\n    int parse(String s) {\n"
                                                     "        return s.length();\n    }\n}\n"})
    st = Resolver(repo).status(s, c3)
    assert st.status == Status.FRESH and st.symbol_now == "Parser.parse"
    assert Resolver(repo).status(n, c3).status == Status.DELETED


def test_plain_java_anchor_follows_its_method_when_an_overload_is_added(tmp_path: Path) -> None:
    one = "class Parser {\n    int parse(String s) {\n        return s.length();\n    }\n}\n"
    root, repo = _repo(tmp_path, {"Parser.java": one})
    a = Resolver(repo).make("Parser.java", "Parser.parse")
    two = one.replace("class Parser {\n", "class Parser {\n    int parse(int n) {\n        return n;\n    }\n\n")
    c1 = commit(root, "overload first", {"Parser.java": two})
    st = Resolver(repo).status(a, c1)
    assert st.status == Status.FRESH and st.symbol_now == "Parser.parse(String)"
    c2 = commit(root, "change it", {"Parser.java": two.replace("s.length()", "s.strip().length()")})
    st = Resolver(repo).status(a, c2)
    assert st.status == Status.STALE and st.symbol_now == "Parser.parse(String)" and st.commit == c2


def test_old_numbered_anchor_still_resolves(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"Parser.java": JAVA})
    fp = extract_symbols(JAVA.encode(), "java")["Parser.parse(int)"].fingerprint
    old = Anchor(path="Parser.java", symbol="Parser.parse#2", commit=repo.head(), kind="method",
                 span=(6, 8), fingerprint=fp)
    st = Resolver(repo).status(old)
    assert st.status == Status.FRESH and st.symbol_now == "Parser.parse(int)"
    c = commit(root, "int", {"Parser.java": JAVA.replace("n * 2", "n + n + 1")})
    st = Resolver(repo).status(old, c)
    assert st.status == Status.STALE and st.symbol_now == "Parser.parse(int)" and st.commit == c
    assert Resolver(repo).make("Parser.java", "Parser.parse#2").symbol == "Parser.parse(int)"


def test_rust_cfg_variants_are_separate_symbols(tmp_path: Path) -> None:
    src = ('#[cfg(unix)]\nfn open(p: &str) -> i32 {\n    1\n}\n\n'
           '#[cfg(windows)]\nfn open(p: &str) -> i32 {\n    2\n}\n')
    tab = extract_symbols(src.encode(), "rust")
    assert list(tab) == ["open[cfg(unix)]", "open[cfg(windows)]"]
    root, repo = _repo(tmp_path, {"os.rs": src})
    a = Resolver(repo).make("os.rs", "open[cfg(windows)]")
    c = commit(root, "unix only", {"os.rs": src.replace("    1\n", "    10\n")})
    assert Resolver(repo).status(a, c).status == Status.FRESH
    c = commit(root, "windows", {"os.rs": src.replace("    2\n", "    20\n")})
    assert Resolver(repo).status(a, c).status == Status.STALE


def test_lookup_prefers_the_same_code_over_the_position() -> None:
    tab = extract_symbols(JAVA.replace("class Parser {\n", "class Parser {\n    void parse() {}\n").encode(), "java")
    old = extract_symbols(JAVA.encode(), "java")
    # "Parser.parse" used to mean the first definition: by its code it is parse(String), now the second
    assert lookup(tab, "Parser.parse", like=old["Parser.parse(String)"]) == "Parser.parse(String)"
    assert lookup(tab, "Parser.parse") == "Parser.parse()"  # no code to go by: the old position
    assert lookup(tab, "Parser.nothing") is None


def test_a_plain_name_of_several_overloads_asks_which(tmp_path: Path) -> None:
    _, repo = _repo(tmp_path, {"Parser.java": JAVA})
    with pytest.raises(AnchorError) as e:
        Resolver(repo).make("Parser.java", "Parser.parse")
    assert "defines Parser.parse 2 times" in e.value.message
    assert e.value.candidates == ["Parser.parse(String)", "Parser.parse(int)"]
