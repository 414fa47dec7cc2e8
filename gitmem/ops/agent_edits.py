"""Mark the memory files an agent wrote with its file tools as the agent's text (gitmem's pre-commit hook).

The agent hooks record each team memory file an agent's Write, Edit or ``apply_patch`` changed
(``gitmem.agent_edits``). ``mark_agents_text`` rewrites each such file, through ``memories.write``, as what it
is: ``source: agent``, ``origin: <the agent>``, no ``model``, no review (whatever the agent wrote there: a
``source: user`` or a ``reviewed`` entry is a line anyone can type), and stages it into the commit being made
when the commit holds that file, so the teammates who pull it see the agent's text, not a rule. A person's
``gitmem review ID`` afterwards makes it reviewed (``provenance``), as for any agent's memory.

Must not import: lancedb (the pre-commit hook runs it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import agent_edits
from ..errors import GitError, GitmemError
from ..layout import TEAM_MEMORIES
from ..memfile import FILE_SUFFIX
from ..model import Memory
from ..store import Store


@dataclass
class Marked:
    """What ``mark_agents_text`` did: memories rewritten as the agent's text (``marked``; those of them the
    commit holds were staged), and the line-long ``failed`` reason when it could not do it all ("" if none)."""

    marked: list[Memory] = field(default_factory=list)
    failed: str = ""


def as_agents_text(m: Memory, agent: str) -> bool:
    """Give ``m`` the provenance of ``agent``'s text (``source: agent``, ``origin``, no model, no review).
    Returns whether anything changed."""
    if (m.source, m.origin, m.model, m.reviewed) == ("agent", agent, None, None):
        return False
    m.source, m.origin, m.model, m.reviewed = "agent", agent, None, None
    return True


def mark_agents_text(store: Store, index_file: str | None = None) -> Marked:
    """Rewrite every team memory file an agent's file tools changed since it was last marked or reviewed
    (``agent_edits.pending``) as the agent's text, stage those the commit holds (its staged bytes differ from
    HEAD's: the agent's edit is in this commit) into ``index_file`` (``Repo.stage_with_commit``), and mark them
    done. A file that is gone is done; one that does not parse stays pending (``gitmem check`` reports it).

    Never raises for one file: the reason of the first failure is in ``Marked.failed`` and its memory stays
    pending, so the next commit tries again.
    """
    out = Marked()
    pending = agent_edits.pending(store.layout)
    if not pending:
        return out
    done: list[str] = []
    stage: list[str] = []
    for mid, agent in sorted(pending.items()):
        rel = f"{TEAM_MEMORIES}/{mid}{FILE_SUFFIX}"
        path = store.repo.root / rel
        if not path.is_file():
            done.append(mid)
            continue
        try:
            from ..memfile import read
            from ..memories import write

            m = read(path, display=rel)[0]
            in_commit = store.repo.read_staged(rel, index_file) != store.repo.read("HEAD", rel)
            if as_agents_text(m, agent):
                write(store, [m])
                out.marked.append(m)
                if in_commit:
                    stage.append(rel)
            done.append(mid)
        except (GitmemError, OSError) as e:
            out.failed = out.failed or f"{rel}: {e}".splitlines()[0][:200]
    try:
        store.repo.stage_with_commit(stage, index_file)
    except GitError as e:
        out.failed = out.failed or f"staging failed: {e.message}"[:200]
        done = [d for d in done if f"{TEAM_MEMORIES}/{d}{FILE_SUFFIX}" not in stage]
    agent_edits.done(store.layout, done)
    return out


def summary(res: Marked) -> str | None:
    """The pre-commit line: ``gitmem: 1 memory an agent edited is marked as the agent's text: <id> <title>``
    (the first three named), and the failure if any; None when nothing happened."""
    lines = []
    if res.marked:
        n = len(res.marked)
        named = ", ".join(f"{m.id} {m.title}" for m in res.marked[:3]) + (" …" if n > 3 else "")
        lines.append(f"gitmem: {n} {'memory' if n == 1 else 'memories'} an agent edited "
                     f"{'is' if n == 1 else 'are'} marked as the agent's text: {named}")
    if res.failed:
        lines.append(f"gitmem: could not mark a memory an agent edited as the agent's text ({res.failed}); "
                     "the next commit tries again")
    return "\n".join(lines) or None
