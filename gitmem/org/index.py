"""The organisation index: the committed memories of many repositories in LanceDB tables at ``[org] uri``.

Owns the tables ``memories`` and ``repos`` at ``[org] uri`` (derived: rebuildable from the repositories at any
time) and every write to them. The memory files in git stay the truth.

``index(settings, repos)`` reads each repository's committed memory files at its ref (``[org] ref``, else its
default branch) with git alone (``git ls-tree`` and ``git cat-file``: no work tree; a URL is read from a bare mirror,
``org.repos.open_repo``), and writes one row per memory: its text, anchors, provenance (``provenance.of``) and
status at that commit (``anchors.Resolver``: fresh, moved, stale, deleted; ``unchecked`` when it cannot be
resolved), with its vector from the configured embedder (``[embeddings]``; none with ``provider = "none"``).

Incremental. A repository whose ref commit is the one indexed (table ``repos``) is skipped. Otherwise only the
memory files whose blob differs from the blob in their row are read (a changed or added file; ``git ls-tree`` of
the memories folder gives every blob SHA), rows whose file is gone are deleted, and the memories whose anchored
files changed between the indexed commit and the new one (``git diff-tree``) are re-resolved. Comparing blobs
with the rows themselves, not with a diff of the memory files, keeps the result right when another indexer wrote
in between.

Several indexers at once (CI jobs of different repositories, or of the same one, pushing together). Rows are keyed
by ``key`` = ``repo\\x1fid``, declared the table's unenforced primary key when it is created (LanceDB detects two
concurrent ``merge_insert`` of the same key as a conflict and retries; without it they duplicate rows:
``/work/shared/reference/s3-object-storage.md``). A repository's ``repos`` row moves to the new commit only if it
still holds the commit this run started from (a conditional ``merge_insert``, compare-and-swap); a run that loses
the race starts over from the winner's commit, so the rows of a repository are always right at the commit its
``repos`` row names. A write that fails on a commit conflict is retried (``WRITE_ATTEMPTS``).

The full-text index (BM25) covers ``title`` and ``body``; rows written after it was built are searched by a flat
scan beside it, and ``optimize`` folds them in once ``OPTIMIZE_UNINDEXED`` accumulate.

Imports lancedb, pyarrow, tree-sitter (through anchors): never on a hook's path.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from .. import git
from ..errors import EmbeddingError, GitmemError, OrgStoreError
from ..infra import utc_now
from ..layout import TEAM_MEMORIES
from ..model import Memory
from . import repos as org_repos
from .settings import OrgSettings

log = logging.getLogger(__name__)

MEMORIES_TABLE = "memories"
REPOS_TABLE = "repos"
#: Separator of ``repo`` and ``id`` in the ``key`` column: a control character no repository name or memory id
#: holds (``settings.REPO_NAME``, ``memfile.valid_id``).
KEY_SEP = "\x1f"
#: Schema metadata naming the embedder the vectors were made with ("" = no vector column).
EMBEDDER_META = b"gitmem.embedder"
#: Statuses a row can hold: ``model.Status`` values and ``unchecked`` (the anchors could not be resolved).
UNCHECKED = "unchecked"
#: Full-text indexed columns (BM25 over both, fused by ``org.search``).
FTS_COLUMNS = ("title", "body")
#: Rows written since the full-text index was last folded in, above which ``optimize`` runs. Below it a search
#: scans them flat (cheap: a few thousand short rows); each optimize rewrites small fragments.
OPTIMIZE_UNINDEXED = 5000
#: Attempts of one write when another indexer's commit conflicts with it (LanceDB retries some conflicts itself;
#: a delete against a concurrent compaction is raised). Backoff 0.2 s × 2^attempt with jitter.
WRITE_ATTEMPTS = 8
#: Times a repository is re-indexed when another indexer moved its ``repos`` row meanwhile.
CAS_ATTEMPTS = 5
#: Rows deleted per ``DELETE ... IN (...)`` predicate (keeps the SQL short).
DELETE_CHUNK = 500
#: Keys written per ``merge_insert`` (memory is bounded by this many rows and their vectors).
WRITE_CHUNK = 2000


@dataclass(frozen=True)
class RepoReport:
    """What ``index`` did to one repository.

    Attributes:
        repo: its name; location: its path or URL.
        state: ``indexed``, ``skipped`` (ref commit unchanged) or ``failed`` (``error`` and ``hint`` say why).
        before: the commit indexed before ("" = never); after: the commit indexed now ("" when failed).
        added, updated, deleted: rows written new, rewritten (a changed file or a re-resolved status), removed.
        rechecked: memories whose status was re-resolved because their anchored code changed.
        invalid: memory files that could not be parsed (left out; ``errors`` names them).
        memories: the repository's rows after this run.
    """

    repo: str
    location: str
    state: str
    before: str = ""
    after: str = ""
    added: int = 0
    updated: int = 0
    deleted: int = 0
    rechecked: int = 0
    invalid: int = 0
    memories: int = 0
    error: str = ""
    hint: str = ""
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class IndexReport:
    """What ``index`` did: one ``RepoReport`` per repository, in the order given, and the totals."""

    uri: str
    repos: list[RepoReport] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def added(self) -> int:
        return sum(r.added for r in self.repos)

    @property
    def updated(self) -> int:
        return sum(r.updated for r in self.repos)

    @property
    def deleted(self) -> int:
        return sum(r.deleted for r in self.repos)

    @property
    def failed(self) -> list[RepoReport]:
        return [r for r in self.repos if r.state == "failed"]


@dataclass(frozen=True)
class RepoState:
    """A row of the ``repos`` table (``status``)."""

    repo: str
    location: str
    ref: str
    commit: str
    indexed_at: str
    memories: int


def row_key(repo: str, mid: str) -> str:
    """The ``key`` of a memory's row: ``repo`` + ``KEY_SEP`` + id."""
    return f"{repo}{KEY_SEP}{mid}"


def sql_str(value: str) -> str:
    """``value`` as a SQL string literal (quotes doubled) for LanceDB filters."""
    return "'" + value.replace("'", "''") + "'"


# ------------------------------------------------------------------------------------------ schema


def memories_schema(dim: int | None, embedder: str) -> Any:
    """The ``memories`` table's Arrow schema: ``key`` non-null and the unenforced primary key (declared in its
    field metadata, so the table is created with it in one commit); ``vector`` (float32 × ``dim``) only when
    ``dim`` is given; the embedder's name in the schema metadata (``EMBEDDER_META``)."""
    import pyarrow as pa

    fields = [
        pa.field("key", pa.string(), nullable=False,
                 metadata={"lance-schema:unenforced-primary-key:position": "1"}),
        pa.field("repo", pa.string()), pa.field("id", pa.string()), pa.field("path", pa.string()),
        pa.field("title", pa.string()), pa.field("body", pa.string()), pa.field("type", pa.string()),
        pa.field("tags", pa.list_(pa.string())), pa.field("anchors", pa.list_(pa.string())),
        pa.field("status", pa.string()), pa.field("reason", pa.string()), pa.field("trust", pa.string()),
        pa.field("level", pa.string()), pa.field("commit", pa.string()), pa.field("blob", pa.string()),
        pa.field("updated", pa.string()), pa.field("indexed_at", pa.string()),
    ]
    if dim is not None:
        fields.append(pa.field("vector", pa.list_(pa.float32(), dim)))
    return pa.schema(fields, metadata={EMBEDDER_META: embedder.encode()})


def repos_schema() -> Any:
    """The ``repos`` table's Arrow schema: ``repo`` non-null, the unenforced primary key."""
    import pyarrow as pa

    return pa.schema([
        pa.field("repo", pa.string(), nullable=False, metadata={"lance-schema:unenforced-primary-key:position": "1"}),
        pa.field("location", pa.string()), pa.field("ref", pa.string()), pa.field("commit", pa.string()),
        pa.field("indexed_at", pa.string()), pa.field("memories", pa.int64()),
    ])


def open_table(db: Any, name: str) -> Any | None:
    """The table ``name`` of ``db``, or None when it does not exist (never creates it)."""
    try:
        return db.open_table(name)
    except (ValueError, FileNotFoundError):
        return None
    except Exception as e:
        if "not found" in str(e).lower() or "does not exist" in str(e).lower():
            return None
        raise


def _create_or_open(db: Any, name: str, schema: Any) -> Any:
    """Open ``name``, creating it empty with ``schema`` if missing; another process creating it at the same time
    is fine (the loser of the conditional PUT opens the winner's)."""
    for attempt in range(WRITE_ATTEMPTS):
        t = open_table(db, name)
        if t is not None:
            return t
        try:
            return db.create_table(name, schema=schema, exist_ok=True)
        except Exception as e:  # a concurrent create: open the winner's on the next turn
            if attempt == WRITE_ATTEMPTS - 1:
                raise
            log.info("create %s raced (%s); opening it", name, e)
            _backoff(attempt)
    raise AssertionError("unreachable")


def _backoff(attempt: int) -> None:
    time.sleep(0.2 * (2 ** min(attempt, 5)) * (0.5 + random.random()))  # jitter, not security


def _retrying(what: str, fn: Callable[[], Any]) -> Any:
    """``fn()``, retried with backoff when LanceDB reports a commit conflict with another writer."""
    for attempt in range(WRITE_ATTEMPTS):
        try:
            return fn()
        except Exception as e:
            text = str(e).lower()
            if attempt == WRITE_ATTEMPTS - 1 or not any(w in text for w in ("conflict", "retry", "concurrent",
                                                                               "precondition", "already exists")):
                raise
            log.info("%s: commit conflict (%s); retrying", what, str(e).splitlines()[0] if str(e) else e)
            _backoff(attempt)
    raise AssertionError("unreachable")


# ------------------------------------------------------------------------------------------ rows


def _embedding_text(m: Memory) -> str:
    from ..search.index import embedding_text

    return embedding_text(m)


def body_of(m: Memory) -> str:
    """The ``body`` column: the memory's body, then its facts as ``- fact`` lines (searched and shown with it)."""
    facts = "\n".join(f"- {f}" for f in m.facts)
    return "\n\n".join(p for p in (m.body.strip("\n"), facts) if p)


@dataclass
class _Row:
    memory: Memory
    path: str
    blob: str
    status: str
    reason: str


def _rows_table(rows: Sequence[_Row], repo: str, commit: str, schema: Any, embedder: Any | None) -> Any:
    import numpy as np
    import pyarrow as pa

    from .. import provenance

    now = utc_now()
    cols: dict[str, list[Any]] = {n: [] for n in schema.names if n != "vector"}
    for r in rows:
        m = r.memory
        trust = provenance.of(m)
        for name, value in (("key", row_key(repo, m.id)), ("repo", repo), ("id", m.id), ("path", r.path),
                            ("title", m.title), ("body", body_of(m)), ("type", m.type), ("tags", list(m.tags)),
                            ("anchors", [a.key for a in m.anchors]), ("status", r.status), ("reason", r.reason),
                            ("trust", trust.label), ("level", trust.level), ("commit", commit), ("blob", r.blob),
                            ("updated", m.updated), ("indexed_at", now)):
            cols[name].append(value)
    arrays: dict[str, Any] = dict(cols)
    if "vector" in schema.names:
        dim = schema.field("vector").type.list_size
        if rows and embedder is not None:
            vecs = np.ascontiguousarray(embedder.embed([_embedding_text(r.memory) for r in rows]), dtype=np.float32)
            if vecs.shape != (len(rows), dim):
                raise EmbeddingError(f"embedder {embedder.name} returned vectors of shape {vecs.shape}, expected "
                                     f"({len(rows)}, {dim})", "report this as a gitmem bug")
        else:
            vecs = np.zeros((len(rows), dim), dtype=np.float32)
        arrays["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), dim)
    return pa.table(arrays, schema=schema)


# ------------------------------------------------------------------------------------------ the index


class _Index:
    """The two tables of one ``index`` run, opened (and created) once."""

    def __init__(self, settings: OrgSettings, embedder: Any | None) -> None:
        from .store import connect, probe_conditional_writes

        self.settings = settings
        self.embedder = embedder
        self.db = connect(settings)
        probe_conditional_writes(settings)
        name = embedder.name if embedder is not None else ""
        self.memories = _create_or_open(self.db, MEMORIES_TABLE, memories_schema(
            int(embedder.dim) if embedder is not None else None, name))
        have = (self.memories.schema.metadata or {}).get(EMBEDDER_META, b"").decode()
        if have != name:
            raise OrgStoreError(f"the organisation index at {settings.uri} holds vectors of embedder "
                                f"{have or 'none'}; this gitmem is configured with {name or 'none'}",
                                "index with the same [embeddings] as the index was built with, or delete the "
                                "index's folder to rebuild it with this one")
        self.schema = self.memories.schema
        self.repos = _create_or_open(self.db, REPOS_TABLE, repos_schema())

    def repo_state(self, name: str) -> RepoState | None:
        got = self.repos.search().where(f"repo = {sql_str(name)}").limit(None).to_arrow().to_pylist()
        if not got:
            return None
        r = got[-1]
        return RepoState(r["repo"], r["location"] or "", r["ref"] or "", r["commit"] or "", r["indexed_at"] or "",
                         int(r["memories"] or 0))

    def rows_of(self, name: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.memories.search().where(f"repo = {sql_str(name)}").select(
            ["key", "id", "path", "blob", "anchors", "commit"]).limit(None).to_arrow().to_pylist()
        return rows

    def write(self, table: Any, rows: Any, delete_keys: Sequence[str]) -> None:
        for start in range(0, len(delete_keys), DELETE_CHUNK):
            chunk = delete_keys[start:start + DELETE_CHUNK]
            pred = "key IN (" + ", ".join(sql_str(k) for k in chunk) + ")"
            _retrying("delete", lambda p=pred: table.delete(p))  # type: ignore[misc]
        if rows is not None and rows.num_rows:
            _retrying("merge_insert", lambda: table.merge_insert("key").when_matched_update_all()
                      .when_not_matched_insert_all().execute(rows))

    def move_repo(self, state: RepoState, expected: str) -> bool:
        """Set ``state`` as the repository's row if it still holds commit ``expected`` ("" = no row yet):
        True when it did (compare-and-swap through a conditional ``merge_insert``)."""
        import pyarrow as pa

        row = pa.table({"repo": [state.repo], "location": [state.location], "ref": [state.ref],
                        "commit": [state.commit], "indexed_at": [state.indexed_at], "memories": [state.memories]},
                       schema=self.repos.schema)
        cond = f"target.commit = {sql_str(expected)}" if expected else "false"
        res = _retrying("repos", lambda: self.repos.merge_insert("repo").when_matched_update_all(where=cond)
                        .when_not_matched_insert_all().execute(row))
        return bool(res.num_updated_rows or res.num_inserted_rows)

    def maintain(self) -> None:
        """Create the full-text (and ``repo`` bitmap) indexes once there are rows, the vector index (IVF_FLAT) from
        ``search.index.VECTOR_INDEX_MIN_ROWS`` rows on; fold rows written since into them when
        ``OPTIMIZE_UNINDEXED`` accumulated. Best effort: a search works without (flat scan)."""
        from lancedb.index import FTS, Bitmap

        t = self.memories
        try:
            if t.count_rows() == 0:
                return
            names = {i.name for i in t.list_indices()}
            for col in FTS_COLUMNS:
                if f"{col}_idx" not in names:
                    _retrying("fts", lambda c=col: t.create_index(c, config=FTS(), replace=True,  # type: ignore[misc]
                                                                  name=f"{c}_idx"))
            if "repo_idx" not in names:
                _retrying("bitmap", lambda: t.create_index("repo", config=Bitmap(), replace=True, name="repo_idx"))
            if "vector" in t.schema.names and "vector_idx" not in names:
                from lancedb.index import IvfFlat

                from ..search.index import VECTOR_INDEX_MIN_ROWS, VECTOR_PARTITIONS

                # the project's threshold and partitions (search.index: measured there); below it a flat scan
                if t.count_rows() >= VECTOR_INDEX_MIN_ROWS:
                    _retrying("ivf", lambda: t.create_index("vector", config=IvfFlat(
                        distance_type="cosine", num_partitions=VECTOR_PARTITIONS), replace=True, name="vector_idx"))
            if all(f"{c}_idx" in names for c in FTS_COLUMNS):
                unindexed = max(int(t.index_stats(f"{c}_idx").num_unindexed_rows) for c in FTS_COLUMNS)
                if unindexed > OPTIMIZE_UNINDEXED:
                    _retrying("optimize", lambda: t.optimize())
        except Exception as e:  # noqa: BLE001 - indexes speed searches up; rows are searched without them
            log.warning("organisation index maintenance failed: %s", str(e).splitlines()[0] if str(e) else e)


def _embedder(embeddings: Mapping[str, Any] | None) -> Any | None:
    from ..search.embed import embedder_from_config

    return embedder_from_config(dict(embeddings) if embeddings is not None else None)


def index(settings: OrgSettings, repos: Sequence[org_repos.OrgRepo], *,
          progress: Callable[[str], None] | None = None, embeddings: Mapping[str, Any] | None = None,
          fetch: bool = True) -> IndexReport:
    """Index ``repos`` into the organisation index at ``settings.uri`` (see the module docstring).

    Args:
        settings: ``[org]``: the uri, endpoint, region and ref.
        repos: the repositories, in order (``org.repos.configured`` / ``from_argument``).
        progress: called with one line per repository as it starts and ends (the CLI prints them on stderr).
        embeddings: the ``[embeddings]`` table (None: the default, wordllama; ``provider = "none"``: no vectors).
        fetch: fetch mirrors of URLs first (``org.repos.open_repo``).

    Returns:
        An ``IndexReport``: per repository indexed / skipped / failed, rows added, updated and deleted, commits.
        A repository that fails (unreachable, no such ref) is reported and the others are indexed.

    Raises:
        OrgStoreError: the store cannot be opened, written, or ignores conditional writes (nothing written).
        ConfigError: ``[embeddings]`` is invalid.
    """
    started = time.monotonic()
    say = progress or (lambda _line: None)
    ix = _Index(settings, _embedder(embeddings))
    out: list[RepoReport] = []
    for r in repos:
        say(f"{r.name}: indexing {r.location}")
        try:
            rep = _index_repo(ix, r, fetch=fetch)
        except GitmemError as e:
            if isinstance(e, OrgStoreError):
                raise
            rep = RepoReport(r.name, r.location, "failed", error=e.message, hint=e.hint)
        except Exception as e:  # noqa: BLE001 - one repository's failure (a store error mid-write) must not stop the rest
            rep = RepoReport(r.name, r.location, "failed", error=f"{type(e).__name__}: {str(e).splitlines()[0]}"
                             if str(e) else type(e).__name__, hint="run gitmem org index again for this repository")
        say(repo_line(rep))
        out.append(rep)
    ix.maintain()
    return IndexReport(settings.uri, out, time.monotonic() - started)


def repo_line(r: RepoReport) -> str:
    """One line of text for a repository's report (the CLI's and the progress's)."""
    if r.state == "failed":
        return f"{r.repo}: failed: {r.error}"
    if r.state == "skipped":
        return f"{r.repo}: up to date at {r.after[:12]} ({r.memories} memories)"
    before = r.before[:12] or "nothing"
    extra = f", {r.invalid} invalid" if r.invalid else ""
    return (f"{r.repo}: {before} -> {r.after[:12]}: +{r.added} ~{r.updated} -{r.deleted} "
            f"({r.rechecked} re-checked{extra}; {r.memories} memories)")


def _index_repo(ix: _Index, r: org_repos.OrgRepo, *, fetch: bool) -> RepoReport:
    repo = org_repos.open_repo(r, fetch=fetch)
    try:
        new = org_repos.ref_commit(repo, ix.settings.ref)
        totals = [0, 0, 0, 0]
        invalid: list[str] = []
        first_before: str | None = None
        memories = 0
        for attempt in range(CAS_ATTEMPTS):
            state = ix.repo_state(r.name)
            before = state.commit if state else ""
            if first_before is None:
                first_before = before
            if before == new:  # up to date (made so by another indexer, when this is a second attempt)
                if attempt == 0:
                    return RepoReport(r.name, r.location, "skipped", before=before, after=new,
                                      memories=state.memories if state else 0)
                memories = state.memories if state else memories
                break
            counts, invalid, memories = _apply(ix, repo, r.name, before, new)
            totals = [a + b for a, b in zip(totals, counts, strict=True)]
            moved = ix.move_repo(RepoState(r.name, r.location, ix.settings.ref, new, utc_now(), memories), before)
            if moved:
                break
            log.info("%s: another indexer moved it meanwhile; starting over from its commit", r.name)
        else:
            raise GitmemError(f"{r.name}: other indexers kept moving it ({CAS_ATTEMPTS} attempts)",
                              "run gitmem org index again")
        return RepoReport(r.name, r.location, "indexed", before=first_before or "", after=new, added=totals[0],
                          updated=totals[1], deleted=totals[2], rechecked=totals[3], invalid=len(invalid),
                          memories=memories, errors=tuple(invalid))
    finally:
        repo.close()


def _apply(ix: _Index, repo: git.Repo, name: str, before: str, new: str) -> tuple[list[int], list[str], int]:
    """Bring the rows of repository ``name`` to commit ``new`` (the ``repos`` row says ``before``): returns
    ([added, updated, deleted, rechecked], invalid files as ``path: message``, rows now)."""
    from ..anchors import Resolver
    from ..errors import MemoryFileError
    from ..memfile import FILE_SUFFIX, parse_bytes

    files = {p: b for p, b in repo.files_under(new, TEAM_MEMORIES).items()
             if PurePosixPath(p).suffix == FILE_SUFFIX and PurePosixPath(p).parent.as_posix() == TEAM_MEMORIES}
    rows = ix.rows_of(name)
    by_path: dict[str, dict[str, Any]] = {}
    delete: set[str] = set()
    dups: set[str] = set()
    seen_keys: set[str] = set()
    for row in rows:
        if row["key"] in seen_keys or row["path"] in by_path:
            dups.add(row["key"])  # a duplicate (a race of another writer): every copy deleted, rewritten from its file
            if row["path"] in by_path:
                dups.add(by_path.pop(row["path"])["key"])
            continue
        seen_keys.add(row["key"])
        by_path[row["path"]] = row
    gone = [row for p, row in by_path.items() if p not in files]
    delete |= {row["key"] for row in gone}
    to_read = sorted(p for p, blob in files.items() if by_path.get(p, {}).get("blob") != blob)

    # anchored code changed since the indexed commit: those memories' statuses are re-resolved
    changed_code: set[str] | None = None
    if before and repo.commit_exists(before):
        changed_code = set(repo.changed_paths(before, new))
    recheck: list[str] = []
    for p, row in by_path.items():
        if p not in files or p in to_read:
            continue
        anchored = {k.split("::", 1)[0] for k in row["anchors"] or [] if not k.startswith("commit:")}
        if changed_code is None or anchored & changed_code:
            recheck.append(p)

    resolver = Resolver(repo)
    written: list[_Row] = []
    invalid: list[str] = []
    added = updated = rechecked = 0
    for p in [*to_read, *recheck]:
        data = repo.read_blob(files[p])
        try:
            if data is None:
                raise MemoryFileError(p, "blob missing from the repository")
            m = parse_bytes(data, Path(p), display=f"{name}:{p}")
        except MemoryFileError as e:
            invalid.append(e.message)
            if p in by_path:
                delete.add(by_path[p]["key"])
            continue
        status, reason = _status(resolver, m, new)
        old = by_path.get(p)
        if old is not None and old["key"] != row_key(name, m.id):
            delete.add(old["key"])  # the file now holds another id
            old = None
        if old is None:
            added += 1
        elif p in to_read:
            updated += 1
        else:
            rechecked += 1
        written.append(_Row(m, p, files[p], status, reason))
    keys_written = {row_key(name, w.memory.id) for w in written}
    delete = (delete - keys_written) | dups
    # two files with the same id: the first (by path) wins
    unique: dict[str, _Row] = {}
    for w in written:
        unique.setdefault(w.memory.id, w)
    chunks = list(unique.values())
    for start in range(0, max(len(chunks), 1), WRITE_CHUNK):
        part = chunks[start:start + WRITE_CHUNK]
        table = _rows_table(part, name, new, ix.schema, ix.embedder) if part else None
        ix.write(ix.memories, table, sorted(delete) if start == 0 else [])
    now_keys = ({row["key"] for row in by_path.values()} - delete) | keys_written
    return [added, updated + rechecked, len(delete - keys_written), rechecked], invalid, len(now_keys)


def _status(resolver: Any, m: Memory, rev: str) -> tuple[str, str]:
    """(status, reason) of ``m`` at commit ``rev``: ``unchecked`` with the error when resolving fails."""
    from ..analyzer import memory_status
    from ..catalog.sync import status_reason

    try:
        ms = memory_status(resolver, m, rev)
    except GitmemError as e:
        return UNCHECKED, e.message
    except Exception as e:  # noqa: BLE001 - a parser or git failure on one memory must not stop the index
        return UNCHECKED, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return ms.status.value, status_reason(ms)


def states(settings: OrgSettings) -> list[RepoState]:
    """Every repository's row of the ``repos`` table, by name ([] when nothing was indexed). Reads only.

    Raises:
        OrgStoreError: the store cannot be opened or read.
    """
    from .store import connect

    db = connect(settings)
    try:
        t = open_table(db, REPOS_TABLE)
        got = t.search().limit(None).to_arrow().to_pylist() if t is not None else []
    except Exception as e:  # lancedb raises many types: one line for the person
        raise OrgStoreError(f"cannot read the organisation index at {settings.uri}: "
                            f"{str(e).splitlines()[0] if str(e) else type(e).__name__}",
                            "check [org] uri and the credentials (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)") from e
    rows = {r["repo"]: RepoState(r["repo"], r["location"] or "", r["ref"] or "", r["commit"] or "",
                                 r["indexed_at"] or "", int(r["memories"] or 0)) for r in got}
    return [rows[k] for k in sorted(rows)]
