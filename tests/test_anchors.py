"""Anchor status on real repositories: every status and reason, across languages and revisions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitmem.anchors import Resolver
from gitmem.errors import AnchorError
from gitmem.git import WORKTREE, Repo
from gitmem.model import Change, Status
from testing.repos import commit, git, make_repo, write

PY = '''\
import functools


class Signer:
    """Signs tokens."""

    def __init__(self, key):
        self.key = key

    @functools.lru_cache(maxsize=8)
    def sign(self, payload, *, alg="HS256"):
        header = {"alg": alg}
        return f"{header}.{payload}.{self.key}"

    def verify(self, token):
        parts = token.split(".")
        return len(parts) == 3


def helper(values):
    out = []
    for v in values:
        out.append(v * 2)
    return out
'''


def _repo(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Repo]:
    root = make_repo(tmp_path / "r", files)
    return root, Repo(root)


def test_fresh_then_body_signature_decorator_changes(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"auth/jwt.py": PY})
    a = Resolver(repo).make("auth/jwt.py", "Signer.sign")
    assert a.kind == "method" and a.commit == repo.head() and a.span == (10, 13)
    assert Resolver(repo).status(a).status == Status.FRESH

    c1 = commit(root, "docstring and comments only",
                {"auth/jwt.py": PY.replace('"""Signs tokens."""', '"""Signs JWTs."""  # comment')
                 .replace("        header = {", "        # build the header\n        header = {")})
    assert Resolver(repo).status(a, c1).status == Status.FRESH

    c2 = commit(root, "decorator", {"auth/jwt.py": PY.replace("maxsize=8", "maxsize=16")})
    st = Resolver(repo).status(a, c2)
    assert st.status == Status.STALE and st.changes == [Change.DECORATORS] and st.commit == c2

    c3 = commit(root, "signature", {"auth/jwt.py": PY.replace('alg="HS256"', 'alg="RS256"')})
    st = Resolver(repo).status(a, c3)
    # not fresh since c2 (the decorator change), so c2 is still the commit that made it stale
    assert st.status == Status.STALE and st.changes == [Change.SIGNATURE] and st.commit == c2
    again = Resolver(repo).make("auth/jwt.py", "Signer.sign", c2)
    c4 = commit(root, "body", {"auth/jwt.py": PY.replace('alg="HS256"', 'alg="RS256"').replace("self.key}", "key}")})
    st = Resolver(repo).status(again, c4)
    assert set(st.changes) == {Change.SIGNATURE, Change.DECORATORS, Change.BODY} and st.commit == c3

    # the class encloses the method: its anchor goes stale too; a sibling method stays fresh
    cls = Resolver(repo).make("auth/jwt.py", "Signer", c1)
    sib = Resolver(repo).make("auth/jwt.py", "Signer.verify", c1)
    assert Resolver(repo).status(cls, c4).status == Status.STALE
    assert Resolver(repo).status(sib, c4).status == Status.FRESH


def test_uncommitted_change_has_no_commit(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"auth/jwt.py": PY})
    a = Resolver(repo).make("auth/jwt.py", "helper")
    write(root, {"auth/jwt.py": PY.replace("v * 2", "v * 3")})
    st = Resolver(repo).status(a, WORKTREE)
    assert st.status == Status.STALE and st.commit is None and "uncommitted" in st.reason
    assert Resolver(repo).status(a, repo.head()).status == Status.FRESH


def test_symbol_renamed_is_moved_with_new_name(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"auth/jwt.py": PY})
    a = Resolver(repo).make("auth/jwt.py", "helper")
    c = commit(root, "rename helper", {"auth/jwt.py": PY.replace("def helper", "def double_all")})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.MOVED and st.symbol_now == "double_all" and st.changes == [Change.RENAME]
    assert st.commit == c


def test_symbol_moved_to_another_file(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"auth/jwt.py": PY})
    a = Resolver(repo).make("auth/jwt.py", "helper")
    body = PY[PY.index("def helper"):]
    c = commit(root, "extract helper", {"auth/jwt.py": PY[:PY.index("def helper")], "util/lists.py": body})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.MOVED and st.path_now == "util/lists.py" and st.symbol_now == "helper"
    assert Change.MOVE in st.changes and st.commit == c


def test_file_renamed_and_edited_is_stale_at_new_path(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"auth/jwt.py": PY})
    a = Resolver(repo).make("auth/jwt.py", "helper")
    git(root, "mv", "auth/jwt.py", "auth/tokens.py")
    git(root, "commit", "-q", "-m", "rename file")
    c = commit(root, "edit", {"auth/tokens.py": PY.replace("v * 2", "v * 4")})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.STALE and st.path_now == "auth/tokens.py"
    assert Change.MOVE in st.changes and Change.BODY in st.changes and st.commit == c


def test_deleted_symbol_and_file(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"auth/jwt.py": PY, "NOTES.txt": "# hi\n"})
    a = Resolver(repo).make("auth/jwt.py", "Signer.verify")
    f = Resolver(repo).make("NOTES.txt", None)
    assert f.kind == "file" and f.fingerprint and f.fingerprint.startswith("raw1:")
    start = PY.index("    def verify")
    c1 = commit(root, "drop verify", {"auth/jwt.py": PY[:start] + PY[PY.index("def helper") - 2:]})
    st = Resolver(repo).status(a, c1)
    assert st.status == Status.DELETED and st.commit == c1 and Change.DELETION in st.changes
    git(root, "rm", "-q", "NOTES.txt")
    git(root, "commit", "-q", "-m", "drop readme")
    c2 = repo.head()
    st = Resolver(repo).status(f, c2)
    assert st.status == Status.DELETED and st.commit == c2


def test_file_anchor_ignores_comments_in_code(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"auth/jwt.py": PY})
    f = Resolver(repo).make("auth/jwt.py", None)
    c = commit(root, "comment", {"auth/jwt.py": "# header comment\n" + PY})
    assert Resolver(repo).status(f, c).status == Status.FRESH
    c2 = commit(root, "code", {"auth/jwt.py": PY + "\nX = 1\n"})
    st = Resolver(repo).status(f, c2)
    assert st.status == Status.STALE and st.changes == [Change.CONTENT] and st.commit == c2


def test_commit_anchor(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"a.py": "x = 1\n"})
    from gitmem.model import Anchor

    a = Anchor(path=None, commit=repo.head(), kind="commit")
    assert Resolver(repo).status(a).status == Status.FRESH
    gone = Anchor(path=None, commit="1" * 40, kind="commit")
    assert Resolver(repo).status(gone).status == Status.DELETED


def test_make_errors(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"auth/jwt.py": PY, "notes.txt": "hello\n"})
    with pytest.raises(AnchorError) as e:
        Resolver(repo).make("auth/jwt.py", "Signer.sig")
    assert "Signer.sign" in e.value.candidates
    with pytest.raises(AnchorError, match="no file"):
        Resolver(repo).make("auth/none.py", None)
    with pytest.raises(AnchorError, match="outside"):
        Resolver(repo).make("../x.py", None)
    with pytest.raises(AnchorError, match="no symbol support"):
        Resolver(repo).make("notes.txt", "hello")


GO_V1 = "package s\n\ntype Server struct{ n int }\n\nfunc (s *Server) Start(port int) error {\n\treturn nil\n}\n"
RS_V1 = ("struct Pool { size: usize }\n\nimpl Pool {\n    fn new(size: usize) -> Self {\n"
         "        Pool { size }\n    }\n}\n")
JAVA_V1 = ("class Cache {\n  int get(String k) {\n    return k.length();\n  }\n"
           "  static class Entry {\n    void touch() { }\n  }\n}\n")
TS_V1 = "export class Api {\n  async fetch(url: string): Promise<string> {\n    return url;\n  }\n}\n"


@pytest.mark.parametrize("path,src,symbol,edit", [
    ("s/server.go", GO_V1, "Server.Start", ("return nil", "return errStart")),
    ("src/pool.rs", RS_V1, "Pool.new", ("Pool { size }", "Pool { size: size * 2 }")),
    ("src/Cache.java", JAVA_V1, "Cache.Entry.touch", ("void touch() { }", "void touch() { hits++; }")),
    ("src/api.ts", TS_V1, "Api.fetch", ("return url;", "return url.trim();")),
])
def test_languages_stale_and_fresh(tmp_path: Path, path: str, src: str, symbol: str, edit: tuple[str, str]) -> None:
    root, repo = _repo(tmp_path, {path: src})
    a = Resolver(repo).make(path, symbol)
    c1 = commit(root, "reformat", {path: src.replace("\n", "\n\n")})
    assert Resolver(repo).status(a, c1).status == Status.FRESH
    c2 = commit(root, "edit", {path: src.replace(*edit)})
    st = Resolver(repo).status(a, c2)
    assert st.status == Status.STALE and st.commit == c2


def test_renamed_then_changed_is_stale_under_new_name(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"auth/jwt.py": PY})
    a = Resolver(repo).make("auth/jwt.py", "helper")
    c1 = commit(root, "rename", {"auth/jwt.py": PY.replace("def helper", "def double_all")})
    c2 = commit(root, "change", {"auth/jwt.py": PY.replace("def helper", "def double_all").replace("v * 2", "v * 3")})
    st = Resolver(repo).status(a, c2)
    assert st.status == Status.STALE and st.symbol_now == "double_all" and st.commit == c2
    assert Change.RENAME in st.changes and Change.BODY in st.changes
    assert f"renamed to double_all in {c1[:12]}" in st.reason
    assert Resolver(repo).status(a, c1).status == Status.MOVED


def test_rename_with_signature_change_is_not_a_move(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"auth/jwt.py": PY})
    a = Resolver(repo).make("auth/jwt.py", "helper")
    c = commit(root, "rename+param", {"auth/jwt.py": PY.replace("def helper(values)", "def double_all(values, k)")})
    assert Resolver(repo).status(a, c).status == Status.DELETED


def test_trivial_bodies_never_prove_a_rename(tmp_path: Path) -> None:
    src = 'def a():\n    """Doc a."""\n\n\ndef b():\n    """Doc b."""\n'
    root, repo = _repo(tmp_path, {"m.py": src, "n.py": 'def z():\n    """Other."""\n'})
    anchor = Resolver(repo).make("m.py", "a")
    c = commit(root, "drop a", {"m.py": 'def b():\n    """Doc b."""\n'})
    assert Resolver(repo).status(anchor, c).status == Status.DELETED


def test_anchor_made_before_first_commit(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    write(root, {"a.py": "def f(x):\n    return x\n"})
    repo = Repo(root)
    a = Resolver(repo).make("a.py", "f")
    assert a.commit is None
    c1 = commit(root, "first")
    assert Resolver(repo).status(a, c1).status == Status.FRESH
    c2 = commit(root, "change", {"a.py": "def f(x):\n    return x + 1\n"})
    st = Resolver(repo).status(a, WORKTREE)
    assert st.status == Status.STALE and st.commit == c2 and "uncommitted" not in st.reason


def test_shallow_clone_names_no_wrong_commit(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"auth/jwt.py": PY})
    a = Resolver(repo).make("auth/jwt.py", "helper")
    for i in range(3):
        commit(root, f"other {i}", {f"o{i}.py": "X = 1\n"})
    last = commit(root, "change", {"auth/jwt.py": PY.replace("v * 2", "v * 5")})
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{root}", str(clone))
    shallow = Repo(clone)
    st = Resolver(shallow).status(a, WORKTREE)
    assert st.status == Status.STALE
    assert st.commit == last  # the change is inside the history this clone has
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{root}", str(tmp_path / "s1"))
    st = Resolver(Repo(tmp_path / "s1")).status(a, WORKTREE)
    # the boundary (the only commit) is never named: its diff against its missing parent adds every file
    boundary = git(tmp_path / "s1", "rev-parse", "HEAD").strip()
    assert st.status == Status.STALE and st.commit is None
    assert f"history not available before {boundary[:12]} (shallow clone)" in st.reason


def test_anchor_inside_nested_repository_is_refused(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"a.py": "x = 1\n"})
    make_repo(root / "vendor/lib", {"lib.py": "def f():\n    return 1\n"})
    with pytest.raises(AnchorError, match="inside another repository"):
        Resolver(repo).make("vendor/lib/lib.py", "f")


def test_rename_then_rewrite_follows_the_file(tmp_path: Path) -> None:
    big = PY + "".join(f"\n\ndef extra{i}(x):\n    return x + {i}\n" for i in range(12))
    root, repo = _repo(tmp_path, {"auth/jwt.py": big})
    a = Resolver(repo).make("auth/jwt.py", "helper")
    git(root, "mv", "auth/jwt.py", "auth/tokens.py")
    git(root, "commit", "-q", "-m", "rename file")
    rewritten = PY.replace("v * 2", "v * 7") + "".join(f"\n\ndef other{i}(y):\n    return y * {i}\n" for i in range(12))
    c = commit(root, "rewrite most of it", {"auth/tokens.py": rewritten})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.STALE and st.path_now == "auth/tokens.py" and st.commit == c


def test_handwritten_anchor_without_fingerprint_checks_existence(tmp_path: Path) -> None:
    from gitmem.model import Anchor

    root, repo = _repo(tmp_path, {"auth/jwt.py": PY})
    assert Resolver(repo).status(Anchor(path="auth/jwt.py", symbol="helper", kind="symbol")).status == Status.FRESH
    st = Resolver(repo).status(Anchor(path="auth/jwt.py", symbol="nope", kind="symbol"))
    assert st.status == Status.DELETED and "no fingerprint" in st.reason


def test_non_utf8_file_name_does_not_hide_other_changes(tmp_path: Path) -> None:
    root, repo = _repo(tmp_path, {"auth/jwt.py": PY})
    a = Resolver(repo).make("auth/jwt.py", "helper")
    (root / "auth").joinpath(os.fsdecode(b"bad\xffname.py")).write_bytes(b"x = 1\n")
    c = commit(root, "both", {"auth/jwt.py": PY.replace("v * 2", "v * 9")})
    changed = {ch.new_path for ch in repo.changed_files(repo.parents(c)[0], c)}
    assert changed == {"auth/jwt.py"}
    assert Resolver(repo).status(a, c).status == Status.STALE
    with pytest.raises(AnchorError, match="not valid UTF-8"):
        Resolver(repo).make(os.fsdecode(b"auth/bad\xffname.py"), None)


def test_anchors_on_one_file_share_the_history_walk(tmp_path: Path) -> None:
    # Statuses of many stale anchors of one file list the commits touching it once, not once each.
    root, repo = _repo(tmp_path, {"auth/jwt.py": PY})
    res = Resolver(repo)
    anchors = [res.make("auth/jwt.py", n) for n in ("Signer.sign", "Signer.verify", "helper")]
    commit(root, "edit all three", {"auth/jwt.py": PY.replace("HS256", "RS256").replace("== 3", "== 4")
                                    .replace("v * 2", "v * 3")})
    calls = []
    real = repo.commits_touching
    repo.commits_touching = lambda *a: calls.append(a) or real(*a)
    checker = Resolver(repo)
    statuses = [checker.status(a) for a in anchors]
    assert [s.status for s in statuses] == [Status.STALE] * 3
    assert all(s.commit == repo.head() for s in statuses)
    assert len(calls) == 1
