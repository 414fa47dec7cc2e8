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
the session runs). The HTTP scaffolding is ``scripted_server``'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from testing.scripted_server import Reply, Request, ScriptedServer, json_reply, script_step, serve, sse_reply


@dataclass
class GeminiServer(ScriptedServer):
    script: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0

    def entry(self, request: Request) -> dict[str, Any]:
        """The body, with the request's ``path`` (which names the method: a turn, a side question)."""
        return {**request.body, "path": request.path}


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

    def answer(request: Request) -> Reply:
        if request.method == "GET":
            return json_reply({"models": []})
        body, path = request.body, request.path
        if ":countTokens" in path:
            return json_reply({"totalTokens": 10})
        gen = body.get("generationConfig") or {}
        if gen.get("responseMimeType") == "application/json" or gen.get("responseJsonSchema") \
                or gen.get("responseSchema"):
            side = {"next_speaker": "user", "reasoning": "done", "model_choice": "flash", "complexity_score": 1}
            data = _answer([{"text": json.dumps(side)}])
        else:
            with state.lock:
                n, state.turns = state.turns, state.turns + 1
            if on_turn is not None:
                on_turn(n, body)
            with state.lock:
                step = script_step(state.script, function_responses(body))
            data = _answer(_parts(step))
        return sse_reply([data]) if ":streamGenerateContent" in path else json_reply(data)

    with serve(state, answer, path=""):
        yield state
