"""Integrations of gitmem with the tools around it: git hooks (``git_hooks``), and agent hooks.

Each integration installs, removes and reports on its own files; none of them
imports the index, tree-sitter or an LLM client.
"""
