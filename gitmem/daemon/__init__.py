"""The warm process, one per user: ``client`` (standard library only: the hooks and the ``gitmem`` entry point
import it) asks it over a Unix domain socket, ``server`` answers (``python -m gitmem.daemon [--warm ROOT]``) with
every repository's index and catalog and one embedding model kept open.
"""
