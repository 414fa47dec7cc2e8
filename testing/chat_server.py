"""A real OpenAI-compatible ``/v1/chat/completions`` server on 127.0.0.1 for tests, in a thread.

Replies come from a queue of canned answers (``ChatServer.replies``); each is a
dict with ``content`` (str), optional ``finish_reason`` (default "stop") and
optional ``reasoning_content`` (what reasoning models send beside the answer).
When the queue is empty the server asks ``respond`` (a function of the request
body returning such a dict, called from the server's threads) if it is set, else
answers ``{"observations": []}``. Every request body is recorded raw
(``raw_requests``) so tests can search it.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ChatServer:
    base_url: str = ""
    replies: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    raw_requests: list[bytes] = field(default_factory=list)
    respond: Callable[[dict[str, Any]], dict[str, Any]] | None = None


@contextmanager
def chat_server() -> Iterator[ChatServer]:
    """Start the server; yields its state (``base_url`` ends with ``/v1``)."""
    state = ChatServer()
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                state.raw_requests.append(raw)
                body = json.loads(raw)
                state.requests.append(body)
                reply = state.replies.pop(0) if state.replies else None
            if reply is None:
                reply = state.respond(body) if state.respond else {"content": '{"observations": []}'}
            if self.path != "/v1/chat/completions":
                self._send(404, {"error": {"message": "not found"}})
                return
            message: dict[str, Any] = {"role": "assistant", "content": reply.get("content", "")}
            if "reasoning_content" in reply:
                message["reasoning_content"] = reply["reasoning_content"]
            self._send(200, {"id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
                             "model": body.get("model", "test"),
                             "choices": [{"index": 0, "message": message,
                                          "finish_reason": reply.get("finish_reason", "stop")}],
                             "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
