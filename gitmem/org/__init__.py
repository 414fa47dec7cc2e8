"""Beyond one repository (issue 21): the organisation index and cross-repository anchors.

``settings`` (stdlib: the ``[org]`` and ``[personal]`` settings of a repository, from its config.toml and the
user's), ``repos`` (the organisation's repositories: names, where each is, opened with git, mirrored when reached
by URL), ``store`` (the LanceDB database at ``[org] uri``: connection, storage options from the standard AWS
variables, the conditional-write probe), ``index`` (``gitmem org index``: incremental, safe with several indexers),
``search`` (``gitmem recall --org``, MCP, the hooks), ``xrepo`` (anchors to code in another repository).

Nothing here is on the hooks' hot path except ``settings``: the prompt hook asks the warm process for org hits.
"""
