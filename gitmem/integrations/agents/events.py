"""The normalised agent events: the same fields whatever the agent, built by an adapter, handled by ``core``.

Owns: one class per kind of event an agent hook reports (session start with its source,
prompt, before a file is read or written, before a shell command, after a tool, after a
tool failure, stop, session end, before and after compaction). Every event carries the
session id, the working folder, the agent's name, the agent's own name for the event and
the raw event (for capture and logs).

Guarantees: plain records, no behaviour; string fields are ``str`` (an adapter turns what
its agent sent into "" or None, never another type).

Must not import: anything but the standard library (built on every tool call: classes with
``__slots__``, not ``dataclasses``, which costs ~6 ms to import).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from typing import Any

#: ``SessionStart.source`` values.
SOURCES = ("startup", "resume", "clear", "compact")
#: ``BeforeFile.kind`` values.
FILE_KINDS = ("read", "edit", "write")
#: ``AfterTool.kind`` values: what the tool did, as far as capture cares.
TOOL_KINDS = ("read", "edit", "write", "shell", "search", "other")


class Event:
    """What every event carries.

    Attributes:
        agent: the adapter's name (``claude``); also names its log (``<agent>-hooks.log``).
        name: the agent's own name for the event (``PreToolUse``), for logs.
        session_id: the agent's session id ("" when it sent none).
        cwd: the session's working folder, absolute, or "" (then the process's).
        paths: files the event names (absolute or relative to ``cwd``), to find the repository
            when ``cwd`` is outside it.
        project_dir: a folder the agent says the project is in (``$CLAUDE_PROJECT_DIR``), or "".
        transcript: the agent's own record of the session (``transcript_path``; Copilot CLI's
            ``transcriptPath``), or ""; the consolidation reconciles the spool with it (``reconcile``).
        raw: the event as the agent sent it (decoded JSON).
    """

    __slots__ = ("agent", "name", "session_id", "cwd", "paths", "project_dir", "transcript", "raw")

    def __init__(self, *, agent: str, name: str, session_id: str, cwd: str, raw: dict[str, Any],
                 paths: tuple[str, ...] = (), project_dir: str = "", transcript: str = "") -> None:
        self.transcript = transcript
        self.agent = agent
        self.name = name
        self.session_id = session_id
        self.cwd = cwd
        self.paths = paths
        self.project_dir = project_dir
        self.raw = raw

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for cls in type(self).__mro__
                           for k in getattr(cls, "__slots__", ()) if k != "raw")
        return f"{type(self).__name__}({fields})"


class SessionStart(Event):
    """A session starts, resumes, is cleared or was compacted (``source``: one of ``SOURCES``, or "")."""

    __slots__ = ("source",)

    def __init__(self, *, source: str, **common: Any) -> None:
        super().__init__(**common)
        self.source = source


class Prompt(Event):
    """The user submitted ``prompt`` (not yet seen by the model)."""

    __slots__ = ("prompt",)

    def __init__(self, *, prompt: str, **common: Any) -> None:
        super().__init__(**common)
        self.prompt = prompt


class BeforeFile(Event):
    """A tool is about to read or change ``path``.

    Attributes:
        kind: ``read``, ``edit`` (part of an existing file) or ``write`` (the whole file).
        path: the file, absolute or relative to ``cwd``.
        old_text: for an edit, the text it replaces (locates the edited symbol), else None.
    """

    __slots__ = ("kind", "path", "old_text")

    def __init__(self, *, kind: str, path: str, old_text: str | None = None, **common: Any) -> None:
        super().__init__(**common)
        self.kind = kind
        self.path = path
        self.old_text = old_text


class BeforeShell(Event):
    """A shell ``command`` is about to run."""

    __slots__ = ("command",)

    def __init__(self, *, command: str, **common: Any) -> None:
        super().__init__(**common)
        self.command = command


class AfterTool(Event):
    """A tool ran; what capture keeps of it.

    Attributes:
        tool: the agent's name of the tool (``Edit``, ``Bash``, an MCP tool's name).
        kind: one of ``TOOL_KINDS``.
        tool_use_id: the agent's id of the call, or "".
        input: the tool's input (JSON-like), as sent.
        response: the part of the tool's result worth keeping (JSON-like, chosen by the
            adapter; for ``shell``: ``stdout`` / ``stderr`` strings among others), unredacted.
        path_keys: keys of ``input`` holding file paths (made repo-relative when captured).
        content_key: key of ``input`` holding a whole file's new text (``write``; kept short), or "".
    """

    __slots__ = ("tool", "kind", "tool_use_id", "input", "response", "path_keys", "content_key")

    def __init__(self, *, tool: str, kind: str, tool_use_id: str, input: dict[str, Any], response: Any,
                 path_keys: tuple[str, ...] = (), content_key: str = "", **common: Any) -> None:
        super().__init__(**common)
        self.tool = tool
        self.kind = kind
        self.tool_use_id = tool_use_id
        self.input = input
        self.response = response
        self.path_keys = path_keys
        self.content_key = content_key


class AfterToolFailure(AfterTool):
    """A tool failed with ``error`` (the agent's message)."""

    __slots__ = ("error",)

    def __init__(self, *, error: str, **fields: Any) -> None:
        super().__init__(**fields)
        self.error = error


class Stop(Event):
    """The agent finished its turn; ``last_message`` is its final message ("" if none).

    ``consolidate``: hand the session's spool to consolidation now (for an agent whose session end
    may not arrive or is given too little time: Codex cuts SessionEnd hooks to 3 s).
    """

    __slots__ = ("last_message", "consolidate")

    def __init__(self, *, last_message: str, consolidate: bool = False, **common: Any) -> None:
        super().__init__(**common)
        self.last_message = last_message
        self.consolidate = consolidate


class SessionEnd(Event):
    """The session ended (``reason`` as the agent gives it: ``clear``, ``logout``, ``prompt_input_exit`` …)."""

    __slots__ = ("reason",)

    def __init__(self, *, reason: str, **common: Any) -> None:
        super().__init__(**common)
        self.reason = reason


class BeforeCompact(Event):
    """The conversation is about to be compacted (``trigger``: ``manual`` or ``auto``)."""

    __slots__ = ("trigger",)

    def __init__(self, *, trigger: str, **common: Any) -> None:
        super().__init__(**common)
        self.trigger = trigger


class AfterCompact(Event):
    """The conversation was compacted: what the agent was given before is gone from it."""

    __slots__ = ()
