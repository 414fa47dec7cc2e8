"""A scripted OpenAI Chat Completions server (``POST /v1/chat/completions``) on 127.0.0.1, in a thread.

For driving the real GitHub Copilot CLI offline. ``script`` is a list of steps; a request gets the
step whose index is the number of ``tool`` messages already in its ``messages`` (so each session
runs the script from the start, and the last step repeats): ``{"call": name, "arguments": {...}}``
(a function tool call) or ``{"say": text}`` (the final answer). A request that names no tools (a
side request: a title, a summary) gets ``{"say": "ok"}``. Streams (server-sent events) when the
request asks for it, else answers one JSON object. Every request body is kept (``requests``). GET
requests (model lists) get an empty list.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ChatCompletionsServer:
    base_url: str = ""
    script: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)


def _message(step: dict[str, Any], n: int) -> tuple[dict[str, Any], str]:
    if "call" in step:
        call = {"id": f"call_{n}", "type": "function",
                "function": {"name": step["call"], "arguments": json.dumps(step.get("arguments") or {})}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    return {"role": "assistant", "content": step.get("say", "")}, "stop"


@contextmanager
def chat_completions_server(script: list[dict[str, Any]]) -> Iterator[ChatCompletionsServer]:
    """Start the server; yields its state (``base_url`` ends with ``/v1``)."""
    state = ChatCompletionsServer(script=list(script))
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *args: Any) -> None:
            pass

        def _json(self, obj: dict[str, Any]) -> None:
            body = json.dumps(obj).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._json({"object": "list", "data": []})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"raw": raw.decode(errors="replace")}
            with lock:
                state.requests.append(body)
                n = len(state.requests)
                msgs = body.get("messages") or []
                done = sum(1 for m in msgs if isinstance(m, dict) and m.get("role") == "tool")
                if not body.get("tools"):
                    step: dict[str, Any] = {"say": "ok"}
                else:
                    step = state.script[min(done, len(state.script) - 1)] if state.script else {"say": "Done."}
            message, finish = _message(step, n)
            model = str(body.get("model") or "test")
            usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            if not body.get("stream"):
                self._json({"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
                            "model": model, "usage": usage,
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
                return
            delta: dict[str, Any] = {"role": "assistant"}
            if message.get("tool_calls"):
                delta["tool_calls"] = [{"index": 0, **c} for c in message["tool_calls"]]
            else:
                delta["content"] = message["content"]
            chunks = [{"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                      {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                      {"choices": [], "usage": usage}]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            for c in chunks:
                c.update({"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": int(time.time()),
                          "model": model})
                self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
