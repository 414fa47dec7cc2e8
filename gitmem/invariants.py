"""Multi-site invariants: "these places must stay in sync" memories (``invariant: true``).

A change (a commit, or a pull request's range) that changes the code of some of
an invariant memory's anchors and not the others is a break: the post-commit
hook warns, ``gitmem check`` fails. A symbol anchor "changes" when its
fingerprint differs between the two revisions (followed into a renamed file
by git's rename detection); a file anchor when its blob differs.
"""

from __future__ import annotations

from dataclasses import dataclass

from .anchors import Resolver
from .code.symbols import lookup
from .git import Repo
from .model import KIND_COMMIT, Memory


@dataclass
class InvariantBreak:
    """An invariant memory whose sites a change did not change together."""

    memory: Memory
    changed: list[str]
    unchanged: list[str]

    def line(self) -> str:
        return (f"{self.memory.id} \"{self.memory.title}\": changed {', '.join(self.changed)} "
                f"but not {', '.join(self.unchanged)} (they must change together)")


def _renames(repo: Repo, old: str | None, new: str) -> dict[str, str]:
    return {ch.old_path: ch.new_path for ch in repo.changed_files(old, new) if ch.old_path and ch.new_path}


def breaks(repo: Repo, memories: list[Memory], old: str | None, new: str) -> list[InvariantBreak]:
    """The invariant memories among ``memories`` that the change ``old..new`` breaks."""
    inv = [m for m in memories if m.invariant and sum(1 for a in m.anchors if a.kind != KIND_COMMIT and a.local) >= 2]
    if not inv:
        return []
    resolver = Resolver(repo)
    renames = _renames(repo, old, new)
    out = []
    for m in inv:
        changed: list[str] = []
        unchanged: list[str] = []
        for a in m.anchors:
            if a.kind == KIND_COMMIT or not a.path or not a.local:
                continue
            now_path = renames.get(a.path, a.path)
            if a.symbol:
                t_old = (resolver.table(old, a.path) or {}) if old else {}
                t_new = resolver.table(new, now_path) or {}
                n_old = lookup(t_old, a.symbol, fingerprint=a.fingerprint)
                before = t_old.get(n_old) if n_old else None
                n_new = lookup(t_new, n_old or a.symbol, like=before, fingerprint=a.fingerprint)
                after = t_new.get(n_new) if n_new else None
                same = before is not None and after is not None and before.fingerprint == after.fingerprint
            else:
                # through symbolic links: the blobs of the files they lead to (``Resolver.real_path``)
                same = (repo.blob_sha(old, resolver.real_path(old, a.path))
                        == repo.blob_sha(new, resolver.real_path(new, now_path))) if old else False
            (unchanged if same else changed).append(a.key)
        if changed and unchanged:
            out.append(InvariantBreak(m, changed, unchanged))
    return out
