"""Test fixtures: an isolated git environment, and real repositories with gitmem initialised."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing import rgw as rgw_cluster
from testing.repos import make_repo
from testing.rgw import Rgw, S3Org


@pytest.fixture(scope="session", autouse=True)
def _isolated_git(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Pin git identity and config; point HOME and XDG dirs at temp dirs (nothing touches the user's)."""
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = Test User\n\temail = test@example.com\n"
                         "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n")
    template = tmp_path_factory.mktemp("git-template")
    env = {"HOME": str(home), "GIT_CONFIG_GLOBAL": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_TEMPLATE_DIR": str(template), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_CACHE_HOME": str(home / ".cache"), "LANCEDB_LOG": "error",
           # no warm process unless a test asks for one (tests/test_daemon.py): none is left running
           "GITMEM_NO_DAEMON": "1"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    from gitmem.provenance import AGENT_ENV

    agent_env = {var: os.environ.pop(var) for var, _ in AGENT_ENV if var in os.environ}  # a person's shell
    for k in list(os.environ):
        if k.startswith("GIT_") and k not in env:
            del os.environ[k]
    # a person's object-store credentials and endpoint: only the s3_org fixture sets them, for its own store
    aws_env = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("AWS_")}
    yield
    os.environ.update(agent_env)
    os.environ.update(aws_env)
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


# -- issue 23 (helper daemon): one warm process per user, so one run folder per test ----------------------------


@pytest.fixture(autouse=True)
def _own_warm_process_folder(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test its own folder for the warm process (``GITMEM_RUN_DIR``, short: a socket path holds ~100 bytes):
    there is one process per user, which every test of the session would otherwise share. A server a test
    started there is stopped after it (by its socket, else by pid: only processes started with this folder)."""
    import shutil

    run = Path(tempfile.mkdtemp(prefix="gm-run-"))
    monkeypatch.setenv("GITMEM_RUN_DIR", os.fspath(run))
    yield
    if (run / "daemon.lock").exists():
        import signal
        import time

        from gitmem.daemon import client
        from gitmem.ops.daemon import _is_server, _run_dir_env

        client.stop(None, timeout_s=5.0)
        deadline = time.monotonic() + 30
        while client.running() and time.monotonic() < deadline:
            time.sleep(0.05)
        for entry in os.listdir("/proc") if os.path.isdir("/proc/self") else []:
            if entry.isdigit() and _is_server(int(entry)) and _run_dir_env(int(entry)) == os.fspath(run):
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except OSError:
                    pass
    shutil.rmtree(run, ignore_errors=True)


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """An empty git repository (branch main, no commits)."""
    return make_repo(tmp_path / "repo")


@pytest.fixture
def fresh_symbol_caches() -> Iterator[None]:
    """No symbol-table cache folder and an empty in-process cache, before and after the test (the symbol
    tests: ``pytestmark = pytest.mark.usefixtures("fresh_symbol_caches")``)."""
    from gitmem.code import symbols

    symbols.set_cache_dir(None)
    symbols.clear_memory_cache()
    yield
    symbols.set_cache_dir(None)
    symbols.clear_memory_cache()


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """Run the gitmem CLI in-process in a directory: ``run_cli(cwd, *args) -> (code, stdout, stderr)``."""
    from gitmem.cli import main

    def run(cwd: Path, *args: str) -> tuple[int, str, str]:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def run_json(run_cli):
    """Run a CLI command with --json and parse stdout; asserts exit code 0."""
    def run(cwd: Path, *args: str):
        code, out, err = run_cli(cwd, *args, "--json")
        assert code == 0, f"exit {code}: {err}"
        return json.loads(out)

    return run


@pytest.fixture(scope="session")
def rgw() -> Iterator[Rgw]:
    """A real S3-compatible object store for the whole test run: a single-node Ceph cluster with a RADOS Gateway on
    127.0.0.1 (``testing/rgw.py``), started by the first test that asks for it (~20 s), stopped by its pids at the
    end. Skipped, with the reason, when the Ceph packages are not installed."""
    absent = rgw_cluster.missing()
    if absent:
        pytest.skip(f"no object store: {', '.join(absent)} not on PATH "
                    "(apt-get install radosgw ceph-mon ceph-osd ceph-common curl; .ci/run installs them)")
    # a short folder of its own (not the test's tmp path): the admin sockets' paths must fit a unix socket's 107 bytes
    with rgw_cluster.cluster(Path(tempfile.mkdtemp(prefix="gitmem-rgw-"))) as cluster:
        yield cluster


@pytest.fixture
def s3_org(rgw: Rgw, monkeypatch: pytest.MonkeyPatch) -> S3Org:
    """A fresh bucket on the ``rgw`` store: its ``S3Org`` (``uri`` ``s3://BUCKET/org``, endpoint, region, the
    read-write and read-only key pairs), with the read-write pair set in the test's environment as
    AWS_ENDPOINT_URL / AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_REGION (and AWS_ALLOW_HTTP)."""
    org = rgw.new_org()
    for name, value in org.env().items():
        monkeypatch.setenv(name, value)
    return org


@pytest.fixture
def s3_ignoring_conditions(rgw: Rgw, monkeypatch: pytest.MonkeyPatch) -> Iterator[S3Org]:
    """A fresh bucket on the ``rgw`` store reached through ``testing/s3proxy.py``: a real S3 store that ignores
    conditional writes (``If-None-Match`` / ``If-Match`` removed). Its ``S3Org`` has the proxy's endpoint, which is
    also set in the test's environment as ``s3_org`` does (AWS_ENDPOINT_URL and the read-write key pair)."""
    from testing.s3proxy import ignoring_conditions

    secrets = {rgw.access_key: rgw.secret_key, rgw.read_access_key: rgw.read_secret_key}
    with ignoring_conditions(rgw.endpoint, secrets) as proxy:
        org = rgw.new_org(endpoint=proxy.endpoint)
        for name, value in org.env().items():
            monkeypatch.setenv(name, value)
        yield org
