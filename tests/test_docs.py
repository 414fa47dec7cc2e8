"""The docs a newcomer reads: README.md and docs/**/*.md show only commands and flags that exist, link only to files
that exist, the README stays short, and the configuration reference is the schema's own.

Every ``gitmem …`` command line in a code block (``$ `` lines of a console block, every line of a sh/bash/plain
block) or in inline code is resolved through the real CLI's help (``gitmem [SUB …] --help`` in a subprocess, one
per command path): each subcommand must be listed by its group's help, each ``--flag`` / ``-f`` must appear in the
help of the command it follows. An inline ``--flag`` on its own must be some gitmem command's flag, unless it is
another tool's (``NOT_GITMEM_FLAGS``).
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from gitmem import config
from testing import config_docs

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted([README, *(ROOT / "docs").rglob("*.md")])
#: The README's length a newcomer reads in five minutes.
README_MAX_LINES = 250

#: Flags shown in inline code, alone, that belong to another tool, not to gitmem (with the tool).
NOT_GITMEM_FLAGS = {
    "--plugin-dir",          # claude --plugin-dir
    "--force",               # git push --force (a quoted command a memory is about)
    "--target",              # docker build --target
    "-C", "-f",              # make -C DIR -f FILE
    "-u",                    # curl -u
    "-x",                    # pytest -x
    "-n",                    # sed -n
    "-p",                    # claude -p, gemini -p, copilot -p
    "-a",                    # git commit -a
    "--amend", "--no-verify",  # git commit
    "-m",                    # python -m
    "-q",                    # pytest -q
    "-F",                    # awk -F
    "--only", "--skip-rebuild",  # python bench/scale.py
}
#: Programs a command line may start with before ``gitmem`` (``uv run gitmem …``).
PREFIXES = {"uv", "run", "env", "sudo", "command", "exec", "time"}
#: A placeholder or an ellipsis in a command: the rest of the line is not resolved further.
PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z0-9_]*(?:[.:/…][A-Z0-9_.…]*)*|…|\.\.\.|<.*|\[[A-Z].*|\"?…\"?)$")
#: A flag's name in a token (``--rev=X`` → ``--rev``).
FLAG = re.compile(r"^(--?[A-Za-z][\w-]*)")
#: Languages of code blocks whose lines are shell commands.
SHELL = {"", "sh", "bash", "shell", "console", "shell-session", "text"}


def md() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def walk(tokens: list[Any]) -> list[Any]:
    """Every token of a markdown-it token stream, children included."""
    out = []
    for tok in tokens:
        out.append(tok)
        if tok.children:
            out += walk(tok.children)
    return out


def shell_lines(path: Path) -> list[str]:
    """The command lines a page shows: ``$ `` lines of console blocks (continuations joined), every line of other
    shell blocks, the ``gitmem …`` lines of YAML blocks (CI steps), and each inline code span."""
    lines = []
    for tok in walk(md().parse(path.read_text("utf-8"))):
        if tok.type == "fence" and tok.info.strip().split(" ")[0] in SHELL:
            body = tok.content.replace("\\\n", " ")
            rows = body.splitlines()
            prompts = [r[2:] for r in rows if r.startswith("$ ")]
            lines += prompts if tok.info.strip() == "console" or prompts else rows
        elif tok.type == "fence" and tok.info.strip().split(" ")[0] in ("yaml", "yml"):  # CI steps: `run: gitmem …`
            lines += [m.group(1) for m in re.finditer(r"(?m)(?:^|[\s:-])(gitmem\s.*)$", tok.content)]
        elif tok.type == "code_inline":
            lines.append(tok.content)
    return lines


def gitmem_commands(line: str) -> list[list[str]]:
    """The ``gitmem`` invocations in one shell line, each as its words after ``gitmem`` (comments dropped)."""
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
    except ValueError:  # an unclosed quote in a shortened example: plain words
        words = line.split()
    commands: list[list[str]] = []
    current: list[str] | None = None
    start = True
    for word in words:
        if word and set(word) <= set(";&|()"):
            current, start = None, True
            continue
        if current is not None:
            current.append(word)
        elif start and word == "gitmem":
            current = []
            commands.append(current)
        elif start and (word in PREFIXES or re.match(r"^[A-Z_]+=", word)):
            continue
        start = False
    # `gitmem check: ok (…)` is a command's output quoted in prose, not an invocation
    return [c for c in commands if not (c and c[0].endswith(":"))]


@functools.cache
def help_of(path: tuple[str, ...]) -> str | None:
    """``gitmem PATH --help`` (the real CLI, in a subprocess): its output, or None when PATH is not a command."""
    env = {**os.environ, "GITMEM_NO_DAEMON": "1", "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-m", "gitmem", *path, "--help"], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT)
    return proc.stdout if proc.returncode == 0 else None


def subcommands(help_text: str) -> set[str]:
    """The names a group's help lists under ``Commands:``."""
    part = help_text.split("\nCommands:\n", 1)
    return {line.split()[0] for line in part[1].splitlines() if line.startswith("  ") and line.strip()} \
        if len(part) == 2 else set()


def has_flag(help_text: str, flag: str) -> bool:
    return flag in ("--help", "-h") or re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", help_text) is not None


def problems_of(words: list[str]) -> list[str]:
    """What is wrong with ``gitmem WORDS`` (empty when every subcommand and flag exists)."""
    path: tuple[str, ...] = ()
    text = help_of(path)
    assert text is not None, "gitmem --help fails"
    out = []
    leaf = False
    for n, word in enumerate(words):
        word = word.strip("[]")
        flag = FLAG.match(word)
        if flag:
            if not has_flag(text, flag.group(1)):
                out.append(f"{flag.group(1)} is not an option of `gitmem {' '.join(path)}`".replace(" `", " `", 1))
            continue
        if leaf or not word:
            continue
        names = subcommands(text)
        if not names:
            leaf = True  # a command: the rest are its arguments
            continue
        if PLACEHOLDER.match(word):
            # `gitmem install AGENT --user`: any of the group's subcommands; its flags must be every one's
            rest = _flags(words[n + 1:])
            for name in sorted(names):
                sub = help_of((*path, name)) or ""
                out += [f"{f} is not an option of `gitmem {' '.join((*path, name))}`" for f in rest
                        if not has_flag(sub, f)]
            return out
        if word not in names:
            out.append(f"`gitmem {' '.join((*path, word))}`: no such command (`gitmem {' '.join(path)}` has "
                       f"{', '.join(sorted(names))})")
            break
        path = (*path, word)
        sub = help_of(path)
        assert sub is not None, f"gitmem {' '.join(path)} --help fails although its group lists it"
        text = sub
    return out


def _flags(words: list[str]) -> list[str]:
    return [m.group(1) for m in (FLAG.match(w.strip("[]")) for w in words) if m]


def all_flags() -> set[str]:
    """Every flag of every gitmem command (walking the help of each group)."""
    seen: set[str] = set()
    todo: list[tuple[str, ...]] = [()]
    while todo:
        path = todo.pop()
        text = help_of(path) or ""
        seen |= set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", text.split("\nOptions:\n", 1)[-1]))
        todo += [(*path, name) for name in subcommands(text)]
    return seen


def doc_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("page", DOCS, ids=doc_id)
def test_every_gitmem_command_and_flag_shown_exists(page: Path) -> None:
    problems = []
    for line in shell_lines(page):
        for words in gitmem_commands(line):
            problems += [f"{doc_id(page)}: `{line.strip()}`: {p}" for p in problems_of(words)]
    assert not problems, "\n".join(problems)


def test_every_flag_shown_alone_is_a_gitmem_flag() -> None:
    """An inline ``--flag`` in prose (``--dry-run`` writes nothing) is some gitmem command's, or another tool's."""
    known = all_flags() | NOT_GITMEM_FLAGS
    problems = []
    for page in DOCS:
        for tok in walk(md().parse(page.read_text("utf-8"))):
            if tok.type == "code_inline" and FLAG.match(tok.content):
                flag = FLAG.match(tok.content).group(1)  # type: ignore[union-attr]  # matched just above
                if flag not in known:
                    problems.append(f"{doc_id(page)}: `{tok.content}`: no gitmem command has {flag}")
    assert not problems, "\n".join(problems)


def test_the_checker_catches_what_does_not_exist() -> None:
    """The docs test itself: a renamed command, a missing flag and a flag after the wrong command are caught;
    placeholders, arguments and option values are not mistaken for commands."""
    assert problems_of(["stale", "--list"]) == []
    assert problems_of(["remember", "text", "--anchor", "src/a.py::f", "--tag", "x"]) == []
    assert problems_of(["show", "ID"]) == [] and problems_of(["install", "AGENT"]) == []
    assert problems_of(["daemon", "status", "--json"]) == []
    assert problems_of(["stales"]) and problems_of(["stale", "--no-such-flag"])
    assert problems_of(["daemon", "restart"])
    assert gitmem_commands("cd x && gitmem hooks install && gitmem stale  # hi") == [["hooks", "install"], ["stale"]]
    assert gitmem_commands('git commit -m "gitmem stale"') == []
    assert gitmem_commands("uv run gitmem init") == [["init"]]


def test_the_readme_is_short() -> None:
    lines = README.read_text("utf-8").count("\n")
    assert lines <= README_MAX_LINES, (f"README.md has {lines} lines, more than {README_MAX_LINES}: move the "
                                       "details to a page of docs/ and link it")


@pytest.mark.parametrize("page", DOCS, ids=doc_id)
def test_every_relative_link_points_at_a_file(page: Path) -> None:
    missing = []
    for tok in walk(md().parse(page.read_text("utf-8"))):
        target = tok.attrs.get("href") if tok.type == "link_open" else tok.attrs.get("src") \
            if tok.type == "image" else None
        if not isinstance(target, str) or re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        file, _, fragment = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            missing.append(f"{doc_id(page)}: ({target}) points at nothing")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            missing.append(f"{doc_id(page)}: ({target}): {dest.name} has no heading #{fragment}")
    assert not missing, "\n".join(missing)


def anchors(page: Path) -> set[str]:
    """The ``#fragment`` of each heading of ``page`` as GitHub makes it (lower case, punctuation out, spaces to
    ``-``, ``-1``, ``-2`` … for repeats)."""
    out: set[str] = set()
    tokens = md().parse(page.read_text("utf-8"))
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            text = "".join(c.content for c in walk(tokens[i + 1].children or []) if c.type in ("text", "code_inline"))
            slug = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
            n, unique = 0, slug
            while unique in out:
                n += 1
                unique = f"{slug}-{n}"
            out.add(unique)
    return out


def test_the_configuration_reference_is_generated_from_the_schema() -> None:
    page = config_docs.PAGE.read_text("utf-8")
    assert page == config_docs.render(page), (f"docs/configuration.md is not what gitmem/config.py's SCHEMA makes: "
                                              f"run `{config_docs.COMMAND}` and commit the page")


def test_the_schema_holds_the_defaults_the_code_uses() -> None:
    """Each default in ``config.SCHEMA`` is the one ``gitmem init`` writes and the code falls back to."""
    from gitmem.capture.llm import llm_config
    from gitmem.org.settings import OrgSettings, PersonalSettings
    from gitmem.rank import relevance
    from gitmem.search.embed import OpenAIEmbedder, embedder_from_config

    default = {(s, k): d for s, k, _, d, _ in config.SCHEMA}
    EXAMPLES = {"base_url", "model", "uri", "endpoint", "extra_body"}  # commented out as examples, not defaults
    assert len(default) == len(config.SCHEMA), "a key is twice in config.SCHEMA"
    for section, values in tomllib.loads(config.DEFAULT_CONFIG).items():
        for key, value in values.items():
            assert default[section, key] == value, f"{section}.{key}: gitmem init writes {value!r}"
    commented = re.findall(r"^(?:# ?)?\[([\w.]+)\]$|^# ?(\w+) = ([^#\n]+?)\s*(?:#.*)?$", config.DEFAULT_CONFIG, re.M)
    section = ""
    for name, key, value in commented:  # the keys gitmem init writes commented out, in their section
        if name:
            section = name
        elif (section, key) in default and key not in EXAMPLES:
            assert default[section, key] == tomllib.loads(f"v = {value}")["v"], f"{section}.{key}"
    for key, value in config.DEFAULT_BUDGETS.items():
        assert default["claude", key] == value
    assert default["memory", "max_chars"] == config.DEFAULT_MAX_CHARS
    assert default["ranking", "decay_half_life_days"] == config.DEFAULT_DECAY_HALF_LIFE_DAYS
    assert default["daemon", "idle_minutes"] == config.DEFAULT_IDLE_MINUTES
    assert default["tidy", "deleted_days"] == config.DEFAULT_DELETED_DAYS
    assert default["org", "session_timeout"] == config.DEFAULT_ORG_SESSION_TIMEOUT_S
    assert (default["relevance", "min_bm25"], default["relevance", "min_coverage"],
            default["relevance", "min_similarity"]) == config.relevance_floors({}) == (
                relevance.DEFAULT_MIN_BM25, relevance.DEFAULT_MIN_COVERAGE, relevance.DEFAULT_MIN_SIMILARITY)
    org, personal = OrgSettings(), PersonalSettings()
    for key in ("uri", "endpoint", "ref", "name", "inject", "session_budget", "prompt_budget", "repos"):
        assert default["org", key] == getattr(org, key), f"org.{key}"
    for key in ("enabled", "session_budget", "prompt_budget"):
        assert default["personal", key] == getattr(personal, key), f"personal.{key}"
    emb = embedder_from_config({"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"})
    assert isinstance(emb, OpenAIEmbedder)
    for key in ("api_key_env", "timeout", "max_retries", "batch_size", "dimensions"):
        assert default["embeddings", key] == getattr(emb, key), f"embeddings.{key}"
    llm = llm_config({"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    assert llm is not None
    for key in ("api_key_env", "timeout", "max_retries", "extra_body", "max_input_chars"):
        assert default["llm", key] == getattr(llm, key), f"llm.{key}"


def test_ci_installs_and_tests_as_the_readme_says() -> None:
    """``.ci/run`` installs "exactly as README.md says" and runs "README.md's test command": the commands of the
    README's "Run the tests" block are the ones CI runs."""
    text = README.read_text("utf-8")
    section = text[text.index("## Run the tests"):]
    block = next(tok.content for tok in md().parse(section) if tok.type == "fence")
    commands = [c.strip() for line in block.splitlines() for c in line.split("&&") if c.strip()]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text("utf-8").splitlines()]
    assert any(c.startswith("pip install") for c in commands) and "python -m pytest -q" in commands
    for command in commands:
        if command.startswith(("pip install", "python -m pytest")):
            assert command in ci, f".ci/run does not run the README's `{command}`"
