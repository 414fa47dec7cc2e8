"""Tests for gitmem.code: symbol names, kinds, spans, fingerprints, caches.

Real tree-sitter parses throughout; fixtures under tests/fixtures/code/ hold
one file per language with known qualified names.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gitmem.code import symbols as S
from gitmem.code.languages import SUPPORTED_LANGUAGES, language_for_path
from gitmem.code.specs import ANALYZERS, SPEC_ANALYZERS, SPECS
from gitmem.code.symbols import (
    EXTRACTOR_VERSION,
    closest_names,
    extract_symbols,
    file_fingerprint,
    find_by_fingerprint,
    set_cache_dir,
    symbol_table,
)
from gitmem.model import Symbol
from testing.symbols import FIXTURES, fixture, kinds, table

REPO = Path(__file__).resolve().parents[1]


pytestmark = pytest.mark.usefixtures("fresh_symbol_caches")


def sym(src: str, language: str, name: str) -> Symbol:
    tab = table(src, language)
    assert name in tab, f"{name!r} not in {list(tab)}"
    return tab[name]


# --------------------------------------------------------------------------- languages


@pytest.mark.parametrize("path, language", [
    ("a.py", "python"), ("a.pyi", "python"), ("src/A.PY", "python"),
    ("a.js", "javascript"), ("a.mjs", "javascript"), ("a.cjs", "javascript"), ("a.jsx", "javascript"),
    ("a.ts", "typescript"), ("a.mts", "typescript"), ("a.cts", "typescript"), ("types.d.ts", "typescript"),
    ("a.tsx", "tsx"), ("a.go", "go"), ("a.rs", "rust"), ("A.java", "java"),
    ("README.txt", None), ("LICENSE", None), ("a.py.bak", None), (".py", None),
])
def test_language_for_path(path, language):
    assert language_for_path(path) == language


def test_every_supported_language_has_rules_and_a_grammar():
    assert set(SPECS) | set(ANALYZERS) | set(SPEC_ANALYZERS) == set(SUPPORTED_LANGUAGES)
    assert len(SPECS) + len(ANALYZERS) + len(SPEC_ANALYZERS) == len(SUPPORTED_LANGUAGES)
    for language in SUPPORTED_LANGUAGES:
        assert extract_symbols(b"", language) == {}


def test_importing_languages_does_not_import_tree_sitter():
    code = ("import sys; import gitmem.code, gitmem.code.languages; "
            "print(any(m == 'tree_sitter' or m.startswith('tree_sitter') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------- qualified names and kinds


def test_python_names_and_kinds():
    assert kinds(fixture("sample.py")) == {
        "typed_only": "function",
        "top": "function",
        "top.inner": "function",
        "top.inner.innermost": "function",
        "decorated": "function",
        "Signer": "class",
        "Signer.__init__": "method",
        "Signer.name": "method",  # the property: getter and setter are one symbol
        "Signer.sign": "method",
        "Signer.Inner": "class",
        "Signer.Inner.method": "method",
        "Signer.conditional": "method",
        "fallback": "function",
    }


def test_python_spans():
    tab = fixture("sample.py")
    assert (tab["decorated"].start_line, tab["decorated"].end_line) == (20, 23)  # from the first decorator
    assert (tab["Signer.name"].start_line, tab["Signer.name"].end_line) == (34, 40)  # getter to setter
    assert tab["Signer.name"].aliases == ("Signer.name#2",)
    assert (tab["Signer.sign"].start_line, tab["Signer.sign"].end_line) == (42, 44)
    assert (tab["Signer"].start_line, tab["Signer"].end_line) == (26, 52)
    assert (tab["top.inner.innermost"].start_line, tab["top.inner.innermost"].end_line) == (14, 15)


def test_python_trailing_comment_is_not_in_the_span():
    tab = table("""\
        class A:
            def f(self):
                return 1
            # trailing comment

        def g(): pass
        """, "python")
    assert (tab["A"].start_line, tab["A"].end_line) == (1, 3)
    assert (tab["A.f"].start_line, tab["A.f"].end_line) == (2, 3)


def test_table_is_ordered_by_start_line_parents_first():
    for name in ("sample.py", "sample.js", "sample.ts", "sample.go", "sample.rs", "Sample.java"):
        tab = fixture(name)
        starts = [s.start_line for s in tab.values()]
        assert starts == sorted(starts), name
    tab = table("class A { m() {} }", "javascript")
    assert list(tab) == ["A", "A.m"]


def test_javascript_names_and_kinds():
    assert kinds(fixture("sample.js")) == {
        "plain": "function",
        "plain.nested": "function",
        "plain.arrowInside": "function",
        "gen": "function",
        "exported": "function",
        "Widget": "class",
        "Widget.handler": "method",
        "Widget.bound": "method",
        "Widget.constructor": "constructor",
        "Widget.size": "method",
        "Widget.size#2": "method",
        "Widget.render": "method",
        "Widget.create": "method",
        "arrow": "function",
        "fnExpr": "function",
        "Klass": "class",
        "Klass.method": "method",
        "exportedArrow": "function",
        "Legacy": "function",
        "Legacy.run": "method",
        "exports.helper": "function",
        "module.exports.other": "function",
        "module.exports.alpha": "function",
        "module.exports.beta": "function",
        "module.exports.gamma": "function",
    }


def test_javascript_spans():
    tab = fixture("sample.js")
    assert (tab["Widget"].start_line, tab["Widget"].end_line) == (20, 43)
    assert (tab["Widget.constructor"].start_line, tab["Widget.constructor"].end_line) == (25, 28)
    assert (tab["fnExpr"].start_line, tab["fnExpr"].end_line) == (46, 48)
    assert (tab["Legacy.run"].start_line, tab["Legacy.run"].end_line) == (55, 57)
    assert (tab["exported"].start_line, tab["exported"].end_line) == (16, 18)  # `export` included


@pytest.mark.parametrize("src, expected", [
    ("export default function () { return 1; }", {"default": "function"}),
    ("export default async function* () {}", {"default": "function"}),
    ("export default () => {};", {"default": "function"}),
    ("export default class { m() {} }", {"default": "class", "default.m": "method"}),
    ("export default function named() {}", {"named": "function"}),
    ("export default 42;", {}),
    ("module.exports = function () {};", {"module.exports": "function"}),
    ("A.prototype = { m() {}, n: function () {} };", {"A.m": "method", "A.n": "method"}),
    ("Foo.bar = () => 1;", {"Foo.bar": "function"}),
    ("this.x = function () {};", {}),
    ("a[0] = function () {};", {}),
    ("const a = 1, b = () => 2;", {"b": "function"}),
    ("const { a } = obj;", {}),
    ("foo(function cb() {}, () => 1);", {}),
    ("const o = { m() { function hidden() {} } };", {}),
    ("new (class { m() {} })();", {}),
    ("(function () { function iife() {} })();", {"iife": "function"}),
    ("function f() {} function f() {}", {"f": "function", "f#2": "function"}),
    ("class A { #priv() {} static s() {} }", {"A": "class", "A.#priv": "method", "A.s": "method"}),
])
def test_javascript_shapes(src, expected):
    assert kinds(table(src, "javascript")) == expected


def test_typescript_names_and_kinds():
    assert kinds(fixture("sample.ts")) == {
        "Shape": "interface",
        "Point": "type",
        "Color": "enum",
        "Base": "class",
        "Base.area": "method",
        "Base.constructor": "constructor",
        "Base.describe": "method",
        "Base.make": "method",
        "Base.onClick": "method",
        "Geometry": "namespace",
        "Geometry.distance": "function",
        "Geometry.Inner": "namespace",
        "Geometry.Inner.scale": "function",
        "ambient": "function",
        "overloaded": "function",
        "default": "class",
        "default.run": "method",
    }


def test_typescript_overloads_fold_into_the_implementation():
    tab = fixture("sample.ts")
    assert (tab["overloaded"].start_line, tab["overloaded"].end_line) == (48, 52)
    assert (tab["Base.describe"].start_line, tab["Base.describe"].end_line) == (22, 26)
    assert (tab["Base.make"].start_line, tab["Base.make"].end_line) == (28, 31)  # decorator line included
    assert tab["Base.area"].body_fp == ""  # abstract: no body
    assert tab["Base.make"].decorators_fp != ""


@pytest.mark.parametrize("src, expected", [
    ("declare module 'pkg' { function g(): void; }", {"pkg": "namespace", "pkg.g": "function"}),
    ("module M { export class K {} }", {"M": "namespace", "M.K": "class"}),
    ("export abstract class Q { abstract m(): void; }", {"Q": "class", "Q.m": "method"}),
    ("const enum E { A }", {"E": "enum"}),
    ("export type F = (a: number) => void;", {"F": "type"}),
    ("export const f = <T,>(a: T): T => a;", {"f": "function"}),
    ("class A { x: { m(): void }; y = 1; z: () => void; w = g(() => { function h() {} }); }", {"A": "class"}),
    ("class A { a(x: string): void; @d() a(x: any) {} }", {"A": "class", "A.a": "method"}),
])
def test_typescript_shapes(src, expected):
    assert kinds(table(src, "typescript")) == expected


def test_tsx_names_and_kinds():
    assert kinds(fixture("sample.tsx")) == {
        "Props": "interface",
        "Header": "function",
        "Card": "function",
        "Page": "class",
        "Page.render": "method",
    }


def test_tsx_spans_and_jsx_in_javascript():
    tab = fixture("sample.tsx")
    assert (tab["Card"].start_line, tab["Card"].end_line) == (11, 16)
    assert (tab["Page"].start_line, tab["Page"].end_line) == (18, 22)
    jsx = table("""\
        export function App() {
          return <ul>{items.map((i) => <Item key={i} />)}</ul>;
        }
        const Item = ({ k }) => <li>{k}</li>;
        """, "javascript")
    assert kinds(jsx) == {"App": "function", "Item": "function"}


def test_go_names_and_kinds():
    assert kinds(fixture("sample.go")) == {
        "Server": "struct",
        "Handler": "interface",
        "ID": "type",
        "Count": "type",
        "List": "struct",
        "Open": "function",
        "Server.Serve": "method",
        "Server.Addr": "method",
        "List.Push": "method",
        "Map": "function",
        "Map.pair": "struct",
    }


def test_go_spans():
    tab = fixture("sample.go")
    assert (tab["Server"].start_line, tab["Server"].end_line) == (7, 9)  # doc comment not included
    assert (tab["List"].start_line, tab["List"].end_line) == (18, 20)  # one spec of a group
    assert (tab["Server.Serve"].start_line, tab["Server.Serve"].end_line) == (28, 31)


def test_rust_names_and_kinds():
    assert kinds(fixture("sample.rs")) == {
        "Point": "struct",
        "Shape": "enum",
        "Area": "trait",
        "Area.area": "method",
        "Area.describe": "method",
        "Point.new": "method",
        "Point.describe": "method",
        "Point.area": "method",
        "Point.describe#2": "method",  # trait impl after the inherent method of the same name
        "Shape.fmt": "method",
        "Pair": "type",
        "free": "function",
        "free.helper": "function",
        "inner": "module",
        "inner.in_mod": "function",
        "inner.Hidden": "struct",
        "inner.Hidden.reveal": "method",
        "square": "macro",
    }


def test_rust_attributes_belong_to_the_item():
    tab = fixture("sample.rs")
    assert (tab["Point"].start_line, tab["Point"].end_line) == (5, 9)
    assert tab["Point"].decorators_fp != ""
    assert tab["Shape"].decorators_fp == ""


@pytest.mark.parametrize("src, expected", [
    ("impl<'a> From<&'a str> for &'a mut crate::x::Foo<'a> { fn from(s: &str) -> Self { todo!() } }",
     {"Foo.from": "method"}),
    ("impl dyn Foo { fn a(&self) {} }\nimpl dyn a::Bar<T> + Send { fn b(&self) {} }",
     {"Foo.a": "method", "Bar.b": "method"}),
    ("union U { a: i32 }", {"U": "union"}),
    ("mod tests;", {"tests": "module"}),
    ("extern \"C\" { fn c_fn(); }", {"c_fn": "function"}),
])
def test_rust_shapes(src, expected):
    assert kinds(table(src, "rust")) == expected


def test_java_names_and_kinds():
    assert kinds(fixture("Sample.java")) == {
        "Sample": "class",
        "Sample.Sample()": "constructor",
        "Sample.Sample(int)": "constructor",
        "Sample.run": "method",
        "Sample.add(int)": "method",
        "Sample.add(int,int)": "method",
        "Sample.Nested": "class",
        "Sample.Nested.deep": "method",
        "Sample.Nested.deep.Local": "class",
        "Sample.Nested.deep.Local.inLocal": "method",
        "Sample.Listener": "interface",
        "Sample.Listener.onEvent": "method",
        "Sample.Listener.reset": "method",
        "Sample.Mode": "enum",
        "Sample.Mode.enabled": "method",
        "Sample.Pair": "record",
        "Sample.Pair.Pair": "constructor",
        "Sample.Pair.sum": "method",
    }


def test_java_annotations_belong_to_the_symbol():
    tab = fixture("Sample.java")
    assert (tab["Sample"].start_line, tab["Sample"].end_line) == (6, 67)  # @Deprecated, not the Javadoc
    assert (tab["Sample.run"].start_line, tab["Sample.run"].end_line) == (18, 25)
    assert tab["Sample.run"].decorators_fp != ""
    assert tab["Sample.add(int)"].decorators_fp == ""


# --------------------------------------------------------------------------- fingerprints

# (language, symbol, base source, equivalent rewrites, real edits)
FP_CASES = [
    ("python", "target", '''\
        @decorator(1)
        def target(a, b):
            """Doc."""
            x = [a, b, "k"]
            if a:
                x.append(0x1F)
            return x
        ''', [
        # re-indented, reformatted, trailing commas, quote style, hex case
        '''\
        @decorator( 1 )
        def target(
                a,
                b,
        ):
          """Doc."""
          x = [
              a,
              b,
              'k',
          ]
          if a:
              x.append(0x1f)
          return x
        ''',
        # comments and a different docstring
        '''\
        # leading comment
        @decorator(1)  # why
        def target(a, b):
            """Another docstring entirely."""
            # explain
            x = [a, b, "k"]  # trailing
            if a:
                x.append(0x1F)
            return x
        ''',
        # no docstring, redundant parentheses a formatter adds when splitting
        '''\
        @decorator(1)
        def target(a, b):
            x = ([a, b, "k"])
            if (a):
                x.append(0x1F)
            return (
                x
            )
        ''',
    ], [
        '''\
        @decorator(1)
        def target(a, b):
            y = [a, b, "k"]
            if a:
                y.append(0x1F)
            return y
        ''',
        '''\
        @decorator(1)
        def target(a, b):
            x = [a, b, "K"]
            if a:
                x.append(0x1F)
            return x
        ''',
        '''\
        @decorator(1)
        def target(a, b):
            x = [a, b, "k"]
            if a:
                x.append(0x1F)
            x.sort()
            return x
        ''',
        # the same tokens with another block structure
        '''\
        @decorator(1)
        def target(a, b):
            x = [a, b, "k"]
            if a:
                x.append(0x1F)
                return x
        ''',
    ]),
    ("javascript", "target", '''\
        export function target(a, b) {
          const x = [a, b, "k"];
          items.forEach((item) => x.push(item));
          return x;
        }
        ''', [
        '''\
        export function target(a, b,) {
            const x = [
                a,
                b,
                'k',
            ]
            items.forEach(item => x.push(item))
            return (x)
        }
        ''',
        '''\
        /** JSDoc. */
        export function target(a, b) {
          // comment
          const x = [a, b, "k"]; /* inline */
          items.forEach((item) => x.push(item));
          return x;
        }
        ''',
    ], [
        '''\
        export function target(a, b) {
          const y = [a, b, "k"];
          items.forEach((item) => y.push(item));
          return y;
        }
        ''',
        '''\
        export function target(a, b) {
          const x = [a, b, "k", "l"];
          items.forEach((item) => x.push(item));
          return x;
        }
        ''',
        '''\
        function target(a, b) {
          const x = [a, b, "k"];
          items.forEach((item) => x.push(item));
          return x;
        }
        ''',
        '''\
        export function target(a, b) {
          const x = [a, b, "k"];
          for (;;) items.forEach((item) => x.push(item));
          return x;
        }
        ''',
    ]),
    ("typescript", "Box.target", '''\
        class Box {
          @logged()
          public target(a: string, b: number): string[] {
            const x: string[] = [a, String(b)];
            return x;
          }
        }
        ''', [
        '''\
        class Box {
            @logged()
            public target(
                a: string,
                b: number,
            ): string[] {
                // comment
                const x: string[] = [a, String(b),]
                return x
            }
        }
        ''',
    ], [
        '''\
        class Box {
          @logged()
          public target(a: string, b: number): string[] {
            const x: string[] = [a, String(b)];
            return x.reverse();
          }
        }
        ''',
        '''\
        class Box {
          @logged()
          public target(a: string, b: number): readonly string[] {
            const x: string[] = [a, String(b)];
            return x;
          }
        }
        ''',
    ]),
    ("tsx", "View", '''\
        export const View = ({ title }: Props) => (
          <div className="view">
            <h1>{title}</h1>
            hello   world
          </div>
        );
        ''', [
        '''\
        export const View = ({ title }: Props) => (
            <div className='view'>
                <h1>{title}</h1>
                hello world
            </div>
        )
        ''',
    ], [
        '''\
        export const View = ({ title }: Props) => (
          <div className="view">
            <h2>{title}</h2>
            hello   world
          </div>
        );
        ''',
        '''\
        export const View = ({ title }: Props) => (
          <div className="view">
            <h1>{title}</h1>
            hello   there
          </div>
        );
        ''',
    ]),
    ("go", "Server.Target", '''\
        package p

        func (s *Server) Target(a int, b int) []int {
        	x := []int{a, b}
        	if a > 0 { x = append(x, 1) }
        	return x
        }
        ''', [
        '''\
        package p

        // Target does things.
        func (s *Server) Target(a int, b int) []int {
            x := []int{
                a,
                b,
            }; if a > 0 {
                x = append(x, 1)
            }
            return x // done
        }
        ''',
    ], [
        '''\
        package p

        func (s *Server) Target(a int, b int) []int {
        	y := []int{a, b}
        	if a > 0 { y = append(y, 1) }
        	return y
        }
        ''',
        '''\
        package p

        func (s *Server) Target(a int, b int) []int {
        	x := []int{a, b}
        	if a >= 0 { x = append(x, 1) }
        	return x
        }
        ''',
    ]),
    ("rust", "Point.target", '''\
        impl Point {
            #[inline]
            pub fn target(&self, a: i32, b: i32) -> Vec<i32> {
                let x = vec![a, b];
                x
            }
        }
        ''', [
        '''\
        impl Point {
            /// Doc comment.
            #[inline]
            pub fn target(
                &self,
                a: i32,
                b: i32,
            ) -> Vec<i32> {
                // comment
                let x = vec![a, b];
                x /* the result */
            }
        }
        ''',
    ], [
        '''\
        impl Point {
            #[inline]
            pub fn target(&self, a: i32, b: i32) -> Vec<i32> {
                let x = vec![a, b];
                x;
            }
        }
        ''',
        '''\
        impl Point {
            #[inline]
            pub fn target(&self, a: i32, b: i32) -> Vec<i32> {
                let y = vec![a, b];
                y
            }
        }
        ''',
    ]),
    ("java", "C.target", '''\
        class C {
          @Override
          public int target(int a, int b) {
            int x = a + b;
            return x;
          }
        }
        ''', [
        '''\
        class C {
            /** Javadoc. */
            @Override
            public int target(
                int a,
                int b
            ) {
                // comment
                int x = a + b; /* block */
                return x;
            }
        }
        ''',
    ], [
        '''\
        class C {
          @Override
          public int target(int a, int b) {
            int x = a - b;
            return x;
          }
        }
        ''',
        '''\
        class C {
          @Override
          public int target(int a, int b) {
            int x = a + b;
            x++;
            return x;
          }
        }
        ''',
    ]),
]


@pytest.mark.parametrize("language, name, base, same, changed", FP_CASES, ids=[c[0] for c in FP_CASES])
def test_fingerprint_ignores_formatting_and_sees_token_edits(language, name, base, same, changed):
    original = sym(base, language, name)
    assert original.fingerprint.startswith("ts1:") and len(original.fingerprint) == 4 + 32
    crlf = textwrap.dedent(base).replace("\n", "\r\n")
    variants = [*same, crlf]
    for i, variant in enumerate(variants):
        got = sym(variant, language, name)
        assert (got.fingerprint, got.signature_fp, got.body_fp, got.decorators_fp) == (
            original.fingerprint, original.signature_fp, original.body_fp, original.decorators_fp), f"same #{i}"
    for i, variant in enumerate(changed):
        assert sym(variant, language, name).fingerprint != original.fingerprint, f"changed #{i}"


# (language, symbol, base, body edit, signature edit, decorator edit or None, renamed symbol)
PART_CASES = [
    ("python", "C.m", "C.renamed",
     "class C:\n    @dec\n    def m(self, a):\n        return 1\n",
     "class C:\n    @dec\n    def m(self, a):\n        return 2\n",
     "class C:\n    @dec\n    def m(self, a, b=None):\n        return 1\n",
     "class C:\n    @dec(strict=True)\n    def m(self, a):\n        return 1\n",
     "class C:\n    @dec\n    def renamed(self, a):\n        return 1\n"),
    ("javascript", "f", "g",
     "export function f(a) { return a + 1; }",
     "export function f(a) { return a + 2; }",
     "export function f(a, b) { return a + 1; }",
     None,
     "export function g(a) { return a + 1; }"),
    ("typescript", "A.m", "A.n",
     "class A { @dec m(a: string): void { go(a); } }",
     "class A { @dec m(a: string): void { stop(a); } }",
     "class A { @dec m(a: string): number { go(a); } }",
     "class A { @other m(a: string): void { go(a); } }",
     "class A { @dec n(a: string): void { go(a); } }"),
    ("go", "T.M", "T.N",
     "package p\nfunc (t *T) M(a int) int { return a }\n",
     "package p\nfunc (t *T) M(a int) int { return -a }\n",
     "package p\nfunc (t *T) M(a int) int64 { return a }\n",
     None,
     "package p\nfunc (t *T) N(a int) int { return a }\n"),
    ("rust", "S.m", "S.n",
     "impl S {\n    #[inline]\n    fn m(&self) -> i32 { 1 }\n}\n",
     "impl S {\n    #[inline]\n    fn m(&self) -> i32 { 2 }\n}\n",
     "impl S {\n    #[inline]\n    pub fn m(&self) -> i32 { 1 }\n}\n",
     "impl S {\n    #[inline(always)]\n    fn m(&self) -> i32 { 1 }\n}\n",
     "impl S {\n    #[inline]\n    fn n(&self) -> i32 { 1 }\n}\n"),
    ("java", "C.m", "C.n",
     "class C { @Deprecated public int m(int a) { return a; } }",
     "class C { @Deprecated public int m(int a) { return a * 2; } }",
     "class C { @Deprecated public long m(int a) { return a; } }",
     "class C { @Override public int m(int a) { return a; } }",
     "class C { @Deprecated public int n(int a) { return a; } }"),
]


@pytest.mark.parametrize("language, name, new_name, base, body, signature, decorator, renamed", PART_CASES,
                         ids=[c[0] for c in PART_CASES])
def test_fingerprint_parts(language, name, new_name, base, body, signature, decorator, renamed):
    b = sym(base, language, name)
    assert b.signature_fp and b.body_fp

    x = sym(body, language, name)
    assert x.body_fp != b.body_fp and x.fingerprint != b.fingerprint
    assert (x.signature_fp, x.decorators_fp) == (b.signature_fp, b.decorators_fp)

    x = sym(signature, language, name)
    assert x.signature_fp != b.signature_fp and x.fingerprint != b.fingerprint
    assert (x.body_fp, x.decorators_fp) == (b.body_fp, b.decorators_fp)

    if decorator is not None:
        assert b.decorators_fp
        x = sym(decorator, language, name)
        assert x.decorators_fp != b.decorators_fp and x.fingerprint != b.fingerprint
        assert (x.body_fp, x.signature_fp) == (b.body_fp, b.signature_fp)
    else:
        assert b.decorators_fp == ""

    tab = table(renamed, language)
    assert name not in tab
    x = tab[new_name]
    assert (x.body_fp, x.decorators_fp) == (b.body_fp, b.decorators_fp)
    assert x.fingerprint != b.fingerprint and x.signature_fp != b.signature_fp
    assert find_by_fingerprint(tab, b.body_fp, field="body_fp") == [new_name]


def test_one_element_tuple_comma_is_not_formatting():
    py = [sym(f"def f():\n    return {v}\n", "python", "f").fingerprint for v in ("(1,)", "(1)", "1")]
    assert py[0] != py[1]
    assert sym("def f():\n    return x[a,]\n", "python", "f").fingerprint != \
        sym("def f():\n    return x[a]\n", "python", "f").fingerprint
    assert sym("def f():\n    return (1, 2,)\n", "python", "f").fingerprint == \
        sym("def f():\n    return (1, 2)\n", "python", "f").fingerprint
    rs = [sym(f"fn f() {{ let t = {v}; }}", "rust", "f").fingerprint for v in ("(1,)", "(1)")]
    assert rs[0] != rs[1]
    js = [sym(f"function f() {{ return {v}; }}", "javascript", "f").fingerprint for v in ("[,]", "[]", "[a,,]", "[a,]")]
    assert len(set(js)) == 4


def test_strings_keep_their_value():
    fp = [sym(f"def f():\n    return {v}\n", "python", "f").fingerprint
          for v in ('"it\'s"', "'it\\'s'", "'''it's'''")]
    assert len(set(fp)) == 1
    assert sym("def f():\n    return r'\\''\n", "python", "f").fingerprint != \
        sym("def f():\n    return r\"'\"\n", "python", "f").fingerprint
    assert sym("def f():\n    return b'x'\n", "python", "f").fingerprint != \
        sym("def f():\n    return 'x'\n", "python", "f").fingerprint
    assert sym("def f():\n    return 'a  b'\n", "python", "f").fingerprint != \
        sym("def f():\n    return 'a b'\n", "python", "f").fingerprint
    assert sym("def f():\n    return f'{a}'\n", "python", "f").fingerprint != \
        sym("def f():\n    return f'{b}'\n", "python", "f").fingerprint


def test_javascript_parentheses_that_matter_are_kept():
    def fp(src: str) -> str:
        return sym(src, "javascript", "f").fingerprint
    assert fp("const f = () => ({ a: 1 });") != fp("const f = () => { a: 1 };")
    assert fp("function f() { const x = (a, b); }") != fp("function f() { const x = a, b; }")
    assert fp("function f() { return (a + b) * c; }") != fp("function f() { return a + b * c; }")
    assert fp("const f = x => x;") == fp("const f = (x) => x;")


@pytest.mark.parametrize("language, a, b, same", [
    # prettier makes operator precedence explicit; only redundant parentheses are formatting
    ("javascript", "function f() { return a && b || c; }", "function f() { return (a && b) || c; }", True),
    ("javascript", "function f() { return a * b + c; }", "function f() { return (a * b) + c; }", True),
    ("javascript", "function f() { return a - b - c; }", "function f() { return (a - b) - c; }", True),
    ("typescript", "function f() { return a % b * c; }", "function f() { return (a % b) * c; }", True),
    ("javascript", "function f() { return a && b || c; }", "function f() { return a && (b || c); }", False),
    ("javascript", "function f() { return a - b - c; }", "function f() { return a - (b - c); }", False),
    ("javascript", "function f() { return a ** b ** c; }", "function f() { return (a ** b) ** c; }", False),
    ("javascript", "function f() { return a ** b ** c; }", "function f() { return a ** (b ** c); }", True),
    ("javascript", "function f() { return a + b; }", "function f() { return (a + b); }", True),
    # black drops empty class parentheses; rustfmt drops the comma after a block match arm
    ("python", "class f:\n    pass\n", "class f():\n    pass\n", True),
    ("python", "class f:\n    pass\n", "class f(B):\n    pass\n", False),
    ("rust", "fn f() { match x { A => { 1 } B => 2 } }", "fn f() { match x { A => { 1 }, B => 2, } }", True),
    ("rust", "fn f() { match x { A => 1, B => 2 } }", "fn f() { match x { A => 1, B => 2, } }", True),
])
def test_formatter_rewrites(language, a, b, same):
    assert (sym(a, language, "f").fingerprint == sym(b, language, "f").fingerprint) is same


def test_edit_elsewhere_in_the_file_keeps_the_fingerprint():
    base = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    edited = "import os\n\n\ndef a():\n    return os.sep\n\n\ndef b():\n    return 2\n"
    before, after = table(base, "python"), table(edited, "python")
    assert before["b"].fingerprint == after["b"].fingerprint
    assert (before["b"].start_line, after["b"].start_line) == (5, 8)
    assert before["a"].fingerprint != after["a"].fingerprint


def test_nested_symbol_fingerprint_ignores_its_siblings():
    one = table("class C:\n    def a(self): pass\n    def b(self): pass\n", "python")
    two = table("class C:\n    def a(self): pass\n    def b(self): pass\n    def c(self): pass\n", "python")
    assert one["C.a"].fingerprint == two["C.a"].fingerprint
    assert one["C.b"].fingerprint == two["C.b"].fingerprint
    assert one["C"].fingerprint != two["C"].fingerprint


def test_symbols_without_a_body():
    tab = table("interface I { m(): void }\ntype T = string;\n", "typescript")
    assert tab["T"].body_fp and tab["T"].signature_fp  # body = the right-hand side
    abstract = sym("abstract class A { abstract m(): void; }", "typescript", "A.m")
    assert abstract.body_fp == "" and abstract.signature_fp == abstract.fingerprint
    go = sym("package p\ntype X struct { a int }\n", "go", "X")
    assert go.body_fp and go.signature_fp
    assert sym("package p\ntype Y struct { a int }\n", "go", "Y").body_fp == go.body_fp  # renamed type


# --------------------------------------------------------------------------- file fingerprints


def test_file_fingerprint_for_code():
    base = b'"""Module doc."""\nimport os\n\n\ndef f():\n    return os.sep\n'
    fp = file_fingerprint(base, "m.py")
    assert fp.startswith("ts1:")
    assert file_fingerprint(b'"""Changed doc."""\n# note\nimport os\n\ndef f():\n  return os.sep\n', "m.py") == fp
    assert file_fingerprint(base.replace(b"\n", b"\r\n"), "m.py") == fp
    assert file_fingerprint(b"\xef\xbb\xbf" + base, "m.py") == fp
    assert file_fingerprint(base + b"X = 1\n", "m.py") != fp
    assert file_fingerprint(base.replace(b"os.sep", b"os.pathsep"), "m.py") != fp


def test_file_fingerprint_shares_the_symbol_cache(tmp_path):
    set_cache_dir(tmp_path)
    src = (FIXTURES / "sample.rs").read_bytes()
    symbol_table(src, "sample.rs", blob_sha="cd" * 20)
    assert file_fingerprint(src, "sample.rs", blob_sha="cd" * 20) == file_fingerprint(src, "sample.rs")
    assert len(list(tmp_path.rglob("*.json"))) == 2  # by blob id, and by content hash


def test_file_fingerprint_for_other_files():
    fp = file_fingerprint(b"# Title\n\nSome text.\n", "notes.txt")
    assert fp.startswith("raw1:")
    assert file_fingerprint(b"# Title  \r\n\r\nSome text.\t\r\n", "notes.txt") == fp
    assert file_fingerprint(b"# Title\n\nSome  text.\n", "notes.txt") != fp
    binary = b"\x89PNG\r\n\x1a\n\x00\x00\x00"
    assert file_fingerprint(binary, "image.py").startswith("raw1:")
    assert file_fingerprint(b"", "empty.py").startswith("ts1:")


# --------------------------------------------------------------------------- robustness


def test_binary_and_empty_files_have_no_symbols():
    assert symbol_table(b"def f():\x00 pass\n", "a.py") == {}
    assert symbol_table("def f(): pass\n".encode("utf-16"), "a.py") == {}
    assert symbol_table(b"", "a.py") == {}
    assert symbol_table(b"   \n\n", "a.py") == {}
    assert symbol_table(b"def f(): pass\n", "notes.txt") == {}


def test_non_utf8_source_does_not_crash():
    src = b"def caf\xe9(x):\n    return '\xff\xfe'\n\nclass K:\n    def m(self): pass\n"
    tab = symbol_table(src, "latin1.py")
    assert "K.m" in tab
    assert any(name.startswith("caf") for name in tab)
    assert file_fingerprint(src, "latin1.py").startswith("ts1:")


def test_syntax_errors_keep_the_symbols_that_parse():
    src = b"def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass Fine:\n    def m(self):\n        return 2\n"
    tab = symbol_table(src, "err.py")
    assert {"ok", "Fine", "Fine.m"} <= set(tab)
    js = symbol_table(b"function ok() { return 1 }\nfunction bad( { \nclass Fine { m() {} }\n", "err.js")
    assert "ok" in js


def test_large_file_parses():
    chunk = "def f{i}(a, b):\n    '''Doc.'''\n    x = [a, b, {i}]\n    return x\n\n\n"
    src = "".join(chunk.format(i=i) for i in range(30000)).encode()
    assert len(src) > 2_000_000
    start = time.perf_counter()
    tab = symbol_table(src, "big.py")
    elapsed = time.perf_counter() - start
    assert len(tab) == 30000 and tab["f29999"].start_line == 29999 * 6 + 1
    assert elapsed < 60  # about 1-2 s on a laptop; this only catches pathologies


def test_deeply_nested_expression_does_not_recurse():
    src = ("def f():\n    return " + "(" * 400 + "1" + ")" * 400 + "\n").encode()
    assert "f" in symbol_table(src, "deep.py")
    chain = ("def g():\n    return " + " + ".join(["a"] * 20000) + "\n").encode()
    assert "g" in symbol_table(chain, "chain.py")


def test_gitmem_own_sources_parse():
    for path in sorted((REPO / "gitmem").rglob("*.py")):
        src = path.read_bytes()
        tab = symbol_table(src, path.name)
        assert isinstance(tab, dict)
        assert file_fingerprint(src, path.name).startswith("ts1:")
    tab = symbol_table((REPO / "gitmem" / "code" / "symbols.py").read_bytes(), "symbols.py")
    assert tab["symbol_table"].kind == "function"
    assert tab["_Tokens.digest"].kind == "method"


# --------------------------------------------------------------------------- caches


def test_memory_cache_returns_the_same_object():
    src = (FIXTURES / "sample.py").read_bytes()
    first = symbol_table(src, "sample.py")
    start = time.perf_counter()
    second = symbol_table(src, "sample.py")
    assert second is first
    assert time.perf_counter() - start < 0.05
    assert symbol_table(src, "other/sample.py", blob_sha="f" * 40) == first
    assert symbol_table(src, "sample.pyi") is first  # same content, same language


def test_memory_cache_key_includes_the_language():
    src = b"function f() {}\n"
    assert symbol_table(src, "a.js") != {}
    assert symbol_table(src, "a.py") == {}  # not valid Python: no symbols, and no stale JS table


def test_disk_cache_round_trip(tmp_path):
    set_cache_dir(tmp_path / "cache")
    src = (FIXTURES / "sample.go").read_bytes()
    sha = "ab" * 20
    first = symbol_table(src, "sample.go", blob_sha=sha)
    path = tmp_path / "cache" / EXTRACTOR_VERSION / "ab" / f"{sha}.go.json"
    assert path.is_file()
    assert not list(path.parent.glob(".tmp-*"))

    S.clear_memory_cache()
    again = symbol_table(src, "sample.go", blob_sha=sha)
    assert again == first and again is not first

    # the disk copy is what is read (tampered on purpose)
    data = json.loads(path.read_text())
    data["symbols"][0][1] = "tampered"
    path.write_text(json.dumps(data))
    S.clear_memory_cache()
    assert next(iter(symbol_table(src, "sample.go", blob_sha=sha).values())).kind == "tampered"

    # a corrupt or foreign file is ignored and rewritten
    for junk in ("{not json", json.dumps({"version": "old"}), json.dumps({**data, "symbols": [[1, 2]]})):
        path.write_text(junk)
        S.clear_memory_cache()
        assert symbol_table(src, "sample.go", blob_sha=sha) == first
    assert json.loads(path.read_text())["version"] == EXTRACTOR_VERSION


def test_unusable_disk_cache_is_ignored(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    set_cache_dir(blocker)
    src = b"def f(): pass\n"
    assert list(symbol_table(src, "a.py")) == ["f"]
    set_cache_dir(tmp_path / "ok")
    S.clear_memory_cache()
    assert list(symbol_table(src, "a.py", blob_sha="../../escape")) == ["f"]
    assert not (tmp_path / "escape.python.json").exists()


def test_lru_is_bounded(monkeypatch):
    monkeypatch.setattr(S, "LRU_SIZE", 3)
    for i in range(5):
        symbol_table(f"def f{i}(): pass\n".encode(), "a.py")
    assert len(S._lru) == 3


# --------------------------------------------------------------------------- lookups


def test_closest_names():
    tab = fixture("sample.py")
    assert closest_names(tab, "sign")[0] == "Signer.sign"
    assert closest_names(tab, "Signer.sing")[0] == "Signer.sign"
    assert "Signer.Inner.method" in closest_names(tab, "Inner.methd")
    assert closest_names(tab, "zzzzzz") == []
    assert closest_names(tab, "name", n=2)[0] == "Signer.name"
    assert closest_names({}, "x") == []


def test_find_by_fingerprint():
    src = "def a():\n    return 1\n\n\ndef b():\n    return 1\n"
    tab = table(src, "python")
    moved = sym("class X:\n    pass\n\ndef a():\n    return 1\n", "python", "a")
    assert find_by_fingerprint(tab, moved.fingerprint) == ["a"]
    assert find_by_fingerprint(tab, tab["a"].body_fp, field="body_fp") == ["a", "b"]
    assert find_by_fingerprint(tab, "") == []
    assert find_by_fingerprint(tab, "ts1:nothing") == []
    with pytest.raises(ValueError):
        find_by_fingerprint(tab, "x", field="name")


def test_formatter_parens_in_assert_and_raise_are_ignored() -> None:
    a = extract_symbols(b"def t(x):\n    assert (x == 1)\n    raise (ValueError(x))\n", "python")["t"]
    b = extract_symbols(b"def t(x):\n    assert x == 1\n    raise ValueError(x)\n", "python")["t"]
    assert a.fingerprint == b.fingerprint


def test_shape_fingerprint_ignores_only_the_own_name() -> None:
    body = b"    total = 0\n    for v in values:\n        total += v * 2\n    return total\n"
    a = extract_symbols(b"def helper(values):\n" + body, "python")["helper"]
    b = extract_symbols(b"def renamed(values):\n" + body, "python")["renamed"]
    c = extract_symbols(b"def renamed(values, k):\n" + body, "python")["renamed"]
    assert a.shape_fp and a.shape_fp == b.shape_fp != c.shape_fp
    assert extract_symbols(b'def d():\n    """Only a docstring."""\n', "python")["d"].shape_fp == ""


def test_the_language_registry_imports_a_language_module_only_when_it_is_used() -> None:
    """A process that reads no file of the later languages (a post-commit hook on a commit of Python files)
    does not pay for importing their modules; the first use of one imports it, and the tables' keys stay those
    of the modules (the dialects of ``lang_data`` included)."""
    code = ("import sys; import gitmem.anchors, gitmem.code.symbols as s; "
            "before = sorted(m for m in sys.modules if m.startswith('gitmem.code.lang_')); "
            "s.symbol_table(b'a: 1\\n', 'x.yml'); "
            "after = sorted(m for m in sys.modules if m.startswith('gitmem.code.lang_')); print(before, after)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[] ['gitmem.code.lang_data']", out.stdout + out.stderr
    from gitmem.code import lang_data
    from gitmem.code.specs import DIALECT_ANALYZERS
    assert set(DIALECT_ANALYZERS) == set(lang_data.DIALECT_ANALYZERS)
    assert all(callable(DIALECT_ANALYZERS[d]) for d in DIALECT_ANALYZERS)
    assert all(SPECS[lang].name == lang for lang in SPECS)
