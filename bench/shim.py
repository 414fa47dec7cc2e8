"""What the committed agent hook command costs around the hook: the portable form against the earlier absolute path.

The earlier command ran this machine's script by absolute path (``if [ -x /abs/gitmem-hook ]; then exec …``);
the portable one (``installing.shim_command``) reads the clone's ``bin-dir`` file with the shell's own ``read``
(no process at the top of a main work tree; one ``git rev-parse`` elsewhere) and runs the script without
``exec``. Both are timed side by side, interleaved, in one run, with ``sh -c`` as the agents run them:

* around a hook script that does nothing (``exit 0``): the wrapper's own cost;
* around the real ``gitmem-hook`` for a ``PreToolUse`` Read of a file with a memory: what an agent waits for;
* ``python -c pass`` as the yardstick.

Usage: ``python bench/shim.py [--runs 40]``. Medians in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gitmem.integrations.agents import claude_install, installing
from testing.repos import commit, make_repo


def old_command(script: Path, event: str) -> str:
    """The earlier gitmem's handler: this machine's script by absolute path, else PATH, else exit 0."""
    q = shlex.quote(str(script))
    return (f": gitmem-hook; if [ -x {q} ]; then exec {q} {event}; fi; if command -v gitmem-hook >/dev/null 2>&1; "
            f"then exec gitmem-hook {event}; fi; exit 0")


def timed(argv: list[str], cwd: Path, stdin: bytes) -> float:
    t = time.perf_counter()
    subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, check=True)
    return (time.perf_counter() - t) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=40)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "r")
        commit(repo, "init", {"a.py": "def f():\n    return 1\n"})
        gitmem = [sys.executable, "-m", "gitmem"]
        subprocess.run([*gitmem, "init", "--no-hooks"], cwd=repo, check=True, capture_output=True)
        subprocess.run([*gitmem, "remember", "f returns one on purpose", "--anchor", "a.py::f"], cwd=repo,
                       check=True, capture_output=True)
        installing.write_pointer(repo)
        noop_dir = Path(tmp) / "noop-bin"
        noop_dir.mkdir()
        noop = noop_dir / "gitmem-hook"
        noop.write_text("#!/bin/sh\nexit 0\n")
        noop.chmod(0o755)
        real = Path(sys.executable).parent / "gitmem-hook"
        event = json.dumps({"session_id": "bench", "cwd": str(repo), "hook_event_name": "PreToolUse",
                            "tool_name": "Read", "tool_input": {"file_path": str(repo / "a.py")}}).encode()
        new = claude_install.handler_command("PreToolUse")
        pointer = (repo / ".git" / "gitmem" / "bin-dir")
        cases = {
            "python -c pass": ([sys.executable, "-c", "pass"], None),
            "no-op hook, old command": (["sh", "-c", old_command(noop, "PreToolUse")], None),
            "no-op hook, portable command": (["sh", "-c", new], noop_dir),
            "gitmem-hook, old command": (["sh", "-c", old_command(real, "PreToolUse")], None),
            "gitmem-hook, portable command": (["sh", "-c", new], real.parent),
        }
        times: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(args.runs):
            for name, (argv, bin_dir) in cases.items():  # interleaved: drift hits every case alike
                if bin_dir is not None:
                    pointer.write_text(f"{bin_dir}\n")
                times[name].append(timed(argv, repo, event))
        base = statistics.median(times["python -c pass"])
        print(f"{'case':32} {'median ms':>10} {'× python -c pass':>18}")
        for name, ts in times.items():
            m = statistics.median(ts)
            print(f"{name:32} {m:10.2f} {m / base:18.2f}")


if __name__ == "__main__":
    main()
