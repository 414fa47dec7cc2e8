"""``python -m gitmem``: the same as the ``gitmem`` command (used by tests and MCP client configs): a read command
is answered by the warm process when it can (``daemon.front``)."""

from .daemon.front import entry

if __name__ == "__main__":
    entry()
