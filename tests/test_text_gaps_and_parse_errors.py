"""Text the grammar gives no node, Bash word pieces, and names through parse errors: fingerprints and staleness.

Found by ``bench/languages.py`` on real histories (os-lib's ``build.sc``, nvm's ``nvm.sh``, Alamofire's tests,
okio's ``ByteString.kt``): each case failed before the fix. Real tree-sitter parses and real git repositories.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.anchors import Resolver
from gitmem.code import symbols as S
from gitmem.code.symbols import extract_symbols, set_cache_dir
from gitmem.git import Repo
from gitmem.model import Status
from testing.repos import commit, make_repo


@pytest.fixture(autouse=True)
def _fresh_caches():
    set_cache_dir(None)
    S.clear_memory_cache()
    yield
    set_cache_dir(None)
    S.clear_memory_cache()


# --------------------------------------------------------------------------- text no node carries
# (found by bench/languages.py on real histories: os-lib's build.sc, nvm.sh, Alamofire's tests)


@pytest.mark.parametrize("language, one, other", [
    ("scala", 'object O { def d = Agg(ivy"com.lihaoyi::acyclic:0.1.7") }',
     'object O { def d = Agg(ivy"com.lihaoyi::acyclic:0.2.0") }'),
    ("scala", 'object O { def d = s"a $x b" }', 'object O { def d = s"a $x c" }'),
    ("scala", 'object O { def d = f"$x%2.1f s" }', 'object O { def d = f"$x%3.1f s" }'),
    ("scala", 'object O { def d = "a\\tb" }', 'object O { def d = "a\\tc" }'),
    ("scala", 'object O { def d = s"""a ${x} b""" }', 'object O { def d = s"""a  ${x} b""" }'),
    ("bash", "f() {\n  awk -F'/' '{print $1}'\n}\n", "f() {\n  awk -F '/' '{print $1}'\n}\n"),
    ("bash", "f() {\n  echo ${a}b\n}\n", "f() {\n  echo ${a} b\n}\n"),
    ("bash", "f() {\n  cat <<EOF\nv1 $x\nEOF\n}\n", "f() {\n  cat <<EOF\nv2 $x\nEOF\n}\n"),
    ("swift", 'func f() {\n  #warning("old")\n}\n', 'func f() {\n  #warning("new")\n}\n'),
    ("kotlin", "fun f(a: String?) = a", "fun f(a: String) = a"),
    ("kotlin", "fun f() = 'a'", "fun f() = 'b'"),
    ("kotlin", "fun f() = 1u", "fun f() = 1uL"),
    ("kotlin", 'fun f() = "\\u00e9"', 'fun f() = "\\u00e8"'),
    ("csharp", 'class C { string F() => $"{t:HH:mm}"; }', 'class C { string F() => $"{t:HH:ss}"; }'),
], ids=["scala-ivy", "scala-s", "scala-f", "scala-escape", "scala-triple-space", "bash-word-pieces",
        "bash-expansion-pieces", "bash-heredoc", "swift-diagnostic", "kotlin-nullable", "kotlin-char",
        "kotlin-unsigned", "kotlin-escape", "csharp-format"])
def test_text_without_a_node_of_its_own_is_fingerprinted(language, one, other):
    a, b = extract_symbols(one.encode(), language), extract_symbols(other.encode(), language)
    leaf = max(a, key=len)
    assert a[leaf].fingerprint != b[leaf].fingerprint


def test_dockerfile_image_tag_is_fingerprinted():
    a = extract_symbols(b"FROM ubuntu:22.04 AS build\nRUN make\n", "dockerfile")
    b = extract_symbols(b"FROM ubuntu:24.04 AS build\nRUN make\n", "dockerfile")
    assert a["build"].fingerprint != b["build"].fingerprint


@pytest.mark.parametrize("language, one, other", [
    ("bash", "f() {\n  awk -F'/' x\n}\n", 'f() {\n    awk  -F"/"   x\n}\n'),   # quoting and spacing of words
    ("scala", 'object O { def d = s"a ${x} b" }', 'object O {\n  def d =\n    s"a ${x} b"\n}'),
], ids=["bash", "scala"])
def test_formatting_around_such_text_stays_formatting(language, one, other):
    a, b = extract_symbols(one.encode(), language), extract_symbols(other.encode(), language)
    leaf = max(a, key=len)
    assert a[leaf].fingerprint == b[leaf].fingerprint


BUILD_SC = """\
import mill._

object Deps {
  val acyclic = ivy"com.lihaoyi::acyclic:0.1.7"
  val utest = ivy"com.lihaoyi::utest:0.7.1"
}

object OsLibModule {
  object OsLibTestModule {
    def ivyDeps = Agg(ivy"com.lihaoyi::utest:0.7.1")
  }
}
"""


def test_scala_interpolated_version_bump_is_stale_and_a_changed_move_is_not_moved(tmp_path: Path):
    root = make_repo(tmp_path / "r", {"build.sc": BUILD_SC})
    repo = Repo(root)
    deps = Resolver(repo).make("build.sc", "Deps.acyclic")
    inner = Resolver(repo).make("build.sc", "OsLibModule.OsLibTestModule.ivyDeps")

    c = commit(root, "bump acyclic", {"build.sc": BUILD_SC.replace("acyclic:0.1.7", "acyclic:0.2.0")})
    assert Resolver(repo).status(deps, c).status == Status.STALE
    assert Resolver(repo).status(inner, c).status == Status.FRESH

    moved = BUILD_SC.split("object OsLibModule")[0] + (
        'object OsLibTestModule {\n  def ivyDeps = Agg(ivy"com.lihaoyi::utest:0.7.1")\n}\n')
    c = commit(root, "flatten", {"build.sc": moved})
    st = Resolver(repo).status(inner, c)
    assert st.status == Status.MOVED and st.symbol_now == "OsLibTestModule.ivyDeps"
    bumped = moved.replace("utest:0.7.1\")\n}", "utest:0.7.3\")\n}")
    c = commit(root, "flatten and bump", {"build.sc": bumped})
    assert Resolver(repo).status(inner, c).status == Status.STALE

    # Moved and changed in one commit (os-lib 79eb01fa -> bf476be8): not `moved`, which would say "same code".
    root2 = make_repo(tmp_path / "r2", {"build.sc": BUILD_SC})
    repo2 = Repo(root2)
    inner2 = Resolver(repo2).make("build.sc", "OsLibModule.OsLibTestModule.ivyDeps")
    st = Resolver(repo2).status(inner2, commit(root2, "flatten and bump", {"build.sc": bumped}))
    assert st.status in (Status.STALE, Status.DELETED)


NVM_SH = """\
nvm_get_latest() {
  NVM_LATEST_URL="$(curl -q -w "%{url_effective}\\\\n" -L -s -S https://latest.nvm.sh -o /dev/null)"
  nvm_echo "${NVM_LATEST_URL}" | command awk -F'/' '{print $NF}'
}

nvm_other() {
  echo other
}
"""


def test_bash_space_between_word_pieces_is_stale_reindent_is_fresh(tmp_path: Path):
    root = make_repo(tmp_path / "r", {"nvm.sh": NVM_SH})
    repo = Repo(root)
    a = Resolver(repo).make("nvm.sh", "nvm_get_latest")
    c = commit(root, "reindent", {"nvm.sh": NVM_SH.replace("\n  nvm_echo", "\n      nvm_echo")})
    assert Resolver(repo).status(a, c).status == Status.FRESH
    c = commit(root, "split the word", {"nvm.sh": NVM_SH.replace("awk -F'/'", "awk -F '/'")})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.STALE and st.commit == c


SWIFT_TESTS = """\
import XCTest

class RedirectResponseTestCase: BaseTestCase {
    override func tearDown() {
        super.tearDown()
    }

    func testThatRequestWillPerformHTTPRedirectionByDefault() {
        let x = 1
        XCTAssertEqual(x, 1)
    }

    func testOther() {
        let y = 2
        XCTAssertEqual(y, 2)
    }
}
"""
# Swift 2's `if let a = x, b = y {` (no `let` before `b`) is an ERROR over the whole file for tree-sitter-swift.
SWIFT_2_SYNTAX = """        manager.delegate.taskWillPerformHTTPRedirection = { session, task, response, request in
            var redirectedRequest = request

            if let
                originalRequest = task.originalRequest,
                headers = originalRequest.allHTTPHeaderFields,
                authorizationHeaderValue = headers["Authorization"]
            {
                redirectedRequest = request
            }

            return redirectedRequest
        }
        let y = 2"""
# A compiler directive between two members (no blank line before it) is an ERROR over the whole type.
SWIFT_DIRECTIVE = """        XCTAssertEqual(y, 2)
    }
    #if !(os(Linux) || os(Windows))
    func testApple() {
        XCTAssertTrue(true)
    }
    #endif"""


@pytest.mark.parametrize("breakage", [("        let y = 2", SWIFT_2_SYNTAX),
                                      ("        XCTAssertEqual(y, 2)\n    }", SWIFT_DIRECTIVE)],
                         ids=["swift-2-syntax", "directive-in-type"])
def test_swift_names_survive_a_parse_error_elsewhere(tmp_path: Path, breakage):
    root = make_repo(tmp_path / "r", {"Tests/ResponseTests.swift": SWIFT_TESTS})
    repo = Repo(root)
    a = Resolver(repo).make("Tests/ResponseTests.swift",
                            "RedirectResponseTestCase.testThatRequestWillPerformHTTPRedirectionByDefault")
    broken = SWIFT_TESTS.replace(*breakage)
    assert S.symbol_table(broken.encode(), "x.swift").keys() >= {
        "RedirectResponseTestCase.tearDown",
        "RedirectResponseTestCase.testThatRequestWillPerformHTTPRedirectionByDefault",
        "RedirectResponseTestCase.testOther"}
    c = commit(root, "another method changes", {"Tests/ResponseTests.swift": broken})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.FRESH and st.symbol_now == a.symbol
    c = commit(root, "this one changes", {"Tests/ResponseTests.swift": broken.replace("let x = 1", "let x = 3")})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.STALE and st.commit == c


BYTESTRING_KT = """\
package okio

open class ByteString internal constructor(
  internal val data: ByteArray
) : Serializable, Comparable<ByteString> {
  @Transient internal var hashCode: Int = 0

  open fun utf8(): String = String(data, Charsets.UTF_8)

  override fun toString(): String {
    return "[size=${data.size}]"
  }
}
"""


def test_kotlin_primary_constructor_on_the_next_line_keeps_member_names(tmp_path: Path):
    # okio's ByteString.kt: tree-sitter-kotlin cannot read `constructor(` on the line after the class name.
    split = BYTESTRING_KT.replace("ByteString internal constructor(",
                                  "ByteString\n// Trusted: does not clone data.\ninternal constructor(")
    tab = S.symbol_table(split.encode(), "ByteString.kt")
    assert {"ByteString", "ByteString.utf8", "ByteString.toString", "ByteString.hashCode"} <= tab.keys()
    assert "toString" not in tab and "utf8" not in tab
    assert tab["ByteString.toString"].start_line == 12  # lines as written
    root = make_repo(tmp_path / "r", {"ByteString.kt": BYTESTRING_KT})
    repo = Repo(root)
    a = Resolver(repo).make("ByteString.kt", "ByteString.toString")
    c = commit(root, "constructor on its own line", {"ByteString.kt": split})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.FRESH and st.symbol_now == "ByteString.toString"
    c = commit(root, "change it", {"ByteString.kt": split.replace("[size=", "[len=")})
    assert Resolver(repo).status(a, c).status == Status.STALE
