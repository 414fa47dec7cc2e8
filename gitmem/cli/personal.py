"""The personal scope's commands: ``personal init|push|pull|status|path`` (``ops.personal``).

``remember --personal``, ``recall --personal`` and ``list --personal`` live with their commands (``memories``,
``retrieve``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .. import shapes
from .base import _out, cli, json_option

if TYPE_CHECKING:
    from ..ops.personal import Pushed


@cli.group()
def personal() -> None:
    """Your personal memories: a git repository of your own, given in every repository.

    Memories of you, not of a project (preferences, your own gotchas, conventions you
    follow everywhere), in a gitmem store at ~/.config/gitmem/personal (or
    $GITMEM_PERSONAL_DIR), shared across machines through any git remote. Agents get
    them at session start and per prompt in every repository, within the [personal]
    budgets, labelled "personal"; nothing is ever written into a project.

    \b
    Example usage:
      gitmem personal init --remote git@example.com:me/gitmem-personal.git
      gitmem remember --personal "I prefer small commits with the why in the body" --type preference
      gitmem personal push
      gitmem personal pull
    """


@personal.command("init")
@click.option("--remote", metavar="URL", help="Clone your personal repository from this git URL (or point it there).")
@json_option
def init_cmd(remote: str | None) -> None:
    """Create the personal repository, or clone it from a remote; safe to run again.

    \b
    Example usage:
      gitmem personal init
      gitmem personal init --remote https://example.com/me/gitmem-personal.git
    """
    from ..ops import personal as ops

    res = ops.init(remote)
    _out(shapes.personal_init_json(res),
         lambda: "\n".join([f"gitmem: personal repository {res.action} at {res.path} ({_plural(res.memories, 'memory')}"
                            + (f", remote {res.remote})" if res.remote else ", no remote: gitmem personal init "
                               "--remote URL to share it)"), *(f"gitmem: {n}" for n in res.notes)]))


@personal.command("push")
@json_option
def push_cmd() -> None:
    """Send your personal memories to the remote (committing what changed first).

    \b
    Example usage:
      gitmem personal push
    """
    from ..ops import personal as ops

    res = ops.push()
    _out(shapes.personal_push_json(res), lambda: _pushed_text(res))


def _plural(n: int, word: str) -> str:
    """``1 commit``, ``2 commits``, ``0 personal memories`` (a word ending in "y" after a consonant takes "ies")."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else f"{n} {word}s"


def _files(n: int) -> str:
    return _plural(n, "file")


def _pushed_text(res: Pushed) -> str:
    """One line per note then the push, each ``gitmem:``-prefixed: ``gitmem: pushed main to URL (2 commits)``,
    ``(up to date)`` when it sent none; the count is left out only when git could not tell it."""
    if res.commits is None:
        sent = ""
    elif res.commits == 0:
        sent = " (up to date: nothing new to send)"
    else:
        sent = f" ({_plural(res.commits, 'commit')})"
    return "\n".join([*(f"gitmem: {n}" for n in res.notes), f"gitmem: pushed {res.branch} to {res.remote}{sent}"])


@personal.command("pull")
@json_option
def pull_cmd() -> None:
    """Bring in the personal memories other machines pushed (merged with gitmem's merge driver).

    \b
    Example usage:
      gitmem personal pull
    """
    from ..ops import personal as ops

    res = ops.pull()
    _out(shapes.personal_pull_json(res),
         lambda: "\n".join([*(f"gitmem: {n}" for n in res.notes),
                            f"gitmem: pulled from {res.remote}: {_plural(len(res.changed), 'memory file')} changed; "
                            f"{_plural(res.memories, 'personal memory')}"]))


@personal.command("status")
@json_option
def status_cmd() -> None:
    """Where your personal repository is, its memories, remote, and commits ahead or behind (as last fetched).

    \b
    Example usage:
      gitmem personal status
    """
    from ..ops import personal as ops

    st = ops.status()

    def text() -> str:
        if not st.exists:
            return f"no personal repository at {st.path} (gitmem personal init)"
        lines = [f"personal repository: {st.path}",
                 f"memories: {st.memories}" + (f" (and {_files(len(st.conflicts))} in conflict, below)"
                                               if st.conflicts else ""),
                 f"remote: {st.remote or 'none (gitmem personal init --remote URL)'}"]
        if st.upstream:
            lines.append(f"branch: {st.branch} tracking {st.upstream}: {st.ahead} ahead, {st.behind} behind "
                         "(as of the last fetch)")
        elif st.branch:
            lines.append(f"branch: {st.branch}, not pushed yet")
        if st.conflicts:
            lines.append(f"merge in progress: a pull left conflicts in {', '.join(st.conflicts)}: resolve them "
                         f"(edit, git add, git commit) or git -C {st.path} merge --abort")
        elif st.merging:
            lines.append(f"merge in progress, its conflicts resolved: git -C {st.path} commit --no-edit to finish it")
        pending = [p for p in st.uncommitted if p not in st.conflicts]
        if pending:
            lines.append(f"not committed: {', '.join(pending)}"
                         + (" (in the merge)" if st.merging else " (gitmem personal push commits .gitmem/)"))
        if st.enabled is not None:
            lines.append(f"given in this repository: {'yes' if st.enabled else 'no ([personal] enabled = false)'}"
                         f" (budgets: {st.session_budget} at session start, {st.prompt_budget} per prompt)")
        return "\n".join(lines)

    _out(shapes.personal_status_json(st), text)


@personal.command("path")
@json_option
def path_cmd() -> None:
    """Print the personal repository's folder (it may not exist yet).

    \b
    Example usage:
      cd "$(gitmem personal path)" && git log --oneline
    """
    from .. import layout

    d = layout.personal_dir()
    _out(shapes.personal_path_json(d, (d / layout.GITMEM_DIR).is_dir()), str(d))
