"""The MCP server's front (``gitmem mcp``): what it answers itself equals what the SDK answers, it answers
before the heavy modules are loaded, and everything else still reaches the SDK server.

Real server processes over their stdio (``testing/mcp_stdio.py``: raw JSON-RPC lines, sent at once as
Claude Code does), in real repositories; ``GITMEM_MCP_FRONT=0`` runs the same server with the SDK
answering everything, for comparison. No timing assertions (``bench/mcp.py`` measures the speed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gitmem.integrations import mcp_front
from testing.mcp_stdio import CLIENT_INFO, ENVELOPE, HANDSHAKE, LISTEN, Client
from testing.repos import commit, git, make_repo

SERVER = [sys.executable, "-m", "gitmem", "mcp"]
#: Modules the first answer must not need: the SDK and its models, the CLI, gitmem's library, GitPython,
#: LanceDB (any of them costs 0.1-1.3 s to import).
HEAVY = ("mcp", "mcp_types", "pydantic", "anyio", "click", "git", "lancedb", "yaml", "gitmem.store",
         "gitmem.cli", "gitmem.integrations.mcp_server", "gitmem.search.hybrid")
MODERN_NO_INFO = {k: v for k, v in ENVELOPE.items() if k != "io.modelcontextprotocol/clientInfo"}
MODERN_NO_CAPS = {k: v for k, v in ENVELOPE.items() if k != "io.modelcontextprotocol/clientCapabilities"}
ACK = "notifications/subscriptions/acknowledged"


def _init_repo(path: Path) -> Path:
    repo = make_repo(path, {"app/config.py": "def parse_config(path):\n    return {}\n"})
    proc = subprocess.run([*SERVER[:-1], "init", "--no-hooks"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    git(repo, "add", ".gitmem")
    commit(repo, "gitmem init")
    return repo


def _conversation(cwd: Path, msgs: list[dict[str, Any]], *, front: bool, wait_ack: bool = False) -> dict[Any, Any]:
    """Send ``msgs`` at once to a server (front on or off); every answer by id (and the listen ack, if any)."""
    c = Client(SERVER, cwd, env={**os.environ, mcp_front.FRONT_ENV: "1" if front else "0"})
    try:
        for m in msgs:
            c.send(m["method"], m.get("params"), notify="id" not in m, rid=m.get("id"))
        got = {m["id"]: c.wait(m["id"])[0] for m in msgs if "id" in m and m["method"] != "subscriptions/listen"}
        if wait_ack:
            got["ack"] = c.wait_note(ACK)[0]
        return got
    finally:
        err = c.close()
        assert "Traceback" not in err and "refused a request the front answered" not in err, err


def _msgs(*specs: tuple[Any, str, Any]) -> list[dict[str, Any]]:
    out = []
    for rid, method, params in specs:
        m: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            m["params"] = params
        if rid is not None:
            m["id"] = rid
        out.append(m)
    return out


def test_recording_is_the_sdks_answers() -> None:
    """``resources/mcp-answers.json`` is what this SDK and this gitmem answer, and what the front sends."""
    recorded = json.loads(mcp_front.ANSWERS_FILE.read_text("utf-8"))
    live = mcp_front.record()
    assert live == recorded, ("the SDK's answers changed (tools, schemas, instructions or SDK version): "
                              "run python -m gitmem.integrations.mcp_front record")
    assert mcp_front.record(front=True) == recorded


@pytest.mark.parametrize("name", ["claude_code", "handshake", "odd_modern", "odd_handshake", "initialize_late"])
def test_front_answers_equal_the_sdks(tmp_path: Path, name: str) -> None:
    """The same conversation with and without the front: the same answer to every request, in both eras, for
    requests the front answers and requests it must leave to the SDK (errors included)."""
    convs = {
        # Claude Code 2.1.328's opening, as captured: discover, listen (it waits for the ack), discover, lists
        "claude_code": _msgs(("server-discover-probe-1", "server/discover", {"_meta": ENVELOPE}),
                             ("listen:0", "subscriptions/listen", {"_meta": ENVELOPE, "notifications": LISTEN}),
                             (0, "server/discover", {"_meta": ENVELOPE}), (1, "prompts/list", {"_meta": ENVELOPE}),
                             (2, "resources/list", {"_meta": ENVELOPE}), (3, "tools/list", {"_meta": ENVELOPE})),
        "handshake": _msgs((1, "initialize", {"protocolVersion": HANDSHAKE, "capabilities": {},
                                              "clientInfo": CLIENT_INFO}),
                           (None, "notifications/initialized", None), (2, "tools/list", None), (3, "ping", None),
                           (4, "prompts/list", {}), (5, "resources/list", None)),
        # envelopes the SDK refuses or accepts without client info, a cursor, ping (not in 2026-07-28), a method
        # that does not exist, a listen for other notifications
        "odd_modern": _msgs((0, "tools/list", {"_meta": MODERN_NO_INFO}), (1, "tools/list", {"_meta": MODERN_NO_CAPS}),
                            (2, "tools/list", {"_meta": ENVELOPE, "cursor": "x"}), (3, "ping", {"_meta": ENVELOPE}),
                            (4, "nope/list", {"_meta": ENVELOPE}),
                            (5, "initialize", {"protocolVersion": HANDSHAKE, "capabilities": {},
                                               "clientInfo": CLIENT_INFO}),
                            (6, "subscriptions/listen", {"_meta": ENVELOPE,
                                                         "notifications": {"toolsListChanged": True}})),
        # lists before the handshake completes, an old version, then an envelope on a handshake connection
        "odd_handshake": _msgs((0, "tools/list", None),
                               (1, "initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                                  "clientInfo": CLIENT_INFO}),
                               (2, "tools/list", None), (3, "ping", None), (None, "notifications/initialized", None),
                               (4, "tools/list", {"_meta": ENVELOPE}), (5, "tools/list", {"cursor": "x"})),
        "initialize_late": _msgs((0, "server/discover", {"_meta": ENVELOPE}),
                                 (1, "initialize", {"protocolVersion": HANDSHAKE, "capabilities": {},
                                                    "clientInfo": CLIENT_INFO})),
    }
    msgs = convs[name]
    wait_ack = name == "claude_code"
    without = _conversation(tmp_path, msgs, front=False, wait_ack=wait_ack)
    with_front = _conversation(tmp_path, msgs, front=True, wait_ack=wait_ack)
    assert with_front == without
    if name == "claude_code":
        assert len(with_front[3]["result"]["tools"]) == 6
        assert with_front["ack"]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen:0"


def test_first_answer_needs_no_heavy_module_and_search_follows(tmp_path: Path) -> None:
    """The opening requests are answered while none of the heavy modules is loaded; a search sent right after
    is answered by the SDK server with the memory, and ``get`` and ``remember`` work as before."""
    repo = _init_repo(tmp_path / "proj")
    out = subprocess.run([*SERVER[:-1], "remember", "Config load order is env > yaml", "--anchor",
                          "app/config.py::parse_config", "--json"], cwd=repo, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    mid = json.loads(out.stdout)["id"]
    for era in ("modern", "handshake"):
        modules = tmp_path / f"modules-{era}.txt"
        c = Client(SERVER, repo, env={**os.environ, mcp_front.DEBUG_MODULES_ENV: str(modules)})
        try:
            if era == "modern":
                ready = c.call("server/discover", {"_meta": ENVELOPE})[0]
                listed = c.call("tools/list", {"_meta": ENVELOPE})[0]
                found = c.call("tools/call", {"name": "search", "arguments": {"query": "config load order"},
                                              "_meta": ENVELOPE})[0]
            else:
                ready = c.call("initialize", {"protocolVersion": HANDSHAKE, "capabilities": {},
                                              "clientInfo": CLIENT_INFO})[0]
                c.send("notifications/initialized", notify=True)
                listed = c.call("tools/list")[0]
                found = c.call("tools/call", {"name": "search", "arguments": {"query": "config load order"}})[0]
        finally:
            err = c.close()
        assert "Traceback" not in err, err
        loaded = set(modules.read_text("utf-8").split())
        assert "gitmem.integrations.mcp_front" in loaded
        assert not {m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY}, sorted(loaded)
        assert "instructions" in ready["result"]
        assert {t["name"] for t in listed["result"]["tools"]} == {"search", "get", "remember", "stale", "context",
                                                                      "org_search"}
        hits = found["result"]["structuredContent"]["hits"]
        assert not found["result"]["isError"] and hits[0]["id"] == mid and hits[0]["status"] == "fresh"


def test_no_repository_at_start_then_one(tmp_path: Path) -> None:
    """Started outside a repository: a tool call is a tool error (the front passes it on); once the folder
    is an initialised repository, the same server serves it."""
    plain = tmp_path / "later"
    plain.mkdir()
    c = Client(SERVER, plain)
    try:
        c.call("server/discover", {"_meta": ENVELOPE})
        before = c.call("tools/call", {"name": "search", "arguments": {"query": "x"}, "_meta": ENVELOPE})[0]
        _init_repo(plain)
        after = c.call("tools/call", {"name": "stale", "arguments": {}, "_meta": ENVELOPE})[0]
    finally:
        err = c.close()
    assert before["result"]["isError"]
    assert before["result"]["content"][0]["text"].startswith(f"error: not a git repository: {plain}")
    assert not after["result"]["isError"] and after["result"]["content"][0]["text"] == "all 0 memories are fresh"
    assert "Traceback" not in err


def test_command_line_goes_to_the_cli_when_the_front_cannot_take_it(tmp_path: Path) -> None:
    """``gitmem mcp --help`` and a bad ``--repo`` are the CLI's (its help, its usage error); the front takes
    ``--repo DIR`` and ``--repo=DIR``."""
    helped = subprocess.run([*SERVER, "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and "Run the MCP server on stdio" in helped.stdout
    bad = subprocess.run([*SERVER, "--repo", str(tmp_path / "missing")], capture_output=True, text=True)
    assert bad.returncode == 2 and "does not exist" in bad.stderr
    assert mcp_front.direct_args([]) is not None
    assert mcp_front.direct_args(["--repo", str(tmp_path)]).repo == str(tmp_path)  # type: ignore[union-attr]
    assert mcp_front.direct_args([f"--repo={tmp_path}"]).repo == str(tmp_path)  # type: ignore[union-attr]
    for argv in (["--help"], ["--repo"], ["--repo", str(tmp_path / "missing")], ["extra"], ["--rep", str(tmp_path)]):
        assert mcp_front.direct_args(argv) is None, argv


def test_recording_not_used_for_another_sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recording made with another SDK version or gitmem version is not used (the SDK answers everything)."""
    original = mcp_front.ANSWERS_FILE
    doc = json.loads(original.read_text("utf-8"))
    assert mcp_front.load_answers(doc["gitmem"]) == doc
    assert mcp_front.load_answers("0.0.0-other") is None
    other = tmp_path / "answers.json"
    other.write_text(json.dumps({**doc, "sdk": {**doc["sdk"], "mcp": "0.0.1"}}), "utf-8")
    monkeypatch.setattr(mcp_front, "ANSWERS_FILE", other)
    assert mcp_front.load_answers(doc["gitmem"]) is None
    monkeypatch.setattr(mcp_front, "ANSWERS_FILE", original)
    monkeypatch.setenv(mcp_front.FRONT_ENV, "0")
    assert mcp_front.load_answers(doc["gitmem"]) is None


def _search(repo: Path, env: dict[str, str], query: str) -> dict[str, Any]:
    c = Client(SERVER, repo, env=env)
    try:
        c.call("server/discover", {"_meta": ENVELOPE})
        found = c.call("tools/call", {"name": "search", "arguments": {"query": query, "limit": 5},
                                      "_meta": ENVELOPE})[0]
    finally:
        err = c.close()
    assert "Traceback" not in err, err
    assert not found["result"]["isError"], found
    return found["result"]  # type: ignore[no-any-return]


def test_search_answered_by_the_warm_process_equals_in_process(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """With the worktree's warm process up, the MCP search's hits come from it (its request count grows) and
    the reply is the one the server computes in-process with the warm process turned off."""
    from gitmem import layout
    from gitmem.daemon import client

    repo = _init_repo(tmp_path / "proj")
    for text, anchor in (("Config load order is env > yaml > defaults", "app/config.py::parse_config"),
                         ("The yaml loader keeps key order for the diff view", "app/config.py")):
        out = subprocess.run([*SERVER[:-1], "remember", text, "--anchor", anchor], cwd=repo, capture_output=True,
                             text=True)
        assert out.returncode == 0, out.stderr
    cold = _search(repo, dict(os.environ), "config load order yaml")  # the suite runs with GITMEM_NO_DAEMON=1
    monkeypatch.delenv(client.NO_DAEMON_ENV, raising=False)
    lay = layout.of(repo)
    try:
        assert client.ensure_started(lay)
        deadline = time.monotonic() + 120
        while (before := client.status(lay)) is None:
            assert time.monotonic() < deadline, "the warm process did not start"
            time.sleep(0.1)
        warm = _search(repo, dict(os.environ), "config load order yaml")
        after = client.status(lay)
    finally:
        client.stop(lay)
        deadline = time.monotonic() + 30
        while client.running(lay) and time.monotonic() < deadline:
            time.sleep(0.1)
    assert after is not None and after["requests"] > before["requests"]
    assert len(warm["structuredContent"]["hits"]) == 2
    assert warm == cold
