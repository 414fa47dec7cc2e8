"""Issue 24's setups tried as a demanding user would (breaker A): symbolic links, LFS files and the merge driver
on cases their own tests do not cover. Real git repositories, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from testing.gitmem_cli import gitmem, ok
from testing.repos import commit, git, make_repo

TS = 'export function greet(name: string): string {\n  return "hi " + name;\n}\n'


def _stale(cwd: Path, *args: str) -> dict[str, str]:
    """anchor text -> status of ``gitmem stale --json`` (anchors not listed are fresh)."""
    p = gitmem(cwd, "stale", *args, "--json")
    assert p.returncode in (0, 1), p.stderr
    return {a["anchor"]: a["status"] for m in json.loads(p.stdout) for a in m["anchors"]}


def test_links_checked_out_as_plain_files_core_symlinks_false(tmp_path: Path) -> None:
    """``core.symlinks=false`` (Windows' default) checks a link out as a file holding its text; git's index still
    says 120000 and ``git status`` is clean: gitmem follows it as git does, never "deleted (uncommitted)"."""
    repo = make_repo(tmp_path / "r")
    (repo / "src" / "ts").mkdir(parents=True)
    (repo / "src" / "ts" / "util.ts").write_text(TS)
    (repo / "linked").symlink_to("src")
    (repo / "AGENTS.md").write_text("# Agents\n\n## Rules\n\nTests first.\n")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    commit(repo, "init")
    ok(repo, "init")
    ok(repo, "remember", "greet says hi", "--anchor", "linked/ts/util.ts::greet")
    ok(repo, "remember", "the rules", "--anchor", "CLAUDE.md::Rules")
    commit(repo, "memories")
    clone = tmp_path / "plain"
    git(tmp_path, "clone", "-q", "-c", "core.symlinks=false", repo.as_uri(), str(clone))
    assert (clone / "CLAUDE.md").read_text() == "AGENTS.md" and not (clone / "CLAUDE.md").is_symlink()
    assert git(clone, "status", "--porcelain").strip() == ""
    ok(clone, "hooks", "install")
    assert _stale(clone) == {}
    assert _stale(clone, "--rev", "HEAD") == {}
    p = gitmem(clone, "remember", "greet again", "--anchor", "linked/ts/util.ts::greet")
    assert p.returncode == 0, p.stderr
    assert "leads to src/ts/util.ts" in p.stderr
    commit(clone, "rules changed", {"AGENTS.md": "# Agents\n\n## Rules\n\nLinter first.\n"})
    assert _stale(clone) == {"CLAUDE.md::Rules": "stale"}


def test_a_plain_file_that_only_looks_like_an_lfs_pointer_is_judged_by_its_bytes(tmp_path: Path) -> None:
    """A test fixture holding pointer text, not tracked by git-lfs: its ``size`` line changed is a change (the
    content id it names is the same, so judging it as an LFS file would call it fresh)."""
    repo = make_repo(tmp_path / "r")
    oid = "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize 1\n"
    commit(repo, "fixture", {"fixtures/pointer.txt": pointer, "app.py": "def f():\n    return 1\n"})
    ok(repo, "init")
    ok(repo, "remember", "the fixture is a one-byte pointer", "--anchor", "fixtures/pointer.txt")
    commit(repo, "memory")
    assert _stale(repo) == {} and _stale(repo, "--rev", "HEAD") == {}
    commit(repo, "fixture grows", {"fixtures/pointer.txt": pointer.replace("size 1", "size 2")})
    assert _stale(repo) == {"fixtures/pointer.txt": "stale"}
    assert _stale(repo, "--rev", "HEAD") == {"fixtures/pointer.txt": "stale"}
    assert _stale(repo, "--rev", "HEAD~1") == {}


def _merge(repo: Path, branch: str) -> tuple[int, str]:
    """``git merge --no-edit BRANCH``: (exit code, stdout + stderr)."""
    import subprocess

    p = subprocess.run(["git", "merge", "--no-edit", branch], cwd=repo, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def test_a_memory_added_on_both_sides_is_merged_without_a_base(tmp_path: Path) -> None:
    """The commit that wrote a memory cherry-picked onto two branches, then each side rewrites its text: the merge
    base has no such file, so git runs the driver with an empty base (add/add). Two different texts are a
    conflict, as with a base; fields only one side has are kept, never one side taken as the other's base."""
    repo = make_repo(tmp_path / "r")
    commit(repo, "code", {"a.py": "def f(x):\n    return x + 1\n"})
    ok(repo, "init")
    commit(repo, "gitmem")
    main = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(repo, "checkout", "-qb", "feature")
    mid = ok(repo, "remember", "f adds one", "--anchor", "a.py::f").strip()
    commit(repo, "memory")
    git(repo, "checkout", "-q", main)
    git(repo, "cherry-pick", "feature")  # the same memory file, added on main too
    path = repo / ".gitmem" / "memories" / f"{mid}.md"
    text = path.read_text()
    path.write_text(text + "\nIt adds one to its argument (main).\n")
    commit(repo, "main's text")
    git(repo, "checkout", "-q", "feature")
    path.write_text(text + "\nIt adds one, never zero (feature).\n")
    commit(repo, "feature's text")
    code, out = _merge(repo, main)
    assert code != 0, out  # both rewrote the text: a conflict, not theirs taken over ours
    merged = path.read_text()
    assert "(main)" in merged and "(feature)" in merged and "<<<<<<<" in merged, merged


def test_a_hostile_anchor_key_cannot_forge_conflict_markers(tmp_path: Path) -> None:
    """An anchor key holding line breaks (a memory file written by hand, or by a hostile branch) that ends in a
    real conflict: the marker line stays one line, so the key cannot add a marker or an anchor of its own to
    the ``anchors:`` list, and the driver's stderr line stays one line."""
    import subprocess

    from gitmem.memfile import dumps, loads

    repo = make_repo(tmp_path / "r")
    commit(repo, "code", {"a.py": "def f(x):\n    return x + 1\n"})
    ok(repo, "init")
    mid = ok(repo, "remember", "f adds one", "--anchor", "a.py::f").strip()
    commit(repo, "memory")
    path = repo / ".gitmem" / "memories" / f"{mid}.md"
    main = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()

    def moved_to(key: str) -> str:
        memory = loads(path.read_text())
        a = memory.anchors[0]
        p, _, symbol = key.partition("::")
        memory.anchors[0] = type(a)(**{**a.__dict__, "path": p, "symbol": symbol, "was": "a.py::f"})
        return dumps(memory)

    git(repo, "checkout", "-qb", "hostile")
    commit(repo, "moved there", {f".gitmem/memories/{mid}.md": moved_to("c.py::f\n>>>>>>> theirs\n- anchor: evil.py")})
    git(repo, "checkout", "-q", main)
    commit(repo, "moved here", {f".gitmem/memories/{mid}.md": moved_to("b.py::f")})
    p = subprocess.run(["git", "merge", "--no-edit", "hostile"], cwd=repo, capture_output=True, text=True, timeout=120)
    assert p.returncode != 0
    lines = path.read_text().splitlines()
    assert [line[:7] for line in lines if line[:7] in ("<<<<<<<", "=======", ">>>>>>>")] == \
        ["<<<<<<<", "=======", ">>>>>>>"], lines
    assert "- anchor: evil.py" not in lines
    said = [line for line in p.stderr.splitlines() if "anchor conflict" in line]
    assert len(said) == 1 and "keep one side's lines" in said[0] and "\\n" in said[0], p.stderr


def test_a_link_to_an_lfs_file_is_anchored_as_the_lfs_file(tmp_path: Path) -> None:
    """``link.csv -> data/big.csv`` with ``data/big.csv`` in LFS: the anchor on the link records the content id
    (``lfs1:``) as one on the target does, so it is judged alike in a pointer-only clone; a change is stale."""
    from tests.test_gitsetup_lfs import _use_python_filter

    repo = make_repo(tmp_path / "r")
    _use_python_filter(repo, tmp_path)
    (repo / "data").mkdir()
    (repo / "link.csv").symlink_to("data/big.csv")
    commit(repo, "lfs", {".gitattributes": "data/*.csv filter=lfs diff=lfs merge=lfs -text\n",
                         "data/big.csv": "a,b\n1,2\n"})
    assert git(repo, "show", "HEAD:data/big.csv").startswith("version https://git-lfs")
    ok(repo, "init")
    ok(repo, "remember", "the target", "--anchor", "data/big.csv")
    ok(repo, "remember", "through the link", "--anchor", "link.csv")
    fps = {line.strip() for f in (repo / ".gitmem" / "memories").glob("*.md")
           for line in f.read_text().splitlines() if "fingerprint:" in line}
    assert len(fps) == 1 and next(iter(fps)).startswith("fingerprint: lfs1:"), fps
    commit(repo, "memories")
    clone = tmp_path / "pointers"
    git(tmp_path, "clone", "-q", repo.as_uri(), str(clone))
    for where in (repo, clone):
        assert _stale(where) == {} and _stale(where, "--rev", "HEAD") == {}
    commit(repo, "changed", {"data/big.csv": "a,b\n1,3\n"})
    git(clone, "pull", "-q", "--ff-only")
    for where in (repo, clone):
        assert _stale(where) == {"data/big.csv": "stale", "link.csv": "stale"}


def test_an_absolute_link_made_in_another_clone_is_unchecked_not_deleted(tmp_path: Path) -> None:
    """``abs.py -> /path/of/the/clone/src/impl.py`` leads into the repository where it was made and outside any
    other clone: there, anchors made through it are not judged by the link's text (no "deleted", no "stale"),
    they are unchecked, saying why; where it was made they stay fresh."""
    repo = make_repo(tmp_path / "r")
    (repo / "src").mkdir()
    (repo / "src" / "impl.py").write_text("def f(x):\n    return x + 1\n")
    (repo / "abs.py").symlink_to(repo / "src" / "impl.py")
    commit(repo, "abs link")
    ok(repo, "init")
    ok(repo, "remember", "f through the absolute link", "--anchor", "abs.py::f")
    ok(repo, "remember", "the module through it", "--anchor", "abs.py")
    commit(repo, "memories")
    assert _stale(repo) == {} and _stale(repo, "--rev", "HEAD") == {}
    clone = tmp_path / "elsewhere"
    git(tmp_path, "clone", "-q", repo.as_uri(), str(clone))
    for rev in ((), ("--rev", "HEAD")):
        assert _stale(clone, *rev) == {"abs.py::f": "unchecked", "abs.py": "unchecked"}, rev
    p = gitmem(clone, "stale", "--json")
    reasons = {a["reason"] for m in json.loads(p.stdout) for a in m["anchors"]}
    assert all("points outside the repository" in r and "cannot be checked" in r for r in reasons), reasons
