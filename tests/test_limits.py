"""Bounded inputs and outputs: a memory's size limit through every way in (CLI, MCP, import, consolidation),
and MCP replies that stay under what agents accept. Real repositories, a real MCP server over stdio."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.config import DEFAULT_MAX_CHARS
from gitmem.git import Repo
from gitmem.integrations.mcp_server import MAX_REPLY_CHARS, QUERY_ECHO_CHARS
from gitmem.memories import CUT_MARK, fit, text_chars
from gitmem.model import Memory
from gitmem.store import Store
from testing.repos import commit, make_repo
from tests.test_mcp import _init_repo, _run, _server, _text

LOG = "\n".join(f"2026-11-30 12:00:{i % 60:02d} ERROR worker {i}: connection reset by peer" for i in range(400))


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:
    r = make_repo(tmp_path / "r")
    commit(r, "init", {"app.py": "def run():\n    return 1\n"})
    assert run_cli(r, "init", "--no-hooks")[0] == 0
    return r


def test_remember_refuses_a_log_with_a_hint(repo: Path, run_cli) -> None:
    assert len(LOG) > DEFAULT_MAX_CHARS
    code, out, err = run_cli(repo, "remember", "worker crash\n" + LOG, "--anchor", "app.py::run")
    assert code == 1 and out == ""
    assert f"over the limit of {DEFAULT_MAX_CHARS:,}" in err and "put the log or document in a file" in err
    assert not list((repo / ".gitmem" / "memories").glob("*.md"))
    (repo / ".gitmem" / "config.toml").write_text((repo / ".gitmem" / "config.toml").read_text()
                                                   .replace("max_chars = 4000", "max_chars = 50000"))
    assert run_cli(repo, "remember", "worker crash\n" + LOG, "--anchor", "app.py::run")[0] == 0
    (repo / ".gitmem" / "config.toml").write_text((repo / ".gitmem" / "config.toml").read_text()
                                                   .replace("max_chars = 50000", "max_chars = 10"))
    code, _, err = run_cli(repo, "remember", "short", "--anchor", "app.py::run")
    assert code == 1 and "memory.max_chars must be an integer >= 200" in err


def test_import_rejects_the_long_line_and_keeps_the_others(repo: Path, run_cli, tmp_path: Path) -> None:
    lines = [json.dumps({"title": "short one", "body": "fine"}), json.dumps({"title": "a log", "body": LOG})]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    code, out, _ = run_cli(repo, "import", str(tmp_path / "in.jsonl"), "--json")
    r = json.loads(out)
    assert code == 1 and len(r["written"]) == 1
    assert len(r["rejected"]) == 1 and r["rejected"][0].startswith("line 2: the memory is")


def test_fit_cuts_the_body_then_facts_and_keeps_the_rest() -> None:
    m = Memory(id="01JD3V6Q000000000000000000", type="discovery", title="worker crash", body=LOG,
               facts=[f"fact {i} " + "x" * 300 for i in range(20)], tags=["workers"])
    cut = fit(m, 4000)
    assert text_chars(cut) <= 4000 and cut.title == m.title and cut.tags == m.tags
    assert cut.body.endswith(CUT_MARK.strip()) and cut.facts == m.facts[:len(cut.facts)]
    small = Memory(id=m.id, type="discovery", title="t", body="b")
    assert fit(small, 4000) is small


def test_mcp_remember_refuses_and_replies_stay_bounded(repo: Path, tmp_path: Path) -> None:
    repo = _init_repo(tmp_path / "m")
    store = Store(Repo(str(repo)))
    from gitmem.memories import RememberRequest, remember

    for i in range(60):  # 60 memories of ~3,500 characters: `get` of all of them is ~210,000 characters
        remember(store, RememberRequest(text=f"note {i}\n" + ("word " * 700), anchors=("app/config.py",)))
    ids = [p.stem for p in (repo / ".gitmem" / "memories").glob("*.md")]
    huge_query = "retry " * 5_000

    async def body(session) -> dict[str, object]:  # type: ignore[no-untyped-def]
        r = await session.call_tool("remember", {"text": "crash\n" + LOG})
        got = await session.call_tool("get", {"ids": ids})
        search = await session.call_tool("search", {"query": huge_query, "limit": 100})
        big = await session.call_tool("context", {"file": "app/config.py", "budget": 1_000_000})
        return {"remember": (r.is_error, _text(r)), "get": (_text(got), got.structured_content),
                "search": (_text(search), search.structured_content), "context": (big.is_error, _text(big))}

    got = _run(_server(repo), tmp_path / "err.log", body)
    is_error, text = got["remember"]
    assert is_error and "over the limit" in text and "put the log or document in a file" in text
    text, data = got["get"]
    assert len(text) <= MAX_REPLY_CHARS and "more: " in text
    assert data["more"] and len(data["memories"]) + len(data["more"]) == 60
    assert set(data["more"]) <= set(ids) and all(i in text for i in data["more"])
    text, data = got["search"]
    assert len(text) < 20_000 and len(data["query"]) <= QUERY_ECHO_CHARS
    is_error, text = got["context"]
    assert is_error and "8000" in text.replace(",", "")
