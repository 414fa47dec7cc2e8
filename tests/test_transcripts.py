"""Capture that loses nothing for Codex, Gemini and Copilot: the spool reconciled with each agent's real transcript.

Each agent's fixtures are one real session, recorded offline from the pinned CLI (codex-cli 0.169.0,
Gemini CLI 0.61.0, Copilot CLI 1.0.102; scripted model: read src/client.py, edit fetch(), run ``git diff
--stat``, answer): ``hooks-<version>.jsonl`` holds every hook input in the order the CLI ran them (``event``:
the hook's event argument, ``input``: what it got on stdin), ``transcript-<version>.jsonl`` the agent's own
transcript of that session (trimmed). Here the hooks run as real processes on a real repository, some of
them lost as a headless run loses them, the transcript sits in the agent's own folder, and the real
consolidation (rules, no model) runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem import layout
from gitmem.git import Repo
from gitmem.integrations.agents import capture
from gitmem.store import Store
from testing.repos import commit, make_repo
from tests.test_claude_hooks import local_memories, spool_empty, wait_for
from tests.test_codex_hooks import REAL_CLIENT_PY

FIXTURES = Path(__file__).resolve().parent / "fixtures"
VERSIONS = {"codex": "0.169.0", "gemini": "0.61.0", "copilot": "1.0.102"}
#: The agent's home variable and, under it, the folder the recorded paths name as ``/home/dev/<…>``.
HOMES = {"codex": ("CODEX_HOME", "/home/dev/.codex", ""), "gemini": ("GEMINI_CLI_HOME", "/home/dev/.gemini", ".gemini"),
         "copilot": ("COPILOT_HOME", "/home/dev/.copilot", "")}
#: The post-tool event of the edit (agent's event name, tool name).
EDIT = {"codex": ("PostToolUse", "apply_patch"), "gemini": ("AfterTool", "replace"), "copilot": ("postToolUse", "edit")}
STOP = {"codex": "Stop", "gemini": "AfterAgent", "copilot": "agentStop"}
END = {"codex": "SessionEnd", "gemini": "SessionEnd", "copilot": "sessionEnd"}
PROMPT = "Add retry with exponential backoff to fetch() in src/client.py"
FINAL = "Added `_get_with_retry`; fetch() uses it."
AGENTS = sorted(VERSIONS)


class Session:
    """One recorded session, re-rooted in ``repo`` and the agent's home under ``tmp_path``."""

    def __init__(self, agent: str, repo: Path, home: Path) -> None:
        self.agent, self.repo = agent, repo
        var, recorded, sub = HOMES[agent]
        text = (FIXTURES / agent / f"hooks-{VERSIONS[agent]}.jsonl").read_text()
        self.subst = [("/home/dev/project", str(repo)), (recorded, str(home / sub) if sub else str(home))]
        self.hooks = [json.loads(ln) for ln in self._rooted(text).splitlines()]
        inputs = [h["input"] for h in self.hooks]
        self.transcript = next(p for i in inputs if (p := i.get("transcript_path") or i.get("transcriptPath")))
        self.session = next(str(i.get("session_id") or i.get("sessionId")) for i in inputs)
        Path(self.transcript).parent.mkdir(parents=True, exist_ok=True)
        Path(self.transcript).write_text(self._rooted(
            (FIXTURES / agent / f"transcript-{VERSIONS[agent]}.jsonl").read_text()))

    def _rooted(self, text: str) -> str:
        for a, b in self.subst:
            text = text.replace(json.dumps(a)[1:-1], json.dumps(b)[1:-1])
        return text

    def is_edit(self, h: dict[str, Any]) -> bool:
        event, tool = EDIT[self.agent]
        return bool(h["event"] == event and tool in (h["input"].get("tool_name"), h["input"].get("toolName")))

    def run(self, h: dict[str, Any]) -> None:
        """Run the hook as the CLI does (its adapter's entry point, as a process)."""
        proc = subprocess.run([sys.executable, "-m", f"gitmem.integrations.agents.{self.agent}", h["event"]],
                              input=json.dumps(h["input"]).encode(), cwd=self.repo, capture_output=True,
                              env=dict(os.environ), timeout=60)
        assert proc.returncode == 0, proc.stderr.decode()

    def replay(self, *, edit: bool = True, stop: bool = True, end: bool = True) -> None:
        """Every recorded hook, in order; the edit's post-tool hook, the stop hook or the end hook lost when
        told. The edit itself is made to the file when its hook would have run."""
        for h in self.hooks:
            if self.is_edit(h):
                (self.repo / "src" / "client.py").write_text(
                    REAL_CLIENT_PY.replace("requests.get(", "_get_with_retry("))
                if not edit:
                    continue
            if (h["event"] == STOP[self.agent] and not stop) or (h["event"] == END[self.agent] and not end):
                continue
            self.run(h)

    def edit_hook(self) -> dict[str, Any]:
        return next(h for h in self.hooks if self.is_edit(h))

    def spool_end(self, transcript: str | None = None) -> None:
        """The SessionEnd record the end hook spools (naming the transcript), without its detached consolidation
        (the test consolidates in-process)."""
        capture.spool_record(self.repo, self.session, "SessionEnd", {
            "reason": "other", "agent": self.agent, "transcript": transcript or self.transcript,
            "cwd": str(self.repo)})


@pytest.fixture
def repo(tmp_path: Path, run_cli: Any) -> Path:
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": REAL_CLIENT_PY, "src/other.py": "def other():\n    return 1\n"})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    return r


def session(agent: str, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Session:
    home = tmp_path / f"{agent}-home"
    monkeypatch.setenv(HOMES[agent][0], str(home))
    return Session(agent, repo, home)


def consolidate(repo: Path, key: str) -> Any:
    from gitmem.capture.consolidate import consolidate_session

    return consolidate_session(Store(Repo(repo)), key, use_llm=False)


def consolidate_log(repo: Path) -> str:
    """The detached consolidations' log ("" before the first writes it, after its memories)."""
    try:
        return (layout.of(repo).logs_dir / "consolidate.log").read_text()
    except FileNotFoundError:
        return ""


def spooled(repo: Path) -> list[dict[str, Any]]:
    folder = layout.of(repo).spool_dir
    return [json.loads(ln) for p in sorted(folder.glob("*.jsonl")) for ln in p.read_text().splitlines()]


# -- the fixtures are what the readers expect ------------------------------------------------------


@pytest.mark.parametrize("agent", AGENTS)
def test_the_reader_finds_every_call_of_the_recorded_transcript(agent: str, repo: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.integrations.agents import reconcile

    s = session(agent, repo, tmp_path, monkeypatch)
    reader, folders = reconcile.READERS[agent]
    lines = reconcile.read_transcript(s.transcript, (), folders(os.environ))
    assert lines is not None
    tools, final = reader(reconcile.objects(lines), s.session, str(repo))
    assert final == FINAL
    assert [t.kind for t in tools] == ["shell" if agent == "codex" else "read", "edit", "shell"]
    edit = capture.tool_record(tools[1], repo)
    assert edit["input"]["file_path"] == "src/client.py"
    assert edit["input"]["old_string"] == "    resp = requests.get(url, timeout=10)\n"
    assert edit["input"]["new_string"] == "    resp = _get_with_retry(url, timeout=10)\n"


# (a) a lost edit hook ---------------------------------------------------------------------------


@pytest.mark.parametrize("agent", AGENTS)
def test_lost_edit_hook_still_yields_the_memory_of_the_edit(agent: str, repo: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The edit's post-tool hook never ran; the stop and end hooks run as recorded (their detached
    consolidations reconcile the spool with the transcript). Copilot's agentStop carries no final message:
    the memory's body comes from the transcript."""
    s = session(agent, repo, tmp_path, monkeypatch)
    s.replay(edit=False)
    assert wait_for(lambda: "reconciled with the transcript" in consolidate_log(repo) and spool_empty(repo),
                    timeout=60), consolidate_log(repo)
    (m,) = local_memories(repo)
    assert m["title"] == PROMPT and m["body"] == FINAL
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]


# (b) no stop record -----------------------------------------------------------------------------


@pytest.mark.parametrize("agent", AGENTS)
def test_without_a_stop_record_the_body_is_the_transcripts_final_message(agent: str, repo: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Every tool hook ran: the reconciliation adds exactly one record, the final message (each call the
    hooks spooled is recognised, also by content where the agent gives no id)."""
    s = session(agent, repo, tmp_path, monkeypatch)
    s.replay(stop=False, end=False)
    s.spool_end()
    out = consolidate(repo, s.session)
    (m,) = local_memories(repo)
    assert out.written == [m["id"]] and m["body"] == FINAL
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"]
    assert "reconciled with the transcript: 1 event added" in out.notes


# (c) reruns and late hooks ----------------------------------------------------------------------


@pytest.mark.parametrize("agent", AGENTS)
def test_late_hooks_and_reruns_add_nothing_twice(agent: str, repo: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    s = session(agent, repo, tmp_path, monkeypatch)
    s.replay(edit=False, stop=False, end=False)
    s.spool_end()
    first = consolidate(repo, s.session)
    assert "reconciled with the transcript: 2 events added" in first.notes  # the edit and the final message
    (m,) = local_memories(repo)
    assert [a["anchor"] for a in m["anchors"]] == ["src/client.py::fetch"] and m["body"] == FINAL
    folder = layout.of(repo).local_memories_dir
    before = {p.name: p.read_bytes() for p in folder.glob("*.md")}
    # the edit's hook was only slow: it lands after the reconciliation added the edit
    s.run(s.edit_hook())
    assert [r["event"] for r in spooled(repo)] == ["PostToolUse"]
    second = consolidate(repo, s.session)
    assert second.written == [] and second.events == 0 and spool_empty(repo)
    # the session ended again (resumed, or the end hook after the stop hook): nothing new in the transcript
    s.spool_end()
    third = consolidate(repo, s.session)
    assert third.written == [] and not any("reconciled" in n for n in third.notes)
    assert {p.name: p.read_bytes() for p in folder.glob("*.md")} == before


@pytest.mark.parametrize("agent", ["gemini", "copilot"])
def test_a_repeated_call_without_an_id_is_kept_each_time(agent: str, repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The same tool and input twice (a command run again after a fix) are two calls, not a duplicate: the
    hooks number them by content (``c:<digest>.0``, ``.1``), as the reconciliation numbers the transcript's."""
    s = session(agent, repo, tmp_path, monkeypatch)
    shell = next(h for h in s.hooks if h["event"] in ("AfterTool", "postToolUse")
                 and (h["input"].get("tool_name") or h["input"].get("toolName")) in ("run_shell_command", "bash"))
    s.run(shell)
    s.run(shell)
    ids = [r["id"] for r in spooled(repo) if r["event"] == "PostToolUse"]
    assert len(ids) == 2 and ids[0].endswith(".0") and ids[1] == ids[0][:-2] + ".1"
    s.spool_end()
    out = consolidate(repo, s.session)
    assert out.events == 2 + 1 + 2 + 1  # the two shell calls, the end, the read and edit and final message added


# (d) a bad transcript ---------------------------------------------------------------------------


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("kind", ["outside", "symlink", "garbage", "missing", "other-agent"])
def test_a_bad_transcript_leaves_the_spool_alone(agent: str, kind: str, repo: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    s = session(agent, repo, tmp_path, monkeypatch)
    path = s.transcript
    if kind == "outside":  # the real transcript, moved out of the agent's folder
        path = str(tmp_path / "elsewhere.jsonl")
        os.replace(s.transcript, path)
    elif kind == "symlink":  # a link in the agent's folder to a file outside it
        os.replace(s.transcript, tmp_path / "elsewhere.jsonl")
        os.symlink(tmp_path / "elsewhere.jsonl", s.transcript)
    elif kind == "garbage":
        Path(path).write_bytes(b"\x00\xff not json\n[1, 2]\n{\"type\": \"response_item\", \"payload\": 3}\n"
                               b"{\"type\": \"tool.execution_complete\", \"data\": []}\n{\"$set\": 1}\n" * 500)
    elif kind == "missing":
        os.unlink(path)
    s.replay(edit=False, stop=False, end=False)
    records = spooled(repo)
    if kind == "other-agent":
        capture.spool_record(repo, s.session, "SessionEnd", {
            "reason": "other", "agent": "claude", "transcript": path,  # outside Claude Code's folders
            "cwd": str(repo)})
    else:
        s.spool_end(path)
    out = consolidate(repo, s.session)
    assert not any("reconciled" in n for n in out.notes), out.notes
    assert out.events == len(records) + 1 and spool_empty(repo)  # the hooks' records and the end, nothing else


# -- for the real-CLI tests: a post-tool hook that is lost ------------------------------------------


def lose_post_tool_hook(settings: Path, event: str, match: str) -> None:
    """Make gitmem's ``event`` handlers in the agent's hook file ``settings`` drop, unrun, every input containing
    ``match`` (a fixed string): the capture of that tool call is lost, as when a headless run ends first."""
    import shlex

    def wrap(obj: Any) -> None:
        items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
        for k, v in list(items):
            if isinstance(v, str) and v.startswith(": gitmem") and f" {event};" in v:
                obj[k] = (f'f=$(mktemp); cat > "$f"; if grep -qF {shlex.quote(match)} "$f"; then rm -f "$f"; exit 0; '
                          f'fi; sh -c {shlex.quote(v)} < "$f"; rc=$?; rm -f "$f"; exit $rc')
            else:
                wrap(v)

    data = json.loads(settings.read_text())
    wrap(data)
    assert event in json.dumps(data) and "grep -qF" in json.dumps(data)
    settings.write_text(json.dumps(data, indent=2))
