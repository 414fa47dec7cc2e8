"""What capture keeps of an agent event: bounded, redacted, private files left out, appended to the spool.

Owns: the bounds on captured text (``MAX_*``), ``clean`` (bound, redact, cut), the privacy
test of a tool event (``is_private_event``: a path matching the private globs, also through
a symlink or a ``file://`` URI, or a diff of such a file in a command's output), the record
kept of a tool call (``tool_record``), the id of a call its agent gave none (``content_digest``,
``content_id``) and the append of a record to the session's spool
(``spool_record``). Records are named after Claude Code's events (``PostToolUse``,
``UserPromptSubmit`` …) whatever the agent: that is the spool's vocabulary, which
``capture.consolidate`` reads.

Guarantees: nothing reaches the spool unredacted (``spool_record`` redacts the whole record
once more); a private file's event is never captured, not even redacted.

Must not import: anything outside the standard library and gitmem's stdlib-only modules
(``capture.redact``, ``capture.spool``, ``infra``): it runs after every tool call.
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path

from ... import infra
from ...capture import redact, spool
from .events import AfterTool, AfterToolFailure

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from typing import Any

#: Longest text kept from one field of a spooled event (characters).
MAX_FIELD_CHARS = 2_000
#: Longest text redacted per string (characters); beyond it only the head is kept (redacting 256 KB
#: takes 1-8 ms). Containers keep MAX_ITEMS items and MAX_DEPTH levels.
MAX_RAW_CHARS = 256_000
MAX_ITEMS = 200
MAX_DEPTH = 12
#: Longest agent message / prompt kept (characters).
MAX_MESSAGE_CHARS = 4_000
#: Longest text kept of a whole file written by a tool, of a tool's response, of its error (characters).
MAX_CONTENT_CHARS = 600
MAX_RESPONSE_CHARS = 1_000

#: dotenv-style lines: a command can print a private file without naming it (``cat .e*``,
#: ``grep -r X .``); their values are what such files hold.
_ENV_LINE = r"(?m)^((?:[\w./-]+:\d*:?)?[+\-]?\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*\s*=)(?!=)[^\n]*$"
#: File headers of a diff (git diff, git log -p, git show): the output shows that file's lines.
_DIFF_FILE = r"(?m)^(?:diff --git a/(\S+)|\+\+\+ b/(\S+)|--- a/(\S+))"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled on first use: compiling both patterns costs ~0.4 ms, and most tool calls need neither."""
    return re.compile(pattern)


def repo_relative(root: Path, path: str, cwd: str | None) -> str | None:
    """``path`` (absolute, or relative to ``cwd``) as a repo-relative POSIX path; None outside ``root``."""
    try:
        p = Path(path)
        if not p.is_absolute():
            p = Path(cwd or os.getcwd()) / p
        for a, b in ((os.path.abspath(p), os.path.abspath(root)), (os.path.realpath(p), os.path.realpath(root))):
            rel = os.path.relpath(a, b)
            if rel != ".." and not rel.startswith(".." + os.sep) and not os.path.isabs(rel):
                return Path(rel).as_posix()
    except (OSError, ValueError):
        return None
    return None


def prepare(value: Any, depth: int = 0) -> Any:
    """Bound an event value before redaction: strings cut to their first ``MAX_RAW_CHARS`` (at a space),
    containers to ``MAX_ITEMS`` items and ``MAX_DEPTH`` levels, keys to 200 characters.

    Only heads are kept here: a tail kept before redaction could hold the middle of a
    private key whose BEGIN line was cut off. ``cap`` keeps head and tail, after redaction.
    """
    if isinstance(value, str):
        if len(value) <= MAX_RAW_CHARS:
            return value
        head = value[:MAX_RAW_CHARS]
        cut = max(head.rfind(" "), head.rfind("\n"))
        return head[:cut] if cut > MAX_RAW_CHARS // 2 else head
    if depth >= MAX_DEPTH and isinstance(value, (dict, list)):
        return "[nested too deep]"
    if isinstance(value, dict):
        return {str(k)[:200]: prepare(v, depth + 1) for k, v in list(value.items())[:MAX_ITEMS]}
    if isinstance(value, list):
        return [prepare(v, depth + 1) for v in value[:MAX_ITEMS]]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return str(value)[:200]


def cap(value: Any, limit: int = MAX_FIELD_CHARS) -> Any:
    """Strings cut to ``limit`` characters (head and tail kept), recursively. Only for redacted values."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        half = limit // 2
        return value[:half] + f"\n… [{len(value) - limit} characters cut] …\n" + value[-half:]
    if isinstance(value, dict):
        return {k: cap(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [cap(v, limit) for v in value]
    return value


def clean(value: Any, limit: int = MAX_FIELD_CHARS) -> Any:
    """What may be stored of an event value: bounded, redacted, then cut to ``limit`` per string."""
    return cap(redact.redact(prepare(value)), limit)


def tool_record(event: AfterTool, root: Path) -> dict[str, Any]:
    """What the spool keeps of a tool call: ``{"tool", "kind", "input", "response"[, "error"]}``, cleaned.

    Input paths (``event.path_keys``) become repo-relative; a written file's content
    (``event.content_key``) is cut to ``MAX_CONTENT_CHARS``; dotenv-style lines of a shell's
    output lose their values.
    """
    inp: dict[str, Any] = dict(event.input)
    for k in event.path_keys:
        if isinstance(inp.get(k), str):
            rel = repo_relative(root, inp[k], event.cwd or None)
            inp[k] = rel if rel is not None else inp[k]
    if event.content_key:
        inp[event.content_key] = clean(inp.get(event.content_key, ""), MAX_CONTENT_CHARS)
    resp = event.response
    if event.kind == "shell" and isinstance(resp, dict):
        resp = dict(resp)
        for k in ("stdout", "stderr"):
            if isinstance(resp.get(k), str):
                resp[k] = _compiled(_ENV_LINE).sub(r"\1[REDACTED:env-value]", prepare(resp[k]))
    rec: dict[str, Any] = {"tool": clean(event.tool, 200), "kind": event.kind, "input": clean(inp),
                           "response": clean(resp, MAX_RESPONSE_CHARS)}
    if isinstance(event, AfterToolFailure):
        rec["error"] = clean(event.error, MAX_RESPONSE_CHARS)
    return rec


def content_digest(record: dict[str, Any]) -> str:
    """What identifies a tool call whose agent gives it no id: 20 hex digits of the SHA-256 of its spool
    record's ``tool`` and ``input`` (``tool_record``: cleaned, paths repo-relative) as canonical JSON. A hook
    and the reconciliation, building the record from the same call, get the same digest."""
    import hashlib

    text = json.dumps([record.get("tool"), record.get("input")], sort_keys=True, ensure_ascii=True,
                      separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:20]


def content_id(digest: str, n: int) -> str:
    """The id of the ``n``-th (0-based) tool call of a session with content ``digest`` (``content_digest``)."""
    return f"c:{digest}.{n}"


def _strings(value: Any, depth: int = 0, out: list[str] | None = None) -> list[str]:
    """Every string in a JSON-like value (at most 200, 8 levels deep)."""
    out = [] if out is None else out
    if len(out) >= 200 or depth > 8:
        return out
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, depth + 1, out)
    elif isinstance(value, list):
        for v in value:
            _strings(v, depth + 1, out)
    return out


def _private_path(root: Path, path: str, cwd: str | None, globs: tuple[str, ...]) -> bool:
    """Whether ``path`` — as given, relative to the repository, or after resolving symlinks — is private."""
    path = path.removeprefix("file://")
    if redact.is_private_path(path, globs):
        return True
    rel = repo_relative(root, path, cwd)
    if rel is not None and redact.is_private_path(rel, globs):
        return True
    try:
        p = Path(path) if os.path.isabs(path) else Path(cwd or root) / path
        real = os.path.realpath(p)
    except (OSError, ValueError):
        return False
    rel_real = repo_relative(root, real, cwd)
    return redact.is_private_path(rel_real if rel_real is not None else real, globs)


def is_private_event(event: AfterTool, root: Path, globs: tuple[str, ...]) -> bool:
    """Whether the tool call touches a private file: a path in its input matching ``globs`` (also through a
    symlink, or as a ``file://`` URI, in any field of any tool), or a command or pattern naming one, or a
    diff of one in a command's output."""
    cwd = event.cwd or None
    for v in _strings(event.input):
        if len(v) > 4096:
            continue
        if "\n" not in v and ("/" in v or "." in v) and _private_path(root, v.strip(), cwd, globs):
            return True
        if redact.mentions_private_path(v, globs):
            return True
    tr = event.response
    if isinstance(tr, dict):  # a diff or patch of a private file, whatever the command was
        for k in ("stdout", "stderr"):
            out = tr.get(k)
            if isinstance(out, str) and ("diff --git" in out or "+++ b/" in out):
                for m in _compiled(_DIFF_FILE).finditer(out[:MAX_RAW_CHARS]):
                    if redact.is_private_path(next(g for g in m.groups() if g), globs):
                        return True
    return False


def spool_record(root: Path, key: str, kind: str, data: dict[str, Any]) -> None:
    """Append ``data`` (values already passed through ``clean``) to session ``key``'s spool as a ``kind`` record.

    ``data`` is redacted once more as a whole (idempotent), so a value that skipped
    ``clean`` still cannot carry a secret.

    Raises:
        OSError: the spool cannot be written.
    """
    rec: dict[str, Any] = {"v": spool.RECORD_VERSION, "t": infra.utc_now(), "event": kind}
    rec.update(redact.redact(prepare(data)))
    spool.append(root, key, rec)
