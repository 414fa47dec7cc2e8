"""A bare MCP client over stdio for tests and benchmarks: newline-delimited JSON-RPC on a server's pipes.

No SDK (``tests/test_mcp.py`` drives the server with the SDK's own client): this one sends exactly the
messages given, in the order given, at once if asked (as Claude Code does), and times each answer
from the spawn (``bench/mcp.py``).
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from pathlib import Path
from typing import Any

#: The protocol versions of the two eras: the per-request envelope (Claude Code 2.1) and the handshake.
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
CLIENT_INFO = {"name": "gitmem-test", "version": "1"}
#: The per-request envelope of protocol 2026-07-28, as Claude Code 2.1 sends it.
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
            "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}}}
#: The change notifications Claude Code listens for.
LISTEN = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}
TIMEOUT_S = 120.0


class Client:
    """A stdio MCP client: spawns ``argv`` in ``cwd`` and exchanges newline-delimited JSON-RPC messages.

    ``t0`` is the monotonic time just before the spawn; answers (``wait``, ``call``) and notifications
    (``notes``, ``wait_note``) come with their arrival time in ms since ``t0``.
    """

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.buf = b""
        self.next_id = 0
        self.seen: dict[Any, tuple[dict[str, Any], float]] = {}
        self.notes: list[tuple[dict[str, Any], float]] = []
        self.answers: list[dict[str, Any]] = []  # every answer (results and errors) in arrival order

    def send(self, method: str, params: dict[str, Any] | None = None, *, notify: bool = False,
             rid: Any = None) -> Any:
        """Send a request (returns its id: ``rid``, else the next number) or, with ``notify``, a notification."""
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not notify:
            if rid is None:
                rid = self.next_id
                self.next_id += 1
            msg["id"] = rid
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()
        return rid

    def send_raw(self, line: bytes) -> None:
        """Send ``line`` as it is (a newline is added): for malformed and hostile input."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def wait_answers(self, n: int) -> list[dict[str, Any]]:
        """The first ``n`` answers (results and errors, ids null included), in arrival order."""
        self._pump(lambda: len(self.answers) >= n, f"{n} answers")
        return self.answers[:n]

    def _pump(self, done: Any, what: str) -> None:
        """Read messages until ``done()``.

        Raises:
            RuntimeError: the server exited, or ``done()`` stayed false for TIMEOUT_S.
        """
        assert self.proc.stdout is not None
        deadline = time.monotonic() + TIMEOUT_S
        while not done():
            if b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                msg = json.loads(line)
                at = (time.monotonic() - self.t0) * 1000
                if "id" in msg and "method" not in msg:
                    self.seen[msg["id"]] = (msg, at)
                    self.answers.append(msg)
                elif "id" not in msg:
                    self.notes.append((msg, at))
                continue
            if not self.sel.select(max(0.0, deadline - time.monotonic())):
                raise RuntimeError(f"no {what} within {TIMEOUT_S} s")
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"the server exited before {what}: {err[-1500:]}")
            self.buf += chunk

    def wait(self, rid: Any) -> tuple[dict[str, Any], float]:
        """The answer to request ``rid`` and when it arrived (ms since the spawn)."""
        self._pump(lambda: rid in self.seen, f"answer to request {rid}")
        return self.seen[rid]

    def wait_note(self, method: str) -> tuple[dict[str, Any], float]:
        """The first notification ``method`` and when it arrived (ms since the spawn)."""
        self._pump(lambda: any(m.get("method") == method for m, _ in self.notes), f"notification {method}")
        return next((m, at) for m, at in self.notes if m.get("method") == method)

    def call(self, method: str, params: dict[str, Any] | None = None) -> tuple[dict[str, Any], float]:
        return self.wait(self.send(method, params))

    def close(self) -> str:
        """Close stdin (the server's cue to exit), then wait (kill it after 10 s); returns its stderr."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        err = self.proc.stderr.read().decode("utf-8", "replace") if self.proc.stderr else ""
        for f in (self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()
        return err
