"""``gitmem init`` and ``gitmem hooks install``: put gitmem where git and the team will use it.

``init`` creates ``.gitmem/`` (config, memories, attributes), registers the merge driver for memory
files and installs the git hooks (chaining existing ones). ``install_hooks`` installs the hooks, and
the merge driver when the repository is initialised. Both are idempotent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..git import Repo
from ..integrations import git_hooks
from ..integrations.merge_driver import install as install_driver
from ..store import init_layout


@dataclass
class InitResult:
    """What ``init`` did: the work tree's root, the files it created (repo-relative), the hooks report."""

    root: Path
    created: list[str]
    hooks: git_hooks.InstallReport | None
    warnings: list[str] = field(default_factory=list)


def init(cwd: str | Path, *, hooks: bool = True) -> InitResult:
    """Initialise the repository holding ``cwd``; ``hooks=False`` installs no git hooks.

    Raises:
        NotARepository: ``cwd`` is not inside a git work tree.
        GitmemError: a sparse checkout leaves out the ``.gitmem/`` HEAD has (a new one would hide the team's
            memories); nothing is written.
    """
    from ..errors import GitmemError
    from ..store import Store, sparse_leaves_out
    from .share import UNIGNORE_HINT, ignored_reason

    repo = Repo(cwd)
    if not (repo.root / ".gitmem").is_dir() and sparse_leaves_out(repo):
        raise GitmemError(f"the sparse checkout leaves out .gitmem/ (committed at HEAD) in {repo.root}: a new "
                          "one would hide the team's memories",
                          "git sparse-checkout add .gitmem, then gitmem init")
    created = init_layout(repo)
    created += [c for c in install_driver(repo.root) if c.startswith(".gitmem/")]
    res = InitResult(root=repo.root, created=created, hooks=git_hooks.install(repo) if hooks else None)
    why = ignored_reason(Store(repo, require=False))
    if why is not None:
        res.warnings.append(f"team memories will not be committed: {why}; {UNIGNORE_HINT}")
    return res


def install_hooks(cwd: str | Path) -> git_hooks.InstallReport:
    """Install the git hooks of the repository holding ``cwd`` (and the merge driver once it is initialised).

    The merge driver's changes are added to the report's notes (``merge driver: <change>``).

    Raises:
        NotARepository: ``cwd`` is not inside a git work tree.
    """
    repo = Repo(cwd)
    report = git_hooks.install(repo)
    if (repo.root / ".gitmem").is_dir():
        report.notes.extend(f"merge driver: {c}" for c in install_driver(repo.root))
    return report


def uninstall_hooks(cwd: str | Path) -> list[str]:
    """Remove gitmem's git hooks (restoring the ones they chained); returns the hooks removed."""
    return git_hooks.uninstall(Repo(cwd))


def hooks_status(cwd: str | Path) -> list[git_hooks.HookState]:
    """Where each of gitmem's git hooks stands (installed, chained, will git run it)."""
    return git_hooks.status(Repo(cwd))
