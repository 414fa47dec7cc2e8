"""Shell command lines as words: simple commands, what each one runs or targets, and commands quoted in text.

Owns: the parse of a command line (``shlex`` with punctuation, split at pipes, ``&&``, ``;``,
parentheses …) into simple commands with the folder each runs in (``cd DIR`` / ``pushd DIR`` move
it, until the ``)`` of their subshell); a simple command's *program words* (``VAR=value`` and
wrappers such as ``sudo``, ``env``, ``time``, ``uv run``, ``npx`` dropped; ``python -m mod`` is
``mod``); the files and symbols a command runs or targets (``targets``); the commands a memory
quotes in backticks (``quoted_commands``) and whether such a quoted command concerns a command line
(``concerns``, the precise rule below).

The rule (``concerns``): a quoted command Q concerns a simple command C when both have the same
program, Q's operands (its words after the program that do not start with ``-``) are the first
operands of C, in order, and every option of Q (a word starting with ``-``) is among C's words.
Q must have at least two words (a program and a subcommand or operand): a bare ``pytest`` quoted
in a memory concerns every test run, so it concerns none. So "run migrations with ``make
migrate``, never ``alembic upgrade`` by hand" concerns ``alembic upgrade head`` and ``uv run
alembic upgrade head`` (not ``alembic downgrade -1``), and ``git push --force`` concerns ``git
push --force origin main`` (not ``git push origin main``).

Used by the agent hooks (``integrations.agents.shell_reads`` and ``core``'s before-shell and
after-failure handlers) and by the catalog, which stores each memory's quoted commands when it
writes the memory's row (``catalog.db.upsert``), so a hook never scans memory text.

Guarantees: never raises on any text (a line ``shlex`` cannot parse has no commands); only
existing files are returned as targets.

Must not import: anything outside the standard library (it runs on every shell tool call).
"""

from __future__ import annotations

import os
import re
import shlex

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from collections.abc import Container

#: Separators between the simple commands of a command line.
SEPARATORS = frozenset({"|", "||", "&&", ";", "&", "(", ")", "|&", ";;"})
#: Commands that change the shell's working folder for the commands after them.
CHDIR = frozenset({"cd", "pushd"})
#: Words run before the real program, dropped from a command (with their own options).
WRAPPERS = frozenset({"sudo", "env", "time", "nice", "nohup", "exec", "command", "timeout", "stdbuf", "xvfb-run"})
#: Options of ``WRAPPERS`` that take a value (``sudo -u USER``, ``timeout 10``: its duration is an operand).
_WRAPPER_VALUES = frozenset({"-u", "-g", "-n", "-k", "-s", "-o", "-e", "-i"})
#: (tool, its subcommand that runs another program): ``uv run X`` runs X.
RUNNERS = {"uv": "run", "poetry": "run", "pipenv": "run", "pdm": "run", "hatch": "run", "rye": "run",
           "conda": "run", "bundle": "exec"}
#: Tools that run the program named by their first operand (``npx eslint``).
LAUNCHERS = frozenset({"npx", "bunx", "pnpx", "uvx", "pipx"})
#: Interpreters whose first operand is the script they run.
INTERPRETERS = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|bash|sh|zsh|dash|ksh|fish|node|nodejs|deno|bun|ruby|"
                          r"perl|php|Rscript|lua|tsx|ts-node)$")
#: Package scripts: ``npm run S`` (and ``test``, ``start``) targets package.json.
PACKAGE_TOOLS = frozenset({"npm", "yarn", "pnpm", "bun"})
#: Makefiles ``make`` reads when not given ``-f``, in GNU make's order.
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
#: A program word of a quoted command: a plain command name (not ``x.y()``, not a path).
_PROGRAM = re.compile(r"^[A-Za-z][\w.+-]*$")
#: Any other word of a quoted command: no quotes, brackets or other code punctuation.
_WORD = re.compile(r"^[\w@%+=:,./~-]+$")
#: A backtick span: `like this` (not ``` fences; a fenced block's lines are read as its spans).
_CODE_PUNCTUATION = re.compile(r"[(){}\[\]<>]|\s[!=]?==?\s")
_BACKTICKS = re.compile(r"(?<!`)`([^`\n]{3,200})`(?!`)")
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
#: Most quoted commands kept per memory.
MAX_QUOTED = 20
#: Most characters of a command line parsed (its first ones): ``shlex`` is quadratic on some long inputs (a
#: 1 MB line took 3.1 s); an agent's command lines are far shorter, and a hook has a few seconds.
MAX_LINE_CHARS = 10_000


def _words(line: str) -> list[str] | None:
    """``line``'s words (``shlex``, posix, punctuation characters apart), or None when it cannot be parsed."""
    try:
        lex = shlex.shlex(line, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        return list(lex)
    except ValueError:
        return None


def simple_commands(line: str) -> list[tuple[str, list[str]]]:
    """(the separator before it, its words) for each simple command of ``line`` (split at pipes, ``&&``, ``;``,
    parentheses …; ``< FILE`` kept as an operand, ``> FILE`` dropped); only its first line's when the rest
    cannot be parsed (a heredoc's body); [] if that cannot be parsed either."""
    line = line[:MAX_LINE_CHARS]
    words = _words(line)
    if words is None and "\n" in line:  # a heredoc's body (`it's`) or `$'…'` past the first line: keep that line
        words = _words(line.split("\n", 1)[0])
    if words is None:
        return []
    out: list[tuple[str, list[str]]] = [("", [])]
    redirect = ""
    for w in words:
        if redirect:  # `< FILE` is read (an operand); `> FILE` is not
            if redirect == "<":
                out[-1][1].append(w)
            redirect = ""
        elif w in SEPARATORS:
            out.append((w, []))
        elif w.strip("<>&") == "":
            redirect = w
        else:
            out[-1][1].append(w)
    return [c for c in out if c[1] or c[0] in ("(", ")")]


def _cd_target(args: list[str]) -> str | None:
    """The folder ``cd ARGS`` moves to, or None when it cannot be known (none, ``-``, a variable)."""
    operands = [a for a in args if not a.startswith("-") or a == "-"]
    if len(operands) != 1 or operands[0] == "-" or "$" in operands[0]:
        return None
    return os.path.expanduser(operands[0])


def located_commands(line: str) -> list[tuple[str | None, list[str]]]:
    """(the folder it runs in, relative to the line's own folder ("" for it; None: unknown after a ``cd``
    whose folder cannot be known), its words without leading ``VAR=value``) for each simple command of
    ``line`` that is not a ``cd``."""
    out: list[tuple[str | None, list[str]]] = []
    here: str | None = ""
    saved: list[str | None] = []  # `(` … `)`: a subshell's cd does not outlive it
    for sep, words in simple_commands(line):
        if sep == "(":
            saved.append(here)
        elif sep == ")":
            here = saved.pop() if saved else here
        while words and "=" in words[0] and not words[0].startswith("="):  # VAR=value cmd
            words = words[1:]
        if not words:
            continue
        if os.path.basename(words[0]) in CHDIR:
            target = _cd_target(words[1:])
            here = None if target is None or here is None else os.path.normpath(os.path.join(here, target))
            continue
        out.append((here, words))
    return out


def program_words(words: list[str]) -> list[str]:
    """``words`` of one simple command from its real program on: ``VAR=value``, wrappers (``WRAPPERS``) and
    runners (``uv run``, ``npx`` …) dropped, the program as its base name, ``python -m mod`` as ``mod``;
    [] when no program is left."""
    w = list(words)
    while w:
        while w and "=" in w[0] and not w[0].startswith(("=", "-")):
            w = w[1:]
        if not w:
            return []
        name = os.path.basename(w[0])
        if name in WRAPPERS:
            w = w[1:]
            while w and w[0].startswith("-"):
                w = w[2:] if w[0] in _WRAPPER_VALUES and len(w) > 1 else w[1:]
            if name == "timeout" and w and w[0][:1].isdigit():
                w = w[1:]
            continue
        if RUNNERS.get(name) and len(w) > 1 and w[1] == RUNNERS[name]:
            w = [a for a in w[2:]]
            while w and w[0].startswith("-"):
                w = w[1:]
            continue
        if name in LAUNCHERS and len(w) > 1:
            w = w[1:]
            while w and w[0].startswith("-"):
                w = w[1:]
            continue
        if INTERPRETERS.match(name) and name.startswith(("python", "pypy")) and len(w) > 2 and w[1] == "-m":
            w = w[2:]
            continue
        return [name, *w[1:]]
    return []


def _split_test_id(word: str) -> tuple[str, str | None]:
    """``tests/test_a.py::TestX::test_b[1]`` → (``tests/test_a.py``, ``TestX.test_b``); a word without ``::``
    → (word, None)."""
    path, sep, rest = word.partition("::")
    if not sep:
        return word, None
    names = [n.split("[", 1)[0] for n in rest.split("::") if n]
    return path, ".".join(n for n in names if n) or None


def targets(line: str, cwd: str, skip: Container[str] = ()) -> list[tuple[str, str | None]]:
    """The files (and symbols) the command line ``line`` runs or targets, in command order, once each:
    (path relative to ``cwd`` or absolute, qualified name or None). Only existing files; nothing from the
    commands whose program is in ``skip`` (the readers whose files are read, not run: ``shell_reads``).

    * the script an interpreter runs (``python x.py``, ``bash scripts/y.sh``, ``node z.js``), a program
      given by path (``./z``, ``scripts/y.sh``);
    * ``make [TARGET]`` → its makefile (``-f FILE``, ``-C DIR``, else ``GNUmakefile``, ``makefile`` or
      ``Makefile``); ``npm``/``yarn``/``pnpm``/``bun run S`` (and ``test``, ``start``) → ``package.json``;
    * a test id (``tests/test_a.py::TestX::test_b``) → the file and ``TestX.test_b``; ``-k NAME`` (one
      identifier) → the symbol NAME in each file of the command (None when it names no file);
    * any other operand that is an existing file (``mypy src/x.py``, ``git diff -- a.py``).
    """
    out: list[tuple[str, str | None]] = []
    base = cwd or os.getcwd()

    def add(here: str, f: str, symbol: str | None = None) -> None:
        f = os.path.normpath(os.path.join(here, f)) if here and not os.path.isabs(f) else f
        p = f if os.path.isabs(f) else os.path.join(base, f)
        if (f, symbol) not in out and os.path.isfile(p):
            out.append((f, symbol))

    for here, words in located_commands(line):
        if here is None:
            continue
        orig = words[0]
        w = program_words(words)
        if not w:
            continue
        name, args = w[0], w[1:]
        if name in skip:
            continue
        if "/" in orig and os.path.basename(orig) == name:
            add(here, orig)
        operands = [a for a in args if not a.startswith("-")]
        if INTERPRETERS.match(name) and operands and not (len(args) > 1 and args[0] in ("-c", "-e")):
            add(here, operands[0])
        if name in ("make", "gmake"):
            folder, given = here, None
            for i, a in enumerate(args[:-1]):
                if a == "-C":
                    folder = os.path.join(here, args[i + 1]) if here else args[i + 1]
                elif a == "-f":
                    given = args[i + 1]
            for f in ([given] if given else MAKEFILES):
                before = len(out)
                add(folder, f)
                if len(out) > before:
                    break
        if name in PACKAGE_TOOLS and args and args[0] in ("run", "run-script", "test", "start"):
            add(here, "package.json")
        k_names = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-k" and args[i + 1].isidentifier()]
        files_before = len(out)
        for a in operands:
            path, symbol = _split_test_id(a)
            add(here, path, symbol)
        for name_k in k_names:
            for f, _ in out[files_before:]:
                add("", f, name_k)
    return out


def quoted_commands(text: str) -> list[list[str]]:
    """The commands ``text`` quotes in backticks (inline spans, and each line of a fenced block), each as its
    program words (``program_words``) when it looks like a command: at least two words, a plain program
    name, no code punctuation. Once each, at most ``MAX_QUOTED``."""
    spans = _BACKTICKS.findall(_FENCE.sub("", text))
    for block in _FENCE.findall(text):
        spans.extend(ln.strip().lstrip("$ ").strip() for ln in block.splitlines())
    out: list[list[str]] = []
    for span in spans:
        if _CODE_PUNCTUATION.search(span):
            continue  # `f(x)`, `a[0]`, `x = 1`: code, not a command
        for _sep, words in simple_commands(span):
            w = program_words(words)
            if (len(w) >= 2 and _PROGRAM.match(w[0]) and all(_WORD.match(x) for x in w[1:])
                    and w not in out):
                out.append(w)
                if len(out) >= MAX_QUOTED:
                    return out
    return out


def line_commands(line: str) -> list[list[str]]:
    """The program words (``program_words``) of each simple command of ``line`` (none empty)."""
    return [w for _here, words in located_commands(line) if (w := program_words(words))]


def concerns(quoted: list[str], command: list[str]) -> bool:
    """Whether quoted command ``quoted`` concerns ``command`` (both program words): the rule of the module
    docstring (same program; the quoted operands are the command's first operands; the quoted options are
    among its words; at least two quoted words)."""
    if len(quoted) < 2 or not command or quoted[0] != command[0]:
        return False
    q_ops = [a for a in quoted[1:] if not a.startswith("-")]
    c_ops = [a for a in command[1:] if not a.startswith("-")]
    if c_ops[:len(q_ops)] != q_ops:
        return False
    return all(a in command[1:] for a in quoted[1:] if a.startswith("-"))
