"""``python -m gitmem`` and the ``gitmem`` console script: the ``gitmem`` command's first step.

``gitmem mcp`` (with at most ``--repo PATH``) starts the MCP server's front (``integrations.mcp_front``)
without importing the CLI (click and every command module: ~0.1-0.25 s, a third of the MCP start-up
budget); every other command goes to ``daemon.front`` (a read command answered by the warm process,
else ``gitmem.cli``), ``gitmem mcp --help`` and any usage error of ``mcp`` included.

Must not import: anything but the standard library before it knows which of the two runs.
"""

import sys


def main() -> None:
    """Console-script entry point (``gitmem``)."""
    if sys.argv[1:2] == ["mcp"]:
        from .integrations import mcp_front

        direct = mcp_front.direct_args(sys.argv[2:])
        if direct is not None:
            sys.exit(mcp_front.serve(direct.repo))
    from .daemon.front import entry

    entry()


if __name__ == "__main__":
    main()
