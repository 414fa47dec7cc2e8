"""The ``apply_patch`` patch format, shared by the adapters of agents whose model edits through it.

Owns: the parse of a patch (``*** Begin Patch`` … ``*** Update File:`` / ``*** Add File:`` /
``*** Delete File:`` / ``*** Move to:`` … ``*** End Patch``: the format of Codex's
``apply_patch`` tool, which VS Code's agent mode's ``apply_patch`` tool takes too) into the files
it touches, each with its first hunk's old and new text; where a tool call keeps its patch; the
normalised events of a patch (``patch_before``: one ``BeforeFile`` per file; ``patch_after``: one
``AfterTool`` per file). Used by the Codex and OpenCode adapters and the VS Code input of the
Claude Code adapter (``vscode``).

Guarantees: text that is not a patch gives no files; never raises on any string.

Must not import: anything outside the standard library (it runs on every patch tool call).
"""

from __future__ import annotations

from .events import AfterTool, BeforeFile

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from typing import Any

    from .events import Event


class PatchFile:
    """One file of an ``apply_patch`` patch: ``path``, ``action`` (``update``, ``add``, ``delete``),
    ``move_to`` (or ""), and its first hunk's ``old`` and ``new`` text (an added file's whole text)."""

    __slots__ = ("path", "action", "move_to", "old", "new", "_done")

    def __init__(self, path: str, action: str) -> None:
        self.path = path
        self.action = action
        self.move_to = ""
        self.old: list[str] = []
        self.new: list[str] = []
        self._done = False


def parse_patch(text: str) -> list[PatchFile]:
    """The files of an ``apply_patch`` patch (``*** Update File:``, ``*** Add File:``, ``*** Delete File:``,
    ``*** Move to:``), in patch order; [] for text that is not one."""
    files: list[PatchFile] = []
    cur: PatchFile | None = None
    heads = (("*** Update File: ", "update"), ("*** Add File: ", "add"), ("*** Delete File: ", "delete"))
    for line in text.splitlines():
        head = next(((line[len(h):].strip(), a) for h, a in heads if line.startswith(h)), None)
        if head is not None:
            cur = PatchFile(*head) if head[0] else None
            if cur is not None:
                files.append(cur)
            continue
        if cur is None:
            continue
        if line.startswith("*** Move to: "):
            cur.move_to = line[len("*** Move to: "):].strip()
        elif line.startswith("***"):  # *** End of File, *** End Patch
            continue
        elif line.startswith("@@"):
            if cur.old or cur.new:
                cur._done = True  # only the first hunk
        elif cur._done:
            continue
        elif cur.action == "add":
            if line.startswith("+"):
                cur.new.append(line[1:])
        elif line[:1] in (" ", "-", "+") or line == "":
            body = line[1:]
            if line[:1] != "+":
                cur.old.append(body)
            if line[:1] != "-":
                cur.new.append(body)
    return files


def joined(lines: list[str]) -> str:
    """``lines`` as text, each ended by a newline."""
    return "".join(ln + "\n" for ln in lines)


def patch_text(ti: dict[str, Any]) -> str:
    """The patch of an ``apply_patch`` call (``tool_input.command``; ``input`` / ``patch`` accepted too)."""
    for k in ("command", "input", "patch"):
        v = ti.get(k)
        if isinstance(v, str) and v.strip():
            return v
        if isinstance(v, list) and v and isinstance(v[-1], str) and "*** Begin Patch" in v[-1]:
            return v[-1]
    return ""


def patch_before(patch: str, common: dict[str, Any]) -> list[Event]:
    """One ``BeforeFile`` per file of ``patch`` (an added file: ``write``; else ``edit`` with its first hunk's
    old text); ``common``: the events' shared fields. Codex and OpenCode (``apply_patch``)."""
    out: list[Event] = []
    for pf in parse_patch(patch):
        kind = "write" if pf.action == "add" else "edit"
        old = joined(pf.old) if pf.action == "update" and pf.old else None
        out.append(BeforeFile(kind=kind, path=pf.path, old_text=old, **{**common, "paths": (pf.path,)}))
    return out


def patch_after(tool: str, patch: str, tool_use_id: str, response: Any, common: dict[str, Any]) -> list[Event]:
    """One ``AfterTool`` per file of ``patch`` with Claude-style input keys (``file_path``, ``old_string``,
    ``new_string`` or ``content``; ``moved_from``, ``deleted``), ids ``<tool_use_id>:<n>``. Codex and OpenCode."""
    events: list[Event] = []
    for i, pf in enumerate(parse_patch(patch)):
        path = pf.move_to or pf.path
        if pf.action == "add":
            inp: dict[str, Any] = {"file_path": path, "content": joined(pf.new)}
        else:
            inp = {"file_path": path, "old_string": joined(pf.old), "new_string": joined(pf.new)}
            if pf.move_to:
                inp["moved_from"] = pf.path
            if pf.action == "delete":
                inp["deleted"] = True
        events.append(AfterTool(tool=tool, kind="write" if pf.action == "add" else "edit", input=inp,
                                tool_use_id=f"{tool_use_id}:{i}" if tool_use_id else "", response=response,
                                path_keys=("file_path", "moved_from"),
                                content_key="content" if pf.action == "add" else "",
                                **{**common, "paths": (path,)}))
    return events
