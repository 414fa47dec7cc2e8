"""The moments benchmark's own helpers (bench/moments.py): the metrics, the "files, newest" baseline, the history cut
and the check that a task's trees are whole, on real git repositories in temporary folders."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench.moments import complete, cut_history, metrics, on_files
from bench.retrieval import Commit
from gitmem.model import Anchor, Memory


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def _repo(tmp_path: Path, n: int) -> tuple[Path, list[str]]:
    """A repository of ``n`` linear commits, each changing ``a.py``: (its root, the SHAs oldest first)."""
    root = tmp_path / "r"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "t@example.com")
    _git(root, "config", "user.name", "t")
    shas = []
    for i in range(n):
        (root / "a.py").write_text(f"def f():\n    return {i}\n")
        _git(root, "add", "a.py")
        _git(root, "commit", "-q", "-m", f"c{i}")
        shas.append(_git(root, "rev-parse", "HEAD").strip())
    return root, shas


def test_metrics_count_recall_ndcg_and_a_hit_in_the_top_five() -> None:
    ranked = ["x1", "r1", "x2", "x3", "x4", "x5", "r2", "x6", "x7", "x8", "r3"]
    m = metrics(ranked, {"r1", "r2", "r3"})
    assert m["recall@5"] == pytest.approx(1 / 3)
    assert m["recall@10"] == pytest.approx(2 / 3)
    assert m["hit@5"] == 1.0
    assert 0 < m["ndcg@10"] < 1
    assert metrics(["x1", "x2", "x3", "x4", "x5", "r1"], {"r1"})["hit@5"] == 0.0
    assert metrics(["r1", "r2"], {"r1", "r2"})["ndcg@10"] == pytest.approx(1.0)


def test_files_newest_keeps_the_order_and_only_memories_on_the_files() -> None:
    def mem(mid: str, path: str) -> Memory:
        return Memory(id=mid, type="discovery", title=mid, body="", anchors=[Anchor(path=path, symbol="f")])

    newest = [mem("3", "b.py"), mem("2", "a.py"), mem("1", "c.py"), mem("0", "a.py")]
    assert on_files(newest, {"a.py", "c.py"}) == ["2", "1", "0"]
    assert on_files(newest, set()) == []


def test_cut_history_leaves_the_last_commits_with_the_oldest_kept_as_a_root(tmp_path: Path) -> None:
    root, shas = _repo(tmp_path, 6)
    cut_history(root, 3)
    log = _git(root, "log", "--format=%H %P", "HEAD").splitlines()
    assert [line.split()[0] for line in log] == shas[:2:-1]
    assert log[-1].split() == [shas[3]]  # no parent: as a --depth clone's boundary


def test_complete_is_false_when_a_blob_of_the_parent_is_missing(tmp_path: Path) -> None:
    root, shas = _repo(tmp_path, 3)
    c = Commit(sha=shas[2], parents=[shas[1]], date="", author="", message="")
    assert complete(root, c)
    blob = _git(root, "rev-parse", f"{shas[1]}:a.py").strip()
    (root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # loose objects: the repository never packed
    assert not complete(root, c)


def test_cached_history_reads_back_what_it_diffed(tmp_path: Path) -> None:
    from bench.moments import cached_history
    from gitmem.anchors import Resolver
    from gitmem.git import Repo

    root, shas = _repo(tmp_path, 3)
    repo = Repo(root)
    cache = tmp_path / "cache"
    first = cached_history(repo, Resolver(repo), cache, "r")
    assert [c.sha for c in first] == shas and first[1].changed == [("a.py", "f")]
    assert len(list(cache.iterdir())) == 1
    again = cached_history(repo, Resolver(repo), cache, "r")
    assert again == first  # read back: the same commits, tuples and all
    cut_history(root, 2)  # another cut of the history is another key
    assert [c.sha for c in cached_history(repo, Resolver(repo), cache, "r")] == shas[1:]
    assert len(list(cache.iterdir())) == 2


def test_compare_matches_tasks_by_commit_and_counts_wins(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``bench/moments_compare.py``: only the tasks both runs hold are compared (by commit), the means are theirs,
    and the per-task counts say where context beats, ties or trails the moment's baseline."""
    import json

    from bench.moments_compare import main

    def task(sha: str, ctx: float, files: float, bm25: float) -> dict[str, object]:
        def m(v: float) -> dict[str, float]:
            return {"recall@5": v, "recall@10": v, "ndcg@10": v, "hit@5": 1.0 if v else 0.0}
        base = {"newest": m(0.0), "bm25": m(bm25)}
        return {"sha": sha, "moments": {
            "mid-task": {"metrics": {"context": m(ctx), "files, newest": m(files), **base}},
            "before edit": {"metrics": {"context": m(ctx), "files, newest": m(files), **base}},
            "prompt only": {"metrics": {"context": m(ctx), **base}}}}

    before = tmp_path / "b.json"
    after = tmp_path / "a.json"
    before.write_text(json.dumps({"queries": [task("c1", 0.2, 0.5, 0.1), task("c2", 0.4, 0.5, 0.1),
                                              task("c3", 1.0, 0.0, 0.0)]}))
    after.write_text(json.dumps({"queries": [task("c1", 0.6, 0.5, 0.1), task("c2", 0.5, 0.5, 0.7)]}))
    assert main([f"x/y={before}:{after}"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 tasks (x/y)")  # c3 is only in one run
    assert "| before edit | **context** | 0.300 / 0.300 / 0.300 / 1.00 | **0.550 / 0.550 / 0.550 / 1.00** |" in out
    assert "before edit: context vs files, newest, nDCG@10 per task after: better 1, same 1, worse 0" in out
    assert "prompt only: context vs bm25, nDCG@10 per task after: better 1, same 0, worse 1" in out
    assert "| x/y | 0.300 / 0.300 → 0.550 / 0.550 |" in out
