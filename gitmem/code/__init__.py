"""The code model: tree-sitter symbol tables and fingerprints.

``languages`` says which syntax nodes are symbols in each language (data plus
small per-language hooks); ``symbols`` turns a blob into a table of
qualified name -> :class:`gitmem.model.Symbol` and computes the fingerprints
that decide whether an anchor is still fresh.

Importing this package is cheap: tree-sitter is only imported by
``gitmem.code.symbols`` and ``gitmem.code.languages``, never here. Hook entry
points on the fast path must not import either.
"""

from __future__ import annotations
