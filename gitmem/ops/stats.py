"""``gitmem stats``: how each memory is used (given, searched, opened), which fade, totals per type and status.

Reads the catalog after a sync (``catalog.sync.sync_hook_index``: rows, statuses of what changed,
the anchored files' last commit times, the clone's use log folded: ``catalog.usage``). The counts
are this clone's (the use log is per clone, never committed).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .. import config, infra, usage
from ..catalog import db as catalog_db
from ..catalog import usage as catalog_usage
from ..catalog.sync import sync_hook_index
from ..rank.render import epoch
from ..store import Store

#: A memory fades in ``Stats.fading`` once its decay factor is below this: idle for more than one half-life.
FADED_BELOW = 0.5
#: The status of a memory whose status the catalog has not checked yet.
UNCHECKED = "unchecked"


@dataclass
class MemoryUse:
    """One memory's use.

    Attributes:
        id, type, title, scope: the memory's.
        status: fresh, moved, stale, deleted, or ``unchecked``.
        given, searched, opened: times it was given in full to an agent, found by a search, opened.
        last_used: UTC stamp of its last use, or None (never used).
        written: its ``updated`` stamp.
        touched: UTC stamp of the last commit that changed one of its anchored files, or None.
        idle_days: days since its last activity (written, used or its code committed), or None.
        fade: its decay factor (``usage.fade``; 1 when decay is off or for a constraint).
    """

    id: str
    type: str
    title: str
    scope: str
    status: str
    given: int
    searched: int
    opened: int
    last_used: str | None
    written: str | None
    touched: str | None
    idle_days: float | None
    fade: float

    @property
    def uses(self) -> int:
        return self.given + self.searched + self.opened


@dataclass
class Stats:
    """What ``gitmem stats`` reports.

    Attributes:
        total: valid memories.
        half_life_days: the decay half-life, or None when decay is off.
        uses: {"given", "searched", "opened"} → total count over all memories.
        never_used: memories never given, searched or opened.
        most_used: the most used (by given + searched + opened, then latest use), at most ``limit``.
        least_used: the least used (fewest uses, then longest idle), at most ``limit``.
        fading: never used and faded below ``FADED_BELOW`` (lowest factor first), at most ``limit``;
            empty when decay is off.
        by_type: type → status → count.
        fading_total: how many memories fade (``fading`` before the limit).
    """

    total: int
    half_life_days: float | None
    uses: dict[str, int]
    never_used: int
    most_used: list[MemoryUse] = field(default_factory=list)
    least_used: list[MemoryUse] = field(default_factory=list)
    fading: list[MemoryUse] = field(default_factory=list)
    by_type: dict[str, dict[str, int]] = field(default_factory=dict)
    fading_total: int = 0


def stats(store: Store, *, limit: int = 10, now: float | None = None) -> Stats:
    """The use of every memory of ``store`` and what fades (see ``Stats``); ``now``: seconds (default: the clock).

    Raises:
        OSError / sqlite3.Error: the catalog cannot be written.
        filelock.Timeout: another sync held the catalog for a minute.
        GitmemError: the repository cannot be read.
    """
    t = time.time() if now is None else now
    sync_hook_index(store)
    half_life = config.decay_half_life(store.config)
    con = catalog_db.connect(store.repo.root)
    if con is None:
        raise OSError(f"cannot open {catalog_db.db_path(store.repo.root)}")
    try:
        catalog_usage.refresh(con, store.layout)
        rows = catalog_usage.memory_uses(con)
    finally:
        con.close()
    mems = [_use(r, half_life, t) for r in rows]
    res = Stats(total=len(mems), half_life_days=half_life,
                uses={k: sum(getattr(m, k) for m in mems) for k in usage.USES},
                never_used=sum(1 for m in mems if not m.uses))
    for m in mems:
        per = res.by_type.setdefault(m.type, {})
        per[m.status] = per.get(m.status, 0) + 1
    res.by_type = {k: dict(sorted(v.items())) for k, v in sorted(res.by_type.items())}
    used = [m for m in mems if m.uses]
    res.most_used = sorted(used, key=lambda m: (-m.uses, -(epoch(m.last_used or "") or 0), m.id))[:limit]
    res.least_used = sorted(mems, key=lambda m: (m.uses, -(m.idle_days or 0), m.id))[:limit]
    fading = sorted((m for m in mems if not m.uses and m.fade < FADED_BELOW), key=lambda m: (m.fade, m.id))
    res.fading_total = len(fading)
    res.fading = fading[:limit]
    return res


def _use(r: dict[str, object], half_life: float | None, now: float) -> MemoryUse:
    """A ``catalog.usage.memory_uses`` row as a ``MemoryUse``."""
    updated = r["updated"] if isinstance(r["updated"], str) else None
    last = r["last_used"] if isinstance(r["last_used"], int) and r["last_used"] else None
    touched = r["touched"] if isinstance(r["touched"], int) and r["touched"] else None
    act = usage.activity(epoch(updated) if updated else None, last, touched)
    mtype = str(r["type"])
    return MemoryUse(id=str(r["id"]), type=mtype, title=str(r["title"]), scope=str(r["scope"] or "team"),
                     status=str(r["status"] or UNCHECKED), given=_int(r["given"]), searched=_int(r["searched"]),
                     opened=_int(r["opened"]), last_used=infra.utc_stamp(last) if last else None, written=updated,
                     touched=infra.utc_stamp(touched) if touched else None,
                     idle_days=None if act is None else max(0.0, (now - act) / usage.DAY_S),
                     fade=usage.fade(mtype, act, now, half_life))


def _int(v: object) -> int:
    return v if isinstance(v, int) else 0
