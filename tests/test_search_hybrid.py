"""The hybrid search without LanceDB (``search.hybrid``, ``search.lexical.hybrid_hits`` / ``text_ranking``).

Real repositories in temp dirs, the real packaged WordLlama model, the real catalog, a real LanceDB index to
compare with; no mocks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gitmem.catalog import files as catalog_files
from gitmem.git import Repo
from gitmem.search import embed, hybrid, lexical
from gitmem.store import Store
from tests.test_daemon import init_repo, ok

TEXTS = ["retry timeout for the gateway", "", "Passwords are compared in constant time",
         "naïve café — ünïcode and emoji 🚀", "x" * 3000, "snake_case_name CamelCaseName dotted.name()"]


def test_the_light_wordllama_reader_gives_the_packages_vectors_bit_for_bit() -> None:
    rows = embed._load_wordllama_rows()
    full = embed._load_wordllama()
    for texts in ([t] for t in TEXTS):
        assert np.array_equal(rows.embed(texts), full.embed(texts, norm=False))
    assert np.array_equal(rows.embed(TEXTS), full.embed(TEXTS, norm=False))  # a padded batch too


def test_a_query_is_embedded_without_importing_the_wordllama_package() -> None:
    code = ("import sys; from gitmem.search.embed import WordLlamaEmbedder; "
            "v = WordLlamaEmbedder().embed(['retry timeout']); "
            "print(v.shape, 'wordllama' in sys.modules, 'lancedb' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "(1, 256) False False"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "r")
    for text, anchor in [("Retries back off exponentially when the gateway times out", "app/auth.py::login"),
                         ("The audit log keeps every logout for a year", "app/auth.py::logout"),
                         ("Session tokens are rotated after a password change", "app/auth.py::login")]:
        ok(root, "remember", text, "--anchor", anchor)
    return root


def _con(root: Path):  # type: ignore[no-untyped-def]
    con = catalog_files.open_current(Store(Repo(str(root))))
    assert con is not None
    return con


def test_vectors_follow_the_catalog_embedding_only_what_changed(repo: Path) -> None:
    emb = embed.WordLlamaEmbedder()
    con = _con(repo)
    try:
        assert hybrid.sync(con, emb) == 5  # the first sync embeds every memory
        assert hybrid.sync(con, emb) == 0  # unchanged: nothing embedded
    finally:
        con.close()
    ok(repo, "remember", "Webhooks are signed with the shared secret", "--anchor", "app/auth.py::logout")
    con = _con(repo)
    try:
        assert hybrid.sync(con, emb) == 1
        ids, mat = hybrid.matrix(con, emb.dim)
        assert len(ids) == 6 and mat.shape == (6, 256)
        con.execute("DELETE FROM vector_meta WHERE key = 'mark'")  # no mark: digests compared, none re-embedded
        con.commit()
        assert hybrid.sync(con, emb) == 0
    finally:
        con.close()


def test_the_vector_side_equals_lancedbs_exact_cosine_ranking(repo: Path) -> None:
    from gitmem.search.recall import sync_index

    store = Store(Repo(str(repo)))
    index, _, source = sync_index(store)
    table = index._open_for_read()
    con = _con(repo)
    try:
        emb = embed.WordLlamaEmbedder()
        hybrid.sync(con, emb)
        for query in ["gateway timeout retries", "who logged out", "password rotation", "constant time compare"]:
            qvec = emb.embed([query])[0]
            ours = hybrid.vector_ranking(con, qvec, 50)
            res = table.search(qvec, vector_column_name="vector").distance_type("cosine").limit(50).to_arrow()
            theirs = sorted(zip(res.column("id").to_pylist(), res.column("_distance").to_pylist(), strict=True),
                            key=lambda p: (p[1], p[0]))
            assert [m for m, _ in ours] == [m for m, _ in theirs]
            assert all(abs(s - (1 - d)) < 1e-5 for (_, s), (_, d) in zip(ours, theirs, strict=True))
    finally:
        con.close()
        source.con.close()  # type: ignore[union-attr]


def test_hybrid_hits_fuse_bm25_and_vectors_and_find_a_paraphrase(repo: Path) -> None:
    store = Store(Repo(str(repo)))
    hits = lexical.hybrid_hits(store, "gateway timeout", 5)
    assert hits and hits[0].fts_rank == 1 and hits[0].vector_rank is not None
    # no shared word: only the vector side can find it, above the similarity floor
    para = lexical.hybrid_hits(store, "exponential backoff on upstream delays", 5)
    top = lexical.found(store, "gateway timeout", 1)[0][0].memory
    assert top.title.startswith("Retries back off")
    assert any(h.fts_rank is None and h.similarity is not None and h.similarity >= hybrid.MIN_VECTOR_SIMILARITY
               for h in para)
    assert lexical.text_ranking(store, "gateway timeout", 5) == [h.id for h in hits]


def test_recall_cold_imports_neither_lancedb_nor_numpy_once_the_vectors_are_synced(repo: Path) -> None:
    code = ("import sys; from gitmem.cli import entry; sys.argv = ['gitmem', 'recall', 'gateway timeout']\n"
            "try:\n    entry()\nexcept SystemExit:\n    pass\n"
            "print('LOADED', 'lancedb' in sys.modules, 'pyarrow' in sys.modules, 'numpy' in sys.modules, "
            "'wordllama' in sys.modules)")
    env = {**os.environ, "GITMEM_NO_DAEMON": "1"}
    first = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True, env=env)
    assert first.stdout.strip().endswith("LOADED False False True False")  # 5 memories embedded (numpy)
    again = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True, env=env)
    assert "Retries back off" in again.stdout and again.stdout.split("\n")[0] == first.stdout.split("\n")[0]
    assert again.stdout.strip().endswith("LOADED False False False False")


def test_the_query_vector_without_numpy_equals_the_models_and_ranks_alike(repo: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    emb = embed.WordLlamaEmbedder()
    for text in TEXTS:
        ref = emb.embed([text])[0]
        assert np.allclose(emb.query_vector(text), ref, atol=1e-6)
    con = _con(repo)
    try:
        hybrid.sync(con, emb)
        for query in ["gateway timeout retries", "who logged out", "password rotation"]:
            qvec = emb.query_vector(query)
            monkeypatch.delitem(sys.modules, "numpy")  # numpy not imported, as in a cold command: the plain branch
            plain = hybrid.vector_ranking(con, qvec, 50)
            monkeypatch.undo()
            with_numpy = hybrid.vector_ranking(con, qvec, 50)  # numpy is imported here: its branch
            assert [m for m, _ in plain] == [m for m, _ in with_numpy]
            assert all(abs(a - b) < 1e-12 for (_, a), (_, b) in zip(plain, with_numpy, strict=True))
    finally:
        con.close()


def test_the_bm25_side_finds_what_lancedbs_full_text_search_finds_first(repo: Path) -> None:
    from lancedb.query import FullTextOperator, MultiMatchQuery

    from gitmem.search.index import FTS_COLUMNS
    from gitmem.search.recall import sync_index
    from gitmem.textsplit import query_terms

    store = Store(Repo(str(repo)))
    index, _, source = sync_index(store)
    table = index._open_for_read()
    con = _con(repo)
    try:
        hybrid.sync(con, embed.WordLlamaEmbedder())
        for query in ["the gateway timed out", "passwords compared", "rotated tokens", "audit logout"]:
            match = MultiMatchQuery(" ".join(query_terms(query)), list(FTS_COLUMNS), boosts=None,
                                    operator=FullTextOperator.OR)
            res = table.search(match, query_type="fts").select(["id"]).limit(50).to_arrow()
            theirs = sorted(zip(res.column("id").to_pylist(), res.column("_score").to_pylist(), strict=True),
                            key=lambda p: (-p[1], p[0]))
            ours = hybrid.fts_ranking(con, query, 50)
            assert {m for m, _ in ours} == {m for m, _ in theirs}  # the same memories match (stemmed: timed ~ times)
            assert ours[0][0] == theirs[0][0]
    finally:
        con.close()
        source.con.close()  # type: ignore[union-attr]


def test_without_an_embedder_the_hybrid_search_is_its_bm25_side(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "r")
    (root / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    store = Store(Repo(str(root)))
    hits, how = lexical.found(store, "constant time passwords", 5)
    assert how.name == lexical.BM25 and not how.lean
    assert hits and hits[0].memory.title.startswith("Passwords") and hits[0].vector_rank is None
    code = ("import sys; from gitmem.git import Repo; from gitmem.store import Store; "
            "from gitmem.search import lexical; "
            f"print(lexical.text_ranking(Store(Repo({str(root)!r})), 'logout audit', 5)); "
            "print('numpy' in sys.modules, 'lancedb' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert len(eval(out[0])) == 1 and out[1] == "False False"


def test_gitmem_sync_leaves_the_next_search_nothing_to_embed(repo: Path) -> None:
    ok(repo, "sync")
    con = _con(repo)
    try:
        assert hybrid.sync(con, embed.WordLlamaEmbedder()) == 0
        assert len(hybrid.vector_ranking(con, embed.WordLlamaEmbedder().query_vector("gateway"), 50)) == 5
    finally:
        con.close()
