"""Containment by language (issue 25 item 3): a one-method edit, in a real repository, parsed by tree-sitter.

For each language: which symbols the focus counts as changed (the method, not its type when the type's own code
is the same), and how memories on the method, its type and a sibling method rank (method 1.0 > type 0.8 >
sibling 0.6); a type whose own code changed (a field) still puts its members in focus as nested.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.anchors import Resolver
from gitmem.code import contain
from gitmem.code.symbols import symbol_table
from gitmem.git import WORKTREE, Repo
from gitmem.model import Anchor, Memory
from gitmem.rank import score as R
from gitmem.rank.focus import build_focus, changed_symbols
from testing.repos import make_repo, write

PY = """class Mux:
    limit = 10

    def get(self, a):
        return a + 1

    def post(self, b):
        return b * 2

    class Inner:
        def run(self):
            return 0
"""
JAVA = """package m;

public class Mux {
    int limit = 10;

    public int get(int a) {
        return a + 1;
    }

    public int post(int b) {
        return b * 2;
    }

    static class Inner {
        void run() {
        }
    }
}
"""
TS = """export class Mux {
  limit = 10;

  get(a: number): number {
    return a + 1;
  }

  post(b: number): number {
    return b * 2;
  }
}
"""
RUBY = """module Web
  class Mux
    LIMIT = 10

    def get(a)
      a + 1
    end

    def post(b)
      b * 2
    end
  end
end
"""
KOTLIN = """class Mux {
    val limit = 10

    fun get(a: Int): Int {
        return a + 1
    }

    fun post(b: Int): Int {
        return b * 2
    }
}
"""
CSHARP = """namespace Web {
public class Mux {
    int limit = 10;

    public int Get(int a) {
        return a + 1;
    }

    public int Post(int b) {
        return b * 2;
    }
}
}
"""

#: language → (path, source, the type, the edited method, a sibling, (old, new) of the method edit,
#: (old, new) of an edit of the type's own code).
NESTED = {
    "python": ("web/mux.py", PY, "Mux", "Mux.get", "Mux.post", ("a + 1", "a + 7"), ("limit = 10", "limit = 20")),
    "java": ("src/m/Mux.java", JAVA, "Mux", "Mux.get", "Mux.post", ("a + 1", "a + 7"),
             ("int limit = 10", "int limit = 20")),
    "typescript": ("src/mux.ts", TS, "Mux", "Mux.get", "Mux.post", ("a + 1", "a + 7"), ("limit = 10", "limit = 20")),
    "ruby": ("lib/web/mux.rb", RUBY, "Web.Mux", "Web.Mux.get", "Web.Mux.post", ("a + 1", "a + 7"),
             ("LIMIT = 10", "LIMIT = 20")),
    "kotlin": ("src/Mux.kt", KOTLIN, "Mux", "Mux.get", "Mux.post", ("a + 1", "a + 7"),
               ("class Mux {", "open class Mux {")),  # (a property is a member symbol of its own)
    "csharp": ("src/Mux.cs", CSHARP, "Mux", "Mux.Get", "Mux.Post", ("a + 1", "a + 7"),
               ("int limit = 10", "int limit = 20")),
}


def _memory(mid: str, path: str, symbol: str, updated: str) -> Memory:
    a = Anchor(path=path, symbol=symbol, commit="0" * 40, kind="method")
    return Memory(id=mid, type="discovery", title=f"memory {mid}", body="", anchors=[a], created=updated,
                  updated=updated)


def _ranked(focus_repo: Path, anchors: dict[str, tuple[str, str]]) -> list[tuple[str, float]]:
    """(id, proximity) of memories anchored as ``anchors`` (id → (path, symbol)), ranked for the work tree's
    focus; the sibling's memory newest, so recency alone would put it first."""
    repo = Repo(focus_repo)
    focus = build_focus(repo, include_branch=False)
    days = {"TYPE": "2026-01-02", "METHOD": "2026-01-01"}
    mems = [_memory(mid, p, s, f"{days.get(mid, '2026-01-03')}T00:00:00Z") for mid, (p, s) in anchors.items()]
    return [(s.memory.id, s.proximity) for s in R.rank(mems, focus)]


@pytest.mark.parametrize("lang", sorted(NESTED))
def test_method_edit_leaves_its_type_out_of_focus(tmp_path: Path, lang: str) -> None:
    path, src, typ, method, sibling, (old, new), _ = NESTED[lang]
    root = make_repo(tmp_path / "r", {path: src})
    write(root, {path: src.replace(old, new)})
    resolver = Resolver(Repo(root))
    head = Repo(root).head()
    # The fact the fix is about: the type's fingerprint covers its members, so the plain diff names it too.
    assert set(changed_symbols(resolver, path, head, WORKTREE)) >= {typ, method}
    focus = build_focus(Repo(root), include_branch=False)
    assert {n for (p, n) in focus.symbols if p == path} == {method}
    ranked = _ranked(root, {"METHOD": (path, method), "TYPE": (path, typ), "SIBLING": (path, sibling)})
    assert ranked == [("METHOD", R.TIER_SAME_SYMBOL), ("TYPE", R.TIER_ENCLOSING), ("SIBLING", R.TIER_SAME_FILE)]


@pytest.mark.parametrize("lang", sorted(NESTED))
def test_type_own_edit_keeps_members_nested(tmp_path: Path, lang: str) -> None:
    path, src, typ, _, sibling, _, (old, new) = NESTED[lang]
    root = make_repo(tmp_path / "r", {path: src})
    write(root, {path: src.replace(old, new)})
    focus = build_focus(Repo(root), include_branch=False)
    assert typ in {n for (p, n) in focus.symbols if p == path}
    ranked = dict(_ranked(root, {"TYPE": (path, typ), "SIBLING": (path, sibling)}))
    assert ranked == {"TYPE": R.TIER_SAME_SYMBOL, "SIBLING": R.TIER_ENCLOSING}


def test_added_and_removed_members_are_member_changes(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"mux.py": PY})
    edited = PY.replace("    def post(self, b):\n        return b * 2\n", "    def put(self, c):\n        return c\n")
    write(root, {"mux.py": edited})
    focus = build_focus(Repo(root), include_branch=False)
    assert {n for (_, n) in focus.symbols} == {"Mux.put", "Mux.post"}  # added, deleted; Mux's own code the same


GO_MUX = """package chi

type Mux struct {
	handlers map[string]int
}

func (m *Mux) Get(p string) int {
	return len(p) + 1
}
"""
GO_ROUTES = """package chi

func (m *Mux) Post(p string) int {
	return len(p) * 2
}

func (m Mux) Route(p string) int {
	return len(p)
}
"""


def test_go_methods_declared_apart(tmp_path: Path) -> None:
    """Go: a method is ``Mux.Get`` wherever the package declares it; the struct never changes with it."""
    root = make_repo(tmp_path / "r", {"mux.go": GO_MUX, "routes.go": GO_ROUTES, "other/x.go": GO_ROUTES})
    assert [s.kind for s in symbol_table(GO_ROUTES.encode(), "routes.go").values()] == ["method", "method"]
    write(root, {"routes.go": GO_ROUTES.replace("len(p) * 2", "len(p) * 3")})
    focus = build_focus(Repo(root), include_branch=False)
    assert set(focus.symbols) == {("routes.go", "Mux.Post")}
    ranked = _ranked(root, {"METHOD": ("routes.go", "Mux.Post"), "TYPE": ("mux.go", "Mux"),
                            "SIBLING": ("routes.go", "Mux.Route"), "ELSEWHERE": ("other/x.go", "Mux")})
    assert ranked == [("METHOD", R.TIER_SAME_SYMBOL), ("TYPE", R.TIER_ENCLOSING), ("SIBLING", R.TIER_SAME_FILE)]
    # The struct's own change (a field) makes every method of the package nested in it, in any of its files.
    write(root, {"routes.go": GO_ROUTES, "mux.go": GO_MUX.replace("map[string]int", "map[string]string")})
    ranked = _ranked(root, {"TYPE": ("mux.go", "Mux"), "SIBLING": ("routes.go", "Mux.Route")})
    assert ranked == [("TYPE", R.TIER_SAME_SYMBOL), ("SIBLING", R.TIER_ENCLOSING)]


RUST = """pub struct Mux {
    limit: i32,
}

impl Mux {
    pub fn get(&self, a: i32) -> i32 {
        a + 1
    }
}

impl Display for Mux {
    fn fmt(&self, f: &mut Formatter) -> Result {
        Ok(())
    }
}
"""
RUST_MORE = """impl Mux {
    pub fn post(&self, b: i32) -> i32 {
        b * 2
    }
}
"""


def test_rust_impl_blocks(tmp_path: Path) -> None:
    """Rust: ``impl Mux`` and ``impl Display for Mux`` both give ``Mux.<fn>``; the ``impl`` is no symbol."""
    root = make_repo(tmp_path / "r", {"src/mux.rs": RUST, "src/more.rs": RUST_MORE})
    assert list(symbol_table(RUST.encode(), "src/mux.rs")) == ["Mux", "Mux.get", "Mux.fmt"]
    write(root, {"src/mux.rs": RUST.replace("a + 1", "a + 7")})
    focus = build_focus(Repo(root), include_branch=False)
    assert set(focus.symbols) == {("src/mux.rs", "Mux.get")}
    ranked = _ranked(root, {"METHOD": ("src/mux.rs", "Mux.get"), "TYPE": ("src/mux.rs", "Mux"),
                            "SIBLING": ("src/mux.rs", "Mux.fmt"), "APART": ("src/more.rs", "Mux.post")})
    assert ranked[:2] == [("METHOD", R.TIER_SAME_SYMBOL), ("TYPE", R.TIER_ENCLOSING)]
    assert dict(ranked)["SIBLING"] == R.TIER_SAME_FILE and dict(ranked)["APART"] == R.TIER_SAME_DIR


HPP = """namespace web {
class Mux {
 public:
  int get(int a);
  int post(int b);
};
}
"""
CPP = """#include "mux.hpp"
namespace web {
int Mux::get(int a) {
  return a + 1;
}

int Mux::post(int b) {
  return b * 2;
}
}
"""


def test_cpp_out_of_line_definitions(tmp_path: Path) -> None:
    """C++: ``int Mux::get`` in the source file is ``web.Mux.get``, outside the class's span; the class is in
    the header of the same stem, which encloses it; the namespace, whose span holds the definition, is not
    changed by it."""
    root = make_repo(tmp_path / "r", {"src/mux.hpp": HPP, "src/mux.cpp": CPP,
                                      "src/other.cpp": "int f() { return 1; }\n"})
    write(root, {"src/mux.cpp": CPP.replace("a + 1", "a + 7")})
    focus = build_focus(Repo(root), include_branch=False)
    assert set(focus.symbols) == {("src/mux.cpp", "web.Mux.get")}
    ranked = dict(_ranked(root, {"METHOD": ("src/mux.cpp", "web.Mux.get"), "TYPE": ("src/mux.hpp", "web.Mux"),
                                 "SIBLING": ("src/mux.cpp", "web.Mux.post"), "OTHER": ("src/other.cpp", "f")}))
    assert ranked == {"METHOD": R.TIER_SAME_SYMBOL, "TYPE": R.TIER_ENCLOSING, "SIBLING": R.TIER_SAME_FILE,
                      "OTHER": R.TIER_SAME_DIR}


def test_apart_near_per_language() -> None:
    assert contain.apart_near("pkg/mux.go", "pkg/routes.go")
    assert not contain.apart_near("pkg/mux.go", "other/routes.go")
    assert contain.apart_near("src/mux.hpp", "src/mux.cpp") and not contain.apart_near("src/mux.hpp", "src/tree.cpp")
    assert contain.apart_near("src/a.rs", "src/b.rs")
    assert not contain.apart_near("web/a.py", "web/b.py")  # Python members live inside the class
    assert not contain.apart_near("pkg/mux.go", "pkg/mux.rs")


def test_comment_above_a_method_is_no_change_of_the_class(tmp_path: Path) -> None:
    """A method's comment above it lies in the class's lines, not the method's span: editing both leaves the
    class out of focus (its fingerprint leaves comments out too), in Python and in Java."""
    root = make_repo(tmp_path / "r", {"mux.py": PY, "Mux.java": JAVA})
    write(root, {"mux.py": PY.replace("    def get", "    # adds one\n    def get").replace("a + 1", "a + 7"),
                 "Mux.java": JAVA.replace("    public int get", "    /** Adds one. */\n    public int get")
                 .replace("a + 1", "a + 7")})
    focus = build_focus(Repo(root), include_branch=False)
    assert set(focus.symbols) == {("mux.py", "Mux.get"), ("Mux.java", "Mux.get")}


def test_containers_not_named_over_their_content_still_change(tmp_path: Path) -> None:
    """Markdown: the section ``B`` under ``# A`` is named ``B``, not ``A.B``; the ranker relates symbols by name,
    so ``A`` stays changed when ``B`` changes (a memory on ``A`` keeps its nearness). YAML keys are named
    ``a.b``, but a key's value is its nested keys: ``a`` changed with ``a.b``."""
    md = "# A\n\nintro\n\n## B\n\nmore\n"
    yml = "a:\n  b: 1\n  c: 2\n"
    root = make_repo(tmp_path / "r", {"README.md": md, "conf.yaml": yml})
    write(root, {"README.md": md.replace("more", "less"), "conf.yaml": yml.replace("b: 1", "b: 3")})
    focus = build_focus(Repo(root), include_branch=False)
    assert set(focus.symbols) == {("README.md", "A"), ("README.md", "B"), ("conf.yaml", "a"), ("conf.yaml", "a.b")}
