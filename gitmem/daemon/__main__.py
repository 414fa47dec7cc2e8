"""``python -m gitmem.daemon ROOT``: the warm process of the worktree at ROOT (``gitmem.daemon.server``)."""

import sys

from .server import main

if __name__ == "__main__":
    sys.exit(main())
