"""The hybrid search without LanceDB (``search.hybrid``, ``search.lexical.hybrid_hits`` / ``text_ranking``).

Real repositories in temp dirs, the real packaged WordLlama model, the real catalog; no mocks. (Its agreement with
the LanceDB index it replaced was checked while both existed: bench/README.md, bench/search_agreement.py at
da55084.)
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
from testing.gitmem_cli import gitmem
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


def test_the_vector_side_is_the_exact_cosine_ranking_of_the_memories_texts(repo: Path) -> None:
    store = Store(Repo(str(repo)))
    mems = store.load_all().memories
    emb = embed.WordLlamaEmbedder()
    ids = sorted(mems)
    ref = emb.embed([hybrid.embedding_text(mems[i]) for i in ids]).astype(np.float64)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    con = _con(repo)
    try:
        hybrid.sync(con, emb)
        for query in ["gateway timeout retries", "who logged out", "password rotation", "constant time compare"]:
            q = emb.embed([query])[0].astype(np.float64)
            sims = ref @ (q / np.linalg.norm(q))
            theirs = sorted(zip(ids, sims.tolist(), strict=True), key=lambda p: (-p[1], p[0]))
            ours = hybrid.vector_ranking(con, emb.embed([query])[0], 50)
            assert [m for m, _ in ours] == [m for m, _ in theirs]
            assert all(abs(a - b) < 1e-5 for (_, a), (_, b) in zip(ours, theirs, strict=True))
    finally:
        con.close()


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


def test_the_bm25_side_stems_drops_stop_words_and_ranks_the_matching_memory_first(repo: Path) -> None:
    store = Store(Repo(str(repo)))
    title = {m.id: m.title for m in store.load_all().memories.values()}
    con = _con(repo)
    try:
        hybrid.sync(con, embed.WordLlamaEmbedder())
        for query, first in [("the gateway timed out", "Retries back off"), ("passwords compared", "Passwords are"),
                             ("rotated tokens", "Session tokens"), ("logout for a year", "The audit log")]:
            ours = hybrid.fts_ranking(con, query, 50)
            assert ours and title[ours[0][0]].startswith(first), (query, ours)
        assert hybrid.fts_ranking(con, "the of and", 50) == []  # stop words only: no term, no hit
    finally:
        con.close()


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


def test_update_counts_what_it_did_and_behind_says_what_it_would_do(repo: Path) -> None:
    emb = embed.WordLlamaEmbedder()
    con = _con(repo)
    try:
        assert hybrid.behind(con, emb) == hybrid.SyncResult(5, 0, 0, True, "missing")
        assert hybrid.update(con, emb) == hybrid.SyncResult(5, 0, 0, True, "missing")
        assert hybrid.behind(con, emb) == hybrid.SyncResult(0, 0, 0, False, "")
        assert hybrid.update(con, emb) == hybrid.SyncResult(0, 0, 0, False, "")
        assert hybrid.update(con, emb, rebuild=True) == hybrid.SyncResult(5, 0, 0, True, "requested")
        assert hybrid.behind(con, None) == hybrid.SyncResult(5, 0, 0, True, f"embedder {emb.name} -> none")
    finally:
        con.close()
    store = Store(Repo(str(repo)))
    mems = store.load_all().memories
    gone = next(m for m in mems.values() if m.title.startswith("The audit log"))
    changed = next(m for m in mems.values() if m.title.startswith("Session tokens"))
    ok(repo, "forget", gone.id)
    path = next(p for p in (repo / ".gitmem").rglob(f"{changed.id}.md"))
    path.write_text(path.read_text().replace("rotated after", "rotated soon after"))
    ok(repo, "remember", "Webhooks are signed with the shared secret", "--anchor", "app/auth.py::logout")
    con = _con(repo)
    try:
        assert hybrid.behind(con, emb) == hybrid.SyncResult(1, 1, 1, False, "")
        assert hybrid.update(con, emb) == hybrid.SyncResult(1, 1, 1, False, "")
        assert hybrid.behind(con, emb) == hybrid.SyncResult(0, 0, 0, False, "")
    finally:
        con.close()


def test_gitmem_sync_reports_the_vectors_and_removes_an_older_gitmems_lancedb_folder(repo: Path) -> None:
    import json

    from gitmem import layout

    old = layout.of(repo).index_dir
    (old / "memories.lance").mkdir(parents=True)
    (old / "gitmem-index.json").write_text("{}")
    memory_files = sorted((repo / ".gitmem").rglob("*.md"))
    doctor = json.loads(gitmem(repo, "doctor", "--json", env={"GITMEM_NO_DAEMON": "1"}).stdout)["checks"]
    assert any(c["name"] == "index" and c["level"] == "warn" and "older gitmem" in c["message"] for c in doctor)
    first = json.loads(ok(repo, "sync", "--json"))
    assert first["search"] == "hybrid" and first["catalog"] == 5 and first["invalid"] == 0
    assert (first["added"], first["updated"], first["deleted"]) == (5, 0, 0) and first["rebuilt"]
    assert not old.exists()
    assert sorted((repo / ".gitmem").rglob("*.md")) == memory_files  # derived data only
    again = json.loads(ok(repo, "sync", "--json"))
    assert (again["added"], again["updated"], again["deleted"], again["rebuilt"]) == (0, 0, 0, False)
    doctor = json.loads(gitmem(repo, "doctor", "--json", env={"GITMEM_NO_DAEMON": "1"}).stdout)["checks"]
    lines = [c for c in doctor if c["name"] == "index"]
    assert [c["message"] for c in lines] == ["search vectors in sync (5 memories)"]
    rebuilt = json.loads(ok(repo, "sync", "--rebuild", "--json"))
    assert rebuilt["rebuilt"] and rebuilt["added"] == 5 and rebuilt["catalog"] == 5
    assert "catalog and search vectors synced" in ok(repo, "sync")


def test_a_damaged_vector_is_embedded_again_by_the_next_search(repo: Path) -> None:
    """A vector cut short (a torn write, a hand edit of the catalog) is not kept out of the search for good: the
    cold search that finds it leaves it out and marks it, and the next one embeds it again and ranks as before."""
    import json

    def ranks() -> list[tuple[str, int | None]]:
        proc = subprocess.run([sys.executable, "-m", "gitmem", "recall", "gateway timeout", "--json"], cwd=repo,
                              capture_output=True, text=True, check=True, env={**os.environ, "GITMEM_NO_DAEMON": "1"})
        return [(h["id"], h["vector_rank"]) for h in json.loads(proc.stdout)]

    want = ranks()
    assert want and all(vr is not None for _, vr in want)
    con = _con(repo)
    con.execute("UPDATE vectors SET vec = substr(vec, 1, 10)")
    con.commit()
    con.close()
    assert all(vr is None for _, vr in ranks())  # left out, not misread
    con = _con(repo)
    assert set(dict(con.execute("SELECT id, digest FROM vectors")).values()) == {""}
    con.close()
    assert ranks() == want
