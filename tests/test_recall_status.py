"""``gitmem recall``'s statuses (issue 25): the catalog's recorded status while it still holds
(``catalog.sync.holding_statuses``, as ``gitmem context``), else evaluated; never ``fresh`` for code that changed
since it was recorded. And the CLI's cold start: no parser and no agent installer imported by a recall whose
statuses all hold.

Real repositories in temp dirs, real parses, the real catalog, real processes; no mocks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.catalog.sync import sync_hook_index
from gitmem.git import Repo
from gitmem.integrations.agents import installers
from gitmem.ops.show import statuses_now, with_status
from gitmem.store import Store
from testing.repos import commit, git, make_repo
from tests.test_claude_hooks import remember

FUNCS = "".join(f"def f{i}(x):\n    y = x + {i}\n    return y * {i}\n\n\n" for i in range(4))


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    """``src/a.py`` (f0..f3) and ``src/b.py`` (g) committed, gitmem initialised without git hooks."""
    r = make_repo(tmp_path / "project", {"src/a.py": FUNCS, "src/b.py": "def g():\n    return 2\n"})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def _recalled(run_cli, repo: Path, query: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """id → status of each hit of ``gitmem recall --json QUERY``."""
    code, out, err = run_cli(repo, "recall", query, "--json")
    assert code == 0, err
    return {h["id"]: h["status"] for h in json.loads(out)}


def _evaluated(repo: Path, ids: list[str]) -> list[str]:
    """The statuses ``with_status`` evaluates now (every anchor resolved), as values."""
    store = Store(Repo(repo))
    mems = store.load_all().memories
    return [ms.status.value for ms in with_status(store, [mems[i] for i in ids])]


def test_recall_never_shows_a_recorded_fresh_for_code_changed_since(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    on_f1 = remember(run_cli, repo, "parsing adds one before it multiplies", "src/a.py::f1", mtype="decision")
    on_g = remember(run_cli, repo, "parsing returns two for the protocol", "src/b.py::g", mtype="decision")
    commit(repo, "memories")
    sync_hook_index(Store(Repo(repo)))
    assert _recalled(run_cli, repo, "parsing") == {on_f1: "fresh", on_g: "fresh"}
    # the agent edits f1 (same size: only the content and the time say so)
    (repo / "src/a.py").write_text(FUNCS.replace("y = x + 1\n", "y = x - 1\n"), encoding="utf-8")
    assert _recalled(run_cli, repo, "parsing") == {on_f1: "stale", on_g: "fresh"}
    # committed without gitmem's git hooks: HEAD moved since the check
    commit(repo, "f1 subtracts")
    assert _recalled(run_cli, repo, "parsing") == {on_f1: "stale", on_g: "fresh"}
    # checked again (stale recorded), then the edit reverted: the recorded stale does not hold either
    sync_hook_index(Store(Repo(repo)))
    git(repo, "revert", "--no-edit", "HEAD")
    assert _recalled(run_cli, repo, "parsing") == {on_f1: "fresh", on_g: "fresh"}
    # deleted code, checked: the recorded status is taken, and it is what evaluating says
    commit(repo, "drop f1", {"src/a.py": FUNCS.replace("def f1(x):\n    y = x + 1\n    return y * 1\n\n\n", "")})
    sync_hook_index(Store(Repo(repo)))
    got = _recalled(run_cli, repo, "parsing")
    assert got[on_f1] == "deleted" and [got[on_f1], got[on_g]] == _evaluated(repo, [on_f1, on_g])


def test_statuses_now_equal_evaluated_ones(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """Fresh, stale, moved and deleted: the statuses taken from the catalog are those evaluated now, in order."""
    ids = [remember(run_cli, repo, f"note {k} on f{k}", f"src/a.py::f{k}", mtype="decision") for k in range(4)]
    moved = "def f2(x):\n    y = x + 2\n    return y * 2\n\n\n"
    changed = (FUNCS.replace("y = x + 1\n", "y = x + 100\n").replace(moved, "")
               .replace("def f3(x):\n    y = x + 3\n    return y * 3\n\n\n", ""))
    commit(repo, "change f1, move f2, delete f3", {"src/a.py": changed, "src/c.py": moved})
    store = Store(Repo(repo))
    sync_hook_index(store)
    mems = [store.load_all().memories[i] for i in reversed(ids)]
    want = _evaluated(repo, list(reversed(ids)))
    assert sorted(want) == ["deleted", "fresh", "moved", "stale"]
    assert [s.value for s in statuses_now(Store(Repo(repo)), mems)] == want


def _cold_recall(repo: Path) -> tuple[str, list[str]]:
    """``gitmem recall --json`` in a process of its own: (stdout, the heavy or optional modules it imported)."""
    script = ("import sys\nfrom gitmem.cli import main\ncode = main(['recall', 'parsing', '--json'])\n"
              "names = ('gitmem.analyzer', 'gitmem.anchors', 'tree_sitter', 'gitmem.integrations.agents.claude',"
              " 'gitmem.integrations.agents.installing', 'lancedb')\n"
              "print('LOADED', sorted(m for m in names if m in sys.modules), code, file=sys.stderr)\n")
    p = subprocess.run([sys.executable, "-P", "-c", script], cwd=repo, capture_output=True, text=True,
                       env={**os.environ, "GITMEM_NO_DAEMON": "1"}, check=True)
    loaded = p.stderr.split("LOADED ", 1)[1].rsplit(" ", 1)[0]
    return p.stdout, json.loads(loaded.replace("'", '"'))


def test_a_recall_whose_statuses_hold_imports_no_parser_nor_installer(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    on_f1 = remember(run_cli, repo, "parsing adds one before it multiplies", "src/a.py::f1", mtype="decision")
    commit(repo, "memories")
    sync_hook_index(Store(Repo(repo)))
    out, loaded = _cold_recall(repo)
    assert loaded == [] and json.loads(out)[0]["status"] == "fresh"
    (repo / "src/a.py").write_text(FUNCS.replace("y = x + 1\n", "y = x - 1\n"), encoding="utf-8")
    out, loaded = _cold_recall(repo)  # the status no longer holds: evaluated, with the parser
    assert "gitmem.analyzer" in loaded and "gitmem.integrations.agents.claude" not in loaded
    assert json.loads(out)[0] == json.loads(out)[0] | {"id": on_f1, "status": "stale"}


def test_install_and_uninstall_name_every_agent(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """The agents' subcommands are built when named: the help lists each, each runs."""
    for group in ("install", "uninstall"):
        code, out, err = run_cli(repo, group, "--help")
        assert code == 0, err
        listed = out.split("Commands:", 1)[1].split()
        assert all(name in listed for name in installers.names())
        code, out, err = run_cli(repo, group, "codex", "--help")
        assert code == 0 and "codex" in out, err
    code, _, err = run_cli(repo, "install", "nosuchagent")
    assert code == 2 and "nosuchagent" in err
    code, out, err = run_cli(repo, "install", "codex", "--dry-run")
    assert code == 0, err
