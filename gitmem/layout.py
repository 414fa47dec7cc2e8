"""Every path gitmem reads or writes: the committed ``.gitmem/`` folder and the per-clone state in git's folder.

Standard library only: the agent hooks use it on every tool call, so the git directory is found
the way git lays it out on disk (gitrepository-layout(5)), without running git:

* ``<root>/.git`` is a folder: it is the git dir, and the common dir too unless it holds a
  ``commondir`` file;
* ``<root>/.git`` is a file ``gitdir: <path>`` (a linked worktree, a submodule, ``git init
  --separate-git-dir``): ``<path>`` (relative to ``<root>``) is the git dir, and its
  ``commondir`` file, when present, names the common dir (relative to the git dir);
* no ``.git`` leads to it (the dotfiles setup, ``core.worktree``): ``GIT_DIR`` and ``GIT_WORK_TREE`` name it,
  else the user's record of such work trees (``work_trees_file``, written by ``git.Repo``) does
  (docs/git-setups/bare.md).

What lives where (DESIGN.md §3)::

    <root>/.gitmem/                   committed: config.toml, memories/<id>.md, .gitattributes
    <common-dir>/gitmem/              per clone, shared by every worktree, never committed
        bin-dir                       where this machine's gitmem console scripts are (``gitmem install``)
        local/memories/<id>.md        local-scope memories
        spool/ sessions/ logs/        captured events, what each session was given, logs
        usage.jsonl                   when each memory was given, found, opened (``gitmem.usage``)
        agent-edits.jsonl             memory files an agent's file tools wrote (``gitmem.agent_edits``)
        cache/                        symbol tables and import graphs by blob SHA
    <git-dir>/gitmem/                 per worktree (its checkout differs)
        catalog.sqlite                the catalog of memory files, statuses, change log, FTS5
        index/                        an older gitmem's LanceDB index (no longer read; ``gitmem sync`` removes it)
        run/                          locks, markers
    ~/.config/gitmem/                 the user's (``user_config_dir``, XDG honoured)
        config.toml                   [org] and [personal] for every repository
        personal/                     the personal repository (``personal_dir``): a gitmem store of its own
    ~/.cache/gitmem/run/              the user's one warm process (``daemon_run_dir``, 0700): daemon.sock,
                                      daemon.lock, daemon.json, daemon.log

Git treats ignored files in the work tree as disposable (``git worktree remove``, ``git stash
--all``, ``git clean -fdX``); nothing gitmem cannot rebuild lives there any more. Older
versions kept per-clone state in ``.gitmem/local/`` and ``.gitmem/index/``: ``of`` moves them
on first use (``migrate``), never dropping a memory, and says so in one line on stderr.

Catalog keys of memory files are paths relative to the work tree root: ``.gitmem/memories/<id>.md``
for team memories (as git names them) and, for local ones, the relative path to the clone's
folder (``.git/gitmem/local/memories/<id>.md`` in the main worktree,
``../main/.git/gitmem/local/memories/<id>.md`` from a linked one), so ``root / key`` is the file.
"""

from __future__ import annotations

import os
import stat
import sys
from functools import cached_property
from pathlib import Path

#: The committed folder, relative to the work tree root.
GITMEM_DIR = ".gitmem"
#: Team memory files, relative to the work tree root (a git pathspec too).
TEAM_MEMORIES = ".gitmem/memories"
CONFIG_FILE = ".gitmem/config.toml"
ATTRIBUTES_FILE = ".gitmem/.gitattributes"
#: The folder gitmem owns inside the common dir and inside each worktree's git dir.
STATE_DIR = "gitmem"
#: Memory files end with this suffix.
MEMORY_SUFFIX = ".md"
#: The per-clone file (in ``<common-dir>/gitmem/``) naming the folder of this machine's gitmem console scripts,
#: written by ``gitmem install``: the committed agent hook commands read it (they hold no machine path).
BIN_POINTER = "bin-dir"


#: git's variables naming a repository's folder and its work tree (git(1), "ENVIRONMENT"): a work tree whose git
#: folder is elsewhere (the dotfiles setup ``git --git-dir=~/.dotfiles --work-tree=~``, which also sets them for
#: the hooks git runs; exported by hand).
GIT_DIR_ENV = "GIT_DIR"
GIT_WORK_TREE_ENV = "GIT_WORK_TREE"

#: This process's work trees whose git folder is not reached through ``<root>/.git``: realpath of the root ->
#: git dir (filled by ``find_root`` from ``GIT_DIR``/``GIT_WORK_TREE`` and from ``work_trees_file``; read by
#: ``git_dirs``, so a ``Layout`` and a ``git.Repo`` opened later in the process, after the hook's ``GIT_*``
#: variables were scrubbed, still find it).
_LOCATED: dict[str, Path] = {}


def find_root(start: Path) -> Path | None:
    """The work tree root containing ``start`` (absolute), found as git finds it, without running git.

    The nearest folder (``start`` included) holding ``.git``; with ``GIT_DIR`` set, the work tree it names
    (``env_work_tree``) unless a nearer ``.git`` lies inside that work tree (a repository of its own, such as a
    project cloned into a dotfiles home); without either, a work tree whose git folder is elsewhere that an
    earlier gitmem run recorded (``work_trees_file``): what lets an agent hook, which gets only a folder, find
    a dotfiles work tree. Returns None outside any work tree. Pure file-system reads.
    """
    walked = None
    for folder in (start, *start.parents):
        if os.path.lexists(folder / ".git"):
            walked = folder
            break
    if os.environ.get(GIT_DIR_ENV):
        root = env_work_tree(start, walked)
        if root is not None:
            return root
        return walked
    if walked is not None:
        return walked
    if _LOCATED:  # found earlier in this process (GIT_DIR then set, since scrubbed: a hook, a command's next Repo)
        real = os.path.realpath(start)
        inner = [r for r in _LOCATED if _inside(Path(real), Path(r))]
        if inner:
            return Path(max(inner, key=len))
    return _recorded_root(start)


def env_work_tree(start: Path, walked: Path | None = None) -> Path | None:
    """The work tree ``GIT_DIR`` (and ``GIT_WORK_TREE``) name for folder ``start``, or None: ``GIT_DIR`` unset,
    the same repository as ``walked`` (the ``.git`` found above ``start``: git sets ``GIT_DIR`` for a linked
    worktree's hooks), or no work tree to be had without running git (``GIT_DIR`` alone, not a ``.git``
    folder, no work tree recorded for it: ``git.Repo`` says why). Relative values are taken from the current
    folder, as git does. Records the answer for ``git_dirs``.
    """
    value = os.environ.get(GIT_DIR_ENV, "")
    if not value:
        return None
    git_dir = Path(os.path.abspath(value))
    if walked is not None and _same_dir(_dot_git_dir(walked), git_dir):
        return None
    tree = os.environ.get(GIT_WORK_TREE_ENV, "")
    root: Path | None = None
    if tree:
        root = Path(os.path.abspath(tree))
    else:
        for r, g in [*_LOCATED.items(), *_recorded().items()]:
            if _same_dir(g, git_dir):
                root = Path(r)
                break
        if root is None and git_dir.name == ".git" and _inside(start, git_dir.parent):
            root = git_dir.parent
    if root is None:
        return None
    if walked is not None and walked != root and (_inside(walked, root) or not _inside(start, root)):
        return None  # a repository of its own inside that work tree, or a folder outside it in another one
    if not _same_dir(_dot_git_dir(root), git_dir):
        _LOCATED[os.path.realpath(root)] = git_dir
    return root


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _same_dir(a: Path | None, b: Path) -> bool:
    return a is not None and os.path.realpath(a) == os.path.realpath(b)


def _dot_git_dir(root: Path) -> Path | None:
    """The git dir ``root/.git`` leads to, or None (no ``.git``, unreadable)."""
    try:
        return _read_dot_git(root)
    except OSError:
        return None


#: Environment variable naming the file of recorded work trees instead of ``work_trees_file``'s default.
WORK_TREES_ENV = "GITMEM_WORK_TREES_FILE"


def work_trees_file() -> Path:
    """The user's record of work trees whose git folder is not reached through ``.git`` (the dotfiles setup,
    ``core.worktree``): JSON ``{"work_trees": {"<work tree>": "<git dir>"}}``, written by ``git.Repo`` when it
    opens one (``record_work_tree``), read by ``find_root`` when no ``.git`` is above a folder. In
    ``$XDG_STATE_HOME/gitmem/work-trees.json``, else ``~/.local/state/gitmem/work-trees.json``
    (``$GITMEM_WORK_TREES_FILE`` when set to an absolute path). Deleting it only means the next gitmem run
    needs ``GIT_DIR`` and ``GIT_WORK_TREE`` set again."""
    env = os.environ.get(WORK_TREES_ENV, "")
    if env and os.path.isabs(env):
        return Path(env)
    base = os.environ.get("XDG_STATE_HOME", "")
    if not (base and os.path.isabs(base)):
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / STATE_DIR / "work-trees.json"


def _recorded() -> dict[str, Path]:
    """The recorded work trees whose git folder still looks like one (``HEAD`` in it); {} when none or unreadable."""
    import json

    try:
        data = json.loads(work_trees_file().read_bytes())
        trees = data.get("work_trees", {}) if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}
    out: dict[str, Path] = {}
    if isinstance(trees, dict):
        for root, git_dir in trees.items():
            if isinstance(root, str) and isinstance(git_dir, str) and os.path.isabs(root) \
                    and os.path.isabs(git_dir) and os.path.isfile(os.path.join(git_dir, "HEAD")):
                out[root] = Path(git_dir)
    return out


def _recorded_root(start: Path) -> Path | None:
    """The deepest recorded work tree holding ``start`` (its git folder then known to ``git_dirs``), or None."""
    best: tuple[Path, Path] | None = None
    real_start: Path | None = None
    for r, git_dir in _recorded().items():
        root = Path(r)
        if not _inside(start, root):  # reached through a symbolic link (a home under /usr/home …): compare real paths
            real_start = real_start or Path(os.path.realpath(start))
            if not _inside(real_start, Path(os.path.realpath(root))):
                continue
        if os.path.isdir(root) and (best is None or len(root.parts) > len(best[0].parts)):
            best = root, git_dir
    if best is None:
        return None
    _LOCATED[os.path.realpath(best[0])] = best[1]
    return best[0]


def record_work_tree(root: Path, git_dir: Path) -> bool:
    """Record (in ``work_trees_file``) that work tree ``root`` has its git folder at ``git_dir`` (both absolute),
    so that a later gitmem process given only a folder inside ``root`` (an agent hook, a command run without
    ``GIT_DIR``) finds it; the entry of another work tree with the same git folder is replaced. Returns whether
    the file changed. Never raises (a read-only home only loses the convenience)."""
    import json

    from . import infra

    path = work_trees_file()
    root_s, git_s = os.fspath(root), os.fspath(git_dir)
    try:
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            data = {}
        trees = data.get("work_trees") if isinstance(data, dict) else None
        if not isinstance(trees, dict):
            trees = {}
        if trees.get(root_s) == git_s:
            return False
        trees = {r: g for r, g in trees.items() if not (isinstance(g, str) and _same_dir(Path(g), git_dir))}
        trees[root_s] = git_s
        path.parent.mkdir(parents=True, exist_ok=True)
        infra.atomic_write(path, (json.dumps({"work_trees": trees}, indent=1, sort_keys=True) + "\n").encode("utf-8"))
        return True
    except OSError:
        return False


def recorded_git_dir(root: Path) -> Path | None:
    """The git folder ``work_trees_file`` records for work tree ``root``, or None."""
    for r, git_dir in _recorded().items():
        if os.path.realpath(r) == os.path.realpath(root):
            return git_dir
    return None


def separate_git_dir(root: Path) -> Path | None:
    """The git dir of work tree ``root`` when ``root/.git`` does not lead to it (``GIT_DIR``/``GIT_WORK_TREE``,
    ``core.worktree``, a recorded work tree: see ``find_root``), else None: git must then be told both
    (``git_env``)."""
    if _LOCATED:
        found = _LOCATED.get(os.path.realpath(root))
        if found is not None:
            return found
    if os.path.lexists(root / ".git"):
        return None
    git_dir = recorded_git_dir(root)
    if git_dir is not None:
        _LOCATED[os.path.realpath(root)] = git_dir
    return git_dir


def note_work_tree(root: Path, git_dir: Path) -> None:
    """Note, for this process, that work tree ``root``'s git folder is ``git_dir`` (``git.Repo``, once git said
    so: ``core.worktree``)."""
    _LOCATED[os.path.realpath(root)] = git_dir


def git_env(root: Path) -> dict[str, str]:
    """The variables a git command run for work tree ``root`` needs: ``GIT_DIR`` and ``GIT_WORK_TREE`` when its
    git folder is elsewhere (``separate_git_dir``), else {}."""
    git_dir = separate_git_dir(root)
    if git_dir is None:
        return {}
    return {GIT_DIR_ENV: os.fspath(git_dir), GIT_WORK_TREE_ENV: os.fspath(root)}


def _read_dot_git(root: Path) -> Path:
    """The git dir ``root/.git`` leads to. Raises OSError (missing, unreadable, no ``gitdir:`` line)."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    # as git reads it (setup.c, read_gitfile_gently): the whole file, trailing CR/LF stripped,
    # "gitdir: " then the path, which may hold any character (spaces, newlines)
    text = dot_git.read_text("utf-8", errors="surrogateescape").rstrip("\r\n")
    if not text.startswith("gitdir: "):
        raise OSError(f"{dot_git}: no 'gitdir: ' line")
    target = Path(text[len("gitdir: "):])
    return target if target.is_absolute() else root / target


def git_dirs(root: Path) -> tuple[Path, Path]:
    """(git dir, common dir) of the work tree at ``root``, both absolute, read from ``.git`` as git lays it out
    (or, for a work tree whose git folder is elsewhere, from ``separate_git_dir``).

    Raises:
        OSError: ``root/.git`` is missing, unreadable, or a file without a ``gitdir:`` line.
    """
    separate = separate_git_dir(root)
    git_dir = separate if separate is not None else _read_dot_git(root)
    git_dir = Path(os.path.normpath(git_dir))
    common = git_dir
    try:
        rel = (git_dir / "commondir").read_text("utf-8", errors="surrogateescape").rstrip("\r\n")
    except OSError:
        rel = ""
    if rel:
        p = Path(rel)
        common = Path(os.path.normpath(p if p.is_absolute() else git_dir / p))
    return git_dir, common


class Layout:
    """The paths of one work tree. Build with ``of(root)``; attributes are absolute ``Path``s.

    Raises (constructor):
        OSError: the git directory cannot be found from ``root/.git``.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.git_dir, self.common_dir = git_dirs(root)

    # -- committed, in the work tree -------------------------------------------------------------

    @property
    def gitmem_dir(self) -> Path:
        """``<root>/.gitmem``: only what is committed."""
        return self.root / GITMEM_DIR

    @property
    def config_file(self) -> Path:
        return self.root / CONFIG_FILE

    @property
    def team_memories_dir(self) -> Path:
        """Team memory files (committed)."""
        return self.root / TEAM_MEMORIES

    # -- per clone (shared by every worktree) ------------------------------------------------------

    @property
    def clone_dir(self) -> Path:
        """``<common-dir>/gitmem``."""
        return self.common_dir / STATE_DIR

    @property
    def bin_pointer(self) -> Path:
        """``<common-dir>/gitmem/bin-dir``: one line, the folder of this machine's gitmem console scripts
        (``gitmem-hook``, ``gitmem`` …), read by the committed agent hook commands (``BIN_POINTER``)."""
        return self.clone_dir / BIN_POINTER

    @property
    def local_memories_dir(self) -> Path:
        """Local-scope memory files (this clone only, never committed)."""
        return self.clone_dir / "local" / "memories"

    @property
    def spool_dir(self) -> Path:
        """Captured agent events, one JSON Lines file per session (``capture.spool``)."""
        return self.clone_dir / "spool"

    @property
    def sessions_dir(self) -> Path:
        """Per agent session: what it was given."""
        return self.clone_dir / "sessions"

    @property
    def logs_dir(self) -> Path:
        return self.clone_dir / "logs"

    @property
    def usage_log(self) -> Path:
        """When each memory was given to an agent, found by a search or opened: JSON Lines, appended
        (``gitmem.usage``); per clone, the only record of use (the catalog folds it)."""
        return self.clone_dir / "usage.jsonl"

    @property
    def agent_edits_log(self) -> Path:
        """Team memory files an agent wrote or edited with its file tools, until gitmem marks them as the agent's
        text: JSON Lines, appended (``gitmem.agent_edits``)."""
        return self.clone_dir / "agent-edits.jsonl"

    @property
    def xrepo_checks_file(self) -> Path:
        """The last check of each cross-repository anchor at its repository (``gitmem.org.checks``), per clone;
        rebuilt by the next ``gitmem stale`` or ``gitmem org check``."""
        return self.clone_dir / "xrepo-checks.json"

    @property
    def problems_dir(self) -> Path:
        """Jobs of gitmem's hooks that failed to do what they exist for, one file each until the job
        next succeeds (``gitmem.problems``; ``doctor`` reports them)."""
        return self.clone_dir / "problems"

    def log_file(self, name: str) -> Path:
        """``<logs>/<name>`` (``hooks.log``, ``agent-hooks.log``, ``consolidate.log``, ``mcp.log`` …)."""
        return self.logs_dir / name

    @property
    def cache_dir(self) -> Path:
        """Caches keyed by content (symbol tables, import lists by blob SHA); safe to delete."""
        return self.clone_dir / "cache"

    # -- per worktree ------------------------------------------------------------------------------

    @property
    def worktree_dir(self) -> Path:
        """``<git-dir>/gitmem``: state that depends on this worktree's checkout."""
        return self.git_dir / STATE_DIR

    @property
    def catalog_file(self) -> Path:
        """The SQLite catalog of memory files (derived; rebuilt from the files at any time)."""
        return self.worktree_dir / "catalog.sqlite"

    @property
    def index_dir(self) -> Path:
        """Where gitmem before issue 25 kept its LanceDB index (derived; no longer read: ``gitmem sync`` removes
        it, ``doctor`` names it). The search's tables are in the catalog (``catalog.vectors``)."""
        return self.worktree_dir / "index"

    @property
    def run_dir(self) -> Path:
        """Locks, markers and the warm process's socket."""
        return self.worktree_dir / "run"

    @property
    def share_pending(self) -> Path:
        """``<worktree state>/share-pending``: written by a pre-commit hook before it shares (one line, the commit
        HEAD was then; empty before the first commit), removed once it has; left by a step cut short, so the
        next commit shares what it left (``hook_entry``, ``ops.share``)."""
        return self.worktree_dir / "share-pending"

    @property
    def daemon_socket(self) -> Path:
        """The user's warm process's Unix domain socket (``gitmem.daemon``; the same for every repository and
        worktree): ``daemon_socket()``."""
        return daemon_socket()

    @property
    def daemon_pid_file(self) -> Path:
        """The user's warm process's record (JSON: pid, version, socket, started), written by it while it serves:
        ``daemon_run_dir() / "daemon.json"``."""
        return daemon_run_dir() / "daemon.json"

    @property
    def daemon_lock(self) -> Path:
        """Held (``flock``) by the user's one warm process for its whole life: ``daemon_run_dir() / "daemon.lock"``."""
        return daemon_run_dir() / "daemon.lock"

    @property
    def legacy_daemon_record(self) -> Path:
        """Where gitmem before 0.2 kept this worktree's own warm process's record (``<run>/daemon.json``): read by
        ``gitmem daemon stop --all`` to find such a process."""
        return self.run_dir / "daemon.json"

    # -- memory files ------------------------------------------------------------------------------

    @cached_property
    def local_key_prefix(self) -> str:
        """Catalog key of the local memory folder: its path relative to ``root`` (POSIX)."""
        return Path(os.path.relpath(self.local_memories_dir, self.root)).as_posix()

    def memory_dirs(self) -> tuple[tuple[str, Path], tuple[str, Path]]:
        """((key prefix, folder) of team memories, (key prefix, folder) of local ones)."""
        return (TEAM_MEMORIES, self.team_memories_dir), (self.local_key_prefix, self.local_memories_dir)

    def memory_file(self, key: str) -> Path:
        """The file of catalog key ``key`` (see the module docstring)."""
        return Path(os.path.normpath(self.root / key))

    def memory_key(self, path: Path) -> str:
        """The catalog key of memory file ``path`` (absolute)."""
        return Path(os.path.relpath(path, self.root)).as_posix()

    def is_local_key(self, key: str) -> bool:
        return key.startswith(self.local_key_prefix + "/")

    def display(self, path: Path) -> str:
        """``path`` for messages: relative to the work tree root when inside it, else absolute."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


#: Longest socket path used as is (bytes); a longer one moves to ``short_socket_dir`` (AF_UNIX's
#: ``sun_path`` is 108 bytes on Linux and 104 on macOS, the terminating NUL included).
SOCKET_PATH_MAX = 100


def short_socket_dir() -> Path:
    """Where sockets whose natural path is too long go: ``/tmp/gitmem-<uid>``. Whoever creates it makes it 0700
    and checks it is the user's own (``gitmem.daemon.client.private_dir_ok``). Not ``$XDG_RUNTIME_DIR``: a
    desktop session sets it and an ssh session or a cron job of the same user does not, and two socket paths
    for one process left the session without it running every command cold (``daemon_run_dir``)."""
    return Path("/tmp") / f"gitmem-{os.getuid()}"


#: Environment variable naming the folder of the user's warm process (socket, lock, record, log) instead of
#: ``daemon_run_dir``'s default: tests and benchmarks run a process of their own with it.
RUN_DIR_ENV = "GITMEM_RUN_DIR"


def daemon_run_dir() -> Path:
    """The folder of the user's one warm process (``gitmem.daemon``): its socket, lock, record and log.

    ``$GITMEM_RUN_DIR`` when that is an absolute path, else ``$XDG_CACHE_HOME/gitmem/run``, else
    ``~/.cache/gitmem/run``. Not ``$XDG_RUNTIME_DIR``: it is set in a desktop session and unset in an ssh
    session or a cron job of the same user, and two answers would mean two processes. The server makes it 0700;
    clients use it only when it is a private folder of this user (``gitmem.daemon.client.private_dir_ok``).
    """
    env = os.environ.get(RUN_DIR_ENV, "")
    if env and os.path.isabs(env):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not (base and os.path.isabs(base)):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / STATE_DIR / "run"


def daemon_socket() -> Path:
    """The user's warm process's socket: ``daemon_run_dir() / "daemon.sock"``; when that path is longer than
    ``SOCKET_PATH_MAX`` bytes, ``<short_socket_dir()>/<hash of the run folder>.sock`` instead."""
    run = daemon_run_dir()
    path = run / "daemon.sock"
    if len(os.fsencode(path)) <= SOCKET_PATH_MAX:
        return path
    import hashlib

    digest = hashlib.sha256(os.fsencode(run)).hexdigest()[:24]
    return short_socket_dir() / f"{digest}.sock"


def user_config_dir() -> Path:
    """The user's gitmem folder (XDG Base Directory spec): ``$XDG_CONFIG_HOME/gitmem`` when that is an absolute
    path, else ``~/.config/gitmem``. It holds the user's ``config.toml`` (``user_config_file``) and, by default, the
    personal scope's repository (``personal_dir``). Nothing of a project is written here."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    if not (base and os.path.isabs(base)):
        base = os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / STATE_DIR


def user_config_file() -> Path:
    """The user's ``config.toml`` (``[org]`` and ``[personal]`` defaults that a project's own config.toml
    overrides for ``[org]``; ``config.scopes``): ``user_config_dir() / "config.toml"``."""
    return user_config_dir() / "config.toml"


#: Environment variable naming the personal scope's repository instead of ``user_config_dir() / "personal"``.
PERSONAL_DIR_ENV = "GITMEM_PERSONAL_DIR"


def personal_dir() -> Path:
    """The personal scope's git repository (issue 21: memories of the person, given in every repository, never
    committed into a project): ``$GITMEM_PERSONAL_DIR`` when set to an absolute path, else
    ``user_config_dir() / "personal"``. It may not exist yet (``gitmem personal init`` makes it)."""
    env = os.environ.get(PERSONAL_DIR_ENV, "")
    if env and os.path.isabs(env):
        return Path(env)
    return user_config_dir() / "personal"


def org_cache_dir() -> Path:
    """Where the organisation's repositories reached by URL are mirrored (bare, ``git clone --mirror``, fetched
    when indexed or checked): ``$XDG_CACHE_HOME/gitmem/org`` when that is an absolute path, else
    ``~/.cache/gitmem/org``. Derived: deleting it only costs a fetch."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not (base and os.path.isabs(base)):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / STATE_DIR / "org"


def org_probe_file() -> Path:
    """The user's record of object stores found to honour conditional writes (``org.store``'s probe results,
    one entry per store URI and endpoint, each trusted for a day). Derived: deleting it only costs a probe."""
    return org_cache_dir() / "store-probes.json"


def logs_dir_near(start: Path) -> Path | None:
    """The logs folder of the gitmem repository containing ``start``, or None (not in one); never raises."""
    try:
        root = find_root(Path(os.path.abspath(start)))
        if root is None or not (root / GITMEM_DIR).is_dir():
            return None
        return of(root).logs_dir
    except OSError:
        return None


def linked_path(root: Path | str, rel: str, seen: dict[str, bool] | None = None) -> str | None:
    """The repo-relative file that work-tree path ``rel`` leads to when it is, or lies beyond, a symbolic link
    leading inside the work tree at ``root`` (``CLAUDE.md`` -> ``AGENTS.md``, ``lib/x.py`` -> ``src/lib/x.py``);
    None when no link is on the way or the links lead outside. For the hooks and the focus (stdlib): one
    ``lstat`` per component (``seen``: the answers for leading components, shared by the calls on many paths),
    ``os.path.realpath`` only for a path with a link on it; ``git.Repo.follow`` is the full answer, at any
    revision."""
    seen = {} if seen is None else seen
    parts = rel.split("/")
    for i in range(1, len(parts) + 1):
        lead = "/".join(parts[:i])
        if lead not in seen:
            try:
                seen[lead] = stat.S_ISLNK(os.lstat(os.path.join(root, lead)).st_mode)
            except (OSError, ValueError):
                seen[lead] = False
        if seen[lead]:
            break
    else:
        return None
    try:
        top = os.path.realpath(root)
        full = os.path.join(top, *rel.split("/"))
        real = os.path.realpath(full)
    except (OSError, ValueError):
        return None
    if real == full:
        return None
    out = os.path.relpath(real, top)
    if out == os.pardir or out.startswith(os.pardir + os.sep) or os.path.isabs(out) or out == os.curdir:
        return None
    return Path(out).as_posix()


_CACHE: dict[str, Layout] = {}


def lfs_object(lfs_dir: Path, oid: str) -> Path:
    """Where git-lfs keeps the content whose SHA-256 is ``oid`` (64 hex digits) in its folder ``lfs_dir``
    (``git.Repo.lfs_dir``): ``objects/<oid[0:2]>/<oid[2:4]>/<oid>``, git-lfs's own layout. gitmem only reads it."""
    return lfs_dir / "objects" / oid[0:2] / oid[2:4] / oid


def of(root: Path | str) -> Layout:
    """The ``Layout`` of the work tree at ``root`` (cached per process), old per-clone state migrated first.

    Raises:
        OSError: ``root/.git`` cannot be read.
    """
    key = os.fspath(root)
    lay = _CACHE.get(key)
    if lay is None:
        lay = Layout(Path(os.path.realpath(root)))
        migrate(lay)
        _CACHE[key] = lay
    return lay


# -- moving state out of the work tree (gitmem before 0.2 kept it in .gitmem/local and .gitmem/index) ----

#: Where each entry of the old ``.gitmem/local/`` goes, relative to the clone folder. Anything else
#: there was not gitmem's: it is left where it is (and ``gitmem doctor`` names the folder).
_OLD_LOCAL = {"memories": "local/memories", "spool": "spool", "sessions": "sessions", "logs": "logs",
              "cache": "cache"}
#: Derived files of the old layout that are rebuilt, not moved (the old hook index and its helpers).
_DERIVED = ("hooks.sqlite", "hooks.sqlite-wal", "hooks.sqlite-shm", "hook-config.json", "hooks-sync.requested",
            "index.lock")
#: Seconds a process waits for another one's migration before going on without it (a git or agent
#: hook must never hang on it; the state is moved by whichever process gets the lock).
MIGRATE_LOCK_TIMEOUT_S = 2.0
#: Suffixes of the files a migration keeps beside a memory instead of dropping them (``gitmem doctor``
#: reports them): an old copy that differs from the one already in the clone folder, and a broken
#: (half-written) file that a complete old copy replaced.
KEPT_ASIDE = (".from-worktree", ".broken")


def old_state(root: Path) -> list[Path]:
    """An older gitmem's per-clone folders still in the work tree at ``root`` (``.gitmem/local``, ``/index``)."""
    return [p for p in (root / GITMEM_DIR / "local", root / GITMEM_DIR / "index") if os.path.lexists(p)]


def worktree_roots(lay: Layout) -> list[Path]:
    """The work trees of ``lay``'s clone that git knows, ``lay.root`` first (stdlib: git's files only).

    The main work tree when the common dir is its ``.git`` folder, and every linked work tree
    listed in ``<common-dir>/worktrees/*/gitdir`` that still exists.
    """
    out = [lay.root]
    main = lay.common_dir.parent
    if lay.common_dir.name == ".git" and os.path.isdir(main / ".git"):
        out.append(main)
    try:
        names = sorted(os.listdir(lay.common_dir / "worktrees"))
    except OSError:
        names = []
    for name in names:
        try:
            dot_git = (lay.common_dir / "worktrees" / name / "gitdir").read_text("utf-8", "surrogateescape")
        except OSError:
            continue
        root = Path(dot_git.rstrip("\r\n")).parent
        if os.path.lexists(root / ".git"):
            out.append(root)
    seen: set[str] = set()
    unique = []
    for r in out:
        key = os.path.realpath(r)
        if key not in seen:
            seen.add(key)
            unique.append(r)
    return unique


def migrate(lay: Layout) -> str | None:
    """Move ``.gitmem/local/`` and ``.gitmem/index/`` of an older gitmem into git's folder, for every work tree.

    Every work tree of the clone is looked at (a linked one's old local memories must not go with
    ``git worktree remove`` just because gitmem never ran there). Local memories go to the clone's
    folder (where every worktree sees them), the spool, sessions, logs and caches likewise; an old
    LanceDB index is deleted (derived, no longer read). Each file is moved atomically (a rename, or across file
    systems a copy to a temporary name then a rename), so a kill leaves no half-written memory.
    A file whose destination already holds other content is kept beside it as
    ``<name>.from-worktree`` (or, when the destination is a half-written memory file and the old
    one is whole, the broken one is kept as ``<name>.broken``): never dropped, and ``gitmem
    doctor`` names both. Derived files (the old hook index) are deleted and rebuilt. An old folder
    that is a symlink (shared with other clones) is copied from, never emptied, then unlinked.
    Runs under a lock; a process that cannot get it within ``MIGRATE_LOCK_TIMEOUT_S`` goes on
    without migrating (the one holding it does the work).

    Returns:
        The one line said on stderr (and written to the hooks log), or None when there was
        nothing to move, or another process is moving it. A failure is said on stderr in one
        line and logged; it is tried again by the next gitmem process.
    """
    roots = worktree_roots(lay)
    pending = [r for r in roots if old_state(r)]
    if not pending:
        return None
    from . import infra

    counts = {"memories": 0, "other": 0, "kept": 0}
    try:
        lay.clone_dir.mkdir(parents=True, exist_ok=True)
        with infra.file_lock(lay.clone_dir / "migrate.lock", timeout_s=MIGRATE_LOCK_TIMEOUT_S):
            for root in pending:
                _migrate_worktree(lay if root == lay.root else Layout(root), lay.clone_dir, counts)
    except TimeoutError:
        return None
    except OSError as e:
        olds = ", ".join(lay.display(p) for r in pending for p in old_state(r))
        line = (f"gitmem: could not move an older gitmem's state out of {olds}: {e.strerror or e}; "
                "its local memories are not seen until it is (gitmem doctor)")
        _say(lay, line)
        return None
    if not any(counts.values()):
        return None
    kept = f"; {counts['kept']} kept beside a different copy (gitmem doctor lists them)" if counts["kept"] else ""
    where = lay.display(lay.clone_dir)
    if lay.worktree_dir != lay.clone_dir:
        where += f" and {lay.display(lay.worktree_dir)}"

    def n(count: int, one: str, many: str) -> str:
        return f"{count} {one if count == 1 else many}"

    memories = n(counts["memories"], "local memory", "local memories")
    line = (f"gitmem: moved per-clone state out of the work tree ({memories}, "
            f"{n(counts['other'], 'other file', 'other files')}) into {where}{kept}")
    _say(lay, line)
    return line


def _say(lay: Layout, line: str) -> None:
    """One line on stderr and in the hooks log; never raises."""
    from . import infra

    try:
        sys.stderr.write(line + "\n")
    except (OSError, ValueError):
        pass
    infra.append_log(lay.log_file("hooks.log"), f"{infra.utc_now()} migrate {line}\n")


def _migrate_worktree(wt: Layout, clone_dir: Path, counts: dict[str, int]) -> None:
    """Move one work tree's old state (see ``migrate``). Raises OSError."""
    old_local, old_index = wt.gitmem_dir / "local", wt.gitmem_dir / "index"
    if old_local.is_symlink():
        # shared with other clones: copy what is gitmem's, never empty the folder it leads to
        if old_local.is_dir():
            for entry in sorted(os.listdir(old_local)):
                if entry in _OLD_LOCAL and entry not in _DERIVED:
                    m, k = _merge(old_local / entry, clone_dir / _OLD_LOCAL[entry], copy=True)
                    counts["memories" if entry == "memories" else "other"] += m
                    counts["kept"] += k
        old_local.unlink()
    elif old_local.is_dir():
        for entry in sorted(os.listdir(old_local)):
            src = old_local / entry
            if entry in _DERIVED:
                _remove(src)
            elif entry in _OLD_LOCAL:
                m, k = _merge(src, clone_dir / _OLD_LOCAL[entry], copy=False)
                counts["memories" if entry == "memories" else "other"] += m
                counts["kept"] += k
        _rmdir_tree(old_local)
    if old_index.is_symlink():
        old_index.unlink()
    elif old_index.is_dir():
        _remove(old_index)  # the LanceDB index of an older gitmem: derived, no longer read (issue 25)
        counts["other"] += 1


def _remove(path: Path) -> None:
    import shutil

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except OSError:
            pass


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def _whole_memory_file(path: Path) -> bool:
    """Whether ``path`` looks like a complete memory file: front matter opened and closed (a cheap check)."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return data.startswith(b"---") and b"\n---" in data[3:]


def _aside(dest: Path, suffix: str) -> Path:
    """A free name ``<dest><suffix>``, ``<dest><suffix>2``, …"""
    aside = dest.with_name(dest.name + suffix)
    n = 1
    while os.path.lexists(aside):
        n += 1
        aside = dest.with_name(f"{dest.name}{suffix}{n}")
    return aside


def _place(src: Path, dest: Path, *, copy: bool) -> None:
    """Put file ``src`` at ``dest`` atomically: a rename, else a copy to a temporary name in ``dest``'s folder
    and a rename (a kill leaves no half-written ``dest``); ``src`` is removed unless ``copy``."""
    import shutil

    dest.parent.mkdir(parents=True, exist_ok=True)
    if not copy:
        try:
            os.replace(src, dest)
            return
        except OSError:
            pass  # another file system
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.migrate.tmp")
    shutil.copy2(src, tmp)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, dest)
    if not copy:
        src.unlink()


def _merge(src: Path, dest: Path, *, copy: bool) -> tuple[int, int]:
    """Move (or ``copy``) file or folder ``src`` to ``dest``, merging folders file by file; returns
    (files moved, files kept aside). Derived files are deleted, never carried."""
    if src.is_dir() and not src.is_symlink():
        moved = kept = 0
        dest.mkdir(parents=True, exist_ok=True)
        for name in sorted(os.listdir(src)):
            if name in _DERIVED:
                if not copy:
                    _remove(src / name)
                continue
            m, k = _merge(src / name, dest / name, copy=copy)
            moved += m
            kept += k
        if not copy:
            _rmdir_tree(src)
        return moved, kept
    if src.is_symlink():  # a link inside the old folder: never followed out of it
        if not copy:
            src.unlink()
        return 0, 0
    if not os.path.lexists(dest):
        _place(src, dest, copy=copy)
        return 1, 0
    if dest.is_file() and _same_bytes(src, dest):
        if not copy:
            src.unlink()
        return 0, 0
    if dest.suffix == MEMORY_SUFFIX and not _whole_memory_file(dest) and _whole_memory_file(src):
        os.replace(dest, _aside(dest, ".broken"))  # a half-written copy of an earlier run: the whole one wins
        _place(src, dest, copy=copy)
        return 1, 1
    _place(src, _aside(dest, ".from-worktree"), copy=copy)
    return 0, 1


def _rmdir_tree(path: Path) -> None:
    """Remove ``path`` if only empty folders are left in it."""
    for folder, _dirs, _files in sorted(os.walk(path), key=lambda t: -len(t[0])):
        try:
            os.rmdir(folder)
        except OSError:
            pass
