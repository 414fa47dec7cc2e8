"""Gemini CLI's transcript (``~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl``, the hooks'
``transcript_path``) → the tool calls and final message.

Gemini CLI 0.61.0 (``tests/fixtures/gemini/transcript-0.61.0.jsonl``, recorded from the real CLI; the loader is
its bundle's ``loadConversationRecord``): one JSON object per line, applied in order — the session's
metadata (``sessionId``, ``projectHash`` …); a message (``id``: a later line with the same id replaces
it, in place); ``{"$set": {...}}`` (``messages``, when present, replaces them all); ``{"$rewindTo": id}``
(that message and the later ones are dropped). A message of the model::

    {"id": …, "type": "gemini", "content": "text", "toolCalls": [{"id": "replace__replace_<ms>_0",
     "name": "replace", "args": {…}, "status": "success" | "error" | "cancelled", "result":
     [{"functionResponse": {"response": {"output": "…"} | {"error": "…"}}}], "resultDisplay": …}]}

A finished call (``success`` or ``error``) becomes the AfterTool hook input Gemini CLI would have sent
(``tool_name``, ``tool_input`` = ``args``, ``tool_response`` = ``{"llmContent", "returnDisplay"[,
"error"]}``) and goes through the adapter itself (``gemini.to_event``, its ``AfterTool`` event only);
the hooks give no call id, so neither does this (``reconcile`` numbers the calls by content, as the
hooks do: ``capture.content_id``). The final message is the text of the last ``gemini`` message.

Runs in the detached consolidation (``reconcile``), never in a hook.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from . import gemini
from .events import AfterTool

#: Tool-call states of a call that ran (Gemini CLI 0.61.0's ``CoreToolCallStatus``).
FINISHED = ("success", "error")


def folders(env: Mapping[str, str]) -> tuple[str, ...]:
    """Where Gemini CLI keeps its chats: ``$GEMINI_CLI_HOME/.gemini/tmp`` (default: the home folder; Gemini
    CLI 0.61.0 docs, configuration, "GEMINI_CLI_HOME")."""
    homes = {env.get("GEMINI_CLI_HOME") or "", env.get("HOME") or os.path.expanduser("~")}
    return tuple(os.path.join(h, ".gemini", "tmp") for h in sorted(homes) if h)


def messages(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The session's messages once every line is applied (as Gemini CLI loads the file), in order."""
    by_id: dict[str, dict[str, Any]] = {}
    for obj in objects:
        if isinstance(obj.get("$rewindTo"), str):
            ids = list(by_id)
            if obj["$rewindTo"] in by_id:
                for mid in ids[ids.index(obj["$rewindTo"]):]:
                    del by_id[mid]
        elif isinstance(obj.get("$set"), dict):
            msgs = obj["$set"].get("messages")
            if isinstance(msgs, list):
                by_id = {m["id"]: m for m in msgs if isinstance(m, dict) and isinstance(m.get("id"), str)}
        elif isinstance(obj.get("id"), str):
            by_id[obj["id"]] = obj
    return list(by_id.values())


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return ""


def _response(call: dict[str, Any]) -> dict[str, Any]:
    """The hook's ``tool_response`` of a call: its output to the model, its display, its error."""
    out: dict[str, Any] = {"llmContent": "", "returnDisplay": call.get("resultDisplay") or ""}
    for part in call.get("result") or []:
        fr = part.get("functionResponse") if isinstance(part, dict) else None
        resp = fr.get("response") if isinstance(fr, dict) else None
        if isinstance(resp, dict):
            if isinstance(resp.get("output"), str):
                out["llmContent"] += resp["output"]
            if resp.get("error"):
                out["error"] = resp["error"]
    if call.get("status") == "error" and "error" not in out:
        out["error"] = out["llmContent"] or "error"
    return out


def events(objects: list[dict[str, Any]], session_id: str, cwd: str) -> tuple[list[AfterTool], str]:
    """The finished tool calls of the chat's ``objects`` (its decoded lines), in order, and its final message;
    ``cwd``: the session's folder (the hooks' ``cwd``: relative paths in the calls are relative to it)."""
    out: list[AfterTool] = []
    final = ""
    for m in messages(objects):
        if m.get("type") != "gemini":
            continue
        for call in m.get("toolCalls") or []:
            if not (isinstance(call, dict) and call.get("status") in FINISHED and isinstance(call.get("name"), str)):
                continue
            args = call.get("args")
            raw = {"hook_event_name": "AfterTool", "session_id": session_id, "cwd": cwd, "tool_name": call["name"],
                   "tool_input": args if isinstance(args, dict) else {}, "tool_response": _response(call)}
            got = gemini.to_event(raw)
            out += [e for e in (got if isinstance(got, list) else [got]) if isinstance(e, AfterTool)]
        text = _text(m.get("content"))
        if text.strip():
            final = text
    return out, final
