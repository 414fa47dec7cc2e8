"""Tests for gitmem.search.embed: the offline WordLlama embedder, the OpenAI-compatible
client against a real HTTP server on 127.0.0.1, and configuration parsing."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gitmem.errors import ConfigError, EmbeddingError
from gitmem.search import embed
from gitmem.search.embed import OpenAIEmbedder, WordLlamaEmbedder, embedder_from_config, normalize_rows

REPO_ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- WordLlama


def test_wordllama_shape_dtype_and_norm() -> None:
    e = WordLlamaEmbedder()
    assert e.name == "wordllama:l2_supercat_256"
    assert e.dim == 256
    out = e.embed(["config load order", "retry with backoff", "x" * 5000])
    assert out.shape == (3, 256)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-5)


def test_wordllama_empty_inputs() -> None:
    e = WordLlamaEmbedder()
    assert e.embed([]).shape == (0, 256)
    assert e.embed([]).dtype == np.float32
    out = e.embed([""])  # no tokens: a zero row, never NaN
    assert out.shape == (1, 256)
    assert np.isfinite(out).all() and not out.any()


def test_wordllama_is_deterministic_and_cached_per_process() -> None:
    a = WordLlamaEmbedder().embed(["same text"])
    first = embed._WORDLLAMA_INSTANCE
    b = WordLlamaEmbedder().embed(["same text"])
    assert embed._WORDLLAMA_INSTANCE is first
    np.testing.assert_array_equal(a, b)


def test_wordllama_semantics_are_sane() -> None:
    e = WordLlamaEmbedder()
    v = e.embed(["precedence of settings sources",
                 "Configuration load order is environment variables, then the YAML file, then defaults.",
                 "The frontend bundle is built with vite before deploying."])
    assert float(v[0] @ v[1]) > float(v[0] @ v[2])


def test_wordllama_offline_and_leaves_root_logger_alone() -> None:
    """Fresh process, hub downloads disabled: the packaged files suffice, and
    wordllama's import-time logging.basicConfig(INFO) is undone."""
    code = (
        "import logging, sys\n"
        "from gitmem.search.embed import WordLlamaEmbedder\n"
        "assert 'wordllama' not in sys.modules\n"
        "v = WordLlamaEmbedder().embed(['hello world'])\n"
        "root = logging.getLogger()\n"
        "assert root.handlers == [], root.handlers\n"
        "assert root.level == logging.WARNING, root.level\n"
        "print(v.shape)\n"
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               PYTHONPATH=str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "(1, 256)"
    assert proc.stderr == ""


def test_normalize_rows_keeps_zero_rows() -> None:
    out = normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])
    assert out.dtype == np.float32


# --------------------------------------------------------------------------- a real OpenAI-compatible server


@dataclass
class FakeServer:
    """An OpenAI-compatible /v1/embeddings server on 127.0.0.1, in a thread."""

    status: int = 200
    delay: float = 0.0
    dim: int = 8
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    base_url: str = ""


def vector_for(text: str, dim: int) -> list[float]:
    """Deterministic test vector: bytes of sha256(text) mapped to [-1, 1]."""
    digest = hashlib.sha256(text.encode()).digest() * (dim // 32 + 1)
    return [b / 127.5 - 1.0 for b in digest[:dim]]


@pytest.fixture
def server() -> Iterator[FakeServer]:
    state = FakeServer()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep pytest output clean
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            state.headers.append({k.lower(): v for k, v in self.headers.items()})
            if state.delay:
                time.sleep(state.delay)
            if self.path != "/v1/embeddings":
                self._reply(404, {"error": {"message": "not found"}})
                return
            if state.status != 200:
                self._reply(state.status, {"error": {"message": "model crashed", "type": "server_error"}},
                            {"retry-after-ms": "10"})
                return
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            dim = body.get("dimensions") or state.dim
            data = [{"object": "embedding", "index": i, "embedding": vector_for(t, dim)}
                    for i, t in enumerate(inputs)]
            data.reverse()  # clients must order by "index", not by position
            self._reply(200, {"object": "list", "data": data, "model": body["model"],
                              "usage": {"prompt_tokens": 1, "total_tokens": 1}})

        def _reply(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            try:
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_openai_embedder_against_real_server(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITMEM_TEST_KEY", raising=False)
    e = OpenAIEmbedder(server.base_url, "nomic-embed-text", api_key_env="GITMEM_TEST_KEY", timeout=5)
    assert e.name == f"openai:{server.base_url}:nomic-embed-text"
    texts = ["alpha", "beta", "gamma"]
    out = e.embed(texts)
    assert out.shape == (3, 8) and out.dtype == np.float32
    expected = normalize_rows(np.array([vector_for(t, 8) for t in texts]))
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    body = server.requests[-1]
    assert body["model"] == "nomic-embed-text"
    assert body["input"] == texts
    assert body["encoding_format"] == "float"
    assert "dimensions" not in body
    assert server.headers[-1]["authorization"] == "Bearer none"  # env var unset: placeholder key
    assert e.dim == 8  # learned from the answer, no extra request
    assert len(server.requests) == 1
    assert e.embed([]).shape == (0, 8)


def test_openai_embedder_dimensions_key_and_batches(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_TEST_KEY", "sk-test-123")
    e = embedder_from_config({"provider": "openai", "base_url": server.base_url, "model": "m",
                              "api_key_env": "GITMEM_TEST_KEY", "timeout": 5, "dimensions": 16,
                              "batch_size": 2})
    assert isinstance(e, OpenAIEmbedder)
    assert e.name == f"openai:{server.base_url}:m:16"
    assert e.dim == 16 and server.requests == []  # configured: no probe
    out = e.embed(["a", "b", "c", ""])
    assert out.shape == (4, 16)
    assert [r["input"] for r in server.requests] == [["a", "b"], ["c", " "]]
    assert all(r["dimensions"] == 16 for r in server.requests)
    assert server.headers[0]["authorization"] == "Bearer sk-test-123"


def test_openai_dim_probe(server: FakeServer) -> None:
    server.dim = 12
    e = OpenAIEmbedder(server.base_url, "m", timeout=5)
    assert e.dim == 12
    assert len(server.requests) == 1


def test_openai_http_500_raises_embedding_error_after_client_retries(server: FakeServer) -> None:
    server.status = 500
    e = OpenAIEmbedder(server.base_url, "m", timeout=5, max_retries=1)
    with pytest.raises(EmbeddingError) as info:
        e.embed(["x"])
    err = info.value
    assert "HTTP 500" in err.message and "\n" not in err.message
    assert err.hint
    assert len(server.requests) == 2  # one try + one retry, by the openai client


def test_openai_timeout(server: FakeServer) -> None:
    server.delay = 1.0
    e = OpenAIEmbedder(server.base_url, "m", timeout=0.2, max_retries=0)
    with pytest.raises(EmbeddingError, match="timed out"):
        e.embed(["x"])


def test_openai_connection_refused() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    e = OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", "m", timeout=2, max_retries=0)
    with pytest.raises(EmbeddingError, match="cannot connect") as info:
        e.embed(["x"])
    assert "base_url" in info.value.hint


def test_openai_wrong_path_is_an_http_error(server: FakeServer) -> None:
    e = OpenAIEmbedder(server.base_url.removesuffix("/v1"), "m", timeout=5, max_retries=0)
    with pytest.raises(EmbeddingError, match="HTTP 404"):
        e.embed(["x"])


def test_hybrid_search_with_openai_embedder(server: FakeServer, tmp_path: Path) -> None:
    """End to end: the search's vectors are embedded through the server (its dim learnt by probing); another
    process with the same config and nothing changed sends no request; a failing server stops a sync before
    anything is written, and the search falls back to full text with a warning."""
    from gitmem.catalog import files as catalog_files
    from gitmem.catalog import vectors as catalog_vectors
    from gitmem.git import Repo
    from gitmem.memories import RememberRequest, remember
    from gitmem.search import hybrid
    from gitmem.store import Store, init_layout
    from testing.repos import make_repo

    root = make_repo(tmp_path / "r", {"a.py": "def f(x):\n    return x\n"})
    init_layout(Repo(root))
    store = Store(Repo(root))
    alpha = remember(store, RememberRequest(text="alpha release checklist"))
    beta = remember(store, RememberRequest(text="beta flag is inverted"))
    e = OpenAIEmbedder(server.base_url, "m", timeout=5, max_retries=0)
    con = catalog_files.open_current(store)
    assert con is not None
    try:
        result = hybrid.update(con, e)
        assert result.rebuilt and result.added == 2
        assert {len(b) for _, b in catalog_vectors.blobs(con, 4 * 8)} == {4 * 8}
        hits = hybrid.search(con, e, "beta flag", 10).hits
        assert hits[0].id == beta.id and hits[0].fts_rank == 1 and hits[0].vector_rank is not None
        before = len(server.requests)
        other = OpenAIEmbedder(server.base_url, "m", timeout=5, max_retries=0)
        assert hybrid.update(con, other) == hybrid.SyncResult(0, 0, 0, False, "")
        assert len(server.requests) == before
    finally:
        con.close()

    server.status = 500
    remember(store, RememberRequest(text="gamma rays"))
    con = catalog_files.open_current(store)
    assert con is not None
    try:
        with pytest.raises(EmbeddingError):
            hybrid.update(con, e)
        assert set(catalog_vectors.digests(con)) == {alpha.id, beta.id}
        out = hybrid.search(con, e, "beta flag", 10)
        assert [h.id for h in out.hits] == [beta.id] and out.hits[0].vector_rank is None
        assert out.not_synced and "HTTP 500" in out.not_synced and out.vector_warning
    finally:
        con.close()


# --------------------------------------------------------------------------- configuration


def test_config_defaults_and_none() -> None:
    assert isinstance(embedder_from_config({}), WordLlamaEmbedder)
    assert isinstance(embedder_from_config(None), WordLlamaEmbedder)
    assert isinstance(embedder_from_config({"provider": "wordllama"}), WordLlamaEmbedder)
    assert embedder_from_config({"provider": "none"}) is None


@pytest.mark.parametrize("cfg", [
    {"provider": "cohere"},
    {"provider": 3},
    {"provider": "openai", "model": "m"},
    {"provider": "openai", "base_url": "http://127.0.0.1:1/v1"},
    {"provider": "openai", "base_url": "http://x/v1", "model": "m", "timeout": 0},
    {"provider": "openai", "base_url": "http://x/v1", "model": "m", "timeout": "10"},
    {"provider": "openai", "base_url": "http://x/v1", "model": "m", "dimensions": 2.5},
    {"provider": "openai", "base_url": "http://x/v1", "model": "m", "dimensions": True},
    {"provider": "openai", "base_url": "http://x/v1", "model": "m", "api_key": "sk-secret"},
    {"provider": "wordllama", "model": "l3_supercat"},
    {"provider": "wordllama", "base_url": "http://x/v1"},
])
def test_config_errors(cfg: dict[str, Any]) -> None:
    with pytest.raises(ConfigError) as info:
        embedder_from_config(cfg)
    assert info.value.message.startswith("[embeddings]")
    assert info.value.hint


def test_config_builds_without_contacting_anything() -> None:
    e = embedder_from_config({"provider": "openai", "base_url": "http://127.0.0.1:9/v1/", "model": "m",
                              "timeout": 3, "max_retries": 0})
    assert isinstance(e, OpenAIEmbedder)
    assert e.base_url == "http://127.0.0.1:9/v1" and e.timeout == 3.0 and e.max_retries == 0


def test_recall_survives_an_endpoint_that_goes_down(server: FakeServer, tmp_path: Path) -> None:
    from gitmem.git import Repo
    from gitmem.memories import RememberRequest, remember
    from gitmem.search.lexical import hybrid_recall as recall
    from gitmem.store import Store, init_layout
    from testing.repos import make_repo

    root = make_repo(tmp_path / "r", {"a.py": "def f(x):\n    return x\n"})
    init_layout(Repo(root))
    (root / ".gitmem/config.toml").write_text(
        f'[embeddings]\nprovider = "openai"\nbase_url = "{server.base_url}"\nmodel = "m"\n'
        'timeout = 2\nmax_retries = 0\n')
    store = Store(Repo(root))
    first = remember(store, RememberRequest(text="retry logic lives in f", anchors=("a.py::f",)))
    assert [h.memory.id for h in recall(store, "retry logic")] == [first.id]
    server.status = 500  # the endpoint breaks
    remember(store, RememberRequest(text="a second memory about caching"))
    warnings: list[str] = []
    hits = recall(store, "retry logic", warn=warnings.append)
    assert [h.memory.id for h in hits] == [first.id]
    assert warnings and warnings[0].startswith("index not synced")
