"""A scripted OpenAI Responses API server (``POST /v1/responses``, streaming) on 127.0.0.1, in a thread.

For driving the real ``codex exec`` offline. ``script`` is a list of steps; a request gets the
step whose index is the number of tool results already in its ``input`` (so each session runs
the script from the start, and the last step repeats): ``{"call": name, "arguments": {...}}``
(a function tool call), ``{"custom": name, "input": text}`` (a freeform tool call, such as
Codex's ``apply_patch``) or ``{"say": text}`` (the final answer). Every request body is kept
(``requests``). GET requests (model lists) get an empty list.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

TOOL_RESULTS = ("function_call_output", "custom_tool_call_output")


@dataclass
class ResponsesServer:
    base_url: str = ""
    script: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)


def _item(step: dict[str, Any], n: int) -> dict[str, Any]:
    if "call" in step:
        return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": step["call"],
                "arguments": json.dumps(step.get("arguments") or {}), "status": "completed"}
    if "custom" in step:
        return {"type": "custom_tool_call", "id": f"ctc_{n}", "call_id": f"call_{n}", "name": step["custom"],
                "input": step["input"], "status": "completed"}
    return {"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
            "content": [{"type": "output_text", "text": step.get("say", ""), "annotations": []}]}


@contextmanager
def responses_server(script: list[dict[str, Any]]) -> Iterator[ResponsesServer]:
    """Start the server; yields its state (``base_url`` ends with ``/v1``)."""
    state = ResponsesServer(script=list(script))
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body = json.dumps({"object": "list", "data": []}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"raw": raw.decode(errors="replace")}
            with lock:
                state.requests.append(body)
                n = len(state.requests)
                done = sum(1 for i in body.get("input") or [] if isinstance(i, dict) and i.get("type") in TOOL_RESULTS)
                step = state.script[min(done, len(state.script) - 1)] if state.script else {"say": "Done."}
            item = _item(step, n)
            rid = f"resp_{n}"
            usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                     "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
            events = [
                {"type": "response.created", "response": {"id": rid, "object": "response", "status": "in_progress",
                                                          "output": []}},
                {"type": "response.output_item.added", "output_index": 0, "item": item},
                {"type": "response.output_item.done", "output_index": 0, "item": item},
                {"type": "response.completed", "response": {"id": rid, "object": "response", "status": "completed",
                                                            "output": [item], "usage": usage}},
            ]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            for i, ev in enumerate(events):
                ev["sequence_number"] = i
                self.wfile.write(f"event: {ev['type']}\ndata: {json.dumps(ev)}\n\n".encode())
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
