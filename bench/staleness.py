"""Staleness benchmark: replay a repository's history and grade gitmem's anchor statuses.

What it measures
----------------
For K pairs of commits (older O, later L) on the first-parent history of HEAD,
it anchors up to N symbols at O with ``Resolver.make(path, qualname, O)`` and
asks ``Resolver.status(anchor, L)`` what became of each: fresh, stale, moved or
deleted. It reports the counts overall and per language, timings, and three
independent checks:

* **ast check (Python only).** Built on the standard library's ``ast``, with no
  tree-sitter and no gitmem code. The file is read at O and at L (blob bytes
  through ``gitmem.git.Repo.read``), parsed, and every ``def`` / ``async def``
  / ``class`` gets a qualified name by the same rules gitmem uses: nesting
  joined with ``.`` (``Class.method``, ``outer.inner``); a def inside an
  ``if`` / ``try`` / ``with`` / ``for`` / ``while`` / ``match`` block keeps the
  enclosing name; every definition of one name in a scope is one symbol, as in
  gitmem (``@overload`` stubs and defs under ``if TYPE_CHECKING:`` as a set,
  the others in source order). A symbol's verdict compares
  ``ast.dump(node, annotate_fields=True, include_attributes=False)`` at O and L
  after removing docstrings (the first statement of a def/class body, when it
  is a string constant, in the symbol and every def/class nested in it) and
  clearing ``Constant.kind`` (the ``u`` of ``u"..."``): equal -> ``unchanged``,
  different -> ``changed``, not found in the file at L -> ``missing``.
  Precision and recall of gitmem's ``stale`` against ast's ``changed`` are
  computed on the anchors whose path still exists at L and whose symbol ast
  finds at both O and L; the rest are counted as excluded, by reason.
  Known legitimate differences: ``ast.dump`` ignores formatting, parentheses,
  comments and string quote style, as gitmem intends to; it also ignores some
  things gitmem's token fingerprint sees (``0xff`` vs ``255``, ``"a" "b"`` vs
  ``"ab"``, ``'\\x41'`` vs ``'A'``, redundant parentheses in places other than a
  ``return`` / assignment / condition). Decorators are part of both.
* **moved check (Python only).** For a gitmem ``moved`` anchor, ast checks that
  the symbol gitmem points at (``path_now::symbol_now`` at L) has the same dump
  as the original, the def's own name left out (so a pure rename agrees, a
  changed parameter list or return annotation does not; a recursive def renamed
  with its own calls agrees too: its name is blanked wherever it appears). The report splits
  moves into "same fingerprint" and "by body match" (gitmem found the code
  by ``body_fp`` only). For a gitmem ``deleted`` anchor, ast looks for a def
  with the same dump (name left out; under another last name only when the
  def has at least 3 statements, since ``def __enter__(self): return self`` is
  everywhere) in the same file and in every code file that git reports as
  added / renamed / modified from O to L; exactly one such def is a move or
  rename gitmem missed.
* **text check (languages other than Python).** The anchored lines at O and
  the lines gitmem reports at L, with all whitespace removed: a ``stale``
  anchor whose text is identical is a likely false stale. A ``deleted``
  anchor whose body lines (span minus first and last line, at least 40
  characters without whitespace) occur verbatim in exactly one of the places
  above is a possible missed move (or code that is no longer a symbol).

How pairs are chosen
--------------------
Let the first-parent history of HEAD be ``c[0..n-1]``, oldest first. The gap
``L - O`` (in first-parent commits) is drawn uniformly from
``[min(GAP_MIN, n-1), min(GAP_MAX, n-1)]`` (5 .. 50). The possible positions of
O, ``[0, n-1-gap_min]``, are cut into K equal strata and O is drawn uniformly
in each stratum, so pairs are spread over the whole history; L is O plus a gap
drawn so that L stays inside the history. Duplicate pairs (short histories) are
dropped. Every draw comes from ``random.Random(seed)``, so a seed fixes the run.

How symbols are sampled
-----------------------
At O, the files gitmem has a language for (``language_for_path``) are shuffled
(seeded) and parsed one by one (``Resolver.table``) until the pool holds
``POOL_FACTOR * N`` symbols or the files run out; N symbols are then drawn
uniformly from the pool. Each language is thus represented in proportion to the
symbols the repository has in it. Files over ``--max-file-kb`` (default 1024)
are skipped (minified bundles).

Timings: ``make`` and ``status`` are timed per anchor, each pair with a fresh
``Resolver`` for making and another for resolving (so ``status`` parses the
blobs at L itself). gitmem's in-process symbol-table cache (keyed by blob SHA)
is emptied before each pair's status pass; the tables at O were parsed during
sampling, so ``make`` times are those of a warm cache.

Run it
------
    /tmp/venv/bin/python bench/staleness.py REPO_PATH [--samples 300] [--pairs 10] [--seed 1] [--json]
        [--rows FILE] [--max-file-kb 1024]

Progress goes to stderr; the report (a table, or one JSON object with
``--json``) to stdout; ``--rows`` writes every anchor (statuses, verdicts,
per-anchor times) as JSON lines for digging. The repository is only read,
never changed (``git rev-list`` / ``ls-tree`` / blob reads / ``diff`` through
``gitmem.git.Repo``).
"""

from __future__ import annotations

import argparse
import ast
import copy
import difflib
import json
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

from gitmem.anchors import Resolver
from gitmem.code import symbols as code_symbols
from gitmem.code.languages import language_for_path
from gitmem.git import Repo
from gitmem.model import Anchor, AnchorStatus, Status

GAP_MIN = 5
GAP_MAX = 50
POOL_FACTOR = 4
MAX_EXAMPLES = 12
MIN_RENAME_STATEMENTS = 3
MIN_BODY_CHARS = 40

STATUSES = [s.value for s in Status]  # fresh, moved, stale, deleted
VERDICTS = ["unchanged", "changed", "missing", "file-gone", "not-found-at-O", "parse-error"]
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


# --------------------------------------------------------------------------- pairs


def choose_pairs(n: int, k: int, rng: random.Random) -> list[tuple[int, int]]:
    """K (O, L) index pairs into a first-parent history of ``n`` commits (see the module docstring)."""
    if n < 2:
        return []
    gap_lo, gap_hi = min(GAP_MIN, n - 1), min(GAP_MAX, n - 1)
    last_o = n - 1 - gap_lo
    pairs: list[tuple[int, int]] = []
    for i in range(k):
        lo = (last_o + 1) * i // k
        hi = max(lo, (last_o + 1) * (i + 1) // k - 1)
        o = rng.randint(lo, hi)
        gap = rng.randint(gap_lo, max(gap_lo, min(gap_hi, n - 1 - o)))
        if (o, o + gap) not in pairs:
            pairs.append((o, o + gap))
    return pairs


# --------------------------------------------------------------------------- ast check


@dataclass
class PyDef:
    """The defs/classes of one qualified name in a parsed file (docstrings already removed), as gitmem
    groups them: every definition of the name in its scope, ``@overload`` stubs and code under
    ``if TYPE_CHECKING:`` as a set (their order does not count), the others in source order."""

    nodes: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]
    stubs: list[bool]
    lines: tuple[int, int]

    def _joined(self, dumps: list[str]) -> str:
        stubs = sorted(d for d, stub in zip(dumps, self.stubs, strict=True) if stub)
        real = [d for d, stub in zip(dumps, self.stubs, strict=True) if not stub]
        return "\n".join(stubs) + "\n--\n" + "\n".join(real) if stubs else "\n".join(real)

    @cached_property
    def dump(self) -> str:
        return self._joined([_dump(n) for n in self.nodes])

    @cached_property
    def anon_dump(self) -> str:
        """The dump with the defs' own name blanked (for moves and renames)."""
        out = []
        for n in self.nodes:
            anon = copy.copy(n)
            anon.name = ""
            out.append(_dump(anon))
        return self._joined(out)

    @cached_property
    def self_dump(self) -> str:
        """The dump with the defs' own name blanked wherever it appears (a name, an attribute): a recursive
        def renamed with its own calls (``depth`` calling ``self.depth``) keeps it."""
        out = []
        for n in self.nodes:
            own = getattr(n, "name", "")
            anon = copy.deepcopy(n)
            for sub in ast.walk(anon):
                if isinstance(sub, ast.Name) and sub.id == own:
                    sub.id = ""
                elif isinstance(sub, ast.Attribute) and sub.attr == own:
                    sub.attr = ""
                elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and sub.name == own:
                    sub.name = ""
            out.append(_dump(anon))
        return self._joined(out)

    def same_shape(self, other: PyDef) -> bool:
        """The same code, the own name aside: equal ``anon_dump`` or equal ``self_dump``."""
        return self.anon_dump == other.anon_dump or self.self_dump == other.self_dump

    @cached_property
    def statements(self) -> int:
        """Statements in the defs, themselves included."""
        return sum(1 for node in self.nodes for n in ast.walk(node) if isinstance(n, ast.stmt))

    @property
    def shape(self) -> tuple[type, int, int, int]:
        """A cheap key that equal anon dumps share: node type, body length, decorator count, defs."""
        last = self.nodes[-1]
        return type(last), len(last.body), len(last.decorator_list), len(self.nodes)


def _short(name: str) -> str:
    """Last component of a qualified name, without a ``#n`` suffix."""
    return name.split("#", 1)[0].rsplit(".", 1)[-1]


def _strip(tree: ast.AST) -> None:
    """Remove docstrings of every def/class and clear ``Constant.kind``, in place."""
    for node in ast.walk(tree):
        if isinstance(node, _DEFS) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                node.body = node.body[1:]
        elif isinstance(node, ast.Constant):
            node.kind = None


def _dump(node: ast.AST) -> str:
    return ast.dump(node, annotate_fields=True, include_attributes=False)


def _is_overload(node: ast.AST) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if (isinstance(target, ast.Name) and target.id == "overload") or (
                isinstance(target, ast.Attribute) and target.attr == "overload"):
            return True
    return False


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def python_defs(source: bytes) -> dict[str, PyDef] | None:
    """Qualified name -> defs of a Python file (gitmem's naming rules), None on a syntax error.

    Nesting joins names with ``.``; a def inside an ``if`` / ``try`` / ``with`` /
    loop keeps the enclosing name; every def of one qualified name is one entry
    (an ``@overload`` stub or a def in the ``if`` branch of ``if TYPE_CHECKING:``
    counts as a stub), and names nested in any of them nest under the plain name.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    _strip(tree)
    out: dict[str, PyDef] = {}

    def visit(node: ast.AST, prefix: str, typing_only: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit_one(child, prefix, True)
            for child in node.orelse:
                visit_one(child, prefix, typing_only)
            return
        for child in ast.iter_child_nodes(node):
            visit_one(child, prefix, typing_only)

    def visit_one(child: ast.AST, prefix: str, typing_only: bool) -> None:
        if isinstance(child, _DEFS):
            q = prefix + child.name
            start = min([child.lineno] + [d.lineno for d in child.decorator_list])
            end = child.end_lineno or start
            d = out.get(q)
            if d is None:
                d = out[q] = PyDef([], [], (start, end))
            d.nodes.append(child)
            d.stubs.append(typing_only or _is_overload(child))
            d.lines = (min(d.lines[0], start), max(d.lines[1], end))
            visit(child, q + ".", False)
        elif isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
            visit(child, prefix, typing_only)

    visit(tree, "", False)
    for d in out.values():
        if all(d.stubs):  # only stubs (a .pyi): the last one stands for the name, as in gitmem
            d.stubs[-1] = False
    return out


class AstOracle:
    """Parses Python blobs with ``ast``, cached per (rev, path)."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self._cache: dict[tuple[str, str], dict[str, PyDef] | None | bool] = {}

    def defs(self, rev: str, path: str) -> dict[str, PyDef] | None | bool:
        """Defs of ``path`` at ``rev``; False when the file is absent, None on a syntax error."""
        key = (rev, path)
        if key not in self._cache:
            data = self.repo.read(rev, path)
            self._cache[key] = False if data is None else python_defs(data)
        return self._cache[key]

    def verdict(self, o: str, l: str, path: str, name: str) -> str:
        at_o, at_l = self.defs(o, path), self.defs(l, path)
        if at_o is None or at_l is None:
            return "parse-error"
        assert isinstance(at_o, dict)
        if name not in at_o:
            return "not-found-at-O"
        if at_l is False:
            return "file-gone"
        assert isinstance(at_l, dict)
        if name not in at_l:
            return "missing"
        return "unchanged" if at_o[name].dump == at_l[name].dump else "changed"

    def same_code(self, o: str, l: str, path: str, name: str, path_now: str, name_now: str) -> bool | None:
        """Is ``path_now::name_now`` at L the code of ``path::name`` at O (names left out)? None: unknown."""
        at_o, at_l = self.defs(o, path), self.defs(l, path_now)
        if not isinstance(at_o, dict) or not isinstance(at_l, dict) or name not in at_o:
            return None
        return name_now in at_l and at_l[name_now].same_shape(at_o[name])

    def find_elsewhere(self, o: str, l: str, path: str, name: str, places: list[str]) -> list[str]:
        """``path::name`` places at L holding the same code as ``path::name`` at O (names left out).

        Under another name only when the def has at least ``MIN_RENAME_STATEMENTS``
        statements: ``def __enter__(self): return self`` is everywhere.
        """
        at_o = self.defs(o, path)
        if not isinstance(at_o, dict) or name not in at_o:
            return []
        old, short = at_o[name], _short(name)
        big = old.statements >= MIN_RENAME_STATEMENTS
        hits: list[str] = []
        for p in places:
            at_l = self.defs(l, p)
            if isinstance(at_l, dict):
                hits.extend(f"{p}::{q}" for q, d in at_l.items()
                            if d.shape == old.shape and (big or _short(q) == short)
                            and d.same_shape(old))
        return hits


# --------------------------------------------------------------------------- results


@dataclass
class Row:
    """One anchor: where it was made, what gitmem said, what the checks said."""

    pair: int
    o: str
    l: str
    path: str
    symbol: str
    language: str
    kind: str
    status: str = ""
    reason: str = ""
    path_now: str | None = None
    symbol_now: str | None = None
    verdict: str | None = None          # ast verdict, Python only
    moved_ok: bool | None = None        # ast agrees with a gitmem "moved"
    moved_how: str | None = None        # "exact": same fingerprint at the new place; "body": body_fp only
    missed_move: str | None = None      # a "deleted" anchor's code found here (ast, or text for non-Python)
    text_same: bool | None = None       # whitespace-free span text identical at O and L
    error: str | None = None
    definitions: int = 1                # definitions the anchored name holds at O (overloads, alternatives)
    renamed: bool = False               # named otherwise by gitmem before ts1.3 (Parser.parse(String), f#2)
    make_ms: float = 0.0
    status_ms: float = 0.0


@dataclass
class PairInfo:
    index: int
    o: str
    l: str
    o_pos: int
    l_pos: int
    files: int = 0
    parsed_files: int = 0
    pool: int = 0
    anchors: int = 0
    sample_s: float = 0.0
    make_s: float = 0.0
    status_s: float = 0.0
    check_s: float = 0.0


@dataclass
class Run:
    repo: str
    head: str
    commits: int
    samples: int
    pairs_wanted: int
    seed: int
    pairs: list[PairInfo] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    total_s: float = 0.0


def _span_text(data: bytes | None, span: tuple[int, int] | None) -> bytes | None:
    if data is None or span is None:
        return None
    lines = data.split(b"\n")[span[0] - 1:span[1]]
    return b"".join(b"".join(line.split()) for line in lines)


def _body_text_elsewhere(repo: Repo, o: str, l: str, path: str, span: tuple[int, int] | None,
                         places: list[str], squashed: dict[str, bytes]) -> str | None:
    """The one file at L whose whitespace-free text contains the anchored body's (non-Python).

    The body is the span without its first and last line, at least
    ``MIN_BODY_CHARS`` characters once whitespace is removed.
    """
    if span is None or span[1] - span[0] < 2:
        return None
    body = _span_text(repo.read(o, path), (span[0] + 1, span[1] - 1))
    if not body or len(body) < MIN_BODY_CHARS:
        return None
    for p in places:
        if p not in squashed:
            squashed[p] = b"".join((repo.read(l, p) or b"").split())
    found = [p for p in places if body in squashed[p]]
    return found[0] if len(found) == 1 else None


# --------------------------------------------------------------------------- the replay


def replay(repo_path: str, samples: int, k: int, seed: int, max_file_kb: int) -> Run:
    """Choose the pairs, sample, make, resolve and check every anchor; progress on stderr."""
    t0 = time.perf_counter()
    repo = Repo(repo_path)
    head = repo.head()
    if head is None:
        raise SystemExit(f"{repo_path}: no commits")
    history = [c for c in subprocess.run(["git", "-C", str(repo.root), "rev-list", "--first-parent", "--reverse", head],
                                         check=True, capture_output=True, text=True).stdout.split() if c]
    rng = random.Random(seed)
    run = Run(repo=str(repo.root), head=head, commits=len(history), samples=samples, pairs_wanted=k, seed=seed)
    if len(history) < 10:
        print(f"note: only {len(history)} first-parent commits; pairs overlap heavily", file=sys.stderr)
    oracle = AstOracle(repo)
    pairs = choose_pairs(len(history), k, rng)
    for i, (oi, li) in enumerate(pairs):
        o, l = history[oi], history[li]
        info = PairInfo(i, o, l, oi, li)
        run.pairs.append(info)
        prng = random.Random(f"{seed}:{i}")

        # 1. sample symbols at O
        t = time.perf_counter()
        sampler = Resolver(repo)
        files = [p for p in repo.files_at(o) if language_for_path(p)]
        info.files = len(files)
        prng.shuffle(files)
        pool: list[tuple[str, str, str]] = []
        for p in files:
            if len(pool) >= POOL_FACTOR * samples:
                break
            data = repo.read(o, p)
            if data is None or len(data) > max_file_kb * 1024:
                continue
            info.parsed_files += 1
            pool.extend((p, name, sym.kind) for name, sym in (sampler.table(o, p) or {}).items())
        info.pool = len(pool)
        chosen = prng.sample(pool, min(samples, len(pool)))
        info.sample_s = time.perf_counter() - t

        # 2. make anchors at O
        maker = Resolver(repo)
        made: list[tuple[Row, Anchor]] = []
        t = time.perf_counter()
        for path, name, kind in chosen:
            row = Row(i, o, l, path, name, language_for_path(path) or "?", kind)
            s = time.perf_counter()
            sym = (maker.table(o, path) or {}).get(name)
            if sym is not None:
                row.definitions = max(1, len(getattr(sym, "parts", ())))
                row.renamed = row.definitions == 1 and bool(getattr(sym, "aliases", ()))
            try:
                made.append((row, maker.make(path, name, o, as_typed=False)))
            except Exception as e:  # noqa: BLE001 - a benchmark reports failures, it does not stop
                row.error = f"make: {type(e).__name__}: {e}"
                row.status = "error"
                run.rows.append(row)
            row.make_ms = (time.perf_counter() - s) * 1000
        info.make_s = time.perf_counter() - t

        # 3. status at L
        code_symbols.clear_memory_cache()
        resolver = Resolver(repo)
        t = time.perf_counter()
        results: list[tuple[Row, Anchor, AnchorStatus | None]] = []
        for row, anchor in made:
            s = time.perf_counter()
            st: AnchorStatus | None = None
            try:
                st = resolver.status(anchor, l)
                row.status = st.status.value
                row.reason = st.reason
                row.path_now, row.symbol_now = st.path_now, st.symbol_now
            except Exception as e:  # noqa: BLE001
                row.error = f"status: {type(e).__name__}: {e}"
                row.status = "error"
            row.status_ms = (time.perf_counter() - s) * 1000
            results.append((row, anchor, st))
        info.status_s = time.perf_counter() - t

        # 4. independent checks
        t = time.perf_counter()
        changed: list[str] | None = None
        squashed: dict[str, bytes] = {}  # path -> whitespace-free text at L
        for row, anchor, st in results:
            run.rows.append(row)
            info.anchors += 1
            if st is None:
                continue
            places: list[str] = []  # where a deleted symbol's code may have gone: its file, changed files
            if st.status == Status.DELETED:
                if changed is None:
                    changed = sorted({c.new_path for c in repo.changed_files(o, l)
                                      if c.new_path and language_for_path(c.new_path)})
                places = ([row.path] if repo.read(l, row.path) is not None else []) + \
                    [p for p in changed if p != row.path]
            if row.language != "python":
                if st.status in (Status.FRESH, Status.STALE) and st.path_now:
                    row.text_same = (_span_text(repo.read(o, row.path), anchor.span)
                                     == _span_text(repo.read(l, st.path_now), st.new_span))
                elif st.status == Status.DELETED:
                    row.missed_move = _body_text_elsewhere(repo, o, l, row.path, anchor.span, places,
                                                           squashed)
                continue
            row.verdict = oracle.verdict(o, l, row.path, row.symbol)
            if st.status == Status.MOVED and st.path_now and st.symbol_now:
                now = (resolver.table(l, st.path_now) or {}).get(st.symbol_now)
                row.moved_how = "exact" if now and now.fingerprint == anchor.fingerprint else "body"
                row.moved_ok = oracle.same_code(o, l, row.path, row.symbol, st.path_now, st.symbol_now)
            elif st.status == Status.DELETED:
                hits = oracle.find_elsewhere(o, l, row.path, row.symbol,
                                             [p for p in places if language_for_path(p) == "python"])
                if len(hits) == 1:
                    row.missed_move = hits[0]
        info.check_s = time.perf_counter() - t
        print(f"[{i + 1}/{len(pairs)}] {o[:10]}(#{oi})..{l[:10]}(#{li}) gap {li - oi}: "
              f"{len(files)} code files, {info.anchors} anchors "
              f"({dict(Counter(r.status for r in run.rows if r.pair == i))}) "
              f"sample {info.sample_s:.1f}s make {info.make_s:.2f}s status {info.status_s:.1f}s "
              f"check {info.check_s:.1f}s", file=sys.stderr)
    run.total_s = time.perf_counter() - t0
    return run


# --------------------------------------------------------------------------- report


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def _example(row: Row) -> dict[str, Any]:
    out: dict[str, Any] = {"anchor": f"{row.path}::{row.symbol}", "O": row.o, "L": row.l,
                           "status": row.status, "reason": row.reason}
    if row.path_now and (row.path_now != row.path or row.symbol_now != row.symbol):
        out["now"] = f"{row.path_now}::{row.symbol_now}"
    if row.verdict:
        out["ast"] = row.verdict
    if row.missed_move:
        out["found"] = row.missed_move
    if row.error:
        out["error"] = row.error
    return out


def _source_diff(repo: Repo, row: Row, limit: int = 8) -> list[str]:
    """A few changed lines between the def's source at O and at L (for disagreement examples)."""
    oracle = AstOracle(repo)
    at_o, at_l = oracle.defs(row.o, row.path), oracle.defs(row.l, row.path_now or row.path)
    if not isinstance(at_o, dict) or not isinstance(at_l, dict):
        return []
    a, b = at_o.get(row.symbol), at_l.get(row.symbol_now or row.symbol)
    if a is None or b is None:
        return []
    src_o = (repo.read(row.o, row.path) or b"").decode("utf-8", "replace").split("\n")
    src_l = (repo.read(row.l, row.path_now or row.path) or b"").decode("utf-8", "replace").split("\n")
    seg_o = src_o[a.lines[0] - 1:a.lines[1]]
    seg_l = src_l[b.lines[0] - 1:b.lines[1]]
    out = [d for d in difflib.unified_diff(seg_o, seg_l, lineterm="", n=0)
           if not d.startswith(("---", "+++", "@@"))]
    return out[:limit]


def summarize(run: Run, repo: Repo) -> dict[str, Any]:
    rows = run.rows
    ok = [r for r in rows if not r.error]
    by_lang: dict[str, Counter[str]] = {}
    for r in ok:
        by_lang.setdefault(r.language, Counter())[r.status] += 1
    overall = Counter(r.status for r in ok)

    py = [r for r in ok if r.language == "python"]
    confusion = {s: {v: 0 for v in VERDICTS} for s in STATUSES}
    for r in py:
        if r.verdict:
            confusion[r.status][r.verdict] += 1
    graded = [r for r in py if r.verdict in ("unchanged", "changed")]
    tp = sum(1 for r in graded if r.status == "stale" and r.verdict == "changed")
    fp = [r for r in graded if r.status == "stale" and r.verdict == "unchanged"]
    fn = [r for r in graded if r.status != "stale" and r.verdict == "changed"]
    odd = [r for r in graded if r.status in ("moved", "deleted")]
    excluded = Counter(r.verdict for r in py if r.verdict not in ("unchanged", "changed"))

    moved_py = [r for r in py if r.status == "moved"]
    deleted_py = [r for r in py if r.status == "deleted"]
    missed = [r for r in deleted_py if r.missed_move]
    bad_moves = [r for r in moved_py if r.moved_ok is False]
    text_stale = [r for r in ok if r.status == "stale" and r.text_same]
    text_missed = [r for r in ok if r.language != "python" and r.status == "deleted" and r.missed_move]
    text_fresh = [r for r in ok if r.status == "fresh" and r.text_same is False]

    make_ms = [r.make_ms for r in rows if r.make_ms]
    status_ms = [r.status_ms for r in ok]
    make_s = sum(p.make_s for p in run.pairs)
    status_s = sum(p.status_s for p in run.pairs)

    def examples(rs: list[Row], diff: bool = False) -> list[dict[str, Any]]:
        out = []
        for r in rs[:MAX_EXAMPLES]:
            e = _example(r)
            if diff:
                e["diff"] = _source_diff(repo, r)
            out.append(e)
        return out

    return {
        "repo": run.repo, "head": run.head, "first_parent_commits": run.commits,
        "config": {"samples": run.samples, "pairs": run.pairs_wanted, "seed": run.seed,
                   "gap": [GAP_MIN, GAP_MAX]},
        "pairs": [{"O": p.o, "L": p.l, "O_index": p.o_pos, "L_index": p.l_pos, "gap": p.l_pos - p.o_pos,
                   "code_files": p.files, "parsed_files": p.parsed_files, "pool": p.pool,
                   "anchors": p.anchors} for p in run.pairs],
        "anchors": len(rows), "errors": len(rows) - len(ok),
        # anchors whose name now means several definitions (before: the first of them) or is named anew
        "several_definitions": {s: sum(1 for r in ok if r.definitions > 1 and r.status == s) for s in STATUSES},
        "named_differently": sum(1 for r in ok if r.renamed),
        "status": {s: overall.get(s, 0) for s in STATUSES},
        "by_language": {lang: {s: c.get(s, 0) for s in STATUSES} | {"total": sum(c.values())}
                        for lang, c in sorted(by_lang.items())},
        "ast": {
            "python_anchors": len(py), "graded": len(graded), "excluded": dict(excluded),
            "confusion": confusion,
            "true_stale": tp, "false_stale": len(fp), "missed_changes": len(fn),
            "precision": _ratio(tp, tp + len(fp)), "recall": _ratio(tp, tp + len(fn)),
            "moved_or_deleted_but_same_name_found": len(odd),
            "false_stale_examples": examples(fp, diff=True),
            "missed_change_examples": examples(fn, diff=True),
            "moved_or_deleted_examples": examples(odd),
        },
        "moves": {
            "python_moved": len(moved_py),
            "exact": sum(1 for r in moved_py if r.moved_how == "exact"),
            "by_body": sum(1 for r in moved_py if r.moved_how == "body"),
            "confirmed_by_ast": sum(1 for r in moved_py if r.moved_ok),
            "contradicted_by_ast": len(bad_moves),
            "contradicted_exact": sum(1 for r in bad_moves if r.moved_how == "exact"),
            "contradicted_by_body": sum(1 for r in bad_moves if r.moved_how == "body"),
            "python_deleted": len(deleted_py),
            "deleted_but_ast_finds_code": len(missed),
            "contradicted_examples": examples(bad_moves),
            "missed_move_examples": examples(missed),
        },
        "text": {
            "stale_with_identical_text": len(text_stale),
            "fresh_with_changed_text": len(text_fresh),
            "deleted": sum(1 for r in ok if r.language != "python" and r.status == "deleted"),
            "deleted_but_body_text_found": len(text_missed),
            "stale_identical_examples": examples(text_stale),
            "body_text_found_examples": examples(text_missed),
        },
        "error_examples": examples([r for r in rows if r.error]),
        "timing": {
            "total_s": round(run.total_s, 2),
            "sample_s": round(sum(p.sample_s for p in run.pairs), 2),
            "make_s": round(make_s, 3),
            "make_per_s": round(len(make_ms) / make_s) if make_s else None,
            "make_median_ms": round(statistics.median(make_ms), 3) if make_ms else None,
            "status_s": round(status_s, 3),
            "status_per_s": round(len(status_ms) / status_s) if status_s else None,
            "status_median_ms": round(statistics.median(status_ms), 3) if status_ms else None,
            "status_p95_ms": round(sorted(status_ms)[int(0.95 * (len(status_ms) - 1))], 3) if status_ms else None,
            "status_max_ms": round(max(status_ms), 1) if status_ms else None,
            "check_s": round(sum(p.check_s for p in run.pairs), 2),
        },
    }


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def render(s: dict[str, Any]) -> str:
    out: list[str] = []
    w = out.append
    gaps = [p["gap"] for p in s["pairs"]]
    w(f"gitmem staleness benchmark: {s['repo']} (HEAD {s['head'][:10]}, "
      f"{s['first_parent_commits']} first-parent commits)")
    w(f"pairs: {len(gaps)} (gap {min(gaps, default=0)}..{max(gaps, default=0)}, "
      f"median {statistics.median(gaps) if gaps else 0}), anchors: {s['anchors']}, errors: {s['errors']}")
    w("")
    several = s.get("several_definitions", {})
    w(f"anchors to a name of several definitions (before: its first definition): {sum(several.values())} "
      f"({', '.join(f'{k} {v}' for k, v in several.items())}); named differently than before: "
      f"{s.get('named_differently', 0)}")
    w(f"{'language':<12}" + "".join(f"{c:>9}" for c in [*STATUSES, "total"]))
    w(f"{'all':<12}" + "".join(f"{s['status'][c]:>9}" for c in STATUSES) + f"{sum(s['status'].values()):>9}")
    for lang, c in s["by_language"].items():
        w(f"{lang:<12}" + "".join(f"{c[k]:>9}" for k in [*STATUSES, "total"]))
    a, m, t = s["ast"], s["moves"], s["text"]
    w("")
    if a["python_anchors"]:
        w(f"ast check (python): {a['python_anchors']} anchors, {a['graded']} graded; excluded: "
          + (", ".join(f"{k} {v}" for k, v in sorted(a["excluded"].items())) or "none"))
        w(f"{'gitmem/ast':<14}" + "".join(f"{v:>15}" for v in VERDICTS))
        for st in STATUSES:
            w(f"{st:<14}" + "".join(f"{a['confusion'][st][v]:>15}" for v in VERDICTS))
        w(f"precision of stale vs changed: {_fmt(a['precision'])} ({a['true_stale']} true, "
          f"{a['false_stale']} false stale)")
        w(f"recall of stale vs changed:    {_fmt(a['recall'])} ({a['missed_changes']} changes not called "
          f"stale; {a['moved_or_deleted_but_same_name_found']} graded anchors called moved/deleted)")
        w(f"moves (python): {m['python_moved']} moved ({m['exact']} same fingerprint, {m['by_body']} by "
          f"body match), {m['confirmed_by_ast']} confirmed by ast, {m['contradicted_by_ast']} contradicted "
          f"({m['contradicted_exact']} same fingerprint, {m['contradicted_by_body']} by body match); "
          f"{m['python_deleted']} deleted, "
          f"{m['deleted_but_ast_finds_code']} of them ast finds unchanged elsewhere (missed move)")
    else:
        w("ast check (python): no Python anchors")
    if a["python_anchors"] < s["anchors"] - s["errors"]:
        w(f"text check (non-Python): {t['stale_with_identical_text']} stale with whitespace-free text "
          f"identical; {t['fresh_with_changed_text']} fresh with text changed (comments, formatting); "
          f"{t['deleted']} deleted, {t['deleted_but_body_text_found']} of them with the body text found "
          f"in one file at L")
    tm = s["timing"]
    w("")
    w(f"timing: total {tm['total_s']} s (sampling {tm['sample_s']} s, checks {tm['check_s']} s); "
      f"make {tm['make_s']} s = {tm['make_per_s']}/s, median {tm['make_median_ms']} ms; "
      f"status {tm['status_s']} s = {tm['status_per_s']}/s, median {tm['status_median_ms']} ms, "
      f"p95 {tm['status_p95_ms']} ms, max {tm['status_max_ms']} ms")
    for title, ex in (("false stale (ast: unchanged)", a["false_stale_examples"]),
                      ("missed changes (ast: changed)", a["missed_change_examples"]),
                      ("moved/deleted but ast finds the name at the same path", a["moved_or_deleted_examples"]),
                      ("moves contradicted by ast", m["contradicted_examples"]),
                      ("deleted, but ast finds the same code elsewhere", m["missed_move_examples"]),
                      ("stale with identical text", t["stale_identical_examples"]),
                      ("deleted, but the body text is in one file at L", t["body_text_found_examples"]),
                      ("errors", s["error_examples"])):
        if not ex:
            continue
        w("")
        w(f"{title}:")
        for e in ex:
            extra = f" -> {e['now']}" if "now" in e else ""
            extra += f" [found {e['found']}]" if "found" in e else ""
            w(f"  {e['anchor']} {e['O'][:10]}..{e['L'][:10]}: {e['status']}{extra} "
              f"{e.get('reason') or e.get('error', '')}")
            for d in e.get("diff", []):
                w(f"      {d[:110]}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("repo", help="path of a git work tree (only read)")
    ap.add_argument("--samples", type=int, default=300, help="symbols anchored per pair (default 300)")
    ap.add_argument("--pairs", type=int, default=10, help="commit pairs (default 10)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--max-file-kb", type=int, default=1024, help="skip larger files when sampling")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    ap.add_argument("--rows", metavar="FILE", help="also write every anchor as one JSON line to FILE")
    args = ap.parse_args(argv)
    run = replay(args.repo, args.samples, args.pairs, args.seed, args.max_file_kb)
    if args.rows:
        with open(args.rows, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(asdict(row)) + "\n" for row in run.rows)
    summary = summarize(run, Repo(args.repo))
    print(json.dumps(summary, indent=2) if args.json else render(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
