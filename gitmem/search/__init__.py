"""Search: hybrid recall over the catalog (BM25 full text and vectors, fused by RRF).

* ``embed``   — embedding providers (``[embeddings]``: the bundled WordLlama model, any
  OpenAI-compatible endpoint, or none);
* ``hybrid``  — the one hybrid search: the catalog's FTS5 BM25 and exact cosine over the vectors kept
  in the catalog (``catalog.vectors``), fused by reciprocal rank fusion; their sync;
* ``lexical`` — the searches' one entry: BM25 only on a lean install, else ``hybrid``;
* ``warm``    — a search answered by the user's warm process when it can.

Importing this package costs nothing; ``hybrid`` and ``embed`` import numpy and the embedder, so
nothing on an agent hook's per-tool-call path may import them. No module here imports LanceDB (only the
organisation index, ``gitmem.org``, does).
"""
