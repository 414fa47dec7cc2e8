"""C and C++ symbols: names, kinds, the declaration + definition join, fingerprints, ``#include`` edges,
and staleness on real git repositories.

Real tree-sitter parses (tree-sitter-language-pack's ``c`` and ``cpp`` grammars); fixtures under
tests/fixtures/code/c/ and tests/fixtures/code/cpp/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.analyzer import evaluate
from gitmem.anchors import Resolver
from gitmem.code.imports import extract_imports, resolve_imports
from gitmem.code.languages import language_for_path
from gitmem.code.specs import written_symbol
from gitmem.code.symbols import extract_symbols
from gitmem.git import Repo
from gitmem.memories import RememberRequest, remember
from gitmem.model import Status
from gitmem.store import Store, init_layout
from gitmem.textsplit import name_base, name_leaf
from testing.repos import commit, git, make_repo
from testing.symbols import FIXTURES, assert_staleness_story, fixture, kinds

pytestmark = pytest.mark.usefixtures("fresh_symbol_caches")


def test_extensions():
    assert language_for_path("src/list.c") == "c"
    for path in ("a.h", "a.cc", "a.cpp", "a.cxx", "a.c++", "a.hpp", "a.hh", "a.hxx", "a.h++", "a.ipp", "a.tpp",
                 "a.inl", "A.CPP"):
        assert language_for_path(path) == "cpp", path


def test_c_header_names_and_kinds():
    assert kinds(fixture("c/list.h")) == {
        "LIST_MAX": "macro", "LIST_FOREACH": "macro",  # the include guard's #define is not a symbol
        "node": "struct", "node_t": "type",             # typedef struct node {...} node_t;
        "list": "struct",                               # typedef struct {...} list;
        "visit_fn": "type", "color": "enum", "num": "union",
        "list_push": "function", "list_len": "function",  # prototypes; `struct opaque;` is not a symbol
    }


def test_c_source_names_and_kinds():
    tab = fixture("c/list.c")
    assert kinds(tab) == {"new_node": "function", "list_push": "function", "list_len": "function"}
    # the static prototype and the definition of new_node are one symbol; its span is the definition's
    assert (tab["new_node"].start_line, tab["new_node"].end_line) == (23, 28)


def test_cpp_header_names_and_kinds():
    assert kinds(fixture("cpp/shapes.hpp")) == {
        "SHAPES_API": "macro", "SQUARE": "macro",
        "geo": "namespace",
        "geo.Shape": "class",                 # `class SHAPES_API Shape`: the export macro is not the name
        "geo.Shape.Shape()": "constructor", "geo.Shape.Shape(string)": "constructor",
        "geo.Shape.~Shape": "destructor",
        "geo.Shape.area": "method", "geo.Shape.name": "method",
        "geo.Shape.scale(double)": "method", "geo.Shape.scale(double,double)": "method",
        "geo.Shape.operator==": "operator", "geo.Shape.operator()": "operator", "geo.Shape.operator bool": "operator",
        "geo.Shape.Box": "struct", "geo.Shape.Kind": "enum",
        "geo.Holder": "struct", "geo.Holder.get": "method", "geo.Holder<void>": "struct",
        "geo.Area": "type", "geo.ShapePtr": "type",
        "geo.hidden": "function",             # an anonymous namespace adds nothing
        "geo.versioned": "function",          # nor does an inline one
        "geo.count(const char*,size_t)": "function", "geo.count(const vector<int>&)": "function",
        "operator<<": "operator",
    }


def test_cpp_source_out_of_line_definitions():
    assert kinds(fixture("cpp/shapes.cpp")) == {
        "geo": "namespace",
        "geo.Shape.Shape()": "constructor", "geo.Shape.Shape(string)": "constructor",
        "geo.Shape.~Shape": "destructor",
        "geo.Shape.scale(double)": "method", "geo.Shape.scale(double,double)": "method",
        "geo.Shape.operator==": "operator",
        "geo.Holder.get": "method",                    # template<typename T> T Holder<T>::get()
        "geo.Shape.operator()": "operator",            # double geo::Shape::operator()(int) at top level
        "geo.Shape.operator bool": "operator",
        "geo.count": "function",                       # geo is a namespace of this file: a function
    }


def test_template_header_is_part_of_the_span():
    tab = fixture("cpp/shapes.hpp")
    src = (FIXTURES / "cpp/shapes.hpp").read_text().splitlines()
    assert src[tab["geo.Holder"].start_line - 1].startswith("template <typename T>")


CLASS = b"""\
class A {
 public:
  void f(int x);
  int g() const { return 1; }
};

void A::f(int x) {
  use(x);
}
"""


def test_declaration_and_definition_in_one_file_are_one_symbol():
    tab = extract_symbols(CLASS, "cpp")
    assert list(tab) == ["A", "A.g", "A.f"]  # by start line: A.f is where it is defined
    assert (tab["A.f"].start_line, tab["A.f"].end_line) == (7, 9)  # the definition's lines
    decl = extract_symbols(CLASS.replace(b"void f(int x);", b"void f(int x) noexcept;"), "cpp")["A.f"]
    body = extract_symbols(CLASS.replace(b"use(x);", b"use(x + 1);"), "cpp")["A.f"]
    renamed_param = extract_symbols(CLASS.replace(b"void f(int x);", b"void f(int value);"), "cpp")["A.f"]
    f = tab["A.f"]
    assert decl.fingerprint != f.fingerprint and decl.signature_fp != f.signature_fp and decl.body_fp == f.body_fp
    assert body.fingerprint != f.fingerprint and body.body_fp != f.body_fp
    assert renamed_param.fingerprint == f.fingerprint  # a declaration's parameter names are not its type
    # a prototype then its definition (C)
    c = extract_symbols(b"int f(void);\nint g(void) { return 2; }\nint f(void) { return 1; }\n", "c")
    assert list(c) == ["g", "f"] and (c["f"].start_line, c["f"].end_line) == (3, 3)
    # only declarations: the span runs from the first to the last
    d = extract_symbols(b"int f(void);\nint g(void);\nint f(void);\n", "c")
    assert (d["f"].start_line, d["f"].end_line) == (1, 3)


def test_overloads_are_named_by_parameter_types():
    src = b"""\
struct S {
  void f();
  void f(const std::string &s, unsigned  int n = 3);
  void f(char const * const p, int a[10], ...) const;
  template <class... Args> void f(Args&&... args);
  void f(void (*cb)(int), const int k) &&;
};
"""
    assert list(extract_symbols(src, "cpp")) == [
        "S", "S.f()", "S.f(const string&,unsigned int)", "S.f(const char*,int*,...)const", "S.f(Args&&...)",
        "S.f(void(*)(int),int)&&"]
    # C has no overloads: a prototype with other parameter spellings is the same function
    assert list(extract_symbols(b"int f();\nint f(int x) { return x; }\n", "c")) == ["f"]


def test_more_cpp_forms():
    src = b"""\
namespace outer { namespace inner {
struct Outer { struct Inner { void f(); }; };
} }
void outer::inner::Outer::Inner::f() {}
extern "C" { int cfun(void) { return 0; } }
typedef enum { RED, BLUE } color_t;
struct A {
  friend bool operator==(A a, A b) { return true; }
  friend void declared_only();
  template <class T> friend void swap(A&, T&) {}
};
TEST(Suite, One) { run(1); }
TEST(Suite, Two) { run(2); }
namespace outer::inner { void later(); }
"""
    tab = extract_symbols(src, "cpp")
    assert kinds(tab) == {
        "outer": "namespace", "outer.inner": "namespace",  # `namespace outer::inner` reopens the nested one
        "outer.inner.Outer": "struct", "outer.inner.Outer.Inner": "struct",
        "outer.inner.Outer.Inner.f": "method", "outer.inner.later": "function",
        "cfun": "function", "color_t": "enum",
        "A": "struct", "A.operator==": "operator", "A.swap": "function",
        "TEST(Suite,One)": "function", "TEST(Suite,Two)": "function",
    }
    assert (tab["outer.inner.Outer.Inner.f"].start_line, tab["outer.inner.Outer.Inner.f"].end_line) == (4, 4)
    assert tab["A.swap"].start_line == 10  # the template header is part of it


def test_written_names():
    assert written_symbol("a.cpp", "ns::A::f") == "ns.A.f"
    assert written_symbol("a.cpp", "::ns::A::f") == "ns.A.f"
    assert written_symbol("a.cpp", "A::f(const char *, size_t)") == "A.f(const char*,size_t)"
    assert written_symbol("a.cpp", "A::f(std::string const &) const") == "A.f(const string&)const"
    assert written_symbol("a.cpp", "A::operator ()") == "A.operator()"
    assert written_symbol("a.cpp", "A::operator()(int)") == "A.operator()(int)"
    assert written_symbol("a.cpp", "A::operator == (const A &)") == "A.operator==(const A&)"
    assert written_symbol("a.cpp", "ns::formatter<std::string_view>::parse") == "ns.formatter<string_view>.parse"
    assert written_symbol("a.cpp", "geo.Shape.scale(double)") == "geo.Shape.scale(double)"
    assert written_symbol("a.c", "list_push(list *, int)") == "list_push"


def test_operator_names_survive_name_base():
    assert name_base("A.operator()(int)") == "A.operator()"
    assert name_base("A.operator[](size_t)const") == "A.operator[]"
    assert name_leaf("A.operator()") == "operator()"
    assert name_base("A.operator==(const A&)") == "A.operator=="
    assert name_base("A.f(const char*,size_t)") == "A.f"


def test_fingerprint_ignores_comments_and_formatting():
    base = b"""\
namespace n {
// doc
int f(int *p, int n) {
  int xs[] = {1, 2, 3};
  if (n > 0) { return p[0]; }
  log("a long message that clang-format splits");
  return xs[n];
}
}  // namespace n
#ifndef M
#define M(a, b) ((a) + (b))
#endif
"""
    same = b"""\
namespace n
{
/** Doc comment. */
int
f(int* p, int n)
{
    int xs[] = {
        1,
        2,
        3,
    };  /* trailing comma: clang-format's one-per-line */
    if (n > 0)
    {
        return p[0];  // first
    }
    log("a long message that "
        "clang-format splits");
    return xs[n];
}
} // namespace n
#ifndef M
#  define M(a, b)  \\
    ((a)  + /* sum */ (b))
#endif
"""
    changed = base.replace(b"return p[0];", b"return p[1];")
    message = base.replace(b"that clang", b"that Clang")
    macro_changed = base.replace(b"((a) + (b))", b"((a) - (b))")
    t0, t1 = extract_symbols(base, "cpp"), extract_symbols(same, "cpp")
    assert t0["n.f"].fingerprint == t1["n.f"].fingerprint
    assert t0["M"].fingerprint == t1["M"].fingerprint
    assert extract_symbols(changed, "cpp")["n.f"].fingerprint != t0["n.f"].fingerprint
    assert extract_symbols(message, "cpp")["n.f"].fingerprint != t0["n.f"].fingerprint
    assert extract_symbols(macro_changed, "cpp")["M"].fingerprint != t0["M"].fingerprint
    # a preprocessor conditional inside a function is part of its body
    ifdef = base.replace(b"  return xs[n];", b"#ifdef DEBUG\n  log(n);\n#endif\n  return xs[n];")
    assert extract_symbols(ifdef, "cpp")["n.f"].body_fp != t0["n.f"].body_fp


def test_includes_are_extracted_and_resolved():
    src = b'#include "shapes.hpp"\n#include "util/geom.h"\n#include <vector>\n#include <fmt/core.h>\n' \
          b'#if X\n#include "../common/log.h"\n#endif\nint f();\n'
    specs = extract_imports("src/shapes.cpp", src)
    assert specs == ["shapes.hpp", "util/geom.h", "<vector>", "<fmt/core.h>", "../common/log.h"]
    files = ["src/shapes.cpp", "src/shapes.hpp", "include/util/geom.h", "lib/util/geom.h", "common/log.h",
             "third_party/fmt/include/fmt/core.h", "docs/vector"]
    assert resolve_imports("src/shapes.cpp", specs, files) == {
        "src/shapes.hpp",                        # next to the including file
        "include/util/geom.h",                   # an include root wins over another folder holding the path
        "common/log.h",                          # relative to the including file
        "third_party/fmt/include/fmt/core.h",    # <...>: only because the path exists in the repository
        "docs/vector",                           # (any file at that relative path)
    }
    assert resolve_imports("src/a.c", ["<stdio.h>", "missing.h"], ["src/a.c"]) == set()


# --------------------------------------------------------------------------- real repositories

C_SRC = """\
#include "list.h"

int list_push(list *l, int value)
{
    l->len++;
    return value;
}

int list_pop(list *l)
{
    l->len--;
    return 0;
}
"""

CPP_SRC = """\
#include "cache.hpp"

namespace app {

int Cache::get(const std::string& k) const {
  return k.size();
}

void Cache::put(const std::string& k, int v) {
  store_[k] = v;
}

}  // namespace app
"""


@pytest.mark.parametrize("path, new_path, src, symbol, body_edit, other_edit", [
    ("src/list.c", "src/lists.c", C_SRC, "list_push", ("l->len++;", "l->len += 2;"), ("l->len--;", "l->len -= 2;")),
    ("src/cache.cpp", "src/store.cpp", CPP_SRC, "app::Cache::get",
     ("return k.size();", "return k.size() * 2;"), ("store_[k] = v;", "store_[k] = v + 1;")),
], ids=["c", "cpp"])
def test_staleness_on_a_real_repository(tmp_path: Path, path, new_path, src, symbol, body_edit, other_edit):
    a = assert_staleness_story(tmp_path / "r", path, new_path, src, symbol, body_edit, other_edit,
                               reformat=lambda text: text.replace("{\n", "{  // x\n"))
    assert a.symbol == written_symbol(path, symbol)


def test_overloads_are_followed_when_a_sibling_is_added(tmp_path: Path):
    one = "struct P {\n  int parse(const char* s) {\n    return s[0];\n  }\n};\n"
    root = make_repo(tmp_path / "r", {"p.hpp": one})
    repo = Repo(root)
    a = Resolver(repo).make("p.hpp", "P::parse")
    assert a.symbol == "P.parse"
    two = one.replace("struct P {\n", "struct P {\n  int parse(int n) {\n    return n;\n  }\n")
    c1 = commit(root, "overload", {"p.hpp": two})
    st = Resolver(repo).status(a, c1)
    assert st.status == Status.FRESH and st.symbol_now == "P.parse(const char*)"
    b = Resolver(repo).make("p.hpp", "P::parse(int)")
    c2 = commit(root, "change it", {"p.hpp": two.replace("return s[0];", "return s[1];")})
    st = Resolver(repo).status(a, c2)
    assert st.status == Status.STALE and st.symbol_now == "P.parse(const char*)" and st.commit == c2
    assert Resolver(repo).status(b, c2).status == Status.FRESH


HEADER = """\
#pragma once
#include <string>

namespace app {

class Cache {
 public:
  int get(const std::string& k) const;
  void put(const std::string& k, int v);
};

}  // namespace app
"""


def _store(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Store]:
    root = make_repo(tmp_path / "r", files)
    init_layout(Repo(root))
    (root / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    return root, Store(Repo(root))


@pytest.mark.parametrize("spec, header_path", [
    ("src/cache.cpp::app::Cache::get", "include/app/cache.hpp"),   # the source's #include, resolved
    ("include/app/cache.hpp::app.Cache.get", "include/app/cache.hpp"),  # the header: the same-stem source
], ids=["from-source", "from-header"])
def test_header_and_source_are_anchored_together(tmp_path: Path, spec: str, header_path: str):
    root, store = _store(tmp_path, {header_path: HEADER, "src/cache.cpp": CPP_SRC.replace(
        '"cache.hpp"', '"app/cache.hpp"')})
    warnings: list[str] = []
    m = remember(store, RememberRequest(text="get is O(1)", anchors=(spec,)), warn=warnings.append)
    assert sorted(a.key for a in m.anchors) == [f"{header_path}::app.Cache.get", "src/cache.cpp::app.Cache.get"]
    assert len(warnings) == 1 and "also anchored" in warnings[0] and "stale when either changes" in warnings[0]
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memory")
    src = (root / "src/cache.cpp").read_text()

    def status() -> Status:
        return evaluate(Store(Repo(root)), Repo(root).head())[0].status

    commit(root, "other function", {"src/cache.cpp": src.replace("store_[k] = v;", "store_[k] = v + 1;")})
    assert status() == Status.FRESH
    commit(root, "other declaration", {header_path: HEADER.replace("int v);", "int v) noexcept;")})
    assert status() == Status.FRESH
    commit(root, "header declaration", {header_path: HEADER.replace("k) const;", "k) const noexcept;")})
    assert status() == Status.STALE
    git(root, "reset", "-q", "--hard", "HEAD~1")
    assert status() == Status.FRESH
    commit(root, "source definition", {"src/cache.cpp": src.replace("return k.size();", "return 0;")})
    assert status() == Status.STALE


def test_a_tie_between_partners_is_not_guessed(tmp_path: Path):
    impl = CPP_SRC.replace('#include "cache.hpp"\n', "")
    root, store = _store(tmp_path, {"a/cache.hpp": HEADER, "b/cache.hpp": HEADER, "src/cache.cpp": impl})
    warnings: list[str] = []
    m = remember(store, RememberRequest(text="get", anchors=("src/cache.cpp::app::Cache::get",)),
                 warn=warnings.append)
    assert [a.key for a in m.anchors] == ["src/cache.cpp::app.Cache.get"]
    assert len(warnings) == 1 and "a/cache.hpp" in warnings[0] and "b/cache.hpp" in warnings[0]


def test_c_prototype_and_definition_are_anchored_together(tmp_path: Path):
    header = "#ifndef LIST_H\n#define LIST_H\nint list_push(list *l, int value);\nint list_pop(list *l);\n#endif\n"
    root, store = _store(tmp_path, {"src/list.h": header, "src/list.c": C_SRC})
    m = remember(store, RememberRequest(text="push", anchors=("src/list.h::list_push",)))
    assert sorted(a.key for a in m.anchors) == ["src/list.c::list_push", "src/list.h::list_push"]
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memory")
    commit(root, "signature", {"src/list.h": header.replace("int value);", "long value);")})
    assert evaluate(Store(Repo(root)), Repo(root).head())[0].status == Status.STALE


def test_cli_remember_says_it_anchored_both(tmp_path: Path, run_cli):
    root = make_repo(tmp_path / "r", {"include/app/cache.hpp": HEADER,
                                      "src/cache.cpp": CPP_SRC.replace('"cache.hpp"', '"app/cache.hpp"')})
    code, _, err = run_cli(root, "init", "--no-hooks")
    assert code == 0, err
    code, out, err = run_cli(root / "src", "remember", "get is O(1)", "--anchor", "cache.cpp::app::Cache::get",
                             "--json")
    assert code == 0, err
    assert sorted(a["anchor"] for a in json.loads(out)["anchors"]) == [
        "include/app/cache.hpp::app.Cache.get", "src/cache.cpp::app.Cache.get"]
    assert "also anchored include/app/cache.hpp::app.Cache.get" in err
    notes = [json.loads(line) for line in err.splitlines()]
    assert len(notes) == 1 and notes[0]["note"].startswith("also anchored ") and "warning" not in notes[0]
    code, _, err = run_cli(root, "remember", "get is cheap", "--anchor", "src/cache.cpp::app::Cache::get")
    assert code == 0, err
    assert err.startswith("also anchored include/app/cache.hpp::app.Cache.get") and "warning" not in err


def test_a_source_using_the_headers_namespace_finds_its_declaration(tmp_path: Path):
    source = CPP_SRC.replace("namespace app {\n", "using namespace app;\n").replace("}  // namespace app\n", "")
    root, store = _store(tmp_path, {"src/cache.hpp": HEADER, "src/cache.cpp": source})
    m = remember(store, RememberRequest(text="get", anchors=("src/cache.cpp::Cache::get",)))
    assert sorted(a.key for a in m.anchors) == ["src/cache.cpp::Cache.get", "src/cache.hpp::app.Cache.get"]


def test_a_c_header_with_macro_wrapped_declarations_is_read_as_c():
    src = b"#define API(t) t\nAPI(int *) parse(const char *value);\nAPI(void) drop(int *p);\n"
    assert kinds(extract_symbols(src, "cpp")) == {"API": "macro", "parse": "function", "drop": "function"}
    # the same in a header with C++ syntax stays C++ (and its classes are found)
    cpp = src + b"class Box { int f(); };\n"
    assert "Box.f" in extract_symbols(cpp, "cpp")


# -- a function declared at the top of its file and defined far below ------------------------------------------------

PROTOTYPES = """\
#include <stdio.h>

static int parse(const char *s);
static int render(int x);
#define LIMIT 5

static int render(int x) {
  return x * LIMIT;
}
""" + "".join(f"static int pad{i}(void) {{ return {i}; }}\n" for i in range(20)) + """
static int parse(const char *s) {
  return s[0] + render(1);
}
"""


def test_a_joined_symbols_span_is_its_definition():
    tab = extract_symbols(PROTOTYPES.encode(), "c")
    lines = PROTOTYPES.splitlines()
    parse, render = tab["parse"], tab["render"]
    assert lines[parse.start_line - 1].startswith("static int parse(const char *s) {")
    assert parse.end_line == len(lines) and (render.start_line, render.end_line) == (7, 9)
    # the prototype is still part of the symbol: editing it changes the fingerprint (a signature change)
    edited = extract_symbols(PROTOTYPES.replace("static int parse(const char *s);",
                                                "static int parse(char *s);").encode(), "c")["parse"]
    assert edited.signature_fp != parse.signature_fp and edited.body_fp == parse.body_fp


def test_an_edit_near_a_prototype_is_not_an_edit_of_the_definition_far_below(tmp_path: Path, run_cli, run_json):
    from tests.test_claude_hooks import context_of, hook
    from tests.test_claude_hooks import fixture as hook_event
    from tests.test_claude_hooks import remember as cli_remember

    repo = make_repo(tmp_path / "r", {"src/p.c": PROTOTYPES})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    parse = cli_remember(run_cli, repo, "parse reads only the first byte", "src/p.c::parse")
    render = cli_remember(run_cli, repo, "render scales by LIMIT", "src/p.c::render")
    event = hook_event("PreToolUse.Edit", repo, session_id="proto-1")
    event["tool_input"].update(file_path=str(repo / "src/p.c"), old_string="  return x * LIMIT;\n",
                               new_string="  return x * LIMIT * 2;\n")
    text = context_of(hook(event, repo)[1], "PreToolUse")
    assert "(the edit is at line 8)" in text
    assert f"### {render} · constraint" in text and f"### {parse} · constraint" not in text
    assert text.index(render) < text.index(parse)  # parse is listed, not shown in full
    # the code in focus: only render is a changed symbol (line 8 is not inside parse's span any more)
    (repo / "src/p.c").write_text(PROTOTYPES.replace("x * LIMIT", "x * LIMIT * 2"))
    ctx = run_json(repo, "context", "--file", "src/p.c")
    assert ctx["focus"]["symbols"] == ["src/p.c::render"]
    order = [m["id"] for m in ctx["memories"]]
    assert order.index(render) < order.index(parse)


# -- a macro used as a statement without a semicolon (Unity's EXPECT_ABORT_BEGIN) ----------------------------------

UNITY = """\
#include "unity.h"

void putcharSpy(int c);
void endPutcharSpy(void);

void testNotEqualInt16Arrays(void)
{
    UNITY_INT16 p0[] = {1, 8, 127, 3};
    UNITY_INT16 p1[] = {1, 8, 127, 2};

    EXPECT_ABORT_BEGIN
    TEST_ASSERT_EQUAL_INT16_ARRAY(p0, p1, 4);
    VERIFY_FAILS_END
}

void testEqualInt16EachEqual(void)
{
    UNITY_INT16 p0[] = {1, 1, 1, 1};

    TEST_ASSERT_EACH_EQUAL_INT16(1, p0, 4);
}

void testNotEqualInt16EachEqual(void)
{
    UNITY_INT16 p0[] = {127, 127, 127, 3};

    EXPECT_ABORT_BEGIN
    TEST_ASSERT_EACH_EQUAL_INT16(127, p0, 4);
    VERIFY_FAILS_END
}

enum flags {
    FLAG_A,
    FLAG_B
};

void putcharSpy(int c) { (void)c; }

void endPutcharSpy(void) { putcharSpy(0); }
"""


def test_a_macro_statement_without_a_semicolon_is_not_a_definition():
    tab = extract_symbols(UNITY.encode(), "c")
    assert kinds(tab) == {
        "testNotEqualInt16Arrays": "function", "testEqualInt16EachEqual": "function",
        "testNotEqualInt16EachEqual": "function", "flags": "enum", "putcharSpy": "function",
        "endPutcharSpy": "function"}
    lines = UNITY.splitlines()
    assert lines[tab["endPutcharSpy"].start_line - 1].startswith("void endPutcharSpy(void) {")
    assert lines[tab["testNotEqualInt16Arrays"].end_line - 1] == "}"
    # the same in a .h (read as C++) and with the macros' own edits seen
    assert set(extract_symbols(UNITY.encode(), "cpp")) == set(tab)
    renamed = extract_symbols(UNITY.replace("VERIFY_FAILS_END\n}\n\nvoid testEqual", "VERIFY_FAILS\n}\n\nvoid "
                                            "testEqual").encode(), "c")
    assert renamed["testNotEqualInt16Arrays"].fingerprint != tab["testNotEqualInt16Arrays"].fingerprint
    assert renamed["endPutcharSpy"].fingerprint == tab["endPutcharSpy"].fingerprint
    # a lone capitalised word that continues an expression or ends an enum is left as it is
    src = b"int f(int a) {\n    return g(a,\n        FLAG_B\n    );\n}\nenum e {\n    X,\n    Y\n};\n"
    assert kinds(extract_symbols(src, "c")) == {"f": "function", "e": "enum"}


def test_a_function_recovered_from_a_broken_body_is_not_a_symbol(monkeypatch: pytest.MonkeyPatch):
    # without the macro statements made statements, tree-sitter's recovery leaves testNotEqualInt16Arrays'
    # body as loose tokens and reads TEST_ASSERT_EQUAL_INT16_ARRAY(...) as a function defined inside it
    from gitmem.code import lang_c

    excerpt = (FIXTURES / "c/testunity_excerpt.c").read_bytes()
    mended = extract_symbols(excerpt, "c")
    monkeypatch.setattr(lang_c, "_macro_statements", lambda src: src)
    recovered = extract_symbols(excerpt, "c")
    assert not [n for n in recovered if n.startswith(("TEST_", "VERIFY_", "EXPECT_"))], list(recovered)
    assert set(recovered) <= set(mended) and not [n for n in mended if n.startswith("TEST_")]
    assert len(mended) == 17 and all(s.kind == "function" for s in mended.values())


def test_a_macro_statement_does_not_make_a_later_function_stale(tmp_path: Path):
    root = make_repo(tmp_path / "r", {"tests/testunity.c": UNITY})
    repo = Repo(root)
    a = Resolver(repo).make("tests/testunity.c", "endPutcharSpy")
    c = commit(root, "another test", {"tests/testunity.c": UNITY.replace("{1, 1, 1, 1}", "{2, 2, 2, 2}")})
    assert Resolver(repo).status(a, c).status == Status.FRESH
    c = commit(root, "spy", {"tests/testunity.c": UNITY.replace("putcharSpy(0); }", "putcharSpy(1); }")})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.STALE and st.commit == c
