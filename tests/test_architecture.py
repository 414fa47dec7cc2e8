"""Static checks over the ``gitmem/`` source (issue 10, "One owner per job"), with ``ast`` only.

Three small detectors, each documented with what it catches and what it cannot:

* the import graph of gitmem's own modules, function-level imports included: no cycle;
* SQL (``import sqlite3``, SQL statement literals, ``.execute*()`` calls): only in the catalog;
* memory-file writes (``memfile.write*`` and ``store.save``/``store.delete`` call sites): one write path.

The import graph must have no cycle; SQL lives in ``gitmem/catalog/`` only (``SQL_MODULES`` names the
two foreign-database exceptions); memory files are written by ``gitmem/memories.py`` only.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

PACKAGE = "gitmem"
PACKAGE_DIR = Path(__file__).resolve().parent.parent / PACKAGE


# -- reading the package ------------------------------------------------------------------------


@cache
def modules() -> dict[str, Path]:
    """Dotted module name -> source file, for every ``.py`` file under ``gitmem/`` (``__init__`` is its package)."""
    out = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


@cache
def tree(module: str) -> ast.Module:
    path = modules()[module]
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _is_package(module: str) -> bool:
    return modules()[module].name == "__init__.py"


def _type_checking_nodes(mod: ast.Module) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (never executed, so they cannot form a runtime cycle)."""
    skip: set[int] = set()
    for node in ast.walk(mod):
        test = getattr(node, "test", None) if isinstance(node, ast.If) else None
        if getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING":
            for stmt in node.body:
                skip.update(id(n) for n in ast.walk(stmt))
    return skip


# -- a. the import graph ------------------------------------------------------------------------


def _base_of(module: str, is_package: bool, node: ast.ImportFrom) -> str | None:
    """The absolute module a ``from X import ...`` in ``module`` names as X (None for a relative import too high)."""
    if not node.level:
        return node.module
    anchor = (module if is_package else module.rpartition(".")[0]).split(".")
    if node.level - 1 >= len(anchor):
        return None
    anchor = anchor[: len(anchor) - (node.level - 1)]
    return ".".join(anchor + ([node.module] if node.module else []))


def _resolve(base: str, name: str | None, known: set[str]) -> str | None:
    """The gitmem module ``from base import name`` (or ``import base``) loads: ``base.name`` when that is a
    module, else ``base`` itself (the longest existing prefix for ``import a.b.c``); None when outside gitmem."""
    if name and f"{base}.{name}" in known:
        return f"{base}.{name}"
    parts = base.split(".")
    while parts:
        if ".".join(parts) in known:
            return ".".join(parts)
        parts.pop()
    return None


def imports_in(mod: ast.Module, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``mod`` (the source of ``module``) imports, anywhere in its body.

    Catches: ``import gitmem.x[.y] [as z]``, ``from gitmem.x import y``, ``from . import x``,
    ``from .x import y``, ``from ..x import y``, at module level or inside functions and
    methods; ``from p import name`` points at the submodule ``p.name`` when there is one, else at
    ``p``. Only the most specific module is an edge (the parent packages a dotted import also
    runs are left out: they would make every subpackage module look cyclic with its ``__init__``).
    Leaves out: imports under ``if TYPE_CHECKING:`` (never run); self-imports.
    Cannot see: dynamic imports (``importlib.import_module``, ``__import__``).
    """
    skip = _type_checking_nodes(mod)
    found: set[str] = set()
    for node in ast.walk(mod):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    target = _resolve(alias.name, None, known)
                    if target:
                        found.add(target)
        elif isinstance(node, ast.ImportFrom):
            base = _base_of(module, is_package, node)
            if not base or not (base == PACKAGE or base.startswith(PACKAGE + ".")):
                continue
            for alias in node.names:
                target = _resolve(base, alias.name, known)
                if target:
                    found.add(target)
    found.discard(module)
    return found


@cache
def import_graph() -> dict[str, frozenset[str]]:
    known = set(modules())
    return {m: frozenset(imports_in(tree(m), m, _is_package(m), known)) for m in known}


def find_cycles(graph: dict[str, frozenset[str]]) -> set[tuple[str, ...]]:
    """Every elementary cycle of ``graph``, each as a tuple rotated to start at its smallest module.

    A depth-first walk from each module that only visits modules greater than the start (so each
    cycle is found once, from its smallest member). Fine for a graph of ~60 modules.
    """
    cycles: set[tuple[str, ...]] = set()
    for start in sorted(graph):
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    cycles.add(tuple(path))
                elif nxt > start and nxt not in path:
                    stack.append((nxt, [*path, nxt]))
    return cycles


def show_cycle(cycle: tuple[str, ...]) -> str:
    short = [m.removeprefix(PACKAGE + ".") for m in cycle]
    return " -> ".join([*short, short[0]])


def test_import_detector_sees_function_level_and_relative_imports() -> None:
    """The detector on the real package (guards against a graph that is silently empty)."""
    graph = import_graph()
    assert "gitmem.git" in graph["gitmem.memories"]      # from .git import WORKTREE (module level, relative)
    assert "gitmem.git" in graph["gitmem.hook_entry"]    # inside _run(): from gitmem.git import scrub_git_env
    assert all(m.startswith(PACKAGE) for deps in graph.values() for m in deps)
    assert sum(len(deps) for deps in graph.values()) > 100


def test_import_detector_on_a_synthetic_module() -> None:
    src = ("import gitmem.code.symbols as s\nfrom .. import git\nfrom ..capture import spool, NAME\n"
           "from .imports import x\nimport os\nfrom os import path\nimport gitmem.nothing.here\n\n"
           "def f():\n    from gitmem import memfile\n    from ..store import Store\n"
           "if TYPE_CHECKING:\n    from gitmem import index\n")
    known = {"gitmem", "gitmem.code", "gitmem.code.symbols", "gitmem.code.imports", "gitmem.code.fake", "gitmem.git",
             "gitmem.capture", "gitmem.capture.spool", "gitmem.memfile", "gitmem.store", "gitmem.search.index"}
    assert imports_in(ast.parse(src), "gitmem.code.fake", False, known) == {
        "gitmem.code.symbols", "gitmem.git", "gitmem.capture.spool", "gitmem.capture",
        "gitmem.code.imports", "gitmem.memfile", "gitmem.store", "gitmem"}
    # not os; not index (TYPE_CHECKING); "import gitmem.nothing.here" counts as the package it runs: gitmem
    pkg = "from . import symbols\nfrom .symbols import Symbol\n"  # in a package's __init__, "." is the package
    assert imports_in(ast.parse(pkg), "gitmem.code", True, known) == {"gitmem.code.symbols"}


def test_find_cycles_lists_each_elementary_cycle_once() -> None:
    graph = {"a": frozenset({"b"}), "b": frozenset({"c", "a"}), "c": frozenset({"a"}), "d": frozenset({"a"})}
    assert {show_cycle(c) for c in find_cycles(graph)} == {"a -> b -> a", "a -> b -> c -> a"}
    assert find_cycles({"a": frozenset({"b"}), "b": frozenset()}) == set()


def test_no_import_cycle() -> None:
    cycles = sorted(show_cycle(c) for c in find_cycles(import_graph()))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


# -- b. SQL only in the catalog -----------------------------------------------------------------

#: A string that *is* an SQL statement: keyword structure, not just a leading English verb. A SELECT
#: needs a column list (``*``, names, calls, ``AS`` aliases, comma-separated) then FROM: "Select a
#: memory from the list" is English, "select one from the list" would still count (rare outside docstrings).
_SQL_COLUMN = r"(?:\*|[\w.]+(?:\([^)]*\))?(?:\s+AS\s+\w+)?)"
SQL_STATEMENT = re.compile(rf"""
    \A\s*(?:
        SELECT\s+(?:DISTINCT\s+)?{_SQL_COLUMN}(?:\s*,\s*{_SQL_COLUMN})*\s+FROM\b
      | (?:INSERT|REPLACE)(?:\s+OR\s+\w+)?\s+INTO\s+[\w."`\[\]]+\s*(?:\(|VALUES\b|SELECT\b|DEFAULT\b)
      | UPDATE\s+(?:OR\s+\w+\s+)?[\w."`\[\]]+\s+SET\s+[\w"`\[\]]+\s*=
      | DELETE\s+FROM\s+[\w."`\[]
      | CREATE\s+(?:TEMP(?:ORARY)?\s+|UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|VIEW|TRIGGER)\b
      | DROP\s+(?:TABLE|INDEX|VIEW|TRIGGER)\b
      | PRAGMA\s+[\w.]+\s*(?:[=(;]|\Z)
      | BEGIN(?:\s+(?:DEFERRED|IMMEDIATE|EXCLUSIVE))?(?:\s+TRANSACTION)?\s*;?\s*\Z
      | WITH\s+(?:RECURSIVE\s+)?\w+(?:\s*\([^)]*\))?\s+AS\s*\(
    )""", re.IGNORECASE | re.VERBOSE)

SQL_CALLS = {"execute", "executemany", "executescript"}


def _string_value(node: ast.AST) -> str | None:
    """The text of a string literal; an f-string with each ``{...}`` replaced by ``x``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "x" for v in node.values)
    return None


def sql_uses(mod: ast.Module) -> list[str]:
    """Where the module ``mod`` uses SQL, as ``line: what`` strings (empty when it does not).

    Catches: ``import sqlite3`` / ``from sqlite3 import ...``; string literals and f-strings that
    are SQL statements (``SQL_STATEMENT``); calls ``<anything>.execute(...)``, ``.executemany(...)``,
    ``.executescript(...)``, except those whose first argument is a list or tuple display (an argv:
    GitPython's ``Git.execute(["git", ...])`` runs a command, not SQL).
    Leaves out: docstrings and other expression-statement strings (never executed); imports under
    ``if TYPE_CHECKING:`` (a type in an annotation, never run).
    Cannot see: SQL assembled with ``+`` or ``%`` from pieces that are not statements on their own,
    or SQL passed to a database through a wrapper with another method name.
    """
    statements = {id(n.value) for n in ast.walk(mod) if isinstance(n, ast.Expr)}
    inside_fstring = {id(v) for n in ast.walk(mod) if isinstance(n, ast.JoinedStr) for v in ast.walk(n)
                      if v is not n}
    found = []
    typing_only = _type_checking_nodes(mod)
    for node in ast.walk(mod):
        line = getattr(node, "lineno", 0)
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "sqlite3" for a in node.names):
            found.append(f"{line}: import sqlite3")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sqlite3" and not node.level:
            found.append(f"{line}: from sqlite3 import")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS
              and not (node.args and isinstance(node.args[0], (ast.List, ast.Tuple)))):
            found.append(f"{line}: .{node.func.attr}()")
        elif id(node) not in statements and id(node) not in inside_fstring:
            text = _string_value(node)
            if text is not None and SQL_STATEMENT.match(text):
                found.append(f"{line}: {' '.join(text.split())[:60]!r}")
    return sorted(found, key=lambda s: int(s.split(":")[0]))


@cache
def sql_modules() -> dict[str, tuple[str, ...]]:
    return {m: tuple(uses) for m in modules() if (uses := sql_uses(tree(m)))}


def _in(module: str, allowed: dict[str, str]) -> bool:
    """``module`` is allowed: listed itself, or inside a listed package (``gitmem.catalog`` covers ``catalog/``)."""
    return any(module == a or module.startswith(a + ".") for a in allowed)


#: The owner of gitmem's SQL, and the only exceptions, with why.
SQL_MODULES = {
    "gitmem.catalog": "the catalog package: its schema and every statement on it",
    "gitmem.ops.import_claude_mem": "reads claude-mem's own sqlite database (another program's file, read-only)",
    "gitmem.org.index": "LanceDB merge_insert(...).execute(rows): the organisation index's writer, caught by the "
                        ".execute() rule; not SQL",
}


def test_sql_detector_catches_sql_and_skips_english() -> None:
    for sql in ("SELECT id FROM memories", "  select 1\n  from sqlite_master", "INSERT OR REPLACE INTO t(a) VALUES (?)",
                "UPDATE files SET state = ?", "DELETE FROM memories WHERE id = ?", "CREATE TABLE IF NOT EXISTS t (a)",
                "create unique index i on t(a)", "DROP TABLE t", "PRAGMA journal_mode=WAL", "PRAGMA user_version",
                "BEGIN IMMEDIATE", "REPLACE INTO t VALUES (1)", "WITH x AS (SELECT 1) SELECT * FROM x",
                "SELECT COUNT(*) FROM t", "SELECT m.id AS id, bm25(fts) AS s FROM fts",
                "SELECT id FROM memories WHERE json_extract(memory, '$.session') = ?"):
        assert SQL_STATEMENT.match(sql), sql
    for english in ("Update the index when a file changes.", "update the set of files", "Select a memory from the list",
                    "Delete the memory file", "Create the table of contents", "Begin here: the plan",
                    "with the index as (the derived data)", "Drop the cache", "pragma: no cover", "Replace into place"):
        assert not SQL_STATEMENT.match(english), english


def test_sql_detector_on_a_synthetic_module() -> None:
    src = ('"""SELECT x FROM docstring: not counted."""\nimport sqlite3\n'
           'def f(con, repo, t):\n    """Update the index: not SQL."""\n'
           '    con.execute(f"SELECT {c} FROM {t}")\n    repo.git.execute(["git", "status"])\n'
           '    q = "DELETE FROM memories WHERE id = ?"\n'
           '    return "Select the files from here", "SELECT a.id,\\n b FROM t"\n')
    assert sql_uses(ast.parse(src)) == ["2: import sqlite3", "5: .execute()", "5: 'SELECT x FROM x'",
                               "7: 'DELETE FROM memories WHERE id = ?'", "8: 'SELECT a.id, b FROM t'"]


def test_sql_only_in_allowlisted_modules() -> None:
    found = sql_modules()
    assert "gitmem.catalog" in found or any(m.startswith("gitmem.catalog.") for m in found)  # the detector works
    new = {m: uses for m, uses in found.items() if not _in(m, SQL_MODULES)}
    assert not new, "SQL outside gitmem/catalog/ (move it there):\n" + "\n".join(
        f"{m}: {', '.join(uses)}" for m, uses in sorted(new.items()))
    stale = sorted(a for a in SQL_MODULES if not any(_in(m, {a: ""}) for m in found))
    if stale:
        print(f"note: no SQL left in {', '.join(stale)}: remove from SQL_MODULES")


# -- c. memory files written in one place ---------------------------------------------------------

MEMFILE = "gitmem.memfile"
MEMFILE_WRITERS = {"write", "write_atomic"}
STORE_WRITES = {"save", "delete"}


def _memfile_aliases(mod: ast.Module, module: str, is_package: bool) -> tuple[set[str], set[str]]:
    """Local names bound to the ``memfile`` module, and to its write functions, in ``module``."""
    mod_names, fn_names = set(), set()
    for node in ast.walk(mod):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == MEMFILE:
                    mod_names.add(a.asname or a.name)  # "gitmem.memfile" itself when not aliased
        elif isinstance(node, ast.ImportFrom):
            base = _base_of(module, is_package, node)
            for a in node.names:
                if base == PACKAGE and a.name == "memfile":
                    mod_names.add(a.asname or a.name)
                elif base == MEMFILE and a.name in MEMFILE_WRITERS:
                    fn_names.add(a.asname or a.name)
    return mod_names, fn_names


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "?"


def memory_writes(mod: ast.Module, module: str, is_package: bool) -> list[str]:
    """Call sites in ``mod`` (the source of ``module``) that write or remove a memory file, as ``line: call`` strings.

    Catches: ``memfile.write(...)`` / ``memfile.write_atomic(...)`` (memfile imported under any
    name), ``write(...)`` / ``write_atomic(...)`` imported from memfile (under any alias), and
    ``<x>.save(...)`` / ``<x>.delete(...)`` where ``<x>`` is a name or attribute called ``store``
    or ``*_store`` (``store.save``, ``self.store.delete``, ``Store.save``).
    Leaves out: ``gitmem.memfile`` itself (it defines the primitives).
    Cannot see: ``os.replace``/``unlink``/``Path.write_text`` on a memory path, a Store reached under
    another name (``s = store; s.save(m)``), or a write function passed around as a value.
    ``write_atomic`` is memfile's generic atomic writer, so some hits write other files (noted
    in ``MEMORY_WRITERS``).
    """
    if module == MEMFILE:
        return []
    mod_names, fn_names = _memfile_aliases(mod, module, is_package)
    found = []
    for node in ast.walk(mod):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in fn_names:
            found.append(f"{node.lineno}: {func.id}()")
        elif isinstance(func, ast.Attribute):
            receiver = _dotted(func.value)
            if func.attr in MEMFILE_WRITERS and receiver in mod_names:
                found.append(f"{node.lineno}: {receiver}.{func.attr}()")
            elif func.attr in STORE_WRITES and re.fullmatch(r"(?:.*\.)?(?:store|\w*_store|Store)", receiver):
                found.append(f"{node.lineno}: {receiver}.{func.attr}()")
    return sorted(found, key=lambda s: int(s.split(":")[0]))


@cache
def memory_writers() -> dict[str, tuple[str, ...]]:
    return {m: tuple(w) for m in modules() if (w := memory_writes(tree(m), m, _is_package(m)))}


def test_memory_write_detector_on_a_synthetic_module() -> None:
    src = ("from .memfile import write_atomic as wa, loads\nfrom . import memfile as mf\nimport gitmem.memfile\n"
           "def f(store, self, cache, p, m):\n    wa(p, b'')\n    mf.write(p, m)\n    gitmem.memfile.write(p, m)\n"
           "    store.save(m)\n    self.store.delete('id')\n    self.my_store.save(m)\n    cache.save()\n"
           "    loads('x')\n    table.delete('id = 1')\n")
    assert memory_writes(ast.parse(src), "gitmem.fake", False) == [
        "5: wa()", "6: mf.write()", "7: gitmem.memfile.write()", "8: store.save()",
        "9: self.store.delete()", "10: self.my_store.save()"]


def test_memory_files_written_only_by_the_write_path() -> None:
    outside = sorted(m for m in memory_writers() if m != "gitmem.memories")
    assert not outside, "memory files written outside gitmem/memories.py: " + ", ".join(outside)
