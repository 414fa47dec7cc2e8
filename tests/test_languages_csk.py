"""C# and Kotlin symbols: names, kinds, fingerprints, and staleness on real git repositories.

Real tree-sitter parses (tree-sitter-language-pack's ``csharp`` and ``kotlin``
grammars); fixtures under tests/fixtures/code/csharp/ and tests/fixtures/code/kotlin/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.code.imports import extract_imports, resolve_imports
from gitmem.code.languages import language_for_path
from testing.symbols import assert_staleness_story, fixture, table

pytestmark = pytest.mark.usefixtures("fresh_symbol_caches")


def test_extensions():
    assert language_for_path("src/A.cs") == "csharp"
    assert language_for_path("src/a.kt") == "kotlin"
    assert language_for_path("build.gradle.kts") == "kotlin"


def test_csharp_names_and_kinds():
    assert {n: s.kind for n, s in fixture("csharp/Sample.cs").items()} == {
        "Sample": "class",
        "Sample.Sample()": "constructor",
        "Sample.Sample(int)": "constructor",
        "Sample.Count": "property",
        "Sample.Run": "method",
        "Sample.Add(int)": "method",
        "Sample.Add(int,int)": "method",
        "Sample.Pick": "method",
        "Sample.Dispose": "method",
        "Sample.Nested": "class",
        "Sample.Nested.Deep": "method",
        "Sample.IListener": "interface",
        "Sample.IListener.OnEvent": "method",
        "Sample.Mode": "enum",
        "Sample.Point": "struct",
        "Sample.Point.Length": "method",
        "Sample.Pair": "record",
        "Sample.Pair.Sum": "method",
        "Extensions": "class",
        "Extensions.Shout": "method",
    }


def test_csharp_attributes_belong_to_the_symbol():
    tab = fixture("csharp/Sample.cs")
    assert (tab["Sample"].start_line, tab["Sample"].end_line) == (7, 54)  # [Serializable], not the /// doc
    assert (tab["Sample.Run"].start_line, tab["Sample.Run"].end_line) == (18, 22)
    assert tab["Sample.Run"].decorators_fp != "" and tab["Sample.Dispose"].decorators_fp == ""


def test_kotlin_names_and_kinds():
    assert {n: s.kind for n, s in fixture("kotlin/sample.kt").items()} == {
        "Sample": "class",
        "Sample.doubled": "property",
        "Sample.label": "property",
        "Sample.constructor": "constructor",
        "Sample.run": "method",
        "Sample.add(Int)": "method",
        "Sample.add(Int,Int)": "method",
        "Sample.Nested": "class",
        "Sample.Nested.deep": "method",
        "Sample.Nested.deep.local": "function",
        "Sample.Inner": "class",
        "Sample.Companion": "object",
        "Sample.Companion.MAX": "property",
        "Sample.Companion.create": "method",
        "Sample.Named": "object",
        "Listener": "interface",
        "Listener.onEvent": "method",
        "Registry": "object",
        "Registry.register": "method",
        "Mode": "enum",
        "Pair": "class",
        "String.shout": "function",
        "List.second": "function",
        "Sample.orEmpty": "function",
        "String.size2": "property",
        "top": "function",
        "Handler": "type",
    }


def test_kotlin_spans():
    tab = fixture("kotlin/sample.kt")
    assert (tab["Sample"].start_line, tab["Sample"].end_line) == (7, 44)  # @Deprecated, not the KDoc
    assert tab["Sample"].decorators_fp != "" and tab["Sample.run"].decorators_fp == ""
    assert (tab["Sample.doubled"].start_line, tab["Sample.doubled"].end_line) == (9, 10)  # with its getter


def test_kotlin_overloaded_secondary_constructors_and_varargs():
    tab = table("""\
        class A {
            constructor(a: Int) : this() { go() }
            constructor(a: kotlin.String, vararg rest: List<String>) : this()
        }
        """, "kotlin")
    assert {"A.constructor(Int)", "A.constructor(String,List<String>...)"} <= set(tab)


def test_kotlin_property_getter_change_is_a_body_change():
    base = table("class A {\n    val x: Int\n        get() = 1\n}\n", "kotlin")["A.x"]
    changed = table("class A {\n    val x: Int\n        get() = 2\n}\n", "kotlin")["A.x"]
    assert changed.fingerprint != base.fingerprint and changed.signature_fp == base.signature_fp


CS_BASE = """\
    class C {
      [Obsolete]
      public int Target(int a, int b) {
        var x = a + b;
        return x;
      }
    }
    """
CS_SAME = """\
    class C
    {
        /// <summary>Doc.</summary>
        [Obsolete]
        public int Target(
            int a,
            int b)
        {
            // comment
            var x = a + b; /* block */
            return x;
        }
    }
    """
CS_BODY = CS_BASE.replace("return x;", "return x + 1;")
KT_BASE = """\
    class C {
      @Throws(IOException::class)
      fun target(a: Int, b: Int): Int {
        val x = a + b
        return x
      }
    }
    """
KT_SAME = """\
    class C
    {
        /** KDoc. */
        @Throws(IOException::class)
        fun target(
            a: Int,
            b: Int,
        ): Int {
            // comment
            val x = a + b; /* block */
            return x;
        }
    }
    """
KT_BODY = KT_BASE.replace("return x", "return x + 1")


@pytest.mark.parametrize("language, name, base, same, changed", [
    ("csharp", "C.Target", CS_BASE, CS_SAME, CS_BODY),
    ("kotlin", "C.target", KT_BASE, KT_SAME, KT_BODY),
])
def test_fingerprint_ignores_formatting_and_comments(language, name, base, same, changed):
    b = table(base, language)[name]
    s = table(same, language)[name]
    assert (s.fingerprint, s.body_fp, s.signature_fp, s.decorators_fp) == (
        b.fingerprint, b.body_fp, b.signature_fp, b.decorators_fp)
    c = table(changed, language)[name]
    assert c.fingerprint != b.fingerprint and c.body_fp != b.body_fp and c.signature_fp == b.signature_fp


CS_REPO = """\
namespace App {
    public class Cache {
        public int Get(string k) {
            return k.Length;
        }

        public void Put(string k, int v) {
            store[k] = v;
        }
    }
}
"""


KT_REPO = """\
package app

class Cache {
    fun get(k: String): Int {
        return k.length
    }

    fun put(k: String, v: Int) {
        store[k] = v
    }
}
"""


@pytest.mark.parametrize("path, new_path, src, symbol, body_edit, other_edit", [
    ("src/Cache.cs", "src/Store.cs", CS_REPO, "Cache.Get",
     ("return k.Length;", "return k.Length * 2;"), ("store[k] = v;", "store[k] = v + 1;")),
    ("src/Cache.kt", "src/Store.kt", KT_REPO, "Cache.get",
     ("return k.length", "return k.length * 2"), ("store[k] = v", "store[k] = v + 1")),
], ids=["csharp", "kotlin"])
def test_staleness_on_a_real_repository(tmp_path: Path, path, new_path, src, symbol, body_edit, other_edit):
    a = assert_staleness_story(tmp_path / "r", path, new_path, src, symbol, body_edit, other_edit)
    assert a.symbol == symbol


def test_imports_are_extracted_and_kotlin_ones_resolved():
    kt = b"package app\nimport a.b.C\nimport a.b.*\nimport a.b.D as E\n// import x.Y\nfun f() {}\n"
    assert extract_imports("src/app/Main.kt", kt) == ["a.b.C", "a.b.*", "a.b.D"]
    files = {"src/a/b/C.kt", "src/a/b/D.kt", "src/a/b/C.java", "src/a/c/F.kt"}
    assert resolve_imports("src/app/Main.kt", ["a.b.C"], files) == {"src/a/b/C.kt"}
    assert resolve_imports("src/app/Main.kt", ["a.b.*"], files) == {"src/a/b/C.kt", "src/a/b/D.kt"}
    cs = b"using System;\nusing static A.B.C;\nusing X = A.B;\nglobal using Foo.Bar;\nclass A { }\n"
    assert extract_imports("src/A.cs", cs) == ["System", "A.B.C", "A.B", "Foo.Bar"]
    assert resolve_imports("src/A.cs", ["A.B"], {"A/B.cs", "src/A.cs"}) == set()  # a namespace names no file


def test_csharp_members_without_a_plain_name():
    tab = table("""\
        namespace N { public partial class G<T> where T : new() {
          public G() {}
          public int this[int i] => i;
          public int this[string s] => 0;
          public static G<T> operator +(G<T> a, G<T> b) => a;
          public static implicit operator int(G<T> a) => 1;
          public delegate void D(int x);
          ~G() { }
          void M() { int Local(int q) => q; var o = new { A = 1 }; }
        } }
        """, "csharp")
    assert {n: s.kind for n, s in tab.items()} == {
        "G": "class", "G.G": "constructor", "G.this(int)": "indexer", "G.this(string)": "indexer",
        "G.operator+": "operator", "G.implicit operator int": "operator", "G.D": "delegate",
        "G.~G": "destructor", "G.M": "method", "G.M.Local": "function",
    }


def test_kotlin_locals_are_not_properties():
    tab = table("""\
        class A {
            init { val tmp = 1 }
            val x = run { val y = 1; y }
            fun f(a: Int) { val z = 2 }
        }
        val top = 1
        """, "kotlin")
    assert {n: s.kind for n, s in tab.items()} == {
        "A": "class", "A.x": "property", "A.f": "method", "top": "property"}


def test_csharp_overloads_by_ref_kind():
    tab = table("class A { void F(int a) {} void F(ref int a) {} void F(out int a, params object[] r) { a = 1; } }",
                "csharp")
    assert set(tab) == {"A", "A.F(int)", "A.F(ref int)", "A.F(out int,object[])"}
