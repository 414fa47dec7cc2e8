"""``gitmem mcp`` over stdio answers every line with a JSON-RPC result or error and never dies.

Hostile and malformed lines (not JSON, batches, wrong types, nesting deeper than Python's parser can take,
a line of megabytes) each get the error JSON-RPC 2.0 prescribes — -32700 with id null for what does not
parse, -32600 for an invalid request, with its id when it has one — and the server goes on answering, front
on and off (``GITMEM_MCP_FRONT=0``: every request goes to the SDK behind it).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from gitmem.integrations import mcp_front
from testing.mcp_stdio import CLIENT_INFO, HANDSHAKE, Client
from testing.repos import commit, make_repo

SERVER = [sys.executable, "-m", "gitmem", "mcp"]
DEEP = mcp_front.MAX_DEPTH + 1


def _request(rid: object, method: str, params: object = None, **extra: object) -> bytes:
    msg: dict[str, object] = {"jsonrpc": "2.0", "id": rid, "method": method, **extra}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode()


#: (a client line, the id of its answer, the error code); a code of 0: a result.
CASES: list[tuple[bytes, object, int]] = [
    (b"this is not json", None, -32700),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', None, -32700),        # cut short
    (b"\xff\xfe{}", None, -32700),                                            # not UTF-8
    (b"[" * 100_000, None, -32700),                                           # RecursionError in json.loads
    (b"[" * 100_000 + b"]" * 100_000, None, -32600),                         # well-formed, too deep
    (b'{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"search","arguments":{"query":'
     + b"[" * 5000 + b"]" * 5000 + b"}}}", "deep", -32600),                 # valid JSON, too deep: its id
    (b"[]", None, -32600),
    (b'[{"jsonrpc":"2.0","id":2,"method":"ping"}]', None, -32600),           # a batch
    (b"42", None, -32600),
    (b'{"jsonrpc":"2.0","id":3}', 3, -32600),                                 # no method, no result
    (b'{"jsonrpc":"1.0","id":4,"method":"ping"}', 4, -32600),
    (b'{"id":5,"method":"ping"}', 5, -32600),                                 # no jsonrpc
    (b'{"jsonrpc":"2.0","id":6,"method":6}', 6, -32600),
    (b'{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}', None, -32600),       # an id of the wrong type
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None, -32600),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', None, -32600),          # MCP: never null
    (_request(7, "ping", "x"), 7, -32600),
    (_request(8, "ping", [1]), 8, -32600),                                     # SDK dropped it silently
    (_request(9, "ping", result={}), 9, -32600),
    (_request("ok", "ping"), "ok", 0),
    (_request(10, "no/such/method"), 10, -32601),
    (_request(11, "tools/call", 5), 11, -32600),
    (_request(12, "tools/call", {"name": "search", "arguments": json.loads('{"a":' * 40 + "1" + "}" * 40)}), 12, 0),
    (_request(13, "tools/call", {"name": "search", "arguments": {"query": "[" * 10_000}}), 13, 0),  # in a string
]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = make_repo(tmp_path_factory.mktemp("mcp") / "r", {"app.py": "def run():\n    return 1\n"})
    commit(r, "init")
    return r


@pytest.mark.parametrize("front", ["1", "0"])
def test_every_line_gets_its_answer_and_the_server_lives_on(repo: Path, front: str) -> None:
    c = Client(SERVER, repo, env={**os.environ, mcp_front.FRONT_ENV: front})
    try:
        c.send("initialize", {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": CLIENT_INFO},
               rid="init")
        assert "result" in c.wait("init")[0]
        c.send("notifications/initialized", notify=True)
        for line, _, _ in CASES:
            c.send_raw(line)
        c.send_raw(_request("last", "ping"))
        got = c.wait_answers(1 + len(CASES) + 1)[1:]
        unordered = [(a.get("id"), a.get("error", {}).get("code", 0)) for a in got]
        # the front answers refused lines at once, the SDK the rest: compare as multisets
        assert sorted(map(repr, unordered)) == sorted(repr((rid, code)) for _, rid, code in CASES + [(b"", "last", 0)])
        for a in got:
            assert a["jsonrpc"] == "2.0" and ("result" in a) != ("error" in a)
            if "error" in a:
                assert isinstance(a["error"]["message"], str) and a["error"]["message"]
    finally:
        err = c.close()
    assert "Traceback" not in err and "RecursionError" not in err, err
    assert c.proc.returncode == 0


def test_a_line_longer_than_the_limit_is_refused_and_not_held(repo: Path) -> None:
    c = Client(SERVER, repo)
    try:
        big = b'{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"search","arguments":{"query":"' \
            + b"x" * (mcp_front.MAX_LINE_BYTES + 10) + b'"}}}'
        c.send_raw(big)
        c.send_raw(_request("after", "ping"))
        (refused, _), (after, _) = c.wait("big"), c.wait("after")
        assert refused["error"]["code"] == -32600 and str(mcp_front.MAX_LINE_BYTES) in refused["error"]["message"]
        assert after["result"] == {}
    finally:
        err = c.close()
    assert "Traceback" not in err, err


def test_screen_measures_depth_outside_strings_only() -> None:
    ok, refused = mcp_front.screen(_request(1, "x", {"q": '"[[[[' * 100 + '\\"{{{{'}))
    assert refused is None and ok["id"] == 1
    msg, refused = mcp_front.screen(b'{"jsonrpc":"2.0","method":"x","id":"a\\"b",' + b'"p":' + b"[" * DEEP
                                    + b"]" * DEEP + b"}")
    assert msg is None and refused is not None and refused["id"] == 'a"b' and refused["error"]["code"] == -32600
