"""The catalog: one SQLite database per worktree that knows every memory file, and the only code with SQL.

``layout.of(root).catalog_file`` (``<git-dir>/gitmem/catalog.sqlite``) is derived data: rebuilt from
the memory files whenever it is missing, corrupt or of another schema. Four modules, one job each:

* ``db``    — the schema and every query the hot paths run (agent hooks on each prompt and tool
  call): rows by path, symbol or id, BM25 over FTS5, statuses. Standard library only.
* ``files`` — keeping the rows in step with the memory files while reading only what changed
  (inode, stat key, content hash; git's tree of the team folder), and the change log
  (sequence numbers, tombstones, generation) the LanceDB index follows.
* ``sync``  — statuses: re-checking the memories whose code changed (the diff analyzer) and
  recording what the git hooks computed; the detached ``python -m gitmem.catalog.sync ROOT``.
* ``usage`` — the clone's use log (``gitmem.usage``) folded into the ``usage`` table, and the
  anchored files' last commit times (``code_times``): what the decay of unused memories reads.

This ``__init__`` imports nothing, so ``gitmem.catalog.db`` costs the hooks only itself.
"""
