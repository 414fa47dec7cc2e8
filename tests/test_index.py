"""Tests for gitmem.search.index: incremental sync, self-healing rebuilds, hybrid search,
RRF fusion, hostile queries and concurrent writers. Real LanceDB in tmp_path,
real WordLlama embeddings; no mocks."""

from __future__ import annotations

import copy
import hashlib
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import gitmem.search.index as index_mod
from gitmem.errors import IndexUnavailable
from gitmem.model import Anchor, Memory
from gitmem.search.embed import WordLlamaEmbedder
from gitmem.search.index import RRF_K, Hit, MemoryIndex, query_terms, rrf_fuse, search_text, split_identifiers

REPO_ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- helpers


def content_hash(m: Memory) -> str:
    return hashlib.sha256(repr(m).encode()).hexdigest()


class Store:
    """An in-memory stand-in for the memory files: id → Memory, with a counting loader."""

    def __init__(self, memories: list[Memory]) -> None:
        self.memories = {m.id: copy.deepcopy(m) for m in memories}
        self.loaded: list[str] = []

    def current(self) -> dict[str, str]:
        return {mid: content_hash(m) for mid, m in self.memories.items()}

    def load(self, mid: str) -> Memory:
        self.loaded.append(mid)
        return self.memories[mid]

    def sync(self, index: MemoryIndex) -> index_mod.SyncResult:
        self.loaded = []
        return index.sync(self.current(), self.load)


def mem(mid: str, title: str, body: str = "", *, type: str = "decision",
        anchors: list[Anchor] | None = None, tags: list[str] | None = None) -> Memory:
    return Memory(id=mid, type=type, title=title, body=body, anchors=anchors or [], tags=tags or [],
                  updated="2026-11-30T12:00:00Z")


CORPUS = [
    mem("01CFG", "Config load order",
        "Configuration load order is environment variables, then the YAML file, then built-in defaults.",
        anchors=[Anchor("src/app/config_loader.py", "ConfigLoader.parseConfig", kind="method")]),
    mem("01AUTH", "Tokens are signed with RS256",
        "Authentication uses signed JWT tokens. Signer.sign issues tokens and they expire after one hour.",
        anchors=[Anchor("src/auth/jwt_signer.py", "Signer.sign", kind="method")]),
    mem("01DB", "Connection pool exhausted under heavy load",
        "Raise the pool size; connections leak when transactions are not closed.", type="bugfix",
        anchors=[Anchor("src/db/pool.py")]),
    mem("01RETRY", "Retry failed HTTP requests",
        "Retry failed HTTP requests with exponential backoff and jitter, at most five attempts.",
        anchors=[Anchor("src/net/http_client.py", "HttpClient.request", kind="method")]),
    mem("01BUILD", "Frontend bundle is built with vite",
        "Run npm run build before deploying the static assets.", type="constraint"),
    mem("01LOG", "Structured logs on stderr",
        "Logging goes to stderr as JSON lines so the collector can ingest them.", type="gotcha",
        tags=["observability"]),
    mem("01REDIS", "Integration tests need Redis",
        "Integration tests need a running Redis on port 6379; start it with docker compose.", type="gotcha"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".gitmem").mkdir()
    return tmp_path / ".gitmem"


@pytest.fixture
def index(repo: Path) -> MemoryIndex:
    return MemoryIndex(repo / "index", WordLlamaEmbedder())


@pytest.fixture
def synced(index: MemoryIndex) -> tuple[MemoryIndex, Store]:
    store = Store(list(CORPUS))
    result = store.sync(index)
    assert result.rebuilt and result.reason == "missing" and result.added == len(CORPUS)
    return index, store


def top_ids(index: MemoryIndex, query: str, limit: int = 10, **kw: str) -> list[str]:
    return [h.id for h in index.search(query, limit, **kw)]


# --------------------------------------------------------------------------- text helpers


def test_split_identifiers() -> None:
    assert split_identifiers("parseConfig") == "parseConfig parse Config"
    assert split_identifiers("HTTPServer") == "HTTPServer HTTP Server"
    assert split_identifiers("src/auth/jwt_signer.py") == "src/auth/jwt_signer.py src auth jwt signer py"
    assert split_identifiers("Signer.sign") == "Signer.sign Signer sign"
    assert split_identifiers("getV2Token") == "getV2Token get V 2 Token"
    assert split_identifiers("plain words (stay) alone") == "plain words (stay) alone"
    assert split_identifiers("") == ""


def test_search_text_contains_split_anchor_names() -> None:
    text = search_text(CORPUS[0])
    for word in ("ConfigLoader.parseConfig", "parse", "Loader", "config_loader", "src/app/config_loader.py"):
        assert word in text


def test_query_terms_sanitizes() -> None:
    assert query_terms('foo:bar (x) AND "baz') == ["foo", "bar", "x", "and", "baz"]
    assert query_terms("🚀 *") == []
    assert query_terms("parseConfig") == ["parseconfig", "parse", "config"]
    assert len(query_terms(" ".join(f"w{i}" for i in range(500)))) == index_mod.MAX_QUERY_TERMS


# --------------------------------------------------------------------------- RRF


def test_rrf_fuse_hand_computed() -> None:
    hits = rrf_fuse(["a", "b", "c"], ["c", "a", "d"])
    assert RRF_K == 60
    expected = {
        "a": 1 / 61 + 1 / 62,   # fts 1, vector 2: 0.0325225...
        "c": 1 / 63 + 1 / 61,   # fts 3, vector 1: 0.0322664...
        "b": 1 / 62,            # fts 2 only
        "d": 1 / 63,            # vector 3 only
    }
    assert [h.id for h in hits] == ["a", "c", "b", "d"]
    for h in hits:
        assert h.score == pytest.approx(expected[h.id], abs=1e-12)
    assert (hits[0].id, hits[0].fts_rank, hits[0].vector_rank, hits[0].similarity) == ("a", 1, 2, None)
    assert isinstance(hits[0], Hit)
    assert (hits[3].fts_rank, hits[3].vector_rank) == (None, 3)


def test_rrf_fuse_ties_dedupe_and_k() -> None:
    # Equal scores are ordered by id; a repeated id keeps its first (best) rank.
    hits = rrf_fuse(["y", "y", "x"], ["x", "y"], k=1)
    # y: fts rank 1 (1/2) + vector rank 2 (1/3); x: fts rank 2 (1/3) + vector rank 1 (1/2)
    assert [h.id for h in hits] == ["x", "y"]
    assert hits[0].score == hits[1].score == pytest.approx(1 / 2 + 1 / 3)
    assert rrf_fuse([], []) == []


# --------------------------------------------------------------------------- sync


def test_sync_is_incremental(synced: tuple[MemoryIndex, Store]) -> None:
    index, store = synced
    assert index.count() == len(CORPUS)
    assert index.ids() == store.current()

    again = store.sync(index)
    assert (again.added, again.updated, again.deleted, again.rebuilt) == (0, 0, 0, False)
    assert store.loaded == []  # nothing loaded, nothing embedded

    store.memories["01DB"].body += " Also set pool_pre_ping."
    store.memories["01NEW"] = mem("01NEW", "Feature flags live in LaunchDarkly")
    del store.memories["01BUILD"]
    result = store.sync(index)
    assert (result.added, result.updated, result.deleted, result.rebuilt) == (1, 1, 1, False)
    assert sorted(store.loaded) == ["01DB", "01NEW"]
    assert index.count() == len(CORPUS)
    assert index.ids() == store.current()
    assert "01BUILD" not in top_ids(index, "vite frontend bundle")
    assert top_ids(index, "pre ping")[0] == "01DB"
    assert top_ids(index, "LaunchDarkly")[0] == "01NEW"

    store.memories["01CFG"].title = "Config precedence"
    result = store.sync(index)
    assert (result.added, result.updated, result.deleted) == (0, 1, 0)
    assert store.loaded == ["01CFG"]


def test_sync_to_empty_and_back(index: MemoryIndex) -> None:
    store = Store([])
    result = store.sync(index)
    assert result.rebuilt and index.count() == 0
    assert index.search("anything") == []
    store.memories["01A"] = mem("01A", "First memory about deadlocks")
    result = store.sync(index)
    assert (result.added, result.rebuilt) == (1, False)
    assert top_ids(index, "deadlocks") == ["01A"]  # FTS index created once rows exist
    del store.memories["01A"]
    assert store.sync(index).deleted == 1
    assert index.search("deadlocks") == []


def test_no_index_yet(index: MemoryIndex) -> None:
    assert index.count() == 0
    assert index.ids() == {}
    assert index.search("config") == []
    assert index.path() == index.index_dir


def test_lock_file_location(synced: tuple[MemoryIndex, Store], repo: Path) -> None:
    assert (repo / "run" / "index.lock").parent.is_dir()


def test_many_writes_stay_compact(index: MemoryIndex) -> None:
    store = Store([])
    table_dir = index.index_dir / "memories.lance"
    for i in range(30):
        store.memories[f"01M{i:02d}"] = mem(f"01M{i:02d}", f"note number {i} about caching")
        if i % 3 == 0 and i:
            del store.memories[f"01M{i - 1:02d}"]
        store.sync(index)
        manifests = len(list((table_dir / "_versions").glob("*.manifest")))
        assert manifests <= index_mod.COMPACT_VERSIONS + 2  # old versions are cleaned up
        assert index._table.stats()["fragment_stats"]["num_fragments"] <= index_mod.COMPACT_FRAGMENTS + 1
        assert top_ids(index, f"number {i}")[0] == f"01M{i:02d}"  # unindexed rows are searchable
    assert index.count() == len(store.memories) == 21
    assert len(index.ids()) == 21


def test_optimize_folds_rows_into_fts(index: MemoryIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_mod, "COMPACT_UNINDEXED", 0)  # optimize after every write
    store = Store(list(CORPUS))
    store.sync(index)
    store.memories["01K8S"] = mem("01K8S", "Deploys go through kubernetes helm charts")
    store.sync(index)
    for col in index_mod.FTS_COLUMNS:
        assert index._table.index_stats(f"{col}_idx").num_unindexed_rows == 0
    # lance compacts only fragments already covered by the index: the newest stays apart until next time
    assert index._table.stats()["fragment_stats"]["num_fragments"] <= 2
    # cleanup runs between compaction and the index commit: at most 2 versions remain
    assert len(list((index.index_dir / "memories.lance" / "_versions").glob("*.manifest"))) <= 2
    assert top_ids(index, "kubernetes")[0] == "01K8S"


# --------------------------------------------------------------------------- search


def test_search_by_words(synced: tuple[MemoryIndex, Store]) -> None:
    index, _ = synced
    assert top_ids(index, "connection pool")[0] == "01DB"
    assert top_ids(index, "exponential backoff")[0] == "01RETRY"
    assert top_ids(index, "observability")[0] == "01LOG"  # tags are searchable


def test_search_by_split_identifier(synced: tuple[MemoryIndex, Store]) -> None:
    index, _ = synced
    hits = index.search("parse config")
    assert hits[0].id == "01CFG" and hits[0].fts_rank == 1
    assert top_ids(index, "parseConfig")[0] == "01CFG"
    assert top_ids(index, "ConfigLoader")[0] == "01CFG"
    assert top_ids(index, "HttpClient.request")[0] == "01RETRY"


def test_search_by_path(synced: tuple[MemoryIndex, Store]) -> None:
    index, _ = synced
    assert top_ids(index, "src/auth/jwt_signer.py")[0] == "01AUTH"
    assert top_ids(index, "jwt_signer")[0] == "01AUTH"
    assert top_ids(index, "db/pool.py")[0] == "01DB"


@pytest.mark.parametrize("query,expected", [
    # No word of these queries occurs in the expected memory: only the vector side can find it.
    ("precedence of settings sources", "01CFG"),
    ("login credential verification", "01AUTH"),
])
def test_semantic_paraphrase(synced: tuple[MemoryIndex, Store], query: str, expected: str) -> None:
    index, _ = synced
    hits = index.search(query, limit=5)
    assert hits[0].id == expected
    assert hits[0].vector_rank == 1 and hits[0].fts_rank is None
    assert hits[0].similarity is not None and 0.1 < hits[0].similarity <= 1.0
    assert all(h.similarity <= hits[0].similarity for h in hits if h.similarity is not None)


def test_search_limit_dedupe_and_determinism(synced: tuple[MemoryIndex, Store]) -> None:
    index, _ = synced
    hits = index.search("tokens config pool redis logs retry", limit=3)
    assert len(hits) == 3
    ids = [h.id for h in index.search("tokens config pool redis logs retry", limit=50)]
    assert len(ids) == len(set(ids)) == len(CORPUS)
    assert ids == [h.id for h in index.search("tokens config pool redis logs retry", limit=50)]
    scores = [h.score for h in index.search("tokens config pool redis logs retry", limit=50)]
    assert scores == sorted(scores, reverse=True)
    assert index.search("tokens", limit=0) == []


def test_search_where_filter(synced: tuple[MemoryIndex, Store]) -> None:
    index, _ = synced
    ids = top_ids(index, "tests redis logging stderr", where="type = 'gotcha'")
    assert set(ids) == {"01LOG", "01REDIS"}
    ids = top_ids(index, "signed tokens", where="array_has_any(paths, ['src/auth/jwt_signer.py'])")
    assert ids == ["01AUTH"]
    with pytest.raises(ValueError):
        index.search("tokens", where="no_such_column = 1")
    assert top_ids(index, "signed tokens")[0] == "01AUTH"  # a bad filter does not mark the index


@pytest.mark.parametrize("query", [
    '"unterminated', "a/b-c", "NOT OR AND", "foo:bar (x)", "*", "🚀 emoji", "'; DROP TABLE",
    "", "   ", "\x00", "title:(config OR \"x\")^2 ~3", "%_\\", "-", "+tokens -pool",
])
def test_hostile_queries_do_not_raise(synced: tuple[MemoryIndex, Store], query: str) -> None:
    index, _ = synced
    hits = index.search(query)
    assert isinstance(hits, list)
    assert index.count() == len(CORPUS)


def test_embeddings_off_full_text_still_works(repo: Path) -> None:
    index = MemoryIndex(repo / "index", None)
    store = Store(list(CORPUS))
    assert store.sync(index).added == len(CORPUS)
    hits = index.search("parse config")
    assert hits[0].id == "01CFG" and hits[0].vector_rank is None and hits[0].similarity is None
    assert top_ids(index, "src/auth/jwt_signer.py")[0] == "01AUTH"
    assert index.search("precedence of settings sources") == []  # no lexical match, no vectors
    assert index.search("🚀") == []


# --------------------------------------------------------------------------- rebuilds


def test_rebuild_when_dir_missing(synced: tuple[MemoryIndex, Store]) -> None:
    index, store = synced
    import shutil
    shutil.rmtree(index.index_dir)
    result = store.sync(index)
    assert (result.rebuilt, result.reason, result.added) == (True, "missing", len(CORPUS))
    assert top_ids(index, "connection pool")[0] == "01DB"


def _data_files(index: MemoryIndex) -> list[Path]:
    files = sorted((index.index_dir / "memories.lance" / "data").glob("*.lance"))
    assert files
    return files


def test_rebuild_when_data_file_truncated(synced: tuple[MemoryIndex, Store]) -> None:
    index, store = synced
    for f in _data_files(index):
        size = f.stat().st_size
        with open(f, "r+b") as fh:
            fh.truncate(size // 2)
    result = store.sync(index)
    assert result.rebuilt and result.reason.startswith("corrupt: ")
    assert "\n" not in result.reason
    assert index.count() == len(CORPUS)
    assert top_ids(index, "connection pool")[0] == "01DB"


def test_rebuild_when_manifest_is_garbage(synced: tuple[MemoryIndex, Store]) -> None:
    index, store = synced
    for f in (index.index_dir / "memories.lance" / "_versions").glob("*.manifest"):
        f.write_bytes(b"\x00garbage" * 64)
    fresh = MemoryIndex(index.index_dir, WordLlamaEmbedder())  # another process: no cached handle
    result = store.sync(fresh)
    assert result.rebuilt and result.reason.startswith("corrupt: ")
    assert fresh.count() == len(CORPUS)


def test_rebuild_when_meta_is_garbage(synced: tuple[MemoryIndex, Store]) -> None:
    index, store = synced
    (index.index_dir / index_mod.META_FILE).write_text("{not json", encoding="utf-8")
    result = store.sync(index)
    assert result.rebuilt and result.reason == "corrupt: unreadable meta file"


def test_search_failure_marks_index_for_rebuild(synced: tuple[MemoryIndex, Store]) -> None:
    index, store = synced
    for f in _data_files(index):
        f.unlink()
    reader = MemoryIndex(index.index_dir, WordLlamaEmbedder())
    with pytest.raises(IndexUnavailable) as info:
        reader.search("connection pool")
    assert "gitmem sync --rebuild" in info.value.hint
    assert (index.index_dir / index_mod.REBUILD_MARKER).exists()
    result = store.sync(reader)
    assert result.rebuilt and result.reason.startswith("corrupt: ")
    assert not (index.index_dir / index_mod.REBUILD_MARKER).exists()
    assert top_ids(reader, "connection pool")[0] == "01DB"


def test_rebuild_on_schema_version_bump(synced: tuple[MemoryIndex, Store],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    index, store = synced
    old = index_mod.INDEX_SCHEMA_VERSION
    monkeypatch.setattr(index_mod, "INDEX_SCHEMA_VERSION", old + 1)
    result = store.sync(index)
    assert (result.rebuilt, result.reason) == (True, f"schema {old} -> {old + 1}")
    assert store.sync(index).rebuilt is False


def test_rebuild_on_lancedb_version_change(synced: tuple[MemoryIndex, Store]) -> None:
    index, store = synced
    import json
    meta_path = index.index_dir / index_mod.META_FILE
    meta = json.loads(meta_path.read_text())
    meta["lancedb"] = "0.1.0"
    meta_path.write_text(json.dumps(meta))
    result = store.sync(index)
    assert result.rebuilt and result.reason.startswith("lancedb 0.1.0 -> ")


def test_rebuild_on_embedder_change(synced: tuple[MemoryIndex, Store]) -> None:
    index, store = synced
    off = MemoryIndex(index.index_dir, None)
    assert off.search("connection pool")[0].id == "01DB"  # before the sync: FTS only, no error
    result = store.sync(off)
    assert (result.rebuilt, result.reason) == (True, "embedder changed")
    assert "vector" not in off._table.schema.names
    assert off.search("connection pool")[0].id == "01DB"
    back = MemoryIndex(index.index_dir, WordLlamaEmbedder())
    assert back.search("precedence of settings sources") == []  # index has no vectors yet
    result = store.sync(back)
    assert (result.rebuilt, result.reason) == (True, "embedder changed")
    assert back.search("precedence of settings sources")[0].id == "01CFG"


def test_explicit_rebuild_keeps_unknown_files(synced: tuple[MemoryIndex, Store]) -> None:
    index, store = synced
    keep = index.index_dir / "README.txt"
    keep.write_text("not ours")
    result = index.rebuild(store.current(), store.load)
    assert (result.rebuilt, result.reason, result.added) == (True, "requested", len(CORPUS))
    assert keep.read_text() == "not ours"
    assert index.count() == len(CORPUS)


def test_unusable_location_raises_index_unavailable(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    index = MemoryIndex(blocker / "index", None)  # parent is a regular file
    with pytest.raises(IndexUnavailable) as info:
        index.sync({}, lambda mid: CORPUS[0])
    assert info.value.hint


# --------------------------------------------------------------------------- concurrency

_WORKER = textwrap.dedent("""
    import sys, time, hashlib
    from pathlib import Path
    from gitmem.search.index import MemoryIndex
    from gitmem.search.embed import WordLlamaEmbedder
    from gitmem.model import Memory, Anchor

    index_dir, go, n, ready = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    mems = {f"01C{i:04d}": Memory(id=f"01C{i:04d}", type="discovery", title=f"shared memory {i}",
                                  body="written by two processes at once",
                                  anchors=[Anchor(f"src/m{i % 5}.py", f"Thing{i}.run", kind="method")])
            for i in range(n)}
    current = {k: hashlib.sha256(repr(m).encode()).hexdigest() for k, m in mems.items()}
    index = MemoryIndex(index_dir, WordLlamaEmbedder())
    WordLlamaEmbedder().embed(["warm up"])
    ready.touch()
    while not go.exists():
        time.sleep(0.005)
    r = index.sync(current, mems.__getitem__)
    print(r.added, r.updated, r.deleted, r.rebuilt)
""")


def test_two_processes_sync_concurrently(repo: Path, tmp_path: Path) -> None:
    index_dir = repo / "index"
    # Pre-build with the first 60 memories (same content as the workers'); both workers then add
    # the same 40 new ids at once,
    # the case that duplicates rows in lancedb 0.40 without a writer lock.
    script = tmp_path / "worker.py"
    script.write_text(_WORKER)
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    first = [Memory(id=f"01C{i:04d}", type="discovery", title=f"shared memory {i}",
                    body="written by two processes at once",
                    anchors=[Anchor(f"src/m{i % 5}.py", f"Thing{i}.run", kind="method")]) for i in range(60)]
    pre = Store(first)
    assert pre.sync(MemoryIndex(index_dir, WordLlamaEmbedder())).added == 60

    go = tmp_path / "go"
    ready = [tmp_path / f"ready{i}" for i in (1, 2)]
    procs = [subprocess.Popen([sys.executable, str(script), str(index_dir), str(go), "100", str(r)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in ready]
    deadline = time.monotonic() + 60
    while not all(r.exists() for r in ready) and time.monotonic() < deadline:
        time.sleep(0.01)  # both have imported lancedb and loaded wordllama
    go.touch()
    outputs = [p.communicate(timeout=120) for p in procs]
    for p, (_out, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err
    results = sorted(out.split() for out, _ in outputs)
    assert results == [["0", "0", "0", "False"], ["40", "0", "0", "False"]]

    index = MemoryIndex(index_dir, WordLlamaEmbedder())
    assert index.count() == 100
    assert len(index.ids()) == 100  # count() counts rows, ids() distinct ids: no duplicates
    assert top_ids(index, "shared memory 77 Thing77")[0] == "01C0077"


def test_search_sees_other_writers_commits(synced: tuple[MemoryIndex, Store]) -> None:
    index, store = synced
    reader = MemoryIndex(index.index_dir, WordLlamaEmbedder())
    assert "01K8S" not in top_ids(reader, "kubernetes")
    store.memories["01K8S"] = mem("01K8S", "Deploys go through kubernetes helm charts")
    store.sync(index)  # another handle writes and optimizes
    hits = reader.search("kubernetes")
    assert hits[0].id == "01K8S" and hits[0].fts_rank == 1
    assert [h.id for h in hits if h.fts_rank] == ["01K8S"]
