"""The capture spool: redacted agent events, appended per session, consumed by consolidation.

Layout under ``<common-dir>/gitmem/spool/`` (``layout.spool_dir``; per clone, never committed)::

    <session>.jsonl                    live: hooks append one JSON object per line
    <session>.<ns>-<pid>.batch         claimed by a consolidation (renamed from the live file)
    <session>.<ns>-<pid>.plan.json     the memories a consolidation is about to write
    <session>.seen                     keys of the records already consolidated (``record_key``): a
                                       tool call (by its id) or a final message arriving again — a
                                       late asynchronous hook, a re-run of the reconciliation with
                                       the agent's transcript — is dropped, so each counts once
    <session>.calls                    the content digests of the tool calls the hooks reported
                                       without an id (``occurrence``), one a line: the n-th call
                                       with the same tool and input gets the id ``c:<digest>.<n>``,
                                       as the reconciliation numbers the transcript's calls

Concurrency (POSIX ``flock``): a writer opens the live file, takes an exclusive
lock, checks that the path still names the inode it opened (a consolidation may
have renamed it away meanwhile; then it reopens), writes one line and closes. A
consolidation renames the live file to a batch and then takes the same lock on
the batch, so a writer that was mid-write finishes first and no line lands in a
file that is already being read. A batch is deleted only after its memories are
written; a crash leaves the batch (and maybe a plan) for the next run.

Hot path: imported by the PostToolUse hook; standard library only.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from .. import layout

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: appends of one small write are atomic enough
    fcntl = None  # type: ignore[assignment]

LIVE_SUFFIX = ".jsonl"
SEEN_SUFFIX = ".seen"
CALLS_SUFFIX = ".calls"
BATCH_SUFFIX = ".batch"
PLAN_SUFFIX = ".plan.json"
#: Spool record format version (the ``v`` field of each line).
RECORD_VERSION = 1
#: Reopen attempts when a consolidation renamed the live file between open and lock.
_REOPEN_TRIES = 20

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def spool_dir(root: Path) -> Path:
    """The spool folder of the clone of the work tree at ``root`` (``<common-dir>/gitmem/spool``).

    Raises:
        OSError: ``root/.git`` cannot be read.
    """
    return layout.of(root).spool_dir


def session_key(session_id: object) -> str:
    """A file-name-safe key for a session id (``unknown`` when missing; at most 80 characters).

    UUIDs (what Claude Code sends) are kept as they are.
    """
    text = session_id if isinstance(session_id, str) else ""
    key = _UNSAFE.sub("_", text)[:80].strip("_")
    return key or "unknown"


def live_path(root: Path, key: str) -> Path:
    return spool_dir(root) / f"{key}{LIVE_SUFFIX}"


def encode(record: dict[str, Any]) -> bytes:
    """One spool line: compact JSON, ASCII-escaped (so any text, lone surrogates too, round-trips), newline."""
    return (json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str) + "\n").encode("ascii")


def append(root: Path, key: str, record: dict[str, Any]) -> None:
    """Append ``record`` as one line to session ``key``'s live spool file.

    Raises:
        OSError: the spool folder cannot be created or written.
    """
    data = encode(record)
    folder = spool_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}{LIVE_SUFFIX}"
    for _ in range(_REOPEN_TRIES):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    same = os.fstat(fd).st_ino == os.stat(path).st_ino
                except FileNotFoundError:
                    same = False
                if not same:
                    continue  # renamed to a batch after we opened it: write to the new live file
            os.write(fd, data)
            return
        finally:
            os.close(fd)
    raise OSError(f"cannot append to {path}: it keeps being renamed")


def claim(root: Path, key: str) -> Path | None:
    """Rename session ``key``'s live spool to a new batch and wait for writers in flight; None if empty.

    The caller must hold the session's consolidation lock.
    """
    live = live_path(root, key)
    batch = live.with_name(f"{key}.{time.time_ns()}-{os.getpid()}{BATCH_SUFFIX}")
    try:
        os.rename(live, batch)
    except FileNotFoundError:
        return None
    if fcntl is not None:
        fd = os.open(batch, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # a writer that locked before the rename finishes first
        finally:
            os.close(fd)
    return batch


def batches(root: Path, key: str | None = None) -> list[Path]:
    """Claimed batches (of session ``key``, or all), oldest first."""
    folder = spool_dir(root)
    if not folder.is_dir():
        return []
    out = [p for p in folder.iterdir() if p.name.endswith(BATCH_SUFFIX)
           and (key is None or p.name.startswith(key + "."))]
    return sorted(out, key=lambda p: p.name.split(".")[1] if p.name.count(".") >= 2 else p.name)


def batch_session(path: Path) -> str:
    """The session key of a batch or live spool file."""
    return path.name.split(".", 1)[0]


def pending_sessions(root: Path) -> list[str]:
    """Session keys that have a live spool file or an unprocessed batch."""
    folder = spool_dir(root)
    if not folder.is_dir():
        return []
    keys = {batch_session(p) for p in folder.iterdir()
            if p.name.endswith(LIVE_SUFFIX) or p.name.endswith(BATCH_SUFFIX)}
    return sorted(keys)


def read_records(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The records of a spool or batch file, and how many lines were not valid records."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return [], 0
    out: list[dict[str, Any]] = []
    bad = 0
    for line in raw.splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            bad += 1  # a torn line from a killed writer, or nesting deeper than the parser goes
            continue
        if isinstance(rec, dict):
            out.append(rec)
        else:
            bad += 1
    return out, bad


def record_key(record: dict[str, Any]) -> str | None:
    """What makes a record the same event again: ``tool:<id>`` for a tool call, ``stop:<hash>`` for a
    final message; None for the others (prompts, session start and end), which are never dropped."""
    kind = record.get("event")
    if kind in ("PostToolUse", "PostToolUseFailure") and isinstance(record.get("id"), str) and record["id"]:
        return "tool:" + str(record["id"])
    if kind == "Stop" and isinstance(record.get("last_message"), str) and record["last_message"].strip():
        import hashlib

        return "stop:" + hashlib.sha256(record["last_message"].encode("utf-8", "replace")).hexdigest()[:32]
    return None


def seen_path(root: Path, key: str) -> Path:
    return spool_dir(root) / f"{key}{SEEN_SUFFIX}"


def read_seen(root: Path, key: str) -> set[str]:
    """The keys (``record_key``) of session ``key``'s records already consolidated."""
    try:
        return {ln for ln in seen_path(root, key).read_text("ascii", errors="replace").splitlines() if ln}
    except FileNotFoundError:
        return set()


def add_seen(root: Path, key: str, keys: list[str]) -> None:
    """Record ``keys`` as consolidated (one append). The caller holds the session's consolidation lock.

    Raises:
        OSError: the spool folder cannot be written.
    """
    if not keys:
        return
    fd = os.open(seen_path(root, key), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, ("\n".join(keys) + "\n").encode("ascii", "replace"))
    finally:
        os.close(fd)


def occurrence(root: Path, key: str, digest: str) -> int:
    """How many tool calls with content ``digest`` session ``key``'s hooks reported before this one (0 for the
    first); records this one. For agents whose hooks give no tool-call id (Gemini CLI, Copilot CLI).

    Raises:
        OSError: the spool folder cannot be written.
    """
    folder = spool_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / f"{key}{CALLS_SUFFIX}", os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # two hooks of one session in parallel: each its own number
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        line = digest.encode("ascii", "replace")
        n = b"".join(chunks).splitlines().count(line)
        os.write(fd, line + b"\n")
        return n
    finally:
        os.close(fd)


def fresh(records: list[dict[str, Any]], seen: set[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """``records`` without those whose key is in ``seen`` or repeats an earlier record's, and the keys of the
    kept ones (``seen`` is extended with them)."""
    out: list[dict[str, Any]] = []
    keys: list[str] = []
    for r in records:
        k = record_key(r)
        if k is not None:
            if k in seen:
                continue
            seen.add(k)
            keys.append(k)
        out.append(r)
    return out, keys
