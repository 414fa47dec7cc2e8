"""Merges of moved memories (issue 24): the merge driver matches anchors by identity, not by ``path::symbol`` text.

Real repositories with the hooks and the merge driver ``gitmem init`` installs, real branches, real ``git merge``,
``git rebase``, ``git cherry-pick`` and ``git revert``: one branch changes a function and re-anchors its memory
(``gitmem reanchor``), the other moves the file or renames the function and the memory follows the move in that commit
(the pre-commit hook). After the merge the memory has one anchor, at the new place, holding the merged code's
fingerprint (what re-anchoring now would record), ``gitmem stale`` says fresh and ``gitmem check`` passes. Real
conflicts (moved to two places, re-anchored over different code, removed on one side and re-anchored on the
other) stop the merge with conflict markers in the memory file's anchors, which ``gitmem doctor`` names.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gitmem.anchors import Resolver
from gitmem.git import WORKTREE, Repo
from gitmem.integrations.merge_driver import merge, merge_memories
from gitmem.memfile import read
from gitmem.model import Anchor, Memory
from testing.repos import commit, git, make_repo

TOTAL = '''def total(items):
    """The sum of the items' prices."""
    count = 0
    seen = set()
    for item in items:
        count += item.price
    return count


def label(item):
    return item.name.title()
'''


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)


def _setup(tmp_path: Path, run_cli, files: dict[str, str], anchors: list[str]) -> tuple[Path, str]:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", files)
    assert run_cli(repo, "init")[0] == 0  # the git hooks and the merge driver
    assert "merge=gitmem" in (repo / ".gitmem" / ".gitattributes").read_text()
    assert "merge-file" in git(repo, "config", "merge.gitmem.driver")
    (repo / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    code, out, err = run_cli(repo, "remember", "total adds the prices of the items", *(
        w for a in anchors for w in ("--anchor", a)), "--json")
    assert code == 0, err
    commit(repo, "memory")
    return repo, json.loads(out)["id"]


def _memory(repo: Path, mid: str) -> Memory:
    return read(repo / ".gitmem" / "memories" / f"{mid}.md")[0]


def _edit(repo: Path, path: str, old: str, new: str) -> None:
    p = repo / path
    text = p.read_text()
    assert old in text
    p.write_text(text.replace(old, new))


def _change_and_reanchor(repo: Path, run_cli, mid: str, path: str, old: str, new: str, *,
                         reanchor_first: bool = False) -> None:
    """Change the code and re-anchor the memory: after committing the change, or (``reanchor_first``) on the
    work tree before the commit (the anchor is then recorded against the commit before, the code in the next)."""
    _edit(repo, path, old, new)
    if reanchor_first:
        assert run_cli(repo, "reanchor", mid)[0] == 0
        commit(repo, "change and re-anchor")
        return
    commit(repo, "change")
    assert run_cli(repo, "reanchor", mid)[0] == 0
    commit(repo, "re-anchor")


def _move(repo: Path, kind: str) -> str:
    """Move ``a.py::total`` on the current branch (committed; the hook follows); returns its new key."""
    if kind == "file":
        (repo / "lib").mkdir(exist_ok=True)
        git(repo, "mv", "a.py", "lib/prices.py")
        new = "lib/prices.py::total"
    elif kind == "rename":
        _edit(repo, "a.py", "def total(", "def sum_prices(")
        new = "a.py::sum_prices"
    else:
        assert kind == "both"
        git(repo, "mv", "a.py", "prices.py")
        _edit(repo, "prices.py", "def total(", "def sum_prices(")
        new = "prices.py::sum_prices"
    proc = _git(repo, "commit", "-qam", f"move: {kind}")
    assert proc.returncode == 0 and "followed its moved code" in proc.stderr, proc.stderr
    return new


def _assert_one_fresh(repo: Path, run_cli, mid: str, keys: list[str], bases: list[str] = ()) -> Memory:
    """The memory has exactly the anchors ``keys``, each holding the code now (the fingerprint re-anchoring would
    record), ``gitmem stale`` says it is fresh and ``gitmem check`` passes against each of ``bases``."""
    m = _memory(repo, mid)
    assert [a.key for a in m.anchors] == keys
    resolver = Resolver(Repo(repo))
    for a in m.anchors:
        assert a.path is not None
        assert a.fingerprint == resolver.make(a.path, a.symbol, WORKTREE, as_typed=False).fingerprint, a.key
    code, out, err = run_cli(repo, "stale", "--all", "--json")
    assert code == 0, err
    [entry] = [e for e in json.loads(out) if e["id"] == mid]
    assert entry["status"] == "fresh", entry
    assert [(a["anchor"], a["status"]) for a in entry["anchors"]] == [(k, "fresh") for k in keys]
    for base in bases:
        code, out, err = run_cli(repo, "check", "--base", base)
        assert code == 0, out + err
    return m


@pytest.mark.parametrize("kind", ["file", "rename", "both"])
@pytest.mark.parametrize("into", ["reanchored", "moved"])
@pytest.mark.parametrize("reanchor_first", [False, True], ids=["reanchor-after-commit", "reanchor-with-commit"])
def test_reanchored_here_followed_there_merge_to_one_fresh_anchor(tmp_path: Path, run_cli, kind: str, into: str,
                                                                   reanchor_first: bool) -> None:
    repo, mid = _setup(tmp_path, run_cli, {"a.py": TOTAL}, ["a.py::total"])
    git(repo, "checkout", "-q", "-b", "moves")
    new = _move(repo, kind)
    moved = _memory(repo, mid).anchors[0]
    assert moved.key == new and moved.was == "a.py::total"
    git(repo, "checkout", "-q", "main")
    _change_and_reanchor(repo, run_cli, mid, "a.py", "count += item.price", "count += item.price * item.quantity",
                         reanchor_first=reanchor_first)
    other = "moves" if into == "reanchored" else "main"
    git(repo, "checkout", "-q", "main" if into == "reanchored" else "moves")
    proc = _git(repo, "merge", "--no-edit", other)
    assert proc.returncode == 0 and "CONFLICT" not in proc.stdout, proc.stdout + proc.stderr
    m = _assert_one_fresh(repo, run_cli, mid, [new], bases=[other, "HEAD~1"])
    assert m.anchors[0].was == "a.py::total"


def test_moved_on_one_side_renamed_on_the_other_compose(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli, {"a.py": TOTAL}, ["a.py::total"])
    git(repo, "checkout", "-q", "-b", "moves")
    _move(repo, "file")
    git(repo, "checkout", "-q", "main")
    _move(repo, "rename")
    proc = _git(repo, "merge", "--no-edit", "moves")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = _assert_one_fresh(repo, run_cli, mid, ["lib/prices.py::sum_prices"], bases=["moves", "HEAD~1"])
    assert m.anchors[0].was == "a.py::total"


def test_several_anchors_and_the_same_name_in_two_files(tmp_path: Path, run_cli) -> None:
    """Two files with the same function (the same code: equal fingerprints) and a second function: the move of
    one file and a re-anchor of the other file's copy each land on their own anchor."""
    repo, mid = _setup(tmp_path, run_cli, {"a.py": TOTAL, "b.py": TOTAL},
                       ["a.py::total", "b.py::total", "a.py::label"])
    git(repo, "checkout", "-q", "-b", "moves")
    git(repo, "mv", "a.py", "c.py")
    assert _git(repo, "commit", "-qm", "move a to c").returncode == 0
    assert [a.key for a in _memory(repo, mid).anchors] == ["c.py::total", "b.py::total", "c.py::label"]
    git(repo, "checkout", "-q", "main")
    _change_and_reanchor(repo, run_cli, mid, "b.py", "return count", "return round(count, 2)")
    proc = _git(repo, "merge", "--no-edit", "moves")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _assert_one_fresh(repo, run_cli, mid, ["c.py::total", "b.py::total", "c.py::label"], bases=["moves", "HEAD~1"])


@pytest.mark.parametrize("to", ["back", "on", "there-and-back"])
def test_a_move_back_or_on_meets_a_reanchor(tmp_path: Path, run_cli, to: str) -> None:
    """The memory already followed a move (``was: a.py::total``); one branch moves the file back (the history is
    cleared) or on (kept), or (``there-and-back``: not moved before) moves it away and back in two commits; the
    other branch re-anchors it where it is."""
    repo, mid = _setup(tmp_path, run_cli, {"a.py": TOTAL}, ["a.py::total"])
    if to != "there-and-back":
        _move(repo, "file")
    git(repo, "checkout", "-q", "-b", "moves")
    if to == "there-and-back":
        _move(repo, "file")
    if to == "on":
        git(repo, "mv", "lib/prices.py", "lib/money.py")
        key, was = "lib/money.py::total", "a.py::total"
    else:
        git(repo, "mv", "lib/prices.py", "a.py")
        key, was = "a.py::total", None
    assert _git(repo, "commit", "-qm", f"move {to}").returncode == 0
    assert (_memory(repo, mid).anchors[0].key, _memory(repo, mid).anchors[0].was) == (key, was)
    git(repo, "checkout", "-q", "main")
    where = "a.py" if to == "there-and-back" else "lib/prices.py"
    _change_and_reanchor(repo, run_cli, mid, where, "count = 0", "count = 0.0")
    proc = _git(repo, "merge", "--no-edit", "moves")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = _assert_one_fresh(repo, run_cli, mid, [key], bases=["moves", "HEAD~1"])
    assert m.anchors[0].was == was


@pytest.mark.parametrize("kind", ["file", "rename"])
@pytest.mark.parametrize("rebased", ["moves", "main"])
def test_rebase_replays_the_memory_file_through_the_driver(tmp_path: Path, run_cli, kind: str, rebased: str) -> None:
    repo, mid = _setup(tmp_path, run_cli, {"a.py": TOTAL}, ["a.py::total"])
    git(repo, "checkout", "-q", "-b", "moves")
    new = _move(repo, kind)
    git(repo, "checkout", "-q", "main")
    _change_and_reanchor(repo, run_cli, mid, "a.py", "count += item.price", "count += item.price * item.quantity",
                         reanchor_first=True)
    onto = "main" if rebased == "moves" else "moves"
    git(repo, "checkout", "-q", rebased)
    proc = _git(repo, "rebase", onto)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _assert_one_fresh(repo, run_cli, mid, [new], bases=[onto])


def test_cherry_pick_of_the_move_onto_the_reanchor(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli, {"a.py": TOTAL}, ["a.py::total"])
    git(repo, "checkout", "-q", "-b", "moves")
    new = _move(repo, "file")
    git(repo, "checkout", "-q", "main")
    _change_and_reanchor(repo, run_cli, mid, "a.py", "count += item.price", "count += item.price * item.quantity")
    proc = _git(repo, "cherry-pick", "moves")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _assert_one_fresh(repo, run_cli, mid, [new], bases=["HEAD~1"])


def test_removed_on_one_side_moved_on_the_other_stays_removed(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli, {"a.py": TOTAL}, ["a.py::total", "a.py::label"])
    git(repo, "checkout", "-q", "-b", "moves")
    _move(repo, "file")
    git(repo, "checkout", "-q", "main")
    _edit(repo, "a.py", TOTAL.split("\n\n\n")[0] + "\n\n\n", "")
    commit(repo, "total removed")
    assert run_cli(repo, "reanchor", mid, "--drop-deleted")[0] == 0
    commit(repo, "re-anchor")
    assert [a.key for a in _memory(repo, mid).anchors] == ["a.py::label"]
    proc = _git(repo, "merge", "--no-edit", "moves")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _assert_one_fresh(repo, run_cli, mid, ["lib/prices.py::label"], bases=["moves", "HEAD~1"])


def _conflicted(repo: Path, run_cli, mid: str, proc: subprocess.CompletedProcess[str], why: str) -> str:
    """The merge stopped on the memory file with ``why`` on the conflict's first marker line; ``gitmem doctor``
    names the file; returns its text."""
    name = f".gitmem/memories/{mid}.md"
    assert proc.returncode != 0
    assert f"CONFLICT (content): Merge conflict in {name}" in proc.stdout, proc.stdout
    assert f"gitmem: {name}: anchor conflict: {why}" in proc.stderr, proc.stderr
    text = (repo / name).read_text()
    assert f"<<<<<<< ours: {why}\n" in text
    code, out, _ = run_cli(repo, "doctor", "--json")
    assert code == 1
    assert any(c["level"] == "error" and f"{mid}.md" in c["message"] and "conflict" in c["message"]
               for c in json.loads(out)["checks"])
    return text


def _keep(text: str, side: str) -> str:
    """``text`` with one side of each conflict kept and the marker lines dropped (a person's resolution)."""
    out, state = [], "both"
    for line in text.splitlines(keepends=True):
        if line.startswith("<<<<<<< "):
            state = "ours"
        elif line == "=======\n" and state == "ours":
            state = "theirs"
        elif line.startswith(">>>>>>> ") and state == "theirs":
            state = "both"
        elif state in ("both", side):
            out.append(line)
    return "".join(out)


def test_moved_to_two_places_is_a_conflict(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli, {"a.py": TOTAL}, ["a.py::total", "a.py::label"])
    git(repo, "checkout", "-q", "-b", "moves")
    _move(repo, "file")
    git(repo, "checkout", "-q", "main")
    git(repo, "mv", "a.py", "money.py")
    assert _git(repo, "commit", "-qm", "a to money").returncode == 0
    proc = _git(repo, "merge", "--no-edit", "moves")
    text = _conflicted(repo, run_cli, mid, proc,
                       "a.py::total moved to money.py::total on ours, to lib/prices.py::total on theirs")
    assert "a.py::label moved to money.py::label on ours, to lib/prices.py::label on theirs" in text
    path = repo / ".gitmem" / "memories" / f"{mid}.md"
    path.write_text(_keep(text, "theirs"))  # the person keeps the other branch's place
    assert [a.key for a in read(path)[0].anchors] == ["lib/prices.py::total", "lib/prices.py::label"]


def test_reanchored_over_different_code_on_each_side_is_a_conflict(tmp_path: Path, run_cli) -> None:
    """Both branches change the function (different lines: git merges the code) and re-anchor: neither side's
    fingerprint is the merged code's."""
    repo, mid = _setup(tmp_path, run_cli, {"a.py": TOTAL}, ["a.py::total"])
    git(repo, "checkout", "-q", "-b", "other")
    _change_and_reanchor(repo, run_cli, mid, "a.py", "count = 0", "count = 0.0")
    git(repo, "checkout", "-q", "main")
    _change_and_reanchor(repo, run_cli, mid, "a.py", "return count", "return round(count, 2)")
    proc = _git(repo, "merge", "--no-edit", "other")
    assert "Merge conflict in a.py" not in proc.stdout  # the code merged; the memory cannot say which is true
    text = _conflicted(repo, run_cli, mid, proc, "a.py::total re-anchored over different code on each side "
                                                 "(ours as a.py::total, theirs as a.py::total)")
    assert text.count("- anchor: a.py::total") == 2


def test_removed_on_one_side_reanchored_on_the_other_is_a_conflict(tmp_path: Path, run_cli) -> None:
    repo, mid = _setup(tmp_path, run_cli, {"a.py": TOTAL}, ["a.py::total", "a.py::label"])
    git(repo, "checkout", "-q", "-b", "other")
    _edit(repo, "a.py", TOTAL.split("\n\n\n")[0] + "\n\n\n", "")
    commit(repo, "total removed")
    assert run_cli(repo, "reanchor", mid, "--drop-deleted")[0] == 0
    commit(repo, "re-anchor")
    git(repo, "checkout", "-q", "main")
    _change_and_reanchor(repo, run_cli, mid, "a.py", "return count", "return round(count, 2)")
    proc = _git(repo, "merge", "--no-edit", "other")
    text = _conflicted(repo, run_cli, mid, proc, "a.py::total removed on theirs, re-anchored over changed code on "
                                                 "ours (as a.py::total)")
    path = repo / ".gitmem" / "memories" / f"{mid}.md"
    path.write_text(_keep(text, "theirs"))
    assert [a.key for a in read(path)[0].anchors] == ["a.py::label"]


def _a(key: str, fp: str, *, was: str | None = None, commit: str = "1" * 40) -> Anchor:
    path, _, symbol = key.partition("::")
    return Anchor(path, symbol or None, commit, "function" if symbol else "file", (1, 3), fp, was)


def _m(*anchors: Anchor) -> Memory:
    return Memory(id="01ABC", type="decision", title="t", anchors=list(anchors), updated="2030-01-01T00:00:00Z")


def test_the_anchor_that_kept_the_code_is_the_one_that_followed() -> None:
    """One side moved ``a.py`` to ``b.py`` (the anchor followed) and then anchored the same memory to a new
    ``a.py::f``: the moved anchor is the base's (its ``was`` and its code say so), not the new one that took
    the old name; the re-anchor on the other side lands on it."""
    base = _m(_a("a.py::f", "ts1:0"))
    ours = _m(_a("a.py::f", "ts1:1", commit="2" * 40))
    theirs = _m(_a("b.py::f", "ts1:0", was="a.py::f"), _a("a.py::f", "ts1:x"))
    merged, conflict = merge_memories(base, ours, theirs)
    assert not conflict
    assert [(a.key, a.fingerprint, a.was, a.commit) for a in merged.anchors] == [
        ("b.py::f", "ts1:1", "a.py::f", "2" * 40), ("a.py::f", "ts1:x", None, "1" * 40)]


def test_a_key_changed_by_hand_is_matched_by_its_code() -> None:
    base = _m(_a("a.py::f", "ts1:0"), _a("a.py::g", "ts1:9"))
    ours = _m(_a("a.py::f", "ts1:1"), _a("a.py::g", "ts1:9"))
    theirs = _m(_a("lib/a.py::f", "ts1:0"), _a("a.py::g", "ts1:9"))  # no was: edited in the file
    merged, conflict = merge_memories(base, ours, theirs)
    assert not conflict
    assert [(a.key, a.fingerprint, a.was) for a in merged.anchors] == [("lib/a.py::f", "ts1:1", "a.py::f"),
                                                                        ("a.py::g", "ts1:9", None)]


def test_without_the_code_a_rename_against_a_reanchor_is_a_conflict_not_a_guess() -> None:
    base = _m(_a("a.py::f", "ts1:0"))
    ours = _m(_a("a.py::f", "ts1:1"))
    theirs = _m(_a("a.py::g", "ts1:0g", was="a.py::f"))
    res = merge(base, ours, theirs)  # no CodeLookup: nothing to tell a pure rename by
    assert [c.why for c in res.anchor_conflicts] == [
        "a.py::f re-anchored over different code on each side (ours as a.py::f, theirs as a.py::g)"]


SHOP = '''public class Shop {
    public int total(int discount) {
        int sum = 0;
        int seen = 0;
        for (int p : prices) {
            sum += p;
        }
        return sum - discount + seen;
    }

    public int total(String code) {
        return 0;
    }

    private int[] prices;
}
'''


def test_an_overload_renamed_in_java_against_a_reanchor(tmp_path: Path, run_cli) -> None:
    """``Shop.total(int)`` renamed ``grandTotal`` (no longer an overload: its name loses the parameter types) on
    one branch, its body changed and re-anchored on the other: one anchor, the changed code under the new name."""
    repo, mid = _setup(tmp_path, run_cli, {"Shop.java": SHOP}, ["Shop.java::Shop.total(int)"])
    git(repo, "checkout", "-q", "-b", "moves")
    _edit(repo, "Shop.java", "public int total(int discount)", "public int grandTotal(int discount)")
    assert "followed its moved code" in _git(repo, "commit", "-qam", "rename").stderr
    git(repo, "checkout", "-q", "main")
    _change_and_reanchor(repo, run_cli, mid, "Shop.java", "sum += p;", "sum += 2 * p;")
    proc = _git(repo, "merge", "--no-edit", "moves")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = _assert_one_fresh(repo, run_cli, mid, ["Shop.java::Shop.grandTotal"], bases=["moves", "HEAD~1"])
    assert m.anchors[0].was == "Shop.java::Shop.total(int)"


def test_revert_of_the_move_after_a_reanchor_moves_the_anchor_back(tmp_path: Path, run_cli) -> None:
    """``git revert`` of the commit the memory followed, after the code was changed and re-anchored at its new
    place: the anchor goes back with the code (its ``was`` cleared) and keeps the re-anchored fingerprint."""
    repo, mid = _setup(tmp_path, run_cli, {"a.py": TOTAL}, ["a.py::total"])
    _move(repo, "file")
    moved = git(repo, "rev-parse", "HEAD").strip()
    _change_and_reanchor(repo, run_cli, mid, "lib/prices.py", "count = 0", "count = 0.0")
    proc = _git(repo, "revert", "--no-edit", moved)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = _assert_one_fresh(repo, run_cli, mid, ["a.py::total"], bases=["HEAD~1"])
    assert m.anchors[0].was is None
