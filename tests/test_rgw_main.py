"""``python -m testing.rgw``: the test object store, started by hand for trying the organisation index on one
machine (docs/org.md, "Try it on one machine"): the lines it prints point gitmem at a real bucket, and Ctrl-C
stops every daemon it started and removes its folder."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

from testing import rgw as rgw_cluster

ROOT = Path(__file__).resolve().parents[1]


def read_until(proc: subprocess.Popen[str], marker: str) -> str:
    """What ``proc`` printed on stdout up to and including the line starting with ``marker`` (it prints them at
    once when the cluster is up; it exits, ending stdout, when it cannot start: ``START_TIMEOUT_S``)."""
    assert proc.stdout is not None
    out: list[str] = []
    for line in proc.stdout:
        out.append(line)
        if line.startswith(marker):
            return "".join(out)
    raise AssertionError(f"no {marker!r} line: {''.join(out)!r}")


def test_refuses_a_folder_in_use(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    proc = subprocess.run([sys.executable, "-m", "testing.rgw", str(tmp_path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1 and "is not an empty folder" in proc.stderr
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_prints_what_points_gitmem_at_it_and_stops_on_ctrl_c(  # type: ignore[no-untyped-def]
        tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    absent = rgw_cluster.missing()
    if absent:
        pytest.skip(f"no object store: {', '.join(absent)} not on PATH")
    folder = Path(tempfile.mkdtemp(prefix="gitmem-rgw-")) / "c"  # short: unix socket paths
    proc = subprocess.Popen([sys.executable, "-m", "testing.rgw", str(folder)], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out = read_until(proc, "# Ctrl-C")
        env = dict(re.findall(r"^export (\w+)=(\S+)$", out, re.M))
        assert {"AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"} <= set(env)
        org = tomllib.loads("\n".join(line for line in out.splitlines() if not line.startswith("export ")))["org"]
        assert org["uri"].startswith("s3://") and org["endpoint"] == env["AWS_ENDPOINT_URL"]
        pids = [int(p) for p in re.findall(r"^(\d+)", subprocess.run(
            ["pgrep", "-f", str(folder)], capture_output=True, text=True).stdout, re.M)]
        assert len(pids) >= 3  # monitor, OSD, gateway
        # the printed lines are enough: a repository's memories indexed there and found again
        repo = tmp_path / "svc"
        repo.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        (repo / "a.py").write_text("def f():\n    return 1\n")
        assert run_cli(repo, "init", "--no-hooks")[0] == 0
        assert run_cli(repo, "remember", "f returns 1 because the ledger counts from one", "--anchor",
                       "a.py::f")[0] == 0
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], cwd=repo,
                       check=True)
        cfg = repo / ".gitmem" / "config.toml"
        cfg.write_text(cfg.read_text() + f'\n[org]\nuri = "{org["uri"]}"\nendpoint = "{org["endpoint"]}"\n')
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        code, _, err = run_cli(repo, "org", "index", ".")
        assert code == 0, err
        code, found, err = run_cli(repo, "recall", "--org", "ledger counts from one")
        assert code == 0 and "ledger counts from one" in found, err
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
        assert proc.stderr is not None and "stopped (pids" in proc.stderr.read()
        assert not folder.exists()
        for pid in pids:
            assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=60)
        shutil.rmtree(folder.parent, ignore_errors=True)
