"""gitmem: long-term memory for coding agents, anchored to the code it describes.

Memories live in ``.gitmem/memories/<id>.md`` (committed text), are indexed in a
derived LanceDB index under ``.gitmem/index/`` and are re-checked against the code
by a tree-sitter diff analyzer run from git hooks.

``__version__`` is the one owner of gitmem's version: the build reads this literal (setuptools'
``dynamic`` version, parsed without importing gitmem), so the installed distribution's metadata
(``importlib.metadata.version("gitmem-cli")``) says the same by construction. It is a constant, not a
metadata lookup, because every hook process imports this package: ``importlib.metadata`` costs 35-150 ms
and imports ``typing`` (``tests/test_hot_path.py``). ``gitmem.dist`` reads the metadata where its cost
does not matter (``--version``, ``doctor``) and says when an install's metadata disagrees.
"""

__version__ = "0.2.0"
