"""Swift, Scala, Bash and Lua symbols: names, kinds, fingerprints, imports, and staleness on real git repositories.

Real tree-sitter parses (tree-sitter-language-pack's ``swift``, ``scala``, ``bash`` and ``lua``
grammars); fixtures under tests/fixtures/code/{swift,scala,bash,lua}/.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from gitmem.anchors import AnchorError, Resolver
from gitmem.code import symbols as S
from gitmem.code.imports import extract_imports, resolve_imports
from gitmem.code.languages import language_for_path
from gitmem.code.symbols import extract_symbols, set_cache_dir, symbol_table
from gitmem.git import Repo
from gitmem.model import Status, Symbol
from gitmem.textsplit import name_base, name_leaf
from testing.repos import commit, git, make_repo

FIXTURES = Path(__file__).parent / "fixtures" / "code"


@pytest.fixture(autouse=True)
def _fresh_caches():
    set_cache_dir(None)
    S.clear_memory_cache()
    yield
    set_cache_dir(None)
    S.clear_memory_cache()


def table(src: str, language: str) -> dict[str, Symbol]:
    return extract_symbols(textwrap.dedent(src).encode(), language)


def fixture(name: str) -> dict[str, Symbol]:
    return symbol_table((FIXTURES / name).read_bytes(), name)


def kinds(tab: dict[str, Symbol]) -> dict[str, str]:
    return {n: s.kind for n, s in tab.items()}


def test_extensions():
    assert language_for_path("Sources/App/Sprite.swift") == "swift"
    assert language_for_path("src/main/scala/A.scala") == "scala"
    assert language_for_path("build.sc") == "scala"
    for p in ("install.sh", "lib/x.bash", "zshrc.zsh", "t/a.bats", "env.ksh"):
        assert language_for_path(p) == "bash", p
    assert language_for_path("init.lua") == "lua"


# --------------------------------------------------------------------------- Swift


def test_swift_names_and_kinds():
    assert kinds(fixture("swift/Sample.swift")) == {
        "Movable": "protocol", "Movable.Unit": "type", "Movable.position": "property", "Movable.move": "method",
        "Sprite": "class", "Sprite.Unit": "type", "Sprite.position": "property", "Sprite.doubled": "property",
        "Sprite.init(at:)": "constructor", "Sprite.init()": "constructor", "Sprite.deinit": "destructor",
        "Sprite.move(to:)": "method", "Sprite.move(by:animated:)": "method", "Sprite.==": "method",
        "Sprite.subscript": "subscript", "Sprite.Frame": "struct", "Sprite.Frame.width": "property",
        "Sprite.Frame.height": "property", "Sprite.Frame.area": "method", "Sprite.State": "enum",
        # the extension of a type declared in the file is numbered after it; its members are the type's
        "Sprite#2": "extension", "Sprite.description": "property", "Sprite.reset": "method",
        # a generic constraint is not part of the name; a second extension is numbered
        "Array": "extension", "Array.total": "method", "Array#2": "extension", "Array.second": "method",
        "Counter": "class", "Counter.n": "property", "Counter.bump": "method", "Counter.bump.helper": "function",
        "clamp": "function", "defaultSpeed": "property",
    }


def test_swift_spans_hold_attributes_not_doc_comments():
    tab = fixture("swift/Sample.swift")
    assert (tab["Sprite"].start_line, tab["Sprite"].end_line) == (10, 40)  # @available, not the ///
    assert (tab["Sprite.=="].start_line, tab["Sprite.=="].end_line) == (29, 30)
    assert tab["Sprite.=="].decorators_fp != "" and tab["Sprite.reset"].decorators_fp == ""
    assert (tab["Sprite.move(to:)"].start_line, tab["Sprite.move(to:)"].end_line) == (23, 23)


def test_swift_overloads_by_labels_then_numbers_and_operators():
    tab = table("""\
        struct V {
          func f(_ a: Int) {}
          func f(_ a: Swift.String, _ b: @escaping (Int) -> Void) {}
          func f(_ a: String) {}
          func g(x: Int) {}
          func h<T>(_ a: T) where T: Equatable {}
          func h<T>(_ a: T) where T: Hashable {}
          static func <> (a: V, b: V) -> V { a }
          static prefix func - (a: V) -> V { a }
          subscript(i: Int) -> Int { i }
          subscript(k: String) -> Int { 0 }
          subscript(key k: String) -> Int { 0 }
        }
        """, "swift")
    # labels alike: DocC's type signature added; labels and types alike: numbered in source order
    assert kinds(tab) == {"V": "struct", "V.f(_:)-(Int)": "method", "V.f(_:_:)": "method",
                          "V.f(_:)-(String)": "method", "V.g": "method", "V.h": "method", "V.h#2": "method",
                          "V.<>": "method", "V.-": "method", "V.subscript(_:)-(Int)": "subscript",
                          "V.subscript(_:)-(String)": "subscript", "V.subscript(key:)": "subscript"}


def test_swift_extension_alone_in_its_file_is_the_type_name():
    tab = table("""\
        extension Session: Equatable where Base: Hashable {
          func close() {}
        }
        extension Outer.Inner {
          var x: Int { 1 }
        }
        """, "swift")
    assert kinds(tab) == {"Session": "extension", "Session.close": "method",
                          "Outer.Inner": "extension", "Outer.Inner.x": "property"}


def test_swift_locals_and_closures_are_not_symbols():
    tab = table("""\
        class A {
          var handler: () -> Void = { let tmp = 1; func inClosure() {} }
          func run() { let local = 2; var (p, q) = (1, 2) }
        }
        """, "swift")
    assert kinds(tab) == {"A": "class", "A.handler": "property", "A.run": "method"}


def test_swift_names_survive_name_base_and_leaf():
    assert name_base("Sprite.move(to:by:)") == "Sprite.move" and name_leaf("Sprite.move(to:by:)") == "move"
    assert name_base("V.f(_:)-(Swift.Int)") == "V.f" and name_leaf("V.f(_:)-((Int)->Void)") == "f"
    assert name_base("Sprite#2") == "Sprite" and name_leaf("Sprite.init()") == "init"


# --------------------------------------------------------------------------- Scala


def test_scala_names_and_kinds():
    assert kinds(fixture("scala/Sample.scala")) == {
        "Shape": "trait", "Shape.area": "method", "Shape.scale": "method", "Shape.Unit": "type",
        "Circle": "class", "Circle.kind": "value", "Circle.hits": "value", "Circle.area": "method",
        "Circle.scale": "method", "Circle.this": "constructor",
        # the companion object beside class Circle is Circle$, its members are Circle's
        "Circle$": "object", "Circle.apply(String)": "method", "Circle.apply(Int,Int*)": "method",
        "Circle.unit": "value",
        "Registry": "object", "Registry.shapes": "value", "Registry.register": "method",
        "Registry.register.log": "function",
        "Color": "enum", "Color.hex": "method", "describe": "function",
    }


def test_scala_spans_annotations_and_end_markers():
    tab = fixture("scala/Sample.scala")
    assert (tab["Circle"].start_line, tab["Circle"].end_line) == (13, 20)  # @SerialVersionUID, not the /** */
    assert tab["Circle"].decorators_fp != ""
    assert (tab["Color"].start_line, tab["Color"].end_line) == (37, 42)  # `end Color` closes it


def test_scala_indentation_and_braces_both_parse():
    braces = table("""\
        object O {
          def f(x: Int): Int = {
            x + 1
          }
        }
        """, "scala")
    indented = table("""\
        object O:
          def f(x: Int): Int =
            x + 1
        """, "scala")
    assert kinds(braces) == kinds(indented) == {"O": "object", "O.f": "method"}


def test_scala_optional_braces_are_formatting():
    braces = table("""\
        object O {
          def f(x: Int): Int = {
            val y = x match {
              case 1 => 2
              case _ => 3
            }
            y
          }
        }
        """, "scala")
    indented = table("""\
        object O:
          def f(x: Int): Int =
            val y = x match
              case 1 => 2
              case _ => 3
            y
        end O
        """, "scala")
    for name in ("O", "O.f"):
        assert (braces[name].fingerprint, braces[name].body_fp) == (indented[name].fingerprint, indented[name].body_fp)
    changed = table("object O:\n  def f(x: Int): Int =\n    x + 1\n", "scala")
    assert changed["O.f"].fingerprint != braces["O.f"].fingerprint


def test_scala_multiple_parameter_lists_and_by_name_overloads():
    tab = table("""\
        object P {
          def run(x: => Int)(implicit ec: scala.concurrent.ExecutionContext): Unit = ()
          def run(x: Int): Unit = ()
          def `type`: String = "t"
          val a, b = 1
          val (c, d) = (1, 2)
          given ord: Ordering[Int] = Ordering.Int
        }
        """, "scala")
    assert kinds(tab) == {"P": "object", "P.run(=>Int)(ExecutionContext)": "method", "P.run(Int)": "method",
                          "P.type": "method", "P.a": "value", "P.b": "value", "P.ord": "value"}


def test_scala_3_extension_methods_are_named_by_their_receiver():
    tab = table("""\
        extension (c: shapes.Circle)
          def circumference: Double = c.r * 2
          def diameter: Double = c.r * 2
        extension [T](xs: List[T]) def second: T = xs(1)
        @main def hello(): Unit = println("hi")
        """, "scala")
    assert kinds(tab) == {"Circle.circumference": "method", "Circle.diameter": "method", "List.second": "method",
                          "hello": "function"}


def test_scala_companion_members_share_the_class_name_and_keep_it(tmp_path: Path):
    tab = table("""\
        class Money(val cents: Long) { def apply(i: Int): Long = cents; def show: String = "" }
        object Money { def apply(i: Int): Money = new Money(i); def apply(s: String): Money = new Money(0) }
        """, "scala")
    # two `apply(Int)`: parameter types do not tell the three apart, so they are numbered in source order
    assert kinds(tab) == {"Money": "class", "Money.apply": "method", "Money.show": "method", "Money$": "object",
                          "Money.apply#2": "method", "Money.apply#3": "method"}
    src = "object Money {\n  def zero: Money = new Money(0)\n}\n"
    root = make_repo(tmp_path / "r", {"Money.scala": src})
    repo = Repo(root)
    a = Resolver(repo).make("Money.scala", "Money.zero")
    c = commit(root, "a class beside the object", {"Money.scala": "class Money(val cents: Long)\n" + src})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.FRESH and st.symbol_now == "Money.zero"


def test_scala_object_without_a_class_beside_it_is_plain():
    tab = table("class A\nobject B { def x = 1 }\nobject Outer { class A; object A }\nobject T\ntrait T\n",
                "scala")
    assert kinds(tab) == {"A": "class", "B": "object", "B.x": "method", "Outer": "object",
                          "Outer.A": "class", "Outer.A$": "object", "T$": "object", "T": "trait"}


# --------------------------------------------------------------------------- Bash and Lua


def test_bash_names_and_kinds():
    tab = fixture("bash/sample.sh")
    assert kinds(tab) == {"log": "function", "die": "function", "deploy::run": "function",
                          "setup": "function", "compat": "function", "compat#2": "function"}
    assert (tab["deploy::run"].start_line, tab["deploy::run"].end_line) == (17, 22)


def test_lua_names_and_kinds():
    assert kinds(fixture("lua/sample.lua")) == {
        "M.add": "function", "M.greet": "method", "helper": "function", "helper.inner": "function",
        "M.scale": "function", "twice": "function", "global_fn": "function"}


# --------------------------------------------------------------------------- fingerprints

SWIFT_BASE = """\
    class C {
      @discardableResult
      func target(a: Int, b: Int) -> Int {
        let x = a + b
        return x
      }
    }
    """
SWIFT_SAME = """\
    class C
    {
        /// Doc comment.
        @discardableResult
        func target(
            a: Int,
            b: Int
        ) -> Int {
            // comment
            let x = a + b; /* block */
            return x;
        }
    }
    """
SCALA_BASE = """\
    class C {
      @inline
      def target(a: Int, b: Int): Int = {
        val x = a + b
        x
      }
    }
    """
SCALA_SAME = """\
    class C
    {
      /** Scaladoc. */
      @inline
      def target(
          a: Int,
          b: Int
      ): Int = {
        // comment
        val x = a + b; /* block */
        x
      }
    }
    """
BASH_BASE = """\
    target() {
      local x="$1"
      if [ -n "$x" ]; then
        echo 'done' "ok"
      fi
    }
    """
BASH_SAME = """\
    target() {
        # comment
        local x="$1"   # trailing
        if [ -n "$x" ]
        then
            echo "done" 'ok'
        fi
    }
    """
LUA_BASE = """\
    function M.target(a, b)
      local x = a + b
      return x, 'k'
    end
    """
LUA_SAME = """\
    -- comment
    function M.target(a,b)
        --[[ block ]]
        local x = a + b;
        return x, "k"
    end
    """


@pytest.mark.parametrize("language, name, base, same, edit", [
    ("swift", "C.target", SWIFT_BASE, SWIFT_SAME, ("return x", "return x + 1")),
    ("scala", "C.target", SCALA_BASE, SCALA_SAME, ("    x\n", "    x + 1\n")),
    ("bash", "target", BASH_BASE, BASH_SAME, ("'done'", "'done!'")),
    ("lua", "M.target", LUA_BASE, LUA_SAME, ("return x", "return x + 1")),
])
def test_fingerprint_ignores_formatting_and_comments(language, name, base, same, edit):
    b = table(base, language)[name]
    s = table(same, language)[name]
    assert (s.fingerprint, s.body_fp, s.signature_fp, s.decorators_fp) == (
        b.fingerprint, b.body_fp, b.signature_fp, b.decorators_fp)
    c = table(base.replace(*edit), language)[name]
    assert c.fingerprint != b.fingerprint and c.body_fp != b.body_fp and c.signature_fp == b.signature_fp


@pytest.mark.parametrize("one, other, equal", [
    ("echo 'a b'", 'echo "a b"', True),
    ("echo '$HOME'", 'echo "$HOME"', False),     # single quotes keep `$`, double quotes expand it
    ("echo 'a\\b'", 'echo "a\\b"', False),       # a backslash escapes inside double quotes only
    ("echo '`x`'", 'echo "`x`"', False),
    ("echo 'a'", "echo 'b'", False),
    ("echo a; echo b", "echo a\necho b", True),  # `;` is a line break
])
def test_bash_quotes_are_formatting_only_when_nothing_expands(one, other, equal):
    fp = [table(f"f() {{\n  {src}\n}}\n", "bash")["f"].fingerprint for src in (one, other)]
    assert (fp[0] == fp[1]) is equal


def test_swift_string_interpolation_is_code():
    a = table('func f() { print("x \\(a)") }\n', "swift")["f"].fingerprint
    b = table('func f() { print("x \\(b)") }\n', "swift")["f"].fingerprint
    assert a != b


# --------------------------------------------------------------------------- real repositories

SWIFT_REPO = """\
import Foundation

final class Cache {
    func get(_ k: String) -> Int {
        return k.count
    }

    func put(_ k: String, _ v: Int) {
        store[k] = v
    }
}

extension Cache {
    func clear() {
        store = [:]
    }
}
"""

SCALA_REPO = """\
package app

class Cache {
  def get(k: String): Int = {
    k.length
  }

  def put(k: String, v: Int): Unit = {
    store(k) = v
  }
}

object Cache {
  def empty: Cache = new Cache
}
"""

BASH_REPO = """\
#!/bin/sh
get() {
  echo "${1}" | wc -c
}

put() {
  echo "$1=$2" >> "$STORE"
}
"""

LUA_REPO = """\
local M = {}

function M.get(k)
  return #k
end

function M:put(k, v)
  self.store[k] = v
end

return M
"""


@pytest.mark.parametrize("path, new_path, src, symbol, body_edit, other_edit", [
    ("Sources/Cache.swift", "Sources/Store.swift", SWIFT_REPO, "Cache.get",
     ("return k.count", "return k.count * 2"), ("store[k] = v", "store[k] = v + 1")),
    ("Sources/Cache.swift", "Sources/Store.swift", SWIFT_REPO, "Cache.clear",  # an extension member
     ("store = [:]", "store = [\"a\": 1]"), ("return k.count", "return k.count * 2")),
    ("src/Cache.scala", "src/Store.scala", SCALA_REPO, "Cache.get",
     ("    k.length", "    k.length * 2"), ("store(k) = v", "store(k) = v + 1")),
    ("src/Cache.scala", "src/Store.scala", SCALA_REPO, "Cache.empty",  # a companion object's member
     ("new Cache\n", "new Cache()\n"), ("    k.length", "    k.length * 2")),
    ("bin/cache.sh", "scripts/cache.sh", BASH_REPO, "get",
     ("wc -c", "wc -l"), ('"$1=$2"', '"$1:$2"')),
    ("lua/cache.lua", "lua/store.lua", LUA_REPO, "M.get",
     ("return #k", "return #k * 2"), ("self.store[k] = v", "self.store[k] = v + 1")),
], ids=["swift", "swift-extension", "scala", "scala-companion", "bash", "lua"])
def test_staleness_on_a_real_repository(tmp_path: Path, path, new_path, src, symbol, body_edit, other_edit):
    root = make_repo(tmp_path / "r", {path: src})
    repo = Repo(root)
    a = Resolver(repo).make(path, symbol)
    assert a.symbol == symbol

    c = commit(root, "other code", {path: src.replace(*other_edit)})
    assert Resolver(repo).status(a, c).status == Status.FRESH

    (root / new_path).parent.mkdir(parents=True, exist_ok=True)
    git(root, "mv", path, new_path)
    git(root, "commit", "-q", "-m", "rename file")
    st = Resolver(repo).status(a, repo.head())
    assert st.status == Status.MOVED and st.path_now == new_path and st.symbol_now == symbol

    c = commit(root, "body", {new_path: src.replace(*other_edit).replace(*body_edit)})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.STALE and st.commit == c


def test_swift_overload_anchor_follows_its_labels_when_a_sibling_is_added(tmp_path: Path):
    src = "struct P {\n  func move(to x: Int) { print(x) }\n  func move(by d: Int) { print(d) }\n}\n"
    root = make_repo(tmp_path / "r", {"P.swift": src})
    repo = Repo(root)
    a = Resolver(repo).make("P.swift", "P.move(by:)")
    c = commit(root, "new overload first", {"P.swift": src.replace(
        "struct P {\n", "struct P {\n  func move(x: Int, y: Int) { print(x + y) }\n")})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.FRESH and st.symbol_now == "P.move(by:)"
    c = commit(root, "change it", {"P.swift": (root / "P.swift").read_text().replace("print(d)", "print(d * 2)")})
    assert Resolver(repo).status(a, c).status == Status.STALE


@pytest.mark.parametrize("path, written, name", [
    ("Sources/Sample.swift", "Sprite.move(to:)", "Sprite.move(to:)"),
    ("Sources/Sample.swift", "Sprite.reset()", "Sprite.reset"),            # labels of a function not overloaded
    ("Sources/Sample.swift", "clamp(_:low:high:)", "clamp"),
    ("Sources/Sample.swift", "Sprite.init(at:)", "Sprite.init(at:)"),
    ("src/Sample.scala", "Circle#area", "Circle.area"),                    # Scaladoc's instance member
    ("src/Sample.scala", "Circle$.apply(String)", "Circle.apply(String)"),
    ("src/Sample.scala", "Circle$.unit", "Circle.unit"),
    ("src/Sample.scala", "Color#hex", "Color.hex"),
    ("bin/sample.sh", "deploy::run", "deploy::run"),
    ("bin/sample.sh", "function die()", "die"),
    ("bin/sample.sh", "log()", "log"),
    ("lib/sample.lua", "M.greet", "M.greet"),
    ("lib/sample.lua", "M:greet", "M.greet"),
], ids=["swift-labels", "swift-labels-unique", "swift-top", "swift-init", "scala-hash", "scala-companion",
        "scala-companion-value", "scala-enum", "bash-colons", "bash-function", "bash-parens", "lua-dot", "lua-colon"])
def test_anchors_accept_the_languages_written_forms(tmp_path: Path, path, written, name):
    source = {".swift": "swift/Sample.swift", ".scala": "scala/Sample.scala", ".sh": "bash/sample.sh",
              ".lua": "lua/sample.lua"}[Path(path).suffix]
    root = make_repo(tmp_path / "r", {path: (FIXTURES / source).read_text()})
    assert Resolver(Repo(root)).make(path, written).symbol == name


def test_an_overloaded_name_without_labels_asks_which(tmp_path: Path):
    root = make_repo(tmp_path / "r", {"S.swift": (FIXTURES / "swift/Sample.swift").read_text()})
    with pytest.raises(AnchorError) as err:
        Resolver(Repo(root)).make("S.swift", "Sprite.move")
    assert set(err.value.candidates) == {"Sprite.move(to:)", "Sprite.move(by:animated:)"}


def test_remember_anchor_on_the_cli(tmp_path: Path, run_cli):
    root = make_repo(tmp_path / "r", {"Sources/Sample.swift": (FIXTURES / "swift/Sample.swift").read_text(),
                                      "src/Sample.scala": (FIXTURES / "scala/Sample.scala").read_text(),
                                      "bin/deploy.sh": (FIXTURES / "bash/sample.sh").read_text()})
    assert run_cli(root, "init", "--no-hooks")[0] == 0
    code, out, err = run_cli(root, "remember", "moving clamps to the board", "--json",
                             "--anchor", "Sources/Sample.swift::Sprite.move(to:)",
                             "--anchor", "src/Sample.scala::Circle#area",
                             "--anchor", "bin/deploy.sh::deploy::run")
    assert code == 0, err
    anchors = {(a["path"], a["symbol"], a["kind"]) for a in json.loads(out)["anchors"]}
    assert anchors == {("Sources/Sample.swift", "Sprite.move(to:)", "method"),
                       ("src/Sample.scala", "Circle.area", "method"),
                       ("bin/deploy.sh", "deploy::run", "function")}


# --------------------------------------------------------------------------- imports


def test_imports_extracted_and_resolved():
    scala = (FIXTURES / "scala/Sample.scala").read_bytes()
    assert extract_imports("src/main/scala/shapes/core/Sample.scala", scala) == [
        "scala.collection.mutable", "shapes.util.Geometry", "shapes.util.Colors"]
    more = b"import a.b._\nimport c.d.*\nimport e.{F => G, H as I, _}\nimport j.K, l.M\n"
    assert extract_imports("x.scala", more) == ["a.b.*", "c.d.*", "e.F", "e.H", "e.*", "j.K", "l.M"]
    files = {"src/main/scala/shapes/util/Geometry.scala", "src/main/scala/shapes/util/Colors.scala",
             "src/main/scala/shapes/core/Sample.scala", "os/src/Path.scala"}
    assert resolve_imports("src/main/scala/shapes/core/Sample.scala",
                           ["shapes.util.Geometry", "shapes.util.Colors", "scala.collection.mutable"], files) == {
        "src/main/scala/shapes/util/Geometry.scala", "src/main/scala/shapes/util/Colors.scala"}
    assert resolve_imports("os/src/Util.scala", ["os.Path"], files) == {"os/src/Path.scala"}  # mill's layout

    sh = (FIXTURES / "bash/sample.sh").read_bytes()
    assert extract_imports("bin/sample.sh", sh) == ["./lib/common.sh", "$DIR/env.sh"]
    files = {"bin/sample.sh", "bin/lib/common.sh", "bin/env.sh", "lib/root.sh", "bin/z.sh"}
    assert resolve_imports("bin/sample.sh", ["./lib/common.sh", "$DIR/env.sh", "lib/root.sh", "/etc/x.sh"],
                           files) == {"bin/lib/common.sh", "bin/env.sh", "lib/root.sh"}
    more = b'source "${BASH_SOURCE%/*}/z.sh"\n. "$(cd "$(dirname "$0")" && pwd)/x.sh"\nsource ~/.bashrc\n'
    specs = extract_imports("bin/sample.sh", more)
    assert specs == ["${BASH_SOURCE%/*}/z.sh", "$DIR/x.sh", "~/.bashrc"]
    assert resolve_imports("bin/sample.sh", specs, files) == {"bin/z.sh"}
    assert extract_imports("a.sh", b'source "$(git rev-parse --show-toplevel)/x.sh"\n') == []  # another command
    assert extract_imports("a.sh", b'\\. "$NVM_DIR/nvm.sh"\n') == ["$NVM_DIR/nvm.sh"]  # the alias-proof dot

    lua = (FIXTURES / "lua/sample.lua").read_bytes()
    assert extract_imports("lua/app/sample.lua", lua) == ["app.util"]
    assert resolve_imports("lua/app/sample.lua", ["app.util", "app"],
                           {"lua/app/util.lua", "lua/app/init.lua", "lua/app/sample.lua"}) == {
        "lua/app/util.lua", "lua/app/init.lua"}

    swift = b"import Foundation\n@testable import Alamofire\nimport struct Swift.Array\n"
    assert extract_imports("Tests/T.swift", swift) == ["Foundation", "Alamofire", "Swift.Array"]
    assert resolve_imports("Tests/T.swift", ["Alamofire"], {"Alamofire.swift", "Tests/T.swift"}) == set()
