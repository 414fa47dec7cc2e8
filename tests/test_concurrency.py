"""Concurrency and crashes: parallel sessions capturing and consolidating, kills, git running alongside.

Every event a test spools carries a unique token (``q<session>x<nnnn>z``). The
consolidations go through the LLM path against ``testing.chat_server`` on
127.0.0.1, whose ``respond`` echoes every token of the transcript it is sent into
the body of an observation (one memory per request part, at most 300 tokens
each). So "an event is in a memory" is exact: its token appears in the body of a
memory, and the tests assert that each token appears exactly once across the
memories and the spool: never lost, never twice. (The rules path keeps only a
session's first prompt, last message and a few commands, so it could not show
this per event.)
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
import uuid
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from gitmem import layout
from testing.chat_server import ChatServer, chat_server
from testing.repos import commit, git, make_repo
from tests.test_claude_hooks import wait_for

PROJECT = Path(__file__).resolve().parents[1]
# The fork server below imports lancedb but never opens a table, so its forks inherit no runtime state.
warnings.filterwarnings("ignore", message="lancedb fork support is experimental", category=RuntimeWarning)
TOKEN = re.compile(r"\bq\d+x\d{4}z\b")
WORK_PY = "def compute(x):\n    value = 0\n    return value + x\n\n\ndef other():\n    return 1\n"
TOKENS_PER_OBSERVATION = 300


def token(session: int, i: int) -> str:
    return f"q{session}x{i:04d}z"


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """Every token of the transcript (as often as it occurs) into observation bodies anchored to work.py."""
    found = TOKEN.findall(body["messages"][1]["content"])
    parts = [found[i:i + TOKENS_PER_OBSERVATION] for i in range(0, len(found), TOKENS_PER_OBSERVATION)]
    # titles share no word: two memories on work.py are never near duplicates (which merge or supersede)
    obs = [{"type": "discovery", "title": uuid.uuid4().hex, "body": " ".join(p), "files": ["work.py"]} for p in parts]
    return {"content": json.dumps({"observations": obs})}


def events(root: Path, session: int, n: int) -> list[dict[str, Any]]:
    """A session of ``n`` token-carrying events (prompts, edits, commands, searches, stops), then SessionEnd."""
    base = {"session_id": f"sess-{session}", "transcript_path": "", "cwd": str(root)}
    out: list[dict[str, Any]] = []
    for i in range(n):
        t = token(session, i)
        if i % 25 == 0:
            ev = {"hook_event_name": "UserPromptSubmit", "prompt": f"Step {t}: make compute in work.py faster"}
        elif i % 25 == 24 or i == n - 1:
            ev = {"hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": f"Done: {t}."}
        elif i % 10 == 5:
            ev = {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": f"b{t}",
                  "tool_input": {"command": f"python -m pytest -q -k {t}"},
                  "tool_response": {"stdout": "1 passed\n", "stderr": "", "interrupted": False}}
        elif i % 10 == 7:
            ev = {"hook_event_name": "PostToolUse", "tool_name": "Grep", "tool_use_id": f"g{t}",
                  "tool_input": {"pattern": t, "path": str(root)},
                  "tool_response": {"numFiles": 0, "filenames": []}}
        else:
            ev = {"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_use_id": f"e{t}",
                  "tool_input": {"file_path": str(root / "work.py"), "old_string": "value = 0",
                                 "new_string": f"value = 0  # {t}"},
                  "tool_response": {"filePath": str(root / "work.py")}}
        out.append({**base, **ev})
    out.append({**base, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
    return out


def hook_command() -> list[str]:
    """The real Claude Code hook entry of this environment (``gitmem-hook``)."""
    exe = Path(sys.executable).parent / "gitmem-hook"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "gitmem.integrations.agents.claude"]


def run_hook(event: dict[str, Any], root: Path) -> None:
    proc = subprocess.run(hook_command(), input=json.dumps(event).encode(), cwd=root, capture_output=True,
                          timeout=60)
    assert proc.returncode == 0 and (proc.stdout == b"" or proc.stdout.startswith(b"{")), proc


def writer(root: str, session: int, n: int, sample_every: int, consolidate_at: str) -> None:
    """One session in its own process: its events through the hook handlers (every ``sample_every``-th and
    SessionEnd through the real ``gitmem-hook`` process); at the indexes in ``consolidate_at`` it
    consolidates every pending session itself, the way the worker does for orphaned spools."""
    from gitmem.capture import worker
    from gitmem.integrations.agents import claude as claude_hooks

    path = Path(root)
    at = {int(x) for x in consolidate_at.split(",") if x}
    for i, ev in enumerate(events(path, session, n)):
        if i % sample_every == 0 or ev["hook_event_name"] == "SessionEnd":
            run_hook(ev, path)
        else:
            claude_hooks.handle(ev)
        if i in at:
            worker.run(path, None)


def start_writer(root: Path, session: int, n: int, *, sample_every: int = 50,
                 consolidate_at: tuple[int, ...] = ()) -> subprocess.Popen[bytes]:
    code = (f"from tests.test_concurrency import writer; writer({str(root)!r}, {session}, {n}, {sample_every}, "
            f"{','.join(map(str, consolidate_at))!r})")
    return subprocess.Popen([sys.executable, "-c", code], cwd=PROJECT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(PROJECT)})


# -- what the repository holds ---------------------------------------------------------------------


def spool_files(root: Path) -> list[Path]:
    folder = layout.of(root).spool_dir
    if not folder.is_dir():
        return []
    return [p for p in folder.iterdir() if p.name.endswith((".jsonl", ".batch", ".plan.json"))]


def tokens_in_spool(root: Path) -> Counter[str]:
    """Tokens of the spooled events not consolidated yet (live files and claimed batches; plans are
    memories on their way and are counted by ``tokens_in_memories`` once applied)."""
    out: Counter[str] = Counter()
    for p in spool_files(root):
        if p.name.endswith((".jsonl", ".batch")):
            for line in p.read_text("utf-8", "replace").splitlines():
                out.update(set(TOKEN.findall(line)))
    return out


def tokens_in_memories(root: Path) -> Counter[str]:
    """Tokens in the memory files (each file must parse)."""
    from gitmem.git import Repo
    from gitmem.store import Store

    loaded = Store(Repo(root)).load_all()
    assert loaded.errors == []
    out: Counter[str] = Counter()
    for m in loaded.memories.values():
        out.update(TOKEN.findall(" ".join([m.title, m.body, *m.facts])))
    return out


def log_errors(root: Path) -> list[str]:
    logs = layout.of(root).logs_dir
    out = []
    for name in ("consolidate.log", "claude-hooks.log", "hooks.log"):
        p = logs / name
        if p.is_file():
            out += [ln for ln in p.read_text("utf-8", "replace").splitlines()
                    if " error" in ln.lower() or "Traceback" in ln]
    return out


def llm_repo(tmp_path: Path, run_cli, server: ChatServer, *, hooks: bool = False) -> Path:
    root = make_repo(tmp_path / "project")
    commit(root, "init", {"work.py": WORK_PY})
    code, _, err = run_cli(root, "init", *([] if hooks else ["--no-hooks"]))
    assert code == 0, err
    (root / ".gitmem" / "config.toml").write_text(
        f'[llm]\nbase_url = "{server.base_url}"\nmodel = "echo"\napi_key_env = "GITMEM_TEST_KEY"\ntimeout = 20\n'
        "max_retries = 0\n", encoding="utf-8")
    server.respond = respond
    return root


# -- 1. four sessions capture and consolidate at once ------------------------------------------------


def test_four_sessions_capture_and_consolidate_at_once(tmp_path: Path, run_cli) -> None:
    """4 processes, 500 events each; two of them also consolidate every pending session (theirs and the
    others', mid-session) three times while appending; each SessionEnd starts its detached worker.
    Afterwards each event's token is in exactly one memory, and nothing is left in the spool."""
    n = 500
    with chat_server() as server:
        root = llm_repo(tmp_path, run_cli, server)
        started = time.monotonic()
        procs = [start_writer(root, s, n, consolidate_at=(120, 260, 400) if s < 2 else ()) for s in range(4)]
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err.decode()
        assert wait_for(lambda: not spool_files(root), timeout=60), [p.name for p in spool_files(root)]
        elapsed = time.monotonic() - started
    want = Counter({token(s, i): 1 for s in range(4) for i in range(n)})
    got = tokens_in_memories(root)
    lost, twice = sorted(t for t in want if got[t] == 0), sorted(t for t in got if got[t] > 1)
    assert (lost, twice) == ([], [])
    assert got == want
    assert log_errors(root) == []
    print(f"elapsed {elapsed:.1f}s, {len(server.requests)} LLM requests")


# -- 2. kills at random moments --------------------------------------------------------------------


def token_holders(root: Path) -> Counter[str]:
    """Where each token is right now, counting a memory or spool line as one holder.

    A batch with a plan is in transit: its plan's memories (by id, as the next run writes them) hold
    its tokens, whether or not the kill came before they reached their files.
    """
    from gitmem.capture.consolidate import Plan
    from gitmem.git import Repo
    from gitmem.store import Store

    loaded = Store(Repo(root)).load_all()
    assert loaded.errors == [], [e.message for e in loaded.errors]  # every memory file is whole
    mems = {mid: " ".join([m.title, m.body, *m.facts]) for mid, m in loaded.memories.items()}
    planned: set[str] = set()
    for p in spool_files(root):
        if p.name.endswith(".plan.json"):
            plan = Plan.from_json(p.read_bytes())  # a plan is written atomically: it parses, or is absent
            mems.update({m.id: " ".join([m.title, m.body, *m.facts]) for m in plan.write})
            for mid in plan.delete:
                mems.pop(mid, None)
            planned.add(p.name.removesuffix(".plan.json"))
    out: Counter[str] = Counter()
    for text in mems.values():
        out.update(TOKEN.findall(text))
    for p in spool_files(root):
        if p.name.endswith(".jsonl") or (p.name.endswith(".batch") and p.name.removesuffix(".batch") not in planned):
            for line in p.read_text("utf-8", "replace").splitlines():
                out.update(set(TOKEN.findall(line)))
    return out


def spool_session(root: Path, session: int, n: int) -> None:
    """Capture a session's events through the hook handlers, in this process (no SessionEnd worker)."""
    from gitmem.integrations.agents import claude as claude_hooks

    for ev in events(root, session, n)[:-1]:
        claude_hooks.handle(ev)


def _worker(root: str) -> None:
    from gitmem.capture import worker

    worker.run(Path(root), None)  # what SessionStart starts for orphaned spools: consolidation, hook index


def _capture_loop(root: str, stop: str) -> None:
    """Sessions of 40 events, each captured then consolidated, until ``stop`` exists; the number of
    sessions goes into ``stop + ".n"``."""
    from gitmem.capture import worker

    r = 0
    while not os.path.exists(stop):
        spool_session(Path(root), r, 40)
        worker.run(Path(root), None)
        r += 1
    Path(stop + ".n").write_text(str(r))


def _cli(root: str, *args: str) -> None:
    from gitmem.cli import main

    os.chdir(root)
    sys.exit(main(list(args)))


def _catalog_sync(root: str) -> None:
    from gitmem.catalog import sync as catalog_sync

    catalog_sync.main([root])


#: Imported once by the fork server, so a forked process starts its real work at once (importing the embedder
#: and numpy takes a while on a busy machine: a random kill would nearly always hit the import).
PRELOAD = ["gitmem.search.hybrid", "gitmem.search.embed", "gitmem.cli", "gitmem.capture.worker",
           "gitmem.capture.consolidate", "gitmem.catalog.sync", "openai", "tests.test_concurrency"]


def forked(target, *args: str):
    """Start ``target(*args)`` in a real process forked from a server that preloaded gitmem."""
    import multiprocessing

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    proc = ctx.Process(target=target, args=args, daemon=True)
    proc.start()
    return proc


def kill_after(proc, delay: float) -> bool:
    """SIGKILL ``proc`` after ``delay`` seconds; True when it was still running then."""
    proc.join(delay)
    if proc.exitcode is not None:
        return False
    proc.kill()
    proc.join()
    return True


def finish(target, *args: str, timeout: float = 60) -> None:
    """Run ``target(*args)`` to its end in a process: a lock left by a killed process must not block it."""
    proc = forked(target, *args)
    proc.join(timeout)
    assert proc.exitcode == 0, f"{target.__name__}{args}: exit {proc.exitcode}"


def assert_consistent(root: Path, want: Counter[str], run_json) -> None:
    """Spool empty, each token in one memory, the catalog and its search vectors match the files, doctor clean,
    recall finds memories by a token."""
    from gitmem.catalog import db as catalog_db
    from gitmem.catalog import vectors as catalog_vectors
    from gitmem.git import Repo
    from gitmem.store import Store

    assert spool_files(root) == []
    got = tokens_in_memories(root)
    lost, twice = sorted(t for t in want if got[t] == 0), sorted(t for t in got if got[t] > 1)
    assert (lost, twice) == ([], []) and got == want
    store = Store(Repo(root))
    loaded = store.load_all()
    con = catalog_db.connect(root)
    assert con is not None
    try:
        assert catalog_vectors.digests(con) == loaded.hashes
        assert {mid: d[0] for mid, d in catalog_db.digests(con).items()} == loaded.hashes
        assert catalog_db.is_current(con, root)
    finally:
        con.close()
    doctor = run_json(root, "doctor")
    assert doctor["ok"], doctor
    assert [c["message"] for c in doctor["checks"] if c["name"] == "index"] == [
        f"search vectors in sync ({len(loaded.hashes)} memories)"]
    assert [c for c in doctor["checks"] if c["level"] != "ok"] == []
    holder = {t: mid for mid, m in loaded.memories.items() for t in TOKEN.findall(m.body)}
    for t in sorted(want)[::len(want) // 3]:
        assert [h["id"] for h in run_json(root, "recall", t) if h["fts_rank"] == 1] == [holder[t]], t


#: Rounds of kills at most (three at least): how long a run takes varies with the machine and with gitmem (a sync
#: without the LanceDB index finishes in a fraction of a second), so rounds go on until three kills hit a running
#: process rather than counting on the delays to.
MAX_KILL_ROUNDS = 8


def test_killed_consolidations_and_syncs_recover(tmp_path: Path, run_cli, run_json) -> None:
    """SIGKILL at seeded random moments: the worker (consolidation, then hook-index sync), `gitmem sync`
    (the catalog and its vectors), `python -m gitmem.catalog.sync`. After each kill every memory file
    parses and each captured token is held exactly once (a memory, a plan in transit, or a spool line);
    the next runs finish and leave everything consistent."""
    rng = random.Random(5)
    n = 120
    with chat_server() as server:
        root = llm_repo(tmp_path, run_cli, server)
        assert run_cli(root, "hooks", "install")[0] == 0
        want: Counter[str] = Counter()
        killed = 0
        for rnd in range(MAX_KILL_ROUNDS):
            spool_session(root, rnd, n)
            want.update(token(rnd, i) for i in range(n))
            # delays within each run's usual length here (syncs read only changed files: they are short)
            for target, args, longest in ((_worker, (), 0.5), (_cli, ("sync",), 0.4), (_catalog_sync, (), 0.1)):
                killed += kill_after(forked(target, str(root), *args), rng.uniform(0.0, longest))
                held = token_holders(root)
                assert (sorted(t for t in want if held[t] == 0), sorted(t for t in held if held[t] > 1)) == ([], [])
            if rnd >= 2 and killed >= 3:  # a run that finished before its kill proves nothing: go on until 3 hit
                break
        assert killed >= 3  # kills that hit a running process
        finish(_cli, str(root), "consolidate")
        finish(_cli, str(root), "sync")
    assert_consistent(root, want, run_json)


# -- 3. git while consolidating ------------------------------------------------------------------------


def timed_git(root: Path, *args: str) -> float:
    """Run git (its gitmem hooks included); it must succeed. Returns the seconds it took."""
    started = time.monotonic()
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, timeout=120)
    assert proc.returncode == 0, (args, proc.stderr.decode())
    return time.monotonic() - started


def test_git_commits_merges_rebases_and_checkouts_while_consolidating(tmp_path: Path, run_cli, run_json) -> None:
    """A process captures and consolidates session after session while git commits (the pre-commit hook
    shares the local memories anchored to the changed code), merges, rebases and checks out, with gitmem's
    hooks installed. No git command fails or waits long; afterwards every token is in one memory (team or
    local), and the index, hooks.sqlite and doctor agree with the files."""
    with chat_server() as server:
        root = llm_repo(tmp_path, run_cli, server)
        assert run_cli(root, "hooks", "install")[0] == 0
        commit(root, "gitmem", {"lib.py": "def helper():\n    return 2\n"})
        stop = tmp_path / "stop"
        loop = forked(_capture_loop, str(root), str(stop))
        try:
            assert wait_for(lambda: any((layout.of(root).local_memories_dir).glob("*.md")), timeout=60)
            edit = iter(range(100))

            def change(path: str) -> None:
                with open(root / path, "a", encoding="utf-8") as f:
                    f.write(f"\n\ndef added_{next(edit)}():\n    return 0\n")

            took = []
            change("work.py")
            took.append(timed_git(root, "commit", "-qam", "work on main"))
            took.append(timed_git(root, "checkout", "-qb", "feature"))
            change("lib.py")
            took.append(timed_git(root, "commit", "-qam", "lib on feature"))
            took.append(timed_git(root, "checkout", "-q", "main"))
            change("work.py")
            took.append(timed_git(root, "commit", "-qam", "more work on main"))
            took.append(timed_git(root, "merge", "-q", "--no-ff", "-m", "merge feature", "feature"))
            took.append(timed_git(root, "checkout", "-qb", "topic"))
            change("work.py")
            took.append(timed_git(root, "commit", "-qam", "work on topic"))
            took.append(timed_git(root, "checkout", "-q", "main"))
            change("lib.py")
            took.append(timed_git(root, "commit", "-qam", "lib on main"))
            took.append(timed_git(root, "checkout", "-q", "topic"))
            took.append(timed_git(root, "rebase", "-q", "main"))
            took.append(timed_git(root, "checkout", "-q", "main"))
            took.append(timed_git(root, "merge", "-q", "--ff-only", "topic"))
            assert max(took) < 30, took
        finally:
            stop.touch()
            loop.join(120)
        assert loop.exitcode == 0
        sessions = int((tmp_path / "stop.n").read_text())
        assert sessions >= 2
        finish(_worker, str(root))
        finish(_cli, str(root), "sync")
    shared = list((root / ".gitmem" / "memories").glob("*.md"))
    assert shared, "the commits of work.py carried memories anchored to it"
    assert [ln for ln in git(root, "status", "--porcelain").splitlines() if ".gitmem/memories" in ln] == []
    assert_consistent(root, Counter(token(r, i) for r in range(sessions) for i in range(40)), run_json)


# -- what the tests above showed, one at a time ------------------------------------------------------


def test_a_session_that_ends_while_it_is_being_consolidated_is_consolidated(tmp_path: Path, run_cli) -> None:
    """SessionEnd's worker finds the session busy (another consolidation holds its lock, as `gitmem
    consolidate` or an orphan worker does mid-session): it waits its turn instead of leaving the last events
    in the spool until some later session starts."""
    from filelock import FileLock

    from gitmem.capture import spool

    with chat_server() as server:
        root = llm_repo(tmp_path, run_cli, server)
        evs = events(root, 0, 30)
        lock = FileLock(str(spool.spool_dir(root) / "sess-0.lock"))
        spool_session(root, 0, 30)
        with lock:
            run_hook(evs[-1], root)  # SessionEnd: its worker starts while the session is busy
            time.sleep(4)
        assert wait_for(lambda: not spool_files(root), timeout=60), [p.name for p in spool_files(root)]
        assert wait_for(lambda: sum(tokens_in_memories(root).values()) == 30)
    assert tokens_in_memories(root) == Counter(token(0, i) for i in range(30))


def test_a_long_session_reaches_the_model_whole(tmp_path: Path, run_cli) -> None:
    """A batch whose transcript is longer than [llm] max_input_chars goes to the model in parts, each within
    the limit: the end of a long session (where its conclusions are) is not cut off."""
    n = 200
    with chat_server() as server:
        root = llm_repo(tmp_path, run_cli, server)
        with open(root / ".gitmem" / "config.toml", "a", encoding="utf-8") as f:
            f.write("max_input_chars = 4000\n")
        spool_session(root, 0, n)
        code, out, err = run_cli(root, "consolidate", "--json")
        assert code == 0, err
        sizes = [len(r["messages"][1]["content"]) for r in server.requests]
        assert len(sizes) >= 2 and max(sizes) <= 4000, sizes
    assert tokens_in_memories(root) == Counter(token(0, i) for i in range(n))


def test_the_last_message_of_a_session_consolidated_midway_is_kept(tmp_path: Path, run_cli) -> None:
    """A consolidation mid-session (by hand, or for orphans) splits the session into batches; the batch
    after it may hold only the agent's final message. Rules: it becomes the body of the session's memory
    (not skipped as a batch "without edits")."""
    from tests.test_claude_hooks import local_memories

    root = make_repo(tmp_path / "project")
    commit(root, "init", {"work.py": WORK_PY})
    assert run_cli(root, "init", "--no-hooks")[0] == 0
    evs = events(root, 0, 3)  # prompt, edit, stop
    (root / "work.py").write_text(WORK_PY.replace("value = 0", f"value = 0  # {token(0, 1)}"))
    from gitmem.integrations.agents import claude as claude_hooks

    claude_hooks.handle(evs[0])
    claude_hooks.handle(evs[1])
    assert run_cli(root, "consolidate", "--no-llm")[0] == 0
    (first,) = local_memories(root)
    claude_hooks.handle({**evs[2], "last_assistant_message": "compute now caches its value."})
    assert run_cli(root, "consolidate", "--no-llm")[0] == 0
    (m,) = local_memories(root)
    assert m["id"] == first["id"] and m["body"] == "compute now caches its value."


# -- 4. two sessions repeating one memory at once ------------------------------------------------------


def _consolidate(root: str, session: str) -> None:
    from gitmem.capture.consolidate import consolidate_session
    from gitmem.git import Repo
    from gitmem.store import Store

    consolidate_session(Store(Repo(root)), session, wait=60)


def test_two_sessions_repeating_one_memory_both_strengthen_it(tmp_path: Path, run_cli, run_json) -> None:
    """Both sessions' model answers repeat the same memory, and the server holds each answer until both
    requests are in (so both consolidations have read the memories before either writes): the memory
    must end with both facts and two confidence steps, not one (a lost update)."""
    import threading

    from gitmem.capture.consolidate import CONFIDENCE_STEP
    from gitmem.integrations.agents import claude as claude_hooks

    text = "compute keeps a running value and adds x to it before returning"
    barrier = threading.Barrier(2, timeout=30)
    with chat_server() as server:
        root = llm_repo(tmp_path, run_cli, server)
        mid = run_json(root, "remember", text, "--anchor", "work.py::compute", "--local")["id"]
        before = run_json(root, "show", mid)

        def repeat(body: dict[str, Any]) -> dict[str, Any]:
            fact = "fact-" + TOKEN.findall(body["messages"][1]["content"])[0]
            barrier.wait()
            obs = [{"type": before["type"], "title": before["title"], "body": text, "facts": [fact],
                    "files": ["work.py"], "symbols": ["compute"]}]
            return {"content": json.dumps({"observations": obs})}

        server.respond = repeat
        for s in (1, 2):
            for ev in events(root, s, 4)[:-1]:
                claude_hooks.handle(ev)
        procs = [forked(_consolidate, str(root), f"sess-{s}") for s in (1, 2)]
        for p in procs:
            p.join(90)
            assert p.exitcode == 0
    after = run_json(root, "show", mid)
    assert sorted(f for f in after["facts"] if f.startswith("fact-")) == ["fact-q1x0000z", "fact-q2x0000z"]
    assert after["confidence"] == pytest.approx(min(1.0, before["confidence"] + 2 * CONFIDENCE_STEP))
