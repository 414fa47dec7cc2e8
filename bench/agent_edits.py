"""What noting an agent's edit of a memory file costs the PostToolUse hook, and what the pre-commit check costs.

In a small generated repository (gitmem initialised with its git hooks, ``--memories`` memories), round-robin
with ``python -c pass`` so that all see the same machine load, ``--runs`` times each:

* ``pass``: ``python -c pass`` (the process floor);
* ``hook: edit code``: Claude Code's PostToolUse hook for an Edit of a source file (nothing to note: the
  added work is one substring test per path key);
* ``hook: edit memory``: the same hook for an Edit of a memory file (noted: one ``O_APPEND`` line);
* in process, per call: ``noted_memory_edits`` on those two events, and ``hook_entry._agent_edits_pending``
  (the pre-commit's added check) with no record and with a record of ``--records`` notes all done.

Reports medians (ms for processes, µs in process) and the ratios to ``python -c pass``.

    python bench/agent_edits.py [--memories 50] [--runs 15] [--records 200] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def _run(args: list[str], cwd: Path, data: bytes | None = None) -> float:
    t = time.perf_counter()
    subprocess.run(args, cwd=cwd, input=data, capture_output=True, check=True)
    return (time.perf_counter() - t) * 1000


def _per_call_us(fn, n: int = 2000) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t) / n * 1e6)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=50)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--records", type=int, default=200)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    from gitmem import agent_edits, layout
    from gitmem.hook_entry import _agent_edits_pending
    from gitmem.integrations.agents import core
    from gitmem.integrations.agents.events import AfterTool
    from testing.repos import commit, git, make_repo

    tmp = Path(tempfile.mkdtemp(prefix="gitmem-bench-agent-edits-"))
    repo = make_repo(tmp / "r")
    commit(repo, "init", {"src/client.py": "def fetch(url):\n    return url\n"})
    gitmem = [sys.executable, "-m", "gitmem"]
    subprocess.run([*gitmem, "init"], cwd=repo, capture_output=True, check=True)
    ids = []
    for i in range(a.memories):
        out = subprocess.run([*gitmem, "remember", f"fetch rule number {i}", "--anchor", "src/client.py::fetch",
                              "--json"], cwd=repo, capture_output=True, check=True, text=True).stdout
        ids.append(json.loads(out)["id"])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "memories")
    mem = repo / ".gitmem" / "memories" / f"{ids[0]}.md"
    code = repo / "src" / "client.py"

    def event(path: Path, n: int) -> bytes:
        return json.dumps({"session_id": f"b{n}", "transcript_path": "", "cwd": str(repo),
                           "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_use_id": f"t{n}",
                           "tool_input": {"file_path": str(path), "old_string": "x", "new_string": "y"},
                           "tool_response": {"filePath": str(path)}}).encode()

    hook = [sys.executable, "-m", "gitmem.integrations.agents.claude"]
    rows: dict[str, list[float]] = {"pass": [], "hook: edit code": [], "hook: edit memory": []}
    for n in range(a.runs):
        rows["pass"].append(_run([sys.executable, "-c", "pass"], repo))
        rows["hook: edit code"].append(_run(hook, repo, event(code, n)))
        rows["hook: edit memory"].append(_run(hook, repo, event(mem, n)))
    floor = statistics.median(rows["pass"])
    out: dict[str, object] = {name: {"median_ms": round(statistics.median(v), 1),
                                     "x_pass": round(statistics.median(v) / floor, 2)} for name, v in rows.items()}

    lay = layout.of(repo)
    common = {"agent": "claude", "name": "PostToolUse", "session_id": "s", "cwd": str(repo), "raw": {}}

    def after(path: Path) -> AfterTool:
        return AfterTool(tool="Edit", kind="edit", tool_use_id="t", input={"file_path": str(path)}, response={},
                         path_keys=("file_path", "notebook_path", "path"), **common)

    ev_code, ev_mem = after(code), after(mem)
    lay.agent_edits_log.unlink(missing_ok=True)
    out["noted_memory_edits: code (µs)"] = round(_per_call_us(lambda: core.noted_memory_edits(ev_code, repo, lay)), 2)
    out["noted_memory_edits: memory (µs)"] = round(_per_call_us(
        lambda: core.noted_memory_edits(ev_mem, repo, lay), 500), 2)
    lay.agent_edits_log.unlink(missing_ok=True)
    out["pre-commit check, no record (µs)"] = round(_per_call_us(lambda: _agent_edits_pending(repo)), 2)
    for i in range(a.records):
        agent_edits.note(lay, [ids[i % len(ids)]], "claude")
    agent_edits.done(lay, ids)
    out[f"pre-commit check, {a.records} done records (µs)"] = round(_per_call_us(
        lambda: _agent_edits_pending(repo), 500), 2)
    out["python -c pass (ms)"] = round(floor, 1)
    if a.json:
        print(json.dumps(out, indent=1))
    else:
        for k, v in out.items():
            print(f"{k:45} {v}")


if __name__ == "__main__":
    main()
