"""Codex CLI's transcript (its "rollout": ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl``,
the hooks' ``transcript_path``) → the tool calls and final message.

codex-cli 0.169.0 (``tests/fixtures/codex/transcript-0.169.0.jsonl``, recorded from the real CLI): one JSON object
per line, ``{"timestamp", "ordinal", "type", "payload"}``; those gitmem reads (other types —
``session_meta``, ``turn_context``, ``world_state``, ``token_usage_record``, other ``event_msg`` — are
skipped)::

    {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command",
     "arguments": "{\"cmd\": \"cat src/client.py\"}", "call_id": "call_1"}}
    {"type": "response_item", "payload": {"type": "custom_tool_call", "name": "apply_patch",
     "input": "*** Begin Patch…", "call_id": "call_2"}}
    {"type": "response_item", "payload": {"type": "function_call_output" | "custom_tool_call_output",
     "call_id": …, "output": "…"}}
    {"type": "event_msg", "payload": {"type": "item_completed", "item": {"type": "CommandExecution",
     "id": "call_1", "aggregated_output": "…", "exit_code": 0}}}
    {"type": "response_item", "payload": {"type": "message", "role": "assistant",
     "content": [{"type": "output_text", "text": "…"}]}}

A call becomes the PostToolUse hook input Codex would have sent for it (tool ``Bash`` with
``{"command": str}`` for ``exec_command`` / ``shell`` / ``shell_command`` / ``local_shell_call``,
``apply_patch`` with ``{"command": patch}``; ``tool_use_id`` the ``call_id``; ``tool_response`` the
command's output) and goes through the adapter itself (``codex.to_event``): a patch gives one event per
file, ids ``<call_id>:<i>`` as from the hook. Other tools (MCP, web search) are left out: their
hook input is not known. A call without an output is left out (it never finished). The final
message is the text of the last assistant message.

Runs in the detached consolidation (``reconcile``), never in a hook.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from . import codex
from .events import AfterTool
from .patches import patch_text

#: Codex's shell tools (the model's function names, codex-cli 0.169.0) → the key of their arguments holding
#: the command; the hooks report each as ``Bash``.
SHELL_TOOLS = {"exec_command": "cmd", "shell": "command", "shell_command": "command", "local_shell_call": "command"}


def folders(env: Mapping[str, str]) -> tuple[str, ...]:
    """Where Codex keeps its transcripts: ``$CODEX_HOME/sessions`` (default ``~/.codex``; codex-cli docs,
    "CODEX_HOME"), and ``archived_sessions`` beside it."""
    homes = {env.get("CODEX_HOME") or "", os.path.join(env.get("HOME") or os.path.expanduser("~"), ".codex")}
    return tuple(os.path.join(h, d) for h in sorted(homes) if h for d in ("sessions", "archived_sessions"))


def _hook_input(payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(tool name as the hooks give it, tool input as the hooks give it) of a call, or None for other tools."""
    name = payload.get("name")
    if payload.get("type") == "local_shell_call":
        action = payload.get("action")
        cmd = action.get("command") if isinstance(action, dict) else None
        return (codex.SHELL_TOOL, {"command": cmd}) if cmd else None
    if not isinstance(name, str):
        return None
    if payload.get("type") == "custom_tool_call":
        arg: Any = payload.get("input")
        return (codex.PATCH_TOOL, {"command": arg}) if name == codex.PATCH_TOOL and isinstance(arg, str) else None
    try:
        args = json.loads(payload.get("arguments") or "{}")
    except (ValueError, TypeError, RecursionError):
        return None
    if not isinstance(args, dict):
        return None
    if name in SHELL_TOOLS:
        cmd = args.get(SHELL_TOOLS[name])
        return (codex.SHELL_TOOL, {"command": cmd}) if cmd else None
    if name == codex.PATCH_TOOL:
        patch = patch_text(args)
        return (codex.PATCH_TOOL, {"command": patch}) if patch else None
    return None


def _text(content: Any) -> str:
    if not isinstance(content, list):
        return content if isinstance(content, str) else ""
    return "".join(str(c.get("text") or "") for c in content
                   if isinstance(c, dict) and c.get("type") in ("output_text", "text"))


def events(objects: list[dict[str, Any]], session_id: str, cwd: str) -> tuple[list[AfterTool], str]:
    """The tool calls of the rollout's ``objects`` (its decoded lines; in order, those with an output) and its
    final assistant message; ``cwd``: the session's folder, when no ``turn_context`` names one."""
    calls: dict[str, tuple[str, dict[str, Any], str]] = {}  # call_id → (tool, input, cwd)
    outputs: dict[str, str] = {}  # call_id → the command's own output (``item_completed``)
    done: list[tuple[str, str]] = []  # (call_id, output), in order
    final = ""
    for obj in objects:
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            continue
        kind = payload.get("type")
        if obj.get("type") == "turn_context" and isinstance(payload.get("cwd"), str):
            cwd = payload["cwd"]
        elif obj.get("type") == "event_msg" and kind == "item_completed":
            item = payload.get("item")
            if isinstance(item, dict) and isinstance(item.get("id"), str) \
                    and isinstance(item.get("aggregated_output"), str):
                outputs[item["id"]] = item["aggregated_output"]
        elif obj.get("type") != "response_item":
            continue
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            cid = payload.get("call_id")
            hook = _hook_input(payload)
            if isinstance(cid, str) and cid and hook is not None:
                calls[cid] = (*hook, cwd)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            cid = payload.get("call_id")
            if isinstance(cid, str) and cid in calls:
                text = payload.get("output")
                done.append((cid, text if isinstance(text, str) else json.dumps(text)))
        elif kind == "message" and payload.get("role") == "assistant":
            text = _text(payload.get("content"))
            if text.strip():
                final = text
    out: list[AfterTool] = []
    for cid, output in done:
        tool, inp, call_cwd = calls[cid]
        raw = {"hook_event_name": "PostToolUse", "session_id": session_id, "cwd": call_cwd, "tool_name": tool,
               "tool_input": inp, "tool_response": outputs.get(cid, output), "tool_use_id": cid}
        got = codex.to_event(raw)
        out += [e for e in (got if isinstance(got, list) else [got]) if isinstance(e, AfterTool)]
    return out, final
