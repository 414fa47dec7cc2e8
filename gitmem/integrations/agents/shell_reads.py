"""Which files a shell command line reads: for agents that read files through their shell tool.

Owns: which arguments of a command line's simple commands (``shellwords.located_commands``: ``shlex``,
split at pipes, ``&&``, ``;`` …) are files read by a known reader (``cat``, ``head``,
``tail``, ``less``, ``more``, ``nl``, ``sed -n``, ``rg`` / ``grep`` with file arguments).
Used by the Codex adapter (``Bash``), the Gemini CLI adapter (``run_shell_command``), the Copilot
CLI adapter (``bash``) and VS Code's input (``run_in_terminal``).

Guarantees: only existing files; redirections and separators are never taken for files; a line
that cannot be parsed reads nothing; a file read after a ``cd DIR`` (or ``pushd DIR``) is taken
relative to DIR, until a ``)`` closes the subshell the ``cd`` ran in.

Must not import: anything outside the standard library and ``shellwords`` (it runs on every shell tool call).
What a command runs or targets (``python x.py``, ``make``, a test id) is ``shellwords.targets``.
"""

from __future__ import annotations

import os

from ...shellwords import located_commands

#: Commands whose file arguments are read; (options that take a value, whether the first operand
#: is not a file: a pattern or a sed script, unless given with -e / -f).
READERS: dict[str, tuple[frozenset[str], bool]] = {
    "cat": (frozenset(), False),
    "less": (frozenset(), False),
    "more": (frozenset(), False),
    "nl": (frozenset(), False),
    "head": (frozenset({"-n", "-c"}), False),
    "tail": (frozenset({"-n", "-c"}), False),
    "sed": (frozenset({"-e", "-f", "-l"}), True),
    "grep": (frozenset({"-e", "-f", "-m", "-A", "-B", "-C", "--include", "--exclude"}), True),
    "rg": (frozenset({"-e", "-f", "-g", "-m", "-A", "-B", "-C", "-t", "-T", "--glob", "--type"}), True),
}
def _operands(name: str, args: list[str]) -> list[str]:
    """The file operands of reader ``name`` given ``args``."""
    takes_value, first_is_pattern = READERS[name]
    operands: list[str] = []
    pattern_given = False
    skip = False
    only_operands = False
    for a in args:
        if skip:
            skip = False
            continue
        if only_operands or not a.startswith("-") or a == "-":
            operands.append(a)
        elif a == "--":
            only_operands = True
        elif a in takes_value:
            skip = True
            pattern_given = pattern_given or a in ("-e", "-f")
        elif a.startswith(("-e", "-f")) and len(a) > 2 and name != "head" and name != "tail":
            pattern_given = True
        elif a.startswith("--") and "=" in a:
            continue
        elif a[1:].isdigit():  # head -20
            continue
    if first_is_pattern and not pattern_given and operands:
        operands = operands[1:]
    return operands


def read_files(line: str, cwd: str) -> list[str]:
    """Files the command line ``line`` reads, relative to ``cwd`` or absolute, that exist (in command order,
    once each); redirections and separators are never taken for files. After ``cd DIR``, a file is taken in
    DIR (and given as DIR/file); after a ``cd`` whose folder cannot be known, no file is taken."""
    out: list[str] = []
    for here, words in located_commands(line):
        name = os.path.basename(words[0])
        if name not in READERS or here is None:
            continue
        if name == "sed" and "-n" not in words[1:] and not any(w.startswith("-n") for w in words[1:]):
            continue  # sed without -n rewrites rather than shows; `sed -i` is an edit
        if name == "sed" and any(w.startswith("-i") or w == "--in-place" for w in words[1:]):
            continue
        for f in _operands(name, words[1:]):
            if f.startswith((">", "<")):
                continue
            f = os.path.normpath(os.path.join(here, f)) if here else f
            if f in out:
                continue
            p = f if os.path.isabs(f) else os.path.join(cwd or os.getcwd(), f)
            if os.path.isfile(p):
                out.append(f)
    return out
