"""The modules each hook event imports, for two builds side by side (issue 22: "no new import on the hot path").

Runs every agent-hook event of ``bench/hooks_ab.py`` (``bench/hooks.py``'s events and placeholders, plus
Claude Code's PreToolUse ``Read``) and the git post-commit hook's entry once per build, each under
``python -X importtime`` on that build's bench repository (as ``bench/hooks_ab.py`` runs them: this Python's
console script, the build's source first on ``PYTHONPATH``, no warm process, no personal repository), and
prints, per event, the number of modules each build imported and the modules only one of them imported. The
post-commit run follows a fresh commit in each repository made with hooks off (``--commit py`` changes a line of
an anchored Python file; ``txt`` appends to a text file), so its entry analyses that commit.

    python bench/hook_imports.py BEFORE_SRC BEFORE_REPO AFTER_SRC AFTER_REPO [--adapters claude,codex]
        [--kinds start,prompt,read,file,shell,capture,failure] [--commit py|txt|none] [--json]

Both repositories are built beforehand by ``bench/hooks.py --work DIR`` run with each build (as for
``bench/hooks_ab.py``); ``--commit`` adds a commit to each (on its current branch).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hooks_ab  # EXTRA_EVENTS, event

import hooks as hb  # bench/hooks.py: ADAPTERS, fill, round_values

#: What the git hook shim runs (gitmem/resources/hook-tmpl's GITMEM_ENTRY, minus its fallbacks): the work tree
#: is not on ``sys.path`` (a clone of gitmem itself, as the bench repositories are, would be imported instead).
GIT_ENTRY = ("import sys\nif sys.path and sys.path[0] in ('', '.'):\n    del sys.path[0]\n"
             "from gitmem.hook_entry import main\nsys.exit(main(sys.argv[1:]))")
_IMPORT_RE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|( *)(\S+)$")


def imported(argv: list[str], stdin: bytes, cwd: Path, env: dict[str, str]) -> set[str]:
    """The modules ``argv`` (a Python command line) imported, from ``-X importtime``'s report on stderr.

    Raises SystemExit when the command exits non-zero (a hook must exit 0)."""
    p = subprocess.run(argv, input=stdin, cwd=cwd, capture_output=True, env={**env, "PYTHONPROFILEIMPORTTIME": "1"})
    if p.returncode != 0:
        raise SystemExit(f"{argv} exited {p.returncode}: {p.stderr.decode()[-500:]}")
    return {m.group(2) for line in p.stderr.decode(errors="replace").splitlines() if (m := _IMPORT_RE.match(line))}


def commit(root: Path, how: str, i: int) -> None:
    """A commit in ``root`` with hooks off: a line added to the first anchored Python file's first
    function (``py``) or to ``bench-notes.txt`` (``txt``)."""
    from gitmem.catalog import db as catalog_db

    if how == "py":
        con = catalog_db.connect(root)
        assert con is not None
        path = sorted(p for p in catalog_db.anchored_paths(con) if p.endswith(".py"))[0]
        con.close()
        text = (root / path).read_text(encoding="utf-8")
        text = re.sub(r"(\n    return )", rf"\n    _bench_imports = {i}\1", text, count=1)
    else:
        path = "bench-notes.txt"
        text = ((root / path).read_text(encoding="utf-8") if (root / path).exists() else "") + f"note {i}\n"
    (root / path).write_text(text, encoding="utf-8")
    subprocess.run(["git", "add", path], cwd=root, check=True)
    subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "commit", "-qm", f"bench imports {i}"], cwd=root,
                   check=True, capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before_src", type=Path)
    ap.add_argument("before_repo", type=Path)
    ap.add_argument("after_src", type=Path)
    ap.add_argument("after_repo", type=Path)
    ap.add_argument("--adapters", default="claude,codex")
    ap.add_argument("--kinds", default="start,prompt,read,file,shell,capture,failure")
    ap.add_argument("--commit", choices=("py", "txt", "none"), default="py")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from gitmem.layout import PERSONAL_DIR_ENV

    env0 = {**os.environ, hb.NO_DAEMON_ENV: "1", PERSONAL_DIR_ENV: "/nonexistent/gitmem-bench-no-personal"}
    env0.pop("PYTHONDONTWRITEBYTECODE", None)
    builds = {"before": (str(args.before_src.resolve()), args.before_repo.resolve()),
              "after": (str(args.after_src.resolve()), args.after_repo.resolve())}
    bin_dir = Path(sys.executable).parent
    values = hb.round_values(builds["after"][1], random.Random(7))
    vals = {"after": values, "before": {k: v.replace(str(builds["after"][1]), str(builds["before"][1]))
                                        for k, v in values.items()}}
    rows: list[dict] = []

    def row(label: str, got: dict[str, set[str]]) -> None:
        rows.append({"event": label, "before": len(got["before"]), "after": len(got["after"]),
                     "new": sorted(got["after"] - got["before"]), "gone": sorted(got["before"] - got["after"])})

    for a in (a for a in hb.ADAPTERS if a.name in args.adapters.split(",")):
        for kind in args.kinds.split(","):
            if (shape := hooks_ab.event(a, kind)) is None:
                continue
            arg, template = shape
            got = {}
            for b, (src, root) in builds.items():
                ev = hb.fill(template, {**vals[b], "$session": f"{vals[b]['$session']}-imports-{b}-{a.name}-{kind}"})
                got[b] = imported([sys.executable, str(bin_dir / a.script), *([arg] if arg else [])],
                                  json.dumps(ev).encode(), root, {**env0, "PYTHONPATH": src})
            row(f"{a.name} {kind}", got)
    if args.commit != "none":
        got = {}
        for b, (src, root) in builds.items():
            commit(root, args.commit, random.randrange(10**9))
            got[b] = imported([sys.executable, "-c", GIT_ENTRY, "post-commit"], b"", root, {**env0, "PYTHONPATH": src})
        row(f"git post-commit ({args.commit} commit)", got)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        print(f"{r['event']:34} modules before {r['before']:4}  after {r['after']:4}  "
              f"new: {', '.join(r['new']) or '-'}  gone: {', '.join(r['gone']) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
