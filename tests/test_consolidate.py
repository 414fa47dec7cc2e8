"""Consolidation rules on real repositories: near duplicates, later batches of one session, orphaned spools."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from gitmem.anchors import Resolver
from gitmem.capture import spool
from gitmem.capture.consolidate import CONFIDENCE_STEP, Plan, digest, merge_into, near_duplicate, notable_commands
from gitmem.git import WORKTREE, Repo
from gitmem.memories import write as write_memories
from gitmem.model import Memory
from gitmem.store import Store, new_id
from testing.repos import commit, make_repo
from tests.test_claude_hooks import hook, local_memories, wait_for

CODE = "def parse(text):\n    return text.split(',')\n\n\ndef render(items):\n    return ','.join(items)\n"


def _repo(tmp_path: Path, run_cli) -> Path:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    return repo


def _memory(store: Store, title: str, body: str, *symbols: str, mtype: str = "decision",
            scope: str = "local") -> Memory:
    r = Resolver(store.repo)
    return Memory(id=new_id(), type=mtype, title=title, body=body, scope=scope, confidence=0.6,
                  anchors=[r.make("csvish.py", s, WORKTREE) for s in symbols])


def test_repeat_reinforces_rewrite_supersedes_other_is_new(tmp_path: Path, run_cli) -> None:
    store = Store(Repo(_repo(tmp_path, run_cli)))
    old = _memory(store, "parse splits on commas only", "quoted fields are not supported by parse", "parse")
    write_memories(store, [old])
    # the same observation again
    plan = Plan()
    merge_into(plan, _memory(store, "parse splits on commas only", "quoted fields are not supported by parse",
                             "parse"), [old])
    assert [m.id for m in plan.write] == [old.id] and plan.write[0].confidence == 0.6 + CONFIDENCE_STEP
    # a rewrite of it (same type, same anchor, overlapping words) supersedes, and the local original goes
    plan = Plan()
    new = _memory(store, "parse splits on commas and now handles quoted fields",
                  "quoted fields are supported by parse since the csv module is used", "parse")
    assert 0.3 <= near_duplicate(new, [old])[1] < 0.6
    merge_into(plan, new, [old])
    assert [m.id for m in plan.write] == [new.id] and new.supersedes == [old.id] and plan.delete == [old.id]
    # something else about another symbol is simply new
    plan = Plan()
    other = _memory(store, "render joins without escaping", "commas inside items break the output", "render")
    merge_into(plan, other, [old])
    assert [m.id for m in plan.write] == [other.id] and not other.supersedes and not plan.delete


def test_a_team_memory_is_superseded_not_deleted(tmp_path: Path, run_cli) -> None:
    store = Store(Repo(_repo(tmp_path, run_cli)))
    team = _memory(store, "parse splits on commas only", "quoted fields are not supported by parse", "parse",
                   scope="team")
    plan = Plan()
    new = _memory(store, "parse splits on commas and now handles quoted fields",
                  "quoted fields are supported by parse since the csv module is used", "parse")
    merge_into(plan, new, [team])
    assert new.supersedes == [team.id] and plan.delete == []


def test_later_batches_of_a_session_update_its_memory(tmp_path: Path, run_cli) -> None:
    repo = _repo(tmp_path, run_cli)
    base = {"session_id": "resumed", "cwd": str(repo)}
    path = str(repo / "csvish.py")
    hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": "Make parse strip spaces"}, repo)
    (repo / "csvish.py").write_text(CODE.replace("text.split(',')", "[t.strip() for t in text.split(',')]"))
    hook({**base, "hook_event_name": "PostToolUse", "tool_name": "Edit",
          "tool_input": {"file_path": path, "old_string": "text.split(',')",
                         "new_string": "[t.strip() for t in text.split(',')]"}}, repo)
    hook({**base, "hook_event_name": "Stop", "last_assistant_message": "parse strips spaces now."}, repo)
    assert run_cli(repo, "consolidate", "--no-llm")[0] == 0
    (first,) = local_memories(repo)
    assert [a["anchor"] for a in first["anchors"]] == ["csvish.py::parse"]
    # the session resumes and edits render too
    (repo / "csvish.py").write_text((repo / "csvish.py").read_text().replace("','.join(items)", "', '.join(items)"))
    hook({**base, "hook_event_name": "PostToolUse", "tool_name": "Edit",
          "tool_input": {"file_path": path, "old_string": "','.join(items)", "new_string": "', '.join(items)"}}, repo)
    hook({**base, "hook_event_name": "Stop", "last_assistant_message": "render adds a space too."}, repo)
    code, out, _ = run_cli(repo, "consolidate", "--session", "resumed", "--no-llm", "--json")
    assert code == 0 and json.loads(out)[0]["written"] == [first["id"]]
    (m,) = local_memories(repo)
    assert m["id"] == first["id"] and m["title"] == "Make parse strip spaces"
    assert [a["anchor"] for a in m["anchors"]] == ["csvish.py::parse", "csvish.py::render"]
    assert m["body"] == "render adds a space too."


def test_orphaned_spool_is_consolidated_by_the_next_session_start(tmp_path: Path, run_cli) -> None:
    repo = _repo(tmp_path, run_cli)
    path = str(repo / "csvish.py")
    (repo / "csvish.py").write_text(CODE.replace("text.split(',')", "text.split(';')"))
    hook({"session_id": "crashed", "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Edit",
          "tool_input": {"file_path": path, "old_string": "','", "new_string": "';'"}}, repo)
    live = spool.live_path(repo, "crashed")
    old = time.time() - 2 * 3600
    os.utime(live, (old, old))  # no SessionEnd came, two hours ago
    hook({"session_id": "next", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}, repo)
    assert wait_for(lambda: any(m["session"] == "crashed" for m in local_memories(repo)))
    assert wait_for(lambda: not live.exists())


def test_digest_and_notable_commands() -> None:
    d = digest("s", [{"event": "UserPromptSubmit", "prompt": "fix it"},
                     {"event": "PostToolUse", "tool": "Read", "input": {"file_path": "a.py"}},
                     {"event": "PostToolUse", "tool": "Bash", "input": {"command": "git status"}},
                     {"event": "PostToolUse", "tool": "Bash", "input": {"command": "pytest -q tests/x.py"}},
                     {"event": "PostToolUseFailure", "tool": "Bash", "input": {"command": "make"}, "error": "Exit 2"},
                     {"event": "Stop", "last_message": "done"}])
    assert d.prompts == ["fix it"] and d.read_files == ["a.py"] and d.last_message == "done"
    assert d.worth_recording and not d.edited_files
    assert notable_commands(d.commands) == ["pytest -q tests/x.py"]
    assert not digest("s", [{"event": "PostToolUse", "tool": "Read", "input": {"file_path": "a.py"}}]).worth_recording


def test_worker_prunes_leftovers_but_not_live_data(tmp_path: Path, run_cli) -> None:
    from gitmem.capture.worker import prune_sessions

    repo = _repo(tmp_path, run_cli)
    from gitmem import layout

    lay = layout.of(repo)
    old = time.time() - 30 * 86_400
    stale = [lay.team_memories_dir / ".01ABC.md.x1.tmp", lay.sessions_dir / "gone.given",
             lay.spool_dir / "done.lock"]
    keep = [lay.spool_dir / "open.jsonl", lay.spool_dir / "open.lock", lay.sessions_dir / "recent.given"]
    for p in stale + keep:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
    for p in stale + keep[:2]:
        os.utime(p, (old, old))
    prune_sessions(repo)
    assert [p.exists() for p in stale] == [False] * 3 and [p.exists() for p in keep] == [True] * 3
