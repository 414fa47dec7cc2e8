"""``python -m gitmem.cli``: the ``gitmem`` command (the git hooks spawn ``python -m gitmem.cli sync --quiet``)."""

from . import entry

if __name__ == "__main__":
    entry()
