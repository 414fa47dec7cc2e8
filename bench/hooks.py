"""Hook latency benchmark: whole-process time of each agent adapter's hooks, as each agent runs them.

Builds (once, cached under ``--work``) a copy of a real repository with N
generated memories (default 10,000) anchored to its real symbols, then runs
each adapter's console script — a new process per call, the event JSON on
stdin, the event name as argument where the agent passes one — for each of its
events, interleaved round-robin with ``python -c pass`` so that all see the
same machine load. Each call uses a new session id (so nothing is skipped as
"already given") and a real file of the repository.

Adapters (``ADAPTERS``: one entry each): Claude Code, Codex CLI, Gemini CLI,
GitHub Copilot CLI, Cursor, OpenCode, and VS Code's agent mode (its input through
the Claude Code entry point). Each has four events, in the agent's own names and shapes: a
tool call captured (``capture``), a file's memories (``file``: before an edit,
or for Gemini with a read's result), a prompt's (``prompt``), and the session
start (``start``). Where the adapter has them, two more (issue 15): before a shell command that runs an
anchored file (``shell``: Claude Code's and Codex's PreToolUse ``Bash``) and after a failed one whose
traceback names an anchored symbol (``failure``: Claude Code's PostToolUseFailure, Gemini CLI's AfterTool
with an error); their ``× bar`` column is their median over the same adapter's ``file`` (before a tool)
and ``capture`` (after one) medians: the bar is "no slower than today's PreToolUse / PostToolUse".

Reports per adapter and event: median, p90 and max wall time (ms) over
``--runs`` runs (default 25), the median's ratio to the median of ``python -c
pass`` measured in the same run, and to Claude Code's median for the same kind
of event (the issue's bar: no adapter slower than Claude Code's hooks), and in how many runs the hook
printed context (so the rows compare hooks that did the same work).
Targets (issue 3): capture ≤ 60 ms, file ≤ 150 ms, prompt ≤ 300 ms, start ≤ 1 s.

These rounds run cold, as every hook ran before the warm process: ``GITMEM_NO_DAEMON=1``, so no
session start spawns one and the prompt hook ranks by BM25 alone. Then (unless ``--no-warm``) the
prompt events run again warm (``prompt-warm``): this worktree's warm process is started and waited
for until it answers a search (its index built), the prompt hooks then get vectors from it
(issue 13: within 6× ``python -c pass``); rounds of ``python -c pass`` and every adapter's prompt
event, and the warm rows' ratios are to that phase's ``python -c pass``. ``vectors`` counts the warm
calls the warm process answered in time (the others fell back to BM25: ``<logs>/daemon.log`` says
why). The warm process is stopped at the end.

    python bench/hooks.py [--repo PATH] [--memories 10000] [--runs 25] [--work DIR] [--json]
        [--adapters claude,codex,...] [--also LABEL=EXECUTABLE ...] [--no-warm] [--personal N]

``--personal N`` (issue 21) also times Claude Code's hooks with a personal repository of N memories (row ``claude
[personal N]``: ``GITMEM_PERSONAL_DIR`` pointed at it, built once under ``--work``); every other row runs with
``GITMEM_PERSONAL_DIR`` pointed at a folder that does not exist (the user's own personal repository never counts),
so the plain rows are "no personal repository".

``--also`` times another build's ``gitmem-hook`` in the same rounds (side by side, e.g. the
commit before a change: a script that puts that checkout first on ``sys.path`` and calls its
entry point) for the adapters served by ``gitmem-hook``; its rows are labelled ``ADAPTER [LABEL]``.
An adapter whose script is not installed is left out (with a note).

The repository (default: this one) is copied with ``git clone`` (its history
is needed for anchors) and never modified.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

#: Kinds of event timed for every adapter, with their targets (ms).
TARGETS_MS = {"capture": 60, "file": 150, "prompt": 300, "start": 1000}
#: Kinds timed where the adapter has them (issue 15): before a shell command (``shell``: a command running an
#: anchored file), after a failed one (``failure``: a traceback naming an anchored symbol and an exception);
#: the bar is the adapter's own ``file`` (before a tool) and ``capture`` (after one) events: ``BAR``.
ACTION_TARGETS_MS = {"shell": 150, "failure": 150}
BAR = {"shell": "file", "failure": "capture"}
#: The prompt event with the warm process up (its template is the adapter's ``prompt``), and its target.
WARM = "prompt-warm"
WARM_TARGET_MS = 300
#: The environment of the cold rounds: no warm process is used or started (``gitmem.daemon.client``).
NO_DAEMON_ENV = "GITMEM_NO_DAEMON"
WORDS = ("cache retry timeout parser config index token budget anchor session commit merge branch "
         "schema migration lock queue worker fingerprint symbol rename spool redact gateway").split()


def clone_with_anchors(repo: Path, target: Path, skip) -> tuple:
    """``git clone`` ``repo`` into ``target``, ``gitmem init`` it; returns (Repo, Store, anchors): up to 40
    symbols of each Python/JS/TS/Go/Rust/Java file at HEAD (paths where ``skip(path)`` left out)."""
    from gitmem.anchors import Resolver
    from gitmem.git import WORKTREE, Repo
    from gitmem.store import Store, init_layout

    subprocess.run(["git", "clone", "-q", str(repo), str(target)], check=True)
    r = Repo(target)
    init_layout(r)
    resolver = Resolver(r)
    anchors = []
    for path in r.files_at(r.head()):
        if not path.endswith((".py", ".js", ".ts", ".go", ".rs", ".java")) or skip(path):
            continue
        for name in list(resolver.table(WORKTREE, path) or {})[:40]:
            if "#" not in name:
                anchors.append(resolver.make(path, name, WORKTREE))
    return r, Store(r), anchors


def build(repo: Path, work: Path, n: int, seed: int = 1) -> Path:
    """Clone ``repo`` into ``work`` and write ``n`` memories anchored to its symbols (skipped if done)."""
    from gitmem.catalog.sync import sync_hook_index
    from gitmem.git import Repo
    from gitmem.infra import utc_now
    from gitmem.memfile import write
    from gitmem.model import Memory
    from gitmem.store import Store, new_id

    target = work / f"repo-{n}"
    done = target / ".git" / "bench-ready"
    if done.exists():
        store = Store(Repo(target))
        store.enable_symbol_cache()
        sync_hook_index(store)  # current before timing (a new gitmem version may have changed its schema)
        return target
    if target.exists():
        shutil.rmtree(target)
    r, store, anchors = clone_with_anchors(repo, target, lambda p: p.startswith("tests/fixtures"))
    rnd = random.Random(seed)
    print(f"{len(anchors)} symbols to anchor to; writing {n} memories", file=sys.stderr)
    now = utc_now()
    for i in range(n):
        a = rnd.choice(anchors)
        words = " ".join(rnd.choice(WORDS) for _ in range(30))
        m = Memory(id=new_id(), type=rnd.choice(("decision", "gotcha", "constraint", "discovery", "change")),
                   title=f"{a.symbol}: {' '.join(rnd.choice(WORDS) for _ in range(6))} #{i}", body=words,
                   anchors=[a], author="bench", source="user", created=now, updated=now)
        write(store.path_for(m), m)
    t = time.perf_counter()
    store.enable_symbol_cache()
    sync_hook_index(store)
    print(f"hook index built in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    done.write_text("ok")
    return target


def build_personal(work: Path, n: int, seed: int = 3) -> Path:
    """A personal repository of ``n`` memories (types, tags and words drawn like ``build``'s; no anchors) at
    ``work/personal-N``, committed, its catalog built (skipped if done)."""
    from gitmem import layout
    from gitmem.catalog.sync import sync_hook_index
    from gitmem.infra import utc_now
    from gitmem.memfile import write
    from gitmem.model import Memory
    from gitmem.ops import personal
    from gitmem.store import new_id

    target = work / f"personal-{n}"
    done = target / ".git" / "bench-ready"
    old = os.environ.get(layout.PERSONAL_DIR_ENV)
    os.environ[layout.PERSONAL_DIR_ENV] = str(target)
    try:
        if not done.exists():
            if target.exists():
                shutil.rmtree(target)
            personal.init()
            store = personal.open_store()
            rnd = random.Random(seed)
            now = utc_now()
            for i in range(n):
                m = Memory(id=new_id(), type=rnd.choice(("preference", "gotcha", "constraint", "discovery")),
                           title=f"{' '.join(rnd.choice(WORDS) for _ in range(6))} #{i}",
                           body=" ".join(rnd.choice(WORDS) for _ in range(30)), tags=[rnd.choice(WORDS)],
                           author="bench", source="user", created=now, updated=now)
                write(store.path_for(m), m)
            store.repo.commit_paths([layout.GITMEM_DIR], "bench: personal memories")
            done.write_text("ok")
        store = personal.open_store()
        sync_hook_index(store)
    finally:
        if old is None:
            os.environ.pop(layout.PERSONAL_DIR_ENV, None)
        else:
            os.environ[layout.PERSONAL_DIR_ENV] = old
    return target


# -- the adapters: each agent's events, as data ------------------------------------------------------------
#
# A template's string values that are exactly a placeholder (``$path``, ``$rel``, ``$old``, ``$new``,
# ``$text``, ``$patch``, ``$session``, ``$prompt``, ``$cwd``, ``$now``) are replaced per call (``fill``).

_COMMON = {"session_id": "$session", "transcript_path": "", "cwd": "$cwd"}
_VSCODE = {"timestamp": "$now", "session_id": "$session", "transcript_path": "", "cwd": "$cwd"}
_COPILOT = {"sessionId": "$session", "timestamp": 1796164934505, "cwd": "$cwd"}
_CURSOR = {"conversation_id": "$session", "generation_id": "$session", "model": "claude-4.5-sonnet",
           "cursor_version": "2.4.21", "workspace_roots": ["$cwd"], "user_email": "dev@example.com",
           "transcript_path": None}


class Adapter:
    """One agent's hooks: its console ``script`` and, per kind (``TARGETS_MS``), (event argument or None, the
    event JSON template). Its events are the shapes the adapter's tests replay (``tests/fixtures/<agent>/``)."""

    def __init__(self, name: str, script: str, events: dict[str, tuple[str | None, dict]]) -> None:
        assert set(TARGETS_MS) <= set(events) <= set(TARGETS_MS) | set(ACTION_TARGETS_MS), name
        self.name, self.script, self.events = name, script, events


ADAPTERS = (
    Adapter("claude", "gitmem-hook", {
        "capture": (None, {**_COMMON, "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_use_id": "$session",
                           "tool_input": {"file_path": "$path", "old_string": "$old", "new_string": "$new"},
                           "tool_response": {"filePath": "$path", "originalFile": "$text", "structuredPatch": []}}),
        "file": (None, {**_COMMON, "hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_use_id": "$session",
                        "tool_input": {"file_path": "$path", "old_string": "$old", "new_string": "$old"}}),
        "prompt": (None, {**_COMMON, "hook_event_name": "UserPromptSubmit", "prompt": "$prompt"}),
        "start": (None, {**_COMMON, "hook_event_name": "SessionStart", "source": "startup"}),
        "shell": (None, {**_COMMON, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "$session",
                         "tool_input": {"command": "$shell", "description": "run"}}),
        "failure": (None, {**_COMMON, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                           "tool_use_id": "$session", "tool_input": {"command": "$shell"}, "error": "$failure"})}),
    Adapter("codex", "gitmem-codex-hook", {
        "capture": (None, {**_COMMON, "hook_event_name": "PostToolUse", "model": "gpt-5.5", "tool_name": "apply_patch",
                           "tool_use_id": "$session", "tool_input": {"command": "$patch"},
                           "tool_response": "Success."}),
        "file": (None, {**_COMMON, "hook_event_name": "PreToolUse", "model": "gpt-5.5", "tool_name": "apply_patch",
                        "tool_use_id": "$session", "tool_input": {"command": "$patch"}}),
        "prompt": (None, {**_COMMON, "hook_event_name": "UserPromptSubmit", "model": "gpt-5.5", "prompt": "$prompt"}),
        "start": (None, {**_COMMON, "hook_event_name": "SessionStart", "model": "gpt-5.5", "source": "startup"}),
        "shell": (None, {**_COMMON, "hook_event_name": "PreToolUse", "model": "gpt-5.5", "tool_name": "Bash",
                         "tool_use_id": "$session", "tool_input": {"command": "$shell"}})}),
    Adapter("gemini", "gitmem-gemini-hook", {
        "capture": (None, {**_COMMON, "timestamp": "$now", "hook_event_name": "AfterTool", "tool_name": "replace",
                           "tool_input": {"file_path": "$rel", "old_string": "$old", "new_string": "$new"},
                           "tool_response": {"llmContent": "Successfully modified file.", "returnDisplay": ""}}),
        "file": (None, {**_COMMON, "timestamp": "$now", "hook_event_name": "AfterTool", "tool_name": "read_file",
                        "tool_input": {"file_path": "$rel"},
                        "tool_response": {"llmContent": "$text", "returnDisplay": ""}}),
        "prompt": (None, {**_COMMON, "timestamp": "$now", "hook_event_name": "BeforeAgent", "prompt": "$prompt"}),
        "start": (None, {**_COMMON, "timestamp": "$now", "hook_event_name": "SessionStart", "source": "startup"}),
        "failure": (None, {**_COMMON, "timestamp": "$now", "hook_event_name": "AfterTool",
                           "tool_name": "run_shell_command", "tool_input": {"command": "$shell"},
                           "tool_response": {"llmContent": "$failure", "returnDisplay": "$failure",
                                             "error": {"message": "$failure"}}})}),
    Adapter("copilot", "gitmem-copilot-hook", {
        "capture": ("postToolUse", {**_COPILOT, "toolName": "edit",
                                    "toolArgs": {"path": "$path", "old_str": "$old", "new_str": "$new"},
                                    "toolResult": {"resultType": "success", "textResultForLlm": "File updated."}}),
        "file": ("preToolUse", {**_COPILOT, "toolName": "edit",
                                "toolArgs": {"path": "$path", "old_str": "$old", "new_str": "$old"}}),
        "prompt": ("userPromptSubmitted", {**_COPILOT, "prompt": "$prompt"}),
        "start": ("sessionStart", {**_COPILOT, "source": "new", "initialPrompt": "$prompt"})}),
    Adapter("vscode", "gitmem-hook", {  # VS Code's agent mode runs the Claude Code hooks with its own input
        "capture": (None, {**_VSCODE, "hook_event_name": "PostToolUse", "tool_name": "replace_string_in_file",
                           "tool_use_id": "$session", "tool_response": "The following files were successfully edited",
                           "tool_input": {"filePath": "$path", "oldString": "$old", "newString": "$new"}}),
        "file": (None, {**_VSCODE, "hook_event_name": "PreToolUse", "tool_name": "replace_string_in_file",
                        "tool_use_id": "$session", "tool_input": {"filePath": "$path", "oldString": "$old",
                                                                  "newString": "$old"}}),
        "prompt": (None, {**_VSCODE, "hook_event_name": "UserPromptSubmit", "prompt": "$prompt"}),
        "start": (None, {**_VSCODE, "hook_event_name": "SessionStart", "source": "new"})}),
    # Cursor takes context only at sessionStart and postToolUse: a file's memories come after its Read; a
    # prompt's are held for the turn's first tool result (beforeSubmitPrompt prints nothing).
    Adapter("cursor", "gitmem-cursor-hook", {
        "capture": (None, {**_CURSOR, "hook_event_name": "afterFileEdit", "file_path": "$path",
                           "edits": [{"old_string": "$old", "new_string": "$new"}]}),
        "file": (None, {**_CURSOR, "hook_event_name": "postToolUse", "tool_name": "Read", "tool_use_id": "$session",
                        "tool_input": {"file_path": "$path"}, "tool_output": "$text", "duration": 3}),
        "prompt": (None, {**_CURSOR, "hook_event_name": "beforeSubmitPrompt", "prompt": "$prompt", "attachments": []}),
        "start": (None, {**_CURSOR, "hook_event_name": "sessionStart", "session_id": "$session",
                         "is_background_agent": False, "composer_mode": "agent"})}),
    # OpenCode: what its plugin (resources/opencode-plugin.js) sends for each of its hooks.
    Adapter("opencode", "gitmem-opencode-hook", {
        "capture": ("tool.execute.after", {"cwd": "$cwd", "input": {
            "tool": "edit", "sessionID": "$session", "callID": "$session",
            "args": {"filePath": "$path", "oldString": "$old", "newString": "$new"}},
            "output": {"title": "$rel", "output": "Edit applied successfully.", "metadata": {}}}),
        "file": ("tool.execute.before", {"cwd": "$cwd", "input": {"tool": "edit", "sessionID": "$session",
                                                                  "callID": "$session"},
                                         "output": {"args": {"filePath": "$path", "oldString": "$old",
                                                             "newString": "$old"}}}),
        "prompt": ("chat.message", {"cwd": "$cwd", "input": {"sessionID": "$session"},
                                    "output": {"parts": [{"type": "text", "text": "$prompt"}]}}),
        "start": ("session.start", {"cwd": "$cwd", "input": {"sessionID": "$session", "source": "startup"},
                                    "output": {}})}),
)


def fill(template: object, values: dict[str, str]) -> object:
    """``template`` with every string value that is exactly a placeholder replaced by its value."""
    if isinstance(template, dict):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    return values.get(template, template) if isinstance(template, str) else template


def round_values(root: Path, rnd: random.Random) -> dict[str, str]:
    """The placeholders of one round: a random anchored file of ``root``, a line of it, a new session id."""
    from gitmem.catalog import db as catalog_db

    con = catalog_db.connect(root)
    assert con is not None
    paths = sorted(p for p in catalog_db.anchored_paths(con) if (root / p).is_file() and p.endswith(".py"))
    rel = rnd.choice(paths)
    symbols = [r[0] for r in con.execute("SELECT DISTINCT symbol FROM anchors WHERE path = ? AND symbol IS NOT NULL",
                                         (rel,))] or ["main"]
    con.close()
    symbol = rnd.choice(sorted(symbols))
    path = str(root / rel)
    text = Path(path).read_text(errors="replace")
    old = next((ln for ln in text.splitlines() if len(ln.strip()) > 20), text[:40].splitlines()[0])
    return {"$path": path, "$rel": rel, "$text": text, "$old": old, "$new": old + "  # x",
            "$patch": f"*** Begin Patch\n*** Update File: {rel}\n@@\n-{old}\n+{old}  # x\n*** End Patch\n",
            "$session": f"bench-{rnd.getrandbits(64):x}", "$cwd": str(root),
            "$shell": f"python {rel} --dry-run",
            "$failure": (f"Exit code 1\nTraceback (most recent call last):\n  File \"{path}\", line 3, in "
                         f"{symbol.rsplit('.', 1)[-1]}\nKeyError: '{rnd.choice(WORDS)}_{rnd.choice(WORDS)}'\n"),
            "$now": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            "$prompt": f"Why does the {rnd.choice(WORDS)} {rnd.choice(WORDS)} in {Path(path).name} fail after "
                       f"the last commit?"}


def timed(argv: list[str], stdin: bytes, cwd: Path, env: dict[str, str] | None = None) -> tuple[float, bool]:
    """(wall time in ms, whether it printed anything) of running ``argv`` with ``stdin`` in ``cwd``."""
    t = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, cwd=cwd, capture_output=True, env=env)
    dt = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{argv} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return dt * 1000, bool(proc.stdout.strip())


def start_warm(root: Path) -> float:
    """Start ``root``'s warm process and wait until it answers a search (the first one builds its index);
    returns the seconds that took. Raises SystemExit when it does not answer within 15 minutes."""
    from gitmem import layout
    from gitmem.daemon import client

    lay = layout.of(root)
    t = time.perf_counter()
    client.ensure_started(lay)
    deadline = time.monotonic() + 900
    while client.request(lay, "search", {"query": "cache retry", "limit": 5}, timeout_s=600, start=False) is None:
        if time.monotonic() > deadline:
            raise SystemExit(f"the warm process of {root} did not answer: see {lay.log_file(client.LOG_NAME)}")
        time.sleep(0.5)
    return time.perf_counter() - t


def stop_warm(root: Path) -> None:
    """Stop ``root``'s warm process and wait until it is gone."""
    from gitmem import layout
    from gitmem.daemon import client

    lay = layout.of(root)
    client.stop(lay)
    deadline = time.monotonic() + 60
    while client.running(lay) and time.monotonic() < deadline:
        time.sleep(0.1)


def fallbacks(root: Path) -> int:
    """Lines of ``daemon.log`` where a client's search got no usable answer (each prompt hook that fell back)."""
    from gitmem import layout
    from gitmem.daemon import client

    try:
        text = layout.of(root).log_file(client.LOG_NAME).read_text(errors="replace")
    except OSError:
        return 0
    return sum(1 for ln in text.splitlines() if "client search:" in ln)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=HERE.parent)
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--work", type=Path, default=Path("/tmp/gitmem-bench-hooks"))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--adapters", default=",".join(a.name for a in ADAPTERS),
                    help="comma-separated adapter names (default: all)")
    ap.add_argument("--also", action="append", default=[], metavar="LABEL=EXECUTABLE",
                    help="time this gitmem-hook too, in the same rounds")
    ap.add_argument("--no-warm", action="store_true", help="skip the prompt events with the warm process up")
    ap.add_argument("--personal", type=int, default=0, metavar="N",
                    help="also time Claude Code's hooks with a personal repository of N memories")
    args = ap.parse_args()
    os.environ.pop(NO_DAEMON_ENV, None)  # the bench chooses per call
    args.work.mkdir(parents=True, exist_ok=True)
    from gitmem.layout import PERSONAL_DIR_ENV

    os.environ[PERSONAL_DIR_ENV] = str(args.work / "no-personal-repository")  # never the user's own
    personal_env = {PERSONAL_DIR_ENV: str(build_personal(args.work, args.personal))} if args.personal else {}
    cold_env = {**os.environ, NO_DAEMON_ENV: "1"}
    root = build(args.repo.resolve(), args.work, args.memories)
    # bytecode, as `pip install` writes it (an editable install under PYTHONDONTWRITEBYTECODE=1 has none,
    # and every hook would then compile gitmem's sources: ~10 ms more per module)
    import compileall

    import gitmem

    compileall.compile_dir(str(Path(gitmem.__file__).parent), quiet=1)
    wanted = set(args.adapters.split(","))
    # (row label, adapter, executable)
    runs: list[tuple[str, Adapter, str]] = []
    for a in ADAPTERS:
        if a.name not in wanted:
            continue
        exe = shutil.which(a.script, path=str(Path(sys.executable).parent)) or shutil.which(a.script)
        if not exe:
            print(f"note: {a.script} is not installed: {a.name} left out", file=sys.stderr)
            continue
        runs.append((a.name, a, exe))
        if a.name == "claude" and personal_env:
            runs.append((f"claude [personal {args.personal}]", a, exe))
        if a.script == "gitmem-hook":
            runs += [(f"{a.name} [{label}]", a, other) for label, _, other in (x.partition("=") for x in args.also)]
    if not runs:
        raise SystemExit("no adapter to time: install gitmem (pip install -e .) in this Python's environment")
    rnd = random.Random(7)
    stop_warm(root)  # one left running (an earlier run, a session) would serve the cold rounds' prompt hooks

    def call(label: str, a: Adapter, exe: str, kind: str, values: dict[str, str]) -> tuple[float, bool]:
        arg, template = a.events["prompt" if kind == WARM else kind]
        # a new session id per row and event, so none finds the memories "already given" (Gemini's AfterTool
        # replace gives the file's memories as its read_file does)
        ev = fill(template, {**values, "$session": f"{values['$session']}-{label}-{kind}"})
        env = None if kind == WARM else cold_env
        if "[personal" in label:
            env = {**(env or os.environ), **personal_env}
        return timed([exe, *([arg] if arg else [])], json.dumps(ev).encode(), root, env)

    times: dict[tuple[str, str], list[float]] = {("python -c pass", ""): []}
    printed: dict[tuple[str, str], int] = {}  # runs that printed context
    for label, a, _ in runs:
        for kind in a.events:
            times[(label, kind)] = []
            printed[(label, kind)] = 0
    # one warm-up round (page cache, .pyc files), not counted
    values = round_values(root, rnd)
    for label, a, exe in runs:
        for kind in a.events:
            call(label, a, exe, kind, values)
    for i in range(args.runs):
        values = round_values(root, rnd)
        times[("python -c pass", "")].append(timed([sys.executable, "-c", "pass"], b"", root)[0])
        for kind in (*TARGETS_MS, *ACTION_TARGETS_MS):
            for label, a, exe in runs:
                if kind not in a.events:
                    continue
                ms, out = call(label, a, exe, kind, values)
                times[(label, kind)].append(ms)
                printed[(label, kind)] += out
        print(f"\rround {i + 1}/{args.runs}", end="", file=sys.stderr)
    print(file=sys.stderr)
    warm_info: dict[str, object] = {}
    if not args.no_warm:
        print(f"warm process up in {start_warm(root):.1f}s", file=sys.stderr)
        times[("python -c pass", WARM)] = []
        for label, _, _ in runs:
            times[(label, WARM)] = []
            printed[(label, WARM)] = 0
        before = fallbacks(root)
        try:
            values = round_values(root, rnd)
            for label, a, exe in runs:  # warm-up round, not counted
                call(label, a, exe, WARM, values)
            before = fallbacks(root)
            for i in range(args.runs):
                values = round_values(root, rnd)
                times[("python -c pass", WARM)].append(timed([sys.executable, "-c", "pass"], b"", root)[0])
                for label, a, exe in runs:
                    ms, out = call(label, a, exe, WARM, values)
                    times[(label, WARM)].append(ms)
                    printed[(label, WARM)] += out
                print(f"\rwarm round {i + 1}/{args.runs}", end="", file=sys.stderr)
            print(file=sys.stderr)
        finally:
            stop_warm(root)
        calls = args.runs * len(runs)
        warm_info = {"calls": calls, "answered": calls - (fallbacks(root) - before),
                     "python_ms": round(statistics.median(times[("python -c pass", WARM)]), 1)}
    base = statistics.median(times[("python -c pass", "")])
    claude = {kind: statistics.median(times[("claude", kind)]) for kind in (*TARGETS_MS, *ACTION_TARGETS_MS, WARM)
              if ("claude", kind) in times}
    medians = {key: statistics.median(ts) for key, ts in times.items()}
    rows = []
    for (label, kind), ts in times.items():
        if label == "python -c pass" and kind == WARM:
            continue  # the warm rows' baseline, in warm_info
        ts = sorted(ts)
        med = statistics.median(ts)
        phase_base = statistics.median(times[("python -c pass", WARM)]) if kind == WARM else base
        event = ""
        for a in ADAPTERS:
            if label.split(" ")[0] == a.name:
                arg, template = a.events["prompt" if kind == WARM else kind]
                event = arg or str(template.get("hook_event_name"))
                tool = template.get("tool_name") or template.get("toolName")
                event += f" {tool}" if tool else ""
        rows.append({"adapter": label, "kind": kind, "event": event, "median_ms": round(med, 1),
                     "p90_ms": round(ts[int(0.9 * (len(ts) - 1))], 1), "max_ms": round(ts[-1], 1),
                     "ratio_to_python": round(med / phase_base, 2),
                     "ratio_to_claude": round(med / claude[kind], 2) if kind in claude else None,
                     "target_ms": (WARM_TARGET_MS if kind == WARM
                                   else TARGETS_MS.get(kind) or ACTION_TARGETS_MS.get(kind)), "runs": len(ts),
                     # before a shell command / after a failure: the ratio to the same adapter's file / capture event
                     "ratio_to_bar": round(med / medians[(label, BAR[kind])], 2)
                     if kind in BAR and (label, BAR[kind]) in medians else None,
                     "printed_context": printed.get((label, kind))})
    if args.json:
        print(json.dumps({"memories": args.memories, "repo": str(args.repo), "rows": rows, "warm": warm_info},
                         indent=2))
        return 0
    print(f"{args.memories} memories, {args.runs} runs each, repo {args.repo.resolve().name}")
    if warm_info:
        print(f"{WARM}: the warm process answered {warm_info['answered']}/{warm_info['calls']} prompt hooks in time; "
              f"python -c pass {warm_info['python_ms']} ms in those rounds")
    print(f"{'adapter':16} {'kind':8} {'event':38} {'median':>8} {'p90':>8} {'max':>8} {'× python':>9} "
          f"{'× claude':>9} {'target':>8} {'context':>8} {'× bar':>7}")
    for r in rows:
        tgt = f"{r['target_ms']} ms" if r["target_ms"] else ""
        rc = f"{r['ratio_to_claude']:.2f}×" if r["ratio_to_claude"] is not None else ""
        print(f"{r['adapter']:16} {r['kind']:8} {r['event']:38} {r['median_ms']:>6.1f}ms {r['p90_ms']:>6.1f}ms "
              f"{r['max_ms']:>6.1f}ms {r['ratio_to_python']:>8.2f}× {rc:>9} {tgt:>8} "
              f"{'' if r['printed_context'] is None else str(r['printed_context']) + '/' + str(r['runs']):>8} "
              f"{'' if r['ratio_to_bar'] is None else format(r['ratio_to_bar'], '.2f') + '×':>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
