"""Operations: one verb per module, what the CLI, the MCP server and the git hooks call.

Each takes a ``Store`` and typed arguments and returns data (a result dataclass, a list of
memories or statuses): no printing, no click or argparse objects, no JSON. The CLI renders the
result as text or ``--json`` (``gitmem.shapes``); errors are ``gitmem.errors`` exceptions.

* ``context``            ``gitmem context``: the memories nearest the focus, packed into a budget
* ``consolidate``        ``gitmem consolidate``: spooled sessions into memories, by hand
* ``check``              ``gitmem check``: the pull-request gate (stale, invariants, secrets)
* ``doctor``             ``gitmem doctor``: is everything where git and gitmem will use it
* ``history``            ``gitmem log ID``: a memory's history beside its code's
* ``lifecycle``          ``gitmem retire`` / ``supersede``
* ``reanchor``           ``gitmem reanchor``: "still true" after a review
* ``review``             ``gitmem stale`` on a terminal: review one by one
* ``scan``               ``gitmem scan A..B``: re-run the diff analyzer over a range
* ``setup``              ``gitmem init`` and ``hooks install|uninstall|status``
* ``share``              ``gitmem share`` and the pre-commit ``[share] policy``
* ``show``               ``gitmem show ID``: one memory with its anchors' statuses
* ``stale``              ``gitmem stale``: the memories that are not fresh
* ``sync``               ``gitmem sync``: the catalog and its search vectors, up to date
* ``tidy``               ``gitmem tidy``: near-duplicates merged, contradictions flagged, long-deleted code retired
* ``transfer``           ``gitmem export`` / ``import`` (JSON Lines)
* ``import_claude_mem``  ``gitmem import claude-mem``

Writing memories is ``gitmem.memories``' (the one write path), not an op's.
"""
