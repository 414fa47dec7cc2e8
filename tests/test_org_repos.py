"""The organisation's repositories (issue 21): named, opened (local, bare, or mirrored from a URL and fetched),
their ref's commit, and the memory files of a commit read without a work tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import git as gitmod
from gitmem.errors import GitmemError
from gitmem.layout import org_cache_dir
from gitmem.org import repos
from gitmem.org.settings import OrgSettings
from testing.repos import commit, git, make_repo

MEM = ".gitmem/memories"


def _service(path: Path) -> Path:
    return make_repo(path, {"src/app.py": "def f():\n    return 1\n", f"{MEM}/a.md": "a\n", f"{MEM}/b.md": "b\n"})


def test_names_from_paths_urls_and_config(tmp_path: Path) -> None:
    assert repos.from_argument("git@github.com:team/billing.git", None) == \
        repos.OrgRepo("billing", "git@github.com:team/billing.git")
    assert repos.from_argument("https://git.example.com/team/ledger", None).name == "ledger"
    assert repos.from_argument(str(tmp_path / "x" / "pay.ments.git"), None).name == "pay.ments"
    here = repos.from_argument(".", None)
    assert here.name == Path.cwd().name and Path(here.location).is_absolute()
    s = OrgSettings(uri="/tmp/x", repos={"ledger": "../ledger", "web": "https://h/web.git"})
    got = repos.configured(s, tmp_path / "svc")
    assert got == [repos.OrgRepo("ledger", str(tmp_path / "ledger")), repos.OrgRepo("web", "https://h/web.git")]
    assert repos.find(s, tmp_path / "svc", "web") == got[1]
    assert repos.find(s, tmp_path / "svc", "nope") is None
    with pytest.raises(GitmemError):
        repos.from_argument("/", None)


def test_this_name_config_then_origin_then_folder(tmp_path: Path) -> None:
    r = _service(tmp_path / "My Service")
    assert repos.this_name(OrgSettings(), r) == "My-Service"
    git(r, "remote", "add", "origin", "git@github.com:team/payments.git")
    assert repos.this_name(OrgSettings(), r) == "payments"
    assert repos.this_name(OrgSettings(name="pay"), r) == "pay"


def test_local_work_tree_and_bare_repository(tmp_path: Path) -> None:
    work = _service(tmp_path / "svc")
    head = git(work, "rev-parse", "HEAD").strip()
    opened = repos.open_repo(repos.OrgRepo("svc", str(work)), fetch=True)
    assert not opened.is_bare and repos.ref_commit(opened, "") == head
    assert set(opened.files_under(head, MEM)) == {f"{MEM}/a.md", f"{MEM}/b.md"}

    bare = tmp_path / "inside" / "svc.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    b = repos.open_repo(repos.OrgRepo("svc", str(bare)), fetch=False)
    assert b.is_bare and repos.ref_commit(b, "") == head and repos.ref_commit(b, "main") == head
    files = b.files_under(head, MEM)
    assert b.read_blob(files[f"{MEM}/a.md"]) == b"a\n"
    assert b.read(head, "src/app.py") == b"def f():\n    return 1\n"
    with pytest.raises(GitmemError, match="no commit at ref"):
        repos.ref_commit(b, "no-such-branch")
    (tmp_path / "plain").mkdir()
    with pytest.raises(GitmemError, match="not a git repository"):
        repos.open_repo(repos.OrgRepo("x", str(tmp_path / "plain")), fetch=False)


def test_work_tree_ref_is_origin_head_when_it_has_one(tmp_path: Path) -> None:
    upstream = _service(tmp_path / "up")
    main = git(upstream, "rev-parse", "HEAD").strip()
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    git(clone, "checkout", "-q", "-b", "feature")
    commit(clone, "wip", {"src/app.py": "def f():\n    return 2\n"})
    assert repos.ref_commit(gitmod.Repo(clone), "") == main


def test_url_is_mirrored_then_fetched(tmp_path: Path) -> None:
    work = _service(tmp_path / "svc")
    bare = tmp_path / "remote" / "svc.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    git(work, "remote", "add", "origin", str(bare))
    url = bare.as_uri()
    r = repos.OrgRepo("svc", url)
    assert r.is_url
    m = repos.open_repo(r, fetch=True)
    assert m.is_bare and m.root.parent == org_cache_dir().resolve() and m.root == repos.mirror_dir(url).resolve()
    first = repos.ref_commit(m, "")
    assert first == git(work, "rev-parse", "HEAD").strip()

    second = commit(work, "drop b, change a", {f"{MEM}/a.md": "a2\n"})
    (work / MEM / "b.md").unlink()
    second = commit(work, "drop b", None)
    git(work, "push", "-q", "origin", "main")
    assert repos.ref_commit(repos.open_repo(r, fetch=False), "") == first  # not fetched: as it was
    m2 = repos.open_repo(r, fetch=True)
    assert repos.ref_commit(m2, "") == second
    changes = m2.changes_under(first, second, MEM)
    assert [(c.status, c.old_path, c.new_path) for c in changes] == [
        ("M", f"{MEM}/a.md", f"{MEM}/a.md"), ("D", f"{MEM}/b.md", None)]
    assert m2.changes_under(None, second, MEM) == [gitmod.FileChange("A", None, f"{MEM}/a.md")]
    assert m2.files_under(second, "src") == {"src/app.py": m2.blob_sha(second, "src/app.py")}


def test_unreachable_url_says_so_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(GitmemError) as e:
        repos.open_repo(repos.OrgRepo("gone", (tmp_path / "gone.git").as_uri()), fetch=True)
    assert "gone: cannot clone" in e.value.message and "\n" not in e.value.message and e.value.hint
    assert not any(p.suffix == ".git" for p in org_cache_dir().glob("gone-*"))


def test_a_folder_inside_a_work_tree_names_the_work_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = _service(tmp_path / "svc")
    monkeypatch.chdir(work / "src")
    assert repos.from_argument(".", None) == repos.OrgRepo("svc", str(work))
    with pytest.raises(GitmemError, match="does not exist"):
        repos.open_repo(repos.from_argument("nothing-here", None), fetch=False)
