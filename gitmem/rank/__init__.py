"""Ranking and rendering of memories for a context: what the CLI, MCP and every agent hook show.

* ``rank.score``: scoring (proximity to the focus, text relevance, recency, type, confidence,
  staleness), on ``model.Memory`` objects; imports the focus set and the model.
* ``rank.render``: the one renderer and token-budget packer, standard library only, on
  ``render.Item`` (what both a ``score.Scored`` and a catalog row are turned into).
* ``rank.mentions``: what a prompt names (paths, identifiers), standard library only.

This file imports nothing: the per-tool-call hooks import ``gitmem.rank.render`` and
``gitmem.rank.mentions`` without paying for focus, anchors, git or tree-sitter.
"""
