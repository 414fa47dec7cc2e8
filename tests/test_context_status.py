"""``gitmem context``'s statuses (issue 25): evaluated only for the memories the output shows, taken from the
catalog while the recorded status still holds, and never ``fresh`` for code that changed since it was recorded.

Real repositories in temp dirs, real parses, the real catalog; no mocks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.anchors import Resolver
from gitmem.catalog import db as catalog_db
from gitmem.catalog.sync import holding_statuses, sync_hook_index
from gitmem.git import Repo
from gitmem.model import Status
from gitmem.ops.context import ShownStatuses, build_context
from gitmem.rank.focus import Focus
from gitmem.rank.score import apply_status, rank
from gitmem.store import Store
from testing.repos import commit, git, make_repo
from tests.test_claude_hooks import remember

#: Ten functions of one file, each a few lines: memories on each, some made stale by an edit.
FUNCS = "".join(f"def f{i}(x):\n    y = x + {i}\n    return y * {i}\n\n\n" for i in range(10))


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    """``src/a.py`` (f0..f9) and ``src/b.py`` (g) committed, gitmem initialised without git hooks."""
    r = make_repo(tmp_path / "project", {"src/a.py": FUNCS, "src/b.py": "def g():\n    return 2\n"})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def _store(repo: Path) -> Store:
    return Store(Repo(repo))


def _recorded(repo: Path) -> dict[str, tuple[str, str]]:
    """Every memory's recorded (status, reason) in the catalog."""
    con = catalog_db.connect(repo)
    assert con is not None
    try:
        return catalog_db.stored_statuses(con, [r[0] for r in con.execute("SELECT id FROM memories")])
    finally:
        con.close()


def _held(repo: Path) -> dict[str, tuple[Status, str]]:
    store = _store(repo)
    con = catalog_db.connect(repo)
    assert con is not None
    try:
        return holding_statuses(con, store.repo, [r[0] for r in con.execute("SELECT id FROM memories")])
    finally:
        con.close()


def _shown(repo: Path, files: list[str], **kw: object) -> dict[str, str]:
    """id → the status note of each memory the packed context shows (``build_context`` as the CLI runs it)."""
    res = build_context(_store(repo), files=files, cwd=str(repo), **kw)  # type: ignore[arg-type]
    shown = set(res.packed.detailed) | set(res.packed.indexed)
    from gitmem.rank.score import status_note

    return {s.memory.id: status_note(s) for s in res.ranked if s.memory.id in shown}


def test_a_recorded_fresh_status_is_never_shown_for_code_changed_since(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    on_f1 = remember(run_cli, repo, "f1 adds one before it multiplies", "src/a.py::f1", mtype="decision")
    on_g = remember(run_cli, repo, "g returns two for the protocol", "src/b.py::g", mtype="decision")
    commit(repo, "memories")
    sync_hook_index(_store(repo))
    assert _recorded(repo)[on_f1][0] == "fresh" and _held(repo)[on_f1] == (Status.FRESH, "")
    # the agent edits f1 (same size: only the content and the time say so)
    (repo / "src/a.py").write_text(FUNCS.replace("y = x + 1\n", "y = x - 1\n"), encoding="utf-8")
    assert on_f1 not in _held(repo) and on_g in _held(repo)  # b.py did not change: its status still holds
    assert _shown(repo, ["src/a.py", "src/b.py"])[on_f1].startswith("⚠ stale")
    assert _shown(repo, ["src/a.py", "src/b.py"])[on_g] == "fresh"
    # committed without gitmem's git hooks: HEAD moved since the check, nothing recorded holds
    commit(repo, "f1 subtracts")
    assert _held(repo) == {}
    assert _shown(repo, ["src/a.py"])[on_f1].startswith("⚠ stale")
    # checked again (stale recorded), then the edit reverted: the recorded stale no longer holds either
    sync_hook_index(_store(repo))
    assert _held(repo)[on_f1][0] == Status.STALE
    git(repo, "revert", "--no-edit", "HEAD")
    assert on_f1 not in _held(repo)
    assert _shown(repo, ["src/a.py"])[on_f1] == "fresh"


def test_a_file_dirty_at_the_check_is_evaluated_again(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """A status recorded on a file that was dirty at the check may since have been recorded at a commit
    (``scan``, the post-commit hook): it is evaluated, not taken."""
    on_f2 = remember(run_cli, repo, "f2 multiplies by two", "src/a.py::f2", mtype="decision")
    (repo / "src/a.py").write_text(FUNCS.replace("y = x + 2\n", "y = x * 2\n"), encoding="utf-8")
    sync_hook_index(_store(repo))
    assert _recorded(repo)[on_f2][0] == "stale" and on_f2 not in _held(repo)
    assert _shown(repo, ["src/a.py"])[on_f2].startswith("⚠ stale")


def test_held_statuses_show_what_evaluated_ones_show(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """Fresh, stale, moved and deleted memories: the text packed from the catalog's statuses is the text packed
    from statuses evaluated now, byte for byte."""
    ids = {name: remember(run_cli, repo, f"{name} memory on f{i}", f"src/a.py::f{i}", mtype="decision")
           for i, name in enumerate(("fresh", "stale", "moved", "deleted"))}
    changed = FUNCS.replace("y = x + 1\n", "y = x + 100\n").replace(
        "def f3(x):\n    y = x + 3\n    return y * 3\n\n\n", "")
    moved = "def f2(x):\n    y = x + 2\n    return y * 2\n\n\n"
    commit(repo, "change f1, move f2 to c.py, delete f3", {"src/a.py": changed.replace(moved, ""), "src/c.py": moved})
    sync_hook_index(_store(repo))
    held = _held(repo)
    assert {held[i][0] for i in ids.values()} == {Status.FRESH, Status.STALE, Status.MOVED, Status.DELETED}
    res_held = build_context(_store(repo), files=["src/a.py", "src/c.py"], cwd=str(repo))
    res_eval = build_context(_store(repo), files=["src/a.py", "src/c.py"], cwd=str(repo), anchor_detail=True)
    assert res_held.packed.text == res_eval.packed.text
    shown = set(res_held.packed.detailed) | set(res_held.packed.indexed)
    assert set(ids.values()) <= shown
    for s in res_held.ranked:  # from the catalog: no anchor evaluated
        if s.memory.id in shown:
            assert s.status_detail is None and s.status_reason is not None
    for s in res_eval.ranked:  # the JSON shapes print every anchor's status: evaluated
        if s.memory.id in shown:
            assert s.status_detail is not None


def test_statuses_are_evaluated_only_for_what_the_budget_shows(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """The packer reads the ranking until the budget is full; only what it read has a status evaluated. (It reads
    on while an index line may still fit: here every index line is as long, and the budget is left with less
    than ``MIN_INDEX_LINE_CHARS`` after the last one, so it stops there.)"""
    mids = [remember(run_cli, repo, f"m{k} on f{k % 10}", f"src/a.py::f{k % 10}", mtype="decision")
            for k in range(10, 50)]
    first = build_context(_store(repo), files=["src/a.py"], cwd=str(repo), budget=400, anchor_detail=True)
    assert first.packed.indexed and first.packed.left_out > 20
    res = build_context(_store(repo), files=["src/a.py"], cwd=str(repo), budget=(len(first.packed.text) + 20) // 4,
                        anchor_detail=True)
    assert res.packed.text == first.packed.text
    shown = set(res.packed.detailed) | set(res.packed.indexed)
    evaluated = {s.memory.id for s in res.ranked if s.status_detail is not None}
    assert shown <= evaluated and len(evaluated) <= len(shown) + 2  # the one that did not fit, one looked ahead
    assert len(res.ranked) == len(mids) and res.packed.left_out == len(mids) - len(shown)
    # the whole ranking is still there, the shown ones first, in the order shown
    assert [s.memory.id for s in res.ranked][:len(shown)] == res.packed.detailed + res.packed.indexed


def test_the_lazy_order_is_apply_status_order(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """``ShownStatuses`` gives the order ``rank.apply_status`` gives with every status evaluated, whatever the
    scores: stale memories penalised below fresh ones, ties broken the same way."""
    for k in range(20):
        remember(run_cli, repo, f"memory {k} on f{k % 10}", f"src/a.py::f{k % 10}", mtype="decision")
    (repo / "src/a.py").write_text(FUNCS.replace("y = x + 3\n", "y = x + 33\n")
                                   .replace("y = x + 7\n", "y = x + 77\n"), encoding="utf-8")
    store = _store(repo)
    mems = list(store.load_all().memories.values())
    resolver = Resolver(store.repo)

    def ranking() -> list:  # type: ignore[type-arg]
        focus = Focus()
        focus.files["src/a.py"] = (1.0, "given")
        ranked = rank(mems, focus)
        for i, s in enumerate(ranked):  # many ties and stale memories at the top
            s.score = 1.0 - (i // 3) * 0.01
        return ranked

    from gitmem.analyzer import memory_status
    from gitmem.git import WORKTREE

    eager = ranking()
    statuses = {s.memory.id: memory_status(resolver, s.memory, WORKTREE) for s in eager}
    assert sum(ms.status == Status.STALE for ms in statuses.values()) == 4
    for omit in (False, True):
        want = [s.memory.id for s in apply_status(ranking(), statuses, omit_stale=omit)]
        lazy = ShownStatuses(ranking(), resolver, {}, omit_stale=omit)
        assert [s.memory.id for s in lazy] == want


def test_context_with_a_prompt_imports_no_lancedb(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """The prompt's text ranking is the hybrid search over the catalog: never LanceDB, pyarrow or the wordllama
    package; numpy only to embed memories written since the last search (the first run), not once synced."""
    remember(run_cli, repo, "the retry timeout of f4 is parsed as seconds", "src/a.py::f4", mtype="decision")
    script = ("import sys\nfrom gitmem.cli import main\n"
              "code = main(['context', '--prompt', 'change how the retry timeout is parsed'])\n"
              "heavy = sorted(m for m in ('lancedb', 'pyarrow', 'wordllama', 'numpy') if m in sys.modules)\n"
              "print('HEAVY', heavy, code, file=sys.stderr)\n")
    runs = [subprocess.run([sys.executable, "-P", "-c", script], cwd=repo, capture_output=True, text=True,
                           env={**os.environ, "GITMEM_NO_DAEMON": "1"}) for _ in range(2)]
    assert any(f"HEAVY {h} 0" in runs[0].stderr for h in ("[]", "['numpy']")), runs[0].stderr
    assert "HEAVY [] 0" in runs[1].stderr, runs[1].stderr
    assert all("retry timeout of f4" in p.stdout for p in runs)


def test_memories_given_as_loaded_get_statuses_evaluated(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """Memories read from the files (``loaded``: session start when the catalog is behind) may differ from the
    catalog's rows its recorded statuses are of: their statuses are evaluated."""
    on_f5 = remember(run_cli, repo, "f5 adds five", "src/a.py::f5", mtype="decision")
    sync_hook_index(_store(repo))
    assert on_f5 in _held(repo)
    store = _store(repo)
    res = build_context(store, files=["src/a.py"], cwd=str(repo), loaded=store.load_all())
    (s,) = [s for s in res.ranked if s.memory.id == on_f5]
    assert s.status_detail is not None and s.status_reason is None
    res = build_context(_store(repo), files=["src/a.py"], cwd=str(repo))  # from the catalog: as recorded
    (s,) = [s for s in res.ranked if s.memory.id == on_f5]
    assert s.status_detail is None and s.status_reason == ""
