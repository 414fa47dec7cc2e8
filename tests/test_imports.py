"""The code graph: import extraction and resolution per language, caching, and ranking by import proximity."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gitmem import layout
from gitmem.code import imports as I
from gitmem.code.imports import ImportCache, ImportResolver, cached_imports, extract_imports, resolve_imports
from gitmem.model import Anchor, Memory
from gitmem.rank import focus as F
from gitmem.rank import score as R
from gitmem.rank.focus import Focus
from testing.repos import commit, make_repo


def _resolve(path: str, source: str, files: set[str], read=None) -> set[str]:
    return resolve_imports(path, extract_imports(path, source.encode()), files, read)


# --------------------------------------------------------------------------- python

PY_SRC = '''\
"""Service module."""
from __future__ import annotations

import os
import shop.util
import shop.models.order as order_mod, json
from . import config
from .pricing import discount as disc, Tax
from ..common.log import get_logger
from shop.models import customer, Missing
from thirdparty.lib import thing
from helpers import *


def late():
    from .lazy import thing  # imports inside functions count
    return thing
'''

PY_FILES = {
    "src/shop/__init__.py", "src/shop/util.py", "src/shop/config.py",
    "src/shop/models/__init__.py", "src/shop/models/order.py", "src/shop/models/customer.py",
    "src/shop/services/__init__.py", "src/shop/services/svc.py", "src/shop/services/pricing/__init__.py",
    "src/shop/services/pricing/discount.py", "src/shop/services/lazy.py",
    "src/shop/common/__init__.py", "src/shop/common/log.py",
    "tests/test_svc.py", "tests/helpers.py", "README.md",
}


def test_python_extraction_forms() -> None:
    specs = extract_imports("src/shop/services/svc.py", PY_SRC.encode())
    assert specs == ["os", "shop.util", "shop.models.order", "json", ".:config", ".pricing:discount",
                     ".pricing:Tax", "..common.log:get_logger", "shop.models:customer", "shop.models:Missing",
                     "thirdparty.lib:thing", "helpers", ".lazy:thing"]


def test_python_resolution_relative_absolute_and_src_root() -> None:
    got = _resolve("src/shop/services/svc.py", PY_SRC, PY_FILES)
    assert got == {
        "src/shop/util.py",                          # import shop.util (root inferred: src/)
        "src/shop/models/order.py",                  # import a.b.c as x
        "src/shop/services/__init__.py",             # from . import config: no config.py here -> the package
        "src/shop/services/pricing/discount.py",     # from .pricing import discount: a submodule
        "src/shop/services/pricing/__init__.py",     # from .pricing import Tax: a name in the package
        "src/shop/common/log.py",                    # from ..common.log import x
        "src/shop/models/customer.py",               # from shop.models import customer (submodule)
        "src/shop/models/__init__.py",               # from shop.models import Missing (a name)
        "src/shop/services/lazy.py",                 # function-level import
    }  # os, json, thirdparty.lib: not files of this repository; helpers: not next to a package module


def test_python_script_directory_and_repo_root() -> None:
    files = {"tests/test_svc.py", "tests/helpers.py", "tool.py", "lib/__init__.py", "lib/core.py"}
    src = "import helpers\nimport tool\nfrom lib import core\nfrom lib.core import run\n"
    assert _resolve("tests/test_svc.py", src, files) == {"tests/helpers.py", "tool.py", "lib/core.py"}
    # a package module does not see its directory's siblings by bare name (no implicit relative imports)
    assert _resolve("lib/core.py", "import helpers\n", files | {"lib/helpers.py"}) == set()
    # relative imports above the repository root resolve to nothing
    assert _resolve("lib/core.py", "from ... import x\n", files) == set()


# --------------------------------------------------------------------------- javascript / typescript

JS_SRC = """\
import React, { useState } from 'react';
import { route } from './router';
import './polyfill.js';
export { helper } from '../shared/helpers';
export * from './types';
const cfg = require('./config.json');
const db = require(`./db`);
const dyn = await import('./lazy/index.js');
const skip = require(`./${name}`);
foo('./not-an-import');
"""

JS_FILES = {
    "web/app/main.js", "web/app/router.js", "web/app/polyfill.js", "web/shared/helpers/index.ts",
    "web/app/types.d.ts", "web/app/config.json", "web/app/db.mjs", "web/app/lazy/index.js",
    "web/app/not-an-import.js",
}


def test_js_extraction_forms() -> None:
    assert extract_imports("web/app/main.js", JS_SRC.encode()) == [
        "react", "./router", "./polyfill.js", "../shared/helpers", "./types", "./config.json", "./db",
        "./lazy/index.js"]


def test_js_resolution_extensions_and_index() -> None:
    assert _resolve("web/app/main.js", JS_SRC, JS_FILES) == {
        "web/app/router.js", "web/app/polyfill.js", "web/shared/helpers/index.ts", "web/app/types.d.ts",
        "web/app/config.json", "web/app/db.mjs", "web/app/lazy/index.js"}


def test_typescript_and_tsx() -> None:
    ts = """\
import type { User } from './model/user';
import legacy = require('./legacy');
import { format } from './util.js';
export * as api from '../api';
import lodash from 'lodash';
"""
    files = {"src/app/svc.ts", "src/app/model/user.ts", "src/app/legacy.js", "src/app/util.ts",
             "src/api/index.tsx", "src/app/util.js.map"}
    assert extract_imports("src/app/svc.ts", ts.encode()) == [
        "./model/user", "./legacy", "./util.js", "../api", "lodash"]
    assert _resolve("src/app/svc.ts", ts, files) == {
        "src/app/model/user.ts", "src/app/legacy.js", "src/app/util.ts", "src/api/index.tsx"}
    tsx = "import { Button } from './Button';\nexport const App = () => <Button label='x' />;\n"
    assert _resolve("ui/App.tsx", tsx, {"ui/App.tsx", "ui/Button.tsx"}) == {"ui/Button.tsx"}
    # a specifier climbing out of the repository is nothing
    assert _resolve("a.js", "import x from '../outside';\n", {"a.js", "outside.js"}) == set()


# --------------------------------------------------------------------------- go

GO_SRC = """\
package api

import "fmt"

import (
\t"net/http"

\tstore "example.com/shop/internal/store"
\t_ "example.com/shop/internal/migrations"
\t"example.com/shop/tools/gen/v2"
\t"github.com/other/lib"
)

func Handler(w http.ResponseWriter) { fmt.Println(store.Open()) }
"""


def test_go_extraction_and_resolution_via_go_mod() -> None:
    assert extract_imports("api/handler.go", GO_SRC.encode()) == [
        "fmt", "net/http", "example.com/shop/internal/store", "example.com/shop/internal/migrations",
        "example.com/shop/tools/gen/v2", "github.com/other/lib"]
    contents = {"go.mod": b"module example.com/shop\n\ngo 1.22\n",
                "tools/gen/go.mod": b"// nested module\nmodule \"example.com/shop/tools/gen\"\n"}
    files = {"go.mod", "api/handler.go", "internal/store/db.go", "internal/store/tx.go",
             "internal/store/db_test.go", "internal/store/sub/x.go", "internal/migrations/m1.go",
             "tools/gen/go.mod", "tools/gen/v2/gen.go"}
    got = _resolve("api/handler.go", GO_SRC, files, contents.get)
    assert got == {"internal/store/db.go", "internal/store/tx.go", "internal/migrations/m1.go",
                   "tools/gen/v2/gen.go"}  # no _test.go, no sub-package, nothing outside the repo
    assert _resolve("api/handler.go", GO_SRC, files, None) == set()  # no go.mod content: no module path


# --------------------------------------------------------------------------- rust

RUST_SRC = """\
use std::collections::HashMap;
use crate::config::Settings;
use crate::net::{client::Client, server};
use super::util::*;
use self::parser::{self, Token as Tok};
use models::User;
pub mod parser;
mod inline { pub fn f() {} }

fn main() { use crate::lib_item; }
"""


def test_rust_extraction_forms() -> None:
    assert extract_imports("src/app/mod.rs", RUST_SRC.encode()) == [
        "std::collections::HashMap", "crate::config::Settings", "crate::net::client::Client",
        "crate::net::server", "super::util", "self::parser", "self::parser::Token", "models::User",
        "mod parser", "crate::lib_item"]


def test_rust_resolution_crate_super_self_and_mod() -> None:
    files = {"Cargo.toml", "src/lib.rs", "src/config.rs", "src/net/mod.rs", "src/net/client.rs",
             "src/net/server.rs", "src/util.rs", "src/app/mod.rs", "src/app/parser.rs", "src/app/models.rs"}
    assert _resolve("src/app/mod.rs", RUST_SRC, files) == {
        "src/config.rs",        # crate::config::Settings: the item's module file
        "src/net/client.rs",    # use-list expanded
        "src/net/server.rs",
        "src/util.rs",          # super:: from crate::app
        "src/app/parser.rs",    # self::parser and `mod parser;`
        "src/app/models.rs",    # 2018 path: a submodule of this module
        "src/lib.rs",           # crate::lib_item lives in the crate root
    }
    # `mod foo;` in a non-mod.rs file lives in the directory named after the file (src/net2/foo.rs)
    assert _resolve("src/net2.rs", "mod foo;\n", {"src/lib.rs", "src/net2.rs", "src/net2/foo.rs", "src/foo.rs"}) \
        == {"src/net2/foo.rs"}
    # a workspace member's crate root is its own src/
    assert _resolve("crates/core/src/a.rs", "use crate::b::X;\n",
                    {"crates/core/src/lib.rs", "crates/core/src/a.rs", "crates/core/src/b.rs", "src/b.rs"}) \
        == {"crates/core/src/b.rs"}


# --------------------------------------------------------------------------- java

JAVA_SRC = """\
package com.shop.api;

import java.util.List;
import com.shop.model.Order;
import com.shop.model.Order.Line;
import static com.shop.util.Money.round;
import com.shop.events.*;
import static com.shop.util.Strings.*;

public class OrderController { }
"""


def test_java_extraction_and_resolution() -> None:
    assert extract_imports("src/main/java/com/shop/api/OrderController.java", JAVA_SRC.encode()) == [
        "java.util.List", "com.shop.model.Order", "com.shop.model.Order.Line", "com.shop.util.Money.round",
        "com.shop.events.*", "com.shop.util.Strings.*"]
    root = "src/main/java/com/shop/"
    files = {root + p for p in ("api/OrderController.java", "model/Order.java", "util/Money.java",
                                "util/Strings.java", "events/Created.java", "events/Paid.java",
                                "events/sub/Deep.java", "other/Unused.java")}
    assert _resolve(root + "api/OrderController.java", JAVA_SRC, files) == {
        root + "model/Order.java", root + "util/Money.java", root + "util/Strings.java",
        root + "events/Created.java", root + "events/Paid.java"}


# --------------------------------------------------------------------------- robustness and caching


def test_unknown_binary_and_broken_sources() -> None:
    assert extract_imports("notes.md", b"import x") == []
    assert extract_imports("x.py", b"import os\x00\x01") == []
    assert extract_imports("x.py", b"import a.b\nfrom . import (\n") [:1] == ["a.b"]  # error recovery
    assert resolve_imports("notes.md", ["./x"], {"x.md"}) == set()
    assert resolve_imports("a.py", ["a"], {"a.py"}) == set()  # never the importing file itself


def test_import_cache_on_disk_is_used_and_pruned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "imports.json"
    I.clear_memory_cache()
    cache = ImportCache(path)
    assert cached_imports("a.py", b"import b\n", cache=cache) == ["b"]
    assert cached_imports("c.py", b"import d\n", cache=cache) == ["d"]
    cache.save()
    I.clear_memory_cache()

    def boom(*args, **kwargs):
        raise AssertionError("parsed despite a cache hit")

    monkeypatch.setattr(I, "_extract", boom)
    again = ImportCache(path)
    assert cached_imports("a.py", b"import b\n", cache=again) == ["b"]  # from disk, not parsed
    again.save()  # only a.py's entry was used: c.py's is dropped
    assert len(json.loads(path.read_text())["entries"]) == 1
    path.write_text("{not json")
    assert ImportCache(path).entries == {}  # a broken cache is no cache


def test_resolved_imports_are_cached_for_one_file_list_only(tmp_path: Path) -> None:
    """The files an importer's specifiers resolve to are cached (``import_neighbours``), keyed by the file list:
    a module added or removed is seen at once; Go, resolved from ``go.mod``'s content, is never cached."""
    path = tmp_path / "imports.json"
    src = {"pkg/__init__.py": b"", "pkg/a.py": b"from pkg import b\n", "pkg/b.py": b"", "pkg/c.py": b"",
           "go.mod": b"module example.com/m\n", "cmd/main.go": b'package main\nimport "example.com/m/lib"\n',
           "lib/lib.go": b"package lib\n"}

    def edges(files: set[str]) -> set[tuple[str, str]]:
        cache = ImportCache(path)
        got = I.import_neighbours(["pkg/b.py", "lib/lib.go"], ["pkg/a.py", "cmd/main.go"],
                                  ImportResolver(files, src.get), src.get, cache=cache)
        cache.save()
        return got

    both = {("pkg/a.py", "pkg/b.py"), ("cmd/main.go", "lib/lib.go")}
    assert edges(set(src)) == both
    keys = set(json.loads(path.read_text())["entries"])
    assert len([k for k in keys if k.startswith("to:")]) == 2  # pkg/a.py's and pkg/b.py's; no Go file's
    assert edges(set(src)) == both  # from the cache
    assert edges(set(src) - {"pkg/b.py"}) == {("cmd/main.go", "lib/lib.go")}  # another list: resolved again
    assert edges(set(src)) == both


def test_import_tier_sits_between_same_file_and_same_dir() -> None:
    def mem(mid: str, path: str) -> Memory:
        return Memory(id=mid, type="discovery", title=mid, anchors=[Anchor(path=path, commit="0" * 40, kind="file")],
                      created="2026-01-01T00:00:00Z", updated="2026-01-01T00:00:00Z")

    f = Focus()
    f.add_file("pkg/a.py", 1.0, "given")
    f.add_import("pkg/b.py", 1.0, "imported by pkg/a.py")
    f.add_import("lib/far.py", F.WEIGHT_BRANCH, "imports pkg/x.py")
    ranked = R.rank([mem("DIR", "pkg/c.py"), mem("IMP", "pkg/b.py"), mem("FILE", "pkg/a.py"),
                     mem("FAR", "lib/far.py")], f)
    assert [s.memory.id for s in ranked] == ["FILE", "IMP", "FAR", "DIR"]
    by = {s.memory.id: s for s in ranked}
    assert by["IMP"].proximity == R.TIER_IMPORT and by["IMP"].near == "imported by pkg/a.py"
    assert by["FAR"].proximity == pytest.approx(R.TIER_IMPORT * F.WEIGHT_BRANCH)  # focus weight applies
    assert R.TIER_SAME_FILE > R.TIER_IMPORT > R.TIER_SAME_DIR


# --------------------------------------------------------------------------- end to end

A_PY = "from pkg.b import parse\n\n\ndef main(text):\n    return parse(text)\n"
B_PY = "def parse(text):\n    return text.split(',')\n"
C_PY = "def unrelated():\n    return 42\n"
D_PY = "from . import a\n\n\ndef cli():\n    return a.main('x,y')\n"


def _context(run_json, repo: Path) -> tuple[dict[str, dict], list[str]]:
    """`gitmem context --file pkg/a.py`: (first anchor -> memory row, first anchors best first)."""
    out = run_json(repo, "context", "--file", "pkg/a.py")
    return {m["anchors"][0]: m for m in out["memories"]}, [m["anchors"][0] for m in out["memories"]]


def test_context_ranks_import_neighbours_above_same_directory(tmp_path: Path, run_cli, run_json,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "p", {"pkg/__init__.py": "", "pkg/a.py": A_PY, "pkg/b.py": B_PY,
                                      "pkg/c.py": C_PY, "pkg/d.py": D_PY})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    # made in this order, so that by recency alone (the tie-break) c's memory would come first
    run_json(repo, "remember", "parse splits on commas only", "--anchor", "pkg/b.py::parse")
    run_json(repo, "remember", "cli is the console entry point", "--anchor", "pkg/d.py::cli")
    run_json(repo, "remember", "unrelated returns the answer", "--anchor", "pkg/c.py::unrelated")
    commit(repo, "memories")

    I.clear_memory_cache()
    by, order = _context(run_json, repo)
    # b and d tie on proximity (import tier); between them recency decides, to the second of `updated`
    assert sorted(order[:2]) == ["pkg/b.py::parse", "pkg/d.py::cli"] and order[2] == "pkg/c.py::unrelated"
    assert by["pkg/b.py::parse"]["proximity"] == R.TIER_IMPORT
    assert by["pkg/b.py::parse"]["near"] == "imported by pkg/a.py"      # outgoing: a.py imports b.py
    assert by["pkg/d.py::cli"]["proximity"] == R.TIER_IMPORT
    assert by["pkg/d.py::cli"]["near"] == "imports pkg/a.py"            # incoming: d.py imports a.py
    assert by["pkg/c.py::unrelated"]["proximity"] == R.TIER_SAME_DIR

    # the import lists were cached by blob SHA on disk; a second run parses nothing
    cache = json.loads(((layout.of(repo).cache_dir / "imports.json")).read_text())
    lists = [k for k in cache["entries"] if not k.startswith("to:")]  # "to:": what they resolve to
    assert cache["version"] == I.IMPORTS_VERSION and len(lists) == 4  # a.py + 3 anchored
    I.clear_memory_cache()
    monkeypatch.setattr(I, "_extract", lambda *a: (_ for _ in ()).throw(AssertionError("parsed")))
    assert _context(run_json, repo)[1] == order


def test_context_import_bounds(tmp_path: Path, run_cli, run_json, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "p", {"pkg/__init__.py": "", "pkg/a.py": A_PY, "pkg/b.py": B_PY,
                                      "pkg/d.py": D_PY})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    run_json(repo, "remember", "parse splits on commas only", "--anchor", "pkg/b.py::parse")
    run_json(repo, "remember", "cli is the console entry point", "--anchor", "pkg/d.py::cli")
    I.clear_memory_cache()
    # no candidate may be parsed: the importer d.py is not found, a.py's own imports still are
    monkeypatch.setattr(F, "MAX_IMPORT_CANDIDATES", 0)
    by, _ = _context(run_json, repo)
    assert by["pkg/b.py::parse"]["proximity"] == R.TIER_IMPORT
    assert by["pkg/d.py::cli"]["proximity"] == R.TIER_SAME_DIR
    # no focus file may be followed either: only the same-directory tier is left
    monkeypatch.setattr(F, "MAX_IMPORT_FOCUS_FILES", 0)
    by, _ = _context(run_json, repo)
    assert by["pkg/b.py::parse"]["proximity"] == R.TIER_SAME_DIR
    # a file over the size limit is not parsed
    monkeypatch.setattr(F, "MAX_IMPORT_FOCUS_FILES", 50)
    monkeypatch.setattr(F, "MAX_IMPORT_SOURCE_BYTES", len(A_PY) - 1)
    by, _ = _context(run_json, repo)
    assert by["pkg/b.py::parse"]["proximity"] == R.TIER_SAME_DIR


# --------------------------------------------------------------------------- gitmem's own source


def test_gitmem_own_source_tree() -> None:
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                          capture_output=True)
    if proc.returncode != 0:
        pytest.skip("the test tree is not a git work tree")
    files = {p for p in proc.stdout.decode().split("\0") if p and (root / p).is_file()}

    def read(p: str) -> bytes | None:
        return (root / p).read_bytes() if (root / p).is_file() else None

    resolver = ImportResolver(files, read)

    def deps(path: str) -> set[str]:
        return resolver.resolve(path, extract_imports(path, read(path) or b""))

    assert {"gitmem/rank/focus.py", "gitmem/rank/score.py", "gitmem/anchors.py", "gitmem/git.py"} <= deps(
        "gitmem/ops/context.py")
    assert {"gitmem/code/imports.py", "gitmem/anchors.py"} <= deps("gitmem/rank/focus.py")
    assert {"gitmem/code/languages.py", "gitmem/code/symbols.py"} <= deps("gitmem/code/imports.py")
    assert {"gitmem/rank/score.py", "gitmem/rank/focus.py", "gitmem/model.py"} <= deps("tests/test_rank.py")
    assert "testing/repos.py" in deps("tests/conftest.py")
    # the reverse direction over the whole tree: who imports the ranker
    importers = {p for p in files if p.endswith(".py") and "gitmem/rank/score.py" in deps(p)}
    assert {"gitmem/ops/context.py", "tests/test_rank.py", "tests/test_imports.py"} <= importers
