"""Use and fading (issue 15, item 3): the use log, ``gitmem stats``, and the decay of unused memories.

Real repositories, real hook processes (the Claude Code adapter's entry point), the real CLI and
MCP tool code; commits dated in the past (``GIT_COMMITTER_DATE``) and memories written with old
timestamps stand for code and memories nobody touched for long.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem import layout, usage
from gitmem.catalog import db as catalog_db
from gitmem.catalog import usage as catalog_usage
from gitmem.git import Repo
from gitmem.memories import write
from gitmem.store import Store
from testing.repos import commit, git, make_repo
from testing.repos import write as write_files
from tests.test_claude_hooks import context_of, fixture, hook, remember

A_PY = """def f():
    return 1


def g():
    return 2


def h():
    return 3
"""
#: Two years before the clock of these tests, whatever it says: the code nobody touched.
OLD_DAYS = 730


def _stamp(days_ago: float) -> str:
    import time

    from gitmem.infra import utc_stamp

    return utc_stamp(time.time() - days_ago * 86_400)


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    """A repository whose only commit (``src/a.py``) is two years old, gitmem initialised."""
    r = make_repo(tmp_path / "project")
    write_files(r, {"src/a.py": A_PY})
    git(r, "add", "-A")
    old = _stamp(OLD_DAYS)
    git(r, "commit", "-q", "-m", "old code", env={"GIT_AUTHOR_DATE": old, "GIT_COMMITTER_DATE": old})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def _aged(repo: Path, mid: str, days_ago: float) -> None:
    """Make memory ``mid`` written ``days_ago`` days ago (through the one write path)."""
    store = Store(Repo(repo))
    m = store.get(mid)
    write(store, [dataclasses.replace(m, created=_stamp(days_ago), updated=_stamp(days_ago))])


def _three(repo: Path, run_cli) -> tuple[str, str, str]:  # type: ignore[no-untyped-def]
    """On ``src/a.py``: A (decision, written 400 days ago, never used), B (decision, 500 days ago, opened
    now with ``gitmem show``), C (constraint, 450 days ago, never used). Returns their ids."""
    a = remember(run_cli, repo, "f returns one: callers count on it", "src/a.py::f", mtype="decision")
    b = remember(run_cli, repo, "g returns two: the protocol says so", "src/a.py::g", mtype="decision")
    c = remember(run_cli, repo, "h must return three, never more", "src/a.py::h", mtype="constraint")
    for mid, days in ((a, 400), (b, 500), (c, 450)):
        _aged(repo, mid, days)
    code, _, err = run_cli(repo, "show", b)
    assert code == 0, err
    return a, b, c


def _records(repo: Path) -> list[dict[str, object]]:
    return usage.read(layout.of(repo).usage_log)[0]


def _read_event(repo: Path, session: str) -> dict[str, object]:
    event = fixture("PreToolUse.Read", repo, session_id=session)
    event["tool_input"] = {"file_path": str(repo / "src" / "a.py")}
    return event


def _order(text: str, ids: tuple[str, ...]) -> list[str]:
    return sorted(ids, key=text.index)


def _decay(repo: Path, on: bool) -> None:
    cfg = repo / ".gitmem" / "config.toml"
    text = cfg.read_text("utf-8").split("\n[ranking]\n")[0]  # the default config has it commented out
    cfg.write_text(f"{text}\n[ranking]\ndecay = {'true' if on else 'false'}\n", "utf-8")


# -- recording -------------------------------------------------------------------------------------


def test_a_hook_process_records_what_it_gave(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, repo, "f returns one: callers count on it", "src/a.py::f", mtype="decision")
    run_cli(repo, "sync")
    code, out, _ = hook(_read_event(repo, "rec-1"), repo)
    assert code == 0 and mid in context_of(out, "PreToolUse")
    recs = [r for r in _records(repo) if mid in r["ids"]]  # type: ignore[operator]
    assert [(r["use"], r["via"]) for r in recs] == [("given", "file")]
    # the same session is not given it again, so nothing more is recorded
    assert hook(_read_event(repo, "rec-1"), repo)[1] == ""
    assert len([r for r in _records(repo) if mid in r["ids"]]) == 1  # type: ignore[operator]


def test_two_hook_processes_at_once_lose_nothing(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mid = remember(run_cli, repo, "f returns one: callers count on it", "src/a.py::f", mtype="decision")
    run_cli(repo, "sync")
    rounds = 6
    for i in range(rounds):
        procs = [subprocess.Popen([sys.executable, "-m", "gitmem.integrations.agents.claude"], cwd=repo,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for _ in range(2)]
        for n, p in enumerate(procs):  # both read their event before either has answered
            assert p.stdin is not None
            p.stdin.write(json.dumps(_read_event(repo, f"par-{i}-{n}")).encode())
            p.stdin.close()
        for p in procs:
            assert p.wait(timeout=60) == 0
            assert p.stdout is not None and mid in p.stdout.read().decode()
    given = [r for r in _records(repo) if r["use"] == "given" and mid in r["ids"]]  # type: ignore[operator]
    assert len(given) == 2 * rounds


def test_parallel_appends_never_tear_or_lose_a_record(tmp_path: Path) -> None:
    """Four processes append 300 records each, some longer than one atomic write (512 bytes): every
    record is there, whole."""
    repo = make_repo(tmp_path / "r")
    script = ("import sys\nfrom gitmem import layout, usage\nlay = layout.of(sys.argv[1])\nn = int(sys.argv[2])\n"
              "for i in range(300):\n"
              "    usage.record(lay, usage.GIVEN, 'file', [f'P{n}-{i}-{k:02d}' for k in range(1 + i % 40)])\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(repo), str(n)]) for n in range(4)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    lines = layout.of(repo).usage_log.read_bytes().splitlines()
    assert len(lines) == 1200 and all(usage.parse(ln) is not None for ln in lines)
    counts = usage.tally(usage.read(layout.of(repo).usage_log)[0])
    assert len(counts) == 4 * sum(1 + i % 40 for i in range(300))
    assert all(c[0] == 1 for c in counts.values())


def test_show_recall_and_mcp_record_and_stats_reports_them(repo: Path, run_cli, run_json) -> None:  # type: ignore[no-untyped-def]
    from gitmem.integrations.mcp_server import GitmemTools

    mid = remember(run_cli, repo, "f returns one: callers count on it", "src/a.py::f", mtype="decision")
    other = remember(run_cli, repo, "g returns two: the protocol says so", "src/a.py::g", mtype="decision")
    assert run_cli(repo, "show", mid)[0] == 0
    assert run_cli(repo, "recall", "callers count")[0] == 0
    tools = GitmemTools(repo)
    tools.get([mid])
    tools.search("callers count on f", limit=5)
    tools.context("src/a.py")
    vias = {(r["use"], r["via"]) for r in _records(repo) if mid in r["ids"]}  # type: ignore[operator]
    assert vias == {("opened", "show"), ("searched", "recall"), ("opened", "mcp-get"), ("searched", "mcp-search"),
                    ("given", "mcp-context")}
    st = run_json(repo, "stats")
    assert st["total"] == 2 and st["by_type"] == {"decision": {"fresh": 2}}
    top = st["most_used"][0]
    assert top["id"] == mid and (top["given"], top["searched"], top["opened"]) == (1, 2, 2)
    assert top["last_used"] is not None and top["fade"] == 1.0
    assert st["uses"]["opened"] == 2 and st["uses"]["searched"] >= 2
    # the stamps of the code: the anchored file's one commit, two years old
    assert top["touched"][:4] == _stamp(OLD_DAYS)[:4]
    code, out, _ = run_cli(repo, "stats")
    assert code == 0 and "2 memories" in out and mid in out and "most used:" in out
    if other not in {u["id"] for u in st["most_used"]}:
        assert other in {u["id"] for u in st["least_used"]}


def test_compaction_keeps_every_count(repo: Path) -> None:
    lay = layout.of(repo)
    for i in range(50):
        usage.record(lay, usage.GIVEN if i % 2 else usage.OPENED, "file", ["M1", "M2"] if i % 5 else ["M1"],
                     now=1000 + i)
    con = catalog_db.connect(repo, create=True)
    assert con is not None
    try:
        catalog_usage.refresh(con, lay)
        before = catalog_usage.counts(con)
        assert usage.compact(lay, at_bytes=100)
        assert len(lay.usage_log.read_bytes().splitlines()) == 2  # one folded line per memory
        usage.record(lay, usage.SEARCHED, "recall", ["M2"], now=2000)
        catalog_usage.refresh(con, lay)  # another file: folded from its start
        after = catalog_usage.counts(con)
    finally:
        con.close()
    assert before["M1"] == (25, 0, 25, 1049) and after["M1"] == before["M1"]
    assert after["M2"] == (before["M2"][0], 1, before["M2"][2], 2000)
    assert not usage.compact(lay)  # small: left alone


# -- fading ----------------------------------------------------------------------------------------


def _context(run_json, repo: Path) -> dict[str, dict[str, object]]:  # type: ignore[no-untyped-def]
    res = run_json(repo, "context", "--file", "src/a.py")
    return {m["id"]: m for m in res["memories"]} | {"order": {"ids": [m["id"] for m in res["memories"]]}}


def test_decay_lowers_an_unused_memory_on_old_code_never_a_constraint(repo: Path, run_cli,  # type: ignore[no-untyped-def]
                                                                    run_json) -> None:
    a, b, c = _three(repo, run_cli)
    st = run_json(repo, "stats")  # syncs: statuses, the code's commit times, the use log folded
    fades = {u["id"]: u["fade"] for u in st["least_used"]}
    assert fades[a] < 0.1 and fades[b] == 1.0 and fades[c] == 1.0  # A idle 400 d; B opened now; C a constraint
    assert [u["id"] for u in st["fading"]] == [a]

    on = _context(run_json, repo)
    # equally relevant (same file in focus, same type): B, in use, above A, never used on old code
    assert on["order"]["ids"].index(b) < on["order"]["ids"].index(a)
    assert on[a]["fade"] == fades[a] and on[c]["fade"] == 1.0
    # the hooks order the same way (a real hook process; near-ties by the same factor)
    text = context_of(hook(_read_event(repo, "fade-1"), repo)[1], "PreToolUse")
    assert _order(text, (a, b, c)) == [c, b, a]

    _decay(repo, on=False)
    off = _context(run_json, repo)
    assert off["order"]["ids"].index(a) < off["order"]["ids"].index(b)  # the old order: newest first
    assert off[c]["score"] == on[c]["score"] and off[a]["fade"] == 1.0  # a constraint's score never changes
    text = context_of(hook(_read_event(repo, "fade-2"), repo)[1], "PreToolUse")
    assert _order(text, (a, b, c)) == [a, c, b]  # newest first, as before decay
    st = run_json(repo, "stats")
    assert st["decay"] == {"on": False, "half_life_days": None} and st["fading"] == []


def test_code_committed_recently_keeps_a_memory_from_fading(repo: Path, run_cli, run_json) -> None:  # type: ignore[no-untyped-def]
    a, _, _ = _three(repo, run_cli)
    assert a in {u["id"] for u in run_json(repo, "stats")["fading"]}
    commit(repo, "touch f", {"src/a.py": A_PY.replace("return 1", "return 1  # one")})
    st = run_json(repo, "stats")
    assert st["fading"] == [] and {u["id"]: u["fade"] for u in st["least_used"]}[a] > 0.99


def test_decay_config_is_validated(repo: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    cfg = repo / ".gitmem" / "config.toml"
    base = cfg.read_text("utf-8") + "\n[ranking]\ndecay = true\ndecay_half_life_days = 90\n"
    for line, bad, said in (("decay_half_life_days = 90", "decay_half_life_days = 0",
                             "decay_half_life_days must be a number > 0"),
                            ("decay = true", "decay = \"yes\"", "ranking.decay must be true or false")):
        assert line in base
        cfg.write_text(base.replace(line, bad), "utf-8")
        code, _, err = run_cli(repo, "stats")
        assert code != 0 and said in err, err
    cfg.write_text(base.replace("decay = true", "fade = 1"), "utf-8")  # a newer gitmem's key: a warning
    code, _, err = run_cli(repo, "stats")
    assert code == 0 and "ranking.fade unknown to this gitmem" in err, err


def test_fade_formula() -> None:
    day = usage.DAY_S
    assert usage.fade("decision", 0.0 + day, 91 * day, 90) == pytest.approx(0.5)
    assert usage.fade("decision", day, 181 * day, 90) == pytest.approx(0.25)
    assert usage.fade("constraint", day, 900 * day, 90) == 1.0
    assert usage.fade("decision", day, 900 * day, None) == 1.0
    assert usage.fade("decision", None, 900 * day, 90) == 1.0
    assert usage.activity(10.0, None, 30.0) == 30.0 and usage.activity(None, None, None) is None
