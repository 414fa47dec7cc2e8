"""``python -m gitmem``: the same as the ``gitmem`` command (used by tests and MCP client configs)."""

from .cli import entry

if __name__ == "__main__":
    entry()
