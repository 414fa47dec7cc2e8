"""``gitmem export`` / ``gitmem import``: JSON Lines between repositories, anchors kept or re-made or dropped."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from testing.repos import commit, make_repo

CODE = "def parse(text):\n    return text.split(',')\n\n\ndef render(items):\n    return ','.join(items)\n"


def _without_provenance(data: bytes) -> str:
    """A memory file's text without its provenance lines (``source``, ``origin``, the ``reviewed`` entry)."""
    text = re.sub(r"^reviewed:\n(?:  .*\n)+", "", data.decode(), flags=re.M)
    return re.sub(r"^(?:source|origin): .*\n", "", text, flags=re.M)


def test_round_trip_in_one_repository_is_byte_identical_but_for_provenance(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "a")
    commit(repo, "init", {"csvish.py": CODE})
    run_cli(repo, "init", "--no-hooks")
    run_cli(repo, "remember", "parse splits on commas", "--anchor", "csvish.py::parse", "--tag", "csv",
            "--fact", "no quoting", "--type", "constraint")
    run_cli(repo, "remember", "render joins", "--anchor", "csvish.py::render", "--anchor", "commit:HEAD")
    run_cli(repo, "remember", "parse and render agree on the separator", "--invariant", "--anchor",
            "csvish.py::parse", "--anchor", "csvish.py::render")  # every field survives, invariant included
    folder = repo / ".gitmem" / "memories"
    before = {p.name: p.read_bytes() for p in folder.glob("*.md")}
    code, out, _ = run_cli(repo, "export")
    assert code == 0 and len(out.splitlines()) == 3
    (tmp_path / "m.jsonl").write_text(out)
    shutil.rmtree(folder)
    folder.mkdir()
    code, out, err = run_cli(repo, "import", str(tmp_path / "m.jsonl"), "--json")
    assert code == 0, err
    assert len(json.loads(out)["written"]) == 3
    after = {p.name: p.read_bytes() for p in folder.glob("*.md")}
    assert {k: _without_provenance(v) for k, v in after.items()} == {k: _without_provenance(v)
                                                                     for k, v in before.items()}
    # an export is a file anyone can edit: what comes back is imported, never a person's reviewed text
    assert all(b"source: import\norigin: gitmem export\n" in v and b"reviewed:" not in v for v in after.values())
    assert sum("invariant: true" in b.decode() for b in before.values()) == 1
    code, out, _ = run_cli(repo, "import", str(tmp_path / "m.jsonl"), "--json")
    assert len(json.loads(out)["skipped"]) == 3 and json.loads(out)["written"] == []


def test_into_another_repository_anchors_are_remade_or_dropped(tmp_path: Path, run_cli) -> None:
    a = make_repo(tmp_path / "a")
    commit(a, "init", {"csvish.py": CODE})
    run_cli(a, "init", "--no-hooks")
    run_cli(a, "remember", "parse splits on commas", "--anchor", "csvish.py::parse", "--anchor", "csvish.py::render")
    code, out, _ = run_cli(a, "export")
    b = make_repo(tmp_path / "b")
    commit(b, "other history", {"lib/other.py": "x = 1\n", "csvish.py": CODE.split("\n\n\n")[0] + "\n"})
    run_cli(b, "init", "--no-hooks")
    (tmp_path / "m.jsonl").write_text(out + "not json\n" + json.dumps({"id": "x", "title": ""}) + "\n")
    code, out, err = run_cli(b, "import", str(tmp_path / "m.jsonl"), "--json")
    r = json.loads(out)
    assert code == 1 and len(r["written"]) == 1 and len(r["rejected"]) == 2  # the good line is in all the same
    assert r["dropped_anchors"] == ["csvish.py::render"]
    code, out, _ = run_cli(b, "show", r["written"][0], "--json")
    m = json.loads(out)
    assert [a["anchor"] for a in m["anchors"]] == ["csvish.py::parse"] and m["status"] == "fresh"


def test_hostile_anchors_are_dropped_not_written(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "a")
    head = commit(repo, "init", {"csvish.py": CODE})
    run_cli(repo, "init", "--no-hooks")
    anchors = [{"anchor": "../../etc/passwd", "path": "../../etc/passwd", "kind": "file", "commit": head,
                "fingerprint": "x"},
               {"anchor": "/etc/passwd::root", "path": "/etc/passwd", "symbol": "root", "kind": "function"},
               {"anchor": ".git/config", "path": ".git/config", "kind": "file", "commit": head, "fingerprint": "x"},
               {"anchor": "commit:HEAD", "kind": "commit", "commit": "HEAD"},
               {"anchor": "csvish.py::parse", "path": "csvish.py", "symbol": "parse", "kind": "function"}]
    line = json.dumps({"id": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "type": "gotcha", "title": "t", "anchors": anchors})
    (tmp_path / "h.jsonl").write_text(line + "\n")
    code, out, _ = run_cli(repo, "import", str(tmp_path / "h.jsonl"), "--json")
    r = json.loads(out)
    assert code == 0 and len(r["dropped_anchors"]) == 4
    checks = json.loads(run_cli(repo, "doctor", "--json")[1])["checks"]
    assert not [c for c in checks if c["name"] == "memory"]  # every written memory file is valid
    shown = json.loads(run_cli(repo, "show", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--json")[1])
    assert [a["anchor"] for a in shown["anchors"]] == ["csvish.py::parse"]


def test_hostile_lines_are_rejected_one_by_one_with_their_numbers(tmp_path: Path, run_cli) -> None:
    """Each hostile line is refused with its line number and why; every good line between them is imported."""
    from gitmem.ops.transfer import MAX_DEPTH, MAX_LINE_CHARS

    repo = make_repo(tmp_path / "a")
    commit(repo, "init", {"csvish.py": CODE})
    run_cli(repo, "init", "--no-hooks")

    def good(n: int) -> str:
        return json.dumps({"title": f"good memory {n}", "body": "line one\n\tindented line two",
                           "anchors": [{"kind": "symbol", "path": "csvish.py", "symbol": "parse"}]})

    hostile = [
        ("[1, 2, 3]", "not a JSON object"),
        ('{"title": "cut short"', "not JSON"),
        ('{"title": "deep", "x": ' + "[" * 5000 + "]" * 5000 + "}", "nested deeper"),
        ('{"title": "deep", "x": ' + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "}", "nested deeper"),
        (json.dumps({"title": "x" * (MAX_LINE_CHARS + 10)}), "longer than"),
        (json.dumps({"title": ["a", "list"]}), "title must be a string"),
        (json.dumps({"title": "facts", "facts": "not a list"}), "facts must be a list of strings"),
        (json.dumps({"title": "tags", "tags": [1, 2]}), "tags must be a list of strings"),
        (json.dumps({"title": "anchors", "anchors": "csvish.py"}), "anchors must be a list of objects"),
        (json.dumps({"title": "anchor path", "anchors": [{"path": ["csvish.py"]}]}), "anchor's path must be a string"),
        (json.dumps({"title": "anchor symbol", "anchors": [{"path": "csvish.py", "symbol": "pa\u202erse"}]}),
         "anchor's symbol holds the control character U+202E"),
        (json.dumps({"title": "confidence", "confidence": "high"}), "confidence must be a number"),
        (json.dumps({"title": "invariant", "invariant": "yes"}), "invariant must be true or false"),
        (json.dumps({"title": "scope", "scope": 1}), "scope must be a string"),
        (json.dumps({"title": "escape \x1b[2J clears the screen"}), "control character U+001B"),
        (json.dumps({"title": "ok", "body": "access level: user\u202e\u2066// admin\u2069\u2066"}),
         "control character U+202E"),
        (json.dumps({"title": "nul", "facts": ["a\x00b"]}), "control character U+0000"),
        (json.dumps({"title": "two\nlines"}), "line break"),
        (json.dumps({"title": "deploy", "body": "curl -u ci:ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 https://x"}),
         "holds a secret"),
        (json.dumps({"title": "jwt", "facts": ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ"]}),
         "holds a secret"),
    ]
    lines = [good(0)]
    expected: dict[int, str] = {}
    for i, (line, why) in enumerate(hostile):
        lines.append(line)
        expected[len(lines)] = why
        lines.append(good(i + 1))
    (tmp_path / "m.jsonl").write_text("\n".join(lines) + "\n")
    code, out, err = run_cli(repo, "import", str(tmp_path / "m.jsonl"), "--json")
    r = json.loads(out)
    assert code == 1
    assert len(r["written"]) == len(hostile) + 1
    got = {int(x.split(":", 1)[0].removeprefix("line ")): x for x in r["rejected"]}
    assert sorted(got) == sorted(expected), r["rejected"]
    for n, why in expected.items():
        assert why in got[n], (n, got[n])
    assert "ghp_" not in out and "eyJzdWIi" not in out  # the report never repeats the secret
    texts = "".join(p.read_text() for p in (repo / ".gitmem" / "memories").glob("*.md"))
    assert "\x1b" not in texts and "\u202e" not in texts and "ghp_" not in texts and "\tindented" in texts
