"""``python -m gitmem.daemon [--warm ROOT]``: the user's warm process, ROOT's state loaded first
(``gitmem.daemon.server``)."""

import sys

from .server import main

if __name__ == "__main__":
    sys.exit(main())
