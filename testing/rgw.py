"""A real S3-compatible object store for tests: a single-node Ceph cluster with a RADOS Gateway on 127.0.0.1.

``start(root)`` bootstraps, from nothing, in the folder ``root``: one monitor, one bluestore OSD whose block
device is a sparse file, and one ``radosgw`` with the ``beast`` frontend on a free port. Every daemon's
configuration, data, run dir, admin socket, pid file and log is under ``root``; the daemons run in the
foreground as children of the caller (and die with it: ``PR_SET_PDEATHSIG``), so ``Rgw.stop()`` ends exactly
those processes by their pids and removes ``root``. Two clusters on one machine do not meet: each has its own
fsid, monitor ports and gateway port.

Two S3 key pairs are created: ``access_key``/``secret_key`` (user ``gitmem``, full rights) and
``read_access_key``/``read_secret_key`` (its subuser ``gitmem:ro`` with ``--access=read``: it reads every bucket
of ``gitmem`` and can write none). Buckets are created with ``create_bucket`` (a SigV4-signed ``PUT`` sent by
Debian's ``curl --aws-sigv4``; the ``obstore`` client LanceDB's tests use cannot create buckets).

The facts this rests on (which ceph.conf settings matter, the bootstrap order, times) are in
``/work/shared/reference/s3-object-storage.md``: auth none needs ``ms mon client mode = crc secure`` (else
``radosgw`` waits 300 s for a secure session the monitor never offers), the bluestore block file lives outside the
OSD data folder, pools have one replica. The gateway's ``beast`` frontend is given ``tcp_nodelay=1``: without it
every small response waits for the client's delayed ACK (Nagle), ~44 ms per request, and a LanceDB search, some
60 sequential requests, takes 1.5 s instead of 0.1 s (measured with bench/org.py). Bootstrap takes ~20 s on a
loaded 2-core machine.

Requires the Debian packages ``ceph-mon ceph-osd radosgw ceph-common`` and ``curl``; ``missing()`` says which
executable is absent (the fixtures skip with that reason).
"""

from __future__ import annotations

import contextlib
import ctypes
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The executables a cluster needs: the daemons, their command-line tools, and curl for signed bucket PUTs.
EXECUTABLES = ("ceph-mon", "ceph-osd", "radosgw", "ceph", "ceph-authtool", "monmaptool", "radosgw-admin", "curl")

#: The region RGW answers for by default (its zonegroup "default" accepts any region in a SigV4 scope, but
#: clients need one): what AWS_REGION is set to.
REGION = "us-east-1"

#: Known keys (20 and 40 characters, the AWS shapes); a cluster lives in a temp folder on 127.0.0.1 only.
ACCESS_KEY = "GITMEMTESTACCESSKEY0"
SECRET_KEY = "gitmemTestSecretKey0000000000000000000000"[:40]
READ_ACCESS_KEY = "GITMEMTESTREADONLY00"
READ_SECRET_KEY = "gitmemTestReadOnlySecret0000000000000000"[:40]

#: The bluestore block file's size: sparse, so only what is written takes disk. 20 GiB holds the org
#: benchmark's largest organisation (1,000,000 rows with vectors) with room for LanceDB's versions.
BLOCK_BYTES = 20 * 1024**3

#: How long a bootstrap may take before it is reported as failed (measured ~20 s; a loaded CI machine is slower).
START_TIMEOUT_S = 240.0

#: How long a daemon may take to exit after SIGTERM before it is killed: the monitor and OSD exit in well under a
#: second; radosgw 16.2 often does not exit on SIGTERM at all (measured: still running after 10 s).
STOP_GRACE_S = 3.0

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


class RgwError(RuntimeError):
    """The cluster could not be started: the message names the step and ends with the logs' last lines."""


def missing() -> list[str]:
    """The executables of ``EXECUTABLES`` that are not on PATH (empty when a cluster can start)."""
    return [name for name in EXECUTABLES if shutil.which(name) is None]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """In a daemon's child process: be sent SIGTERM when the process that started it dies (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


@dataclass
class Rgw:
    """A running cluster: ``endpoint`` (``http://127.0.0.1:PORT``), the two key pairs, ``region``, ``root`` (the
    folder holding everything) and ``procs`` (daemon name → its process)."""

    root: Path
    endpoint: str
    region: str = REGION
    access_key: str = ACCESS_KEY
    secret_key: str = SECRET_KEY
    read_access_key: str = READ_ACCESS_KEY
    read_secret_key: str = READ_SECRET_KEY
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        """The cluster's ceph.conf."""
        return self.root / "ceph.conf"

    def request(self, method: str, path: str, *, data: bytes | None = None, read_only: bool = False,
                headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        """Send one SigV4-signed request to ``endpoint + path`` with curl; returns (HTTP status, body).

        ``path`` starts with ``/`` (``/BUCKET``, ``/BUCKET/KEY``, with a query if any). Raises RgwError when curl
        cannot reach the gateway."""
        access, secret = (self.read_access_key, self.read_secret_key) if read_only else (
            self.access_key, self.secret_key)
        args = ["curl", "-sS", "--aws-sigv4", f"aws:amz:{self.region}:s3", "--user", f"{access}:{secret}",
                "-X", method, "-o", "-", "-w", "\n%{http_code}",
                # curl 7.88 signs without this header, which RGW requires (else SignatureDoesNotMatch)
                "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]
        for name, value in (headers or {}).items():
            args += ["-H", f"{name}: {value}"]
        if data is not None:
            args += ["--data-binary", "@-", "-H", "Content-Type: application/octet-stream"]
        proc = subprocess.run([*args, self.endpoint + path], input=data or b"", capture_output=True, timeout=60)
        if proc.returncode != 0:
            raise RgwError(f"curl {method} {path}: {proc.stderr.decode(errors='replace').strip()}")
        body, _, code = proc.stdout.rpartition(b"\n")
        return int(code), body

    def create_bucket(self, name: str) -> None:
        """Create bucket ``name`` (owned by the full-rights user). Raises RgwError unless the gateway says 200."""
        status, body = self.request("PUT", f"/{name}")
        if status != 200:
            raise RgwError(f"creating bucket {name}: HTTP {status} {body.decode(errors='replace')[:300]}")

    def new_org(self, prefix: str = "org", *, endpoint: str = "") -> S3Org:
        """A fresh bucket (a unique name) and its ``S3Org`` at ``s3://BUCKET/prefix``; ``endpoint`` overrides the
        gateway's (e.g. a proxy in front of it)."""
        bucket = f"gitmem-{uuid.uuid4().hex[:16]}"
        self.create_bucket(bucket)
        return S3Org(bucket=bucket, uri=f"s3://{bucket}/{prefix}", endpoint=endpoint or self.endpoint,
                     region=self.region, access_key=self.access_key, secret_key=self.secret_key,
                     read_access_key=self.read_access_key, read_secret_key=self.read_secret_key)

    def stop(self, *, remove: bool = True) -> None:
        """Stop the daemons (SIGTERM, then SIGKILL after ``STOP_GRACE_S``), by the pids this object started; then remove
        ``root`` unless ``remove`` is False. Safe to call twice."""
        # The monitor last: an OSD stopping tells the monitor, and waits 5 s for an answer when it is gone.
        monitors = [p for name, p in self.procs.items() if name.startswith("mon.")]
        others = [p for name, p in self.procs.items() if not name.startswith("mon.")]
        for group in (others, monitors):
            for proc in group:
                if proc.poll() is None:
                    proc.terminate()
            deadline = time.monotonic() + STOP_GRACE_S
            for proc in group:
                try:
                    proc.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.procs.clear()
        if remove:
            shutil.rmtree(self.root, ignore_errors=True)

    def logs(self, lines: int = 15) -> str:
        """The last ``lines`` lines of each daemon's log, for a failure message."""
        out = []
        for log in sorted((self.root / "log").glob("*.log")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {log.name}\n" + "\n".join(tail))
        return "\n".join(out)


@dataclass(frozen=True)
class S3Org:
    """One test's organisation index location: a fresh bucket on a running gateway.

    ``uri`` is ``s3://BUCKET/org``; ``endpoint``, ``region`` and the two key pairs are the gateway's (``access_key``
    writes, ``read_access_key`` only reads)."""

    bucket: str
    uri: str
    endpoint: str
    region: str
    access_key: str
    secret_key: str
    read_access_key: str
    read_secret_key: str

    def env(self, *, read_only: bool = False) -> dict[str, str]:
        """The standard AWS environment variables for this store (``read_only``: the read-only key pair).
        ``AWS_ALLOW_HTTP`` is set too: the gateway speaks plain HTTP on 127.0.0.1."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_REGION": self.region, "AWS_ALLOW_HTTP": "true",
                "AWS_ACCESS_KEY_ID": self.read_access_key if read_only else self.access_key,
                "AWS_SECRET_ACCESS_KEY": self.read_secret_key if read_only else self.secret_key}

    def storage_options(self, *, read_only: bool = False) -> dict[str, str]:
        """LanceDB / obstore storage options for this store (``read_only``: the read-only key pair)."""
        return {"endpoint": self.endpoint, "allow_http": "true", "region": self.region,
                "aws_access_key_id": self.read_access_key if read_only else self.access_key,
                "aws_secret_access_key": self.read_secret_key if read_only else self.secret_key}

    def object_store(self, *, read_only: bool = False) -> Any:
        """An ``obstore.store.S3Store`` of the whole bucket (the Rust object_store crate Lance itself writes with),
        with the read-write or the read-only key pair."""
        from obstore.store import S3Store

        return S3Store(self.bucket, endpoint=self.endpoint, region=self.region, client_options={"allow_http": True},
                       access_key_id=self.read_access_key if read_only else self.access_key,
                       secret_access_key=self.read_secret_key if read_only else self.secret_key)

    def org_config(self) -> dict[str, str]:
        """The ``[org]`` table that points a repository's or the user's config.toml at this store (keys in the
        environment, never in a config file)."""
        return {"uri": self.uri, "endpoint": self.endpoint, "region": self.region}


def _conf(root: Path, fsid: str, mon_v2: int, mon_v1: int, port: int) -> str:
    return f"""[global]
fsid = {fsid}
mon host = [v2:127.0.0.1:{mon_v2},v1:127.0.0.1:{mon_v1}]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc secure
ms client mode = crc secure
ms mon cluster mode = crc secure
ms mon service mode = crc secure
ms cluster mode = crc secure
ms service mode = crc secure
run dir = {root}/run
admin socket = {root}/run/$name.asok
pid file = {root}/run/$name.pid
log file = {root}/log/$name.log
log to stderr = false
err to stderr = false
crash dir = {root}/crash
keyring = {root}/keyring
mon data = {root}/mon/$name
osd data = {root}/osd/$name
osd objectstore = bluestore
bluestore block path = {root}/block/$name
bluestore block create = true
bluestore block size = {BLOCK_BYTES}
bluestore block db create = false
bluestore block wal create = false
bluestore fsck on mount = false
osd memory target = 1073741824
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon max pg per osd = 1000
mon data avail crit = 1
mon data avail warn = 2

[client.rgw.test]
rgw frontends = beast endpoint=127.0.0.1:{port} tcp_nodelay=1
rgw data = {root}/rgw/$name
rgw thread pool size = 64
"""


def _run(rgw: Rgw, step: str, *args: str, timeout: float = 120) -> str:
    """Run one Ceph command-line tool against the cluster; raises RgwError naming ``step`` when it fails."""
    try:
        proc = subprocess.run([args[0], "-c", str(rgw.conf), *args[1:]], capture_output=True, timeout=timeout,
                              cwd=rgw.root)
    except subprocess.TimeoutExpired as e:
        raise RgwError(f"{step}: {args[0]} did not finish in {timeout:.0f} s\n{rgw.logs()}") from e
    if proc.returncode != 0:
        raise RgwError(f"{step}: {' '.join(args)} exited {proc.returncode}: "
                       f"{proc.stderr.decode(errors='replace').strip()[-800:]}\n{rgw.logs()}")
    return proc.stdout.decode(errors="replace")


def _spawn(rgw: Rgw, name: str, *args: str) -> None:
    """Start daemon ``name`` in the foreground (``-f``) as a child; its own output goes to its log folder."""
    out = (rgw.root / "log" / f"{name}.out").open("ab")
    rgw.procs[name] = subprocess.Popen([args[0], "-c", str(rgw.conf), "-f", *args[1:]], stdout=out,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=rgw.root,
                                       preexec_fn=_die_with_parent)
    out.close()


def _wait_http(rgw: Rgw, deadline: float) -> None:
    """Wait until the gateway answers an anonymous ``GET /`` with 200; raise RgwError if a daemon dies first."""
    while True:
        for name, proc in rgw.procs.items():
            if proc.poll() is not None:
                raise RgwError(f"{name} exited with {proc.returncode} while the cluster started\n{rgw.logs()}")
        try:
            with urllib.request.urlopen(rgw.endpoint + "/", timeout=5) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise RgwError(f"the gateway did not answer on {rgw.endpoint} in {START_TIMEOUT_S:.0f} s\n{rgw.logs()}")
        time.sleep(0.5)


def start(root: Path, *, timeout: float = START_TIMEOUT_S) -> Rgw:
    """Bootstrap a new cluster in the empty or missing folder ``root`` and return it running, with both users.

    Raises RgwError (with the daemons' last log lines) when a step fails or the gateway does not answer within
    ``timeout`` seconds; the daemons started so far are stopped (``root`` is kept for the post-mortem)."""
    absent = missing()
    if absent:
        raise RgwError(f"not installed: {', '.join(absent)} (Debian: apt-get install radosgw ceph-mon ceph-osd "
                       "ceph-common curl)")
    root = root.resolve()
    if len(str(root / "run" / "client.rgw.test.123456.12345678.asok")) > 100:
        raise RgwError(f"{root}: too long for the admin sockets' unix socket paths (keep it under ~50 characters)")
    for sub in ("run", "log", "crash", "mon", "osd", "block", "rgw"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    ports = {free_port() for _ in range(3)}
    while len(ports) < 3:
        ports.add(free_port())
    mon_v2, mon_v1, port = sorted(ports)
    rgw = Rgw(root=root, endpoint=f"http://127.0.0.1:{port}")
    fsid = str(uuid.uuid4())
    rgw.conf.write_text(_conf(root, fsid, mon_v2, mon_v1, port))
    deadline = time.monotonic() + timeout
    try:
        subprocess.run(["ceph-authtool", "--create-keyring", str(root / "keyring"), "--gen-key", "-n", "mon.",
                        "--cap", "mon", "allow *"], check=True, capture_output=True)
        subprocess.run(["monmaptool", "--create", "--fsid", fsid, "--addv", "a",
                        f"[v2:127.0.0.1:{mon_v2},v1:127.0.0.1:{mon_v1}]", str(root / "monmap")],
                       check=True, capture_output=True)
        _run(rgw, "monitor mkfs", "ceph-mon", "--mkfs", "-i", "a", "--monmap", str(root / "monmap"),
             "--keyring", str(root / "keyring"))
        _spawn(rgw, "mon.a", "ceph-mon", "-i", "a")
        osd_uuid = str(uuid.uuid4())
        osd_id = _run(rgw, "osd new", "ceph", "osd", "new", osd_uuid).strip()
        (root / "osd" / f"osd.{osd_id}").mkdir()
        _run(rgw, "osd mkfs", "ceph-osd", "-i", osd_id, "--mkfs", "--osd-uuid", osd_uuid, timeout=180)
        _spawn(rgw, f"osd.{osd_id}", "ceph-osd", "-i", osd_id)
        _spawn(rgw, "client.rgw.test", "radosgw", "-n", "client.rgw.test")
        _wait_http(rgw, deadline)
        _run(rgw, "user create", "radosgw-admin", "-n", "client.admin", "user", "create", "--uid", "gitmem",
             "--display-name", "gitmem tests", "--access-key", ACCESS_KEY, "--secret-key", SECRET_KEY)
        _run(rgw, "read-only subuser", "radosgw-admin", "-n", "client.admin", "subuser", "create", "--uid",
             "gitmem", "--subuser", "gitmem:ro", "--access", "read", "--key-type", "s3",
             "--access-key", READ_ACCESS_KEY, "--secret-key", READ_SECRET_KEY)
    except BaseException:
        rgw.stop(remove=False)
        raise
    return rgw


@contextlib.contextmanager
def cluster(root: Path, **kwargs: Any) -> Iterator[Rgw]:
    """``start(root)``; yields the cluster; stops it and removes ``root`` on exit."""
    rgw = start(root, **kwargs)
    try:
        yield rgw
    finally:
        rgw.stop()
