"""What every agent's installer shares: the result, the JSON settings files, the handler shim, the MCP entry.

Each ``<agent>_install.py`` module writes its agent's files with these (one owner per job):

* ``InstallResult``: what an install or uninstall did, the same for every agent (``shapes.install_json``);
* ``parse_json`` / ``read_json`` / ``dump_json``: a settings file read as a JSON object, only what can be
  written back unchanged (``SettingsError`` for anything else: not JSON, not an object, ``NaN``, ``1e400``,
  a key twice), and written in its own style (indentation or one line, spaces, final newline);
* ``Change`` / ``Plan`` / ``apply``: an installer first reads and checks every file it touches and computes
  their new text (``plan_install`` / ``plan_uninstall``: a refused file means nothing is written), then
  ``apply`` writes them atomically through symlinks and keeps the install record (``record_file``: the
  clone's ``installed-files.json``): which files gitmem created and the text the others had. An uninstall
  gives a file that text back when nothing else changed in it (``same_content``), deletes a file only
  when gitmem created it (or it is gitmem's own by content) and nothing else is left, never a symlink;
* ``shim_command`` / ``marker`` / ``is_marked``: the one-line shell command of a hook handler, which runs
  the hook script of the folder the clone's ``bin-dir`` file names (``write_pointer``, on each machine by
  ``gitmem install``), else the one on PATH, else nothing (exit 0) — at session start, when the repository has
  memories, a one-line notice in the agent's format (``ABSENT_NOTICE``) — and starts with a no-op marker
  (``: gitmem-hook;``) by which gitmem knows its own handlers. It holds no machine path: every teammate's
  install writes the same bytes (``machine_paths`` finds an earlier gitmem's absolute paths);
* ``with_ours`` / ``without_ours`` / ``check_hooks_shape``: gitmem's handlers merged into, or removed from,
  the Claude-style hooks layout (``{event: [{"matcher"?, "hooks": [handler]}]}``) that Claude Code, Codex
  and Gemini CLI share;
* ``mcp_entry`` / ``is_our_server`` / ``with_mcp_server`` / ``without_mcp_server`` / ``mcp_file_change``:
  the ``gitmem mcp`` server
  in a JSON ``mcpServers`` object (Claude Code's ``.mcp.json`` and ``~/.claude.json``, Gemini CLI's
  settings, Copilot CLI's ``.github/mcp.json`` and ``mcp-config.json``): merged, a foreign server of the
  same name left alone with a note, removed only when it is gitmem's;
* ``install_notes``: the notes every install gives.

Standard library only (and gitmem's stdlib-only ``infra``, ``layout``, ``errors``).
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from ... import infra, layout
from ...errors import GitmemError

MCP_NAME = "gitmem"
#: First word of the shell command of gitmem's MCP server entry (``mcp_entry``): how it is recognised.
MCP_MARKER = ": gitmem-mcp;"
FIX_HINT = "fix the file, then run again"


class SettingsError(GitmemError):
    """An agent's settings file cannot be read as a JSON object, or part of it has an unexpected shape."""


@dataclass
class InstallResult:
    """What an install or uninstall did for one agent.

    ``files``: role → path of each file the agent's installer owns or merges into (``"hooks"``,
    ``"settings"``, ``"mcp"``, ``"config"``…); ``changed``: the files written or removed; ``notes``: lines
    for the user; ``command``: the hook script the handlers run (absolute path, or the name on PATH);
    ``mcp``: whether the ``gitmem`` MCP server is registered for the agent afterwards; ``created``: the
    files of ``changed`` that an install created (they did not exist before).
    """

    agent: str
    files: dict[str, str] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    command: str = ""
    mcp: bool = False

    def path(self, role: str) -> Path:
        """``files[role]`` as a path."""
        return Path(self.files[role])


# -- JSON files -----------------------------------------------------------------------------------

_NON_FINITE = ("NaN", "Infinity", "-Infinity")


def _no_duplicates(path: Path) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise SettingsError(f"{path} has the key {key!r} twice in one object: rewriting it would drop one",
                                    FIX_HINT)
            out[key] = value
        return out
    return hook


def _float_of(path: Path) -> Callable[[str], float]:
    def parse(token: str) -> float:
        value = float(token)
        # a number JSON cannot write back as it was read: out of the double range (1e400 → inf) or with
        # more digits than a double holds (its shortest repr is another number)
        if math.isinf(value) or Decimal(repr(value)) != Decimal(token):
            raise SettingsError(f"{path} has the number {token}, which gitmem cannot write back unchanged",
                                FIX_HINT)
        return value
    return parse


def _no_constant(path: Path) -> Callable[[str], Any]:
    def refuse(token: str) -> Any:
        raise SettingsError(f"{path} has {token}, which is not JSON", FIX_HINT)
    return refuse


def parse_json(text: str, path: Path) -> dict[str, Any]:
    """``text`` (the content of ``path``) as a JSON object, {} when blank; only what gitmem can write back
    unchanged.

    Raises:
        SettingsError: not valid JSON, not an object, ``NaN`` / ``Infinity``, a number a double cannot hold
            as written (``1e400``, 20 significant digits), a key twice in one object.
    """
    if not text.strip():
        return {}
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates(path), parse_float=_float_of(path),
                          parse_constant=_no_constant(path))
    except ValueError as e:
        raise SettingsError(f"{path} is not valid JSON ({e})", FIX_HINT) from None
    except RecursionError:  # the parser recurses per nesting level; a committed file can nest deeper
        raise SettingsError(f"{path} is not valid JSON (nested too deeply to read)", FIX_HINT) from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path} is not a JSON object", FIX_HINT)
    return data


def read_text(path: Path) -> str | None:
    """The text of ``path`` (through a symlink), line ends as they are, None when it does not exist.

    Raises:
        SettingsError: unreadable, or not UTF-8.
    """
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise SettingsError(f"cannot read {path}: {e}", "fix or move the file, then run again") from None


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object file ({} when missing or blank); see ``parse_json``.

    Raises:
        SettingsError: unreadable, or refused by ``parse_json``.
    """
    return read_json_file(path)[1]


def read_json_file(path: Path) -> tuple[str | None, dict[str, Any]]:
    """(``path``'s text or None when missing, its JSON object); see ``parse_json``.

    Raises:
        SettingsError: unreadable, or refused by ``parse_json``.
    """
    text = read_text(path)
    return text, parse_json(text or "", path)


def _indent_of(text: str) -> int | str:
    """The indentation of a pretty-printed JSON text (its first indented line), 2 when there is none."""
    m = re.search(r"\n([ \t]+)\S", text)
    if not m:
        return 2
    ws = m.group(1)
    return len(ws) if set(ws) == {" "} else ws


def dump_json(data: dict[str, Any], like: str | None, path: Path) -> str:
    """``data`` as JSON text in the style of ``like`` (the file's text; None or blank: a new file).

    Kept from ``like``: pretty-printed (its indentation) or on one line, with or without a space after
    ``:`` and ``,``, ``\\uXXXX`` escapes for non-ASCII, the final newline, CRLF line ends. A new file: indentation 2,
    non-ASCII as is, a final newline.

    Raises:
        SettingsError: ``data`` holds a value JSON cannot write (NaN, infinity).
    """
    like = like if like and like.strip() else None
    if like is None:
        indent: int | str | None = 2
        seps: tuple[str, str] = (",", ": ")
        ascii_only, newline = False, True
    else:
        body = like.strip()
        colon = re.search(r'"\s*:(\s?)', body)
        space = ":" if colon is not None and colon.group(1) == "" else ": "
        if "\n" in body:
            indent, seps = _indent_of(body), (",", space)
        else:
            comma = re.search(r',(\s?)\s*["{\[\d\-tfn]', body)
            tight = comma.group(1) == "" if comma is not None else space == ":"  # one member: as its colon
            indent, seps = None, ("," if tight else ", ", space)
        ascii_only = like.isascii() and "\\u" in like
        newline = like.endswith("\n")
    try:
        text = json.dumps(data, indent=indent, separators=seps, ensure_ascii=ascii_only, allow_nan=False)
    except ValueError as e:
        raise SettingsError(f"{path}: {e}", FIX_HINT) from None
    text = text + "\n" if newline else text
    crlf = like is not None and "\r\n" in like
    return text.replace("\n", "\r\n") if crlf else text  # a JSON string holds no raw newline


def write_text(path: Path, text: str, *, private: bool = False) -> None:
    """Write ``text`` atomically to ``path``, or to the file it links to, keeping that file's mode.

    A new file gets 0600 when ``private`` (``~/.claude.json`` holds credentials), else 0666 minus the umask.

    Raises:
        OSError: the folder is not writable, the disk is full.
    """
    target = Path(os.path.realpath(path))
    try:
        mode: int | None = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o600 if private else None
    infra.atomic_write(target, text.encode("utf-8"), mode=mode)


def remove_file(path: Path, prune: int = 1) -> None:
    """Delete ``path``, then up to ``prune`` of its parent folders while they are empty (gitmem made them).

    A symlink is never deleted: the caller writes through it instead (``apply``).
    """
    if path.is_symlink():
        raise ValueError(f"{path} is a symlink: not removed")
    path.unlink(missing_ok=True)
    d = path.parent
    for _ in range(prune):
        try:
            d.rmdir()
        except OSError:
            return
        d = d.parent


# -- what an install or uninstall writes, and the record of what gitmem created ---------------------


@dataclass
class Change:
    """One file an install or uninstall writes (or removes), computed before anything is written.

    ``before``: the file's text as read (None: no file); ``after``: its new text. For an install,
    ``had_ours``: the file already held gitmem's entries (an earlier install). For an uninstall, ``empty``:
    nothing but what gitmem's install puts there is left in ``after`` (the file goes when gitmem created
    it, per the install record; ``owned``: gitmem's own file, known by its content, goes whoever made it);
    ``same(original)``: whether the text the install found has the content of ``after`` (then those very
    bytes are written back). ``private``: a new file gets 0600, and its text is not kept in the record.
    ``prune``: empty parent folders removed after the file.
    """

    path: Path
    before: str | None
    after: str
    had_ours: bool = False
    empty: bool = False
    owned: bool = False
    same: Callable[[str], bool] | None = None
    private: bool = False
    prune: int = 0


@dataclass
class Plan:
    """What an install or uninstall of one agent will do: its ``result`` (``changed`` filled by ``apply``), its
    ``changes``, whether it is an ``uninstall``, and the ``record`` file (``record_file``)."""

    result: InstallResult
    changes: list[Change]
    uninstall: bool
    record: Path

    @property
    def paths(self) -> list[str]:
        """The files the plan writes or removes."""
        return [str(c.path) for c in self.changes]


def state_dir() -> Path:
    """gitmem's user-level state folder: ``$XDG_STATE_HOME/gitmem``, else ``~/.local/state/gitmem``."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "gitmem"


RECORD_NAME = "installed-files.json"


def record_file(root: Path | None) -> Path:
    """Where installs record the files they created or changed: the clone's state folder of project ``root``
    (``layout.of(root).clone_dir``), else (``--user``, or a folder outside git) ``state_dir()``."""
    if root is not None:
        try:
            return layout.of(root).clone_dir / RECORD_NAME
        except OSError:
            pass
    return state_dir() / RECORD_NAME


def _key(path: Path) -> str:
    return os.path.abspath(path)


def _load_record(path: Path) -> dict[str, dict[str, Any]]:
    """The record's entries: absolute file path → ``{"agent", "created": bool, "original": text or None}``
    ({} when missing or unreadable: then gitmem deletes no file it did not make in this run)."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    return {k: v for k, v in files.items() if isinstance(v, dict)} if isinstance(files, dict) else {}


def _save_record(path: Path, files: dict[str, dict[str, Any]]) -> None:
    infra.atomic_write(path, (json.dumps({"version": 1, "files": files}, indent=1, ensure_ascii=False)
                              + "\n").encode("utf-8"), mode=0o600)


def apply(plan: Plan) -> InstallResult:
    """Write ``plan``'s changes and update the install record; ``plan.result`` with ``changed`` filled.

    Install: a project install (its record in the clone's folder) first writes the clone's ``bin-dir`` file
    (``write_pointer``: where the committed hook commands find gitmem on this machine), even when no settings
    file changes (a teammate's install over the committed files); each file is written; the record keeps, per
    file, whether gitmem created it and the text it had before (not for ``private`` files), from the first
    install that touched it. Uninstall: a file whose
    cleaned content equals what the install found gets those bytes back; else a file left ``empty`` is
    removed when gitmem created it (or ``owned``), never through a symlink; else the cleaned text is written.

    Raises:
        OSError: a file or the record cannot be written (the record keeps what was written before).
    """
    res = plan.result
    if not plan.uninstall and plan.record.parent != state_dir():  # a project install: this machine's scripts
        _write_pointer(plan.record.parent / layout.BIN_POINTER)
    with infra.file_lock(plan.record.with_suffix(".lock")):
        files = _load_record(plan.record)
        try:
            for c in plan.changes:
                key = _key(c.path)
                if plan.uninstall:
                    _undo(c, files.pop(key, None))
                else:
                    if c.before is None:
                        res.created.append(str(c.path))
                    _do(c, files, key, res.agent)
                res.changed.append(str(c.path))
        finally:
            if files or plan.record.exists():
                _save_record(plan.record, files)
    return res


def _do(c: Change, files: dict[str, dict[str, Any]], key: str, agent: str) -> None:
    entry = files.get(key)
    if c.before is None:
        files[key] = {"agent": agent, "created": True, "original": None}
    elif entry is None or not c.had_ours:
        original = None if c.private or c.had_ours else c.before
        files[key] = {"agent": agent, "created": False, "original": original}
    c.path.parent.mkdir(parents=True, exist_ok=True)
    write_text(c.path, c.after, private=c.private)


def _undo_text(c: Change, entry: dict[str, Any] | None) -> str | None:
    """The text an uninstall leaves in ``c.path`` given its install record ``entry``: the original bytes when nothing
    else changed, None when the file goes, else the cleaned text."""
    original = entry.get("original") if entry else None
    if isinstance(original, str) and c.same is not None and c.same(original):
        return original
    if c.empty and (c.owned or (entry is not None and entry.get("created") is True)) and not c.path.is_symlink():
        return None
    return c.after


def _undo(c: Change, entry: dict[str, Any] | None) -> None:
    text = _undo_text(c, entry)
    if text is None:
        remove_file(c.path, c.prune)
    elif text != c.before:
        write_text(c.path, text, private=c.private)


@dataclass
class Outcome:
    """One file of a plan as ``apply`` would leave it: ``before`` (its text now, None: no file) and ``after`` (its
    text afterwards, exactly the bytes ``apply`` writes, UTF-8; None: removed)."""

    path: Path
    before: str | None
    after: str | None

    @property
    def action(self) -> str:
        """``create``, ``update``, ``remove`` or ``keep`` (the bytes stay as they are)."""
        if self.after == self.before:
            return "keep"
        return "create" if self.before is None else "remove" if self.after is None else "update"

    def diff(self, root: Path | None = None) -> str:
        """The change as a unified diff that ``git apply`` (or ``patch -p1``) applies to give exactly ``after``:
        paths relative to ``root`` with git's ``a/`` and ``b/`` prefixes (absolute outside it), ``/dev/null`` for
        a file created or removed, every line's end as it is (CRLF kept), "No newline at end of file" where the
        text has none; "" for ``keep``."""
        import difflib

        if self.action == "keep":
            return ""
        try:
            rel = self.path.relative_to(root).as_posix() if root is not None else None
        except ValueError:
            rel = None
        name = rel if rel is not None else self.path.as_posix().lstrip("/")
        old = "/dev/null" if self.before is None else f"a/{name}"
        new = "/dev/null" if self.after is None else f"b/{name}"
        out = [f"diff --git a/{name} b/{name}\n"]
        if self.before is None:
            out.append("new file mode 100644\n")
        elif self.after is None:
            out.append("deleted file mode 100644\n")
        lines = difflib.unified_diff((self.before or "").splitlines(keepends=True),
                                     (self.after or "").splitlines(keepends=True), old, new, n=3)
        for i, line in enumerate(lines):
            if i < 2:  # the --- and +++ header lines, each ending in "\n" already
                out.append(line if line.endswith("\n") else line + "\n")
            elif line.endswith("\n"):
                out.append(line)
            else:
                out.append(line + "\n\\ No newline at end of file\n")
        return "".join(out)


def outcome(plan: Plan) -> list[Outcome]:
    """What ``apply(plan)`` would leave in each file of ``plan``, read from the plan and the install record (an
    uninstall gives a file its original bytes back, or removes it, by the record); writes nothing. The dry runs show
    this: the same bytes ``apply`` writes."""
    files = _load_record(plan.record) if plan.uninstall else {}
    out = []
    for c in plan.changes:
        after = _undo_text(c, files.get(_key(c.path))) if plan.uninstall else c.after
        out.append(Outcome(c.path, c.before, after))
    return out


def json_change(path: Path, before: str | None, old: dict[str, Any], new: dict[str, Any], *,
                had_ours: bool = False, empty: bool = False, private: bool = False, prune: int = 0,
                scaffold: dict[str, Any] | None = None) -> Change | None:
    """The change of the JSON file ``path`` from ``old`` (read from text ``before``) to ``new`` in its style,
    None when the content stays the same (``Change`` for the flags; ``same`` compares parsed content,
    ``same_content``, an original without the members of ``scaffold`` as if it had them: what an install
    adds beside gitmem's entries, such as Cursor's ``"version": 1``).

    Raises:
        SettingsError: ``new`` holds a value JSON cannot write.
    """
    if new == old:
        return None
    return Change(path, before, dump_json(new, before, path), had_ours=had_ours, empty=empty, private=private,
                  prune=prune, same=lambda original: _parses_to(original, path, new, scaffold or {}))


def _parses_to(text: str, path: Path, data: dict[str, Any], scaffold: dict[str, Any]) -> bool:
    try:
        return same_content({**scaffold, **parse_json(text, path)}, data)
    except SettingsError:
        return False


def without_empties(value: Any) -> Any:
    """``value`` with every object member whose value is (or becomes) an empty object or array left out."""
    if isinstance(value, dict):
        out = {k: without_empties(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if not (isinstance(v, (dict, list)) and not v)}
    if isinstance(value, list):
        return [without_empties(v) for v in value]
    return value


def same_content(original: Any, cleaned: Any) -> bool:
    """Whether an uninstall's ``cleaned`` content is what the install found (``original``): equal but for
    empty objects and arrays, which the removal of gitmem's entries cannot tell from ones it made (the
    user's ``"hooks": {}`` that gitmem's handlers went into, then left empty)."""
    return bool(without_empties(original) == without_empties(cleaned))


# -- the handler shim -----------------------------------------------------------------------------

#: What a session is told at its start, in one line, when the repository has memories but gitmem is missing
#: on this machine or does not start (the committed hook command says it, without gitmem).
ABSENT_NOTICE = ("gitmem: this repository keeps memories for coding agents in .gitmem/memories, but gitmem is not "
                 "installed or does not start on this machine, so none were given to this session. Fix: install "
                 "it with `uv tool install \"gitmem-cli[all]\"` (or pipx; the PyPI package named gitmem is another "
                 "project), then run `gitmem hooks install && gitmem install` here and start a new session.")


def installed_script(name: str) -> Path | None:
    """This installation's console script ``name`` (next to the running Python), if it exists."""
    p = Path(sys.executable).parent / name
    return p if p.exists() else None


def user_script(name: str, user: bool) -> Path | None:
    """The console script a ``--user`` install's commands run by absolute path (``installed_script``); None for a
    project install, whose committed commands hold no machine path (they read the clone's ``bin-dir``)."""
    return installed_script(name) if user else None


def scripts_dir() -> Path:
    """The folder of this installation's console scripts (next to the running Python)."""
    return Path(sys.executable).parent


def write_pointer(root: Path, bin_dir: Path | None = None) -> Path | None:
    """Write the clone's ``bin-dir`` file (``layout.Layout.bin_pointer``): ``bin_dir`` (default: this
    installation's console-script folder, ``scripts_dir``), one line, read by the committed hook commands on this
    machine. Returns the file, None when ``root`` has no usable git folder.

    Raises:
        OSError: the file cannot be written.
    """
    try:
        path = layout.Layout(Path(os.path.realpath(root))).bin_pointer  # not ``of``: no migration from here
    except OSError:
        return None
    _write_pointer(path, bin_dir)
    return path


def _write_pointer(path: Path, bin_dir: Path | None = None) -> None:
    text = f"{bin_dir or scripts_dir()}\n"
    try:
        same = path.read_text("utf-8") == text
    except (OSError, UnicodeDecodeError):
        same = False
    if not same:
        path.parent.mkdir(parents=True, exist_ok=True)
        infra.atomic_write(path, text.encode("utf-8"))


def _locate(script: Path | None) -> str:
    """Shell words that set ``b`` to the folder of gitmem's console scripts on this machine.

    ``script`` given (a ``--user`` install, not committed): its folder. Else the clone's ``bin-dir`` file, read
    with the shell's own ``read`` (no process) from ``.git/gitmem/`` when the command runs at the top of a main
    work tree, else from the common dir git names (a linked worktree, a subfolder).
    """
    if script is not None:
        return f"b={shlex.quote(str(script.parent))};"
    rel = f"{layout.STATE_DIR}/{layout.BIN_POINTER}"
    # ``b=`` first: a ``b`` exported by the agent's environment must not choose the script when no file is read
    return (f"b=; {{ read -r b < .git/{rel} || read -r b < \"$(git rev-parse --git-common-dir)/{rel}\"; }} "
            "2>/dev/null;")


def marker(hook_command: str) -> str:
    """The first words of every handler command ``shim_command`` writes: how an installer knows its own."""
    return f": {hook_command};"


def shim_command(hook_command: str, event: str, script: Path | None = None, *, notice: str | None = None) -> str:
    """The one-line shell command of a gitmem agent-hook handler, for every agent's installer.

    It starts with the marker ``: <hook_command>;`` (how an installer knows its own handlers), then runs the
    ``hook_command`` console script of the folder the clone's ``bin-dir`` names (written on each machine by
    ``gitmem install``; ``script`` given: that file, for a ``--user`` install), else the one on PATH, and exits
    0 whatever happens. The command holds no machine-specific path (every teammate's install writes the same
    bytes to a committed settings file).

    ``notice``: for the session-start event, what to print (the agent's JSON around ``ABSENT_NOTICE``) when the
    script is missing or fails to start (exits non-zero: gitmem's hooks always exit 0) and the repository has
    memory files; other events print nothing then.
    """
    q = shlex.quote(hook_command)
    parts = [marker(hook_command), _locate(script)]
    if notice is None:
        parts.append(f'if [ -x "$b/{hook_command}" ]; then "$b/{hook_command}" {event}; '
                     f"elif command -v {q} >/dev/null 2>&1; then {q} {event}; fi; exit 0")
    else:
        parts.append(f'if [ -x "$b/{hook_command}" ]; then "$b/{hook_command}" {event} && exit 0; '
                     f"elif command -v {q} >/dev/null 2>&1; then {q} {event} && exit 0; fi; "
                     f't=$(git rev-parse --show-toplevel 2>/dev/null) && set -- "$t/{layout.TEAM_MEMORIES}"/*.md '
                     f"&& [ -e \"$1\" ] && printf '%s\\n' {shlex.quote(notice)}; exit 0")
    return " ".join(parts)


def is_marked(handler: Any, hook_command: str) -> bool:
    """Whether ``handler`` (a hook entry of an agent's settings) is a command ``shim_command`` wrote."""
    return (isinstance(handler, dict) and handler.get("type", "command") == "command"
            and isinstance(handler.get("command"), str) and handler["command"].startswith(marker(hook_command)))


def machine_paths(command: str) -> bool:
    """Whether a hook or MCP command of gitmem's names an absolute path of one machine (an earlier gitmem's
    committed command, or a ``--user`` install's): in a committed file it breaks every other teammate's."""
    return re.search(r"(?:^|[\s'=])/(?!dev/null\b)", command) is not None


def install_notes(hook_command: str, script: Path | None, root: Path | None) -> list[str]:
    """The notes every installer gives: the hook script is not next to this Python (the hooks will run the one on
    PATH); the repository has no ``.gitmem/``."""
    notes = []
    if installed_script(hook_command) is None:
        notes.append(f"{hook_command} is not installed next to {sys.executable}: the hooks will run the "
                     f"{hook_command} on PATH")
    if root is not None and not (root / layout.GITMEM_DIR).is_dir():
        notes.append("this repository has no .gitmem/ yet: the hooks do nothing until `gitmem init`")
    return notes


# -- the Claude-style hooks layout ----------------------------------------------------------------

#: One row of an agent's hook table: (event, matcher or None for every tool/source, extra handler fields).
HookRow = tuple[str, str | None, dict[str, Any]]


def check_hooks_shape(path: Path, data: dict[str, Any], *, skip: Iterable[str] = ()) -> None:
    """Refuse (rather than drop or mangle) a settings object whose ``hooks`` is not ``{event: [group]}``.

    ``skip``: keys of ``hooks`` that are not events (Gemini CLI's ``hooks.enabled`` switch).

    Raises:
        SettingsError: ``hooks`` is not an object, or an event's value is not a list.
    """
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise SettingsError(f"{path}: \"hooks\" is not an object", FIX_HINT)
    skipped = set(skip)
    for event, groups in (hooks or {}).items():
        if event not in skipped and not isinstance(groups, list):
            raise SettingsError(f"{path}: hooks.{event} is not a list", FIX_HINT)


def without_ours(hooks: dict[str, Any], is_ours: Callable[[Any], bool]) -> dict[str, Any]:
    """``hooks`` with gitmem's handlers (``is_ours``) removed, and the groups and events left empty by that.

    A group or event the user left empty stays; a value that is not a list (not an event) stays as it is.
    """
    out: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            out[event] = groups
            continue
        kept = []
        for g in groups:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                handlers = [h for h in g["hooks"] if not is_ours(h)]
                if handlers:
                    kept.append({**g, "hooks": handlers})
                elif not any(is_ours(h) for h in g["hooks"]):
                    kept.append(g)
            else:
                kept.append(g)
        if kept or not groups:  # an event left empty by removing gitmem's handlers goes; the user's [] stays
            out[event] = kept
    return out


def with_ours(hooks: dict[str, Any], events: Iterable[HookRow], handler_command: Callable[[str], str],
              is_ours: Callable[[Any], bool]) -> dict[str, Any]:
    """``hooks`` with gitmem's handlers (replacing any earlier ones, ``is_ours``) appended after the user's.

    ``events``: (event, matcher or None, extra handler fields such as the timeout); ``handler_command(event)``:
    the handler's shell command. One group per event: ``{"matcher"?, "hooks": [{"type": "command",
    "command", **extra}]}``.
    """
    out = without_ours(hooks, is_ours)
    for event, matcher, extra in events:
        group: dict[str, Any] = {}
        if matcher:
            group["matcher"] = matcher
        group["hooks"] = [{"type": "command", "command": handler_command(event), **extra}]
        if not isinstance(out.get(event), list):
            out[event] = []
        out[event].append(group)
    return out


def hook_events_on(hooks: Any, events: Iterable[str], is_ours: Callable[[Any], bool]) -> dict[str, bool]:
    """For each of ``events``: whether ``hooks`` (the Claude-style layout) has one of gitmem's handlers there."""
    hooks = hooks if isinstance(hooks, dict) else {}
    return {e: any(is_ours(h) for g in (hooks.get(e) or []) if isinstance(g, dict)
                   and isinstance(g.get("hooks"), list) for h in g["hooks"])
            for e in events}


# -- the MCP server -------------------------------------------------------------------------------


def mcp_entry(*, with_type: bool = True, script: Path | None = None) -> dict[str, Any]:
    """The ``mcpServers`` entry of ``gitmem mcp``: a ``sh -c`` command that runs the ``gitmem`` of the folder the
    clone's ``bin-dir`` names (``script`` given: that file, for a ``--user`` install), else ``gitmem`` on PATH;
    no machine path (same reasoning as ``shim_command``).

    ``with_type``: include ``"type": "stdio"`` (Claude Code and Copilot CLI read it; Gemini CLI has no such field).
    """
    line = (f'{MCP_MARKER} {_locate(script)} if [ -x "$b/gitmem" ]; then exec "$b/gitmem" mcp; fi; '
            "exec gitmem mcp")
    entry: dict[str, Any] = {"type": "stdio"} if with_type else {}
    return {**entry, "command": "sh", "args": ["-c", line]}


def is_our_server(entry: Any) -> bool:
    """Whether an ``mcpServers`` entry is gitmem's: ``mcp_entry``'s shell form, or ``gitmem mcp`` by path or name."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args")
    if Path(entry["command"]).name == "gitmem" and args == ["mcp"]:
        return True
    return (entry["command"] == "sh" and isinstance(args, list) and len(args) == 2 and args[0] == "-c"
            and isinstance(args[1], str) and args[1].startswith(MCP_MARKER))


#: The key of the server table in most agents' files; VS Code's ``.vscode/mcp.json`` has ``servers``.
SERVERS_KEY = "mcpServers"


def mcp_servers(path: Path, data: dict[str, Any], key: str = SERVERS_KEY) -> dict[str, Any]:
    """A copy of ``data[key]``, the server table (``mcpServers``; {} when absent).

    Raises:
        SettingsError: the table is not an object.
    """
    servers = data.get(key)
    if servers is not None and not isinstance(servers, dict):
        raise SettingsError(f"{path}: \"{key}\" is not an object", FIX_HINT)
    return dict(servers or {})


def vscode_mcp_file(root: Path) -> Path:
    """The project's ``.vscode/mcp.json`` (VS Code's MCP servers, key ``servers``)."""
    return root / ".vscode" / "mcp.json"


def vscode_registered(root: Path | None) -> bool:
    """Whether ``root``'s ``.vscode/mcp.json`` has gitmem's server (``gitmem install vscode``): VS Code then runs
    the hooks in ``.claude/settings.json`` too, so ``uninstall claude`` keeps them. False when unreadable."""
    if root is None:
        return False
    try:
        return server_registered(read_json(vscode_mcp_file(root)), "servers")
    except SettingsError:
        return False


def server_registered(data: dict[str, Any], key: str = SERVERS_KEY) -> bool:
    """Whether ``data[key]["gitmem"]`` (``mcpServers``) is gitmem's server."""
    servers = data.get(key)
    return isinstance(servers, dict) and is_our_server(servers.get(MCP_NAME))


def with_mcp_server(path: Path, data: dict[str, Any], res: InstallResult, *,
                    entry: dict[str, Any] | None = None, key: str = SERVERS_KEY) -> dict[str, Any]:
    """``data`` with ``gitmem`` registered in its server table ``key`` (``mcpServers``; ``entry``, default
    ``mcp_entry()``).

    A server named ``gitmem`` that is not gitmem's is left alone, with a note in ``res``; else ``res.mcp``
    is set.

    Raises:
        SettingsError: ``mcpServers`` is not an object.
    """
    servers = mcp_servers(path, data, key)
    if MCP_NAME in servers and not is_our_server(servers[MCP_NAME]):
        res.notes.append(f"{path} already has an MCP server named {MCP_NAME!r} that is not `gitmem mcp`: "
                         "left as it is")
        return dict(data)
    res.mcp = True
    return {**data, key: {**servers, MCP_NAME: entry if entry is not None else mcp_entry()}}


def without_mcp_server(path: Path, data: dict[str, Any], key: str = SERVERS_KEY) -> dict[str, Any]:
    """``data`` without gitmem's ``mcpServers.gitmem`` (server table ``key``; and without the table when that
    leaves it empty).

    Raises:
        SettingsError: the table is not an object.
    """
    servers = mcp_servers(path, data, key)
    if not is_our_server(servers.get(MCP_NAME)):
        return dict(data)
    del servers[MCP_NAME]
    new = dict(data)
    if servers:
        new[key] = servers
    else:
        new.pop(key, None)
    return new


def mcp_file_change(path: Path, res: InstallResult, *, uninstall: bool, entry: dict[str, Any] | None = None,
                    private: bool = False, prune: int = 0, key: str = SERVERS_KEY) -> Change | None:
    """The change of a JSON file that holds only ``mcpServers`` for gitmem (``.mcp.json``, ``.cursor/mcp.json``,
    ``.github/mcp.json``, ``~/.claude.json``; ``.vscode/mcp.json``'s ``servers`` with ``key``): gitmem's server
    added (``with_mcp_server``) or removed (``without_mcp_server``; the file counts as ``empty`` when ``{}`` is
    left). None when nothing changes.

    Raises:
        SettingsError: the file cannot be read as a JSON object, or its ``mcpServers`` is not an object.
    """
    text, data = read_json_file(path)
    if uninstall:
        new = without_mcp_server(path, data, key)
        return json_change(path, text, data, new, empty=not new, private=private, prune=prune)
    new = with_mcp_server(path, data, res, entry=entry, key=key)
    return json_change(path, text, data, new, had_ours=server_registered(data, key), private=private)


# -- detection ------------------------------------------------------------------------------------


def _shown(path: Path, home: Path) -> str:
    """``path`` with ``home`` written ``~``."""
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


@dataclass(frozen=True)
class Marks:
    """What says an agent is used here: ``project``, paths relative to the repository's top folder that only the
    agent reads or writes (``.claude``, ``CLAUDE.md``, ``.gemini/settings.json``); ``binaries``, its commands, looked
    up on ``$PATH``. ``folders``: its user-level folders (absolute), which do **not** count — an empty ``~/.codex``
    left by an uninstalled agent says nothing — and are only named in the reason an agent was skipped."""

    project: tuple[str, ...] = ()
    binaries: tuple[str, ...] = ()
    folders: tuple[Path, ...] = ()


def detect_by(root: Path | None, marks: Marks) -> str | None:
    """A one-line reason why an agent is used here, from the first of its ``marks`` found, or None: a project
    mark in ``root`` (``.claude in this repository``), else one of its commands on PATH (``claude on PATH
    (/usr/bin/claude)``)."""
    if root is not None:
        for rel in marks.project:
            if (root / rel).exists():
                return f"{rel} in this repository"
    for binary in marks.binaries:
        found = shutil.which(binary)
        if found:
            return f"{binary} on PATH ({found})"
    return None


def not_detected(marks: Marks, home: Path) -> str:
    """Why an agent was skipped, in one line: which commands are not on PATH and which project files are absent, and
    the user-level folders that exist but do not count."""
    parts = []
    if marks.binaries:
        parts.append(f"{' or '.join(marks.binaries)} not on PATH")
    if marks.project:
        parts.append(f"no {' or '.join(marks.project)} in this repository")
    there = [_shown(p, home) for p in marks.folders if p.exists()]
    if there:
        parts.append(f"{', '.join(there)} alone does not count")
    return "; ".join(parts)
