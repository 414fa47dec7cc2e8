"""``list`` and ``recall`` show each memory's status; ``list`` filters by status and scope; an ambiguous id
prefix names its candidates. Real repositories, real parses."""

from __future__ import annotations

import json
from pathlib import Path

from testing.repos import commit, make_repo

CODE = "def parse(text):\n    return text.split(',')\n\n\ndef render(items):\n    return ','.join(items)\n"


def _repo(tmp_path: Path, run_cli) -> tuple[Path, dict[str, str]]:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE})
    run_cli(repo, "init", "--no-hooks")
    ids = {}
    for name, scope in (("parse", "team"), ("render", "team"), ("local", "local")):
        anchor = "csvish.py::render" if name == "local" else f"csvish.py::{name}"
        code, out, err = run_cli(repo, "remember", f"{name} joins and splits on commas", "--anchor", anchor,
                                 *(["--local"] if scope == "local" else []), "--json")
        assert code == 0, err
        ids[name] = json.loads(out)["id"]
    commit(repo, "memories")
    commit(repo, "parse strips", {"csvish.py": CODE.replace("text.split(',')", "[t.strip() for t in text.split(',')]")})
    return repo, ids


def test_list_shows_status_and_filters(tmp_path: Path, run_cli) -> None:
    repo, ids = _repo(tmp_path, run_cli)
    code, out, _ = run_cli(repo, "list")
    assert code == 0
    lines = {ln.split()[0]: ln for ln in out.splitlines()}
    assert "⚠ stale" in lines[ids["parse"]] and "fresh" in lines[ids["render"]]
    rows = json.loads(run_cli(repo, "list", "--json")[1])
    assert {r["id"]: r["status"] for r in rows} == {ids["parse"]: "stale", ids["render"]: "fresh",
                                                    ids["local"]: "fresh"}
    assert [r["id"] for r in json.loads(run_cli(repo, "list", "--status", "not-fresh", "--json")[1])] == [ids["parse"]]
    assert [r["id"] for r in json.loads(run_cli(repo, "list", "--status", "stale", "--json")[1])] == [ids["parse"]]
    assert {r["id"] for r in json.loads(run_cli(repo, "list", "--status", "fresh", "--json")[1])} == {
        ids["render"], ids["local"]}
    assert [r["id"] for r in json.loads(run_cli(repo, "list", "--scope", "local", "--json")[1])] == [ids["local"]]
    got = json.loads(run_cli(repo, "list", "--scope", "team", "--status", "fresh", "--json")[1])
    assert [r["id"] for r in got] == [ids["render"]]
    code, _, err = run_cli(repo, "list", "--status", "rotten")
    assert code == 2 and "rotten" in err


def test_recall_shows_status(tmp_path: Path, run_cli) -> None:
    repo, ids = _repo(tmp_path, run_cli)
    hits = json.loads(run_cli(repo, "recall", "splits on commas", "--json")[1])
    by_id = {h["id"]: h["status"] for h in hits}
    assert by_id[ids["parse"]] == "stale" and by_id[ids["render"]] == "fresh"
    out = run_cli(repo, "recall", "splits on commas")[1]
    assert any(ids["parse"] in ln and "⚠ stale" in ln for ln in out.splitlines())


def test_an_ambiguous_prefix_names_its_candidates(tmp_path: Path, run_cli) -> None:
    repo, ids = _repo(tmp_path, run_cli)
    common = ""
    a, b = ids["parse"], ids["render"]
    while len(common) < len(a) and a[len(common)] == b[len(common)]:
        common += a[len(common)]
    assert common, "ULIDs made in one run share their time prefix"
    code, _, err = run_cli(repo, "show", common)
    assert code != 0 and "ambiguous" in err
    assert a in err and b in err and "more characters" in err
