"""Blobless, treeless and shallow partial clones with their promisor remote unreachable, and sparse checkouts
(issue 24, "partial").

Real clones (``git clone --filter=…`` from a ``file://`` URL of a repository serving filters,
``uploadpack.allowFilter``), each checked to really lack objects; then the remote made unreachable: its URL pointed
at a folder that does not exist, at a closed 127.0.0.1 port, or at a 127.0.0.1 port that accepts and never answers.
Real sparse-checkout cones. The expected verdicts come from a full clone of the same history.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.gitmem_cli import gitmem
from testing.repos import commit, git, make_repo

A1 = "def f():\n    return 1\n\n\ndef h():\n    return 5\n"
A2 = "def f():\n    return 3\n\n\ndef h():\n    return 5\n"
JS1 = "export function load(x) {\n  return x + 1;\n}\n\nexport function keep() {\n  return 0;\n}\n"
JS2 = "export function load(x) {\n  return x * 2;\n}\n\nexport function keep() {\n  return 0;\n}\n"
B1 = "def g():\n    return 2\n"
B2 = "def g():\n    return 22\n"


def ok(cwd: Path, *args: str) -> str:
    p = gitmem(cwd, *args)
    assert p.returncode == 0, f"gitmem {' '.join(args)} exited {p.returncode}: {p.stderr}"
    assert "check that git works" not in p.stderr + p.stdout
    return p.stdout


def statuses(cwd: Path, *rev: str) -> dict[str, tuple[str, str]]:
    """anchor → (status, reason) of every memory's anchors (``stale --all --json``)."""
    got = json.loads(ok(cwd, "stale", "--all", "--json", *rev))
    return {a["anchor"]: (a["status"], a["reason"]) for m in got for a in m["anchors"]}


def missing_objects(clone: Path) -> set[str]:
    """The objects the clone's history references and lacks (git's own listing, no fetch)."""
    out = git(clone, "rev-list", "--objects", "--missing=print", "--all")
    return {line[1:] for line in out.split() if line.startswith("?")}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with memories on Python and JavaScript code, changed after they were written, serving
    filtered clones."""
    from testing.repos import write

    src = make_repo(tmp_path_factory.mktemp("partial") / "src")
    commit(src, "code", {"pkg/a.py": A1, "web/load.js": JS1, "other/b.py": B1})
    subprocess.run([sys.executable, "-m", "gitmem", "init", "--no-hooks"], cwd=src, check=True, capture_output=True)
    for text, anchor in (("f returns one", "pkg/a.py::f"), ("h is five", "pkg/a.py::h"),
                         ("load adds one", "web/load.js::load"), ("keep is zero", "web/load.js::keep"),
                         ("g is two", "other/b.py::g"), ("b is small", "other/b.py")):
        ok(src, "remember", text, "--anchor", anchor)
    commit(src, "memories")
    commit(src, "f and load change", {"pkg/a.py": A2, "web/load.js": JS2})
    write(src, {"other/b.py": B2})
    commit(src, "g changes")
    commit(src, "docs", {"README.md": "hello\n"})
    git(src, "config", "uploadpack.allowFilter", "true")
    git(src, "config", "uploadpack.allowAnySHA1InWant", "true")
    return src


def clone(source: Path, dest: Path, *flags: str) -> Path:
    git(dest.parent, "clone", "-q", *flags, f"file://{source}", str(dest))
    return dest


@pytest.fixture(scope="module")
def full(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clone(source, tmp_path_factory.mktemp("full") / "full")


def offline(repo: Path, url: str | None = None) -> None:
    """The promisor remote made unreachable: its URL a folder that does not exist (or ``url``)."""
    git(repo, "remote", "set-url", "origin", url or f"file://{repo.parent}/gone-away")


@pytest.fixture
def blobless(source: Path, tmp_path: Path) -> Path:
    repo = clone(source, tmp_path / "blobless", "--filter=blob:none")
    assert git(repo, "config", "remote.origin.promisor").strip() == "true"
    assert missing_objects(repo), "the clone must lack blobs of past commits"
    offline(repo)
    return repo


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A 127.0.0.1 port that accepts connections and never answers (a remote behind a dead VPN)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join()
    for c in held:
        c.close()
    srv.close()


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# -- blobless, offline -------------------------------------------------------------------------------------------


def test_blobless_offline_reads_work_and_verdicts_match_a_full_clone(blobless: Path, full: Path) -> None:
    """list, show, context and stale exit 0 offline; every anchor on the checked-out code (whose blobs the clone
    has) gets the full clone's verdict, commit named."""
    assert statuses(blobless) == statuses(full)
    listed = json.loads(ok(blobless, "list", "--json"))
    assert len(listed) == 6 and all(m["status"] in ("fresh", "stale") for m in listed)
    mid = next(m["id"] for m in listed if m["title"] == "f returns one")
    shown = ok(blobless, "show", mid)
    assert "pkg/a.py::f" in shown and "stale" in shown
    assert "g is two" in ok(blobless, "context")


def test_blobless_offline_uncommitted_change_is_said_as_uncommitted(blobless: Path, full: Path) -> None:
    """A change only in the work tree of the offline clone: stale "(uncommitted)", as in a full clone."""
    for repo in (blobless, full):
        (repo / "web/load.js").write_text(JS2.replace("return 0", "return 9"), encoding="utf-8")
    got, want = statuses(blobless), statuses(full)
    git(full, "checkout", "--", "web/load.js")
    assert got == want
    assert got["web/load.js::keep"][0] == "stale" and "(uncommitted)" in got["web/load.js::keep"][1]


def test_blobless_offline_old_revision_names_the_missing_blob(blobless: Path, full: Path) -> None:
    """At a revision whose blobs the clone lacks: "unchecked" naming the blob, path and revision and the fetch
    command, never a verdict; after that very command (remote back), the full clone's verdict."""
    rev = git(blobless, "rev-parse", "HEAD~3").strip()  # the memories' commit: every blob there is gone
    lacking = missing_objects(blobless)
    got = statuses(blobless, "--rev", rev)
    want = statuses(full, "--rev", rev)
    assert set(got) == set(want)
    for anchor, (status, reason) in got.items():
        assert status == "unchecked", (anchor, status, reason)
        path = anchor.split("::")[0]
        oid = git(full, "rev-parse", f"{rev}:{path}").strip()
        assert oid in lacking
        assert f"object {oid} ({path} at {rev[:12]}) is not in this partial clone" in reason
        assert "could not be reached" in reason and f"git fetch origin {oid}" in reason
    # the command said works, once the remote is back
    git(blobless, "remote", "set-url", "origin", f"file://{full.parent.parent}/src")
    source_url = git(full, "remote", "get-url", "origin").strip()
    git(blobless, "remote", "set-url", "origin", source_url)
    for _anchor, (_s, reason) in got.items():
        git(blobless, *reason.rsplit("to check it: git ", 1)[1].split())
    offline(blobless)
    assert statuses(blobless, "--rev", rev) == want


def test_blobless_online_fetches_what_it_needs(source: Path, tmp_path: Path, full: Path) -> None:
    """The remote reachable: what is missing is fetched (bounded) and the verdicts are the full clone's."""
    repo = clone(source, tmp_path / "online", "--filter=blob:none")
    rev = git(repo, "rev-parse", "HEAD~2").strip()
    assert statuses(repo, "--rev", rev) == statuses(full, "--rev", rev)


@pytest.mark.parametrize("where", ["closed-port", "silent-port"])
def test_unreachable_remote_never_hangs(blobless: Path, where: str, silent_port: int,
                                        monkeypatch: pytest.MonkeyPatch, run_cli) -> None:
    """A remote on a closed port fails at once; one that never answers is given up after ``FETCH_SECONDS``,
    once for the command (the other missing blobs are not tried), and the anchors are "unchecked"."""
    from gitmem import git as gitmod

    port = closed_port() if where == "closed-port" else silent_port
    offline(blobless, f"git://127.0.0.1:{port}/repo")
    monkeypatch.setattr(gitmod, "FETCH_SECONDS", 2.0)
    start = time.monotonic()
    code, out, err = run_cli(blobless, "stale", "--all", "--json", "--rev", "HEAD~3")
    took = time.monotonic() - start
    assert code == 0, err
    assert took < 15, took
    anchors = [a for m in json.loads(out) for a in m["anchors"]]
    assert anchors and all(a["status"] == "unchecked" for a in anchors)
    if where == "silent-port":
        assert any("took over 2 s" in a["reason"] for a in anchors)


def test_git_hooks_offline_never_fetch_nor_fail(blobless: Path, silent_port: int) -> None:
    """A commit in the offline clone (remote silent: a fetch would hang): the hooks finish at once, the commit is
    made, and the anchors it changed are stale; nothing was fetched."""
    ok(blobless, "hooks", "install")
    offline(blobless, f"git://127.0.0.1:{silent_port}/repo")
    before = missing_objects(blobless)
    (blobless / "pkg/a.py").write_text(A2.replace("return 5", "return 6"), encoding="utf-8")
    start = time.monotonic()
    proc = subprocess.run(["git", "commit", "-qam", "h changes"], cwd=blobless, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - start < 9.5  # a hook waiting on the silent remote would take its 10 s limit
    assert "Traceback" not in proc.stderr and "check that git works" not in proc.stderr
    assert missing_objects(blobless) == before
    got = {m["title"]: m["status"] for m in json.loads(ok(blobless, "list", "--json"))}
    assert got["h is five"] == "stale" and got["keep is zero"] == "fresh"


def test_session_start_offline_injects_memories(blobless: Path) -> None:
    event = {"hook_event_name": "SessionStart", "session_id": "s-partial", "cwd": str(blobless),
             "source": "startup", "transcript_path": ""}
    proc = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.claude", "session-start"],
                          cwd=blobless, input=json.dumps(event), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "g is two" in context and "f returns one" in context


def test_library_read_says_missing_not_absent(blobless: Path, full: Path) -> None:
    """``Repo.read`` of a blob the clone lacks raises ``MissingObject`` (it is not an absent file); a path that
    is not there is still None; the cat-file process serves on after it."""
    from gitmem.errors import MissingObject
    from gitmem.git import Repo

    repo = Repo(blobless)
    rev = repo.resolve("HEAD~3")
    with pytest.raises(MissingObject) as e:
        repo.read(rev, "pkg/a.py")
    assert e.value.oid == git(full, "rev-parse", f"{rev}:pkg/a.py").strip()
    assert e.value.remote == "origin" and "pkg/a.py at" in e.value.message
    assert repo.read(rev, "no/such.py") is None
    assert repo.read("HEAD", "pkg/a.py") == A2.encode()


# -- treeless, shallow ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("flags", [("--filter=tree:0",), ("--filter=blob:none", "--depth=2")],
                         ids=["treeless", "shallow-blobless"])
def test_treeless_and_shallow_blobless_offline(source: Path, tmp_path: Path, full: Path,
                                               flags: tuple[str, ...]) -> None:
    """Never a wrong verdict: at the work tree and at an old revision, each anchor has the full clone's status
    or is "unchecked" naming a missing object; a committed change is never "uncommitted"."""
    repo = clone(source, tmp_path / "c", *flags)
    offline(repo)
    shallow = "--depth=2" in flags
    lacking = set() if shallow else missing_objects(repo)
    for rev in ((), ("--rev", git(full, "rev-parse", "HEAD~1" if shallow else "HEAD~2").strip())):
        want = statuses(full, *rev)
        got = statuses(repo, *rev)
        assert set(got) == set(want)
        for anchor, (status, reason) in got.items():
            assert "(uncommitted)" not in reason, (anchor, reason)
            if status == "unchecked":
                assert "is not in this partial clone" in reason and "git fetch origin " in reason
                oid = reason.split("git fetch origin ")[1].split()[0]
                assert not lacking or oid in lacking
            else:
                assert status == want[anchor][0], (anchor, got[anchor], want[anchor])


# -- sparse checkouts ------------------------------------------------------------------------------------------------


def test_sparse_checkout_anchors_and_judges_code_outside_the_cone(source: Path, tmp_path: Path, full: Path) -> None:
    repo = clone(source, tmp_path / "sparse")
    git(repo, "sparse-checkout", "set", "--cone", "pkg", ".gitmem")
    assert not (repo / "other").exists() and not (repo / "web").exists()
    assert statuses(repo) == statuses(full)
    rev = git(full, "rev-parse", "HEAD~2").strip()
    assert statuses(repo, "--rev", rev) == statuses(full, "--rev", rev)
    # anchored from HEAD's blob, though the file is not in the work tree
    mid = ok(repo, "remember", "load doubles", "--anchor", "web/load.js::load").strip()
    got = next(m for m in json.loads(ok(repo, "stale", "--all", "--json")) if m["id"] == mid)
    assert [(a["anchor"], a["status"]) for a in got["anchors"]] == [("web/load.js::load", "fresh")]
    # a commit inside the cone: the outside anchors are neither deleted nor uncommitted
    ok(repo, "hooks", "install")
    commit(repo, "more", {"pkg/c.py": "x = 1\n"})
    after = statuses(repo)
    assert after["web/load.js::load"][0] in ("fresh", "stale")
    assert all(s not in ("deleted",) and "uncommitted" not in r for s, r in after.values())


def test_sparse_blobless_offline_says_what_to_fetch(source: Path, tmp_path: Path, full: Path) -> None:
    """A sparse checkout of a blobless clone has no blob for the files outside its cone: their anchors are
    "unchecked" naming the blob ("in the index") and the fetch; anchoring there fails saying the same; with the
    remote back, both work."""
    repo = clone(source, tmp_path / "sb", "--filter=blob:none", "--sparse")
    git(repo, "sparse-checkout", "set", "--cone", "pkg", ".gitmem")
    offline(repo)
    got = statuses(repo)
    want = statuses(full)
    for anchor, (status, reason) in got.items():
        if anchor.startswith("pkg/"):
            assert (status, reason) == want[anchor]
        else:
            path = anchor.split("::")[0]
            oid = git(full, "rev-parse", f"HEAD:{path}").strip()
            assert status == "unchecked"
            assert f"object {oid} ({path} in the index) is not in this partial clone" in reason
    p = gitmem(repo, "remember", "g note", "--anchor", "other/b.py::g")
    assert p.returncode == 1
    oid = git(full, "rev-parse", "HEAD:other/b.py").strip()
    assert f"object {oid}" in p.stderr and f"git fetch origin {oid}" in p.stderr and "no file" not in p.stderr
    git(repo, "remote", "set-url", "origin", git(full, "remote", "get-url", "origin").strip())
    assert statuses(repo)["other/b.py::g"] == want["other/b.py::g"]
    assert ok(repo, "remember", "g note", "--anchor", "other/b.py::g").strip()


def test_no_lazy_fetch_settings_leave_network_commands_alone() -> None:
    """Reads run with lazy fetching off; fetch, push and the like keep their network."""
    from gitmem import git as gitmod

    assert {"fetch", "push", "pull", "remote", "merge", "clone"} <= gitmod._NETWORK_COMMANDS
    assert gitmod._NO_LAZY_ENV == {"GIT_NO_LAZY_FETCH": "1"}
    assert os.environ.get("GIT_NO_LAZY_FETCH") is None  # never set for the user's own git


def test_partial_clone_commands_that_fetch_run_in_process(blobless: Path, full: Path) -> None:
    """``stale`` and ``show`` in a partial clone run in the command's own process, where they may fetch (the warm
    process never does); elsewhere, and other commands, the warm process may answer."""
    from gitmem import layout
    from gitmem.daemon import front

    assert front._partial_clone(layout.of(blobless)) and not front._partial_clone(layout.of(full))
    assert {"stale", "show"} <= front.FETCHING_COMMANDS and "context" not in front.FETCHING_COMMANDS
