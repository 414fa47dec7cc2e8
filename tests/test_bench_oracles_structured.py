"""The structured-file oracles of bench/oracles (data.py, docs.py): the ground truth of bench/structured.py.

An oracle that called a reformat a change, or missed a value change, would grade gitmem wrongly; these pin
what each oracle calls the same and what it calls different, on small real files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.oracles.data import JsonOracle, TomlOracle, YamlOracle, key_part
from bench.oracles.docs import MakeOracle
from testing.repos import commit, make_repo


def test_json_keys_ignore_order_and_whitespace_but_not_values() -> None:
    o = JsonOracle()
    a = o.symbols(b'{"name": "x", "scripts": {"test": "jest", "lint": "eslint ."}}', "package.json")
    b = o.symbols(b'{\n  "scripts": {"lint": "eslint .",\n "test": "jest"},\n  "name": "x"\n}\n', "package.json")
    c = o.symbols(b'{"name": "x", "scripts": {"test": "jest --ci", "lint": "eslint ."}}', "package.json")
    assert a == b
    assert a["scripts.test"] != c["scripts.test"] and a["scripts.lint"] == c["scripts.lint"]
    assert a["scripts"] != c["scripts"]


def test_key_parts_with_separators_are_quoted() -> None:
    assert key_part("line-length") == "line-length"
    assert key_part("./lib") == '"./lib"'
    o = JsonOracle()
    assert set(o.symbols(b'{"exports": {"./a.js": 1}}', "package.json")) == {"exports", 'exports."./a.js"'}


def test_toml_tables_hold_their_subtables() -> None:
    o = TomlOracle()
    a = o.symbols(b'[tool.ruff]\nline-length = 120\n[tool.ruff.lint]\nselect = ["E"]\n', "pyproject.toml")
    b = o.symbols(b'[tool.ruff]\nline-length = 120  # wide\n[tool.ruff.lint]\nselect = [\n  "E",\n]\n',
                  "pyproject.toml")
    c = o.symbols(b'[tool.ruff]\nline-length = 120\n[tool.ruff.lint]\nselect = ["E", "F"]\n', "pyproject.toml")
    assert a == b
    assert a["tool.ruff.line-length"] == c["tool.ruff.line-length"]
    assert a["tool.ruff"] != c["tool.ruff"] and a["tool.ruff.lint.select"] != c["tool.ruff.lint.select"]


def test_yaml_keys_keep_their_written_text_and_flow_equals_block() -> None:
    o = YamlOracle()
    block = o.symbols(b"on:\n  push:\n    branches: [main]\njobs:\n  build:\n    runs-on: ubuntu-latest\n", "ci.yml")
    flow = o.symbols(b"jobs: {build: {'runs-on': \"ubuntu-latest\"}}\non: {push: {branches: [main]}}\n", "ci.yml")
    assert "on.push.branches" in block  # YAML 1.1 would read `on` as true
    assert block == flow
    typed = o.symbols(b"python: 3.10\n", "x.yml"), o.symbols(b"python: '3.10'\n", "x.yml")
    assert typed[0]["python"] != typed[1]["python"]  # the float 3.1 and the string "3.10" differ


def test_markdown_sections_nest_and_ignore_reflow() -> None:
    pytest.importorskip("markdown_it")
    from bench.oracles.docs import MarkdownOracle

    o = MarkdownOracle()
    a = o.symbols(b"# Deploy\n\nSteps.\n\n## Rollback\n\nRun *this* and\nthat.\n\n## v1.2 (beta)\n\nx\n", "r.md")
    b = o.symbols(b"Deploy\n======\n\nSteps.\n\n## Rollback ##\n\nRun _this_ and that.\n\n## v1.2 (beta)\n\nx\n",
                  "r.md")
    assert set(a) == {"Deploy", "Rollback", "(v1.2 {beta})"}  # the only level-1 heading is a title: left out
    assert a == b
    two = o.symbols(b"# Deploy\n\n## Rollback\n\nx\n\n# FAQ\n\ny\n", "r.md")
    assert set(two) == {"Deploy", "Deploy.Rollback", "FAQ"}


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
def test_make_targets_run_nothing() -> None:
    o = MakeOracle()
    src = b"X := $(shell touch /tmp/gitmem-oracle-pwned)\nall: build\n\tgo build ./...\nbuild:\n\t@echo hi\n"
    got = o.symbols(src, "Makefile")
    assert got["all"].startswith("build\n") and "go build" in got["all"]
    import os

    assert not os.path.exists("/tmp/gitmem-oracle-pwned")


def test_yaml_steps_by_name_documents_merges_and_repeats() -> None:
    o = YamlOracle()
    src = (b"base: &b {image: alpine, size: 1}\n"
           b"job:\n  <<: *b\n  size: 2\n  steps:\n    - name: Run tests\n      run: pytest\n    - run: echo\n"
           b"---\nkind: Pod\n")
    got = o.symbols(src, "ci.yml")
    assert got["job"] == '{"image":"alpine","size":["int","2"],"steps":[{"name":"Run tests","run":"pytest"},' \
        '{"run":"echo"}]}'
    assert got["job.steps[Run tests]"] == '{"run":"pytest"}' and got["job.steps[Run tests].run"] == '"pytest"'
    assert got["#2.kind"] == '"Pod"' and "job.<<" not in got
    assert set(JsonOracle().symbols(b'{"a": 1, "a": 2}', "x.json")) == {"a", "a#2"}


def test_structured_replay_grades_gitmem_and_the_file_baseline_on_a_real_history(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/structured.py end to end on a small real repository: one key changed, one reordered, one renamed
    table; gitmem's verdicts are graded by json and the file-level baseline sits beside them."""
    import bench.structured as structured

    repo = make_repo(tmp_path / "owner+name" / "repo", {"package.json": json.dumps(
        {"name": "x", "scripts": {"test": "jest", "lint": "eslint ."}, "version": "1.0.0"}, indent=2)})
    commit(repo, "bump", {"package.json": json.dumps(
        {"version": "1.0.1", "name": "x", "scripts": {"lint": "eslint .", "test": "jest --ci"}}, indent=4)})
    monkeypatch.setattr(structured, "MIRRORS", tmp_path)
    report = structured.replay("owner+name", ("json",), ("package.json",), 20, 3, 1)
    assert report["anchors"] == 5 and report["graded"] == 5
    assert report["changed"] == 3  # version, scripts, scripts.test; name and scripts.lint are unchanged
    assert report["gitmem"] == {"true_stale": 3, "false_stale": 0, "missed_changes": 0, "precision": 1.0,
                                "recall": 1.0}
    assert report["file_baseline"]["false_stale"] == 2 and report["file_baseline"]["recall"] == 1.0


def test_file_pairs_stay_inside_the_history_and_follow_the_seed() -> None:
    import random

    from bench.structured import FILE_GAP_MAX, file_pairs

    pairs = file_pairs(25, 10, random.Random(1))
    assert pairs == file_pairs(25, 10, random.Random(1))
    assert all(0 <= older < later <= 24 and later - older <= FILE_GAP_MAX for older, later in pairs)
    assert file_pairs(1, 10, random.Random(1)) == []
