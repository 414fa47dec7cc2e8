"""A scripted OpenAI Chat Completions server (``POST /v1/chat/completions``) on 127.0.0.1, in a thread.

For driving the real GitHub Copilot CLI offline. ``script`` is a list of steps; a request gets the
step whose index is the number of ``tool`` messages already in its ``messages`` (so each session
runs the script from the start, and the last step repeats): ``{"call": name, "arguments": {...}}``
(a function tool call) or ``{"say": text}`` (the final answer). A request that names no tools (a
side request: a title, a summary) gets ``{"say": "ok"}``. Streams (server-sent events) when the
request asks for it, else answers one JSON object. Every request body is kept (``requests``). GET
requests (model lists) get an empty list. The HTTP scaffolding is ``scripted_server``'s.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from testing.scripted_server import Reply, Request, ScriptedServer, json_reply, script_step, serve, sse_reply


@dataclass
class ChatCompletionsServer(ScriptedServer):
    script: list[dict[str, Any]] = field(default_factory=list)


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

    def answer(request: Request) -> Reply:
        if request.method == "GET":
            return json_reply({"object": "list", "data": []})
        body, n = request.body, request.n
        msgs = body.get("messages") or []
        done = sum(1 for m in msgs if isinstance(m, dict) and m.get("role") == "tool")
        with state.lock:
            step = script_step(state.script, done) if body.get("tools") else {"say": "ok"}
        message, finish = _message(step, n)
        model = str(body.get("model") or "test")
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not body.get("stream"):
            return json_reply({"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
                               "model": model, "usage": usage,
                               "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
        delta: dict[str, Any] = {"role": "assistant"}
        if message.get("tool_calls"):
            delta["tool_calls"] = [{"index": 0, **c} for c in message["tool_calls"]]
        else:
            delta["content"] = message["content"]
        chunks: list[dict[str, Any]] = [{"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                  {"choices": [], "usage": usage}]
        for c in chunks:
            c.update({"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": int(time.time()),
                      "model": model})
        return sse_reply(chunks, done=True)

    with serve(state, answer):
        yield state
