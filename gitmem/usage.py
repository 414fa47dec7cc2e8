"""How memories are used, and how the unused ones fade: the per-clone use log and the decay factor.

**The use log** (``layout.usage_log``: ``<common-dir>/gitmem/usage.jsonl``, per clone, never
committed) is the one record of use. Each line is one JSON object::

    {"t": 1764640000, "use": "given", "via": "file", "ids": ["01JD…", …]}

``t`` is seconds since the epoch; ``use`` is one of ``USES``: ``given`` (shown in full to an agent:
session start, prompt, before a file, ``gitmem context``, MCP ``context``), ``searched`` (a hit of
``gitmem recall`` or MCP ``search``), ``opened`` (``gitmem show``, MCP ``get``); ``via`` names the place
(``VIA``). A folded line (``compact``) has ``use`` ``"sum"``, one id, its counts (``given``, ``searched``,
``opened``) and ``t`` its last use.

Why a log per clone and not a table in the catalog: the catalog is per worktree and derived
(rebuilt from the memory files at any time), so it cannot hold the only copy; use is a fact about
the clone (a memory given in one worktree was used); and the agent hooks must not take SQLite's
write lock on every tool call. An append costs one ``write`` (``infra.append_records``: whole
lines, at most 512 bytes a write, ``O_APPEND``): hooks running at once never lose or tear a
record. The catalog folds the log into a ``usage`` table (``catalog.usage``), reading only the
bytes added since it last looked; ``compact`` bounds the log's size.

**Batching.** The agent hooks ``note`` what each handler gave and ``flush`` once per hook call
(``integrations.agents.core.run``); the CLI and MCP ``record`` (note and flush).

**Fading** (``fade``): a memory's last activity is the latest of when it was written (updated),
last used (given, searched, opened) and when the code it is anchored to was last committed
(``catalog.usage`` records each anchored file's last commit time). Its decay factor is
``0.5 ** (age / half-life)``, age = now − last activity, in (0, 1]; 1 for the ``FADE_EXEMPT``
types, when decay is off (``[ranking] decay = false``) and when nothing is known. The ranking
multiplies the recency component by it (``rank.score.rank``) and the hooks order near-ties by it
(``integrations.agents.core``): a memory nobody was given for long, on code nobody touched for
long, drops below an equally relevant one that is in use; it is never hidden.

Standard library only (the agent hooks import it on every tool call).
"""

from __future__ import annotations

import json
import os
import time

from . import infra

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    import sqlite3
    from collections.abc import Iterable

    from .layout import Layout

#: The kinds of use recorded.
GIVEN, SEARCHED, OPENED = "given", "searched", "opened"
USES = (GIVEN, SEARCHED, OPENED)
#: A folded line (``compact``).
SUM = "sum"
#: Where a use happened (the ``via`` of a record): agent hooks, CLI commands, MCP tools.
VIA = ("session", "prompt", "file", "shell", "failure", "recall", "show", "context", "mcp-search", "mcp-get",
       "mcp-context")
#: Types whose memories never fade: a rule holds until it is retired, however long nobody touched its
#: code (the next person to touch it must still see it).
FADE_EXEMPT = frozenset({"constraint"})
#: Seconds in a day (the half-life is configured in days).
DAY_S = 86_400
#: Past this size (bytes) the log is folded to one line per memory (``compact``): about 80,000 records.
COMPACT_AT_BYTES = 8_000_000

_pending: dict[str, list[str]] = {}


def _line(use: str, via: str, ids: list[str], now: float | None) -> str:
    t = int(time.time() if now is None else now)
    return json.dumps({"t": t, "use": use, "via": via, "ids": ids}, ensure_ascii=True, separators=(",", ":"))


def note(lay: Layout, use: str, via: str, ids: Iterable[str], now: float | None = None) -> None:
    """Keep a record of ``ids`` (``use`` by ``via``) for the next ``flush``; nothing for no ids."""
    ids = [i for i in dict.fromkeys(ids) if i]
    if ids:
        _pending.setdefault(os.fspath(lay.usage_log), []).append(_line(use, via, ids, now))


def flush() -> None:
    """Append the records ``note`` kept, one ``infra.append_records`` per log; never raises (a hook
    never fails on this: what cannot be written is dropped)."""
    pending = dict(_pending)
    _pending.clear()
    from pathlib import Path

    for path, lines in pending.items():
        try:
            infra.append_records(Path(path), lines)
        except OSError:
            pass


def record(lay: Layout, use: str, via: str, ids: Iterable[str], now: float | None = None) -> None:
    """``note`` then ``flush``: one append now (the CLI and MCP). Never raises."""
    note(lay, use, via, ids, now)
    flush()


def parse(line: bytes) -> dict[str, object] | None:
    """One log line as a record (``t`` an int, ``use`` one of ``USES`` or ``SUM``, ``ids`` a list of
    strings); None for a line that is not one (a torn or foreign line is skipped, never an error)."""
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    if not isinstance(rec, dict) or not isinstance(rec.get("t"), int):
        return None
    ids = rec.get("ids")
    if rec.get("use") not in (*USES, SUM) or not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return None
    return rec


def read(path: os.PathLike[str] | str, offset: int = 0) -> tuple[list[dict[str, object]], int]:
    """The records of the log at ``path`` from byte ``offset`` to its last complete line, and the offset after
    it (a line still being written is left for the next read). ([], offset) when the file is missing.

    Raises:
        OSError: the file exists but cannot be read.
    """
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return [], offset
    end = data.rfind(b"\n") + 1
    out = [r for r in (parse(ln) for ln in data[:end].splitlines() if ln.strip()) if r is not None]
    return out, offset + end


Counts = dict[str, list[int]]  # id → [given, searched, opened, last use (s)]


def tally(records: Iterable[dict[str, object]], into: Counts | None = None) -> Counts:
    """Counts per memory id of ``records``: id → [given, searched, opened, last use in seconds]."""
    out: Counts = {} if into is None else into
    for rec in records:
        t = int(rec["t"])  # type: ignore[call-overload]  # parse() checked it is an int
        use = rec["use"]
        for mid in rec["ids"]:  # type: ignore[attr-defined]  # parse() checked it is a list of str
            c = out.setdefault(mid, [0, 0, 0, 0])
            if use == SUM:
                for i, k in enumerate(USES):
                    v = rec.get(k)
                    c[i] += v if isinstance(v, int) else 0
            else:
                c[USES.index(str(use))] += 1
            c[3] = max(c[3], t)
    return out


def compact(lay: Layout, *, at_bytes: int = COMPACT_AT_BYTES) -> bool:
    """Fold the log into one ``sum`` line per memory when it is larger than ``at_bytes``; returns whether it did.

    Under a lock (one compaction at a time): the log is renamed aside (appends that follow go to a
    new file), folded, and the folded lines appended to the new log, then any line written to the
    old file after the rename (a hook that opened it just before) is appended too, and the old file
    is removed. A compaction killed half-way leaves ``usage.jsonl.fold``, folded by the next one.
    The catalog sees a new file (another inode) and folds it from its start.

    Raises:
        OSError: the log cannot be read or written.
        TimeoutError: another compaction runs.
    """
    log = lay.usage_log
    aside = log.with_name(log.name + ".fold")
    try:
        size = log.stat().st_size
    except FileNotFoundError:
        size = 0
    if size <= at_bytes and not aside.exists():
        return False
    with infra.file_lock(log.with_name(log.name + ".lock"), timeout_s=1.0):
        if not aside.exists():
            try:
                os.replace(log, aside)
            except FileNotFoundError:
                return False
        records, end = read(aside)
        lines = [json.dumps({"t": c[3], "use": SUM, "ids": [mid], GIVEN: c[0], SEARCHED: c[1], OPENED: c[2]},
                            ensure_ascii=True, separators=(",", ":"))
                 for mid, c in sorted(tally(records).items())]
        late, _ = read(aside, end)
        lines += [json.dumps(r, ensure_ascii=True, separators=(",", ":")) for r in late]
        infra.append_records(log, lines)
        aside.unlink()
    return True


def fading(con: sqlite3.Connection, ids: Iterable[str], half_life_days: float | None,
           now: float | None = None) -> dict[str, float]:
    """id → ``fade`` factor of each of ``ids`` known to the catalog ``con`` (``catalog.db.fade_inputs``: its
    type, when written, last used, its code last committed); ``{}`` when decay is off. One query; the
    agent hooks and ``rank.score`` both rank with it."""
    if half_life_days is None:
        return {}
    from .catalog import db as catalog_db
    from .rank.render import epoch

    t = time.time() if now is None else now
    return {mid: fade(mtype, activity(epoch(updated) if updated else None, last, touched), t, half_life_days)
            for mid, (mtype, updated, last, touched) in catalog_db.fade_inputs(con, ids).items()}


def activity(written: float | None, last_used: float | None, touched: float | None) -> float | None:
    """A memory's last activity (seconds since the epoch): the latest of when it was written, last used and
    its code last committed; None when none is known."""
    known = [t for t in (written, last_used, touched) if t]
    return max(known) if known else None


def fade(mtype: str | None, last_activity: float | None, now: float, half_life_days: float | None) -> float:
    """The decay factor of a memory: ``0.5 ** ((now - last_activity) / half-life)``, in (0, 1].

    1.0 when ``half_life_days`` is None (decay off) or not positive, for ``FADE_EXEMPT`` types, when
    ``last_activity`` is unknown or in the future. An exponential half-life (as radioactive decay):
    a memory idle for one half-life weighs half, for two a quarter.
    """
    if not half_life_days or half_life_days <= 0 or mtype in FADE_EXEMPT or not last_activity:
        return 1.0
    age = now - last_activity
    if age <= 0:
        return 1.0
    return float(0.5 ** (age / (half_life_days * DAY_S)))
