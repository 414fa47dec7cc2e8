"""The warm per-worktree process: ``client`` (standard library only: the hooks and the ``gitmem`` entry point
import it) asks it over a Unix domain socket, ``server`` answers (``python -m gitmem.daemon ROOT``) with the
index, the embedding model and the catalog kept open.
"""
