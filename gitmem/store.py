"""The memories of a repository: config, memory files (team in ``.gitmem/``, local in git's folder).

Owns: reading ``config.toml`` (stdlib ``tomllib``), loading every memory file (bad files are
collected as errors, the rest keep working), and adding / replacing / removing memory files
atomically. Where things live is ``gitmem.layout``'s (``Store.layout``).

Must not import: lancedb, tree-sitter.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import config as config_mod
from . import infra, memfile
from . import layout as layout_mod
from .config import DEFAULT_CONFIG
from .errors import MemoryFileError, MemoryNotFound, NotInitialized
from .git import Repo
from .model import Memory

GITMEM_DIR = layout_mod.GITMEM_DIR

#: ``.gitmem/.gitignore``: gitmem keeps per-clone state in git's folder (``layout``); gitmem before 0.2 kept it
#: here, and a clone that still runs one must not commit it.
GITIGNORE = ("# per-clone state lives in git's folder (.git/gitmem); older gitmem versions kept it here:\n"
             "index/\nlocal/\n")


def new_id() -> str:
    """A new memory id: a ULID (time-sortable, collision-free across machines)."""
    from ulid import ULID  # imported here: 30 ms that the hooks never need

    return str(ULID())


def sparse_leaves_out(repo: Repo) -> bool:
    """Whether a sparse checkout leaves out the ``.gitmem/`` HEAD has (its index entries skip the work tree): two
    git calls, so asked only when ``.gitmem/`` is not on disk."""
    prefix = GITMEM_DIR + "/"
    return repo.has_commits() and repo.has_path("HEAD", GITMEM_DIR) and any(
        p.startswith(prefix) for p in repo.skip_worktree)


@dataclass
class LoadResult:
    """Every memory that loaded, and one error per file that did not.

    Attributes:
        memories: id → Memory, sorted by id (ULIDs sort by creation time).
        hashes: id → content hash of the file (``memfile.content_hash``).
        paths: id → absolute path of the file.
        errors: one ``MemoryFileError`` per unreadable file.
        retired: retired memories (kept in their files for history; in no ranking, index or status).
    """

    memories: dict[str, Memory] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)
    paths: dict[str, Path] = field(default_factory=dict)
    errors: list[MemoryFileError] = field(default_factory=list)
    retired: dict[str, Memory] = field(default_factory=dict)


class Store:
    """The memories of one work tree: ``.gitmem/`` (committed) and the clone's state in git's folder.

    Raises (constructor):
        NotInitialized: when ``require`` is true and ``.gitmem/`` does not exist.
    """

    def __init__(self, repo: Repo, *, require: bool = True) -> None:
        self.repo = repo
        self.layout = layout_mod.of(repo.root)
        self.dir = self.layout.gitmem_dir
        # a checkout of a commit from before gitmem was committed has no .gitmem/, but the clone's memories remain
        # a sparse cone leaving out the committed .gitmem/ is said even in an initialised clone, never "no memories"
        if require and not self.dir.is_dir() and (not self.layout.clone_dir.is_dir() or sparse_leaves_out(repo)):
            sparse = repo.has_commits() and repo.has_path("HEAD", GITMEM_DIR)
            raise NotInitialized(f"no {GITMEM_DIR}/ in {repo.root}",
                                 f"the sparse checkout leaves it out: git sparse-checkout add {GITMEM_DIR}"
                                 if sparse else "run `gitmem init` in this repository")
        self._config: dict[str, Any] | None = None
        #: One line about config.toml's sections and keys a newer gitmem wrote (``config.unknown_warning``),
        #: filled when ``config`` is first read.
        self.config_warnings: list[str] = []

    # -- layout -----------------------------------------------------------------------------

    @property
    def memories_dir(self) -> Path:
        """Team memories (committed)."""
        return self.layout.team_memories_dir

    @property
    def local_memories_dir(self) -> Path:
        """Local-scope memories (this clone only, never committed; every worktree of the clone sees them)."""
        return self.layout.local_memories_dir

    @property
    def cache_dir(self) -> Path:
        """Per-clone caches (symbol tables by blob SHA); safe to delete."""
        return self.layout.cache_dir

    def enable_symbol_cache(self) -> None:
        """Keep parsed symbol tables on disk under ``cache_dir`` (keyed by blob SHA + extractor version)."""
        from .code.symbols import set_cache_dir

        set_cache_dir(self.cache_dir / "symbols" if self.dir.is_dir() else None)

    @property
    def log_dir(self) -> Path:
        return self.layout.logs_dir

    def display(self, path: Path) -> str:
        """``path`` relative to the repository root when inside it (else absolute), for messages."""
        return self.layout.display(path)

    # -- config -----------------------------------------------------------------------------

    @property
    def config(self) -> dict[str, Any]:
        """``config.toml`` merged over the defaults (sections and keys of a newer gitmem left out, with a line in
        ``config_warnings``).

        Raises:
            ConfigError: the file is not valid TOML, or a known key has a wrong value.
        """
        if self._config is None:
            path = self.dir / "config.toml"
            self._config = config_mod.load(path, self.display(path), self.config_warnings)
        return self._config

    # -- memories ---------------------------------------------------------------------------

    def path_for(self, m: Memory) -> Path:
        base = self.local_memories_dir if m.scope == "local" else self.memories_dir
        return base / f"{m.id}{memfile.FILE_SUFFIX}"

    def memory_files(self) -> list[Path]:
        """All memory files (team then local), sorted by name within each."""
        out: list[Path] = []
        for d in (self.memories_dir, self.local_memories_dir):
            if d.is_dir():
                out.extend(sorted(p for p in d.iterdir()  # regular files only: a FIFO would block
                                  if p.suffix == memfile.FILE_SUFFIX and not p.name.startswith(".")
                                  and p.is_file()))
        return out

    def load_all(self) -> LoadResult:
        """Load every memory file; bad files become errors, never exceptions.

        A memory id present twice (team and local) keeps the team copy and reports the other.
        Served from the hook index (``gitmem.catalog``): every file is ``stat``-ed, and only
        those whose inode, size or times changed are read and parsed again. Falls back to
        reading every file when the hook index cannot be opened (a read-only clone).
        """
        from .catalog import files as catalog_files

        con = catalog_files.open_current(self, full=True)
        if con is None:
            return self._load_direct()
        try:
            res = LoadResult()
            for m, digest, file in catalog_files.all_memories(con):
                res.memories[m.id] = m
                res.hashes[m.id] = digest
                res.paths[m.id] = self.layout.memory_file(file)
            res.errors = catalog_files.errors(con)
            for file in catalog_files.retired_files(con):
                try:
                    m = memfile.read(self.layout.memory_file(file), display=file)[0]
                except MemoryFileError as e:
                    res.errors.append(e)
                    continue
                if m.retired:
                    res.retired[m.id] = m
            return res
        finally:
            con.close()

    def _load_direct(self) -> LoadResult:
        """``load_all`` by reading and parsing every file (no hook index)."""
        res = LoadResult()
        links = self._symlinks()
        for p in self.memory_files():
            outside = self.outside_repo(p) if links and (p in links or p.parent in links) else None
            if outside:
                res.errors.append(outside)
                continue
            try:
                data = p.read_bytes()
            except OSError as e:
                res.errors.append(MemoryFileError(self.display(p), f"cannot read: {e.strerror}"))
                continue
            try:
                m = memfile.parse_bytes(data, p, display=self.display(p))
            except MemoryFileError as e:
                res.errors.append(e)
                continue
            if m.id in res.memories or m.id in res.retired:
                res.errors.append(MemoryFileError(self.display(p), f"duplicate id {m.id}",
                                                  hint="delete one of the two files"))
                continue
            if m.retired:
                res.retired[m.id] = m
                continue
            res.memories[m.id] = m
            res.hashes[m.id] = memfile.content_hash(data)
            res.paths[m.id] = p
        res.memories = dict(sorted(res.memories.items()))
        return res

    def get(self, mem_id: str) -> Memory:
        """The memory with id ``mem_id`` (or a unique prefix of it, case-insensitive).

        Raises:
            MemoryNotFound: no memory, or the prefix is ambiguous.
            MemoryFileError: the file exists but is invalid.
        """
        path = self.find_path(mem_id)
        outside = self.outside_repo(path)
        if outside:
            raise outside
        return memfile.read(path, display=self.display(path))[0]

    def _symlinks(self) -> set[Path]:
        """The memory folders that are (or lie beyond) symlinks, and the symlinks in them (d_type: no stat each)."""
        out: set[Path] = set()
        if self.repo.symlinked_dir(f"{layout_mod.TEAM_MEMORIES}/x"):
            out.add(self.memories_dir)
        if os.path.realpath(self.local_memories_dir) != os.path.normpath(self.local_memories_dir):
            out.add(self.local_memories_dir)
        for d in (self.memories_dir, self.local_memories_dir):
            try:
                with os.scandir(d) as it:
                    out.update(Path(e.path) for e in it if e.is_symlink())
            except OSError:
                pass
        return out

    def outside_repo(self, path: Path) -> MemoryFileError | None:
        """The error for a memory file that is a symlink leading outside where it may be (never read), else None.

        A team memory must resolve inside the work tree, a local one inside the clone's gitmem folder.
        """
        base = self.layout.clone_dir if path.parent == self.local_memories_dir else self.repo.root
        try:
            path.resolve().relative_to(base.resolve())
            return None
        except ValueError:
            return MemoryFileError(self.display(path), "symlink leading outside the repository: not read",
                                   hint="replace the link with the memory file itself, or delete it")

    def find_path(self, mem_id: str) -> Path:
        """The file of memory ``mem_id`` (exact id or unique prefix). Raises MemoryNotFound."""
        for d in (self.memories_dir, self.local_memories_dir):
            p = d / f"{mem_id}{memfile.FILE_SUFFIX}"
            if memfile.valid_id(mem_id) and p.is_file():
                return p
        want = mem_id.upper()
        hits = [p for p in self.memory_files() if p.stem.upper().startswith(want)] if want else []
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise MemoryNotFound(f"no memory with id {mem_id}", "list ids with `gitmem list`")
        names = sorted(h.stem for h in hits)
        shown = ", ".join(names[:MAX_CANDIDATES]) + (f" and {len(names) - MAX_CANDIDATES} more"
                                                     if len(names) > MAX_CANDIDATES else "")
        raise MemoryNotFound(f"id prefix {mem_id} is ambiguous: {len(hits)} memories ({shown})",
                             "give more characters of the id")


#: Ids an ambiguous prefix's error names (``Store.find_path``); the rest are counted.
MAX_CANDIDATES = 5


def init_layout(repo: Repo) -> list[str]:
    """Create ``.gitmem/`` (config, memories, .gitignore); returns what was created.

    Per-clone state is not here but in git's folder (``gitmem.layout``), created on first use.
    Idempotent: existing files are left as they are.
    """
    created: list[str] = []
    d = repo.root / GITMEM_DIR
    for sub in (d, d / "memories"):
        if not sub.is_dir():
            sub.mkdir(parents=True, exist_ok=True)
            created.append(f"{GITMEM_DIR}/{sub.relative_to(d).as_posix()}/".replace("/./", "/"))
    keep = d / "memories" / ".gitkeep"
    if not keep.exists():
        keep.write_bytes(b"")
    for name, text in (("config.toml", DEFAULT_CONFIG), (".gitignore", GITIGNORE)):
        p = d / name
        if not p.exists():
            infra.atomic_write(p, text.encode("utf-8"))
            created.append(f"{GITMEM_DIR}/{name}")
    return created
