"""Claude Code's transcript (``transcript_path``: the session as JSON Lines) → the tool calls and final message.

Kept under ``~/.claude/projects/<project>/<session>.jsonl`` (``folders``). One JSON object per line;
those gitmem reads (others — ``summary``, ``system``, ``file-history-snapshot`` … — are skipped)::

    {"type": "assistant", "cwd": …, "sessionId": …, "message": {"id": "msg_…", "role": "assistant",
     "model": …, "content": [{"type": "text", "text": …},
                             {"type": "tool_use", "id": "toolu_…", "name": "Edit", "input": {…}}]}}
    {"type": "user", "cwd": …, "message": {"role": "user", "content": [{"type": "tool_result",
     "tool_use_id": "toolu_…", "content": …, "is_error": false}]}, "toolUseResult": {…}}

A tool call becomes the event its PostToolUse (or PostToolUseFailure, when ``is_error``) hook
would have carried — built by the adapter itself (``claude.to_event``) from ``tool_input`` and
``toolUseResult`` (the structured ``tool_response``). A call without a result is left out (it
never finished; no hook would have fired). The final message is the text of the last
assistant message (its text blocks, joined), API errors and synthetic messages left out.

Runs in the detached consolidation (``reconcile``), never in a hook.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from . import claude
from .events import AfterTool


def _blocks(message: Any) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(content: Any) -> str:
    """The text of a tool result's ``content`` (a string, or text blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def folders(env: Mapping[str, str]) -> tuple[str, ...]:
    """Where Claude Code keeps its transcripts: ``$CLAUDE_CONFIG_DIR/projects`` (default ``~/.claude``; Claude
    Code docs, settings, "CLAUDE_CONFIG_DIR")."""
    homes = {env.get("CLAUDE_CONFIG_DIR") or "", os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")}
    return tuple(os.path.join(h, "projects") for h in sorted(homes) if h)


def events(objects: list[dict[str, Any]], session_id: str, cwd: str) -> tuple[list[AfterTool], str]:
    """The tool calls of the transcript's ``objects`` (its decoded lines; in order, those with a result) and its
    final assistant message; ``cwd``: the session's folder, for lines that name none."""
    uses: dict[str, tuple[str, dict[str, Any], str]] = {}  # id → (tool, input, cwd)
    results: list[tuple[str, dict[str, Any]]] = []  # (id, hook input)
    final, final_id = "", None
    session_cwd = cwd
    for obj in objects:
        cwd = str(obj["cwd"]) if isinstance(obj.get("cwd"), str) else session_cwd
        message = obj.get("message")
        if obj.get("type") == "assistant" and isinstance(message, dict):
            if obj.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
                continue
            texts = []
            for b in _blocks(message):
                if b.get("type") == "tool_use" and isinstance(b.get("id"), str) and isinstance(b.get("name"), str):
                    inp = b.get("input")
                    uses[str(b["id"])] = (str(b["name"]), inp if isinstance(inp, dict) else {}, cwd)
                elif b.get("type") == "text" and isinstance(b.get("text"), str) and b["text"].strip():
                    texts.append(b["text"])
            if texts:  # one message may come as several lines (one per content block), same id
                mid = message.get("id")
                final = final + "\n\n" + "\n\n".join(texts) if mid is not None and mid == final_id \
                    else "\n\n".join(texts)
                final_id = mid
        elif obj.get("type") == "user" and isinstance(message, dict):
            for b in _blocks(message):
                tid = b.get("tool_use_id")
                if b.get("type") != "tool_result" or not isinstance(tid, str) or tid not in uses:
                    continue
                tool, inp, use_cwd = uses[tid]
                failed = bool(b.get("is_error"))
                raw: dict[str, Any] = {
                    "hook_event_name": "PostToolUseFailure" if failed else "PostToolUse", "session_id": session_id,
                    "cwd": use_cwd or cwd, "tool_name": tool, "tool_input": inp, "tool_use_id": tid,
                    "tool_response": obj.get("toolUseResult") if isinstance(obj.get("toolUseResult"), dict) else None}
                if failed:
                    raw["error"] = _text(b.get("content"))
                results.append((tid, raw))
    out: list[AfterTool] = []
    for _tid, raw in results:
        event = claude.to_event(raw)
        if isinstance(event, AfterTool):
            out.append(event)
    return out, final
