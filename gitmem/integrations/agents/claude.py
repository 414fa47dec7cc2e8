"""The Claude Code adapter: its hook JSON in, normalised events to ``core``, its hook JSON out.

Entry point ``gitmem-hook [EVENT]`` (``main``): one hook event (JSON) on stdin, as Claude Code
(and VS Code's agent mode, below) runs a command hook (``../shared/reference/claude-code-hooks.md``).
Install and uninstall: ``claude_install``.

In: ``hook_event_name`` (else the ``EVENT`` argument) → ``events``:

====================  =================================================================
SessionStart          ``SessionStart`` (``source``)
UserPromptSubmit      ``Prompt`` (``prompt``)
PreToolUse            Read → ``BeforeFile`` read; Edit, MultiEdit, NotebookEdit → edit
                      (``old_string``: Edit, MultiEdit); Write → write; Bash →
                      ``BeforeShell``; any other tool: nothing
PostToolUse(Failure)  ``AfterTool`` / ``AfterToolFailure`` (``error``: for Bash, ``Exit code
                      N`` and the output), the response cut to what capture keeps per tool
                      (``response_summary``)
Stop                  ``Stop`` (``last_assistant_message``)
SessionEnd            ``SessionEnd`` (``reason``)
====================  =================================================================

VS Code's agent mode runs these hooks too, with its own input (``vscode.is_vscode``: its tool
names, camelCase tool input, an ISO ``timestamp``): ``vscode`` maps it, and answers in the same
form. Under GitHub Copilot CLI (which runs these hooks too, ``COPILOT_CLI`` set, Claude Code's
input) in a project with gitmem's Copilot hooks installed, every event is ignored: the Copilot
hooks act instead (never under VS Code's input, whatever the environment); likewise under Cursor
(``CURSOR_VERSION`` set) with gitmem's Cursor hooks installed (``cursor``).

Out: the process always exits 0; stdout is empty or one JSON object ``{"hookSpecificOutput":
{"hookEventName": <event>, "additionalContext": <text under 10,000 characters>}}``, and only
for SessionStart, UserPromptSubmit, PreToolUse and PostToolUseFailure (the memories matching
the failure, next to the tool's error). Bad input (not JSON, not an object, an
unknown event, a ``cwd`` outside any repository, a repository without ``.gitmem/``) prints
nothing. Errors go to ``<logs>/claude-hooks.log`` (redacted).

Must not import: anything outside the standard library and gitmem's stdlib-only modules
(through ``core``): it runs on every prompt and tool call.
"""

from __future__ import annotations

import os
import sys

from ... import usage
from . import core, vscode
from .cursor import cursor_hooks_installed
from .events import AfterTool, AfterToolFailure, BeforeFile, BeforeShell, Event, Prompt, SessionEnd, SessionStart, Stop

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from typing import Any

AGENT = "claude"
#: Claude Code saves a longer additionalContext to a file instead of passing it on.
MAX_CONTEXT_CHARS = 10_000
#: What gitmem allows itself, under that cap (room for the header and a final line).
CONTEXT_CHAR_LIMIT = 9_500
CUT_NOTE = "\n… (cut to stay under Claude Code's 10,000-character limit)\n"
#: Events whose answer Claude Code reads (all others print nothing, whatever happens).
PRINTING = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUseFailure")
#: Tool → ``BeforeFile.kind`` / ``AfterTool.kind``.
FILE_TOOLS = {"Read": "read", "Edit": "edit", "MultiEdit": "edit", "NotebookEdit": "edit", "Write": "write"}
TOOL_KINDS = {**FILE_TOOLS, "Bash": "shell", "Grep": "search", "Glob": "search"}
#: Keys of ``tool_input`` that hold a file path.
PATH_KEYS = ("file_path", "notebook_path", "path")
#: gitmem's GitHub Copilot CLI hooks file, relative to the project (``copilot_install``).
COPILOT_HOOKS_FILE = os.path.join(".github", "hooks", "gitmem.json")
#: gitmem's user-level Copilot CLI hooks file, relative to ``$COPILOT_HOME`` (``~/.copilot``): Copilot CLI
#: 1.0.102 runs every ``$COPILOT_HOME/hooks/*.json`` (``copilot_install --user``).
COPILOT_USER_HOOKS_FILE = os.path.join("hooks", "gitmem.json")
#: Set (to ``user``) in the environment of gitmem's user-level Copilot handlers (the hooks file's ``env``).
COPILOT_SCOPE_VAR = "GITMEM_COPILOT_SCOPE"

USAGE = """usage: gitmem-hook [EVENT] < event.json

Claude Code hook handler of gitmem: reads one hook event (JSON) on stdin and prints the
hookSpecificOutput JSON for SessionStart, UserPromptSubmit, PreToolUse (a file read or edited, a Bash
command) and PostToolUseFailure (its "error"), nothing otherwise.
Always exits 0. Registered by `gitmem install claude`; see docs/agents/claude.md.
"""


# -- in ------------------------------------------------------------------------------------------


def copilot_hooks_installed(cwd: str, env: dict[str, str] | None = None) -> bool:
    """Whether this process is a hook GitHub Copilot CLI runs (it sets ``COPILOT_CLI``; it also runs
    ``.claude/settings.json``'s hooks) with gitmem's Copilot hooks installed, in the project
    (``COPILOT_PROJECT_DIR``, else ``cwd``) or for the user (``$COPILOT_HOME``, else ``~/.copilot``): then
    those act, and the Claude Code hooks step aside, so gitmem acts once per event."""
    e = os.environ if env is None else env
    if not e.get("COPILOT_CLI"):
        return False
    return copilot_project_hooks(cwd, e) or os.path.isfile(
        os.path.join(e.get("COPILOT_HOME") or os.path.expanduser("~/.copilot"), COPILOT_USER_HOOKS_FILE))


def copilot_project_hooks(cwd: str, env: dict[str, str] | os._Environ[str]) -> bool:
    """Whether the project Copilot CLI runs in (``COPILOT_PROJECT_DIR``, else ``cwd``) has gitmem's hooks file."""
    base = env.get("COPILOT_PROJECT_DIR") or cwd or os.getcwd()
    return os.path.isfile(os.path.join(base, COPILOT_HOOKS_FILE))


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def touched_paths(raw: dict[str, Any]) -> tuple[str, ...]:
    """The file paths a tool event names (``file_path``, ``notebook_path``, ``path``), as given."""
    ti = raw.get("tool_input")
    if not isinstance(ti, dict):
        return ()
    return tuple(v for k in PATH_KEYS if isinstance(v := ti.get(k), str) and v)


def response_summary(tool: str, tr: Any) -> Any:
    """What capture keeps of Claude Code's ``tool_response`` for ``tool`` (unredacted; JSON-like)."""
    if tool == "Read":
        f = tr.get("file") if isinstance(tr, dict) else None
        f = f if isinstance(f, dict) else {}
        return {k: f.get(k) for k in ("numLines", "startLine", "totalLines") if k in f}
    if tool in ("Edit", "MultiEdit"):
        return {"replaceAll": tr.get("replaceAll")} if isinstance(tr, dict) else None
    if tool == "Write":
        return {"type": tr.get("type")} if isinstance(tr, dict) else None
    if tool == "Bash":
        if not isinstance(tr, dict):
            return None
        return {k: tr.get(k) for k in ("stdout", "stderr", "interrupted", "returnCodeInterpretation")
                if tr.get(k) not in (None, "")}
    if tool in ("Grep", "Glob"):
        return {"numFiles": tr.get("numFiles"), "filenames": (tr.get("filenames") or [])[:20]} \
            if isinstance(tr, dict) else None
    return tr


def to_event(raw: Any, argv_event: str | None = None) -> Event | list[Event] | None:
    """The normalised event of Claude Code hook input ``raw`` (decoded JSON), or VS Code's (``vscode.to_event``:
    a list when one tool call touches several files); None when gitmem has nothing to do with it (not an
    object, an event or tool gitmem does not handle)."""
    if not isinstance(raw, dict):
        return None
    if vscode.is_vscode(raw):
        return vscode.to_event(raw, argv_event)
    if copilot_hooks_installed(_str(raw.get("cwd"))):
        return None  # Copilot CLI runs gitmem's own Copilot hooks too (``copilot``)
    if cursor_hooks_installed(_str(raw.get("cwd"))):
        return None  # Cursor runs gitmem's own Cursor hooks too (``cursor``)
    name = raw.get("hook_event_name")
    name = name if isinstance(name, str) else argv_event
    common: dict[str, Any] = {"agent": AGENT, "name": name or "", "session_id": _str(raw.get("session_id")),
                              "cwd": _str(raw.get("cwd")), "raw": raw, "paths": touched_paths(raw),
                              "project_dir": os.environ.get("CLAUDE_PROJECT_DIR") or "",
                              "transcript": _str(raw.get("transcript_path"))}
    if name == "SessionStart":
        return SessionStart(source=str(raw.get("source") or ""), **common)
    if name == "UserPromptSubmit":
        return Prompt(prompt=_str(raw.get("prompt")), **common)
    if name in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        tool = str(raw.get("tool_name") or "")
        ti = raw.get("tool_input")
        ti = ti if isinstance(ti, dict) else {}
        if name == "PreToolUse":
            if tool in FILE_TOOLS:
                old = ti.get("old_string") if tool in ("Edit", "MultiEdit") else None
                return BeforeFile(kind=FILE_TOOLS[tool], path=common["paths"][0] if common["paths"] else "",
                                  old_text=old if isinstance(old, str) else None, **common)
            if tool == "Bash":
                return BeforeShell(command=_str(ti.get("command")), **common)
            return None
        fields: dict[str, Any] = {
            "tool": tool, "kind": TOOL_KINDS.get(tool, "other"), "input": ti,
            "tool_use_id": str(raw["tool_use_id"]) if raw.get("tool_use_id") else "",
            "response": response_summary(tool, raw.get("tool_response")), "path_keys": PATH_KEYS,
            "content_key": "content" if tool == "Write" else ""}
        if name == "PostToolUseFailure":
            return AfterToolFailure(error=str(raw.get("error") or ""), **fields, **common)
        return AfterTool(**fields, **common)
    if name == "Stop":
        return Stop(last_message=_str(raw.get("last_assistant_message")), **common)
    if name == "SessionEnd":
        return SessionEnd(reason=str(raw.get("reason") or ""), **common)
    return None


# -- out -----------------------------------------------------------------------------------------


def context_output(event_name: str, text: str | None) -> dict[str, Any] | None:
    """The JSON Claude Code reads, or None for no text; ``text`` is cut under the 10,000-character cap."""
    text = core.bounded(text, CONTEXT_CHAR_LIMIT, CUT_NOTE)
    if text is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}


def output(event: Event, text: str | None) -> dict[str, Any] | None:
    """What to print for ``event`` given the core's ``text``: None for the events that print nothing (VS Code's
    events: ``vscode.output``)."""
    if event.agent == vscode.AGENT:
        return vscode.output(event, text)
    if event.name not in PRINTING:
        return None
    return context_output(event.name, text)


def handle(raw: Any, argv_event: str | None = None) -> dict[str, Any] | None:
    """Run the core on Claude Code hook input ``raw``; returns the JSON to print, or None.

    No time limit and no error handling (``main`` adds both).

    Raises:
        whatever the core's handler raises.
    """
    got = to_event(raw, argv_event)
    batch = got if isinstance(got, list) else [got] if got is not None else []
    if not batch:
        return None
    texts = [t.strip() for t in (core.handle(e) for e in batch) if t and t.strip()]
    usage.flush()  # what the handlers gave, as ``core.run`` does
    return output(batch[0], "\n\n".join(texts) if texts else None)


def main(argv: list[str] | None = None) -> int:
    """``gitmem-hook [EVENT]``: handle the hook input on stdin; print its JSON or nothing. Returns 0, always."""
    return core.main(argv, usage=USAGE, to_event=to_event, output=output)


if __name__ == "__main__":
    sys.exit(main())
