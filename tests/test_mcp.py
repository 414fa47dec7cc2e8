"""The MCP server end to end: ``python -m gitmem mcp`` over stdio, driven by the MCP SDK's own client.

Every test starts a real server process in a temporary repository and talks to
it through ``stdio_client`` + ``ClientSession`` (no network beyond the pipes).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from testing.repos import commit, git, make_repo

CONFIG_PY = ('def parse_config(path):\n    """Read the config."""\n    return {"env": 1, "yaml": 2}\n\n\n'
             'def other():\n    return 2\n')
CONFIG_PY_CHANGED = CONFIG_PY.replace('{"env": 1, "yaml": 2}', '{"yaml": 2, "env": 1, "defaults": 3}')
TOOLS = {"search", "get", "remember", "stale", "context", "org_search"}
TIMEOUT = 120.0


def _server(cwd: Path, *args: str) -> StdioServerParameters:
    """Parameters that start ``python -m gitmem mcp ARGS`` in ``cwd`` with this test's environment."""
    return StdioServerParameters(command=sys.executable, args=["-m", "gitmem", "mcp", *args],
                                 env=dict(os.environ), cwd=str(cwd))


def _run(params: StdioServerParameters, errlog: Path,
         body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    """Start the server, initialise a session, run ``body(session)``; returns what it returns."""
    async def main() -> Any:
        with errlog.open("w", encoding="utf-8") as err:
            async with stdio_client(params, errlog=err) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await body(session)

    return asyncio.run(asyncio.wait_for(main(), TIMEOUT))


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def _init_repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "proj", {"app/config.py": CONFIG_PY, "README.md": "demo\n"})
    proc = subprocess.run([sys.executable, "-m", "gitmem", "init", "--no-hooks"], cwd=repo,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    git(repo, "add", ".gitmem")
    commit(repo, "gitmem init")
    return repo


def test_tools_end_to_end(tmp_path: Path) -> None:
    repo = _init_repo(tmp_path)
    errlog = tmp_path / "server-stderr.txt"
    started = time.monotonic()

    async def body(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        listed = await s.list_tools()
        out["startup"] = time.monotonic() - started
        out["tools"] = {t.name: t for t in listed.tools}

        async def call(name: str, **args: Any) -> Any:
            return await s.call_tool(name, args)

        out["remember"] = await call("remember", text="Config load order is env > yaml > defaults\n\n"
                                     "parse_config reads the environment first.", type="decision",
                                     anchors=["app/config.py::parse_config"], tags=["config"],
                                     facts=["env wins over yaml"])
        out["remember_bad"] = await call("remember", text="x", anchors=["app/config.py::parse_konfig"])
        out["remember_file"] = await call("remember", text="The README is a stub", anchors=["README.md"])
        out["search"] = await call("search", query="config load order env yaml", limit=5)
        mid = out["remember"].structured_content["id"]
        out["get"] = await call("get", ids=[mid[:10].lower(), "NOPE"])
        out["get_bad"] = await call("get", ids=["NOPE"])
        out["context"] = await call("context", file="app/config.py")
        out["stale_before"] = await call("stale")
        # change the anchored function and commit while the server runs: it re-reads the repository per call
        out["sha"] = commit(repo, "rewrite parse_config", {"app/config.py": CONFIG_PY_CHANGED})
        out["stale_after"] = await call("stale")
        out["search_after"] = await call("search", query="config load order")
        out["context_after"] = await call("context", file="app/config.py", prompt="change the load order",
                                          budget=400)
        out["bad_args"] = await call("search", query="x", limit=0)
        return out

    r = _run(_server(repo), errlog, body)
    stderr = errlog.read_text("utf-8")
    assert "Traceback" not in stderr, stderr

    # tools/list: the six tools, each with an input schema; read-only ones say so
    assert set(r["tools"]) == TOOLS
    assert r["tools"]["search"].input_schema["required"] == ["query"]
    assert r["tools"]["remember"].input_schema["properties"]["type"]["enum"][0] == "decision"
    assert r["tools"]["stale"].annotations.read_only_hint is True
    assert r["tools"]["remember"].annotations.read_only_hint is False
    print(f"\nMCP server start-up to the first tools/list response: {r['startup']:.2f} s")

    # remember: a team-scope, agent-sourced memory with a resolved symbol anchor
    rem = r["remember"]
    assert not rem.is_error, _text(rem)
    mid = rem.structured_content["id"]
    assert _text(rem).startswith(f"remembered {mid}: [decision] > Config load order is env > yaml > defaults")
    assert rem.structured_content["scope"] == "team" and rem.structured_content["source"] == "agent"
    assert rem.structured_content["path"] == f".gitmem/memories/{mid}.md"
    anchor = rem.structured_content["anchors"][0]
    assert anchor["anchor"] == "app/config.py::parse_config" and anchor["kind"] == "function"
    assert (repo / ".gitmem/memories" / f"{mid}.md").is_file()

    # an anchor to a missing symbol: a tool error with the library's message and the closest names
    bad = r["remember_bad"]
    assert bad.is_error
    assert _text(bad).startswith("error: no symbol parse_konfig in app/config.py")
    assert "hint: closest: parse_config" in _text(bad)
    assert "parse_config" in bad.structured_content["candidates"]
    assert not r["remember_file"].is_error
    assert r["remember_file"].structured_content["anchors"][0]["kind"] == "file"

    # search: a compact index, one line per hit (id, type, title, anchors, age, status)
    srch = r["search"]
    assert not srch.is_error, _text(srch)
    hit = srch.structured_content["hits"][0]
    assert hit["id"] == mid and hit["status"] == "fresh" and hit["type"] == "decision"
    assert hit["anchors"] == ["app/config.py::parse_config"] and hit["age"]
    assert f"- {mid} [decision] app/config.py::parse_config · " in _text(srch)
    assert _text(srch).splitlines()[1].endswith("· fresh > Config load order is env > yaml > defaults")

    # get: full text by id prefix; unknown ids reported without failing the call
    got = r["get"]
    assert not got.is_error, _text(got)
    text = _text(got)
    assert text.startswith(f"{mid}  [decision] > Config load order is env > yaml > defaults")
    assert "fresh    app/config.py::parse_config" in text
    assert "parse_config reads the environment first." in text and "- env wins over yaml" in text
    assert "tags: > config" in text and "not found: no memory with id NOPE" in text
    mem = got.structured_content["memories"][0]
    assert mem["id"] == mid and mem["status"] == "fresh" and mem["facts"] == ["env wins over yaml"]
    assert mem["anchor_statuses"][0]["status"] == "fresh"
    assert got.structured_content["not_found"][0]["id"] == "NOPE"
    assert r["get_bad"].is_error and _text(r["get_bad"]).startswith("error: no memory with id NOPE\nhint: ")

    # context for the file: the anchored memory first, in full
    ctx = r["context"]
    assert not ctx.is_error, _text(ctx)
    assert mid in _text(ctx) and ctx.structured_content["detailed"][0] == mid
    assert ctx.structured_content["memories"][0]["near"]

    # stale: fresh before; after a commit that rewrites parse_config, stale with the reason and the commit
    assert not r["stale_before"].is_error
    assert r["stale_before"].structured_content["memories"] == []
    assert _text(r["stale_before"]) == "all 2 memories are fresh"
    after = r["stale_after"]
    assert not after.is_error, _text(after)
    (row,) = after.structured_content["memories"]
    assert row["id"] == mid and row["status"] == "stale"
    a = row["anchors"][0]
    assert a["anchor"] == "app/config.py::parse_config" and a["commit"] == r["sha"] and "body" in a["changes"]
    assert f"body changed in {r['sha'][:12]}" in a["reason"]
    assert f"stale    {mid}  [decision] > Config load order" in _text(after)
    assert f"app/config.py::parse_config  — body changed in {r['sha'][:12]}" in _text(after)
    assert r["search_after"].structured_content["hits"][0]["status"] == "stale"
    ctx2 = r["context_after"]
    assert not ctx2.is_error and ctx2.structured_content["budget"] == 400
    assert "stale" in _text(ctx2) and ctx2.structured_content["tokens"] <= 400

    # arguments outside the schema are a tool error, not a crash
    assert r["bad_args"].is_error


def test_errors_before_init_and_repo_option(tmp_path: Path) -> None:
    """Started with --repo on a plain directory: each call reports what is missing, and the server keeps serving
    as the directory becomes a repository, then an initialised one."""
    plain = tmp_path / "later"
    plain.mkdir()
    errlog = tmp_path / "server-stderr.txt"

    async def body(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {"tools": {t.name for t in (await s.list_tools()).tools}}
        out["not_repo"] = await s.call_tool("search", {"query": "anything"})
        make_repo(plain, {"m.py": "def f():\n    return 1\n"})
        out["not_init"] = await s.call_tool("stale", {})
        proc = subprocess.run([sys.executable, "-m", "gitmem", "init", "--no-hooks"], cwd=plain,
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        out["empty_context"] = await s.call_tool("context", {"file": "m.py"})
        out["empty_get"] = await s.call_tool("get", {"ids": []})
        out["remember"] = await s.call_tool("remember", {"text": "f returns one", "anchors": ["m.py::f"]})
        out["outside"] = await s.call_tool("remember", {"text": "y", "anchors": ["/etc/hostname"]})
        return out

    r = _run(_server(tmp_path, "--repo", str(plain)), errlog, body)
    assert r["tools"] == TOOLS
    assert r["not_repo"].is_error
    assert _text(r["not_repo"]).startswith(f"error: not a git repository: {plain}")
    assert "hint: run gitmem inside a git work tree" in _text(r["not_repo"])
    assert r["not_init"].is_error and _text(r["not_init"]).startswith("error: no .gitmem/ in")
    assert r["not_init"].structured_content["hint"] == "run `gitmem init` in this repository"
    assert not r["empty_context"].is_error
    assert _text(r["empty_context"]) == "no memories yet in this repository (record one with remember)"
    assert r["empty_get"].is_error and _text(r["empty_get"]).startswith("error: no ids given")
    assert not r["remember"].is_error, _text(r["remember"])
    assert r["remember"].structured_content["anchors"][0]["anchor"] == "m.py::f"
    assert r["outside"].is_error and "path outside the repository: /etc/hostname" in _text(r["outside"])
    assert "Traceback" not in errlog.read_text("utf-8")


def test_imports_stay_lazy() -> None:
    """``import gitmem.cli`` does not load the MCP SDK; building the server does not load LanceDB."""
    code = ("import sys, gitmem.cli\n"
            "assert 'mcp' not in sys.modules, 'gitmem.cli imports mcp'\n"
            "from gitmem.integrations.mcp_server import build_server\n"
            "build_server('.')\n"
            "assert 'lancedb' not in sys.modules, 'the MCP server imports lancedb at start-up'\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
