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

Must not import: anything outside the standard library and ``textsplit`` (it runs on every shell tool call);
``textsplit`` only inside the functions that name keys and targets (every agent hook imports this module: at
module level it cost the after-a-tool hook ~1 ms it never used).
"""

from __future__ import annotations

import os
import re
import shlex

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from collections.abc import Container, Iterator

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


class Targets(list[tuple[str, "str | None"]]):
    """What a command line runs or targets: a list of (path, qualified name or None), as ``targets`` returns it;
    ``scoped``: the paths of those whose entries the command names exactly (a make target, a package script, a
    Dockerfile stage, each found in its file): of such a file the command runs only the entries listed, so
    memories on its other entries do not concern it (a memory on the whole file does)."""

    scoped: set[str]

    def __init__(self) -> None:
        super().__init__()
        self.scoped = set()


def targets(line: str, cwd: str, skip: Container[str] = ()) -> Targets:
    """The files (and symbols) the command line ``line`` runs or targets, in command order, once each:
    (path relative to ``cwd`` or absolute, qualified name or None). Only existing files; nothing from the
    commands whose program is in ``skip`` (the readers whose files are read, not run: ``shell_reads``).

    * the script an interpreter runs (``python x.py``, ``bash scripts/y.sh``, ``node z.js``), a program
      given by path (``./z``, ``scripts/y.sh``);
    * ``make [TARGET…]`` → its makefile (``-f FILE``, ``-C DIR``, else ``GNUmakefile``, ``makefile`` or
      ``Makefile``) with each target it builds (``make_goals``: the named ones, else the default goal, and
      their prerequisites that are rules of the file);
    * ``npm test`` / ``npm run S`` / ``yarn S`` / ``pnpm S`` / ``bun run S`` → the nearest ``package.json``
      (``--prefix`` / ``--cwd`` / ``-C DIR``, else the command's folder and its parents) with
      ``scripts.S`` (and npm's ``scripts.preS`` / ``scripts.postS``) when the file defines S;
    * ``docker build --target X`` (``docker buildx build``, ``podman build``, ``buildah bud``) → its
      Dockerfile (``-f FILE``, else the context's ``Dockerfile``) with stage X and the stages it is built
      from (``docker_stages``; no ``--target``: the last stage); ``just [RECIPE]`` → the justfile;
    * a test id (``tests/test_a.py::TestX::test_b``) → the file and ``TestX.test_b``; ``-k NAME`` (one
      identifier) → the symbol NAME in each file of the command (None when it names no file);
    * any other operand that is an existing file (``mypy src/x.py``, ``git diff -- a.py``).

    The entries of a make target, package script or stage found in their file are ``Targets.scoped``.
    """
    out = Targets()
    base = cwd or os.getcwd()

    def full(here: str, f: str) -> str:
        return os.path.normpath(os.path.join(here, f)) if here and not os.path.isabs(f) else f

    def on_disk(f: str) -> str:
        return f if os.path.isabs(f) else os.path.join(base, f)

    def real(f: str) -> str:
        """``f``, or the file it links to when it is a symbolic link (git keeps a link as its target's path, so
        the memories are on the target: a ``package.json`` linked to ``packages/app/package.json``)."""
        p = on_disk(f)
        if not os.path.islink(p):
            return f
        r = os.path.realpath(p)
        return r if os.path.isabs(f) else os.path.relpath(r, base)

    def add(here: str, f: str, symbol: str | None = None) -> bool:
        f = real(full(here, f))
        if (f, symbol) in out or symbol is None and f in out.scoped:  # `-f Dockerfile`: its stages already
            return True
        if os.path.isfile(on_disk(f)):
            out.append((f, symbol))
            return True
        return False

    def add_entries(here: str, f: str, found: list[str] | None) -> None:
        """``f``'s entries ``found`` (scoped), or the whole file when they are not known (None)."""
        if found is None:
            add(here, f)
            return
        for name in found:
            add(here, f, name)
        if found:
            out.scoped.add(real(full(here, f)))

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
            folder, given, goals = _make_args(here, args)
            for f in ([given] if given else MAKEFILES):
                if os.path.isfile(on_disk(full(folder, f))):
                    add_entries(folder, f, make_goals(_read(on_disk(full(folder, f))), goals))
                    break
        if name in PACKAGE_TOOLS:
            script, folder = _package_script(name, args)
            if folder.startswith(_WORKSPACE) and script is not None:  # npm -w X: X's own package, when X is a folder
                folder = folder[len(_WORKSPACE):]
                folder = folder if os.path.isdir(on_disk(full(here, folder))) else ""
            if script is not None:
                pkg = _nearest(on_disk(full(here, folder or ".")), "package.json")
                if pkg is not None:
                    rel = pkg if os.path.isabs(folder) else os.path.relpath(pkg, base)
                    add_entries("", rel, package_scripts(_read(pkg), script, pre_post=name == "npm"))
        if name in DOCKER_BUILDERS and _docker_build(name, args):
            dockerfile, target = _docker_args(base, here, args)
            if dockerfile is not None and os.path.isfile(on_disk(dockerfile)):
                add_entries("", dockerfile, docker_stages(_read(on_disk(dockerfile)), target))
        if name == "just":
            justfile = _nearest(on_disk(here or "."), *JUSTFILES)
            if justfile is not None:
                add("", os.path.relpath(justfile, base))
        k_names = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-k" and args[i + 1].isidentifier()]
        files_before = len(out)
        for a in operands:
            path, symbol = _split_test_id(a)
            add(here, path, symbol)
        for name_k in k_names:
            for f, _ in out[files_before:]:
                add("", f, name_k)
    return out


# -- make, package scripts, Dockerfile stages: the entries a command runs -----------------------------------


#: Most bytes of a Makefile, package.json or Dockerfile read to find the entries a command runs (the first ones):
#: such files are a few KB; a generated one of megabytes is read no further than this on a shell hook.
MAX_ENTRY_FILE_BYTES = 512 * 1024
#: Most entries (make targets with their prerequisites, stages) given for one command: a goal's prerequisite
#: closure can be the whole Makefile; past this many, the command concerns the file as a whole.
MAX_ENTRIES = 32
#: GNU make's options that take the next word as their value.
_MAKE_VALUES = frozenset({"-f", "--file", "--makefile", "-C", "--directory", "-I", "--include-dir", "-o",
                          "--old-file", "--assume-old", "-W", "--what-if", "--new-file", "--assume-new"})
#: (The patterns of make, Docker and key names below are strings, compiled on first use by ``re``'s cache: every
#: hook imports this module, few commands run make or docker.)
#: A make rule's line: targets, one or two colons (not ``:=`` / ``::=``), the rest.
_MAKE_RULE = r"^([^\t#=:][^#=:]*?)\s*::?(?!=)(.*)$"
#: ``.DEFAULT_GOAL := name`` (or ``=``, ``?=``): the goal of a bare ``make``.
_DEFAULT_GOAL = r"^\s*\.DEFAULT_GOAL\s*(?::{1,3}|\?|\+)?=\s*(\S+)"
#: npm's own commands that run the package script of their name (``npm test``, ``npm t``).
_NPM_SCRIPT_COMMANDS = {"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop",
                        "restart": "restart"}
#: The subcommands that run a named script (``npm run S``, ``yarn run-script S``).
_RUN = frozenset({"run", "run-script", "rum", "urn"})
#: Options of the package tools that take the next word as their value (a folder, a workspace, a filter).
_PACKAGE_VALUES = frozenset({"--prefix", "-C", "--dir", "--cwd", "-w", "--workspace", "--filter", "-F",
                             "--loglevel", "--registry", "--cache", "--userconfig"})
#: The options among them that name the folder whose package.json is used.
_PACKAGE_FOLDER = frozenset({"--prefix", "-C", "--dir", "--cwd"})
#: npm's options naming a workspace (a folder or a package name) whose script runs instead of the root's
#: (https://docs.npmjs.com/cli/using-npm/workspaces); pnpm's ``-w`` is its workspace root, not these.
_NPM_WORKSPACE = frozenset({"-w", "--workspace"})
#: Marks a folder that ``_package_script`` found as an npm workspace (``targets`` keeps it when it is a folder).
_WORKSPACE = "\x00workspace:"
#: yarn's, pnpm's and bun's own commands: ``yarn S`` runs the package's script S only when S is none of its
#: tool's commands (bun's ``bun test`` is its own test runner, not the package's ``test`` script; ``pnpm test`` and
#: ``yarn test`` run the script). From each tool's command list (yarn 1 and 4, pnpm 9, bun 1).
_TOOL_COMMANDS = {
    "yarn": frozenset({
        "add", "audit", "autoclean", "bin", "cache", "check", "config", "constraints", "create", "dedupe", "dlx",
        "exec", "explain", "generate-lock-entry", "global", "help", "import", "info", "init", "install", "licenses",
        "link", "list", "login", "logout", "node", "npm", "outdated", "owner", "pack", "patch", "patch-commit",
        "plugin", "policies", "publish", "rebuild", "remove", "search", "set", "stage", "tag", "team", "unlink",
        "unplug", "up", "upgrade", "upgrade-interactive", "version", "versions", "why", "workspace", "workspaces"}),
    "pnpm": frozenset({
        "add", "approve-builds", "audit", "bin", "c", "cat-file", "cat-index", "config", "create", "dedupe",
        "deploy", "dlx", "doctor", "env", "exec", "fetch", "find-hash", "help", "i", "ignored-builds", "import",
        "init", "install", "install-test", "it", "licenses", "link", "list", "ln", "ls", "m", "multi", "outdated",
        "pack", "patch", "patch-commit", "patch-remove", "prune", "publish", "rb", "rebuild", "recursive",
        "remove", "rm", "root", "self-update", "server", "setup", "store", "un", "uninstall", "unlink", "up",
        "update", "upgrade", "why"}),
    "bun": frozenset({
        "a", "add", "audit", "build", "completions", "create", "exec", "help", "i", "info", "init", "install",
        "link", "outdated", "patch", "patch-commit", "pm", "publish", "remove", "repl", "rm", "test", "unlink",
        "update", "upgrade", "why", "x"}),
}
#: Container tools and their subcommand that builds an image from a Dockerfile.
DOCKER_BUILDERS = frozenset({"docker", "podman", "buildah"})
#: Options of ``docker build`` (and ``podman`` / ``buildah``) that take no value: any other ``--option`` without
#: ``=`` takes the next word (``--tag x``, ``--build-arg A=1``, ``--platform p``).
_DOCKER_FLAGS = frozenset({"--no-cache", "--pull", "-q", "--quiet", "--load", "--push", "--rm", "--force-rm",
                           "--squash", "--compress", "--check", "--debug", "--disable-content-trust",
                           "--no-cache-filter", "--layers", "--tls-verify", "--sbom", "--provenance"})
#: Short options of ``docker build`` that take a value.
_DOCKER_SHORT_VALUES = frozenset({"-t", "-f", "-o", "-m", "-c"})
#: The Dockerfiles of a build context, in the order BuildKit looks for them.
DOCKERFILES = ("Dockerfile", "dockerfile")
#: A Dockerfile's ``FROM image [AS name]``.
_FROM = r"(?i)^FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?\s*$"
#: A stage another stage is built from: ``COPY --from=name``, ``RUN --mount=type=cache,from=name``.
_FROM_STAGE = r"(?i)(?:--from=|[,=\s]from=)([^\s,]+)"
#: The recipe files ``just`` reads.
JUSTFILES = ("justfile", "Justfile", ".justfile")


def _read(path: str) -> str:
    """The first ``MAX_ENTRY_FILE_BYTES`` of ``path`` as text ("" when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            return f.read(MAX_ENTRY_FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def _nearest(folder: str, *names: str) -> str | None:
    """The first of ``names`` in ``folder`` or its nearest parent that has one, up to the repository's root (a
    folder with ``.git``) or the file system's; None when none has one."""
    folder = os.path.abspath(folder)
    while True:
        for n in names:
            p = os.path.join(folder, n)
            if os.path.isfile(p):
                return p
        parent = os.path.dirname(folder)
        if parent == folder or os.path.exists(os.path.join(folder, ".git")):
            return None
        folder = parent


def _logical_lines(text: str) -> list[str]:
    """``text``'s lines with backslash continuations joined."""
    return text.replace("\\\r\n", " ").replace("\\\n", " ").splitlines()


def _make_args(here: str, args: list[str]) -> tuple[str, str | None, list[str]]:
    """(the folder make runs in, the makefile ``-f`` gives or None, the goals named) of ``make ARGS``."""
    folder, given, goals = here, None, []
    it = iter(range(len(args)))
    for i in it:
        a = args[i]
        opt, eq, val = a.partition("=")
        if a in _MAKE_VALUES and i + 1 < len(args):
            val, opt = args[i + 1], a
            next(it, None)
        elif not (a.startswith("--") and eq and opt in _MAKE_VALUES):
            if a.startswith("-C") and len(a) > 2:
                opt, val = "-C", a[2:]
            elif a.startswith("-f") and len(a) > 2:
                opt, val = "-f", a[2:]
            elif a in ("-j", "-l", "--jobs", "--load-average") and i + 1 < len(args) and args[i + 1].isdigit():
                next(it, None)
                continue
            else:
                if not a.startswith("-") and "=" not in a:  # VAR=value is a variable, not a goal
                    goals.append(a)
                continue
        if opt in ("-C", "--directory"):
            folder = os.path.normpath(os.path.join(folder, val)) if folder and not os.path.isabs(val) else val
        elif opt in ("-f", "--file", "--makefile"):
            given = val
    return folder, given, goals


#: A make variable assignment that sets a value once (``=``, ``:=``, ``::=``, ``:::=``; not ``?=``, ``+=``, ``!=``).
_MAKE_ASSIGN = r"^\s*(?:(?:override|export)\s+)*([A-Za-z_][A-Za-z0-9_.-]*)\s*(:{0,3}|[?+!])=\s*(.*)$"
#: A reference to a whole variable: ``$(NAME)`` or ``${NAME}``.
_MAKE_REF = r"\$(?:\(([A-Za-z_][A-Za-z0-9_.-]*)\)|\{([A-Za-z_][A-Za-z0-9_.-]*)\})"
#: A plain word of a variable's value: no reference, pattern, quote, escape or glob.
_MAKE_PLAIN_WORD = r"[^$%\\'\"*?\[\]()]+"


def _make_statements(text: str) -> Iterator[str]:
    """The logical lines of the Makefile ``text`` that are not recipes (a leading tab), blank, or inside a
    ``define`` block, each without its comment."""
    in_define = False
    for line in _logical_lines(text):
        if in_define:
            in_define = not line.strip().startswith("endef")
            continue
        if line.startswith("\t") or not line.strip():
            continue
        code = line.split("#", 1)[0]
        words = code.split()
        if words[:1] == ["define"] or words[:2] == ["override", "define"]:
            in_define = True
            continue
        yield code


def make_word_lists(text: str) -> dict[str, list[str]]:
    """The variables of the Makefile ``text`` that make expands to a fixed list of plain words: assigned once
    with ``=`` / ``:=`` / ``::=`` / ``:::=`` (``override`` / ``export`` allowed), every word of the value free of
    ``$``, ``%``, quotes, globs. Name -> words. A variable assigned more than once or with ``?=`` / ``+=`` /
    ``!=`` (its value depends on the environment or on order) is left out, as is any in a ``define`` block.

    So that ``$(BAKE_TARGETS): …`` with ``BAKE_TARGETS := binaries lint`` is read as the rules ``binaries`` and
    ``lint`` (``code.lang_make`` and :func:`make_goals`)."""
    found: dict[str, list[str]] = {}
    seen: dict[str, int] = {}
    for code in _make_statements(text):
        m = re.match(_MAKE_ASSIGN, code)
        if m is None:
            continue
        name = m.group(1)
        seen[name] = seen.get(name, 0) + 1
        values = m.group(3).split()
        if m.group(2) in ("", ":", "::", ":::") and values and all(re.fullmatch(_MAKE_PLAIN_WORD, v) for v in values):
            found[name] = values
    return {k: v for k, v in found.items() if seen[k] == 1}


def expand_make_word(word: str, variables: dict[str, list[str]]) -> list[str]:
    """``word`` of a rule's target list as make reads it: a whole ``$(NAME)`` / ``${NAME}`` of ``variables``
    (:func:`make_word_lists`) is its words; any other word is itself."""
    m = re.fullmatch(_MAKE_REF, word)
    if m is not None:
        return list(variables.get(m.group(1) or m.group(2), [word]))
    return [word]


def make_goals(text: str, goals: list[str]) -> list[str] | None:
    """The targets of the Makefile ``text`` that ``make GOALS`` builds: each goal (none named: the default goal,
    ``.DEFAULT_GOAL`` or the first target not starting with ``.``) and, breadth first, their prerequisites that
    are targets of the file; at most ``MAX_ENTRIES``. None when they cannot be told: a goal that is no target of
    the file (a pattern rule's, an included file's), no default goal, or more than ``MAX_ENTRIES``.

    A light reading of make's syntax, not make: rules are lines ``targets: prerequisites`` outside recipes
    (lines starting with a tab) and ``define`` blocks; a target list ``$(VAR)`` whose variable is a fixed list of
    plain words (:func:`make_word_lists`) is those words; other targets or prerequisites with ``$`` or ``%`` are
    left out (other variables and patterns are not expanded)."""
    variables = make_word_lists(text)
    rules: dict[str, list[str]] = {}
    first: str | None = None
    default: str | None = None
    for code in _make_statements(text):
        m = re.match(_DEFAULT_GOAL, code)
        if m:
            default = m.group(1)
            continue
        m = re.match(_MAKE_RULE, code)
        if m is None:
            continue
        if m.group(2).startswith(("=", ":=")):
            continue  # `x ::= 1`, `x :::= 1`: an assignment
        rest = m.group(2).split(";", 1)[0]
        if "=" in rest or ":" in rest:  # a target-specific variable, a static pattern rule: no plain prerequisites
            rest = ""
        names = [t for w in m.group(1).split() for t in expand_make_word(w, variables) if "$" not in t and "%" not in t]
        prereqs = [p for p in rest.split() if "$" not in p and "%" not in p]
        for t in names:
            rules.setdefault(t, []).extend(p for p in prereqs if p not in rules.get(t, ()))
            if first is None and (not t.startswith(".") or "/" in t):
                first = t
    wanted = goals or ([default] if default else [first] if first else [])
    if not wanted or any(g not in rules for g in wanted):
        return None
    out = list(dict.fromkeys(wanted))
    for t in out:  # grows while read: breadth first
        out.extend(p for p in rules.get(t, ()) if p in rules and p not in out)
        if len(out) > MAX_ENTRIES:
            return None
    from .textsplit import quote_name_part  # here: every hook imports this module, few run make

    return [quote_name_part(t) for t in out]  # as ``code.lang_make`` names targets: ``(build/app.o)``


def _package_script(tool: str, args: list[str]) -> tuple[str | None, str]:
    """(the package script ``TOOL ARGS`` runs or None, the folder its ``--prefix`` / ``--cwd`` / ``-C`` names or
    "", or npm's ``-w`` / ``--workspace`` value after ``_WORKSPACE``): ``npm test``, ``npm run S``, ``yarn S``,
    ``pnpm S``, ``bun run S``."""
    folder, words = "", []
    i = 0
    while i < len(args):
        a = args[i]
        opt, eq, val = a.partition("=")
        if a == "--":
            break
        if a in _PACKAGE_VALUES and i + 1 < len(args) and not (tool == "pnpm" and a == "-w"):  # pnpm's root flag
            if a in _PACKAGE_FOLDER:
                folder = args[i + 1]
            elif tool == "npm" and a in _NPM_WORKSPACE and not folder:
                folder = _WORKSPACE + args[i + 1]
            i += 2
            continue
        if eq and opt in _PACKAGE_FOLDER:
            folder = val
        elif eq and tool == "npm" and opt in _NPM_WORKSPACE and not folder:
            folder = _WORKSPACE + val
        if not a.startswith("-"):
            words.append(a)
            if len(words) == 2:
                break
        i += 1
    if not words:
        return None, folder
    if words[0] in _RUN:
        return (words[1] if len(words) > 1 else None), folder
    if tool == "npm":
        return _NPM_SCRIPT_COMMANDS.get(words[0]), folder
    if tool in _TOOL_COMMANDS and words[0] not in _TOOL_COMMANDS[tool] and (
            tool != "bun" or not ("." in words[0] or "/" in words[0])):
        return words[0], folder  # `yarn test`, `pnpm lint`, `bun dev` (`bun x.ts` runs a file)
    return None, folder


def package_scripts(text: str, script: str, *, pre_post: bool = False) -> list[str] | None:
    """The keys ``scripts.S`` (and, with ``pre_post``, as npm runs them, ``scripts.preS`` and ``scripts.postS``)
    that the package.json ``text`` defines for script ``script``; None when it does not parse as an object or
    does not define ``script`` (the command runs something else: a binary, a workspace's script)."""
    import json

    try:
        data = json.loads(text)
    except ValueError:
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if not isinstance(scripts, dict) or script not in scripts:
        return None
    names = [f"pre{script}", script, f"post{script}"] if pre_post else [script]
    return [key_name("scripts", n) for n in names if n in scripts]


def key_name(*keys: str) -> str:
    """A configuration file's key path as gitmem names it: its keys joined by ``.``, each quoted by
    ``textsplit.quote_key`` (``scripts.test``, ``scripts."lint.fix"``)."""
    from .textsplit import quote_key  # here: every hook imports this module, few name a key

    return ".".join(quote_key(k) for k in keys)


def _docker_build(tool: str, args: list[str]) -> bool:
    """Whether ``TOOL ARGS`` builds an image from a Dockerfile (``docker build``, ``docker buildx build``,
    ``docker image build``, ``podman build``, ``buildah bud`` / ``build``)."""
    ops = [a for a in args[:3] if not a.startswith("-")]
    if tool == "buildah":
        return bool(ops) and ops[0] in ("bud", "build", "build-using-dockerfile")
    return bool(ops) and (ops[0] == "build" or ops[:2] in (["buildx", "build"], ["image", "build"],
                                                             ["builder", "build"]))


def _docker_args(base: str, here: str, args: list[str]) -> tuple[str | None, str | None]:
    """(the Dockerfile ``docker build ARGS`` run in ``here`` (relative to ``base``, the line's folder) reads,
    relative to ``base``, or None when it cannot be known: stdin, a URL context; the ``--target`` stage or None)."""
    target, given, context = None, None, None
    i = 0
    started = False
    while i < len(args):
        a = args[i]
        if not started and a in ("build", "buildx", "image", "builder", "bud", "build-using-dockerfile"):
            started = a in ("build", "bud", "build-using-dockerfile")
            i += 1
            continue
        opt, eq, val = a.partition("=")
        if a.startswith("-") and eq:
            if opt == "--target":
                target = val
            elif opt in ("-f", "--file"):
                given = val
        elif a in ("--target", "-f", "--file") and i + 1 < len(args):
            target, given = (args[i + 1], given) if a == "--target" else (target, args[i + 1])
            i += 1
        elif a.startswith("-f") and len(a) > 2 and not a.startswith("--"):
            given = a[2:]
        elif a.startswith("-") and a not in _DOCKER_FLAGS and i + 1 < len(args) and (
                a.startswith("--") or a in _DOCKER_SHORT_VALUES):
            i += 1
        elif not a.startswith("-") and context is None:
            context = a
        i += 1
    if given == "-" or (given is None and (context is None or context == "-" or "://" in context
                                            or context.startswith("git@"))):
        return None, target
    if given is not None:
        path = given
    else:
        assert context is not None
        found = [f for f in DOCKERFILES if os.path.isfile(os.path.join(base, here, context, f))]
        path = os.path.join(context, found[0] if found else DOCKERFILES[0])
    return (os.path.normpath(os.path.join(here, path)) if here and not os.path.isabs(path)
            else os.path.normpath(path)), target


def docker_stages(text: str, target: str | None) -> list[str] | None:
    """The stages of the Dockerfile ``text`` that building ``target`` builds (none: the last stage): the stage
    and, breadth first, the stages it is built ``FROM`` or copies / mounts ``--from`` (by name or by index), as
    gitmem names them (``code.lang_dockerfile``): ``FROM x AS Build`` is ``build`` (Docker compares them
    lower-cased), an unnamed stage ``stage#N`` (its 1-based position). None when ``target`` is no stage of the
    file, or more than ``MAX_ENTRIES`` are built."""
    stages: list[tuple[str, set[str]]] = []  # (name, the lower-cased names and indexes it uses)
    for line in _logical_lines(text):
        code = line.strip()
        if not code or code.startswith("#"):
            continue
        m = re.match(_FROM, code)
        if m is not None:
            stages.append(((m.group(2) or "").lower() or f"stage#{len(stages) + 1}", {m.group(1).lower()}))
        elif stages:
            stages[-1][1].update(x.lower() for x in re.findall(_FROM_STAGE, code))
    named = {n: uses for n, uses in stages}
    index = {str(i): n for i, (n, _) in enumerate(stages)}  # `COPY --from=0`: the first stage
    start = target.lower() if target else stages[-1][0] if stages else ""
    if start not in named:
        return None
    out = [start]
    for s in out:
        used = (index.get(u, u) for u in sorted(named[s]))
        out.extend(u for u in used if u in named and u not in out)
        if len(out) > MAX_ENTRIES:
            return None
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
