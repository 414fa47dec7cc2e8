"""A scripted Gemini API server (``generateContent`` and ``streamGenerateContent``) on 127.0.0.1, in a thread.

For driving the real ``gemini -p`` (Gemini CLI) offline with ``GOOGLE_GEMINI_BASE_URL`` set to
``base_url``. The CLI posts ``/v1beta/models/<model>:streamGenerateContent?alt=sse`` for its turns
(answered as server-sent events, one ``data:`` chunk) and ``:generateContent`` for side questions
(answered as one JSON object). ``script`` is a list of steps; a request gets the step whose index is
the number of ``functionResponse`` parts already in its ``contents`` (each session runs the script
from the start, the last step repeats): ``{"call": name, "args": {...}}`` (a function call) or
``{"say": text}`` (the final answer). Every request body is kept (``requests``, with its ``path``).
Side requests asking for JSON (``generationConfig.responseMimeType``) get ``{}``-shaped text so the
CLI moves on; ``countTokens`` gets a count; GET requests get an empty model list. ``on_turn(n, body)``,
if given, runs before the ``n``-th turn request (0-based) is answered (to change the repository while
the session runs).
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class GeminiServer:
    base_url: str = ""
    script: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)


def function_responses(body: dict[str, Any]) -> int:
    """How many ``functionResponse`` parts a request's ``contents`` hold."""
    return sum(1 for c in body.get("contents") or [] if isinstance(c, dict)
               for p in c.get("parts") or [] if isinstance(p, dict) and "functionResponse" in p)


def _parts(step: dict[str, Any]) -> list[dict[str, Any]]:
    if "call" in step:
        return [{"functionCall": {"name": step["call"], "args": step.get("args") or {}}}]
    return [{"text": step.get("say", "")}]


def _answer(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "gemini-2.5-flash"}


@contextmanager
def gemini_server(script: list[dict[str, Any]],
                  on_turn: Callable[[int, dict[str, Any]], None] | None = None) -> Iterator[GeminiServer]:
    """Start the server; yields its state (``base_url`` has no path: the CLI adds ``/v1beta/…``)."""
    state = GeminiServer(script=list(script))
    lock = threading.Lock()
    turns = [0]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *args: Any) -> None:
            pass

        def _json(self, obj: Any) -> None:
            body = json.dumps(obj).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._json({"models": []})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"raw": raw.decode(errors="replace")}
            body = body if isinstance(body, dict) else {"raw": body}
            with lock:
                state.requests.append({**body, "path": self.path})
            if ":countTokens" in self.path:
                self._json({"totalTokens": 10})
                return
            gen = body.get("generationConfig") or {}
            if gen.get("responseMimeType") == "application/json" or gen.get("responseJsonSchema") \
                    or gen.get("responseSchema"):
                side = {"next_speaker": "user", "reasoning": "done", "model_choice": "flash", "complexity_score": 1}
                answer = _answer([{"text": json.dumps(side)}])
            else:
                with lock:
                    n, turns[0] = turns[0], turns[0] + 1
                if on_turn is not None:
                    on_turn(n, body)
                with lock:
                    done = function_responses(body)
                    step = state.script[min(done, len(state.script) - 1)] if state.script else {"say": "Done."}
                answer = _answer(_parts(step))
            if ":streamGenerateContent" not in self.path:
                self._json(answer)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.wfile.write(f"data: {json.dumps(answer)}\n\n".encode())
            self.wfile.flush()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
