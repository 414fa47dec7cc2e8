"""Reconciliation of a session's spool with the agent's own transcript, once a turn or the session has ended.

Headless runs (``claude -p``, ``codex exec``, ``gemini -p``, ``copilot -p``) end right after the last
turn: an asynchronous capture hook may still be running, or be killed, and the Stop hook is often
cancelled. The agent's transcript (named in the spool's SessionStart, Stop and SessionEnd records:
Claude Code's, Codex's and Gemini CLI's ``transcript_path``, Copilot CLI's ``transcriptPath`` on
``agentStop``) holds every tool call and the final assistant message; ``reconcile`` appends to the live
spool what it holds and the spool does not.

Owns: reading a transcript safely (``read_transcript``: an absolute ``.jsonl`` path inside the
agent's own transcript folders — ``<agent>_transcript.folders``, symlinks resolved first, so a hostile
hook input cannot name another file —, a regular file — a FIFO or a device is refused without
blocking —, not a private file, at most the last ``MAX_TRANSCRIPT_BYTES``, lines that are not JSON
objects skipped), the transcript reader per agent (``READERS``: ``<agent>_transcript.events``, each
building the hook input its agent would have sent and passing it through the agent's own adapter), the
ids of calls whose agent gives none (numbered by content in transcript order, as the hooks number them:
``capture.content_id``), and what is added.

Guarantees: an added tool call goes through the hooks' own handler (``core.on_after_tool``:
private files left out, bounded and redacted by ``capture``), the final message through
``core.on_stop``; a tool call whose id is spooled or already consolidated, or a final message
when one is spooled since the last prompt or was already consolidated, is not added. Exactly once
overall: the consolidation drops a record whose key (``spool.record_key``) it has seen
(``spool.fresh``), so a hook that arrives after the reconciliation adds nothing either.

Runs in the detached consolidation (``capture.consolidate``), never in a hook.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ... import config, layout
from ...capture import redact, spool
from . import capture, claude_transcript, codex_transcript, copilot_transcript, core, gemini_transcript
from .events import AfterTool, Stop

#: Most bytes read of a transcript (its end: what the hooks may have missed is at the end).
MAX_TRANSCRIPT_BYTES = 32 * 1024 * 1024

Reader = Callable[[list[dict[str, Any]], str, str], tuple[list[AfterTool], str]]
Folders = Callable[[Mapping[str, str]], tuple[str, ...]]

#: Agent name (the spool's ``agent`` field) → (reader: (transcript objects, session id, cwd) → tool calls and
#: final message; where that agent keeps its transcripts, from the environment).
READERS: dict[str, tuple[Reader, Folders]] = {
    "claude": (claude_transcript.events, claude_transcript.folders),
    "codex": (codex_transcript.events, codex_transcript.folders),
    "gemini": (gemini_transcript.events, gemini_transcript.folders),
    "copilot": (copilot_transcript.events, copilot_transcript.folders),
}


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


def read_transcript(path: str, globs: tuple[str, ...], folders: tuple[str, ...]) -> list[bytes] | None:
    """The lines of the transcript at ``path`` (the last ``MAX_TRANSCRIPT_BYTES`` of it, whole lines), or None
    when it is not an absolute ``.jsonl`` path, is not inside one of ``folders`` once symlinks are resolved,
    is private, cannot be opened or is not a regular file."""
    if not path or not os.path.isabs(path) or not path.endswith(".jsonl") or redact.is_private_path(path, globs):
        return None
    real = os.path.realpath(path)
    if not any(_inside(real, os.path.realpath(f)) for f in folders if os.path.isabs(f)):
        return None  # not the agent's own transcript: never read another file
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None  # a FIFO, a device, a socket: never read (it could block or never end)
        start = max(0, st.st_size - MAX_TRANSCRIPT_BYTES)
        os.lseek(fd, start, os.SEEK_SET)
        chunks: list[bytes] = []
        left = MAX_TRANSCRIPT_BYTES
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    lines = b"".join(chunks).split(b"\n")
    return lines[1:] if start > 0 else lines  # the first line of a tail is cut


def objects(lines: list[bytes]) -> list[dict[str, Any]]:
    """The JSON objects of transcript ``lines``, in order; lines that are not one are skipped."""
    out = []
    for line in lines:
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def _transcript(pending: list[dict[str, Any]]) -> tuple[str, str, str] | None:
    """(agent, path, cwd) of the session's transcript: the last pending record naming one."""
    for r in reversed(pending):
        path = r.get("transcript")
        if isinstance(path, str) and path:
            agent = r.get("agent")
            cwd = r.get("cwd")
            return ((agent if isinstance(agent, str) and agent else "claude"), path,
                    cwd if isinstance(cwd, str) else "")
    return None


def _has_final_message(pending: list[dict[str, Any]]) -> bool:
    """Whether a Stop record with a message is pending since the last prompt."""
    for r in reversed(pending):
        if r.get("event") == "UserPromptSubmit":
            return False
        if r.get("event") == "Stop" and str(r.get("last_message") or "").strip():
            return True
    return False


def reconcile(root: Path, key: str, pending: list[dict[str, Any]], seen: set[str]) -> int:
    """Append to session ``key``'s live spool the transcript's tool calls that are neither in ``pending`` (the
    records of its live spool and unprocessed batches) nor in ``seen`` (the keys already consolidated), and its
    final message when no Stop record carries one; returns how many records were added.

    The caller holds the session's consolidation lock and claims the live spool next.

    Raises:
        OSError: the spool cannot be written.
    """
    found = _transcript(pending)
    if found is None or found[0] not in READERS:
        return 0
    agent, path, cwd = found
    reader, folders = READERS[agent]
    lay = layout.of(root)
    globs = core._private_globs(config.read_cached(lay))
    lines = read_transcript(path, globs, folders(os.environ))
    if lines is None:
        return 0
    session_id = key
    tools, final = reader(objects(lines), session_id, cwd or str(root))
    known = set(seen) | {k for k in map(spool.record_key, pending) if k}
    numbered: dict[str, int] = {}
    added = 0
    for event in tools:
        if not event.tool_use_id:  # numbered by content, as the hooks number the calls (``core.on_after_tool``)
            digest = capture.content_digest(capture.tool_record(event, root))
            event.tool_use_id = capture.content_id(digest, numbered.get(digest, 0))
            numbered[digest] = numbered.get(digest, 0) + 1
        if "tool:" + capture.clean(event.tool_use_id, 100) in known:
            continue
        size = _spool_size(root, key)
        core.on_after_tool(event, root, lay, key)  # private files are left out there
        known.add("tool:" + capture.clean(event.tool_use_id, 100))
        added += _spool_size(root, key) > size
    if final.strip() and not _has_final_message(pending):
        stop = Stop(last_message=final, agent=agent, name="Stop", session_id=session_id, cwd=str(root), raw={})
        if spool.record_key({"event": "Stop", "last_message": capture.clean(final, capture.MAX_MESSAGE_CHARS)}) \
                not in known:
            core.on_stop(stop, root, lay, key)
            added += 1
    return added


def _spool_size(root: Path, key: str) -> int:
    try:
        return spool.live_path(root, key).stat().st_size
    except OSError:
        return 0
