"""``python -m gitmem`` and the ``gitmem`` console script: the ``gitmem`` command.

``gitmem mcp`` (with at most ``--repo PATH``) starts the MCP server's front (``integrations.mcp_front``)
without importing the CLI (click and every command module: ~0.1-0.25 s, a third of the MCP start-up
budget); everything else, ``gitmem mcp --help`` and any usage error included, goes to ``gitmem.cli``.
"""

import sys


def main() -> None:
    """Console-script entry point (``gitmem``)."""
    if sys.argv[1:2] == ["mcp"]:
        from .integrations import mcp_front

        direct = mcp_front.direct_args(sys.argv[2:])
        if direct is not None:
            sys.exit(mcp_front.serve(direct.repo))
    from .cli import entry

    entry()


if __name__ == "__main__":
    main()
