"""The ``apply_patch`` patch format, shared by the adapters of agents whose model edits through it.

Owns: the parse of a patch (``*** Begin Patch`` … ``*** Update File:`` / ``*** Add File:`` /
``*** Delete File:`` / ``*** Move to:`` … ``*** End Patch``: the format of Codex's
``apply_patch`` tool, which VS Code's agent mode's ``apply_patch`` tool takes too) into the files
it touches, each with its first hunk's old and new text; where a tool call keeps its patch.
Used by the Codex adapter and the VS Code input of the Claude Code adapter (``vscode``).

Guarantees: text that is not a patch gives no files; never raises on any string.

Must not import: anything outside the standard library (it runs on every patch tool call).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from typing import Any


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
