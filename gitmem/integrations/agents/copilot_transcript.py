"""GitHub Copilot CLI's transcript (``$COPILOT_HOME/session-state/<session>/events.jsonl``, ``agentStop``'s
``transcriptPath``) → the tool calls and final message.

Copilot CLI 1.0.102 (``tests/fixtures/copilot/transcript-1.0.102.jsonl``, recorded from the real CLI): one event per
line, ``{"type", "data", "id", "timestamp", "parentId"}``; those gitmem reads (others — ``hook.*``,
``session.*``, ``assistant.turn_*``, ``system.message`` … — are skipped)::

    {"type": "tool.execution_start", "data": {"toolCallId": "call_1", "toolName": "view",
     "arguments": {"path": "/…/src/client.py"}}}
    {"type": "tool.execution_complete", "data": {"toolCallId": "call_1", "success": true,
     "result": {"content": "…"}, "error": {"message": "…"}}}
    {"type": "assistant.message", "data": {"content": "text", "toolRequests": […]}}

A completed call of a tool the adapter knows (``copilot.TOOL_KINDS``: ``view``, ``edit``, ``create``,
``bash``, ``grep``, ``glob``; other tools — ``report_intent``, MCP tools — are left out) becomes the
``postToolUse`` hook input Copilot would have sent (``toolName``, ``toolArgs`` = ``arguments``,
``toolResult`` = ``{"resultType": "success" | "failure", "textResultForLlm"}``) and goes through the adapter
itself (``copilot.to_event``); the hooks give no call id, so neither does this (``reconcile`` numbers the
calls by content, as the hooks do: ``capture.content_id``). Calls of sub-agents (``parentToolCallId``) are
left out. The final message — which ``agentStop`` does not carry — is the text of the last top-level
``assistant.message`` (it is written before ``agentStop`` runs).

Runs in the detached consolidation (``reconcile``), never in a hook.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from . import copilot
from .events import AfterTool


def folders(env: Mapping[str, str]) -> tuple[str, ...]:
    """Where Copilot CLI keeps its sessions: ``$COPILOT_HOME/session-state`` (default ``~/.copilot``; Copilot
    CLI 1.0.102's ``--config-dir`` is not seen by gitmem: sessions kept there are not read)."""
    homes = {env.get("COPILOT_HOME") or "", os.path.join(env.get("HOME") or os.path.expanduser("~"), ".copilot")}
    return tuple(os.path.join(h, "session-state") for h in sorted(homes) if h)


def _result(data: dict[str, Any]) -> dict[str, Any]:
    """The hook's ``toolResult`` of a completed call."""
    result = data.get("result")
    error = data.get("error")
    text = result.get("content") if isinstance(result, dict) else None
    if not isinstance(text, str):
        text = error.get("message") if isinstance(error, dict) else error
    return {"resultType": "success" if data.get("success") else "failure",
            "textResultForLlm": text if isinstance(text, str) else ""}


def events(objects: list[dict[str, Any]], session_id: str, cwd: str) -> tuple[list[AfterTool], str]:
    """The completed tool calls of the session's ``objects`` (its decoded lines), in order, and its final
    message; ``cwd``: the session's folder (``session.start`` names it too)."""
    started: dict[str, tuple[str, Any]] = {}  # toolCallId → (tool, arguments)
    out: list[AfterTool] = []
    final = ""
    for obj in objects:
        data = obj.get("data")
        if not isinstance(data, dict) or data.get("parentToolCallId"):
            continue
        kind = obj.get("type")
        if kind == "session.start" and not cwd:
            context = data.get("context")
            cwd = str(context.get("cwd") or "") if isinstance(context, dict) else ""
        elif kind == "tool.execution_start":
            tid, tool = data.get("toolCallId"), data.get("toolName")
            if isinstance(tid, str) and isinstance(tool, str) and tool in copilot.TOOL_KINDS:
                started[tid] = (tool, data.get("arguments"))
        elif kind == "tool.execution_complete":
            tid = data.get("toolCallId")
            if not isinstance(tid, str) or tid not in started:
                continue
            tool, args = started.pop(tid)
            raw = {"sessionId": session_id, "cwd": cwd, "toolName": tool, "toolArgs": args,
                   "toolResult": _result(data)}
            got = copilot.to_event(raw, "postToolUse")
            out += [e for e in (got if isinstance(got, list) else [got]) if isinstance(e, AfterTool)]
        elif kind == "assistant.message" and isinstance(data.get("content"), str) and data["content"].strip():
            final = data["content"]
    return out, final
