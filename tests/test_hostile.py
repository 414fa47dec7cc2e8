"""Hostile and awkward inputs, end to end through the CLI and real git hooks.

Bad memory files (conflict markers, invalid YAML, anchors leading out of the
repository, symlinks), awkward source files (binary, > 1 MB, latin-1, CRLF) and
awkward file names (spaces, non-ASCII, tabs, quotes, glob characters, newlines):
each gives one clear line naming the file, or the right status; the other
memories keep working; nothing outside the repository is read; no bad file is
rewritten; no commit fails. Awkward repositories are in test_awkward_repos.py.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from gitmem import layout
from testing.repos import commit, git, make_repo, write

PY = "def f(x):\n    return x\n\n\ndef g(y):\n    return y * 2\n"

SECRET_ID = "01SECRETOUTSIDE"
SECRET = f"---\nid: {SECRET_ID}\ntype: decision\ntitle: SECRET FROM OUTSIDE\n---\nprivate key material\n"

BAD_FILES = {
    "01CONFLICT.md": ("---\nid: 01CONFLICT\ntype: decision\n<<<<<<< HEAD\ntitle: ours\n=======\ntitle: theirs\n"
                      ">>>>>>> feature\n---\n", "merge-conflict markers"),
    "01BADYAML.md": ("---\nid: 01BADYAML\ntype: decision\ntitle: [unclosed\n---\n", "invalid YAML"),
    "01TRAVERSAL.md": ("---\nid: 01TRAVERSAL\ntype: decision\ntitle: t\nanchors:\n- anchor: ../../etc/passwd\n---\n",
                       "outside the repository"),
    "01ABSOLUTE.md": ("---\nid: 01ABSOLUTE\ntype: decision\ntitle: t\nanchors:\n- anchor: /etc/passwd::root\n---\n",
                      "outside the repository"),
}


def hook_log(repo: Path) -> str:
    path = layout.of(repo).log_file("hooks.log")
    return path.read_text() if path.exists() else ""


def commit_with_hooks(repo: Path, message: str, env: dict[str, str] | None = None) -> str:
    """``git add -A && git commit`` as processes (git runs the installed hooks); returns the commit's stderr."""
    git(repo, "add", "-A")
    p = subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, capture_output=True,
                       env={**os.environ, **(env or {})})
    assert p.returncode == 0, p.stderr.decode()
    return p.stderr.decode()


def no_follow(repo: Path) -> None:
    """Report moves instead of following them (these tests watch the statuses)."""
    cfg = repo / ".gitmem/config.toml"
    cfg.write_text(cfg.read_text().replace("follow_moves = true", "follow_moves = false"))


# -- bad memory files ---------------------------------------------------------------------------


def test_bad_memory_files_are_named_once_and_never_read_outside_or_rewritten(tmp_path: Path, run_cli,
                                                                             run_json) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(SECRET)
    (outside / "x.py").write_text(PY)
    repo = make_repo(tmp_path / "repo", {"a.py": PY})
    assert run_cli(repo, "init")[0] == 0
    good = run_json(repo, "remember", "f returns its argument", "--anchor", "a.py::f")["id"]
    commit(repo, "gitmem")
    mems = repo / ".gitmem/memories"
    for name, (text, _) in BAD_FILES.items():
        (mems / name).write_text(text)
    # a memory file that is a symlink out of the repository (its target would even parse)
    (mems / f"{SECRET_ID}.md").symlink_to(outside / "secret.md")
    # an anchor through a symlinked folder leading out of the repository, with the outside file's fingerprint
    (repo / "evil").symlink_to(outside)
    from gitmem.code.symbols import file_fingerprint

    fp = file_fingerprint(PY.encode(), "evil/x.py")
    (mems / "01VIALINK.md").write_text("---\nid: 01VIALINK\ntype: decision\ntitle: via a symlinked folder\n"
                                       f"anchors:\n- anchor: evil/x.py\n  kind: file\n  fingerprint: {fp}\n---\n")
    before = {p.name: p.read_bytes() for p in mems.iterdir() if not p.is_symlink()}
    bad = [*BAD_FILES, f"{SECRET_ID}.md"]

    def named_once(err: str) -> None:
        for name in bad:
            lines = [ln for ln in err.splitlines() if f".gitmem/memories/{name}" in ln]
            assert len(lines) == 1, (name, err)
        assert "SECRET FROM OUTSIDE" not in err and "private key" not in err
        assert "Traceback" not in err

    code, out, err = run_cli(repo, "list")
    assert code == 0 and good in out and "01VIALINK" in out and SECRET_ID not in out
    named_once(err)
    assert "symlink leading outside the repository" in err
    for name, (_, needle) in BAD_FILES.items():
        assert needle in next(ln for ln in err.splitlines() if name in ln)

    code, out, err = run_cli(repo, "stale", "--json")
    assert code == 0
    named_once(err)
    rows = {r["id"]: r for r in json.loads(out)}
    # the symlinked folder is not followed: the outside file's equal fingerprint does not make it fresh
    assert set(rows) == {"01VIALINK"} and rows["01VIALINK"]["status"] == "deleted"

    code, out, err = run_cli(repo, "context", "--file", "a.py")
    assert code == 0 and good in out and "SECRET FROM" not in out

    for name, (_, needle) in BAD_FILES.items():
        code, out, err = run_cli(repo, "show", name.removesuffix(".md"))
        assert code == 1 and out == ""
        first, *rest = err.splitlines()
        assert first.startswith(f"error: .gitmem/memories/{name}") and needle in first
        assert len(rest) == 1 and rest[0].startswith("hint: ")
    code, out, err = run_cli(repo, "show", SECRET_ID)
    assert code == 1 and "symlink leading outside the repository" in err and "SECRET FROM" not in out + err

    code, out, err = run_cli(repo, "doctor")
    assert code == 1
    for name in bad:
        assert sum(1 for ln in out.splitlines() if ln.startswith("error") and name in ln) == 1, name
    assert "SECRET FROM OUTSIDE" not in out
    code, out, err = run_cli(repo, "check")
    assert code == 1
    assert sorted(ln.split(":", 2)[1].strip() for ln in out.splitlines() if ln.startswith("invalid:")) == \
        sorted(f".gitmem/memories/{n}" for n in bad)
    code, out, err = run_cli(repo, "sync")
    assert code == 0, err
    named_once(err)
    assert [h["id"] for h in run_json(repo, "recall", "SECRET FROM OUTSIDE")] != [SECRET_ID]

    code, out, err = run_cli(repo, "remember", "x", "--anchor", "evil/x.py")
    assert code == 1 and "evil/x.py is beyond a symbolic link that points outside the repository (evil -> " in err

    stderr = commit_with_hooks(repo, "commit the bad files too")
    assert "Traceback" not in stderr
    assert " post-commit ok " in hook_log(repo).splitlines()[-1]
    after = {p.name: p.read_bytes() for p in mems.iterdir() if not p.is_symlink()}
    assert after == before  # nothing rewritten or deleted
    assert (mems / f"{SECRET_ID}.md").is_symlink()
    assert (outside / "secret.md").read_text() == SECRET


def test_memories_folder_that_is_a_symlink_out_of_the_repository(tmp_path: Path, run_cli) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / f"{SECRET_ID}.md").write_text(SECRET)
    repo = make_repo(tmp_path / "repo", {"a.py": PY})
    run_cli(repo, "init", "--no-hooks")
    (repo / ".gitmem/memories/.gitkeep").unlink()
    (repo / ".gitmem/memories").rmdir()
    (repo / ".gitmem/memories").symlink_to(outside)
    code, out, err = run_cli(repo, "list")
    assert code == 0 and "SECRET FROM" not in out and SECRET_ID not in out
    assert f".gitmem/memories/{SECRET_ID}.md: symlink leading outside the repository" in err


# -- awkward source files ------------------------------------------------------------------------


def test_binary_huge_latin1_and_nul_files_anchor_commit_and_go_stale(tmp_path: Path, run_cli, run_json) -> None:
    blob = bytes(range(256)) * 8
    # > 1 MB of Python: a generated table in 200 functions (few tokens, so the test stays fast)
    big = "".join(f"def table_{i}():\n    return {'x' * 5200!r}\n\n\n" for i in range(200))
    assert len(big) > 1_000_000
    latin1 = "# caf\xe9 cr\xe8me\ndef caf(x):\n    s = 'na\xefve'\n    return s + x\n".encode("latin-1")
    nul = b"\x00\x01\x02def hidden():\n    pass\n"
    repo = make_repo(tmp_path / "repo", {"data/blob.bin": blob, "gen/big.py": big, "lat.py": latin1,
                                         "nul.py": nul})
    assert run_cli(repo, "init")[0] == 0
    ids = {a: run_json(repo, "remember", f"about {a}", "--anchor", a)["id"]
           for a in ("data/blob.bin", "gen/big.py::table_7", "gen/big.py::table_150", "lat.py::caf", "lat.py",
                     "nul.py")}
    code, _, err = run_cli(repo, "remember", "x", "--anchor", "data/blob.bin::thing")
    assert code == 1 and "no symbol support" in err
    code, _, err = run_cli(repo, "remember", "x", "--anchor", "nul.py::hidden")  # binary: no symbols
    assert code == 1 and "no symbol" in err
    commit_with_hooks(repo, "memories")
    assert run_json(repo, "stale") == []

    write(repo, {"data/blob.bin": blob[::-1], "gen/big.py": big.replace("return 'xxxx", "return 'yxxx", 1)
                 .replace("def table_150():\n    return '", "def table_150():\n    return 'z"),
                 "lat.py": latin1.replace(b"'na\xefve'", b"'na\xeff'"), "nul.py": nul + b"\x00more"})
    ctx = run_json(repo, "context")
    assert set(ctx["focus"]["files"]) == {"data/blob.bin", "gen/big.py", "lat.py", "nul.py"}
    stderr = commit_with_hooks(repo, "change them all", env={"GITMEM_HOOK_TIMEOUT": "120"})
    sha = git(repo, "rev-parse", "HEAD").strip()
    assert "gitmem: 5 memories may be stale" in stderr
    assert " post-commit ok " in hook_log(repo).splitlines()[-1]
    rows = {r["id"]: r for r in run_json(repo, "stale")}
    assert set(rows) == {ids[a] for a in ("data/blob.bin", "gen/big.py::table_150", "lat.py::caf", "lat.py",
                                          "nul.py")}
    assert all(r["status"] == "stale" and r["anchors"][0]["commit"] == sha for r in rows.values())
    assert rows[ids["lat.py::caf"]]["anchors"][0]["changes"] == ["body"]


def test_crlf_checkout_keeps_memories_fresh_and_real_edits_stale(tmp_path: Path, run_cli, run_json) -> None:
    """Line endings are not code: a core.autocrlf checkout, or a commit converting CRLF to LF, changes no memory.

    Fingerprints hash tokens (code) or CRLF-normalised bytes (other files), so the
    same file with LF or CRLF endings has one fingerprint wherever it is read.
    """
    src = {"m.py": 'def f(x):\n    s = """one\ntwo"""\n    return s + x\n\n\ndef g():\n    return 1\n',
           "t.js": "function h() {\n  return `a\nb`;\n}\n", "notes.txt": "hello\nworld\n",
           "win.py": "def w(a):\r\n    return a\r\n"}
    origin = make_repo(tmp_path / "origin", src)
    run_cli(origin, "init", "--no-hooks")
    for a in ("m.py", "m.py::f", "t.js::h", "notes.txt", "win.py::w", "win.py"):
        run_json(origin, "remember", f"about {a}", "--anchor", a)
    commit(origin, "memories")
    clone = tmp_path / "crlf"
    git(tmp_path, "-c", "core.autocrlf=true", "clone", "-q", str(origin), str(clone))
    git(clone, "config", "core.autocrlf", "true")
    assert b"\r\n" in (clone / "m.py").read_bytes() and b"\r\n" in (clone / "notes.txt").read_bytes()
    assert run_cli(clone, "hooks", "install")[0] == 0
    assert run_json(clone, "stale") == []
    made = run_json(clone, "remember", "made on CRLF", "--anchor", "m.py::f", "--anchor", "notes.txt")["id"]
    assert run_json(clone, "stale", "--rev", "HEAD") == []  # the committed (LF) code is the same code
    assert run_json(clone, "stale") == []
    write(clone, {"m.py": (clone / "m.py").read_bytes().replace(b"two", b"three")})
    rows = {r["id"]: r for r in run_json(clone, "stale")}
    assert rows[made]["status"] == "stale" and "uncommitted" in rows[made]["anchors"][0]["reason"]
    git(clone, "checkout", "--", "m.py")
    # a commit that only converts a file's line endings leaves its memories fresh
    commit(origin, "normalise line endings", {"win.py": "def w(a):\n    return a\n"})
    assert run_json(origin, "stale") == []


# -- awkward file names --------------------------------------------------------------------------

NAMES = {"spaces": "dir with space/my file.py", "unicode": "naïve ☃.py", "tab": "tab\there.py",
         "quote": 'quo"te.py', "glob": "[ab].py"}


def test_awkward_file_names_through_remember_hooks_stale_context_rename_and_log(tmp_path: Path, run_cli,
                                                                                run_json) -> None:
    src = {k: PY + f"\n\nNAME = {k!r}\n" for k in NAMES}  # distinct files: each rename pairs up one way
    files = {p: src[k] for k, p in NAMES.items()} | {"a.py": PY, "new\nline.py": PY}
    repo = make_repo(tmp_path / "repo", files)
    assert run_cli(repo, "init")[0] == 0
    no_follow(repo)
    ids = {k: run_json(repo, "remember", f"about {k}", "--anchor", f"{p}::f")["id"] for k, p in NAMES.items()}
    code, out, err = run_cli(repo, "remember", "x", "--anchor", "new\nline.py::f")
    assert code == 1 and "'new\\nline.py'" in err and len(err.splitlines()) == 2
    commit_with_hooks(repo, "memories")

    # a change only to a.py is not a change to "[ab].py" (no pathspec magic anywhere)
    a_only = commit(repo, "a.py only", {"a.py": PY.replace("return x", "return -x")})
    assert run_json(repo, "stale") == []

    # dirty: the focus names the files and their changed symbols as they are
    write(repo, {p: src[k].replace("return x", "return x + 1") for k, p in NAMES.items()})
    write(repo, {"new\nline.py": PY.replace("return x", "return 0")})
    ctx = run_json(repo, "context")
    assert set(ctx["focus"]["files"]) == set(NAMES.values()) | {"new\nline.py"}
    assert set(ctx["focus"]["symbols"]) >= {f"{p}::f" for p in NAMES.values()}
    assert set(ids.values()) <= set(ctx["detailed"]) | set(ctx["indexed"])
    stderr = commit_with_hooks(repo, "change f everywhere")
    change = git(repo, "rev-parse", "HEAD").strip()
    assert "gitmem: 5 memories may be stale (gitmem stale)" in stderr
    rows = {r["id"]: r for r in run_json(repo, "stale")}
    assert set(rows) == set(ids.values())
    for k, p in NAMES.items():
        a = rows[ids[k]]["anchors"][0]
        assert a["status"] == "stale" and a["path_now"] == p and a["commit"] == change, k

    # renames (git quotes these names in its normal output) are followed: moved, at the new name
    assert run_cli(repo, "reanchor", *ids.values())[0] == 0
    commit_with_hooks(repo, "re-anchored")
    renamed = {k: f"moved ☃/{k} new\tname.py" for k in NAMES}
    (repo / "moved ☃").mkdir()
    for k, p in NAMES.items():
        git(repo, "mv", p, renamed[k])
    stderr = commit_with_hooks(repo, "rename all")
    assert "gitmem: 5 memories moved with their code" in stderr
    rows = {r["id"]: r for r in run_json(repo, "stale")}
    for k in NAMES:
        assert rows[ids[k]]["status"] == "moved" and rows[ids[k]]["anchors"][0]["path_now"] == renamed[k], k

    # gitmem log follows the file through its awkward names, and "[ab].py" never picks up a.py's commits
    for k in NAMES:
        entries = run_json(repo, "log", ids[k])
        code_commits = [e["commit"] for e in entries if e["kind"] == "code"]
        assert change in code_commits and a_only not in code_commits, k
        assert next(e for e in entries if e["commit"] == change)["what"] == f"{NAMES[k]}::f: code changed", k
    log = hook_log(repo)
    assert "error" not in log and "Traceback" not in log


def test_blame_names_the_change_not_a_later_rename(tmp_path: Path, run_cli, run_json) -> None:
    """A symbol changed in one commit and its file renamed in the next: the change's commit is named,
    and the rename does not report the memory again."""
    repo = make_repo(tmp_path / "repo", {"a.py": PY})
    assert run_cli(repo, "init")[0] == 0
    mid = run_json(repo, "remember", "f returns x", "--anchor", "a.py::f", "--anchor", "a.py")["id"]
    commit_with_hooks(repo, "memory")
    write(repo, {"a.py": PY.replace("return x", "return x + 1")})
    stderr = commit_with_hooks(repo, "change f")
    change = git(repo, "rev-parse", "HEAD").strip()
    assert "1 memory may be stale" in stderr
    git(repo, "mv", "a.py", "b.py")
    stderr = commit_with_hooks(repo, "rename")
    assert "may be stale" not in stderr
    [row] = run_json(repo, "stale")
    assert row["id"] == mid
    for a in row["anchors"]:
        assert a["status"] == "stale" and a["path_now"] == "b.py" and a["commit"] == change, a
        assert change[:12] in a["reason"]
