"""Files stored with git-lfs (issue 24): judged by their content id, the same at the work tree and at ``--rev``.

Real repositories, two ways of storing LFS files: a clean/smudge filter written in Python here that writes real
LFS pointers (the spec's v1) and keeps the content where git-lfs keeps it (``.git/lfs/objects``), so these run
without git-lfs; and Debian's git-lfs itself (``git lfs install --local``, ``git lfs track``, a clone over
``file://``), skipped with the reason where it is not installed. A clone without any LFS filter holds the pointers
(CI's default: no git-lfs, or ``GIT_LFS_SKIP_SMUDGE=1``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from gitmem import lfs
from gitmem.anchors import Resolver
from gitmem.git import Repo
from gitmem.model import Anchor, Status
from testing.gitmem_cli import gitmem, ok
from testing.repos import commit, git, make_repo, write

#: The clean/smudge filter (what git-lfs does, in Python): clean writes the content to the local object store
#: and the pointer to git; smudge gives the content back when the store has it, else the pointer.
FILTER = r'''
import hashlib, os, subprocess, sys
mode, data = sys.argv[1], sys.stdin.buffer.read()
common = subprocess.run(["git", "rev-parse", "--git-common-dir"], capture_output=True, check=True).stdout.strip()
def obj(oid):
    return os.path.join(os.fsdecode(common), "lfs", "objects", oid[:2], oid[2:4], oid)
if mode == "clean":
    if data.startswith(b"version https://git-lfs.github.com/spec/v1\n") and len(data) <= 1024:
        out = data
    else:
        oid = hashlib.sha256(data).hexdigest()
        os.makedirs(os.path.dirname(obj(oid)), exist_ok=True)
        with open(obj(oid), "wb") as f:
            f.write(data)
        out = b"version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n" % (oid.encode(), len(data))
else:
    out = data
    if data.startswith(b"version https://git-lfs.github.com/spec/v1\n"):
        oid = data.split(b"oid sha256:")[1][:64].decode()
        if os.path.exists(obj(oid)):
            out = open(obj(oid), "rb").read()
sys.stdout.buffer.write(out)
'''

DATA_V1 = "region,total\nnorth,10\nsouth,20\n"
DATA_V2 = "region,total\nnorth,11\nsouth,20\n"
CONFIG_V1 = json.dumps({"limits": {"rate": 5, "burst": 9}, "owner": "ops"}, indent=2) + "\n"
CONFIG_V2 = json.dumps({"limits": {"rate": 5, "burst": 9}, "owner": "infra"}, indent=2) + "\n"
CONFIG_V3 = json.dumps({"limits": {"rate": 7, "burst": 9}, "owner": "infra"}, indent=2) + "\n"


def _use_python_filter(repo: Path, tmp_path: Path) -> None:
    script = tmp_path / "lfs_filter.py"
    script.write_text(FILTER)
    git(repo, "config", "filter.lfs.clean", f"'{sys.executable}' '{script}' clean")
    git(repo, "config", "filter.lfs.smudge", f"'{sys.executable}' '{script}' smudge")
    git(repo, "config", "filter.lfs.required", "true")


def _statuses(cwd: Path, *args: str) -> dict[str, str]:
    """anchor text -> status of ``gitmem stale --json`` (anchors not listed are fresh)."""
    p = gitmem(cwd, "stale", *args, "--json")
    assert p.returncode in (0, 1), p.stderr
    return {a["anchor"]: a["status"] for m in json.loads(p.stdout) for a in m["anchors"]}


def _remember(repo: Path, text: str, anchor: str) -> str:
    out = json.loads(ok(repo, "remember", text, "--anchor", anchor, "--json"))
    return str(out["id"])


def _lfs_repo(tmp_path: Path, *, real: bool) -> Path:
    """A repository with an LFS csv at the root and an LFS json in a subfolder, gitmem and its hooks on."""
    repo = make_repo(tmp_path / "origin")
    if real:
        git(repo, "lfs", "install", "--local")
        git(repo, "lfs", "track", "*.csv", "data/**/*.json")
    else:
        _use_python_filter(repo, tmp_path)
        write(repo, {".gitattributes": "*.csv filter=lfs diff=lfs merge=lfs -text\n"
                                       "data/**/*.json filter=lfs diff=lfs merge=lfs -text\n"})
    commit(repo, "lfs files", {"sales.csv": DATA_V1, "data/deep/config.json": CONFIG_V1,
                               "app.py": "def main():\n    return 1\n"})
    ok(repo, "init")
    return repo


def _check_setup(tmp_path: Path, repo: Path) -> None:
    """The model, end to end: fresh at the work tree, at --rev HEAD and in a pointer-only clone; a committed
    content change stale in all three, named by the post-commit hook."""
    assert lfs.parse_pointer(git(repo, "show", "HEAD:sales.csv").encode()) is not None  # git holds the pointer
    assert (repo / "sales.csv").read_text() == DATA_V1  # the checkout holds the content
    file_mem = _remember(repo, "sales.csv totals are per region", "sales.csv")
    key_mem = _remember(repo, "the rate limit lives in config.json", "data/deep/config.json::limits.rate")
    anchors = (repo / ".gitmem" / "memories" / f"{file_mem}.md").read_text()
    assert "fingerprint: lfs1:" + hashlib.sha256(DATA_V1.encode()).hexdigest() in anchors
    commit(repo, "memories")
    assert _statuses(repo) == {}
    assert _statuses(repo, "--rev", "HEAD") == {}

    clone = tmp_path / "pointers"
    git(tmp_path, "clone", "-q", repo.as_uri(), str(clone), env={"GIT_LFS_SKIP_SMUDGE": "1"})
    assert lfs.parse_pointer((clone / "sales.csv").read_bytes()) is not None  # CI's checkout: the pointer
    ok(clone, "hooks", "install")
    assert _statuses(clone) == {}
    assert _statuses(clone, "--rev", "HEAD") == {}

    # a change elsewhere in the LFS json: whole file changed for the pointer-only clone, not the key where
    # the content is here
    commit(repo, "owner", {"data/deep/config.json": CONFIG_V2})
    assert _statuses(repo) == {}
    assert _statuses(repo, "--rev", "HEAD") == {}

    sha = commit(repo, "new data", {"sales.csv": DATA_V2, "data/deep/config.json": CONFIG_V3})
    listed = {m["id"]: m["status"] for m in json.loads(ok(repo, "list", "--json"))}
    assert listed[file_mem] == "stale" and listed[key_mem] == "stale"  # the post-commit hook's analysis
    for where in ((), ("--rev", "HEAD")):
        got = gitmem(repo, "stale", *where, "--json")
        by_anchor = {a["anchor"]: a for m in json.loads(got.stdout) for a in m["anchors"]}
        assert by_anchor["sales.csv"]["status"] == "stale"
        assert by_anchor["sales.csv"]["commit"] == sha
        assert by_anchor["data/deep/config.json::limits.rate"]["status"] == "stale"
    git(clone, "pull", "-q", "--ff-only", env={"GIT_LFS_SKIP_SMUDGE": "1"})
    listed = {m["id"]: m["status"] for m in json.loads(ok(clone, "list", "--json"))}
    assert listed[file_mem] == "stale" and listed[key_mem] == "stale"  # the post-merge hook's, on pointers
    for where in ((), ("--rev", "HEAD")):
        got = gitmem(clone, "stale", *where, "--json")
        by_anchor = {a["anchor"]: a for m in json.loads(got.stdout) for a in m["anchors"]}
        assert by_anchor["sales.csv"]["status"] == "stale", where
        assert by_anchor["sales.csv"]["commit"] == sha
        rate = by_anchor["data/deep/config.json::limits.rate"]
        assert rate["status"] == "stale" and "git lfs pull" in rate["reason"]
    # the commit before: the key unchanged where the content is here; only the whole file is known where not
    assert _statuses(repo, "--rev", "HEAD~1") == {}
    assert _statuses(clone, "--rev", "HEAD~1") == {"data/deep/config.json::limits.rate": "stale"}
    assert _statuses(clone, "--rev", "HEAD~2") == {}


def test_lfs_through_a_python_filter_writing_real_pointers(tmp_path: Path) -> None:
    _check_setup(tmp_path, _lfs_repo(tmp_path, real=False))


@pytest.mark.skipif(shutil.which("git-lfs") is None, reason="git-lfs is not installed (Debian's git-lfs; .ci/run "
                                                            "installs it)")
def test_lfs_through_real_git_lfs(tmp_path: Path) -> None:
    _check_setup(tmp_path, _lfs_repo(tmp_path, real=True))


@pytest.mark.skipif(shutil.which("git-lfs") is None, reason="git-lfs is not installed")
def test_a_clone_where_git_lfs_is_configured_but_not_on_path(tmp_path: Path) -> None:
    """git-lfs's filter configured and required (as ``git lfs install`` leaves it) but the program not on PATH:
    git itself cannot run the filter (``git status`` fails); gitmem judges the pointers as in any pointer-only
    clone, at the work tree and at --rev, touched files or not."""
    repo = _lfs_repo(tmp_path, real=True)
    mid = _remember(repo, "sales.csv totals are per region", "sales.csv")
    commit(repo, "memory")
    bare_bin = tmp_path / "bin"
    bare_bin.mkdir()
    (bare_bin / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    env = {"PATH": f"{bare_bin}{os.pathsep}{Path(sys.executable).parent}"}
    clone = tmp_path / "nolfs"
    git(tmp_path, "clone", "-q", repo.as_uri(), str(clone), env=env)
    git(clone, "config", "filter.lfs.process", "git-lfs filter-process")
    git(clone, "config", "filter.lfs.required", "true")
    os.utime(clone / "sales.csv")  # git must run the clean filter to compare it
    assert lfs.parse_pointer((clone / "sales.csv").read_bytes()) is not None
    for where in ((), ("--rev", "HEAD")):
        p = gitmem(clone, "stale", *where, "--json", env=env)
        assert p.returncode == 0 and json.loads(p.stdout) == [], (where, p.stdout, p.stderr)
    # what needs git's own diff of the work tree (git status fails here too) says why and what to do
    p = gitmem(clone, "context", env=env)
    assert p.returncode == 1 and "git-lfs cannot run" in p.stderr and "install git-lfs" in p.stderr, p.stderr
    commit(repo, "change", {"sales.csv": DATA_V2})
    git(clone, "-c", "filter.lfs.process=", "-c", "filter.lfs.required=false", "pull", "-q", "--ff-only", env=env)
    for where in ((), ("--rev", "HEAD")):
        p = gitmem(clone, "stale", *where, "--json", env=env)
        assert [m["id"] for m in json.loads(p.stdout)] == [mid], (where, p.stderr)


def test_a_symbol_in_an_lfs_file_needs_its_content(tmp_path: Path) -> None:
    """Where only the pointer is here, a symbol of an LFS file cannot be anchored: the message says why and
    what to do."""
    repo = _lfs_repo(tmp_path, real=False)
    commit(repo, "gitmem")
    clone = tmp_path / "pointers"
    git(tmp_path, "clone", "-q", repo.as_uri(), str(clone))
    p = gitmem(clone, "remember", "rate", "--anchor", "data/deep/config.json::limits.rate")
    assert p.returncode != 0
    assert "git-lfs pointer" in p.stderr and "git lfs pull" in p.stderr and "--anchor data/deep/config.json" in p.stderr
    assert gitmem(clone, "remember", "the config", "--anchor", "data/deep/config.json").returncode == 0
    listed = json.loads(ok(clone, "symbols", "data/deep/config.json", "--json"))
    assert listed["lfs_pointer"] is True and listed["symbols"] == []
    assert "git-lfs pointer" in ok(clone, "symbols", "data/deep/config.json")
    assert json.loads(ok(repo, "symbols", "data/deep/config.json", "--json"))["lfs_pointer"] is False


def test_older_anchors_on_lfs_files_keep_working(tmp_path: Path) -> None:
    """Anchors an earlier gitmem made on an LFS file (``raw1``/``kv1`` of the content, ``raw1`` of the pointer
    text) are judged by the content id where their recorded form cannot be compared: fresh until the content
    changes, in a pointer-only clone too; unchecked (never fresh) without the anchor's commit."""
    from gitmem.code.symbols import _raw_fingerprint, symbol_table

    repo = _lfs_repo(tmp_path, real=False)
    base = git(repo, "rev-parse", "HEAD").strip()
    pointer_text = git(repo, "show", "HEAD:sales.csv").encode()
    rate = symbol_table(CONFIG_V1.encode(), "data/deep/config.json")["limits.rate"]
    old = [Anchor(path="sales.csv", commit=base, kind="file", span=(1, 3),
                  fingerprint=_raw_fingerprint(DATA_V1.encode())),
           Anchor(path="sales.csv", commit=base, kind="file", span=(1, 3), fingerprint=_raw_fingerprint(pointer_text)),
           Anchor(path="data/deep/config.json", symbol="limits.rate", commit=base, kind=rate.kind, span=(3, 3),
                  fingerprint=rate.fingerprint)]
    clone = tmp_path / "pointers"
    git(tmp_path, "clone", "-q", repo.as_uri(), str(clone))
    for where in (repo, clone):
        r = Resolver(Repo(where))
        for a in old:
            for rev in (None, "HEAD"):
                assert r.status(a, rev).status == Status.FRESH, (where, a, rev, r.status(a, rev).reason)
    sha = commit(repo, "change", {"sales.csv": DATA_V2, "data/deep/config.json": CONFIG_V3})
    git(clone, "pull", "-q", "--ff-only")
    for where in (repo, clone):
        r = Resolver(Repo(where))
        for a in old:
            for rev in (None, "HEAD"):
                st = r.status(a, rev)
                assert st.status == Status.STALE and st.commit == sha, (where, a, rev, st.reason)
    lost = Anchor(path="sales.csv", commit="1" * 40, kind="file", span=(1, 3),
                  fingerprint=_raw_fingerprint(DATA_V1.encode()))
    assert Resolver(Repo(clone)).status(lost, "HEAD").status == Status.UNCHECKED


@pytest.mark.parametrize(("text", "want"), [
    (b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"a" * 64 + b"\nsize 12345\n", ("a" * 64, 12345)),
    # the spec's extension lines sort before oid and size
    (b"version https://git-lfs.github.com/spec/v1\next-0-foo sha256:" + b"b" * 64 + b"\noid sha256:" + b"a" * 64
     + b"\nsize 3\n", ("a" * 64, 3)),
    (b"version https://hawser.github.com/spec/v1\noid sha256:" + b"c" * 64 + b"\nsize 0\n", ("c" * 64, 0)),
    (b"version https://git-lfs.github.com/spec/v1\nsize 3\noid sha256:" + b"a" * 64 + b"\n", None),  # unsorted
    (b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"a" * 63 + b"\nsize 3\n", None),
    (b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"a" * 64 + b"\nsize 3", None),  # no final LF
    (b"version https://git-lfs.github.com/spec/v2\noid sha256:" + b"a" * 64 + b"\nsize 3\n", None),
    (b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"a" * 64 + b"\nsize 3\n" + b"x" * 1024, None),
    (b"def main():\n    pass\n", None),
])
def test_pointer_parsing_follows_the_spec(text: bytes, want: tuple[str, int] | None) -> None:
    got = lfs.parse_pointer(text)
    assert (None if got is None else (got.oid, got.size)) == want


def test_with_extensions_the_content_id_is_the_first_extensions_input() -> None:
    """The spec: ``ext-<priority>-<name> sha256:<hash of the extension's input>``; the lowest priority's input is
    the content as checked out, which is what gitmem hashes in a work tree."""
    text = (b"version https://git-lfs.github.com/spec/v1\next-0-foo sha256:" + b"b" * 64
            + b"\next-1-bar sha256:" + b"c" * 64 + b"\noid sha256:" + b"a" * 64 + b"\nsize 3\n")
    got = lfs.parse_pointer(text)
    assert got is not None and got.extended and got.fingerprint == "lfs1:" + "b" * 64


def test_the_fingerprint_is_the_same_from_the_pointer_and_from_the_content() -> None:
    content = b"x,y\n1,2\n"
    oid = hashlib.sha256(content).hexdigest()
    pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n" % (oid.encode(), len(content))
    assert lfs.fingerprint(pointer) == lfs.fingerprint(content) == f"lfs1:{oid}"


def test_an_lfs_code_file_moved_and_changed(tmp_path: Path) -> None:
    """Code kept in LFS: a symbol anchor follows the file's move (the pre-commit hook re-anchors it against
    HEAD, where the new path is not yet); judged by its code where the content is here and by the file's
    content id in a pointer-only clone: fresh after the move in both, stale in both once the file changes."""
    repo = make_repo(tmp_path / "origin")
    _use_python_filter(repo, tmp_path)
    write(repo, {".gitattributes": "lib/**/*.py filter=lfs diff=lfs merge=lfs -text\n"})
    commit(repo, "code", {"lib/core/m.py": "def a():\n    return 1\n\n\ndef b():\n    return 2\n"})
    ok(repo, "init")
    mid = _remember(repo, "a returns one", "lib/core/m.py::a")
    commit(repo, "memory")
    git(repo, "mv", "lib/core/m.py", "lib/core/n.py")
    commit(repo, "move")
    assert "lib/core/n.py::a" in (repo / ".gitmem" / "memories" / f"{mid}.md").read_text()
    clone = tmp_path / "pointers"
    git(tmp_path, "clone", "-q", repo.as_uri(), str(clone))
    assert lfs.parse_pointer((clone / "lib/core/n.py").read_bytes()) is not None
    for where in (repo, clone):
        assert _statuses(where) == {} and _statuses(where, "--rev", "HEAD") == {}, where
    sha = commit(repo, "change", {"lib/core/n.py": "def a():\n    return 10\n\n\ndef b():\n    return 2\n"})
    git(clone, "pull", "-q", "--ff-only")
    for where in (repo, clone):
        for rev in ((), ("--rev", "HEAD")):
            got = json.loads(gitmem(where, "stale", *rev, "--json").stdout)
            assert [(m["id"], m["anchors"][0]["commit"]) for m in got] == [(mid, sha)], (where, rev)


@pytest.mark.skipif(shutil.which("git-lfs") is None, reason="git-lfs is not installed")
def test_a_symbol_in_an_lfs_file_in_a_clone_with_only_heads_content(tmp_path: Path) -> None:
    """A clone gets the LFS content of the commit it checks out, not of the history: a symbol anchored at an
    older commit whose code is unchanged at HEAD is fresh there (found by a new user: it was stale, 'LFS file
    content changed'); one whose code changed is stale."""
    repo = _lfs_repo(tmp_path, real=True)
    rate = _remember(repo, "the rate limit", "data/deep/config.json::limits.rate")
    owner = _remember(repo, "who owns the config", "data/deep/config.json::owner")
    commit(repo, "gitmem")
    commit(repo, "new owner", {"data/deep/config.json": CONFIG_V2})  # owner changed, limits.rate not
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", repo.as_uri(), str(clone))
    git(clone, "lfs", "install", "--local")
    git(clone, "lfs", "pull")  # HEAD's objects only, as a clone with git-lfs set up gets them
    assert (clone / "data/deep/config.json").read_text() == CONFIG_V2  # the content, through git-lfs
    assert not (clone / ".git/lfs/objects" / lfs.parse_pointer(
        git(clone, "show", "HEAD~1:data/deep/config.json").encode()).oid[:2]).exists()  # not the older one
    for where in ((), ("--rev", "HEAD")):
        got = _statuses(clone, *where)
        assert "data/deep/config.json::limits.rate" not in got, (where, got)
        assert got.get("data/deep/config.json::owner") == "stale", (where, got)
    listed = {m["id"] for m in json.loads(gitmem(clone, "stale", "--json").stdout)}
    assert rate not in listed and owner in listed
