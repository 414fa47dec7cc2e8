"""A scripted Anthropic Messages API server (``POST /v1/messages``, streaming) on 127.0.0.1, in a thread.

For driving the real ``claude -p`` (Claude Code) offline with ``ANTHROPIC_BASE_URL`` set to
``base_url``. Claude Code 2.1.328 posts its turns to ``/v1/messages?beta=true`` with ``stream: true``
and reads server-sent events (``message_start``, ``content_block_start`` / ``_delta`` / ``_stop``,
``message_delta``, ``message_stop``). ``script`` is a list of steps; a turn (a request that offers
tools) gets the step whose index is the number of ``tool_result`` blocks already in its ``messages``
(each session runs the script from the start, the last step repeats): ``{"call": name, "input":
{...}}`` (a tool call, ``stop_reason: tool_use``) or ``{"say": text}`` (the final answer,
``end_turn``). A side request (no tools: a title, a summary, a quota check) gets ``{"say": "ok"}``;
``/v1/messages/count_tokens`` a count; a non-streaming request one JSON message. Every request body
is kept (``requests``, with its ``path``). ``on_turn(n, body)``, if given, runs before the ``n``-th
turn (0-based) is answered. The HTTP scaffolding is ``scripted_server``'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from testing.scripted_server import Reply, Request, ScriptedServer, json_reply, script_step, serve, sse_reply

USAGE = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


@dataclass
class MessagesServer(ScriptedServer):
    script: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0

    def entry(self, request: Request) -> dict[str, Any]:
        """The body, with the request's ``path``."""
        return {**request.body, "path": request.path}


def blocks(message: Any) -> list[dict[str, Any]]:
    """The content blocks of a message (a string content is one text block)."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def tool_results(body: dict[str, Any]) -> int:
    """How many ``tool_result`` blocks a request's ``messages`` hold."""
    return sum(1 for m in body.get("messages") or [] for b in blocks(m) if b.get("type") == "tool_result")


def _content(step: dict[str, Any], n: int) -> tuple[dict[str, Any], str]:
    """(content block, stop reason) of a step."""
    if "call" in step:
        return {"type": "tool_use", "id": f"toolu_{n:04d}", "name": step["call"], "input": step.get("input") or {}}, \
            "tool_use"
    return {"type": "text", "text": step.get("say", "")}, "end_turn"


def _events(message: dict[str, Any], block: dict[str, Any], stop: str) -> list[dict[str, Any]]:
    """The stream of one message holding one block, as the Messages API sends it."""
    if block["type"] == "tool_use":
        start = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
    return [{"type": "message_start", "message": {**message, "content": [], "stop_reason": None,
                                                  "usage": {**USAGE, "output_tokens": 1}}},
            {"type": "content_block_start", "index": 0, "content_block": start},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
             "usage": {"output_tokens": USAGE["output_tokens"]}},
            {"type": "message_stop"}]


@contextmanager
def messages_server(script: list[dict[str, Any]],
                    on_turn: Callable[[int, dict[str, Any]], None] | None = None) -> Iterator[MessagesServer]:
    """Start the server; yields its state (``base_url`` has no path: the client adds ``/v1/messages``)."""
    state = MessagesServer(script=list(script))

    def answer(request: Request) -> Reply:
        if request.method == "GET":
            return json_reply({"data": [], "has_more": False, "first_id": None, "last_id": None})
        body = request.body
        if request.path.startswith("/v1/messages/count_tokens"):
            return json_reply({"input_tokens": 10})
        if body.get("tools"):
            with state.lock:
                n, state.turns = state.turns, state.turns + 1
            if on_turn is not None:
                on_turn(n, body)
            with state.lock:
                step = script_step(state.script, tool_results(body))
        else:
            step = {"say": "ok"}
        block, stop = _content(step, request.n)
        message = {"id": f"msg_{request.n:04d}", "type": "message", "role": "assistant",
                   "model": str(body.get("model") or "claude-sonnet-4-5"), "stop_sequence": None}
        if not body.get("stream"):
            return json_reply({**message, "content": [block], "stop_reason": stop, "usage": USAGE})
        return sse_reply(_events(message, block, stop), named=True)

    with serve(state, answer, path=""):
        yield state
