"""A scripted OpenAI Responses API server (``POST /v1/responses``, streaming) on 127.0.0.1, in a thread.

For driving the real ``codex exec`` offline. ``script`` is a list of steps; a request gets the
step whose index is the number of tool results already in its ``input`` (so each session runs
the script from the start, and the last step repeats): ``{"call": name, "arguments": {...}}``
(a function tool call), ``{"custom": name, "input": text}`` (a freeform tool call, such as
Codex's ``apply_patch``) or ``{"say": text}`` (the final answer). Every request body is kept
(``requests``). GET requests (model lists) get an empty list. The HTTP scaffolding is
``scripted_server``'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from testing.scripted_server import Reply, Request, ScriptedServer, json_reply, script_step, serve, sse_reply

TOOL_RESULTS = ("function_call_output", "custom_tool_call_output")


@dataclass
class ResponsesServer(ScriptedServer):
    script: list[dict[str, Any]] = field(default_factory=list)


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

    def answer(request: Request) -> Reply:
        if request.method == "GET":
            return json_reply({"object": "list", "data": []})
        n = request.n
        done = sum(1 for i in request.body.get("input") or [] if isinstance(i, dict) and i.get("type") in TOOL_RESULTS)
        with state.lock:
            step = script_step(state.script, done)
        item = _item(step, n)
        rid = f"resp_{n}"
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": {"id": rid, "object": "response", "status": "in_progress",
                                                      "output": []}},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": rid, "object": "response", "status": "completed",
                                                        "output": [item], "usage": usage}},
        ]
        for i, ev in enumerate(events):
            ev["sequence_number"] = i
        return sse_reply(events, named=True)

    with serve(state, answer):
        yield state
