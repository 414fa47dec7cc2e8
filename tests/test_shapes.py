"""The JSON shapes contract (``gitmem.shapes``): every document the CLI and MCP print carries
``schema_version``, and in JSON mode stdout holds only JSON.

Every read command (and the writing ones) runs with ``--json`` on a real repository; each printed
object, each element of a printed array, each ``export`` line, each warning and error on stderr and
each MCP tool result's structured content is checked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gitmem import shapes
from testing.repos import commit, make_repo

PY = "def load(path):\n    return open(path).read()\n\n\ndef save(path, data):\n    open(path, 'w').write(data)\n"


def _versioned(doc: Any) -> None:
    """``doc`` is a versioned object, or an array of versioned objects (arrays stay arrays)."""
    items = doc if isinstance(doc, list) else [doc]
    for item in items:
        assert isinstance(item, dict), doc
        assert item["schema_version"] == shapes.SCHEMA_VERSION, item


@pytest.fixture
def json_of(run_cli):
    """``json_of(cwd, *args, code=0) -> parsed stdout``: stdout is exactly one JSON document, versioned;
    every stderr line that is JSON (a warning) is versioned too."""
    def run(cwd: Path, *args: str, code: int = 0) -> Any:
        got, out, err = run_cli(cwd, *args, "--json")
        assert got == code, f"exit {got}: {err}"
        doc = json.loads(out)  # raises if anything but one JSON document is on stdout
        _versioned(doc)
        for warning in _stderr_objects(err):
            _versioned(warning)
        return doc

    return run


def _stderr_objects(err: str) -> list[Any]:
    """The JSON objects printed on stderr (pretty-printed, one after another)."""
    dec, objs, i = json.JSONDecoder(), [], 0
    err = err.strip()
    while i < len(err):
        obj, end = dec.raw_decode(err, i)
        objs.append(obj)
        i = end
        while i < len(err) and err[i].isspace():
            i += 1
    return objs


@pytest.fixture
def repo(tmp_path: Path, json_of) -> Path:
    """An initialised repository (hooks installed) with one committed memory and one local one."""
    r = make_repo(tmp_path / "r", {"io.py": PY})
    init = json_of(r, "init")
    assert init["created"] and init["hooks"]["installed"]
    return r


def test_every_command_prints_versioned_json(repo: Path, json_of, run_cli) -> None:
    mem = json_of(repo, "remember", "Loading reads the whole file", "--anchor", "io.py::load", "--type", "gotcha")
    mid = mem["id"]
    local = json_of(repo, "remember", "Save truncates first", "--anchor", "io.py::save", "--local")["id"]
    commit(repo, "remember")
    assert json_of(repo, "init")["created"] == []                      # init_json, idempotent
    json_of(repo, "hooks", "install")                                  # hooks_report_json
    states = json_of(repo, "hooks", "status")                          # [hook_state_json]
    assert isinstance(states, list) and states
    assert {m["id"] for m in json_of(repo, "list")} == {mid, local}    # [memory_json]
    shown = json_of(repo, "show", mid)                                 # memory_detail_json
    assert shown["anchor_statuses"][0]["status"] == "fresh"
    assert json_of(repo, "recall", "whole file")[0]["id"] == mid       # [recall_hit_json]
    ctx = json_of(repo, "context", "--file", "io.py")                  # context_json
    assert mid in ctx["detailed"] + ctx["indexed"] and "focus" in ctx
    assert json_of(repo, "stale") == []                                # [memory_status_json] (empty)
    assert json_of(repo, "check")["ok"] is True                        # check_json
    assert len(json_of(repo, "log", mid)) >= 1                         # [log_entry_json]
    assert json_of(repo, "scan")["evaluated"] == 2                     # scan_json
    json_of(repo, "sync")                                              # sync_json
    assert json_of(repo, "tidy")["findings"] == 0                      # tidy_json (tidy_memory_json nested)
    code, out, _ = run_cli(repo, "doctor", "--json")                   # doctor_json (exit 1 when not ok)
    doctor = json.loads(out)
    _versioned(doctor)
    assert code == (0 if doctor["ok"] else 1)
    assert {"name", "level", "message", "hint"} <= set(doctor["checks"][0])
    assert json_of(repo, "consolidate") == []                          # [consolidation_json] (nothing spooled)

    commit(repo, "change load", {"io.py": PY.replace("open(path).read()", "open(path, 'rb').read()")})
    stale = json_of(repo, "stale")                                     # [memory_status_json]
    assert [s["id"] for s in stale] == [mid]
    assert json_of(repo, "scan", "HEAD~1..HEAD")["not_fresh"][0]["id"] == mid
    re = json_of(repo, "reanchor", mid)                                # [reanchored_json]
    assert re[0]["id"] == mid
    assert json_of(repo, "share", local)[0]["scope"] == "team"         # [shared_json]
    new = json_of(repo, "supersede", mid, "Loading reads the file as bytes")  # superseded_json
    assert new["supersedes"] == mid
    assert json_of(repo, "retire", new["id"], "--reason", "moot")["retired"]  # retired_json
    assert json_of(repo, "forget", local)["forgotten"] is True         # forgotten_json


def test_export_lines_import_and_stderr_are_versioned(repo: Path, tmp_path: Path, json_of, run_cli) -> None:
    mid = json_of(repo, "remember", "Loading reads the whole file", "--anchor", "io.py::load")["id"]
    code, out, err = run_cli(repo, "export")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert [x["id"] for x in lines] == [mid]
    _versioned(lines)
    assert lines[0]["format"] == shapes.EXPORT_FORMAT
    other = make_repo(tmp_path / "other", {"io.py": PY})
    json_of(other, "init", "--no-hooks")
    src = tmp_path / "m.jsonl"
    src.write_text(out, encoding="utf-8")
    assert json_of(other, "import", str(src))["written"] == [mid]     # import_json

    # warnings (an invalid memory file) and errors go to stderr as versioned objects, stdout stays JSON
    (repo / ".gitmem" / "memories" / "01BADBADBADBADBADBADBADBAD.md").write_text("not a memory\n")
    code, out, err = run_cli(repo, "list", "--json")
    assert code == 0
    _versioned(json.loads(out))
    warnings = _stderr_objects(err)
    assert warnings and all("warning" in w for w in warnings)
    _versioned(warnings)
    code, out, err = run_cli(repo, "show", "NOPE", "--json")
    assert code == 1 and out == ""
    (error,) = _stderr_objects(err)
    assert set(error) == {"schema_version", "error", "hint"}
    _versioned(error)


def test_mcp_structured_content_is_versioned(repo: Path) -> None:
    pytest.importorskip("mcp")
    from gitmem.integrations.mcp_server import GitmemTools, ToolFailure, _Runner

    tools = GitmemTools(repo)
    _, data = tools.remember("Loading reads the whole file", anchors=["io.py::load"])
    _versioned(data)
    mid = data["id"]
    for _, data in (tools.search("whole file"), tools.get([mid]), tools.stale(), tools.context("io.py")):
        _versioned(data)
    with pytest.raises(ToolFailure) as failed:
        tools.get(["NOPE"])
    _versioned(failed.value.data)
    run = _Runner(tools)
    for result in (run(lambda: tools.get(["NOPE"])), run(lambda: tools.get([])),
                   run(lambda: tools.remember("x", anchors=["io.py::nope"]))):
        assert result.is_error
        _versioned(result.structured_content)
    assert "candidates" in run(lambda: tools.remember("x", anchors=["io.py::nope"])).structured_content


def test_shapes_docstring_lists_every_shape() -> None:
    """Each public ``*_json`` function of ``shapes`` is named in the module docstring (the shapes list)."""
    doc = shapes.__doc__ or ""
    names = [n for n in dir(shapes) if n.endswith("_json") and callable(getattr(shapes, n))]
    assert names
    assert [n for n in names if f"``{n}``" not in doc] == []
