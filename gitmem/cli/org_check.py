"""``gitmem org check``: every cross-repository anchor of this repository's memories against its repository's ref.

Kept apart from ``cli/org.py`` (``gitmem org index|status``, branch i21-org) so the branches merge cleanly: the
command joins the ``org`` group when that module made it (imported first), else makes the group itself.
"""

from __future__ import annotations

import sys

import click

from .. import shapes
from .base import EXIT_ERROR, _out, _store, cli, json_option


def _org_group() -> click.Group:
    grp = cli.commands.get("org")
    if isinstance(grp, click.Group):
        return grp

    @cli.group("org")
    def org() -> None:
        """The organisation: its repositories, their memories, anchors across them."""

    return org


@_org_group().command("check")
@click.option("--fetch", is_flag=True, help="Fetch the mirrors of repositories reached by URL first.")
@json_option
def check(fetch: bool) -> None:
    """Check every cross-repository anchor (REPO:PATH::SYMBOL) against its repository's ref.

    Exits 1 when one is not fresh (stale, moved, deleted) or could not be checked (its repository
    unreachable), so a CI job can gate on it. Results are recorded: the agents' hooks then warn about a
    stale one without running git in the other repository.

    \b
    Example usage:
      gitmem org check
      gitmem org check --fetch --json
    """
    from ..org.xrepo import check as do_check

    rep = do_check(_store(), fetch=fetch)
    _out(shapes.org_check_json(rep), lambda: _render(rep))
    if rep.not_fresh:
        sys.exit(EXIT_ERROR)


def _render(rep: object) -> str:
    from ..org.xrepo import CheckReport

    assert isinstance(rep, CheckReport)
    if not rep.checks:
        return "gitmem: no memory has a cross-repository anchor"
    lines = []
    for c in rep.checks:
        lines.append(f"{c.status.value:9} {c.anchor.key}  {c.memory.id}  {c.memory.title}"
                     + (f"\n          — {c.reason}" if c.reason else ""))
    counts: dict[str, int] = {}
    for c in rep.not_fresh:
        counts[c.status.value] = counts.get(c.status.value, 0) + 1
    n = len(rep.checks)
    lines.append(f"{n} cross-repository anchor{'s' if n != 1 else ''}: "
                 + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) if counts else "all fresh"))
    return "\n".join(lines)
