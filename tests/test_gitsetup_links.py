"""Symbolic links (issue 24): a memory anchored through a link is judged by the file the link leads to.

Real repositories with real links (mode 120000 in git), the real CLI and the real git hooks ``gitmem init``
installs: ``CLAUDE.md -> AGENTS.md`` with a section anchor, a Python module re-exported through
``pkg/compat.py -> ../core/impl.py``, a linked folder (``lib -> src/lib``), a chain, a link retargeted, a
link replaced by a regular file, links leading outside the repository, in a cycle or to nothing; the
post-commit analyzer on a commit that touches only the target; ``stale --rev`` from git's objects; the
agent hook reading through the link. docs/git-setups/links.md describes the model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem.git import WORKTREE, Repo
from testing.repos import commit, git, make_repo

AGENTS = "# Agents\n\n## Rules\n\nRun the tests first.\n\n## Style\n\nShort lines.\n"
AGENTS_RULES_CHANGED = "# Agents\n\n## Rules\n\nRun the linter first, then the tests.\n\n## Style\n\nShort lines.\n"
AGENTS_STYLE_CHANGED = "# Agents\n\n## Rules\n\nRun the tests first.\n\n## Style\n\nLong lines are fine.\n"

IMPL = "def impl(x):\n    return x + 1\n\n\ndef other(y):\n    return y * 2\n"
IMPL_OTHER_CHANGED = "def impl(x):\n    return x + 1\n\n\ndef other(y):\n    return y * 3\n"
IMPL_CHANGED = "def impl(x):\n    return x + 2\n\n\ndef other(y):\n    return y * 2\n"

LIB = "def f(a):\n    return a\n\n\ndef g(b):\n    return -b\n"


def _link(repo: Path, path: str, target: str) -> None:
    """``path`` (repo-relative) made a symbolic link whose text is ``target``, replacing what is there."""
    p = repo / path
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.is_symlink() or p.exists():
        p.unlink()
    p.symlink_to(target)


def _commit(repo: Path, message: str, files: dict[str, str | bytes] | None = None) -> tuple[str, str]:
    """Commit with gitmem's hooks running; returns (SHA, the hooks' stderr)."""
    if files:
        for rel, text in files.items():
            p = repo / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            if p.is_symlink():
                p.unlink()
            p.write_text(text) if isinstance(text, str) else p.write_bytes(text)
    git(repo, "add", "-A")
    proc = subprocess.run(["git", "commit", "-qm", message], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return git(repo, "rev-parse", "HEAD").strip(), proc.stderr


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:
    r = make_repo(tmp_path / "r")
    for rel, text in {"AGENTS.md": AGENTS, "core/impl.py": IMPL, "src/lib/x.py": LIB, "README.md": "x\n"}.items():
        (r / rel).parent.mkdir(parents=True, exist_ok=True)
        (r / rel).write_text(text)
    _link(r, "CLAUDE.md", "AGENTS.md")
    _link(r, "pkg/compat.py", "../core/impl.py")
    _link(r, "lib", "src/lib")
    commit(r, "init")
    code, _, err = run_cli(r, "init")  # with the git hooks
    assert code == 0, err
    (r / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    _commit(r, "gitmem")
    return r


def _remember(run_cli, repo: Path, text: str, anchor: str, *more: str) -> tuple[str, str]:
    """(id, stderr) of ``gitmem remember TEXT --anchor ANCHOR``, asserted to succeed."""
    code, out, err = run_cli(repo, "remember", text, "--anchor", anchor, *more)
    assert code == 0, err
    return out.strip(), err


def _status(run_cli, repo: Path, mid: str, *rev: str) -> dict[str, Any]:
    """The first anchor's status of memory ``mid`` from ``gitmem show --json`` (the work tree) or ``stale --rev``."""
    if rev:
        code, out, err = run_cli(repo, "stale", "--rev", rev[0], "--json")
        assert code in (0, 1), err
        found = [m for m in json.loads(out) if m["id"] == mid]
        return found[0]["anchors"][0] if found else {"status": "fresh"}
    code, out, err = run_cli(repo, "show", mid, "--json")
    assert code == 0, err
    return json.loads(out)["anchor_statuses"][0]


def _listed(run_cli, repo: Path, mid: str) -> str:
    """The status ``gitmem list`` shows (the catalog's, as the hooks recorded it)."""
    code, out, err = run_cli(repo, "list", "--json")
    assert code == 0, err
    data = json.loads(out)
    rows = data["memories"] if isinstance(data, dict) else data
    return next(m["status"] for m in rows if m["id"] == mid)


# -- following a path ------------------------------------------------------------------------------------------


def test_follow_agrees_between_the_work_tree_and_git_objects(repo: Path, tmp_path: Path) -> None:
    _link(repo, "docs/agents.md", "../CLAUDE.md")  # a chain through a folder: docs/agents.md -> CLAUDE.md -> AGENTS.md
    _link(repo, "src/up", "..")  # a link to a folder above: src/up/AGENTS.md is AGENTS.md
    _link(repo, "abs.md", str(repo / "AGENTS.md"))  # absolute, inside the work tree
    _link(repo, "out.md", "../elsewhere.md")
    _link(repo, "etc", "/etc")
    _link(repo, "a", "b")
    _link(repo, "b", "a")
    _link(repo, "gone.md", "nothing-here.md")
    _link(repo, "src/lib/dotdot.py", "../../lib/x.py")  # `..` from the folder the link is in
    sha, _ = _commit(repo, "more links")
    r = Repo(repo)
    cases = {
        "AGENTS.md": None,
        "CLAUDE.md": ("AGENTS.md", ("CLAUDE.md",)),
        "docs/agents.md": ("AGENTS.md", ("docs/agents.md", "CLAUDE.md")),
        "lib/x.py": ("src/lib/x.py", ("lib",)),
        "src/up/AGENTS.md": ("AGENTS.md", ("src/up",)),
        "abs.md": ("AGENTS.md", ("abs.md",)),
        "src/lib/dotdot.py": ("src/lib/x.py", ("src/lib/dotdot.py", "lib")),
        "nope/x.py": None,
    }
    for path, want in cases.items():
        for rev in (WORKTREE, sha):
            got = r.follow(rev, path)
            assert (None if got is None else (got.path, got.links)) == want, (path, rev)
    for rev in (WORKTREE, sha):
        out = r.follow(rev, "out.md")
        assert out is not None and out.path is None and out.outside == "../elsewhere.md"
        assert out.why() == "points outside the repository (../elsewhere.md)"
        beyond = r.follow(rev, "etc/passwd")
        assert beyond is not None and beyond.outside == "/etc" and beyond.links == ("etc",)
        loop = r.follow(rev, "a")
        assert loop is not None and loop.loop and loop.why() == "is a cycle of symbolic links (a -> b -> a)"
        dangling = r.follow(rev, "gone.md")
        assert dangling is not None and dangling.path is None and dangling.missing == "nothing-here.md"
        assert r.follow(rev, "lib/none.py") == dangling.__class__(None, ("lib",), missing="src/lib/none.py")
    assert r.read("HEAD", "CLAUDE.md") == b"AGENTS.md"  # git's own view is kept: a link reads as its text


# -- the Markdown file link ------------------------------------------------------------------------------------


def test_markdown_link_section_is_judged_by_the_target(repo: Path, run_cli) -> None:
    mid, err = _remember(run_cli, repo, "tests run first", "CLAUDE.md::Rules")
    assert "CLAUDE.md leads to AGENTS.md (symbolic link): judged by the content of AGENTS.md" in err
    memfile = (repo / ".gitmem" / "memories" / f"{mid}.md").read_text()
    assert "anchor: CLAUDE.md::Rules" in memfile  # recorded as typed
    base, _ = _commit(repo, "memory")
    st = _status(run_cli, repo, mid)
    assert st["status"] == "fresh" and st["target"] == "AGENTS.md" and st["links"] == ["CLAUDE.md"]

    (repo / "AGENTS.md").write_text(AGENTS_STYLE_CHANGED)  # another section: still fresh
    assert _status(run_cli, repo, mid)["status"] == "fresh"
    (repo / "AGENTS.md").write_text(AGENTS_RULES_CHANGED)
    st = _status(run_cli, repo, mid)
    assert st["status"] == "stale" and "(uncommitted)" in st["reason"]
    assert "CLAUDE.md leads to AGENTS.md" in st["reason"]

    # the commit touches only the target: the post-commit analyzer marks the memory stale
    sha, hook_err = _commit(repo, "rules changed")
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["AGENTS.md"]
    assert _listed(run_cli, repo, mid) == "stale"
    assert "may be stale" in hook_err or "stale" in hook_err
    st = _status(run_cli, repo, mid)
    assert st["status"] == "stale" and st["commit"] == sha
    assert st["reason"] == f"section Rules changed in {sha[:12]} (CLAUDE.md leads to AGENTS.md)"
    # --rev: from git's objects, whatever the work tree holds
    assert _status(run_cli, repo, mid, base)["status"] == "fresh"
    assert _status(run_cli, repo, mid, sha)["status"] == "stale"
    (repo / "CLAUDE.md").unlink()  # the work tree has no link any more: --rev still reads git's
    assert _status(run_cli, repo, mid, "HEAD")["commit"] == sha


def test_reading_through_the_link_gives_the_targets_memories_and_back(repo: Path, run_cli) -> None:
    on_target, _ = _remember(run_cli, repo, "AGENTS.md is the agents' rule book", "AGENTS.md")
    on_link, _ = _remember(run_cli, repo, "claude reads the rules section", "CLAUDE.md::Rules")
    for read, session in (("CLAUDE.md", "s1"), ("AGENTS.md", "s2")):
        event = {"session_id": session, "transcript_path": "", "cwd": str(repo), "hook_event_name": "PreToolUse",
                 "tool_name": "Read", "tool_input": {"file_path": str(repo / read)}, "tool_use_id": "t"}
        proc = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.claude"], input=json.dumps(event),
                              cwd=repo, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "GITMEM_NO_DAEMON": "1"})
        assert proc.returncode == 0, proc.stderr
        text = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
        assert on_target in text and on_link in text, (read, text)
    code, out, err = run_cli(repo, "context", "--file", "CLAUDE.md", "--json")
    assert code == 0, err
    assert {on_target, on_link} <= set(json.dumps(json.loads(out)).split('"')), out


# -- a Python module re-exported through a link ----------------------------------------------------------------


def test_python_symbol_through_a_linked_module(repo: Path, run_cli) -> None:
    code, out, err = run_cli(repo, "symbols", "pkg/compat.py", "--json")
    assert code == 0, err
    assert {s["name"] for s in json.loads(out)["symbols"]} >= {"impl", "other"}  # the target's symbols
    mid, _ = _remember(run_cli, repo, "impl adds one", "pkg/compat.py::impl")
    _commit(repo, "memory")
    _commit(repo, "other changed", {"core/impl.py": IMPL_OTHER_CHANGED})
    assert _listed(run_cli, repo, mid) == "fresh"  # symbol-level through the link
    sha, _ = _commit(repo, "impl changed", {"core/impl.py": IMPL_CHANGED})
    assert _listed(run_cli, repo, mid) == "stale"
    st = _status(run_cli, repo, mid)
    assert st["commit"] == sha and "pkg/compat.py leads to core/impl.py" in st["reason"]


def test_link_to_a_folder(repo: Path, run_cli) -> None:
    mid, err = _remember(run_cli, repo, "f is the identity", "lib/x.py::f")
    assert "lib/x.py leads to src/lib/x.py" in err
    _commit(repo, "memory")
    assert _status(run_cli, repo, mid)["status"] == "fresh"
    _commit(repo, "g changed", {"src/lib/x.py": LIB.replace("-b", "b")})
    assert _listed(run_cli, repo, mid) == "fresh"
    sha, _ = _commit(repo, "f changed", {"src/lib/x.py": LIB.replace("return a", "return a + 0")})
    assert _listed(run_cli, repo, mid) == "stale"
    assert _status(run_cli, repo, mid)["commit"] == sha
    # the folder link retargeted to a copy with f unchanged: fresh again, and the copy is what counts now
    (repo / "src/lib2").mkdir()
    (repo / "src/lib2/x.py").write_text(LIB)
    _link(repo, "lib", "src/lib2")
    _commit(repo, "lib retargeted")
    assert _listed(run_cli, repo, mid) == "fresh"
    sha, _ = _commit(repo, "the new target changed", {"src/lib2/x.py": LIB.replace("return a", "return 2 * a")})
    assert _listed(run_cli, repo, mid) == "stale"
    st = _status(run_cli, repo, mid)
    assert st["commit"] == sha and "lib/x.py leads to src/lib2/x.py; to src/lib/x.py when anchored" in st["reason"]


def test_chain_of_links_and_an_intermediate_retarget(repo: Path, run_cli) -> None:
    _link(repo, "docs/agents.md", "../CLAUDE.md")
    _commit(repo, "chain")
    mid, err = _remember(run_cli, repo, "rules via the chain", "docs/agents.md::Rules")
    assert "docs/agents.md leads to AGENTS.md" in err
    _commit(repo, "memory")
    sha, _ = _commit(repo, "rules changed", {"AGENTS.md": AGENTS_RULES_CHANGED})
    assert _listed(run_cli, repo, mid) == "stale"
    code, _, err = run_cli(repo, "reanchor", mid)
    assert code == 0, err
    _commit(repo, "reanchored")
    assert _listed(run_cli, repo, mid) == "fresh"
    # a commit that only retargets the link in the middle of the chain
    (repo / "OTHER.md").write_text(AGENTS)
    _commit(repo, "other")
    _link(repo, "CLAUDE.md", "OTHER.md")
    sha, _ = _commit(repo, "CLAUDE.md now leads to OTHER.md")
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["CLAUDE.md"]
    assert _listed(run_cli, repo, mid) == "stale"
    st = _status(run_cli, repo, mid)
    assert st["commit"] == sha and st["links"] == ["docs/agents.md", "CLAUDE.md"] and st["target"] == "OTHER.md"
    assert "docs/agents.md leads to OTHER.md; to AGENTS.md when anchored" in st["reason"]


def test_retargeted_link_then_the_new_target_changes(repo: Path, run_cli) -> None:
    mid, _ = _remember(run_cli, repo, "tests run first", "CLAUDE.md::Rules")
    _commit(repo, "memory")
    (repo / "docs").mkdir()
    (repo / "docs" / "AGENTS.md").write_text(AGENTS)
    _link(repo, "CLAUDE.md", "docs/AGENTS.md")
    _commit(repo, "the same rules, moved")
    assert _listed(run_cli, repo, mid) == "fresh"
    assert _status(run_cli, repo, mid)["target"] == "docs/AGENTS.md"
    _commit(repo, "the old target changes: nothing to do with CLAUDE.md now", {"AGENTS.md": AGENTS_RULES_CHANGED})
    assert _listed(run_cli, repo, mid) == "fresh"
    sha, _ = _commit(repo, "the new target changes", {"docs/AGENTS.md": AGENTS_RULES_CHANGED})
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["docs/AGENTS.md"]
    assert _listed(run_cli, repo, mid) == "stale"
    assert _status(run_cli, repo, mid)["commit"] == sha


@pytest.mark.parametrize("same", [True, False])
def test_link_replaced_by_a_regular_file(repo: Path, run_cli, same: bool) -> None:
    mid, _ = _remember(run_cli, repo, "tests run first", "CLAUDE.md::Rules")
    _commit(repo, "memory")
    (repo / "CLAUDE.md").unlink()
    (repo / "CLAUDE.md").write_text(AGENTS if same else AGENTS_RULES_CHANGED)
    sha, _ = _commit(repo, "CLAUDE.md is its own file")
    st = _status(run_cli, repo, mid)
    assert _listed(run_cli, repo, mid) == st["status"] == ("fresh" if same else "stale")
    assert "target" not in st
    if not same:
        assert st["commit"] == sha and "CLAUDE.md was a link to AGENTS.md, now a file" in st["reason"]


def test_target_deleted(repo: Path, run_cli) -> None:
    mid, _ = _remember(run_cli, repo, "tests run first", "CLAUDE.md::Rules")
    _commit(repo, "memory")
    (repo / "AGENTS.md").unlink()
    sha, _ = _commit(repo, "no more AGENTS.md")
    assert _listed(run_cli, repo, mid) == "deleted"
    st = _status(run_cli, repo, mid)
    assert st["status"] == "deleted" and st["commit"] == sha
    assert "CLAUDE.md leads to AGENTS.md, which does not exist" in st["reason"]


# -- links that lead nowhere in the repository -----------------------------------------------------------------


def test_link_leading_outside_is_judged_by_the_link_only(repo: Path, run_cli, tmp_path: Path) -> None:
    (tmp_path / "shared.md").write_text("## Shared\n\nsecret outside\n")
    _link(repo, "shared.md", "../shared.md")
    _link(repo, "etc", "/etc")
    _commit(repo, "outside links")
    mid, err = _remember(run_cli, repo, "the shared notes live outside", "shared.md")
    assert "warning: shared.md points outside the repository (../shared.md): judged by the link only" in err
    code, _, err = run_cli(repo, "remember", "x", "--anchor", "shared.md::Shared")
    assert code == 1 and "shared.md points outside the repository (../shared.md)" in err
    assert "--anchor shared.md" in err
    code, _, err = run_cli(repo, "remember", "x", "--anchor", "etc/passwd")
    assert code == 1
    assert "etc/passwd is beyond a symbolic link that points outside the repository (etc -> /etc)" in err
    _commit(repo, "memory")
    (tmp_path / "shared.md").write_text("## Shared\n\nchanged outside\n")  # not the repository's: no change
    assert _status(run_cli, repo, mid)["status"] == "fresh"
    _link(repo, "shared.md", "../other.md")
    sha, _ = _commit(repo, "the link now points elsewhere outside")
    st = _status(run_cli, repo, mid)
    assert st["status"] == "stale" and st["commit"] == sha
    assert st["reason"].endswith("(shared.md points outside the repository (../other.md): judged by the link only)")
    assert "secret outside" not in json.dumps(st)


def test_cycle_and_dangling_links_are_refused(repo: Path, run_cli) -> None:
    _link(repo, "a.md", "b.md")
    _link(repo, "b.md", "a.md")
    _link(repo, "gone.md", "missing.md")
    _commit(repo, "bad links")
    code, _, err = run_cli(repo, "remember", "x", "--anchor", "a.md")
    assert code == 1 and "a.md is a cycle of symbolic links (a.md -> b.md -> a.md)" in err
    code, _, err = run_cli(repo, "remember", "x", "--anchor", "gone.md")
    assert code == 1 and "no file gone.md in the working tree: it leads to missing.md, which does not exist" in err
    code, _, err = run_cli(repo, "remember", "x", "--anchor", "lib/none.py")
    assert code == 1 and "it leads to src/lib/none.py, which does not exist" in err


# -- at a revision ---------------------------------------------------------------------------------------------


def test_anchor_made_at_a_revision_through_a_link(repo: Path, run_cli) -> None:
    """``--rev``: the link is resolved from git's objects, the work tree does not matter."""
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / "CLAUDE.md").unlink()
    (repo / "lib").unlink()
    mid, err = _remember(run_cli, repo, "rules at the first commit", "CLAUDE.md::Rules", "--rev", first)
    assert "judged by the content of AGENTS.md" in err
    fid, _ = _remember(run_cli, repo, "f at the first commit", "lib/x.py::f", "--rev", first)
    git(repo, "checkout", "--", "CLAUDE.md", "lib")
    _commit(repo, "memories")
    sha, _ = _commit(repo, "rules changed", {"AGENTS.md": AGENTS_RULES_CHANGED})
    assert _status(run_cli, repo, mid, first)["status"] == "fresh"
    st = _status(run_cli, repo, mid, sha)
    assert st["status"] == "stale" and st["commit"] == sha
    assert _status(run_cli, repo, fid, sha)["status"] == "fresh"


def test_ordinary_files_are_not_followed(repo: Path) -> None:
    """A path is asked about links only where what was read there could be a link's text, or nothing."""
    from gitmem.anchors import Resolver, maybe_link

    assert maybe_link(None) and maybe_link(b"AGENTS.md") and maybe_link(b"../core/impl.py")
    assert not maybe_link(b"") and not maybe_link(b"x = 1\n") and not maybe_link(b"a" * 5000)
    r = Resolver(Repo(repo))
    for rev in (WORKTREE, "HEAD"):
        assert r.source(rev, "core/impl.py") == IMPL.encode() and r.link(rev, "core/impl.py") is None
    assert r.repo._linked._proc is None  # no --follow-symlinks process for ordinary files
    for rev in (WORKTREE, "HEAD"):
        assert r.source(rev, "pkg/compat.py") == IMPL.encode()
        assert r.real_path(rev, "pkg/compat.py") == "core/impl.py"
    assert r.repo._linked._proc is not None


def test_a_link_into_gits_own_folder_is_never_read(repo: Path, run_cli) -> None:
    _link(repo, "cfg", ".git/config")
    code, _, err = run_cli(repo, "remember", "x", "--anchor", "cfg::core")
    assert code == 1 and "cfg points outside the repository (.git/config)" in err
    assert _source(repo, "cfg") == b".git/config"  # judged by the link only


def _source(repo: Path, path: str) -> bytes | None:
    from gitmem.anchors import Resolver

    return Resolver(Repo(repo)).source(WORKTREE, path)


def test_link_without_an_extension_reads_in_its_targets_language(repo: Path, run_cli) -> None:
    _link(repo, "bin/tool", "../core/impl.py")
    _commit(repo, "a command linked to its module")
    code, out, err = run_cli(repo, "symbols", "bin/tool", "--json")
    assert code == 0, err
    assert json.loads(out)["language"] == "python"
    mid, _ = _remember(run_cli, repo, "the tool adds one", "bin/tool::impl")
    _commit(repo, "memory")
    sha, _ = _commit(repo, "impl changed", {"core/impl.py": IMPL_CHANGED})
    assert _listed(run_cli, repo, mid) == "stale"
    assert _status(run_cli, repo, mid)["commit"] == sha
