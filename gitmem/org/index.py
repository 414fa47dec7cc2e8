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
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from .. import git
from ..config import DEFAULT_MAX_CHARS
from ..errors import EmbeddingError, GitmemError, OrgNameTaken, OrgStoreError
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
#: From this many rows on, vectors get an IVF_FLAT index (k-means partitions, exact vectors inside): a flat scan
#: of 100,000 256-dim vectors took 270 ms on a 2-core machine under load (36 ms quiet, reference/lancedb.md §4),
#: the index 8 ms; building it took 3 s (bench/README.md; measured on the repository's LanceDB index that gitmem
#: kept before issue 25, the same LanceDB tables).
VECTOR_INDEX_MIN_ROWS = 20_000
#: IVF partitions (``org.search.VECTOR_NPROBES`` of them scanned per query): 24 of 64 found 95-99 % of the flat
#: top 10 on the 100k bench set (16 of 64: 95.5 %; 8: 83.5 %).
VECTOR_PARTITIONS = 64


@dataclass(frozen=True)
class RepoReport:
    """What ``index`` did to one repository.

    Attributes:
        repo: its name; location: its path or URL.
        state: ``indexed``, ``skipped`` (ref commit unchanged) or ``failed`` (``error`` and ``hint`` say why).
        before: the commit indexed before ("" = never); after: the commit indexed now ("" when failed).
        added, updated, deleted: rows written new, rewritten (a changed file, or a re-resolved status that
            changed), removed (a deleted file, or a memory retired or superseded since: ``model.Memory.retired``).
        rechecked: memories whose file did not change but whose status was re-resolved (their anchored code
            changed, or they have a cross-repository anchor); rewritten only when the status or reason changed.
        foreign: memories with a cross-repository anchor whose status was resolved in this run (new, changed or
            re-checked): checked at the other repository's ref.
        invalid: memory files that could not be parsed (left out; ``errors`` names them).
        truncated: ``REPO:path`` of memories over ``[memory] max_chars``, indexed cut (``safe_memory``).
        redacted: ``REPO:path`` of memories whose secrets were redacted from their row.
        note: why a repository was skipped other than being up to date (``behind the indexed commit X: not
            indexed``: its ref is an ancestor of the commit indexed, e.g. an old CI pipeline run again).
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
    foreign: int = 0
    memories: int = 0
    error: str = ""
    hint: str = ""
    errors: tuple[str, ...] = ()
    truncated: tuple[str, ...] = ()
    redacted: tuple[str, ...] = ()
    note: str = ""


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
    """A row of the ``repos`` table (``status``). ``roots``: the repository's root commits, space-separated and
    sorted (``git.Repo.root_commits``): which repository the name was indexed from ("" = not known: a row of an
    older gitmem, adopted at its next index)."""

    repo: str
    location: str
    ref: str
    commit: str
    indexed_at: str
    memories: int
    roots: str = ""
    #: how many of its memories have cross-repository anchors (re-checked at every run even when its ref did not
    #: move); -1 = not known (a row of an older gitmem: its rows are looked at)
    foreign: int = -1


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
        pa.field("indexed_at", pa.string()), pa.field("memories", pa.int64()), pa.field("roots", pa.string()),
        pa.field("foreign", pa.int64()),
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
            # "retryable", not "retry": object_store's text of a refused request holds "RetryError" (not a conflict)
            if attempt == WRITE_ATTEMPTS - 1 or not any(w in text for w in ("conflict", "retryable", "concurrent",
                                                                               "precondition", "already exists")):
                raise
            log.info("%s: commit conflict (%s); retrying", what, str(e).splitlines()[0] if str(e) else e)
            _backoff(attempt)
    raise AssertionError("unreachable")


# ------------------------------------------------------------------------------------------ rows


def _embedding_text(m: Memory) -> str:
    from ..search.hybrid import embedding_text  # the repository's search embeds the same text

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

    def __init__(self, settings: OrgSettings, embedder: Any | None, foreign: Any | None = None) -> None:
        from .store import connect, probe_conditional_writes, store_error

        self.settings = settings
        self.embedder = embedder
        #: ``org.xrepo.Live``: cross-repository anchors checked at their repositories' refs during this run
        self.foreign = foreign
        #: every memory file re-read and its row rewritten (``index(full=True)``)
        self.full = False
        #: ``[memory] max_chars``: the most characters of one indexed memory (``safe_memory``)
        self.max_chars = DEFAULT_MAX_CHARS
        #: ``REPO:path`` of the memories cut to ``max_chars`` / with secrets redacted, in this run
        self.truncated: list[str] = []
        self.redacted: list[str] = []
        self.db = connect(settings)
        probe_conditional_writes(settings)
        name = embedder.name if embedder is not None else ""
        try:
            self.memories = _create_or_open(self.db, MEMORIES_TABLE, memories_schema(
                int(embedder.dim) if embedder is not None else None, name))
            self.repos = _create_or_open(self.db, REPOS_TABLE, repos_schema())
            import pyarrow as pa

            for field in (pa.field("roots", pa.string()), pa.field("foreign", pa.int64())):
                if field.name not in self.repos.schema.names:  # a table of an older gitmem: the column added
                    _retrying(f"add {field.name}", lambda f=field: self.repos.add_columns(f))  # type: ignore[misc]
            #: every repository's row as this run started: the first look of each repository (one read, not one
            #: per repository); a second attempt reads its row again (another indexer moved it)
            self.snapshot: dict[str, RepoState] | None = None
            try:
                self.snapshot = {r["repo"]: _state(r) for r in self.repos.search().limit(None).to_arrow().to_pylist()}
            except Exception:  # noqa: BLE001 - a damaged table: each repository reads its row, and says why it fails
                self.snapshot = None
        except Exception as e:  # lancedb raises many types: one line for the person
            raise store_error(e, settings, "open the organisation index's tables", writing=True) from e
        have = (self.memories.schema.metadata or {}).get(EMBEDDER_META, b"").decode()
        if have != name:
            raise OrgStoreError(f"the organisation index at {settings.uri} holds vectors of embedder "
                                f"{have or 'none'}; this gitmem is configured with {name or 'none'}",
                                "index with the same [embeddings] as the index was built with, or delete the "
                                "index's folder to rebuild it with this one")
        self.schema = self.memories.schema

    def repo_state(self, name: str, *, fresh: bool = True) -> RepoState | None:
        """Repository ``name``'s row (None: not indexed); ``fresh`` False: as this run started (``snapshot``)."""
        if not fresh and self.snapshot is not None:
            return self.snapshot.get(name)
        got = self.repos.search().where(f"repo = {sql_str(name)}").limit(None).to_arrow().to_pylist()
        return _state(got[-1]) if got else None

    def rows_of(self, name: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.memories.search().where(f"repo = {sql_str(name)}").select(
            ["key", "id", "path", "blob", "anchors", "commit", "status", "reason"]).limit(None).to_arrow().to_pylist()
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

        cols = {"repo": [state.repo], "location": [state.location], "ref": [state.ref], "commit": [state.commit],
                "indexed_at": [state.indexed_at], "memories": [state.memories], "roots": [state.roots],
                "foreign": [state.foreign if state.foreign >= 0 else None]}
        row = pa.table({k: v for k, v in cols.items() if k in self.repos.schema.names}, schema=self.repos.schema)
        cond = f"target.commit = {sql_str(expected)}" if expected else "false"
        res = _retrying("repos", lambda: self.repos.merge_insert("repo").when_matched_update_all(where=cond)
                        .when_not_matched_insert_all().execute(row))
        return bool(res.num_updated_rows or res.num_inserted_rows)

    def maintain(self) -> None:
        """Create the full-text (and ``repo`` bitmap) indexes once there are rows, the vector index (IVF_FLAT) from
        ``VECTOR_INDEX_MIN_ROWS`` rows on; fold rows written since into them when
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

                # below the threshold a flat scan
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
          fetch: bool = True, full: bool = False, max_chars: int = DEFAULT_MAX_CHARS) -> IndexReport:
    """Index ``repos`` into the organisation index at ``settings.uri`` (see the module docstring).

    Args:
        settings: ``[org]``: the uri, endpoint, region and ref.
        repos: the repositories, in order (``org.repos.configured`` / ``from_argument``).
        progress: called with one line per repository as it starts (``NAME: indexing LOCATION``; the CLI prints
            them on stderr, the results on stdout: each line is seen once in a terminal).
        embeddings: the ``[embeddings]`` table (None: the default, wordllama; ``provider = "none"``: no vectors).
        fetch: fetch mirrors of URLs first (``org.repos.open_repo``).
        full: re-read every memory file of each repository, not only those whose blob changed, and rewrite its
            rows, even at the commit indexed (``org index --full``: rows an older gitmem wrote, such as a retired
            memory's, are brought to this version's rules).
        max_chars: the most characters of one memory's row (``[memory] max_chars``): a longer one is cut
            (``safe_memory``; reported in ``RepoReport.truncated``).

    Returns:
        An ``IndexReport``: per repository indexed / skipped / failed, rows added, updated and deleted, commits.
        A repository that fails (unreachable, no such ref) is reported and the others are indexed.

    Raises:
        OrgStoreError: the store cannot be opened, written, or ignores conditional writes (nothing written).
        ConfigError: ``[embeddings]`` is invalid.
    """
    started = time.monotonic()
    say = progress or (lambda _line: None)
    from .store import is_refused, store_error
    from .xrepo import Live

    # a memory's cross-repository anchor names a repository of [org.repos] or one indexed in this run
    known = {**{r.name: r.location for r in repos}, **settings.repos}
    ix = _Index(settings, _embedder(embeddings), Live(replace(settings, repos=known), None, fetch=fetch))
    ix.full = full
    ix.max_chars = max_chars
    out: list[RepoReport] = []
    for r in repos:
        say(f"{r.name}: indexing {org_repos.safe_location(r.location)}")
        ix.truncated, ix.redacted = [], []
        try:
            rep = _index_repo(ix, r, fetch=fetch)
            rep = replace(rep, truncated=tuple(ix.truncated), redacted=tuple(ix.redacted))
        except GitmemError as e:
            if isinstance(e, OrgStoreError | OrgNameTaken):
                raise
            rep = RepoReport(r.name, org_repos.safe_location(r.location), "failed",
                             error=org_repos.strip_userinfo(e.message), hint=org_repos.strip_userinfo(e.hint))
        except Exception as e:
            if is_refused(e, settings):  # credentials refused, no bucket, unreachable: every repository would fail
                raise store_error(e, settings, "write the organisation index", writing=True) from e
            rep = RepoReport(r.name, org_repos.safe_location(r.location), "failed",
                             error=org_repos.strip_userinfo(f"{type(e).__name__}: {str(e).splitlines()[0]}"
                                                            if str(e) else type(e).__name__),
                             hint=_failure_hint(e, settings))
        out.append(rep)
    ix.maintain()
    return IndexReport(settings.uri, out, time.monotonic() - started)


def _failure_hint(e: BaseException, settings: OrgSettings) -> str:
    """What to do about an unexpected error indexing one repository: a store whose data files are gone
    (LanceDB's ``Not found``; running again fails the same) is rebuilt, else run again."""
    if "not found" in str(e).lower():
        return (f"the index's data files at {settings.uri} are missing or damaged: rebuild it with gitmem org index "
                "--rebuild (drops the tables and indexes every repository again from git)")
    return "run gitmem org index again for this repository"


def remove(settings: OrgSettings, name: str) -> int | None:
    """Delete repository ``name`` from the index: its memories' rows and its ``repos`` row (``gitmem org remove``).

    Returns:
        The memory rows deleted, or None when the index has no repository ``name`` (neither rows nor a ``repos``
        row).

    Raises:
        OrgStoreError: the store cannot be opened or written (or ignores conditional writes).
    """
    from .store import connect, probe_conditional_writes, store_error

    db = connect(settings)
    probe_conditional_writes(settings)
    try:
        mem = open_table(db, MEMORIES_TABLE)
        repos = open_table(db, REPOS_TABLE)
        pred = f"repo = {sql_str(name)}"
        rows = mem.count_rows(pred) if mem is not None else 0
        known = repos is not None and repos.count_rows(pred) > 0
        if not rows and not known:
            return None
        for table, has in ((mem, rows), (repos, known)):
            if table is not None and has:
                _retrying("delete", lambda t=table: t.delete(pred))  # type: ignore[misc]
    except Exception as e:  # lancedb raises many types: one line for the person
        raise store_error(e, settings, "write the organisation index", writing=True) from e
    return int(rows)


def drop(settings: OrgSettings) -> None:
    """Drop the index's two tables (``gitmem org index --rebuild``): the next ``index`` creates them empty and
    indexes every repository again from git. For a damaged index (data files gone).

    Raises:
        OrgStoreError: the store cannot be opened or written.
    """
    from .store import connect, probe_conditional_writes, store_error

    db = connect(settings)
    probe_conditional_writes(settings)
    for name in (MEMORIES_TABLE, REPOS_TABLE):
        try:
            db.drop_table(name, ignore_missing=True)
        except Exception as e:  # lancedb raises many types: one line for the person
            raise store_error(e, settings, "drop the organisation index's tables", writing=True) from e


def repo_line(r: RepoReport) -> str:
    """One line of text for a repository's report (the CLI's and the progress's)."""
    if r.state == "failed":
        return f"{r.repo}: failed: {r.error}"
    foreign = f", {r.foreign} with cross-repository anchors checked" if r.foreign else ""
    if r.state == "skipped" and r.note:
        return f"{r.repo}: {r.note}"
    if r.state == "skipped":
        return f"{r.repo}: up to date at {r.after[:12]} ({_n(r.memories, 'memory', 'memories')}{foreign})"
    before = r.before[:12] or "nothing"
    extra = f", {r.invalid} invalid" if r.invalid else ""
    extra += f", {len(r.truncated)} cut to [memory] max_chars" if r.truncated else ""
    extra += f", {len(r.redacted)} with secrets redacted" if r.redacted else ""
    return (f"{r.repo}: {before} -> {r.after[:12]}: +{r.added} ~{r.updated} -{r.deleted} "
            f"({r.rechecked} re-checked{foreign}{extra}; {_n(r.memories, 'memory', 'memories')})")


def _n(count: int, one: str, many: str) -> str:
    """``count`` and the noun, singular for 1 ("1 memory", "3 memories")."""
    return f"{count} {one if count == 1 else many}"


def _index_repo(ix: _Index, r: org_repos.OrgRepo, *, fetch: bool) -> RepoReport:
    where = org_repos.safe_location(r.location)  # a URL's credentials never stored nor printed
    repo = org_repos.open_repo(r, fetch=fetch)
    try:
        new = org_repos.ref_commit(repo, ix.settings.ref)
        # a shallow clone's "roots" are where its history was cut: no identity (neither checked nor recorded)
        roots = "" if repo.is_shallow() else " ".join(repo.root_commits(new))
        totals = [0, 0, 0, 0, 0]
        invalid: list[str] = []
        first_before: str | None = None
        memories = 0
        for attempt in range(CAS_ATTEMPTS):
            state = ix.repo_state(r.name, fresh=attempt > 0)
            _check_identity(r, state, roots)
            before = state.commit if state else ""
            if before and before != new and not ix.full and _behind(repo, new, before):
                return RepoReport(r.name, where, "skipped", before=before, after=before,
                                  memories=state.memories if state else 0,
                                  note=f"behind the indexed commit {before[:12]}: not indexed")
            if first_before is None:
                first_before = before
            if before == new and attempt == 0 and (ix.full or _foreign_rows(ix, r.name, state)):
                pass  # its own ref did not move, another repository's may have: cross-repository anchors re-checked
            elif before == new:  # up to date (made so by another indexer, when this is a second attempt)
                if attempt == 0:
                    if state is not None and roots and not state.roots:  # a row of an older gitmem: adopted
                        ix.move_repo(replace(state, roots=roots), before)
                    return RepoReport(r.name, where, "skipped", before=before, after=new,
                                      memories=state.memories if state else 0)
                memories = state.memories if state else memories
                break
            counts, invalid, memories, foreign_now = _apply(ix, repo, r.name, before, new)
            totals = [a + b for a, b in zip(totals, counts, strict=True)]
            if before == new and not any(counts[:3]):
                # only its cross-repository anchors were re-checked and none changed: nothing written
                return RepoReport(r.name, where, "skipped", before=before, after=new, rechecked=totals[3],
                                  foreign=totals[4], memories=memories)
            moved = ix.move_repo(RepoState(r.name, where, ix.settings.ref, new, utc_now(), memories,
                                           roots or (state.roots if state else ""), foreign_now), before)
            if moved:
                break
            log.info("%s: another indexer moved it meanwhile; starting over from its commit", r.name)
        else:
            raise GitmemError(f"{r.name}: other indexers kept moving it ({CAS_ATTEMPTS} attempts)",
                              "run gitmem org index again")
        return RepoReport(r.name, where, "indexed", before=first_before or "", after=new, added=totals[0],
                          updated=totals[1], deleted=totals[2], rechecked=totals[3], invalid=len(invalid),
                          foreign=totals[4], memories=memories, errors=tuple(invalid))
    finally:
        repo.close()


def _behind(repo: git.Repo, new: str, indexed: str) -> bool:
    """Whether commit ``new`` is a strict ancestor of the commit ``indexed`` (which ``repo`` holds): indexing it
    would move the index backwards (an older CI pipeline run again). False when ``indexed`` is not in ``repo``
    (another clone's commit, a force-push): then ``new`` is indexed."""
    try:
        return repo.commit_exists(indexed) and repo.is_ancestor(new, indexed)
    except GitmemError:
        return False


def _check_identity(r: org_repos.OrgRepo, state: RepoState | None, roots: str) -> None:
    """Refuse to index ``r`` under its name when the index holds that name for another repository: ``state``'s
    root commits and ``roots`` (``git.Repo.root_commits``) share none. Either unknown ("": a row of an older
    gitmem, or a shallow clone) is not a conflict.

    Raises:
        OrgNameTaken: one line naming the other repository's root commit and location, and what to do.
    """
    from ..rank.render import inline, visible

    if state is None or not state.roots or not roots or set(state.roots.split()) & set(roots.split()):
        return
    where = visible(inline(org_repos.safe_location(state.location)))  # another indexer's text, for a terminal
    raise OrgNameTaken(f"{r.name} is already indexed from another repository (root commit "
                       f"{state.roots.split()[0][:12]}, at {where}); rename one in "
                       f"[org.repos] / [org] name, or `gitmem org remove {r.name}` first")


def _apply(ix: _Index, repo: git.Repo, name: str, before: str, new: str) -> tuple[list[int], list[str], int, int]:
    """Bring the rows of repository ``name`` to commit ``new`` (the ``repos`` row says ``before``): returns
    ([added, updated, deleted, rechecked, foreign], invalid files as ``path: message``, rows now, rows now with
    cross-repository anchors).

    A retired (or superseded) memory has no row: the rule of the repository's own recall (``store.load`` puts a
    memory whose ``retired`` is set in ``Loaded.retired``, in no ranking, index or status); its row, if any, is
    deleted. A re-checked row (its file unchanged) is rewritten only when its status or reason changed."""
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
    to_read = sorted(p for p, blob in files.items() if ix.full or by_path.get(p, {}).get("blob") != blob)

    # anchored code changed since the indexed commit: those memories' statuses are re-resolved
    changed_code: set[str] | None = None
    if before and repo.commit_exists(before):
        changed_code = set(repo.changed_paths(before, new))
    recheck: list[str] = []
    for p, row in by_path.items():
        if p not in files or p in to_read:
            continue
        anchored = {k.split("::", 1)[0] for k in row["anchors"] or [] if not k.startswith("commit:")}
        if changed_code is None or anchored & changed_code or _has_foreign(ix, row):
            recheck.append(p)

    resolver = Resolver(repo, foreign=ix.foreign.status if ix.foreign is not None else None)
    written: list[_Row] = []
    invalid: list[str] = []
    truncated: list[str] = ix.truncated
    redacted: list[str] = ix.redacted
    added = updated = rechecked = foreign = 0
    for p in [*to_read, *recheck]:
        data = repo.read_blob(files[p])
        try:
            if data is None:
                raise MemoryFileError(p, "blob missing from the repository")
            m = parse_bytes(data, Path(p), display=f"{name}:{p}")
            _check_anchors(m, f"{name}:{p}")
        except MemoryFileError as e:
            invalid.append(e.message)
            if p in by_path:
                delete.add(by_path[p]["key"])
            continue
        old = by_path.get(p)
        if m.retired:  # retired or superseded: out of the index, as out of the repository's own recall
            if old is not None:
                delete.add(old["key"])
            continue
        m, cut, secret = safe_memory(m, ix.max_chars)
        if cut:
            truncated.append(f"{name}:{p}")
        if secret:
            redacted.append(f"{name}:{p}")
        status, reason = _status(resolver, m, new)
        if _memory_has_foreign(ix, m):
            foreign += 1
        if old is not None and old["key"] != row_key(name, m.id):
            delete.add(old["key"])  # the file now holds another id
            old = None
        if old is None:
            added += 1
        elif p in to_read:
            updated += 1
        else:
            rechecked += 1
            if (old.get("status"), old.get("reason") or "") == (status, reason) and old["key"] not in dups:
                continue  # re-checked, unchanged: no write
            updated += 1
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
    foreign_now = sum(1 for row in by_path.values() if row["key"] in now_keys and row["key"] not in keys_written
                      and _has_foreign(ix, row)) + sum(1 for w in unique.values() if _memory_has_foreign(ix, w.memory))
    return [added, updated, len(delete - keys_written), rechecked, foreign], invalid, len(now_keys), foreign_now


#: The most characters of an indexed memory's title (one line; ``rank.render.MAX_ORG_TITLE_CHARS`` shows as much).
MAX_TITLE_CHARS = 300
#: The most tags of an indexed memory, and characters of each (a tag is a word or two).
MAX_TAGS, MAX_TAG_CHARS = 50, 100


def safe_memory(m: Memory, limit: int) -> tuple[Memory, bool, bool]:
    """``m`` as it is indexed: its title, body, facts and tags cut to ``limit`` characters in all
    (``memories.fit``, the rule of ``[memory] max_chars``: the body ends in ``memories.CUT_MARK`` when cut; the
    title at most ``MAX_TITLE_CHARS``, tags ``MAX_TAGS`` × ``MAX_TAG_CHARS``) and secrets redacted
    (``capture.redact.redact_text``, the redactor of ``gitmem remember``); and whether it was cut, whether
    anything was redacted. A memory file committed by hand can be any size and hold any text: a 14 MB one would
    otherwise be scanned by every session start of the organisation, and a key in it given to every agent.

    Text is cut to twice ``limit`` before redacting (redaction runs over what may be shown, not megabytes), then
    to ``limit``."""
    from ..capture.redact import redact_text
    from ..memories import fit, text_chars

    cut = text_chars(m) > limit or len(m.title) > MAX_TITLE_CHARS or len(m.tags) > MAX_TAGS
    room = 2 * limit
    pre = replace(m, title=m.title[:MAX_TITLE_CHARS], body=m.body[:room], facts=[f[:room] for f in m.facts[:room]],
                  tags=[t[:MAX_TAG_CHARS] for t in m.tags[:MAX_TAGS]])
    clean = replace(pre, title=redact_text(pre.title), body=redact_text(pre.body),
                    facts=[redact_text(f) for f in pre.facts], tags=[redact_text(t) for t in pre.tags])
    secret = (clean.title, clean.body, clean.facts, clean.tags) != (pre.title, pre.body, pre.facts, pre.tags)
    fitted = fit(clean, limit)
    if fitted is not clean:
        cut = True
    if len(fitted.title) > limit:  # fit leaves the title: the title alone over a small limit
        fitted = replace(fitted, title=fitted.title[:limit])
    return fitted, cut, secret


def _check_anchors(m: Memory, display: str) -> None:
    """Refuse memory ``m`` (read from ``display``) when one of its anchor keys is not the shape of an anchor
    (``injection.anchor_key_problem``: text in a symbol, control characters, a run of whitespace): the row's anchors
    and its status reason (which names the worst anchor) are shown to agents outside the ``> `` fence, so text
    that is not a path never reaches them. The message names the anchor by position, never its text.

    Raises:
        MemoryFileError: the first anchor whose key is not an anchor's shape.
    """
    from ..errors import MemoryFileError
    from ..injection import anchor_key_problem

    for n, a in enumerate(m.anchors, 1):
        why = anchor_key_problem(a.key)
        if why:
            raise MemoryFileError(display, f"anchor {n} is not a path or path::symbol ({why}): memory left out",
                                  hint="anchors are repo-relative paths, path::Symbol.name or REPO:path::Symbol")


def _has_foreign(ix: _Index, row: dict[str, Any]) -> bool:
    """Whether ``row`` (of the ``memories`` table) has a cross-repository anchor (``REPO:path…`` whose REPO is a
    repository this run knows: ``ix.foreign``'s settings)."""
    if ix.foreign is None:
        return False
    names = ix.foreign.settings.repos
    return any(":" in k and k.split(":", 1)[0] in names for k in row.get("anchors") or []
               if not k.startswith("commit:"))


def _memory_has_foreign(ix: _Index, m: Memory) -> bool:
    """Whether memory ``m`` has a cross-repository anchor (``model.Anchor.repo`` set)."""
    return ix.foreign is not None and any(not a.local for a in m.anchors)


def _foreign_rows(ix: _Index, name: str, state: RepoState | None) -> bool:
    """Whether repository ``name`` has rows with cross-repository anchors (re-checked even when its ref did not
    move: the other repository's may have): its ``repos`` row's count, else (a row of an older gitmem) its rows."""
    if ix.foreign is None:
        return False
    if state is not None and state.foreign >= 0:
        return state.foreign > 0
    return any(_has_foreign(ix, row) for row in ix.rows_of(name))


def _state(r: dict[str, Any]) -> RepoState:
    """A ``RepoState`` of a ``repos`` table row (as a dict)."""
    foreign = r.get("foreign")
    return RepoState(r["repo"], r["location"] or "", r["ref"] or "", r["commit"] or "", r["indexed_at"] or "",
                     int(r["memories"] or 0), r.get("roots") or "", int(foreign) if foreign is not None else -1)


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
    from .store import connect, store_error

    db = connect(settings)
    try:
        t = open_table(db, REPOS_TABLE)
        got = t.search().limit(None).to_arrow().to_pylist() if t is not None else []
    except Exception as e:  # lancedb raises many types: one line for the person
        raise store_error(e, settings, "read the organisation index") from e
    rows = {r["repo"]: _state(r) for r in got}
    return [rows[k] for k in sorted(rows)]
