"""``gitmem check``: the pull-request gate — does this change leave team memories true, valid and clean?

For the change ``base..HEAD`` (default base: the merge base with the default
branch), one ``Problem`` per:

* ``stale`` — a team memory that a commit of the change made not fresh (its
  anchor's code changed, moved away or was deleted) while its memory file was
  not touched in the change (updated, re-anchored, retired or superseded);
* ``invalid`` — a memory file that does not parse (bad YAML, conflict markers, …);
* ``invariant`` — an ``invariant: true`` memory whose sites the change did not
  change together (``gitmem.invariants``);
* ``secret`` — a memory file holding something the redactor removes (a token, a
  key, a password), which must not be committed.

Work is proportional to the change: only memories anchored to files the change
touched are evaluated. Local-scope memories are never checked (never committed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..analyzer import memories_touching, memory_status
from ..anchors import Resolver
from ..errors import GitmemError
from ..layout import TEAM_MEMORIES
from ..model import Status
from ..store import Store

_MARKER = re.compile(r"\[REDACTED:([\w-]+)\]")


@dataclass
class Problem:
    """One finding: ``kind`` (stale, invalid, secret), the memory id or file, and one line saying what."""

    kind: str
    subject: str
    message: str


def check(store: Store, base: str | None = None) -> tuple[str | None, list[Problem]]:
    """Check the change ``base..HEAD``; returns (the base used, problems).

    Raises:
        GitmemError: ``base`` is not a revision, or the repository has no commits.
    """
    repo = store.repo
    head = repo.head()
    if head is None:
        raise GitmemError("the repository has no commits yet", "commit first")
    base_sha = repo.resolve(base) if base else repo.default_branch_base()
    loaded = store.load_all()
    problems: list[Problem] = []
    for e in loaded.errors:
        problems.append(Problem("invalid", e.path if hasattr(e, "path") else "", e.message))
    from ..capture.redact import redact_text

    for mid, path in loaded.paths.items():
        if loaded.memories[mid].scope != "team":
            continue
        text = path.read_text("utf-8", errors="replace")
        redacted = redact_text(text)
        if redacted != text:
            kinds = sorted(set(_MARKER.findall(redacted)) - set(_MARKER.findall(text))) or ["private"]
            problems.append(Problem("secret", mid, f"{store.display(path)} holds a secret ({', '.join(kinds)}): "
                                                   "remove it before committing"))
    if base_sha is None or base_sha == head:
        return base_sha, problems
    changes = repo.changed_files(base_sha, head)
    touched = {p for ch in changes for p in (ch.old_path, ch.new_path) if p}
    in_change = set(repo.commits_between(base_sha, head))
    resolver = Resolver(repo)
    team = [m for m in loaded.memories.values() if m.scope == "team"]
    from ..invariants import breaks

    for b in breaks(repo, memories_touching(team, touched), base_sha, head):
        if f"{TEAM_MEMORIES}/{b.memory.id}.md" not in touched:
            problems.append(Problem("invariant", b.memory.id, b.line()))
    existed = set(repo.files_at(base_sha))
    for m in memories_touching(team, touched):
        mfile = f"{TEAM_MEMORIES}/{m.id}.md"
        if mfile in touched and mfile in existed:
            continue  # the change updated, re-anchored, retired or superseded it (a memory shared in it is new)
        ms = memory_status(resolver, m, head)
        for a in ms.anchors:
            if a.status == Status.FRESH or a.anchor.commit in in_change:
                continue  # fresh, or anchored inside this change
            if a.commit is not None and a.commit not in in_change:
                continue  # made not fresh before this change: not this change's problem
            where = ""
            if a.status == Status.MOVED and a.path_now:
                where = f" (now {a.path_now}" + (f"::{a.symbol_now})" if a.symbol_now else ")")
            problems.append(Problem("stale", m.id, f"{m.id} \"{m.title}\": {a.anchor.key} {a.status.value}"
                                                   f"{where} — {a.reason}"))
    return base_sha, problems
