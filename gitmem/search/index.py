"""The derived LanceDB index of memories: schema, incremental sync, hybrid search.

Owns the index folder (``layout.index_dir``: ``<git-dir>/gitmem/index``, disposable) and nothing else. The memory
files are the truth (DESIGN.md §3); this index mirrors them so that a query can
run full-text (BM25) and vector search. It guarantees:

* **Incremental sync by content hash.** ``sync(current, load)`` compares the
  hash of every memory file with the hash stored in its row and loads, embeds
  and writes only the new or changed memories, in one ``merge_insert`` and one
  ``delete``. The stored hashes are read from the table itself (column
  ``content_hash``; about 10 ms for 1,000 rows), so they can never disagree with
  the rows.
* **Self-healing.** A missing, unreadable or corrupt index, or one recorded with
  another ``INDEX_SCHEMA_VERSION``, lancedb version or embedder, is deleted and
  rebuilt from the files. Only a failing *rebuild* raises ``IndexUnavailable``.
* **One writer at a time.** Every write runs under a ``filelock`` at
  ``<index_dir>/../run/index.lock``: lancedb 0.40 silently duplicates rows
  when two processes insert the same new key concurrently (lance#4585,
  lancedb#3377), and ``optimize(cleanup_older_than=0)`` breaks concurrent
  writers. Readers take no lock; they connect with
  ``read_consistency_interval=timedelta(0)`` and retry once with a fresh handle.
* **Fresh full-text index, sane compaction.** Rows written since the last
  ``optimize()`` are found by a flat scan beside the FTS index; when fragments,
  versions or unindexed rows pile up, ``optimize(cleanup_older_than=0)`` folds
  them into the FTS indexes, compacts and deletes old versions (under the lock).
  If it raises, the FTS indexes are dropped and recreated (lance#7653, lance#8310).
  FTS indexes are created only once the table has rows (an index built over 0
  rows is never updated without ``optimize``: haiku.rag PR#591).

Search fuses BM25 and cosine rankings with reciprocal rank fusion (``rrf_fuse``, on ``rank.fusion.rrf``).

Imports lancedb (about 1.1 s): only query paths import this module, never hooks.
Must not import: the CLI, hooks, tree-sitter, LLM clients.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("LANCEDB_LOG", "error")  # before lancedb: keeps Rust WARN lines off stderr

import lancedb
import numpy as np
import pyarrow as pa
from filelock import FileLock, Timeout
from lancedb.index import FTS, IvfFlat
from lancedb.query import FullTextOperator, MultiMatchQuery

from .. import infra
from ..errors import EmbeddingError, GitmemError, IndexUnavailable
from ..model import KIND_COMMIT, Memory
from ..rank.fusion import RRF_K as RRF_K
from .embed import Embedder
from .hybrid import EMBED_MAX_CHARS as EMBED_MAX_CHARS  # one owner of these: search.hybrid
from .hybrid import Hit as Hit
from .hybrid import embedding_text as embedding_text
from .hybrid import rrf_fuse as rrf_fuse
from .hybrid import search_text as search_text

log = logging.getLogger(__name__)

#: Version of the row layout and of the derived text. Bump it whenever the
#: schema, ``search_text`` or the embedded text changes: every index recorded
#: with another version is rebuilt on the next sync.
INDEX_SCHEMA_VERSION: int = 1


TABLE_NAME = "memories"
META_FILE = "gitmem-index.json"
REBUILD_MARKER = "NEEDS_REBUILD"
FTS_COLUMNS: tuple[str, ...] = ("title", "search_text")

#: Ids per ``DELETE ... WHERE id IN (...)`` statement.
DELETE_CHUNK = 1000
#: Maintenance thresholds (see ``MemoryIndex._maintain``): optimize when the table
#: has more data fragments, more retained versions (manifests), or more rows missing
#: from the FTS indexes than these. LanceDB's own rule of thumb is "more than 20
#: data modification operations" (``Table.optimize`` docstring); each sync makes 1-2.
COMPACT_FRAGMENTS = 8
COMPACT_VERSIONS = 20
COMPACT_UNINDEXED = 2000
#: From this many rows on, vectors get an IVF_FLAT index (k-means partitions, exact vectors inside):
#: a flat scan of 100,000 256-dim vectors took 270 ms on this 2-core machine under load (36 ms
#: quiet, reference/lancedb.md §4), the index 8 ms; building it took 3 s (bench/README.md).
VECTOR_INDEX_MIN_ROWS = 20_000
#: IVF partitions, and how many of them a query scans: 24 of 64 found 95-99 % of the flat
#: top 10 on the 100k bench set (16 of 64: 95.5 %; 8: 83.5 %). Rows added after the index
#: was built are scanned flat until ``optimize`` folds them in.
VECTOR_PARTITIONS = 64
VECTOR_NPROBES = 24
#: Seconds to wait for another process's index write before giving up.
DEFAULT_LOCK_TIMEOUT = 120.0


@dataclass
class SyncResult:
    """What a sync did.

    Attributes:
        added, updated, deleted: rows inserted, replaced, removed. After a
            rebuild, ``added`` is the number of rows written.
        rebuilt: the index was deleted and rebuilt from the files.
        reason: why it was rebuilt (``missing``, ``corrupt: <detail>``,
            ``schema 1 -> 2``, ``lancedb 0.39.0 -> 0.40.0``, ``embedder changed``,
            ``requested``), or "".
    """

    added: int
    updated: int
    deleted: int
    rebuilt: bool
    reason: str


from ..textsplit import MAX_QUERY_TERMS, query_terms, split_identifiers  # noqa: E402, F401

# --------------------------------------------------------------------------- the index


def _one_line(exc: BaseException | str, limit: int = 160) -> str:
    lines = str(exc).strip().splitlines()
    line = lines[0] if lines else type(exc).__name__
    return line if len(line) <= limit else line[:limit - 3] + "..."


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class MemoryIndex:
    """The LanceDB index of one store, at ``index_dir`` (``<git-dir>/gitmem/index``).

    Layout: ``index_dir/memories.lance`` (the table), ``index_dir/gitmem-index.json``
    (meta: schema version, lancedb version, embedder name and dim, a generation id),
    and, after a failed read, ``index_dir/NEEDS_REBUILD``. The write lock is
    ``index_dir/../run/index.lock``.

    Row columns: ``id`` (string, not null; unenforced primary key), ``content_hash``,
    ``type``, ``scope``, ``title``, ``search_text``, ``tags``, ``paths`` (anchor
    paths), ``symbols`` (``path::Qualified.Name``), ``commits`` (SHAs of commit
    anchors), ``updated`` (ISO-8601 string), and ``vector``
    (``fixed_size_list<float32, dim>``, L2-normalised; absent when the embedder is
    None). ``search(where=...)`` filters on these with SQL, e.g.
    ``"type = 'gotcha'"`` or ``"array_has_any(paths, ['src/a.py'])"``.

    Args:
        index_dir: directory of the index (created on first sync).
        embedder: provider of vectors, or None for full-text only.
        lock_timeout: seconds to wait for another process's write.
    """

    def __init__(self, index_dir: Path, embedder: Embedder | None,
                 lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> None:
        self.index_dir = Path(index_dir)
        self.embedder = embedder
        self.lock_timeout = lock_timeout
        self.lock_path = self.index_dir.parent / "run" / "index.lock"
        #: Set by ``search`` when the query could not be embedded and only
        #: full-text results were returned (the EmbeddingError's message); else None.
        self.last_search_warning: str | None = None
        self._db: Any = None
        self._table: Any = None
        self._generation: str | None = None
        self._meta_cache: tuple[int, dict[str, Any] | None] | None = None

    # ------------------------------------------------------------------ public API

    def path(self) -> Path:
        """The index directory."""
        return self.index_dir

    def sync(self, current: Mapping[str, str], load: Callable[[str], Memory]) -> SyncResult:
        """Bring the index in line with the memory files.

        Args:
            current: memory id → content hash of its file, for every valid memory on disk.
            load: returns the ``Memory`` for an id of ``current``; called only for ids
                that are new or whose hash changed (every id on a rebuild).

        Returns:
            What changed. A second sync with the same ``current`` writes nothing
            (``added == updated == deleted == 0``).

        Raises:
            IndexUnavailable: the lock could not be taken within ``lock_timeout``,
                or the index could not be rebuilt (read-only disk, no space).
            EmbeddingError: the embedder failed (the index is left as it was).
            Whatever ``load`` raises.
        """
        with self._lock():
            return self._sync_locked(dict(current), load)

    def sync_from(self, source: Any) -> SyncResult:
        """Follow a change log of the memory rows instead of comparing every id (``gitmem.catalog``).

        ``source`` has ``mark() -> str``, ``changes_since(mark) -> (mark, [(id, hash,
        Memory)], [removed ids]) | None`` (None: the mark is unknown to it),
        ``digests() -> (mark, {id: hash})`` and ``load(id) -> Memory``. The mark
        last applied is kept in the index's meta file: when it equals
        ``source.mark()`` nothing is read at all; otherwise only the changes since
        it are written (work proportional to what changed, not to the rows);
        with no usable mark, every id is compared as in ``sync``.

        Raises: as ``sync``.
        """
        with self._lock():
            meta = self._read_meta()
            reason = self._mismatch(meta)
            since = meta.get("source_mark") if meta and not reason else None
            if since is not None and since == source.mark():
                return SyncResult(0, 0, 0, False, "")
            delta = source.changes_since(since) if since is not None else None
            if delta is not None:
                mark, upserts, removed = delta
                assert meta is not None
                result = self._apply_locked(meta, upserts, removed, source)
            else:
                mark, current = source.digests()
                result = self._sync_locked(current, source.load)
            meta = self._read_meta()
            if meta is not None:
                self._write_meta({**meta, "source_mark": mark})
                self._meta_cache = None
            return result

    def _apply_locked(self, meta: dict[str, Any], upserts: list[tuple[str, str, Memory]],
                      removed: list[str], source: Any) -> SyncResult:
        """Write ``upserts`` and delete ``removed``; on a broken table, rebuild from ``source``."""
        rows = self._rows(upserts)  # embedding errors propagate; nothing written yet
        try:
            self._write(self._open_table(meta), rows, removed)
        except Exception as exc:  # noqa: BLE001 - a failed incremental write of a derived index: rebuild it from the files
            _, current = source.digests()
            return self._rebuild_locked(current, source.load, f"corrupt: {_one_line(exc)}")
        return SyncResult(len(upserts), 0, len(removed), False, "")

    def rebuild(self, current: Mapping[str, str], load: Callable[[str], Memory]) -> SyncResult:
        """Delete the index and build it again from ``current`` (reason ``requested``).

        Raises: as ``sync``.
        """
        with self._lock():
            return self._rebuild_locked(dict(current), load, "requested")

    def ids(self) -> dict[str, str]:
        """Memory id → content hash, as indexed; {} when there is no index.

        Raises:
            IndexUnavailable: the index exists but cannot be read.
        """
        table = self._open_for_read()
        if table is None:
            return {}
        try:
            hashes, _ = self._read_hashes(table)
        except Exception as exc:
            raise self._unavailable(exc) from exc
        return hashes

    def count(self) -> int:
        """Number of rows; 0 when there is no index.

        Raises:
            IndexUnavailable: the index exists but cannot be read.
        """
        table = self._open_for_read()
        if table is None:
            return 0
        try:
            return int(table.count_rows())
        except Exception as exc:
            raise self._unavailable(exc) from exc

    def search(self, query: str, limit: int = 10, *, where: str | None = None) -> list[Hit]:
        """Hybrid search: BM25 over ``title`` and ``search_text``, plus cosine over ``vector``.

        Each side returns its top ``k = max(limit * 4, 50)``; the two rankings are
        fused with ``rrf_fuse`` (RRF, k = 60) and the best ``limit`` hits returned,
        best first, ties broken by id. The full-text side gets only the plain terms
        of the query (``query_terms``), so no query string can raise. The vector side
        runs when an embedder is set, the index was built with the same embedder and
        the query's vector is non-zero. If embedding the query fails, full-text hits
        are returned and ``last_search_warning`` says why.

        Args:
            query: free text; empty or blank → [].
            limit: hits wanted (≤ 0 → []).
            where: optional SQL filter on the row columns, applied before top-k
                (prefilter) on both sides.

        Returns:
            Up to ``limit`` hits; [] when the index does not exist yet.

        Raises:
            ValueError: ``where`` is not a valid filter.
            IndexUnavailable: the index cannot be read (it is then marked so that the
                next ``sync`` rebuilds it).
        """
        self.last_search_warning = None
        if not query or not query.strip() or limit <= 0:
            return []
        table = self._open_for_read()
        if table is None:
            return []
        k = max(limit * 4, 50)
        qvec = self._query_vector(query)
        try:
            return self._search_once(table, query, qvec, k, where)[:limit]
        except Exception as first:  # noqa: BLE001 - lancedb raises many types; retried once with a fresh handle
            log.debug("index search failed, retrying with a fresh handle: %s", first)
        self._close()
        table = self._open_for_read()
        if table is None:
            return []
        try:
            return self._search_once(table, query, qvec, k, where)[:limit]
        except Exception as exc:
            if where is not None and self._probe(table):
                raise ValueError(f"invalid index filter {where!r}: {_one_line(exc)}") from exc
            self._mark_for_rebuild(exc)
            raise self._unavailable(exc) from exc

    # ------------------------------------------------------------------ meta and handles

    def _meta_path(self) -> Path:
        return self.index_dir / META_FILE

    def _new_meta(self, rows: pa.Table) -> dict[str, Any]:
        """Meta for an index just built from ``rows``, with a fresh generation id."""
        vector = rows.schema.field("vector").type if "vector" in rows.schema.names else None
        return {
            "schema": INDEX_SCHEMA_VERSION,
            "lancedb": lancedb.__version__,
            "embedder": self.embedder.name if self.embedder else None,
            "dim": int(vector.list_size) if vector is not None else None,
            "generation": uuid.uuid4().hex,
        }

    def _read_meta(self) -> dict[str, Any] | None:
        """The meta JSON, cached by mtime; None if missing or unreadable."""
        try:
            mtime = self._meta_path().stat().st_mtime_ns
        except OSError:
            self._meta_cache = None
            return None
        if self._meta_cache and self._meta_cache[0] == mtime:
            return self._meta_cache[1]
        meta: dict[str, Any] | None = None
        try:
            raw = json.loads(self._meta_path().read_text(encoding="utf-8"))
            meta = raw if isinstance(raw, dict) else None
        except (OSError, ValueError):
            meta = None
        self._meta_cache = (mtime, meta)
        return meta

    def _write_meta(self, meta: dict[str, Any]) -> None:
        infra.atomic_write(self._meta_path(), (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode("utf-8"))

    def _mismatch(self, meta: dict[str, Any] | None) -> str:
        """Why an index with ``meta`` must be rebuilt, or ""."""
        if not self.index_dir.is_dir():
            return "missing"
        marker = self.index_dir / REBUILD_MARKER
        if marker.exists():
            try:
                detail = marker.read_text(encoding="utf-8").strip() or "a read failed"
            except OSError:
                detail = "a read failed"
            return f"corrupt: {detail}"
        if meta is None:
            return "missing" if not self._meta_path().exists() else "corrupt: unreadable meta file"
        if meta.get("schema") != INDEX_SCHEMA_VERSION:
            return f"schema {meta.get('schema')} -> {INDEX_SCHEMA_VERSION}"
        if meta.get("lancedb") != lancedb.__version__:
            return f"lancedb {meta.get('lancedb')} -> {lancedb.__version__}"
        # Names only: an embedder's name fixes its dim (OpenAIEmbedder puts `dimensions` in
        # it), and reading `dim` of an OpenAI embedder without `dimensions` costs a request.
        # A server that silently changes the model behind a name makes the next write fail
        # on the vector length, which rebuilds the index.
        if meta.get("embedder") != (self.embedder.name if self.embedder else None):
            return "embedder changed"
        return ""

    def _connect(self) -> Any:
        return lancedb.connect(str(self.index_dir), read_consistency_interval=timedelta(0))

    def _close(self) -> None:
        self._db = self._table = self._generation = None

    def _open_table(self, meta: dict[str, Any]) -> Any:
        """The cached table handle, reopened when another process rebuilt the index."""
        gen = meta.get("generation")
        if self._table is None or self._generation != gen:
            self._close()
            self._db = self._connect()
            self._table = self._db.open_table(TABLE_NAME)
            self._generation = gen
        return self._table

    def _open_for_read(self) -> Any:
        """Table handle for a reader, or None when no index has been built yet."""
        meta = self._read_meta()
        if meta is None or not (self.index_dir / f"{TABLE_NAME}.lance").is_dir():
            return None
        try:
            return self._open_table(meta)
        except Exception as exc:
            self._mark_for_rebuild(exc)
            raise self._unavailable(exc) from exc

    def _unavailable(self, exc: BaseException) -> IndexUnavailable:
        return IndexUnavailable(f"the index at {self.index_dir} cannot be read: {_one_line(exc)}",
                                "run `gitmem sync --rebuild` (the index is derived from the memory files)")

    def _mark_for_rebuild(self, exc: BaseException) -> None:
        """Leave a marker so the next sync rebuilds; best effort."""
        try:
            (self.index_dir / REBUILD_MARKER).write_text(_one_line(exc) + "\n", encoding="utf-8")
        except OSError:
            pass

    def _lock(self) -> Any:
        try:
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise IndexUnavailable(f"cannot create {self.lock_path.parent}: {_one_line(exc)}",
                                   "check that the folder is writable") from exc
        return _Lock(FileLock(str(self.lock_path), timeout=self.lock_timeout), self.lock_path)

    # ------------------------------------------------------------------ rows

    @staticmethod
    def _schema(dim: int | None) -> pa.Schema:
        """Row schema; ``vector`` only when ``dim`` is given."""
        fields = [
            pa.field("id", pa.string(), nullable=False),  # non-null: required by the primary key
            pa.field("content_hash", pa.string()),
            pa.field("type", pa.string()),
            pa.field("scope", pa.string()),
            pa.field("title", pa.string()),
            pa.field("search_text", pa.string()),
            pa.field("tags", pa.list_(pa.string())),
            pa.field("paths", pa.list_(pa.string())),
            pa.field("symbols", pa.list_(pa.string())),
            pa.field("commits", pa.list_(pa.string())),
            pa.field("updated", pa.string()),
        ]
        if dim is not None:
            fields.append(pa.field("vector", pa.list_(pa.float32(), dim)))
        return pa.schema(fields)

    def _rows(self, items: Sequence[tuple[str, str, Memory]]) -> pa.Table:
        """Arrow rows for (id, content_hash, memory) triples; embeds all texts in one call.

        Raises:
            EmbeddingError: the embedder failed or returned the wrong shape.
        """
        arrays: dict[str, Any] = {name: [] for name in self._schema(None).names}
        for mid, chash, m in items:
            arrays["id"].append(mid)
            arrays["content_hash"].append(chash)
            arrays["type"].append(m.type)
            arrays["scope"].append(m.scope)
            arrays["title"].append(m.title)
            arrays["search_text"].append(search_text(m))
            arrays["tags"].append(list(m.tags))
            arrays["paths"].append(list(dict.fromkeys(a.path for a in m.anchors
                                                      if a.path and a.kind != KIND_COMMIT and a.local)))
            arrays["symbols"].append(list(dict.fromkeys(a.key for a in m.anchors if a.symbol and a.path)))
            arrays["commits"].append(list(dict.fromkeys(a.commit for a in m.anchors
                                                        if a.kind == KIND_COMMIT and a.commit)))
            arrays["updated"].append(m.updated)
        dim: int | None = None
        if self.embedder is not None:
            # Embed first: an OpenAI embedder without `dimensions` learns its dim from the answer.
            if items:
                vecs = np.ascontiguousarray(self.embedder.embed([embedding_text(m) for _, _, m in items]),
                                            dtype=np.float32)
                dim = int(vecs.shape[1]) if vecs.ndim == 2 else -1
            else:
                dim = int(self.embedder.dim)
                vecs = np.zeros((0, dim), dtype=np.float32)
            if vecs.shape != (len(items), dim) or dim != int(self.embedder.dim):
                raise EmbeddingError(f"embedder {self.embedder.name} returned vectors of shape {vecs.shape}, "
                                     f"expected ({len(items)}, {self.embedder.dim})", "report this as a gitmem bug")
            arrays["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), dim)
        return pa.table(arrays, schema=self._schema(dim))

    @staticmethod
    def _read_hashes(table: Any) -> tuple[dict[str, str], set[str]]:
        """(id → content_hash, ids present more than once) read from the table."""
        data = table.search().select(["id", "content_hash"]).limit(None).to_arrow()
        hashes: dict[str, str] = {}
        dups: set[str] = set()
        for mid, chash in zip(data.column("id").to_pylist(), data.column("content_hash").to_pylist(), strict=True):
            if mid in hashes:
                dups.add(mid)
            hashes[mid] = chash or ""
        return hashes, dups

    # ------------------------------------------------------------------ writes (under the lock)

    def _sync_locked(self, current: dict[str, str], load: Callable[[str], Memory]) -> SyncResult:
        meta = self._read_meta()
        reason = self._mismatch(meta)
        if reason:
            return self._rebuild_locked(current, load, reason)
        assert meta is not None
        try:
            table = self._open_table(meta)
            indexed, dups = self._read_hashes(table)
        except Exception as exc:  # noqa: BLE001 - an unreadable index is derived data: rebuild it from the files
            return self._rebuild_locked(current, load, f"corrupt: {_one_line(exc)}")

        new = sorted(i for i in current if i not in indexed)
        changed = sorted(i for i in current if i in indexed and (indexed[i] != current[i] or i in dups))
        removed = sorted(i for i in indexed if i not in current)
        if not new and not changed and not removed:
            return SyncResult(0, 0, 0, False, "")

        upserts = [(i, current[i], load(i)) for i in [*new, *changed]]
        rows = self._rows(upserts)  # embedding errors propagate; nothing written yet
        try:
            # duplicates: delete all copies, re-add one
            self._write(table, rows, sorted(set(removed) | (dups & set(changed))))
        except Exception as exc:  # noqa: BLE001 - a failed write of a derived index: rebuild it from the files
            return self._rebuild_locked(current, load, f"corrupt: {_one_line(exc)}")
        return SyncResult(len(new), len(changed), len(removed), False, "")

    def _write(self, table: Any, rows: pa.Table, delete_ids: list[str]) -> None:
        """Delete ``delete_ids``, upsert ``rows`` (merge on ``id``), then maintain; raises what LanceDB raises."""
        for start in range(0, len(delete_ids), DELETE_CHUNK):
            chunk = delete_ids[start:start + DELETE_CHUNK]
            table.delete("id IN (" + ", ".join(_sql_str(i) for i in chunk) + ")")
        if rows.num_rows:
            table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(rows)
        self._maintain(table)

    def _maintain(self, table: Any) -> None:
        """After a write: create missing FTS indexes; optimize when fragments or versions pile up.

        ``optimize(cleanup_older_than=0)`` compacts (it rewrites every fragment
        smaller than 1M rows, i.e. the whole table here: about 0.3 s at 2,000 rows),
        folds unindexed rows into the FTS indexes and deletes old versions. Doing that
        after every small sync would make a 10-row sync cost O(table), so it runs only
        when one of ``COMPACT_FRAGMENTS``, ``COMPACT_VERSIONS`` or
        ``COMPACT_UNINDEXED`` is exceeded. In between, rows not yet in the FTS index
        are still found: LanceDB scans them flat (reference/lancedb.md §4).
        """
        rows = table.count_rows()
        if rows == 0:
            return
        self._ensure_vector_index(table, rows)
        if not self._has_fts(table):
            self._create_fts(table)
            return
        if not self._needs_optimize(table):
            return
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "cleanup_older_than=0 breaks concurrent readers"
                table.optimize(cleanup_older_than=timedelta(0))
        except Exception as exc:  # noqa: BLE001 - compaction is an optimisation: on any failure, recreate the full-text indexes
            log.warning("index optimize failed (%s); recreating the full-text indexes", _one_line(exc))
            for name in FTS_COLUMNS:
                try:
                    table.drop_index(f"{name}_idx")
                except Exception:  # noqa: BLE001 - the index may not exist; recreated just below
                    pass
            self._create_fts(table)

    def _needs_optimize(self, table: Any) -> bool:
        versions_dir = self.index_dir / f"{TABLE_NAME}.lance" / "_versions"
        try:
            versions = sum(1 for e in os.scandir(versions_dir) if e.name.endswith(".manifest"))
        except OSError:
            versions = 0
        if versions > COMPACT_VERSIONS:
            return True
        if int(table.stats()["fragment_stats"]["num_fragments"]) > COMPACT_FRAGMENTS:
            return True
        unindexed = max(int(table.index_stats(f"{c}_idx").num_unindexed_rows) for c in FTS_COLUMNS)
        return unindexed > COMPACT_UNINDEXED

    def _ensure_vector_index(self, table: Any, rows: int) -> None:
        """Build the IVF_FLAT vector index once the table reaches ``VECTOR_INDEX_MIN_ROWS`` (best effort:
        without it, search scans every vector)."""
        if self.embedder is None or rows < VECTOR_INDEX_MIN_ROWS or "vector" not in table.schema.names:
            return
        if any(idx.name == "vector_idx" for idx in table.list_indices()):
            return
        try:
            table.create_index("vector", config=IvfFlat(distance_type="cosine", num_partitions=VECTOR_PARTITIONS),
                               name="vector_idx", replace=True)
        except Exception as exc:  # noqa: BLE001 - a speed-up only; searches stay exact without it
            log.warning("vector index not built (%s); searching every vector", _one_line(exc))

    @staticmethod
    def _has_fts(table: Any) -> bool:
        names = {idx.name for idx in table.list_indices()}
        return all(f"{c}_idx" in names for c in FTS_COLUMNS)

    @staticmethod
    def _create_fts(table: Any) -> None:
        for col in FTS_COLUMNS:
            table.create_index(col, config=FTS(), replace=True, name=f"{col}_idx")

    def _remove_index_files(self) -> None:
        """Delete what this module put in ``index_dir`` (never unknown files)."""
        if self.index_dir.is_file() or self.index_dir.is_symlink():
            self.index_dir.unlink()
            return
        if not self.index_dir.exists():
            return
        for entry in self.index_dir.iterdir():
            name = entry.name
            ours = (name.endswith(".lance") or name in (META_FILE, REBUILD_MARKER)
                    or (name.startswith(f".{META_FILE}.") and name.endswith(".tmp")))
            if not ours:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()

    def _rebuild_locked(self, current: dict[str, str], load: Callable[[str], Memory],
                        reason: str) -> SyncResult:
        log.info("rebuilding the index at %s (%s)", self.index_dir, reason)
        items = [(i, current[i], load(i)) for i in sorted(current)]
        rows = self._rows(items)  # load/embedding errors propagate before anything is deleted
        self._close()
        try:
            self._remove_index_files()
            self.index_dir.mkdir(parents=True, exist_ok=True)
            db = self._connect()
            table = db.create_table(TABLE_NAME, data=rows, schema=rows.schema, mode="overwrite")
            table.set_unenforced_primary_key("id")
            if rows.num_rows:
                self._create_fts(table)
                self._ensure_vector_index(table, rows.num_rows)
            meta = self._new_meta(rows)
            self._write_meta(meta)
        except GitmemError:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"cannot rebuild the index at {self.index_dir}: {_one_line(exc)}",
                                   "check that the index folder is writable and the disk has space") from exc
        self._db, self._table, self._generation = db, table, meta["generation"]
        self._meta_cache = None
        return SyncResult(len(items), 0, 0, True, reason)

    # ------------------------------------------------------------------ reads

    def _query_vector(self, query: str) -> np.ndarray | None:
        """The query's vector, or None when vector search cannot or need not run."""
        if self.embedder is None:
            return None
        meta = self._read_meta() or {}
        if meta.get("embedder") != self.embedder.name:
            return None  # index built with another embedder; the next sync rebuilds it
        try:
            vec = self.embedder.embed([query.strip()])
        except EmbeddingError as exc:
            self.last_search_warning = exc.message
            log.warning("query not embedded, full-text results only: %s", exc.message)
            return None
        if vec.shape != (1, meta.get("dim")) or not np.any(vec):
            return None
        first: np.ndarray = vec[0]
        return first

    def _search_once(self, table: Any, query: str, qvec: np.ndarray | None, k: int,
                     where: str | None) -> list[Hit]:
        fts_ids: list[str] = []
        terms = query_terms(query)
        if terms:
            match = MultiMatchQuery(" ".join(terms), list(FTS_COLUMNS), boosts=None, operator=FullTextOperator.OR)
            q = table.search(match, query_type="fts")
            if where:
                q = q.where(where, prefilter=True)
            res = q.select(["id"]).limit(k).to_arrow()
            scored = zip(res.column("id").to_pylist(), res.column("_score").to_pylist(), strict=True)
            fts_ids = [mid for mid, _ in sorted(scored, key=lambda p: (-p[1], p[0]))]
        vec_ids: list[str] = []
        similarity: dict[str, float] = {}
        if qvec is not None:
            q = table.search(qvec, vector_column_name="vector").distance_type("cosine").nprobes(VECTOR_NPROBES)
            if where:
                q = q.where(where, prefilter=True)
            res = q.select(["id"]).limit(k).to_arrow()
            pairs = sorted(zip(res.column("id").to_pylist(), res.column("_distance").to_pylist(), strict=True),
                           key=lambda p: (p[1], p[0]))
            vec_ids = [mid for mid, _ in pairs]
            for mid, dist in pairs:
                similarity.setdefault(mid, 1.0 - float(dist))  # cosine distance = 1 - similarity
        hits = rrf_fuse(fts_ids, vec_ids)
        for h in hits:
            h.similarity = similarity.get(h.id)
        return hits

    @staticmethod
    def _probe(table: Any) -> bool:
        """True if the table answers a trivial query (so a failure was the caller's filter)."""
        try:
            table.search().select(["id"]).limit(1).to_arrow()
            return True
        except Exception:  # noqa: BLE001 - a probe: any failure means 'not usable'
            return False


class _Lock:
    """Context manager around a FileLock that turns a timeout into IndexUnavailable."""

    def __init__(self, lock: FileLock, path: Path) -> None:
        self._lock = lock
        self._path = path

    def __enter__(self) -> None:
        try:
            self._lock.acquire()
        except Timeout as exc:
            raise IndexUnavailable(f"the index is locked by another process ({self._path})",
                                   "wait for the other gitmem command to finish, then retry") from exc
        except OSError as exc:
            raise IndexUnavailable(f"cannot take the index lock {self._path}: {_one_line(exc)}",
                                   "check that the folder is writable") from exc

    def __exit__(self, *exc: object) -> None:
        self._lock.release()
