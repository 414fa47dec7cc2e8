"""Claude Code hook handlers: one entry point (``gitmem-hook``) reading the event JSON on stdin.

========================  ========================================================  ===========
event                     what gitmem does                                          budget
========================  ========================================================  ===========
SessionStart              the ``gitmem context`` of the current focus, as             1 s
                          ``additionalContext``; records the session's start commit
UserPromptSubmit          spools the prompt; memories the prompt names (paths,       300 ms
                          symbols) or matches (BM25) not yet given this session
PreToolUse (Read, Edit,   memories anchored to the file — first those on the          150 ms
Write, NotebookEdit)      symbol the edit's ``old_string`` falls in — not yet given
PostToolUse(Failure)      appends the redacted event to the session's spool            60 ms
Stop                      spools the agent's last message; prints nothing
SessionEnd                hands consolidation to a detached process                   1.5 s
========================  ========================================================  ===========

Rules (``../shared/reference/claude-code-hooks.md``): the process always exits 0;
stdout is empty or one JSON object ``{"hookSpecificOutput": {"hookEventName":
<event>, "additionalContext": <text under 10,000 characters>}}``; Stop and
SessionEnd print nothing. Bad input (not JSON, not an object, an unknown event,
a ``cwd`` outside any repository, a repository without ``.gitmem/``) prints
nothing. The repository is found from ``cwd``, else from the paths the tool
touches. Errors go to ``.gitmem/local/logs/claude-hooks.log`` (redacted).

The per-tool-call paths (PostToolUse, PreToolUse, UserPromptSubmit) use the
standard library only: SQLite for the hook index (``gitmem.hookindex``), no
YAML, git, tree-sitter, LanceDB or LLM client. SessionStart may import the
library (it has a second).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from pathlib import Path

from gitmem import layout
from gitmem.capture import redact, spool

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from typing import Any

#: Claude Code saves a longer additionalContext to a file instead of passing it on.
MAX_CONTEXT_CHARS = 10_000
#: What gitmem allows itself, under that cap (room for the header and a final line).
CONTEXT_CHAR_LIMIT = 9_500
#: Default token budgets (tokens ≈ characters / 4), overridable in ``[claude]`` of config.toml.
DEFAULT_BUDGETS = {"session_budget": 1500, "prompt_budget": 600, "file_budget": 500}
#: At most this many memories per UserPromptSubmit / PreToolUse injection.
MAX_PROMPT_MEMORIES = 5
#: Memories taken per path or symbol the prompt names (newest first): a common name can hold thousands.
NAMED_LIMIT = 100
MAX_FILE_MEMORIES = 6
#: A BM25 hit is relevant when it scores at least this fraction of the best hit's score.
MIN_RELATIVE_BM25 = 0.5
#: Seconds each event may take before the handler gives up (prints nothing, exits 0).
TIME_LIMITS = {"SessionStart": 8.0, "UserPromptSubmit": 4.0, "PreToolUse": 3.0, "SessionEnd": 1.2}
DEFAULT_TIME_LIMIT = 3.0
#: Longest text kept from one field of a spooled event (characters).
MAX_FIELD_CHARS = 2_000
#: Longest text redacted per string (characters); beyond it only the head is kept (redacting 256 KB
#: takes 1-8 ms). Containers keep MAX_ITEMS items and MAX_DEPTH levels.
MAX_RAW_CHARS = 256_000
MAX_ITEMS = 200
MAX_DEPTH = 12
#: Longest agent message / prompt kept (characters).
MAX_MESSAGE_CHARS = 4_000
FILE_TOOLS = ("Read", "Edit", "Write", "NotebookEdit", "MultiEdit")
EXPAND_LINE = "Expand an id: `gitmem show ID` or the MCP tool `get` · search: `gitmem recall QUERY` or MCP `search`"
LOG_NAME = "claude-hooks.log"
#: A spool untouched this long (seconds) belongs to a session that ended without SessionEnd.
ORPHAN_AFTER_S = 3600.0
#: Touched when a hook starts a hook-index refresh; another is started only SYNC_RETRY_S seconds later.
SYNC_MARKER = "catalog-sync.requested"
SYNC_RETRY_S = 10.0
LOG_MAX_BYTES = 1_000_000


USAGE = """usage: gitmem-hook [EVENT] < event.json

Claude Code hook handler of gitmem: reads one hook event (JSON) on stdin and prints the
hookSpecificOutput JSON for SessionStart, UserPromptSubmit and PreToolUse, nothing otherwise.
Always exits 0. Registered by `gitmem install claude`; see README, "With Claude Code".
"""


class _TimeUp(BaseException):
    pass


# -- finding the repository ---------------------------------------------------------------------


def find_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git`` (file or folder); None if there is none."""
    for folder in (start, *start.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def touched_paths(event: dict[str, Any]) -> list[str]:
    """The file paths a tool event names (``file_path``, ``notebook_path``, ``path``), as given."""
    ti = event.get("tool_input")
    if not isinstance(ti, dict):
        return []
    return [v for k in ("file_path", "notebook_path", "path") if isinstance(v := ti.get(k), str) and v]


def resolve_root(event: dict[str, Any]) -> Path | None:
    """The work tree with a ``.gitmem/`` folder this event is about: from ``cwd``, else the touched files."""
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else ""
    base = Path(cwd) if cwd and os.path.isabs(cwd) else Path.cwd()
    starts = [base] + [base / p for p in touched_paths(event)]
    project = os.environ.get("CLAUDE_PROJECT_DIR")
    if project:
        starts.append(Path(project))
    for s in starts:
        try:
            root = find_root(Path(os.path.abspath(s)))
        except (OSError, ValueError):
            continue
        if root is not None and (root / ".gitmem").is_dir():
            return root
    return None


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


# -- configuration (stdlib tomllib) -------------------------------------------------------------


def read_config(root: Path) -> dict[str, Any]:
    """config.toml as a dict ({} when missing or invalid: hooks never fail on config).

    Parsed with tomllib only when the file changed (by size and modification
    time); otherwise read back from a JSON copy under ``.gitmem/local/cache``
    (tomllib costs ~8 ms to import, JSON is already loaded).
    """
    path = root / ".gitmem" / "config.toml"
    cache = layout.of(root).worktree_dir / "config.json"
    try:
        st = path.stat()
    except OSError:
        return {}
    stamp = f"{st.st_mtime_ns}:{st.st_size}"
    try:
        cached = json.loads(cache.read_bytes())
        if cached.get("stamp") == stamp and isinstance(cached.get("config"), dict):
            return cached["config"]
    except (OSError, ValueError, AttributeError):
        pass
    try:
        import tomllib

        cfg = tomllib.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f".{cache.name}.{os.getpid()}")
        tmp.write_text(json.dumps({"stamp": stamp, "config": cfg}, default=str))
        os.replace(tmp, cache)
    except OSError:
        pass
    return cfg


def private_globs(cfg: dict[str, Any]) -> tuple[str, ...]:
    """Redaction's default private-file globs plus ``[capture] private_files``."""
    extra = cfg.get("capture", {}).get("private_files", []) if isinstance(cfg.get("capture"), dict) else []
    return tuple(redact.DEFAULT_PRIVATE_GLOBS) + tuple(g for g in extra if isinstance(g, str))


def budget(cfg: dict[str, Any], key: str) -> int:
    section = cfg.get("claude") if isinstance(cfg.get("claude"), dict) else {}
    v = section.get(key, DEFAULT_BUDGETS[key])
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else DEFAULT_BUDGETS[key]


# -- session state: which memories this session was given ---------------------------------------


def _given_path(root: Path, key: str) -> Path:
    return layout.of(root).sessions_dir / f"{key}.given"


def given_ids(root: Path, key: str) -> set[str]:
    """Ids of the memories given in full to session ``key`` so far."""
    try:
        return {ln.strip() for ln in _given_path(root, key).read_text("utf-8").splitlines() if ln.strip()}
    except (OSError, ValueError):
        return set()


def mark_given(root: Path, key: str, ids: list[str]) -> None:
    """Record ``ids`` as given to session ``key`` (one append; parallel hooks do not interleave)."""
    if not ids:
        return
    p = _given_path(root, key)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, ("\n".join(ids) + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def forget_given(root: Path, key: str) -> None:
    """Start over (after compaction the agent no longer has what it was given)."""
    try:
        _given_path(root, key).unlink()
    except OSError:
        pass


# -- output --------------------------------------------------------------------------------------


def context_output(event_name: str, text: str) -> dict[str, Any] | None:
    """The JSON Claude Code reads, or None for no text; ``text`` is cut under the 10,000-character cap."""
    text = text.strip()
    if not text:
        return None
    if len(text) > CONTEXT_CHAR_LIMIT:
        cut = text[:CONTEXT_CHAR_LIMIT].rsplit("\n", 1)[0]
        text = cut + "\n… (cut to stay under Claude Code's 10,000-character limit)\n" + EXPAND_LINE
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}


def _age(stamp: str | None) -> str:
    try:
        t = time.mktime(time.strptime(stamp or "", "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    except (ValueError, OverflowError):
        return "?"
    secs = max(0, int(time.time() - t))
    for unit, size in (("y", 31_536_000), ("w", 604_800), ("d", 86_400), ("h", 3_600), ("m", 60)):
        if secs >= size:
            return f"{secs // size}{unit}"
    return "now"


def status_note(row: dict[str, Any]) -> str:
    """``fresh``, ``⚠ stale: <anchor> <reason>``, ``moved: …`` or ``status not checked yet``."""
    st = row.get("status")
    if not st:
        return "status not checked yet"
    if st == "fresh":
        return "fresh"
    mark = "⚠ " if st in ("stale", "deleted") else ""
    return f"{mark}{st}: {row.get('reason') or ''}".strip()


def render_full(row: dict[str, Any]) -> str:
    """A memory in full: title line, anchors · age · status, body, facts."""
    anchors = ", ".join(a.get("key", "") for a in row.get("anchors", [])) or "-"
    lines = [f"### {row['id']} · {row.get('type')} · {row.get('title')}",
             f"anchors: {anchors} · {_age(row.get('updated'))} · {status_note(row)}"]
    body = (row.get("body") or "").strip()
    if len(body) > 1200:
        body = body[:1200].rsplit(" ", 1)[0] + " …"
    if body:
        lines.append(body)
    lines.extend(f"- {f}" for f in row.get("facts", []))
    return "\n".join(lines) + "\n"


def render_line(row: dict[str, Any]) -> str:
    """A memory as one index line: id, type, title, main anchor, age, status."""
    anchors = row.get("anchors") or []
    main = anchors[0].get("key", "-") if anchors else "-"
    return f"- {row['id']} [{row.get('type')}] {row.get('title')} — {main} · {_age(row.get('updated'))} · {status_note(row)}\n"


def pack_rows(header: str, full: list[dict[str, Any]], listed: list[dict[str, Any]],
              budget_tokens: int) -> tuple[str, list[str]]:
    """Render ``full`` in full and ``listed`` as index lines within ``budget_tokens`` (characters / 4).

    Returns the text ("" when nothing fits) and the ids rendered in full.
    """
    limit = min(budget_tokens * 4, CONTEXT_CHAR_LIMIT)
    used = len(header) + len(EXPAND_LINE) + 4
    parts: list[str] = []
    shown: list[str] = []
    lines: list[str] = []
    for row in full:
        block = render_full(row) + "\n"
        if used + len(block) <= limit:
            parts.append(block)
            shown.append(row["id"])
            used += len(block)
        else:
            listed = [row, *listed]
    for row in listed:
        line = render_line(row)
        if used + len(line) <= limit:
            lines.append(line)
            used += len(line)
    if not parts and not lines:
        return "", []
    text = header + "\n" + "".join(parts)
    if lines:
        text += "Also about this:\n" + "".join(lines) + "\n"
    return text + EXPAND_LINE + "\n", shown


# -- spooling ------------------------------------------------------------------------------------


def _prepare(value: Any, depth: int = 0) -> Any:
    """Bound an event value before redaction: strings cut to their first ``MAX_RAW_CHARS`` (at a space),
    containers to ``MAX_ITEMS`` items and ``MAX_DEPTH`` levels, keys to 200 characters.

    Only heads are kept here: a tail kept before redaction could hold the middle of a
    private key whose BEGIN line was cut off. ``_cap`` keeps head and tail, after redaction.
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
        return {str(k)[:200]: _prepare(v, depth + 1) for k, v in list(value.items())[:MAX_ITEMS]}
    if isinstance(value, list):
        return [_prepare(v, depth + 1) for v in value[:MAX_ITEMS]]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return str(value)[:200]


def _cap(value: Any, limit: int = MAX_FIELD_CHARS) -> Any:
    """Strings cut to ``limit`` characters (head and tail kept), recursively. Only for redacted values."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        half = limit // 2
        return value[:half] + f"\n… [{len(value) - limit} characters cut] …\n" + value[-half:]
    if isinstance(value, dict):
        return {k: _cap(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_cap(v, limit) for v in value]
    return value


def clean(value: Any, limit: int = MAX_FIELD_CHARS) -> Any:
    """What may be stored of an event value: bounded, redacted, then cut to ``limit`` per string."""
    return _cap(redact.redact(_prepare(value)), limit)


def slim_tool_event(event: dict[str, Any], root: Path) -> dict[str, Any]:
    """What the spool keeps of a tool event: the input, a small part of the response, relative paths."""
    tool = str(event.get("tool_name") or "")
    ti = event.get("tool_input") if isinstance(event.get("tool_input"), dict) else {}
    tr = event.get("tool_response")
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    inp: dict[str, Any] = dict(ti)
    for k in ("file_path", "notebook_path", "path"):
        if isinstance(inp.get(k), str):
            rel = repo_relative(root, inp[k], cwd)
            inp[k] = rel if rel is not None else inp[k]
    resp: Any = None
    if tool == "Read":
        f = tr.get("file") if isinstance(tr, dict) and isinstance(tr.get("file"), dict) else {}
        resp = {k: f.get(k) for k in ("numLines", "startLine", "totalLines") if k in f}
    elif tool in ("Edit", "MultiEdit"):
        resp = {"replaceAll": tr.get("replaceAll")} if isinstance(tr, dict) else None
    elif tool == "Write":
        resp = {"type": tr.get("type")} if isinstance(tr, dict) else None
        inp["content"] = clean(inp.get("content", ""), 600)
    elif tool == "Bash":
        if isinstance(tr, dict):
            resp = {k: tr.get(k) for k in ("stdout", "stderr", "interrupted", "returnCodeInterpretation")
                    if tr.get(k) not in (None, "")}
            for k in ("stdout", "stderr"):
                if isinstance(resp.get(k), str):
                    # dotenv-style lines: a command can print a private file without naming it (`cat .e*`,
                    # `grep -r X .`); their values are what such files hold
                    resp[k] = _ENV_LINE.sub(r"\1[REDACTED:env-value]", _prepare(resp[k]))
    elif tool in ("Grep", "Glob"):
        if isinstance(tr, dict):
            resp = {"numFiles": tr.get("numFiles"), "filenames": (tr.get("filenames") or [])[:20]}
    else:
        resp = tr
    rec: dict[str, Any] = {"tool": clean(tool, 200), "input": clean(inp), "response": clean(resp, 1_000)}
    if event.get("hook_event_name") == "PostToolUseFailure":
        rec["error"] = clean(str(event.get("error") or ""), 1_000)
    return rec


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


def is_private_event(event: dict[str, Any], root: Path, globs: tuple[str, ...]) -> bool:
    """Whether the event touches a private file: a path in its input matching ``globs`` (also through a
    symlink, or as a ``file://`` URI, in any field of any tool), or a command or pattern naming one."""
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    ti = event.get("tool_input")
    for v in _strings(ti):
        if len(v) > 4096:
            continue
        if "\n" not in v and ("/" in v or "." in v) and _private_path(root, v.strip(), cwd, globs):
            return True
        if redact.mentions_private_path(v, globs):
            return True
    tr = event.get("tool_response")
    if isinstance(tr, dict):  # a diff or patch of a private file, whatever the command was
        for k in ("stdout", "stderr"):
            out = tr.get(k)
            if isinstance(out, str) and ("diff --git" in out or "+++ b/" in out):
                for m in _DIFF_FILE.finditer(out[:MAX_RAW_CHARS]):
                    if redact.is_private_path(next(g for g in m.groups() if g), globs):
                        return True
    return False


def spool_record(root: Path, key: str, kind: str, data: dict[str, Any]) -> None:
    """Append ``data`` (values already passed through ``clean``) to the session's spool as a ``kind`` record.

    ``data`` is redacted once more as a whole (idempotent), so a value that skipped
    ``clean`` still cannot carry a secret.
    """
    rec = {"v": spool.RECORD_VERSION, "t": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "event": kind}
    rec.update(redact.redact(_prepare(data)))
    spool.append(root, key, rec)


# -- handlers ------------------------------------------------------------------------------------


def on_post_tool(event: dict[str, Any], root: Path, key: str) -> None:
    cfg = read_config(root)
    if is_private_event(event, root, private_globs(cfg)):
        return  # never captured, not even redacted
    rec = slim_tool_event(event, root)
    rec["id"] = clean(str(event.get("tool_use_id") or os.urandom(8).hex()), 100)
    spool_record(root, key, str(event.get("hook_event_name")), rec)


def _hook_index(root: Path):  # type: ignore[no-untyped-def]
    """The hook index, started on a refresh in the background when missing or out of date."""
    from gitmem.catalog import db as catalog_db

    con = catalog_db.connect(root)
    if con is None or not catalog_db.is_current(con, root):
        marker = layout.of(root).run_dir / SYNC_MARKER
        try:
            recent = time.time() - marker.stat().st_mtime < SYNC_RETRY_S
        except OSError:
            recent = False
        if not recent:  # one refresh at a time, not one per tool call
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
            _spawn([sys.executable, "-P", "-m", "gitmem.catalog.sync", str(root)], root)
    return con


def _spawn(argv: list[str], root: Path) -> None:
    """Start ``argv`` detached: no stdio, own session; the hook never waits for it."""
    import subprocess

    env = dict(os.environ)
    pkg_parent = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, close_fds=True, env=env, cwd=str(root))


def edited_lines(root: Path, rel: str, old_string: str) -> tuple[int, int] | None:
    """1-based line span of the first occurrence of ``old_string`` in the file now; None if absent."""
    if not old_string:
        return None
    try:
        text = (root / rel).read_text("utf-8", errors="replace")
    except OSError:
        return None
    i = text.find(old_string)
    if i < 0:
        return None
    start = text.count("\n", 0, i) + 1
    return start, start + old_string.rstrip("\n").count("\n")


def on_pre_tool(event: dict[str, Any], root: Path, key: str) -> dict[str, Any] | None:
    tool = event.get("tool_name")
    if tool not in FILE_TOOLS:
        return None
    paths = touched_paths(event)
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    rel = repo_relative(root, paths[0], cwd) if paths else None
    if not rel or rel.startswith(".gitmem/"):
        return None
    cfg = read_config(root)
    if redact.is_private_path(rel, private_globs(cfg)):
        return None
    con = _hook_index(root)
    if con is None:
        return None
    from gitmem.catalog import db as catalog_db

    try:
        given = given_ids(root, key)
        found = [f for f in catalog_db.on_path(con, rel) if f[0] not in given]
        if not found:
            return None
        ti = event.get("tool_input") if isinstance(event.get("tool_input"), dict) else {}
        edit = edited_lines(root, rel, ti.get("old_string", "")) if tool in ("Edit", "MultiEdit") else None

        def on_edit(spans: list[tuple[str | None, int | None, int | None]]) -> bool:
            return edit is not None and any(s and a is not None and b is not None and a <= edit[1] and edit[0] <= b
                                            for s, a, b in spans)

        def file_level(spans: list[tuple[str | None, int | None, int | None]]) -> bool:
            return any(s is None for s, _, _ in spans)

        def not_fresh(status: str | None) -> bool:
            return status not in (None, "fresh")

        # the edited symbol's memories first, then warnings, then file-level ones, then the rest (newest first)
        found.sort(key=lambda f: (not on_edit(f[2]), not not_fresh(f[1]), not file_level(f[2])))
        found = found[:MAX_FILE_MEMORIES]
        by_id = {r["id"]: r for r in catalog_db.rows(con, [f[0] for f in found])}
    finally:
        con.close()
    found = [f for f in found if f[0] in by_id]
    if edit is not None:
        first = [f for f in found if on_edit(f[2]) or file_level(f[2]) or not_fresh(f[1])]
        full = [by_id[f[0]] for f in first]
        listed = [by_id[f[0]] for f in found if f not in first]
        lines = f"line {edit[0]}" if edit[0] == edit[1] else f"lines {edit[0]}–{edit[1]}"
        where = f"{rel} (the edit is at {lines})"
    else:
        full, listed = [by_id[f[0]] for f in found], []
        where = rel
    text, shown = pack_rows(f"# gitmem: memories about {where}\n", full, listed, budget(cfg, "file_budget"))
    mark_given(root, key, shown)
    return context_output("PreToolUse", text)


_ENV_LINE = re.compile(r"(?m)^((?:[\w./-]+:\d*:?)?[+\-]?\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*\s*=)(?!=)[^\n]*$")
#: File headers of a diff (git diff, git log -p, git show): the output shows that file's lines.
_DIFF_FILE = re.compile(r"(?m)^(?:diff --git a/(\S+)|\+\+\+ b/(\S+)|--- a/(\S+))")
_IDENT_LIKE = re.compile(r"`([^`\s]{3,})`|\b([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+|[A-Za-z_$]*_[\w$]+|"
                         r"[a-z][a-z0-9]*[A-Z][\w$]*|[A-Z][a-z0-9]+[A-Z][\w$]*|[A-Za-z_$][\w$]{2,}(?=\())")
_PATHISH = re.compile(r"[\w.$@-]+(?:/[\w.$@-]+)+|[\w-]+\.[A-Za-z]{1,5}\b")


def prompt_mentions(prompt: str, anchored: set[str]) -> tuple[set[str], set[str]]:
    """Anchored paths a prompt names (whole, as a suffix, or by a unique base name), and identifier-like words.

    Plain words (``run``, ``config``) are not taken as symbol names: only
    ``snake_case``, ``camelCase``, ``dotted.names``, ``name(`` and back-quoted words.
    """
    paths: set[str] = set()
    by_base: dict[str, list[str]] = {}
    for p in anchored:
        by_base.setdefault(p.rsplit("/", 1)[-1], []).append(p)
    for m in _PATHISH.finditer(prompt):
        tok = m.group(0).strip("./")
        if tok in anchored:
            paths.add(tok)
        elif "/" in tok:
            hits = [p for p in anchored if p.endswith("/" + tok)]
            if len(hits) == 1:
                paths.add(hits[0])
        elif len(by_base.get(tok, [])) == 1:
            paths.add(by_base[tok][0])
    names: set[str] = set()
    for m in _IDENT_LIKE.finditer(prompt):
        tok = (m.group(1) or m.group(2) or "").strip("`()")
        if "/" in tok or tok in paths:
            continue
        names.add(tok.split("::")[-1])
    return paths, names


def on_prompt(event: dict[str, Any], root: Path, key: str) -> dict[str, Any] | None:
    prompt = event.get("prompt") if isinstance(event.get("prompt"), str) else ""
    if not prompt.strip():
        return None
    prompt = redact.redact_text(_prepare(prompt))
    spool_record(root, key, "UserPromptSubmit", {"prompt": _cap(prompt, MAX_MESSAGE_CHARS)})
    cfg = read_config(root)
    con = _hook_index(root)
    if con is None:
        return None
    from gitmem.catalog import db as catalog_db

    try:
        anchored = catalog_db.anchored_paths(con)
        paths, names = prompt_mentions(prompt, anchored)
        ranked: dict[str, float] = {}
        for ids in catalog_db.paths_like(con, paths, NAMED_LIMIT).values():
            for mid in ids:
                ranked[mid] = max(ranked.get(mid, 0.0), 2.0)
        for ids in catalog_db.symbols_named(con, names, NAMED_LIMIT).values():
            for mid in ids:
                ranked[mid] = max(ranked.get(mid, 0.0), 3.0)  # a named symbol beats its file
        hits = catalog_db.search(con, prompt, 20)
        if hits:
            best = hits[0][1]
            for mid, score in hits:
                if best > 0 and score >= MIN_RELATIVE_BM25 * best:
                    ranked[mid] = ranked.get(mid, 0.0) + score / best
        given = given_ids(root, key)
        order = [mid for mid, _ in sorted(ranked.items(), key=lambda kv: -kv[1]) if mid not in given]
        rows = catalog_db.rows(con, order[:MAX_PROMPT_MEMORIES])
    finally:
        con.close()
    if not rows:
        return None
    text, shown = pack_rows("# gitmem: memories relevant to this prompt\n", rows[:3], rows[3:],
                            budget(cfg, "prompt_budget"))
    mark_given(root, key, shown)
    return context_output("UserPromptSubmit", text)


def on_session_start(event: dict[str, Any], root: Path, key: str) -> dict[str, Any] | None:
    from gitmem.integrations.claude_session import session_start_context

    if event.get("source") == "compact":
        forget_given(root, key)  # the compacted conversation no longer holds what it was given
    text, shown, head = session_start_context(root, cwd=event.get("cwd") if isinstance(event.get("cwd"), str)
                                              else None, budget_tokens=budget(read_config(root), "session_budget"))
    spool_record(root, key, "SessionStart", {"head": head, "source": clean(str(event.get("source") or ""), 40)})
    mark_given(root, key, shown)
    if orphaned_spools(root, key):  # sessions that ended without SessionEnd (a crash, a killed terminal)
        _spawn([sys.executable, "-P", "-m", "gitmem.capture.worker", str(root)], root)
    return context_output("SessionStart", text)


def orphaned_spools(root: Path, key: str) -> bool:
    """Whether another session's spool has not been written to for ``ORPHAN_AFTER_S`` seconds."""
    folder = spool.spool_dir(root)
    now = time.time()
    try:
        with os.scandir(folder) as it:
            for e in it:
                if (e.name.endswith((spool.LIVE_SUFFIX, spool.BATCH_SUFFIX)) and not e.name.startswith(key + ".")
                        and now - e.stat().st_mtime > ORPHAN_AFTER_S):
                    return True
    except OSError:
        return False
    return False


def on_stop(event: dict[str, Any], root: Path, key: str) -> None:
    msg = event.get("last_assistant_message")
    if isinstance(msg, str) and msg.strip():
        spool_record(root, key, "Stop", {"last_message": clean(msg, MAX_MESSAGE_CHARS)})


def on_session_end(event: dict[str, Any], root: Path, key: str) -> None:
    spool_record(root, key, "SessionEnd", {"reason": clean(str(event.get("reason") or ""), 40)})
    _spawn([sys.executable, "-P", "-m", "gitmem.capture.worker", str(root), key], root)


HANDLERS = {
    "SessionStart": on_session_start,
    "UserPromptSubmit": on_prompt,
    "PreToolUse": on_pre_tool,
    "PostToolUse": on_post_tool,
    "PostToolUseFailure": on_post_tool,
    "Stop": on_stop,
    "SessionEnd": on_session_end,
}
#: Events whose handler may print (all others print nothing, whatever happens).
PRINTING = ("SessionStart", "UserPromptSubmit", "PreToolUse")


def handle(event: Any, argv_event: str | None = None) -> dict[str, Any] | None:
    """Run the handler of ``event`` (a decoded hook input); returns the JSON to print, or None.

    Raises whatever the handler raises (``main`` logs it).
    """
    if not isinstance(event, dict):
        return None
    name = event.get("hook_event_name") if isinstance(event.get("hook_event_name"), str) else argv_event
    handler = HANDLERS.get(name or "")
    if handler is None:
        return None
    root = resolve_root(event)
    if root is None:
        return None
    out = handler(event, root, spool.session_key(event.get("session_id")))
    if name not in PRINTING or not isinstance(out, dict):
        return None
    return out


def _log_error(event: Any, exc: BaseException) -> None:
    """One redacted line (and the traceback) in ``.gitmem/local/logs/claude-hooks.log``; never raises."""
    try:
        import traceback

        root = resolve_root(event) if isinstance(event, dict) else None
        if root is None:
            return
        path = layout.of(root).log_file(LOG_NAME)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
        name = event.get("hook_event_name") if isinstance(event, dict) else "?"
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        text = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {name} error: {type(exc).__name__}: {exc}\n"
        text += "".join(f"  {ln}\n" for ln in tb.rstrip("\n").split("\n"))
        with open(path, "a", encoding="utf-8", errors="replace") as f:
            f.write(redact.redact_text(text))
    except BaseException:  # noqa: BLE001
        pass


def main(argv: list[str] | None = None) -> int:
    """``gitmem-hook [EVENT]``: handle the hook input on stdin; print its JSON or nothing. Returns 0, always."""
    event: Any = None
    try:
        args = sys.argv[1:] if argv is None else argv
        if args[:1] in (["-h"], ["--help"]):
            sys.stdout.write(USAGE)
            return 0
        raw = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()
        try:
            event = json.loads(raw) if raw.strip() else None
        except ValueError:
            return 0
        name = event.get("hook_event_name") if isinstance(event, dict) else None
        limit = TIME_LIMITS.get(str(name or (args[0] if args else "")), DEFAULT_TIME_LIMIT)

        def time_up(signum: int, frame: object) -> None:
            raise _TimeUp()

        if hasattr(signal, "setitimer"):
            signal.signal(signal.SIGALRM, time_up)
            signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            out = handle(event, args[0] if args else None)
        finally:
            if hasattr(signal, "setitimer"):
                signal.setitimer(signal.ITIMER_REAL, 0)
        if out is not None:
            sys.stdout.write(json.dumps(out, ensure_ascii=True))
            sys.stdout.flush()
    except BaseException as e:  # noqa: BLE001 - a Claude Code hook always exits 0
        _log_error(event, e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
