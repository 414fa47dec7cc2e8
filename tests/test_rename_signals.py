"""What the rename detection and the fingerprints take for the same code, on real git repositories.

* A recursive function renamed (its own calls renamed with it: ``sed s/depth/tree_depth/g``) is ``moved`` to the
  new name, in C, C++, Python, Ruby and JavaScript, and the post-commit hook re-anchors its memory; renamed
  *and* changed it is not: ``deleted``. A method calling another object's method of its own name
  (``self._sock.close()``) renamed alone is ``moved`` too.
* A C/C++ declaration without a body (a header prototype, a method declared in its class) keeps its fingerprint
  when a parameter is renamed (the name is not part of the function's type); a changed type or C++ default
  value is a change, and so is a renamed parameter of a definition (its body uses it).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gitmem.anchors import Resolver
from gitmem.code import symbols as S
from gitmem.code.symbols import set_cache_dir, symbol_table
from gitmem.git import Repo
from gitmem.model import Status
from testing.repos import commit, git, make_repo


@pytest.fixture(autouse=True)
def _fresh_caches():
    set_cache_dir(None)
    S.clear_memory_cache()
    yield
    set_cache_dir(None)
    S.clear_memory_cache()


C_SRC = """\
#include <stddef.h>

int depth(const int *t, int n) {
  if (n <= 0) return 0;
  return 1 + depth(t + 1, n - 1);
}

int other(int x) {
  return x + 1;
}
"""

CPP_SRC = """\
namespace tree {

struct Node {
  int depth(const Node* n, int limit) const {
    if (n == nullptr || limit <= 0) return 0;
    return 1 + depth(n->left, limit - 1);
  }
  const Node* left = nullptr;
};

}  // namespace tree
"""

PY_SRC = '''\
class Tree:
    def depth(self, node, n):
        """How deep ``node`` goes, at most ``n``."""
        if node is None or n <= 0:
            return 0
        return 1 + self.depth(node.left, n - 1)


def other(x):
    return x + 1
'''

RB_SRC = """\
class Router
  def depth!(node, n)
    return 0 if node.nil? || n <= 0
    1 + depth!(node.left, n - 1)
  end

  def other(x)
    x + 1
  end
end
"""

JS_SRC = """\
export function depth(node, n) {
  if (node == null || n <= 0) return 0;
  return 1 + depth(node.left, n - 1);
}

export function other(x) {
  return x + 1;
}
"""

# (path, source, anchored symbol, its name after the rename, the old name, the new name, a body edit)
CASES = [
    pytest.param("src/d.c", C_SRC, "depth", "tree_depth", "depth", "tree_depth", ("n - 1", "n - 2"), id="c"),
    pytest.param("src/tree.cpp", CPP_SRC, "tree::Node::depth", "tree.Node.tree_depth", "depth", "tree_depth",
                 ("limit - 1", "limit - 2"), id="cpp"),
    pytest.param("src/tree.py", PY_SRC, "Tree.depth", "Tree.tree_depth", "depth", "tree_depth",
                 ("n - 1", "n - 2"), id="python"),
    pytest.param("lib/router.rb", RB_SRC, "Router#depth!", "Router.tree_depth!", "depth!", "tree_depth!",
                 ("n - 1", "n - 2"), id="ruby"),
    pytest.param("src/tree.js", JS_SRC, "depth", "tree_depth", "depth", "tree_depth", ("n - 1", "n - 2"),
                 id="javascript"),
]


@pytest.mark.parametrize("path, src, symbol, renamed, old, new, edit", CASES)
def test_a_renamed_recursive_function_is_moved_to_its_new_name(tmp_path: Path, path, src, symbol, renamed, old,
                                                               new, edit):
    root = make_repo(tmp_path / "r", {path: src})
    repo = Repo(root)
    a = Resolver(repo).make(path, symbol)
    assert S.lookup(symbol_table(src.encode(), path), a.symbol or "") is not None

    c = commit(root, "rename", {path: src.replace(old, new)})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.MOVED, st
    assert st.path_now == path and st.symbol_now == renamed and st.commit == c


@pytest.mark.parametrize("path, src, symbol, renamed, old, new, edit", CASES)
def test_a_recursive_function_renamed_and_changed_is_not_moved(tmp_path: Path, path, src, symbol, renamed, old,
                                                               new, edit):
    root = make_repo(tmp_path / "r", {path: src})
    repo = Repo(root)
    a = Resolver(repo).make(path, symbol)

    c = commit(root, "rename and change", {path: src.replace(*edit).replace(old, new)})
    assert Resolver(repo).status(a, c).status == Status.DELETED


DELEGATE = """\
class Conn:
    def close(self, force=False):
        if force:
            self._sock.shutdown(2)
        self._sock.close()
        self._open = False
"""


def test_a_renamed_method_that_calls_another_objects_method_of_its_name_is_moved(tmp_path: Path):
    """``close`` calling ``self._sock.close()``, renamed ``shutdown_all`` without touching its body: moved."""
    root = make_repo(tmp_path / "r", {"conn.py": DELEGATE})
    repo = Repo(root)
    a = Resolver(repo).make("conn.py", "Conn.close")
    c = commit(root, "rename", {"conn.py": DELEGATE.replace("def close", "def shutdown_all")})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.MOVED and st.symbol_now == "Conn.shutdown_all"


def _run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)


@pytest.mark.parametrize("path, src, symbol, renamed, old, new, edit",
                         [c for c in CASES if c.id in ("c", "python", "ruby")])
def test_the_post_commit_hook_follows_a_renamed_recursive_function(tmp_path: Path, run_cli, path, src, symbol,
                                                                   renamed, old, new, edit):
    import yaml

    root = make_repo(tmp_path / "r", {path: src, "README.md": "x\n"})
    assert run_cli(root, "init")[0] == 0  # with the git hooks
    (root / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    code, out, err = run_cli(root, "remember", "depth stops at n levels", "--anchor", f"{path}::{symbol}", "--json")
    assert code == 0, err
    mid = json.loads(out)["id"]
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memory")

    (root / path).write_text(src.replace(old, new))
    proc = _run(root, "commit", "-qam", "rename", "--no-verify")  # git still runs post-commit
    assert proc.returncode == 0, proc.stderr
    assert "1 memory followed its moved code" in proc.stderr, proc.stderr
    assert "lost its code" not in proc.stderr
    text = (root / ".gitmem" / "memories" / f"{mid}.md").read_text()
    (a,) = yaml.safe_load(text.split("---\n")[1])["anchors"]
    assert a["anchor"] == f"{path}::{renamed}"
    shown = json.loads(run_cli(root, "show", mid, "--json")[1])
    assert shown["status"] == "fresh"


# --------------------------------------------------------------------------- C/C++ declarations without a body

C_HEADER = """\
#ifndef CJSON__H
#define CJSON__H

#define CJSON_PUBLIC(type) type

/* Minify a string: remove blank characters. */
CJSON_PUBLIC(void) cJSON_Minify(char *json);
CJSON_PUBLIC(int) cJSON_Compare(const char *a, const char *b, int case_sensitive);

#endif
"""

CPP_HEADER = """\
#pragma once
#include <string>

namespace app {

class Cache {
 public:
  int get(const std::string& key, int fallback = 0) const;
  void put(const std::string& key, int value);
};

}  // namespace app
"""


@pytest.mark.parametrize("path, src, symbol, rename, change", [
    pytest.param("include/cJSON.h", C_HEADER, "cJSON_Minify", ("char *json", "char *text"),
                 ("char *json", "const char *json"), id="c-prototype"),
    pytest.param("include/cJSON.c.h", C_HEADER.replace("CJSON_PUBLIC(void) ", "void ").replace(
        "CJSON_PUBLIC(int) ", "int "), "cJSON_Minify", ("char *json", "char * minified"),
        ("char *json", "char **json"), id="plain-c-prototype"),
    pytest.param("include/app/cache.hpp", CPP_HEADER, "app::Cache::get", ("& key, int fallback", "& k, int dflt"),
                 ("int fallback = 0", "int fallback = 1"), id="cpp-method-declaration"),
])
def test_a_parameter_renamed_in_a_declaration_is_fresh_its_type_changed_is_stale(tmp_path: Path, path, src,
                                                                                 symbol, rename, change):
    root = make_repo(tmp_path / "r", {path: src})
    repo = Repo(root)
    a = Resolver(repo).make(path, symbol)
    assert a.kind in ("function", "method")

    c = commit(root, "rename a parameter", {path: src.replace(*rename)})
    assert Resolver(repo).status(a, c).status == Status.FRESH

    c = commit(root, "reformat the declaration", {path: src.replace(*rename).replace("(", "( ")})
    assert Resolver(repo).status(a, c).status == Status.FRESH

    c = commit(root, "change a parameter's type", {path: src.replace(*change)})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.STALE and st.commit == c


def test_a_parameter_renamed_in_a_definition_is_stale(tmp_path: Path):
    root = make_repo(tmp_path / "r", {"src/d.c": C_SRC})
    repo = Repo(root)
    a = Resolver(repo).make("src/d.c", "depth")
    c = commit(root, "rename a parameter", {"src/d.c": C_SRC.replace("int n", "int m").replace("n ", "m ")
                                            .replace("n - 1", "m - 1")})
    assert Resolver(repo).status(a, c).status == Status.STALE


def test_a_declaration_and_its_definition_in_one_file_follow_the_definition(tmp_path: Path):
    """A prototype above its definition: the prototype's parameter names are free, the definition's are not."""
    src = "int twice(int value);\n\nint twice(int value) {\n  return value * 2;\n}\n"
    root = make_repo(tmp_path / "r", {"src/t.c": src})
    repo = Repo(root)
    a = Resolver(repo).make("src/t.c", "twice")
    c = commit(root, "prototype", {"src/t.c": src.replace("int twice(int value);", "int twice(int v);")})
    assert Resolver(repo).status(a, c).status == Status.FRESH
    c = commit(root, "definition", {"src/t.c": src.replace("value", "v")})
    assert Resolver(repo).status(a, c).status == Status.STALE


def test_the_disk_cache_keeps_the_rename_signals(tmp_path: Path):
    set_cache_dir(tmp_path / "cache")
    first = symbol_table(C_SRC.encode(), "src/d.c")["depth"]
    assert first.shape_fp and first.shape_self_fp and first.shape_self_fp != first.shape_fp
    assert list((tmp_path / "cache").rglob("*.json"))
    S.clear_memory_cache()
    again = symbol_table(C_SRC.encode(), "src/d.c")["depth"]
    assert again == first
    plain = symbol_table(b"int sum(const int *t, int n) {\n  int s = 0;\n  while (n-- > 0) s += *t++;\n"
                         b"  return s;\n}\n", "src/s.c")["sum"]
    assert plain.shape_fp and plain.shape_self_fp == ""  # its body never names it: shape_fp says all
