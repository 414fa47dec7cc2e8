"""The post-commit analysis parses only what memories are anchored to (issue 13, the 100k targets).

Real git repositories, real tree-sitter parses, the real catalog: a commit that touches only files no memory
is anchored to parses nothing (no symbol table of its blobs is made, in memory or on disk); one that touches a
file holding only file anchors compares no symbols and still re-checks those anchors; a change to an anchored
symbol is found whatever part of it changed (body, decorator, docstring-and-code, a block moved in or out).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.analyzer import analyze_commit
from gitmem.code import symbols
from gitmem.git import Repo
from gitmem.memories import RememberRequest, remember
from gitmem.model import Status
from gitmem.store import Store, init_layout
from testing.repos import commit, git, make_repo

APP = '''import functools


@functools.cache
def anchored(x):
    """Doubles x."""
    y = x * 2
    return y


def neighbour(x):
    return x + 1


class Box:
    def put(self, item):
        self.items.append(item)
        return item
'''


def _store(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Store]:
    root = make_repo(tmp_path / "r", files)
    init_layout(Repo(root))
    (root / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    store = Store(Repo(root))
    return root, store


def _parsed_blobs(cache: Path) -> set[str]:
    """Blob SHAs whose symbol table was made (the on-disk cache keeps one file per blob)."""
    return {p.name.split(".", 1)[0] for p in cache.rglob("*.json")}


@pytest.fixture
def symbol_cache(tmp_path: Path):  # type: ignore[no-untyped-def]
    cache = tmp_path / "symbol-cache"
    symbols.set_cache_dir(cache)
    symbols.clear_memory_cache()
    yield cache
    symbols.set_cache_dir(None)
    symbols.clear_memory_cache()


def test_a_commit_touching_only_unanchored_files_parses_nothing(tmp_path: Path, symbol_cache: Path) -> None:
    root, store = _store(tmp_path, {"app.py": APP, "other.py": "def free(a):\n    return a\n"})
    remember(store, RememberRequest(text="anchored doubles", anchors=("app.py::anchored",)))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memory")
    symbols.clear_memory_cache()
    before = _parsed_blobs(symbol_cache)
    sha = commit(root, "edit the unanchored file", {"other.py": "def free(a):\n    return a * 3\n"})
    res = analyze_commit(Store(Repo(root)), sha)
    assert res.affected == [] and res.went_out_of_date == []
    new_blob = git(root, "rev-parse", f"{sha}:other.py").strip()
    old_blob = git(root, "rev-parse", f"{sha}^:other.py").strip()
    made = _parsed_blobs(symbol_cache) - before
    assert new_blob not in made and old_blob not in made and made == set()


def test_a_file_with_only_file_anchors_is_rechecked(tmp_path: Path, symbol_cache: Path) -> None:
    root, store = _store(tmp_path, {"app.py": APP, "other.py": "def free(a):\n    return a\n"})
    m = remember(store, RememberRequest(text="the whole of other.py", anchors=("other.py",)))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memory")
    sha = commit(root, "edit other", {"other.py": "def free(a):\n    return a * 3\n"})
    res = analyze_commit(Store(Repo(root)), sha)  # no symbol to compare: the file anchor is re-checked
    assert [ms.memory.id for ms in res.went_out_of_date] == [m.id]
    assert res.went_out_of_date[0].status == Status.STALE


@pytest.mark.parametrize("edit, why", [
    (("    y = x * 2\n", "    y = x * 3\n"), "body"),
    (("@functools.cache\n", "@functools.lru_cache(maxsize=8)\n"), "decorator"),
    (('    """Doubles x."""\n    y = x * 2\n', '    """Triples x."""\n    y = x * 3\n'), "docstring and code"),
    (("    y = x * 2\n    return y\n", "    return x * 2\n"), "block moved out"),
])
def test_a_change_to_an_anchored_symbol_is_found_whatever_part_changed(
        tmp_path: Path, symbol_cache: Path, edit: tuple[str, str], why: str) -> None:
    root, store = _store(tmp_path, {"app.py": APP, "other.py": "def free(a):\n    return a\n"})
    on_f = remember(store, RememberRequest(text="anchored doubles", anchors=("app.py::anchored",)))
    on_other = remember(store, RememberRequest(text="neighbour adds one", anchors=("app.py::neighbour",)))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memory")
    old, new = edit
    assert old in APP
    sha = commit(root, why, {"app.py": APP.replace(old, new, 1), "other.py": "def free(a):\n    return -a\n"})
    res = analyze_commit(Store(Repo(root)), sha)
    assert [ms.memory.id for ms in res.went_out_of_date] == [on_f.id], why
    assert on_other.id not in {ms.memory.id for ms in res.affected}


def test_only_a_docstring_change_is_no_news(tmp_path: Path, symbol_cache: Path) -> None:
    root, store = _store(tmp_path, {"app.py": APP})
    remember(store, RememberRequest(text="anchored doubles", anchors=("app.py::anchored",)))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memory")
    sha = commit(root, "doc", {"app.py": APP.replace('"""Doubles x."""', '"""Doubles x, twice as large."""')})
    assert analyze_commit(Store(Repo(root)), sha).went_out_of_date == []


def test_a_method_moved_into_another_class_is_found(tmp_path: Path, symbol_cache: Path) -> None:
    root, store = _store(tmp_path, {"app.py": APP})
    m = remember(store, RememberRequest(text="put appends", anchors=("app.py::Box.put",)))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memory")
    moved = APP.replace("class Box:\n", "class Crate:\n    pass\n\n\nclass Box:\n    size = 1\n\n\nclass Bag:\n")
    sha = commit(root, "move put to Bag", {"app.py": moved})
    res = analyze_commit(Store(Repo(root)), sha)
    assert [ms.memory.id for ms in res.went_out_of_date] == [m.id]
    assert res.went_out_of_date[0].status in (Status.MOVED, Status.DELETED, Status.STALE)
