"""Run the CI snippets of ``docs/ci/`` as CI would: their commands, in a fresh venv, on real repositories.

For each snippet (``docs/ci/github-actions.yml``: the ``run:`` of every step; ``docs/ci/gitlab-ci.yml``: every job's
``script:``; both read with PyYAML), in a fresh virtual environment (``python -m venv``, nothing of this checkout's
venv) and with that venv's ``bin`` first on ``PATH``:

* ``gitmem-cli`` in an install command is replaced by the wheel built from this checkout (``pip wheel --no-deps``),
  so ``pip install gitmem-cli`` installs exactly the lean package users get, its dependencies from the index;
* the CI system's variables are given as CI gives them for a change to ``main`` (``${{ github.base_ref }}``,
  ``$CI_MERGE_REQUEST_TARGET_BRANCH_NAME``); steps that ``uses:`` an action (checkout, setup-python) are what this
  harness does itself: a full clone, a Python;
* the commands run with ``bash -e`` in a clone of a repository (``origin``: a bare repository) on a branch ``feature``:
  one where the branch changed the code a team memory is anchored to (the commands must exit non-zero and name the
  memory), one where it changed other code (they must exit 0).

    python -m testing.ci_snippets [--keep] [--json]    (testing/ci_snippets.sh: the same, for .ci/run)

Exits 0 when every snippet behaved, 1 otherwise; prints one line per run (install and check seconds, the exit
code). Needs the network for the dependencies (or a pip cache that has them).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = {"github-actions": ROOT / "docs/ci/github-actions.yml", "gitlab-ci": ROOT / "docs/ci/gitlab-ci.yml"}
#: The variables each CI system sets for a change whose base is ``main``, as the snippets use them.
GITHUB_EXPRESSIONS = {"github.base_ref": "main"}
GITLAB_VARIABLES = {"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_PIPELINE_SOURCE": "merge_request_event"}
#: The distribution the snippets install; replaced by the wheel of this checkout.
DISTRIBUTION = re.compile(r"(?<![\w./-])gitmem-cli(?![\w.-])")

NET_PY = "def retry_after(header):\n    return int(header) * 1000\n\n\ndef backoff(n):\n    return 2 ** n\n"
IDENTITY = {"GIT_AUTHOR_NAME": "CI", "GIT_AUTHOR_EMAIL": "ci@example.com", "GIT_COMMITTER_NAME": "CI",
            "GIT_COMMITTER_EMAIL": "ci@example.com"}


def github_commands(text: str) -> list[str]:
    """The ``run:`` commands of every job's steps, in order, with ``${{ EXPR }}`` of ``GITHUB_EXPRESSIONS``
    substituted.

    Raises:
        ValueError: a workflow without jobs or steps, or an expression this harness cannot give.
    """
    doc = yaml.safe_load(text)
    out = []
    for job in (doc.get("jobs") or {}).values():
        for step in job.get("steps") or ():
            if "run" in step:
                out.append(_github_expand(str(step["run"])))
    if not out:
        raise ValueError("no run: step in the workflow")
    return out


def _github_expand(command: str) -> str:
    def sub(m: re.Match[str]) -> str:
        expr = m.group(1).strip()
        if expr not in GITHUB_EXPRESSIONS:
            raise ValueError(f"no local value for ${{{{ {expr} }}}}")
        return GITHUB_EXPRESSIONS[expr]

    return re.sub(r"\$\{\{(.*?)\}\}", sub, command)


def gitlab_commands(text: str) -> list[str]:
    """The ``before_script:`` and ``script:`` commands of every job (a top-level mapping with ``script``), in order.

    Raises:
        ValueError: no job with a script.
    """
    doc = yaml.safe_load(text)
    out: list[str] = []
    for job in doc.values():
        if isinstance(job, dict) and "script" in job:
            for key in ("before_script", "script"):
                lines = job.get(key) or []
                out.extend(str(c) for c in ([lines] if isinstance(lines, str) else lines))
    if not out:
        raise ValueError("no job with a script: in the file")
    return out


def gitlab_variables(text: str) -> dict[str, str]:
    """The ``variables:`` of the file's jobs (and the top level), as strings."""
    doc = yaml.safe_load(text)
    found = {str(k): str(v) for k, v in (doc.get("variables") or {}).items()}
    for job in doc.values():
        if isinstance(job, dict) and "script" in job:
            found.update({str(k): str(v) for k, v in (job.get("variables") or {}).items()})
    return found


def with_wheel(command: str, wheel: Path) -> str:
    """``command`` with the distribution name ``gitmem-cli`` (as a word) replaced by ``wheel``'s path."""
    return DISTRIBUTION.sub(str(wheel), command)


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **IDENTITY})
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def make_repository(work: Path, name: str, *, stale: bool) -> tuple[Path, str]:
    """A bare ``origin`` and a full clone of it on branch ``feature``: ``main`` has ``src/net.py`` and a team
    memory anchored to ``retry_after``; ``feature`` changes ``retry_after`` (``stale``) or ``backoff``.
    Returns (the clone, the memory's id). gitmem here is this checkout's (``python -m gitmem``)."""
    seed, origin, clone = work / f"{name}-seed", work / f"{name}-origin.git", work / name
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    (seed / "src").mkdir()
    (seed / "src/net.py").write_text(NET_PY)
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "net")
    env = {**os.environ, **IDENTITY, "GITMEM_NO_DAEMON": "1"}
    subprocess.run([sys.executable, "-m", "gitmem", "init", "--no-hooks"], cwd=seed, env=env, check=True,
                   capture_output=True)
    mid = subprocess.run([sys.executable, "-m", "gitmem", "remember",
                          "retry_after returns milliseconds: the gateway sends seconds",
                          "--anchor", "src/net.py::retry_after"], cwd=seed, env=env, check=True,
                         capture_output=True, text=True).stdout.strip()
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "remember the retry unit")
    git(work, "clone", "-q", "--bare", str(seed), str(origin))
    git(work, "clone", "-q", str(origin), str(clone))
    git(clone, "checkout", "-qb", "feature")
    text = NET_PY.replace("* 1000", "* 1000 + 1") if stale else NET_PY.replace("2 ** n", "2 ** (n + 1)")
    (clone / "src/net.py").write_text(text)
    git(clone, "commit", "-qam", "change " + ("retry_after" if stale else "backoff"))
    return clone, mid


def run_snippet(name: str, commands: list[str], variables: dict[str, str], wheel: Path, work: Path,
                repos: list[tuple[Path, str, bool]]) -> list[dict[str, object]]:
    """Make a fresh venv, then run ``commands`` (the wheel for ``gitmem-cli``) in each repository; one result each:
    ``{"snippet", "repo", "code", "expected", "ok", "seconds", "install_s", "output"}``."""
    venv = work / f"venv-{name}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(variables)
    env.update({"PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", "VIRTUAL_ENV": str(venv),
                "PIP_DISABLE_PIP_VERSION_CHECK": "1", "GITMEM_NO_DAEMON": "1"})
    results = []
    for clone, mid, stale in repos:
        timings = []
        code, output = 0, ""
        for command in commands:
            t0 = time.perf_counter()
            proc = subprocess.run(["bash", "-e", "-c", with_wheel(command, wheel)], cwd=clone, env=env,
                                  capture_output=True, text=True)
            timings.append((command, time.perf_counter() - t0))
            output += proc.stdout + proc.stderr
            code = proc.returncode
            if code != 0:
                break
        named = mid in output
        ok = (code != 0 and named and "stale:" in output) if stale else code == 0
        results.append({"snippet": name, "repo": clone.name, "code": code, "expected": "non-zero, naming the memory"
                        if stale else "0", "ok": ok,
                        "install_s": round(sum(t for c, t in timings if "pip install" in c), 2),
                        "check_s": round(sum(t for c, t in timings if "gitmem check" in c), 2),
                        "output": output[-2000:]})
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gitmem-ci-snippets-"))
    try:
        built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"),
                                str(ROOT)], capture_output=True, text=True)
        if built.returncode != 0:
            print(f"pip wheel failed:\n{built.stdout}{built.stderr}", file=sys.stderr)
            return 1
        wheel = next((work / "dist").glob("*.whl"))
        stale_repo, stale_id = make_repository(work, "stale", stale=True)
        clean_repo, clean_id = make_repository(work, "clean", stale=False)
        repos = [(stale_repo, stale_id, True), (clean_repo, clean_id, False)]
        gh_text = SNIPPETS["github-actions"].read_text()
        gl_text = SNIPPETS["gitlab-ci"].read_text()
        results = run_snippet("github-actions", github_commands(gh_text), {}, wheel, work, repos)
        results += run_snippet("gitlab-ci", gitlab_commands(gl_text), {**gitlab_variables(gl_text),
                                                                       **GITLAB_VARIABLES}, wheel, work, repos)
        if args.json:
            print(json.dumps(results, indent=2))
        for r in results:
            print(f"{'ok  ' if r['ok'] else 'FAIL'} {r['snippet']:15} {r['repo']:6} exit {r['code']} "
                  f"(expected {r['expected']}); install {r['install_s']} s, gitmem check {r['check_s']} s",
                  file=sys.stderr)
            if not r["ok"]:
                print(str(r["output"]), file=sys.stderr)
        return 0 if all(r["ok"] for r in results) else 1
    finally:
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
