"""Every path gitmem reads or writes: the committed ``.gitmem/`` folder and the per-clone state in git's folder.

Standard library only: the agent hooks use it on every tool call, so the git directory is found
the way git lays it out on disk (gitrepository-layout(5)), without running git:

* ``<root>/.git`` is a folder: it is the git dir, and the common dir too unless it holds a
  ``commondir`` file;
* ``<root>/.git`` is a file ``gitdir: <path>`` (a linked worktree, a submodule, ``git init
  --separate-git-dir``): ``<path>`` (relative to ``<root>``) is the git dir, and its
  ``commondir`` file, when present, names the common dir (relative to the git dir).

What lives where (DESIGN.md §3)::

    <root>/.gitmem/                   committed: config.toml, memories/<id>.md, .gitattributes
    <common-dir>/gitmem/              per clone, shared by every worktree, never committed
        local/memories/<id>.md        local-scope memories
        spool/ sessions/ logs/        captured events, what each session was given, logs
        cache/                        symbol tables and import graphs by blob SHA
    <git-dir>/gitmem/                 per worktree (its checkout differs)
        catalog.sqlite                the catalog of memory files, statuses, change log, FTS5
        index/                        the LanceDB search index
        run/                          locks, markers, the warm process's socket

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


def find_root(start: Path) -> Path | None:
    """The work tree root containing ``start``: the nearest folder (``start`` included) holding ``.git``.

    Pure file-system walk, no git process. Returns None outside any work tree.
    """
    for folder in (start, *start.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def git_dirs(root: Path) -> tuple[Path, Path]:
    """(git dir, common dir) of the work tree at ``root``, both absolute, read from ``.git`` as git lays it out.

    Raises:
        OSError: ``root/.git`` is missing, unreadable, or a file without a ``gitdir:`` line.
    """
    dot_git = root / ".git"
    if dot_git.is_dir():
        git_dir = dot_git
    else:
        text = dot_git.read_text("utf-8", errors="surrogateescape")
        line = text.splitlines()[0] if text else ""
        if not line.startswith("gitdir:"):
            raise OSError(f"{dot_git}: no 'gitdir:' line")
        target = Path(line[len("gitdir:"):].strip())
        git_dir = target if target.is_absolute() else root / target
    git_dir = Path(os.path.normpath(git_dir))
    common = git_dir
    try:
        rel = (git_dir / "commondir").read_text("utf-8", errors="surrogateescape").strip()
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
        """The LanceDB index (derived)."""
        return self.worktree_dir / "index"

    @property
    def run_dir(self) -> Path:
        """Locks, markers and the warm process's socket."""
        return self.worktree_dir / "run"

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


def logs_dir_near(start: Path) -> Path | None:
    """The logs folder of the gitmem repository containing ``start``, or None (not in one); never raises."""
    try:
        root = find_root(Path(os.path.abspath(start)))
        if root is None or not (root / GITMEM_DIR).is_dir():
            return None
        return of(root).logs_dir
    except OSError:
        return None


_CACHE: dict[str, Layout] = {}


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

#: Where each entry of the old ``.gitmem/local/`` goes, relative to the clone folder.
_OLD_LOCAL = {"memories": "local/memories", "spool": "spool", "sessions": "sessions", "logs": "logs",
              "cache": "cache"}
#: Derived files of the old layout that are rebuilt, not moved (the old hook index and its helpers).
_DERIVED = ("hooks.sqlite", "hooks.sqlite-wal", "hooks.sqlite-shm", "hook-config.json", "hooks-sync.requested",
            "index.lock")


def migrate(lay: Layout) -> str | None:
    """Move ``.gitmem/local/`` and ``.gitmem/index/`` of an older gitmem into the git directory.

    Local memories go to the clone's folder (where every worktree sees them), the spool,
    sessions, logs and caches likewise, the LanceDB index to this worktree's folder. A file
    whose destination already exists with other content is kept beside it as
    ``<name>.from-worktree`` (never dropped); derived files (the old hook index) are deleted
    and rebuilt. Runs under a lock, so concurrent processes move everything once.

    Returns:
        The one line said on stderr (and written to the hooks log), or None when there was
        nothing to move or the move failed (then it is tried again next time, and logged).
    """
    old_local, old_index = lay.gitmem_dir / "local", lay.gitmem_dir / "index"
    if not (os.path.isdir(old_local) or os.path.isdir(old_index)):
        return None
    from . import infra

    try:
        lay.clone_dir.mkdir(parents=True, exist_ok=True)
        with infra.file_lock(lay.clone_dir / "migrate.lock"):
            moved = {"memories": 0, "other": 0, "kept": 0}
            if old_local.is_dir():
                for entry in sorted(os.listdir(old_local)):
                    src = old_local / entry
                    if entry in _DERIVED:
                        _remove(src)
                        continue
                    dest = lay.clone_dir / _OLD_LOCAL.get(entry, entry)
                    counts = _merge_move(src, dest, derived=_DERIVED)
                    moved["memories" if entry == "memories" else "other"] += counts[0]
                    moved["kept"] += counts[1]
                _rmdir_tree(old_local)
            if old_index.is_dir():
                if lay.index_dir.exists():
                    _remove(old_index)  # derived: this worktree already has its own
                else:
                    lay.index_dir.parent.mkdir(parents=True, exist_ok=True)
                    _move(old_index, lay.index_dir)
                moved["other"] += 1
    except OSError as e:
        infra.append_log(lay.log_file("hooks.log"), f"{infra.utc_now()} migrate ERROR {type(e).__name__}: {e}\n")
        return None
    if not any(moved.values()):
        return None
    kept = f"; {moved['kept']} kept beside a copy already there (*.from-worktree)" if moved["kept"] else ""
    line = (f"gitmem: moved per-clone state out of the work tree ({moved['memories']} local memories, "
            f"{moved['other']} other entries) into {lay.display(lay.clone_dir)} and "
            f"{lay.display(lay.worktree_dir)}{kept}")
    try:
        sys.stderr.write(line + "\n")
    except (OSError, ValueError):
        pass
    infra.append_log(lay.log_file("hooks.log"), f"{infra.utc_now()} migrate {line}\n")
    return line


def _move(src: Path, dest: Path) -> None:
    """``os.replace``, or copy and delete across file systems."""
    try:
        os.replace(src, dest)
    except OSError:
        import shutil

        shutil.move(os.fspath(src), os.fspath(dest))


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


def _merge_move(src: Path, dest: Path, *, derived: tuple[str, ...]) -> tuple[int, int]:
    """Move ``src`` (file or folder) to ``dest``, merging folders; returns (files moved, files kept aside)."""
    if src.is_symlink() or not src.is_dir():
        if src.name in derived:
            _remove(src)
            return 0, 0
        if not os.path.lexists(dest):
            dest.parent.mkdir(parents=True, exist_ok=True)
            _move(src, dest)
            return 1, 0
        if dest.is_file() and _same_bytes(src, dest):
            src.unlink()
            return 0, 0
        aside = dest.with_name(dest.name + ".from-worktree")
        n = 1
        while os.path.lexists(aside):
            n += 1
            aside = dest.with_name(f"{dest.name}.from-worktree{n}")
        _move(src, aside)
        return 0, 1
    if not os.path.lexists(dest):
        dest.parent.mkdir(parents=True, exist_ok=True)
        _move(src, dest)
        return sum(len(files) for _, _, files in os.walk(dest)), 0
    moved = kept = 0
    for name in sorted(os.listdir(src)):
        m, k = _merge_move(src / name, dest / name, derived=derived)
        moved += m
        kept += k
    _rmdir_tree(src)
    return moved, kept


def _rmdir_tree(path: Path) -> None:
    """Remove ``path`` if only empty folders are left in it."""
    for folder, _dirs, _files in sorted(os.walk(path), key=lambda t: -len(t[0])):
        try:
            os.rmdir(folder)
        except OSError:
            pass


