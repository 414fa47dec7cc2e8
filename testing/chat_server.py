"""A real OpenAI-compatible ``/v1/chat/completions`` server on 127.0.0.1 for tests, in a thread.

Replies come from a queue of canned answers (``ChatServer.replies``); each is a
dict with ``content`` (str), optional ``finish_reason`` (default "stop") and
optional ``reasoning_content`` (what reasoning models send beside the answer).
When the queue is empty the server asks ``respond`` (a function of the request
body returning such a dict, called from the server's threads) if it is set, else
answers ``{"observations": []}``. Every request body is recorded decoded
(``requests``) and raw (``raw_requests``) so tests can search it. The HTTP
scaffolding is ``scripted_server``'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from testing.scripted_server import Reply, Request, ScriptedServer, json_reply, serve


@dataclass
class ChatServer(ScriptedServer):
    replies: list[dict[str, Any]] = field(default_factory=list)
    raw_requests: list[bytes] = field(default_factory=list)
    respond: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    def record(self, request: Request) -> int:
        """Log the body decoded and raw."""
        self.raw_requests.append(request.raw)
        return super().record(request)


@contextmanager
def chat_server() -> Iterator[ChatServer]:
    """Start the server; yields its state (``base_url`` ends with ``/v1``)."""
    state = ChatServer()

    def answer(request: Request) -> Reply:
        with state.lock:
            reply = state.replies.pop(0) if state.replies else None
        if reply is None:
            reply = state.respond(request.body) if state.respond else {"content": '{"observations": []}'}
        if request.path != "/v1/chat/completions":
            return json_reply({"error": {"message": "not found"}}, 404)
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content", "")}
        if "reasoning_content" in reply:
            message["reasoning_content"] = reply["reasoning_content"]
        return json_reply({"id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
                           "model": request.body.get("model", "test"),
                           "choices": [{"index": 0, "message": message,
                                        "finish_reason": reply.get("finish_reason", "stop")}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    with serve(state, answer):
        yield state
