"""Embedding providers: text → L2-normalised float32 vectors.

Owns the ``Embedder`` protocol and its two implementations, and the mapping from
the ``[embeddings]`` table of ``.gitmem/config.toml`` to one of them:

* ``WordLlamaEmbedder`` (the default): a static word-embedding model
  (``l2_supercat_256``, 256 dims) whose weights and tokenizer ship inside the
  ``wordllama`` wheel. Fully offline: it reads the packaged files directly and
  never calls ``WordLlama.load()``, which may try to download.
* ``OpenAIEmbedder``: any OpenAI-compatible ``POST /v1/embeddings`` endpoint
  (OpenAI, Ollama, llama.cpp server, vLLM, LM Studio, ...) through the
  ``openai`` client; retries are the client's own (``max_retries``).

Guarantees: ``embed(texts)`` returns a ``numpy.ndarray`` of shape
``(len(texts), dim)``, dtype float32, each row L2-normalised (a row whose raw
vector is all zeros, e.g. an empty text, stays all zeros); lone surrogates (a
query from a non-UTF-8 argv) are embedded as U+FFFD. Provider failures
raise ``gitmem.errors.EmbeddingError`` with a one-line message and a hint; bad
configuration raises ``gitmem.errors.ConfigError``.

Must not import at module level: numpy, wordllama, openai, lancedb. They are
imported on first use so that importing this module stays cheap (hooks may
read the configuration without paying for a model).
"""

from __future__ import annotations

import importlib.util
import logging
import math
import os
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .. import config
from ..errors import ConfigError, EmbeddingError

_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _utf8(text: object) -> str:
    """``text`` as a str that encodes as UTF-8 (lone surrogates -> U+FFFD): tokenizers and JSON need that."""
    return _SURROGATE_RE.sub("\ufffd", text if isinstance(text, str) else str(text))

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy

#: The WordLlama model shipped inside the ``wordllama`` wheel.
WORDLLAMA_MODEL = "l2_supercat_256"
_WORDLLAMA_WEIGHTS = f"weights/{WORDLLAMA_MODEL}.safetensors"
_WORDLLAMA_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_WORDLLAMA_TENSOR_KEY = "embedding.weight"

#: Inputs per request to an OpenAI-compatible endpoint. OpenAI accepts up to
#: 2048 inputs per request; local servers often want fewer.
OPENAI_BATCH_SIZE = 64

PROVIDERS: tuple[str, ...] = ("wordllama", "openai", "none")


@runtime_checkable
class Embedder(Protocol):
    """What the index needs from an embedding provider.

    Attributes:
        name: stable identifier including the model (``wordllama:l2_supercat_256``,
            ``openai:<base_url>:<model>[:<dimensions>]``). The index records it
            and rebuilds when it changes.
        dim: vector length.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> numpy.ndarray:
        """Embed ``texts``.

        Returns:
            float32 array of shape ``(len(texts), dim)`` with L2-normalised rows;
            shape ``(0, dim)`` for an empty list.

        Raises:
            EmbeddingError: the provider failed.
        """
        ...


def normalize_rows(vectors: numpy.ndarray) -> numpy.ndarray:
    """L2-normalise each row of a 2-D array in float32.

    Rows whose norm is 0 (or not finite) are returned as zeros rather than NaN,
    so an empty or all-unknown-token text never poisons a cosine search.

    Args:
        vectors: array of shape ``(n, d)``.

    Returns:
        float32 array of shape ``(n, d)``.
    """
    import numpy as np

    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {arr.shape}")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    ok = np.isfinite(norms) & (norms > 0)
    safe = np.where(ok, norms, 1.0)
    out = np.where(ok, arr / safe, 0.0).astype(np.float32, copy=False)
    return np.ascontiguousarray(out)


# --------------------------------------------------------------------------- WordLlama

_WORDLLAMA_LOCK = threading.Lock()
_WORDLLAMA_INSTANCE: Any = None  # wordllama.WordLlamaInference, cached per process


def _wordllama_package_dir() -> Path:
    """Directory of the installed ``wordllama`` package, found without importing it."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(
            "the wordllama package is not installed",
            "pip install wordllama, or set provider = \"none\" under [embeddings] in .gitmem/config.toml",
        )
    return Path(list(spec.submodule_search_locations)[0])


def _import_wordllama_inference() -> Any:
    """Import ``wordllama.WordLlamaInference`` without its logging side effect.

    ``wordllama/__init__.py`` calls ``logging.basicConfig(level=INFO)``, which
    would attach a stderr handler to the root logger of the whole process (and
    make e.g. every HTTP request of the openai client print a line). The root
    logger's handlers and level are restored after the import.
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        from wordllama.inference import WordLlamaInference
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    return WordLlamaInference


def _wordllama_files() -> tuple[Path, Path, Path, str]:
    """(the wordllama package's folder, its weights file, its tokenizer file, the hint to fix them).

    Raises:
        EmbeddingError: the package is not installed or a file of its model is missing.
    """
    pkg = _wordllama_package_dir()
    weights, tokenizer_file = pkg / _WORDLLAMA_WEIGHTS, pkg / _WORDLLAMA_TOKENIZER
    hint = "reinstall it: pip install --force-reinstall wordllama"
    for f in (weights, tokenizer_file):
        if not f.is_file():
            raise EmbeddingError(f"wordllama model file missing: {f}", hint)
    return pkg, weights, tokenizer_file, hint


def _load_wordllama() -> Any:
    """Build (once per process) the WordLlama inference object from packaged files."""
    global _WORDLLAMA_INSTANCE
    with _WORDLLAMA_LOCK:
        if _WORDLLAMA_INSTANCE is not None:
            return _WORDLLAMA_INSTANCE
        pkg, weights, tokenizer_file, hint = _wordllama_files()
        try:
            from safetensors import safe_open
            from tokenizers import Tokenizer

            inference_cls = _import_wordllama_inference()
            with safe_open(str(weights), framework="np") as fh:
                embedding = fh.get_tensor(_WORDLLAMA_TENSOR_KEY)
            tokenizer = Tokenizer.from_file(str(tokenizer_file))
            _WORDLLAMA_INSTANCE = inference_cls(embedding, tokenizer)
        except EmbeddingError:
            raise
        except Exception as exc:  # corrupt file, incompatible package version
            raise EmbeddingError(f"cannot load the wordllama model from {pkg}: {_one_line(exc)}", hint) from exc
        return _WORDLLAMA_INSTANCE


_WORDLLAMA_LIGHT: _WordLlamaRows | None = None  # cached per process


class _WordLlamaRows:
    """WordLlama's inference (``wordllama.inference.WordLlamaInference.embed``, wordllama 0.3.x) without importing
    the ``wordllama`` package (~0.1-0.2 s: it imports requests, its trainers, numpy.random) and without reading the
    whole 16 MB matrix: the tokenizer, and only the rows of the token ids asked for, read from the memory-mapped
    safetensors file (format: 8-byte little-endian header length, JSON header, raw tensor; huggingface/safetensors
    README). The arithmetic is WordLlama's, step for step (float32 rows, masked sum over tokens in float32, divided
    by the token count), so the vectors are bit-for-bit those of ``WordLlamaInference.embed(texts, norm=False)``
    (tests/test_search_hybrid.py checks it on the packaged model).

    Raises (constructor): OSError, ValueError (a missing or malformed file); tokenizers' own errors.
    """

    def __init__(self, weights: Path, tokenizer_file: Path) -> None:
        import json
        import mmap
        import struct

        from tokenizers import Tokenizer

        with open(weights, "rb") as fh:
            (size,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(size))
            self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        info = header[_WORDLLAMA_TENSOR_KEY]
        self._code = {"F16": "e", "F32": "f"}[info["dtype"]]
        self.rows, self.dim = (int(n) for n in info["shape"])
        self._begin = 8 + size + int(info["data_offsets"][0])
        self._row_format = struct.Struct(f"<{self.dim}{self._code}")
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.tokenizer.enable_padding()
        self.tokenizer.no_truncation()

    @property
    def matrix(self) -> Any:
        """The whole embedding matrix, memory-mapped (numpy, shape (rows, dim))."""
        import numpy as np

        return np.ndarray((self.rows, self.dim), dtype="<f2" if self._code == "e" else "<f4", buffer=self._map,
                          offset=self._begin)

    def vector(self, text: str) -> list[float]:
        """``text``'s L2-normalised vector as a list of floats, without numpy (~0.1 s to import): its tokens' rows
        summed in float32 (``array('f')`` rounds each sum as numpy's float32 sum does), divided by the token
        count, normalised. Equal to ``normalize_rows(self.embed([text]))[0]`` within float32 rounding (1e-6):
        the query side of ``search.hybrid`` (all zeros for a text of no token)."""
        import math
        from array import array
        from operator import add

        ids = self.tokenizer.encode(text, add_special_tokens=False).ids
        acc = array("f", bytes(4 * self.dim))
        for i in ids:
            row = self._row_format.unpack_from(self._map, self._begin + min(max(i, 0), self.rows - 1)
                                               * self._row_format.size)
            acc = array("f", map(add, acc, row))
        count = float(max(len(ids), 1))
        mean = array("f", (x / count for x in acc))
        norm = math.sqrt(math.fsum(x * x for x in mean))
        if not math.isfinite(norm) or norm == 0:
            return [0.0] * self.dim
        return [x / norm for x in mean]

    def embed(self, texts: list[str], batch_size: int = 64) -> Any:
        """Raw (not normalised) float32 vectors of shape (len(texts), dim), as ``WordLlamaInference.embed``."""
        import numpy as np

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i in range(0, len(texts), batch_size):
            encoded = self.tokenizer.encode_batch(texts[i:i + batch_size], is_pretokenized=False,
                                                  add_special_tokens=False)
            ids = np.array([e.ids for e in encoded], dtype=np.int32)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
            np.clip(ids, 0, self.rows - 1, out=ids)
            x = np.asarray(self.matrix[ids], dtype=np.float32)
            mask_sum = np.maximum(mask.sum(axis=1, keepdims=True), 1.0).astype(np.float32)
            out[i:i + x.shape[0]] = np.sum(x * mask[..., np.newaxis], axis=1, dtype=np.float32) / mask_sum
        return out


def _load_wordllama_rows() -> _WordLlamaRows:
    """Build (once per process) the light WordLlama reader of the packaged files.

    Raises:
        EmbeddingError: the package or its files are missing or unreadable.
    """
    global _WORDLLAMA_LIGHT
    with _WORDLLAMA_LOCK:
        if _WORDLLAMA_LIGHT is not None:
            return _WORDLLAMA_LIGHT
        pkg, weights, tokenizer_file, hint = _wordllama_files()
        try:
            _WORDLLAMA_LIGHT = _WordLlamaRows(weights, tokenizer_file)
        except Exception as exc:  # corrupt file, incompatible tokenizers version
            raise EmbeddingError(f"cannot load the wordllama model from {pkg}: {_one_line(exc)}", hint) from exc
        return _WORDLLAMA_LIGHT


#: Up to this many texts, ``WordLlamaEmbedder.embed`` reads only their tokens' rows (``_WordLlamaRows``: a query,
#: a few changed memories); more (a first sync) loads the whole model through the ``wordllama`` package.
LIGHT_MAX_TEXTS = 64


class WordLlamaEmbedder:
    """The default, offline embedder: WordLlama ``l2_supercat_256`` (256 dims).

    WordLlama averages static token embeddings (no transformer at inference), so
    embedding 1,000 short texts takes about 0.2 s on 2 CPUs. The model (about
    16 MB float16, 32,000 tokens x 256) is loaded lazily on the first
    ``embed`` call (about 0.4 s) and shared by every instance in the process.
    """

    name: str = f"wordllama:{WORDLLAMA_MODEL}"
    dim: int = 256

    def embed(self, texts: list[str]) -> numpy.ndarray:
        """Embed ``texts``; see ``Embedder.embed``. Raises ``EmbeddingError``."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = _load_wordllama_rows() if len(texts) <= LIGHT_MAX_TEXTS else _load_wordllama()
        try:
            raw = model.embed([_utf8(t) for t in texts])
        except Exception as exc:
            raise EmbeddingError(f"wordllama failed to embed {len(texts)} text(s): {_one_line(exc)}",
                                 "report this as a gitmem bug") from exc
        return normalize_rows(raw)

    def query_vector(self, text: str) -> list[float]:
        """``text``'s vector without numpy (``_WordLlamaRows.vector``): a search's query. Raises ``EmbeddingError``."""
        model = _load_wordllama_rows()
        try:
            return model.vector(_utf8(text))
        except Exception as exc:
            raise EmbeddingError(f"wordllama failed to embed the query: {_one_line(exc)}",
                                 "report this as a gitmem bug") from exc

    def __repr__(self) -> str:
        return f"WordLlamaEmbedder({self.name!r})"


# --------------------------------------------------------------------------- OpenAI-compatible


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint.

    Args:
        base_url: API root including ``/v1`` (``https://api.openai.com/v1``,
            ``http://127.0.0.1:11434/v1``).
        model: model name sent in the request.
        api_key_env: name of the environment variable holding the API key. If it
            is unset or empty the key ``"none"`` is sent (local servers ignore it).
        timeout: seconds per HTTP request.
        dimensions: if set, sent as ``dimensions`` (models that support
            shortening, e.g. ``text-embedding-3-*``) and the expected vector length.
            If None, the length is learned from one probe request the first time
            ``dim`` is read.
        max_retries: retries of the openai client (exponential back-off, on
            connection errors, 408, 409, 429 and 5xx). No other retry loop exists.
        batch_size: inputs per request.

    ``name`` is ``openai:<base_url>:<model>`` plus ``:<dimensions>`` when set.
    Vectors are requested with ``encoding_format="float"`` (several local servers
    do not implement base64) and L2-normalised here.
    """

    def __init__(self, base_url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 10.0, dimensions: int | None = None, max_retries: int = 2,
                 batch_size: int = OPENAI_BATCH_SIZE) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.dimensions = dimensions
        self.max_retries = int(max_retries)
        self.batch_size = max(1, int(batch_size))
        self.name = f"openai:{self.base_url}:{model}" + (f":{dimensions}" if dimensions else "")
        self._dim: int | None = dimensions
        self._client: Any = None

    @property
    def dim(self) -> int:
        """Vector length: ``dimensions`` if configured, else probed with one request."""
        if self._dim is None:
            self._dim = int(self._request(["dimension probe"]).shape[1])
        return self._dim

    def _get_client(self) -> Any:
        if self._client is None:
            try:
                import openai
            except ImportError as exc:
                from .. import extras

                raise EmbeddingError("the openai package is not installed",
                                     f"install gitmem's all extra: {extras.install_command()}") from exc
            api_key = os.environ.get(self.api_key_env or "") or "none"
            self._client = openai.OpenAI(base_url=self.base_url, api_key=api_key, timeout=self.timeout,
                                         max_retries=self.max_retries)
        return self._client

    def embed(self, texts: list[str]) -> numpy.ndarray:
        """Embed ``texts`` in batches of ``batch_size``; see ``Embedder.embed``.

        Raises:
            EmbeddingError: connection failure, timeout, HTTP error after the
                client's retries, or a malformed answer (wrong count, ragged or
                non-finite vectors, unexpected length).
        """
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(texts[i:i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        out = np.concatenate(parts, axis=0)
        if self._dim is None:
            self._dim = int(out.shape[1])
        elif out.shape[1] != self._dim:
            raise EmbeddingError(
                f"embedding endpoint {self.base_url} returned {out.shape[1]}-dim vectors, expected {self._dim}",
                "set [embeddings] dimensions in .gitmem/config.toml to the model's vector length")
        return normalize_rows(out)

    def _request(self, batch: list[str]) -> numpy.ndarray:
        """One POST /embeddings for ``batch``; returns raw (n, d) float32 rows in input order."""
        import numpy as np

        client = self._get_client()
        import openai

        # Some servers reject empty strings; an empty text has no meaning anyway.
        inputs = [_utf8(t) if t.strip() else " " for t in batch]
        kwargs: dict[str, Any] = {"model": self.model, "input": inputs, "encoding_format": "float"}
        if self.dimensions:
            kwargs["dimensions"] = self.dimensions
        where = f"embedding endpoint {self.base_url} (model {self.model})"
        try:
            resp = client.embeddings.create(**kwargs)
        except openai.AuthenticationError as exc:
            raise EmbeddingError(f"{where} rejected the API key (HTTP {exc.status_code})",
                                 f"set the environment variable {self.api_key_env} to a valid key") from exc
        except openai.APIStatusError as exc:
            raise EmbeddingError(f"{where} answered HTTP {exc.status_code}: {_one_line(exc.message)}",
                                 "check [embeddings] base_url and model in .gitmem/config.toml, "
                                 "or set provider = \"wordllama\" or \"none\"") from exc
        except openai.APITimeoutError as exc:
            raise EmbeddingError(f"{where} timed out after {self.timeout:g} s",
                                 "raise [embeddings] timeout in .gitmem/config.toml or check the server") from exc
        except openai.APIConnectionError as exc:
            raise EmbeddingError(f"cannot connect to {where}: {_one_line(exc)}",
                                 "start the server or fix [embeddings] base_url in .gitmem/config.toml") from exc
        except openai.OpenAIError as exc:
            raise EmbeddingError(f"{where} failed: {_one_line(exc)}",
                                 "check [embeddings] in .gitmem/config.toml") from exc
        except ValueError as exc:  # HTTP 200 with a body that is not JSON (proxy, wrong URL)
            raise EmbeddingError(f"{where} answered with something that is not JSON: {_one_line(exc)}",
                                 "check that base_url points at the OpenAI-compatible API (…/v1)") from exc
        try:
            data = sorted(resp.data, key=lambda d: d.index)
            vectors = [list(d.embedding) for d in data]
            if len(vectors) != len(batch):
                raise ValueError(f"{len(vectors)} vectors for {len(batch)} inputs")
            arr = np.asarray(vectors, dtype=np.float32)
            if arr.ndim != 2 or arr.shape[1] == 0:
                raise ValueError(f"vectors of unexpected shape {arr.shape}")
            if not np.isfinite(arr).all():
                raise ValueError("non-finite values in vectors")
        except (ValueError, TypeError, AttributeError) as exc:
            raise EmbeddingError(f"{where} returned a malformed answer: {_one_line(exc)}",
                                 "check that the server implements the OpenAI embeddings API") from exc
        if self.dimensions and arr.shape[1] != self.dimensions:
            raise EmbeddingError(f"{where} returned {arr.shape[1]}-dim vectors, expected {self.dimensions}",
                                 "the model may not support `dimensions`; remove it from [embeddings]")
        return arr

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self.name!r})"


# --------------------------------------------------------------------------- configuration

_OPENAI_KEYS = set(config.KNOWN_KEYS["embeddings"])


def embedder_from_config(cfg: dict[str, Any] | None) -> Embedder | None:
    """Build the embedder described by the ``[embeddings]`` table of ``.gitmem/config.toml``.

    Accepted forms::

        {}                                   -> WordLlamaEmbedder (the default)
        {"provider": "wordllama"}            -> WordLlamaEmbedder
        {"provider": "none"}                 -> None (full-text search only)
        {"provider": "openai", "base_url": "http://127.0.0.1:11434/v1", "model": "nomic-embed-text",
         "api_key_env": "OPENAI_API_KEY", "timeout": 10, "dimensions": 256,
         "max_retries": 2, "batch_size": 64}  -> OpenAIEmbedder (base_url and model required)

    Nothing is loaded or contacted here.

    Raises:
        ConfigError: unknown provider, unknown key, missing or mistyped value.
    """
    cfg = dict(cfg or {})
    provider = cfg.get("provider", "wordllama")
    if not isinstance(provider, str) or provider.lower() not in PROVIDERS:
        raise ConfigError(f"[embeddings] provider = {provider!r} is not one of {', '.join(PROVIDERS)}",
                          "fix .gitmem/config.toml")
    provider = provider.lower()
    if provider == "none":
        return None
    if provider == "wordllama":
        extra = sorted(set(cfg) - {"provider", "model"})
        if extra:
            raise ConfigError(f"[embeddings] key(s) {', '.join(extra)} not used by provider wordllama",
                              "remove them from .gitmem/config.toml")
        model = cfg.get("model", WORDLLAMA_MODEL)
        if model != WORDLLAMA_MODEL:
            raise ConfigError(f"[embeddings] model = {model!r}: only {WORDLLAMA_MODEL!r} ships with wordllama",
                              f"remove `model` or set it to {WORDLLAMA_MODEL!r}")
        return WordLlamaEmbedder()
    extra = sorted(set(cfg) - _OPENAI_KEYS)
    if extra:
        raise ConfigError(f"[embeddings] unknown key(s) for provider openai: {', '.join(extra)}",
                          f"allowed: {', '.join(sorted(_OPENAI_KEYS))}")
    for key in ("base_url", "model"):
        if not isinstance(cfg.get(key), str) or not cfg[key].strip():
            raise ConfigError(f"[embeddings] provider openai needs `{key}`",
                              "e.g. base_url = \"http://127.0.0.1:11434/v1\", model = \"nomic-embed-text\"")
    api_key_env = cfg.get("api_key_env", "OPENAI_API_KEY")
    if not isinstance(api_key_env, str):
        raise ConfigError("[embeddings] api_key_env must be the name of an environment variable",
                          "e.g. api_key_env = \"OPENAI_API_KEY\"")
    timeout = _number(cfg, "timeout", 10.0, positive=True)
    max_retries = int(_number(cfg, "max_retries", 2, integer=True))
    batch_size = int(_number(cfg, "batch_size", OPENAI_BATCH_SIZE, integer=True, positive=True))
    dimensions = cfg.get("dimensions")
    if dimensions is not None:
        dimensions = int(_number(cfg, "dimensions", 0, integer=True, positive=True))
    return OpenAIEmbedder(cfg["base_url"].strip(), cfg["model"].strip(), api_key_env=api_key_env,
                          timeout=timeout, dimensions=dimensions, max_retries=max_retries,
                          batch_size=batch_size)


def _number(cfg: dict[str, Any], key: str, default: float, *, integer: bool = False,
            positive: bool = False) -> float:
    value = cfg.get(key, default)
    if (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and (not integer or float(value).is_integer()) and (value > 0 if positive else value >= 0)):
        return value
    kind = "integer" if integer else "number"
    raise ConfigError(f"[embeddings] {key} = {value!r} must be a {'positive' if positive else 'non-negative'} "
                      f"{kind}", "fix .gitmem/config.toml")


def _one_line(exc: BaseException | str) -> str:
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    return line if len(line) <= 200 else line[:197] + "..."
