"""gitmem: long-term memory for coding agents, anchored to the code it describes.

Memories live in ``.gitmem/memories/<id>.md`` (committed text), are indexed in a
derived LanceDB index under ``.gitmem/index/`` and are re-checked against the code
by a tree-sitter diff analyzer run from git hooks.
"""

__version__ = "0.1.0"
