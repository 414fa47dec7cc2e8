"""``gitmem personal init|push|pull|status|path`` and the ``--personal`` side of ``remember``, ``recall`` and ``list``.

The personal repository (``gitmem.personal``) is a git work tree holding a gitmem store; these ops create it (or
clone it from a remote), keep it in step with that remote (plain git through ``gitmem.git``: push, fetch and merge
with gitmem's merge driver, which ``init`` registers there), write the developer's memories into it (through
``memories.remember`` → ``memories.write``, then one commit there, so ``push`` has something to push) and search
it. Nothing here opens the current project's store: a personal memory is never written into a project's
``.gitmem/``, its catalog or its git state.

Must not import: lancedb (``recall`` reaches it through ``search.lexical.found`` when it runs and the ``all`` extra is
installed).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import layout
from ..errors import GitError, GitmemError
from ..git import Repo, clone_work_tree, init_work_tree
from ..memories import RememberRequest
from ..model import Memory, MemoryStatus, RecallHit
from ..store import Store, init_layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..search.lexical import Mode

#: The remote ``init --remote`` sets and ``push`` / ``pull`` use.
REMOTE = "origin"
#: What is committed in the personal repository: gitmem's folder only (anything else there is the person's).
COMMITTED = layout.GITMEM_DIR
INIT_HINT = "gitmem personal init (or gitmem personal init --remote URL to clone yours)"


def _where() -> Path:
    return layout.personal_dir()


def _no_repo() -> GitmemError:
    return GitmemError(f"no personal repository at {_where()}", INIT_HINT)


#: The personal repository's mark (its own git config, never committed): set by ``init`` in a repository it
#: created, cloned or adopted from outside it, so that working inside the personal repository itself is allowed
#: while a project you work in (``$GITMEM_PERSONAL_DIR`` pointed at it) is refused (``own_repository``).
MARK = "gitmem.personal"
OTHER_FOLDER = f"choose a folder of its own: {layout.PERSONAL_DIR_ENV}=/absolute/path (or unset it for " \
               "~/.config/gitmem/personal), then gitmem personal init"


def _working_root() -> Path | None:
    """The realpath of the git work tree the command runs in (the current directory's), None outside one."""
    try:
        return Repo(Path.cwd()).toplevel()
    except GitmemError:
        return None


def own_repository(d: Path) -> Repo:
    """The personal repository at ``d``, once it is known to be a repository of its own and not the project being
    worked in: the guard of every personal write, ``init`` (on an existing folder), ``push`` and ``pull``.

    ``d`` must be the top of its own git work tree (git's ``--show-toplevel``, symlinks resolved, is ``d``'s
    realpath): a folder without ``.git`` inside another repository would have its memories committed into that
    one. And it must not be the repository the command runs in unless ``init`` marked it personal (``MARK``):
    ``$GITMEM_PERSONAL_DIR`` pointed at a project would write personal memories into the project's ``.gitmem/``;
    nor, unmarked, track files outside ``.gitmem/`` at HEAD (a project reached from outside it; a personal
    repository made before the mark, holding only memories, is adopted by ``init``).
    A personal repository nested in another work tree is allowed (git keeps them apart; ``init`` warns).

    Raises:
        GitmemError: either rule broken (one line, what to do); nothing was changed.
    """
    real = Path(os.path.realpath(d))
    repo: Repo | None = None
    top: Path | None = None
    try:
        repo = Repo(d)
        top = repo.toplevel()
    except GitmemError:
        pass
    if repo is None or top != real:
        where = f" (it is inside the repository {top or repo.root})" if repo is not None else ""
        raise GitmemError(f"{d} is not a git repository of its own{where}: nothing was changed", OTHER_FOLDER)
    if repo.local_config(MARK) == "true":
        return repo
    if _working_root() == real:
        raise GitmemError(f"{d} is the repository you are working in, not a personal repository: nothing was "
                          "changed", OTHER_FOLDER)
    outside = repo.files_at("HEAD", skip_gitmem=True) if repo.has_commits() else []
    if outside:
        raise GitmemError(f"{d} looks like a project, not a personal repository (it tracks {outside[0]}"
                          f"{f' and {len(outside) - 1} more' if len(outside) > 1 else ''} outside .gitmem/): "
                          "nothing was changed",
                          f"{OTHER_FOLDER}; if it is your personal repository: git -C {d} config {MARK} true")
    return repo


def open_store() -> Store:
    """The personal repository's store (``own_repository``'s guard passed).

    Raises:
        GitmemError: there is none yet (``INIT_HINT``); it is not a repository of its own, or it is the project
            being worked in (``own_repository``).
    """
    d = _where()
    if not (d / layout.GITMEM_DIR).is_dir():
        raise _no_repo()
    return Store(own_repository(d))


def refresh_catalog(store: Store) -> None:
    """Bring the personal repository's catalog up to date with its files now (after a pull, a clone, an init),
    so the next hook reads it current. A catalog that cannot be written is the hooks' to rebuild (they start a
    sync when it is missing or out of date)."""
    from ..catalog.sync import sync_hook_index

    try:
        sync_hook_index(store, lock_timeout_s=5.0)
    except Exception:  # noqa: BLE001 - a cache: the hooks rebuild it (catalog.sync logs its own failures)
        pass


def _no_merge_in_progress(repo: Repo, then: str, again: str) -> None:
    """Refuse, before anything is staged, while a pull's merge is under way in the personal repository: committing
    ``.gitmem/`` then would stage the conflicted files with their markers, and git refuses a partial commit during
    a merge anyway. ``then``: what to do next, in the message ("push"); ``again``: the command that does it.

    Raises:
        GitmemError: a merge is in progress (the conflicted files named, or how to finish a resolved one).
    """
    if not repo.merge_in_progress():
        return
    root = repo.root
    conflicts = repo.unmerged_paths()
    if conflicts:
        raise GitmemError(f"a pull left conflicts in {', '.join(conflicts)}: resolve them (or `git -C {root} merge "
                          f"--abort`), then {then}: nothing was changed",
                          f"in {root}: edit each file (keep what is right, drop the <<<<<<< ======= >>>>>>> lines), "
                          f"git add it, git commit; then {again}")
    raise GitmemError(f"a pull's merge is resolved but not committed in {root}: nothing was changed",
                      f"git -C {root} commit --no-edit (or git -C {root} merge --abort), then {again}")


def _commit_pending(repo: Repo, message: str) -> bool:
    """Commit what changed under ``.gitmem/`` and is not committed (a memory edited or forgotten with gitmem in
    the personal repository itself); True when something was."""
    pending = [p for p in repo.status_paths() if p.startswith(COMMITTED + "/")]
    if not pending:
        return False
    before = repo.head()
    return repo.commit_paths([COMMITTED], message) != before


@dataclass
class Initialised:
    """What ``init`` did: the repository's path, whether it was created, cloned from ``remote``, or found."""

    path: Path
    action: str  # "created" | "cloned" | "existing"
    remote: str | None
    memories: int
    notes: list[str] = field(default_factory=list)


def init(remote: str | None = None) -> Initialised:
    """Create the personal repository at ``layout.personal_dir()``, or clone it from ``remote``; idempotent.

    An existing repository is kept as it is (its gitmem folder and merge driver completed); with ``remote`` it
    is pointed at it and what the remote holds is merged in (``pull``). A clone of an empty remote (or of one
    without ``.gitmem/``) gets gitmem's folder in a first commit.

    Raises:
        GitmemError: the path holds something that is not a git work tree; the remote cannot be cloned or
            fetched (git's last line, and what to check); git refused a commit (no identity).
    """
    d = _where()
    notes: list[str] = []
    if (d / ".git").exists():
        action = "existing"
        repo = own_repository(d)
    elif d.exists() and any(d.iterdir()):
        raise GitmemError(f"{d} exists and is not a git repository: nothing was changed",
                          f"move it away, or choose another folder: {layout.PERSONAL_DIR_ENV}=/absolute/path")
    elif remote:
        action = "cloned"
        try:
            repo = clone_work_tree(remote, d)
        except GitError as e:
            raise GitmemError(f"could not clone {remote}: {e.stderr.strip().splitlines()[-1] if e.stderr else e}",
                              "check the URL and that you can reach it (git ls-remote URL); an empty "
                              "repository on the remote is fine") from None
    else:
        action = "created"
        repo = init_work_tree(d)
    _complete(repo, notes)
    if repo.local_config(MARK) != "true":
        repo.set_local_config(MARK, "true")
    notes.extend(_nested_note(repo.root))
    store = Store(repo)
    if action == "existing" and remote:
        if repo.remote_url(REMOTE) != remote:
            repo.set_remote(remote, REMOTE)
            notes.append(f"remote {REMOTE} set to {remote}")
        pulled = pull(store=store)
        notes.extend(pulled.notes)
    refresh_catalog(store)
    return Initialised(d, action, repo.remote_url(REMOTE), _count(store), notes)


def _nested_note(root: Path) -> list[str]:
    """A line about the work tree enclosing the personal repository at ``root`` (a repository of its own inside
    another: git keeps them apart, but the other lists it as untracked), with how to hide it there; [] when none."""
    try:
        outer_repo = Repo(root.parent)
        outer = outer_repo.toplevel()
        exclude = outer_repo.common_dir / "info" / "exclude"  # a dotfiles repository's is not under .git
    except GitmemError:
        return []
    rel = os.path.relpath(root, outer)
    return [f"warning: this folder is inside the repository {outer}, which lists it as untracked ({rel}/): add "
            f"the line /{rel}/ to {exclude} (or choose a folder outside it)"]


def _complete(repo: Repo, notes: list[str]) -> None:
    """gitmem's folder and merge driver in ``repo``, committed when new."""
    from ..integrations.merge_driver import install as install_driver

    created = init_layout(repo)
    created += [c for c in install_driver(repo.root) if c.startswith(layout.GITMEM_DIR + "/")]
    if created or not repo.has_commits():
        try:
            repo.commit_paths([COMMITTED], "gitmem personal: the personal repository")
        except GitError as e:
            raise GitmemError(f"could not commit in {repo.root}: {e.message}",
                              "set your git identity (git config --global user.name / user.email), then run "
                              "gitmem personal init again") from None
        notes.extend(f"created {c}" for c in created)


def _count(store: Store) -> int:
    return len(store.load_all().memories)


@dataclass
class Pushed:
    """What ``push`` did: the branch pushed to ``remote``, and how many commits it sent (the ones no branch of the
    remote held as last fetched; None: git could not count them)."""

    path: Path
    remote: str
    branch: str
    commits: int | None
    notes: list[str] = field(default_factory=list)


def _remote_of(repo: Repo) -> str:
    url = repo.remote_url(REMOTE)
    if url is None:
        raise GitmemError(f"the personal repository at {repo.root} has no remote",
                          f"gitmem personal init --remote URL (or git -C {repo.root} remote add {REMOTE} URL)")
    return url


def _branch_of(repo: Repo) -> str:
    branch = repo.current_branch()
    if branch is None:
        raise GitmemError(f"the personal repository at {repo.root} is not on a branch (detached HEAD)",
                          f"git -C {repo.root} switch main")
    return branch


def push() -> Pushed:
    """Commit what is pending under ``.gitmem/`` and push the current branch to ``origin`` (tracking it).

    Raises:
        GitmemError: no personal repository or remote; a pull's merge is in progress (nothing staged: the files
            in conflict named); the remote has commits this one lacks (pull first); the remote cannot be reached
            (git's last line).
    """
    store = open_store()
    repo = store.repo
    url = _remote_of(repo)
    branch = _branch_of(repo)
    _no_merge_in_progress(repo, "push", "gitmem personal push")
    notes = ["committed memory files changed in the personal repository"] \
        if _commit_pending(repo, "gitmem personal: memories changed here") else []
    upstream = repo.upstream()
    ahead: int | None
    try:
        ahead = repo.count_unpushed(REMOTE)
    except GitError:
        ahead = None
    try:
        repo.push_branch(REMOTE, branch, set_upstream=upstream is None)
    except GitError as e:
        if any(w in e.stderr for w in ("rejected", "fetch first", "non-fast-forward")):
            raise GitmemError(f"the remote {url} has personal memories this machine does not have yet: nothing "
                              "was pushed", "gitmem personal pull, then gitmem personal push") from None
        raise GitmemError(f"could not push to {url}: {e.message}",
                          "check the URL and your access to it (git -C "
                          f"{repo.root} push)") from None
    return Pushed(repo.root, url, branch, ahead, notes)


@dataclass
class Pulled:
    """What ``pull`` did: ``before`` and ``after`` (HEAD), the memory files the merge changed."""

    path: Path
    remote: str
    before: str | None
    after: str | None
    changed: list[str]
    memories: int
    notes: list[str] = field(default_factory=list)


def pull(*, store: Store | None = None) -> Pulled:
    """Fetch ``origin`` and merge its branch of the same name (or the tracked one) into the personal repository,
    memory files merged by gitmem's merge driver; then its catalog is brought up to date (``refresh_catalog``).
    What is pending under ``.gitmem/`` is committed first (a merge needs a clean tree).

    Raises:
        GitmemError: no personal repository or remote; an earlier pull's merge is still in progress; the remote
            cannot be reached; the merge left conflicts (named, with how to finish or undo it; the merge stays in
            progress).
    """
    store = store or open_store()
    repo = store.repo
    url = _remote_of(repo)
    branch = _branch_of(repo)
    notes: list[str] = []
    _no_merge_in_progress(repo, "pull", "gitmem personal pull")
    try:
        repo.fetch_remote(REMOTE)
    except GitError as e:
        raise GitmemError(f"could not fetch {url}: {e.message}",
                          f"check the URL and your access to it (git -C {repo.root} fetch {REMOTE})") from None
    upstream = repo.upstream()
    if upstream is None:
        candidate = f"{REMOTE}/{branch}"
        try:
            repo.resolve(candidate)
        except GitError:
            return Pulled(repo.root, url, repo.head(), repo.head(), [], _count(store),
                          [f"the remote has no branch {branch} yet: nothing to pull (gitmem personal push sends "
                           "yours)"])
        upstream = candidate
    if _commit_pending(repo, "gitmem personal: memories changed here"):
        notes.append("committed memory files changed in the personal repository first")
    before = repo.head()
    notes.extend(_decided(repo, before, upstream))
    try:
        conflicts = repo.merge_from(upstream)
    except GitError as e:
        raise GitmemError(f"could not merge {upstream} into the personal repository: {e.message}",
                          f"commit or move away the changes in {repo.root} (git -C {repo.root} status), then "
                          "gitmem personal pull") from None
    if conflicts:
        raise GitmemError(f"the pull from {url} left conflicts in {', '.join(conflicts)}: the merge is in progress",
                          f"resolve them in {repo.root} (edit each file, git add it, git commit), or undo the "
                          f"pull: git -C {repo.root} merge --abort")
    if repo.upstream() is None:
        repo.set_upstream(branch, upstream)
    after = repo.head()
    changed: list[str] = []
    if after != before:
        prefix = layout.TEAM_MEMORIES + "/"
        changed = sorted({p for c in repo.changed_files(before, after) for p in (c.old_path, c.new_path)
                          if p and p.startswith(prefix)})
    refresh_catalog(store)
    return Pulled(repo.root, url, before, after, changed, _count(store), notes)


def _decided(repo: Repo, ours: str | None, upstream: str) -> list[str]:
    """One line per memory both machines changed since they last agreed whose single values (title, type, …) the
    merge driver will decide field by field (``merge_driver.decided_fields``: the later ``updated`` wins), saying
    which side's value is kept; read before the merge, from the three commits. [] when there is none (or no
    common history)."""
    from ..errors import MemoryFileError
    from ..integrations.merge_driver import decided_fields
    from ..memfile import loads

    if ours is None:
        return []
    theirs = repo.resolve(upstream)
    base = repo.merge_base(ours, theirs)
    if base is None or base in (ours, theirs):
        return []
    prefix = layout.TEAM_MEMORIES + "/"

    def touched(new: str) -> set[str]:
        return {c.new_path for c in repo.changed_files(base, new) if c.new_path and c.new_path.startswith(prefix)
                and c.old_path == c.new_path}

    lines = []
    for path in sorted(touched(ours) & touched(theirs)):
        try:
            versions = [repo.read(rev, path) for rev in (base, ours, theirs)]
            b, o, t = (loads(v.decode("utf-8"), path=path) if v else None for v in versions)
        except (MemoryFileError, UnicodeDecodeError):
            continue  # git's own text merge takes it (and says so in its conflicts)
        if o is None or t is None:
            continue
        decided = decided_fields(b, o, t)
        if decided:
            said = ", ".join(f"{f}: {'this machine' if side == 'ours' else 'the remote'}'s kept" for f, side in decided)
            lines.append(f"{o.id} changed on both sides, merged field by field ({said}: the later updated wins; "
                         f"the other value is in git -C {repo.root} log -p -- {path})")
    return lines


@dataclass
class PersonalStatus:
    """Where the personal repository is and how it stands (``ahead`` / ``behind``: against the tracked branch as
    last fetched; None without one). ``enabled``: whether the repository the command ran in gives personal
    memories (``[personal] enabled``; None outside a repository). ``merging``: a pull's merge is under way;
    ``conflicts``: the files it left in conflict (not counted in ``memories``, which holds the others)."""

    path: Path
    exists: bool
    memories: int = 0
    branch: str | None = None
    remote: str | None = None
    upstream: str | None = None
    ahead: int | None = None
    behind: int | None = None
    uncommitted: list[str] = field(default_factory=list)
    enabled: bool | None = None
    session_budget: int | None = None
    prompt_budget: int | None = None
    merging: bool = False
    conflicts: list[str] = field(default_factory=list)


def status(cwd: str | None = None) -> PersonalStatus:
    """The personal repository's state (no network: ahead and behind are as of the last fetch).

    Raises:
        ConfigError: the user's config.toml is invalid.
    """
    from .. import config
    from ..org.settings import of_config

    d = _where()
    project: dict[str, object] = {}
    root = layout.find_root(Path(os.path.abspath(cwd or os.getcwd())))
    if root is not None and (root / layout.CONFIG_FILE).is_file():
        project = config.read_cached(layout.of(root))
    _, ps = of_config(project, config.load_user())
    st = PersonalStatus(d, exists=(d / layout.GITMEM_DIR).is_dir(), enabled=ps.enabled if root else None,
                        session_budget=ps.session_budget, prompt_budget=ps.prompt_budget)
    if not st.exists:
        return st
    store = open_store()
    repo = store.repo
    st.merging = repo.merge_in_progress()
    st.conflicts = repo.unmerged_paths() if st.merging else []
    conflicted = {(repo.root / p).resolve() for p in st.conflicts}
    loaded = store.load_all()
    st.memories = sum(1 for i in loaded.memories if loaded.paths.get(i, Path()).resolve() not in conflicted)
    st.branch = repo.current_branch()
    st.remote = repo.remote_url(REMOTE)
    st.upstream = repo.upstream()
    if st.upstream is not None:
        try:
            st.ahead, st.behind = repo.ahead_behind(st.upstream)
        except GitError:
            pass
    st.uncommitted = repo.status_paths()
    return st


#: How the hooks read a user config.toml that the commands refuse (``user_config_warning``): the one rule of
#: ``personal.prompt_budget`` and ``org.settings.personal_settings``.
AS_IF_UNSET = "ignored until fixed (agents are given personal memories as if it were not set: only [personal] " \
              "enabled = false turns them off)"


def user_config_warning() -> str | None:
    """One line about the user's config.toml when ``config.load_user`` refuses it (not valid TOML, or a bad
    value such as ``[personal] enabled = "no"``), for the commands that write or search the personal repository
    without depending on it; None when it is fine or missing. The hooks read it without validating
    (``config.read_user_cached``) and log the same line at session start (``integrations.agents.core``)."""
    from ..config import load_user
    from ..errors import ConfigError

    try:
        load_user()
    except ConfigError as e:
        return f"{e.message}: {AS_IF_UNSET} ({e.hint})" if e.hint else f"{e.message}: {AS_IF_UNSET}"
    return None


def _warn_config(warn: Callable[[str], None] | None) -> None:
    line = user_config_warning()
    if line is not None and warn is not None:
        warn(line)


def remember(req: RememberRequest, *, warn: Callable[[str], None] | None = None) -> Memory:
    """Write a personal memory (``memories.remember`` in the personal store: redacted, checked for instruction-like
    lines and size) and commit it there. Personal memories are about the person, not code: no anchors.

    Raises:
        GitmemError: anchors or a revision were given; no personal repository; a pull's merge is in progress
            there (nothing written); see ``memories.remember``.
    """
    from ..memories import remember as do_remember

    if req.anchors or req.rev:
        raise GitmemError("a personal memory has no anchors: it is about you, not the code of one repository",
                          "leave out --anchor and --rev (use --tag for what it is about), or remember it in the "
                          "project without --personal")
    store = open_store()
    _no_merge_in_progress(store.repo, "remember it", "gitmem remember --personal again")
    _warn_config(warn)
    personal = RememberRequest(text=req.text, title=req.title, type=req.type, tags=req.tags, facts=req.facts,
                               scope="team", source=req.source, origin=req.origin)
    m = do_remember(store, personal, warn=warn)
    rel = f"{layout.TEAM_MEMORIES}/{m.id}.md"
    try:
        store.repo.commit_paths([rel], f"gitmem personal: {m.title[:72]}")
    except GitError as e:
        if warn is not None:
            warn(f"the memory is saved in {store.repo.root} but not committed ({e.message}); gitmem personal push "
                 "commits it")
    return m


def forget(mem_id: str) -> Memory:
    """Delete personal memory ``mem_id`` (an id or a unique prefix: ``memories.forget``) and commit the deletion in
    the personal repository (``push`` then sends it).

    Raises:
        GitmemError: no personal repository; a pull's merge is in progress there (nothing deleted); no such memory
            (``MemoryNotFound``); git refused the commit.
    """
    from ..memories import forget as do_forget

    store = open_store()
    _no_merge_in_progress(store.repo, "forget it", f"gitmem forget --personal {mem_id}")
    m = do_forget(store, mem_id)
    store.repo.commit_paths([f"{layout.TEAM_MEMORIES}/{m.id}.md"], f"gitmem personal: forget {m.title[:64]}")
    return m


def recall(query: str, limit: int, *, warn: Callable[[str], None] | None = None,
           note: Callable[[str], None] | None = None) -> tuple[list[tuple[RecallHit, MemoryStatus]], Mode]:
    """The personal repository's memories for ``query`` (``search.lexical.found``: BM25 + vectors, its own index;
    BM25 over its catalog without the ``all`` extra, ``note`` told once), each with its status; and how they
    were found.

    Raises:
        GitmemError: no personal repository.
    """
    from ..search.lexical import found
    from .show import with_status

    store = open_store()
    _warn_config(warn)
    skip = in_conflict(store)
    got, how = found(store, query, limit + len(skip), warn=warn, note=note)
    hits = [h for h in got if h.memory.id not in skip][:limit]
    return list(zip(hits, with_status(store, [h.memory for h in hits]), strict=True)), how


def in_conflict(store: Store) -> set[str]:
    """Ids of the personal memories an unfinished pull left in conflict: files git still lists as unmerged, and
    files whose text holds git's conflict-marker lines (``personal.has_conflict_lines``; a file with both
    ``<<<<<<<`` and ``>>>>>>>`` is not loaded at all: ``memfile.loads``); empty when no merge is under way. The
    personal scope's searches and lists leave them out, as the hooks do (``personal.unconflicted``)."""
    from ..personal import has_conflict_lines

    repo = store.repo
    if not repo.merge_in_progress():
        return set()
    prefix = layout.TEAM_MEMORIES + "/"
    out = {Path(p).stem for p in repo.unmerged_paths() if p.startswith(prefix)}
    out |= {m.id for m in store.load_all().memories.values() if has_conflict_lines(m.title, m.body, *m.facts)}
    return out


def list_all(*, mtype: str | None = None) -> list[MemoryStatus]:
    """The personal repository's memories, newest first (of ``mtype`` only, when given), each with its status.

    Raises:
        GitmemError: no personal repository.
    """
    from ..memories import list_memories
    from .show import listed

    store = open_store()
    skip = in_conflict(store)
    return listed(store, [m for m in list_memories(store, type=mtype) if m.id not in skip])
