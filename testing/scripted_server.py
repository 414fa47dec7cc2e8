"""The scaffolding every scripted model server of the tests shares: an HTTP server on 127.0.0.1 in a thread.

A server module (``chat_server``, ``chat_completions_server``, ``responses_server``, ``gemini_server``,
``messages_server``) keeps its state in a subclass of ``ScriptedServer`` and gives ``serve`` one
function, ``answer(request) -> Reply``: what to send for a request. ``serve`` owns the rest: the
thread, reading the body (``Content-Length`` or chunked, gzip-encoded or not) and decoding it as
JSON (``{"raw": text}`` when it is not a JSON object), the request log (``ScriptedServer.record``,
under ``ScriptedServer.lock``, before ``answer`` runs) and writing the reply: one JSON object
(``json_reply``) or server-sent events (``sse_reply``). GET requests are answered but not logged.
"""

from __future__ import annotations

import gzip
import http.server
import json
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Request:
    """One request: ``method`` (GET, POST), ``path`` (with its query), ``headers`` (lower-case names),
    ``raw`` (the body's bytes, decoded from gzip), ``body`` (a JSON object; ``{"raw": text}`` otherwise,
    ``{}`` for a GET) and ``n`` (1-based position in the request log; 0 for a GET)."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: dict[str, Any]
    n: int = 0


@dataclass
class Reply:
    """What to send: a ``status``, and either ``data`` (one JSON value) or ``events`` (server-sent events:
    (event name or None, data: a JSON value, or a string sent as is)), then ``done`` (a last ``data: [DONE]``)."""

    status: int = 200
    data: Any = None
    events: list[tuple[str | None, Any]] | None = None
    done: bool = False


def json_reply(data: Any, status: int = 200) -> Reply:
    """A reply of one JSON value."""
    return Reply(status=status, data=data)


def sse_reply(events: Iterable[Any], *, named: bool = False, done: bool = False) -> Reply:
    """A stream of server-sent events, one per JSON object of ``events``; ``named``: each with an ``event:``
    line (the object's ``type``), as the Responses and Messages APIs send; ``done``: a last ``data: [DONE]``."""
    return Reply(events=[(str(e["type"]) if named else None, e) for e in events], done=done)


@dataclass
class ScriptedServer:
    """A server's state: ``base_url`` (set once listening), ``requests`` (the log: ``record``'s entries, in
    arrival order) and ``lock`` (held by ``record``; a server module takes it to read or change its state)."""

    base_url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def entry(self, request: Request) -> dict[str, Any]:
        """What the log keeps of ``request``: its body (a subclass may add to it)."""
        return request.body

    def record(self, request: Request) -> int:
        """Append ``request`` to the log (``lock`` held by the caller); returns its 1-based position."""
        self.requests.append(self.entry(request))
        return len(self.requests)


def _read_body(handler: http.server.BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while handler.rfile.readline().strip():  # trailers
                    pass
                break
            chunks.append(handler.rfile.read(size))
            handler.rfile.readline()
        raw = b"".join(chunks)
    else:
        raw = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
    encoding = handler.headers.get("Content-Encoding", "").lower()
    if encoding == "gzip":
        return gzip.decompress(raw)
    if encoding == "deflate":
        return zlib.decompress(raw)
    return raw


def _decode(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError:
        return {"raw": raw.decode(errors="replace")}
    return body if isinstance(body, dict) else {"raw": body}


def _send(handler: http.server.BaseHTTPRequestHandler, reply: Reply) -> None:
    handler.send_response(reply.status)
    if reply.events is None:
        data = json.dumps(reply.data).encode()
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
        return
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.end_headers()
    for name, data in reply.events:
        text = data if isinstance(data, str) else json.dumps(data)
        handler.wfile.write((f"event: {name}\n" if name else "").encode() + f"data: {text}\n\n".encode())
    if reply.done:
        handler.wfile.write(b"data: [DONE]\n\n")
    handler.wfile.flush()


@contextmanager
def serve(state: ScriptedServer, answer: Callable[[Request], Reply], *, path: str = "/v1") -> Iterator[None]:
    """Serve on 127.0.0.1 (a free port) until the block ends; ``state.base_url`` is ``http://127.0.0.1:PORT``
    followed by ``path``. Each POST is logged (``state.record``) and answered by ``answer`` (called from the
    server's threads, several at once); each GET is answered by ``answer`` without being logged. HTTP/1.0:
    the connection closes after each reply (which ends a stream)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *args: Any) -> None:
            pass

        def _request(self, method: str) -> Request:
            headers = {k.lower(): v for k, v in self.headers.items()}
            if method == "GET":
                return Request(method, self.path, headers, b"", {})
            raw = _read_body(self)
            return Request(method, self.path, headers, raw, _decode(raw))

        def do_GET(self) -> None:
            _send(self, answer(self._request("GET")))

        def do_POST(self) -> None:
            request = self._request("POST")
            with state.lock:
                request.n = state.record(request)
            _send(self, answer(request))

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}{path}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


def script_step(script: list[dict[str, Any]], done: int) -> dict[str, Any]:
    """The step of ``script`` for a request that already holds ``done`` tool results: each session runs the
    script from the start, the last step repeats; ``{"say": "Done."}`` for an empty script."""
    return script[min(done, len(script) - 1)] if script else {"say": "Done."}
