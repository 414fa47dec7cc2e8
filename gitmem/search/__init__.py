"""Search: the LanceDB index of memories and hybrid recall (BM25 full-text and vectors, fused).

* ``embed``  — embedding providers (``[embeddings]``: the bundled WordLlama model, any
  OpenAI-compatible endpoint, or none);
* ``index``  — the LanceDB index (``layout.index_dir``): schema, incremental sync from the
  catalog's change log, hybrid search with reciprocal rank fusion;
* ``recall`` — opening the index for a store, keeping it in step, ``gitmem recall``.

Importing this package costs nothing; ``index`` imports lancedb (about a second), so nothing on
an agent hook's per-tool-call path may import it.
"""
