"""Moving memories between tools and repositories: ``export``, ``import``."""

from __future__ import annotations

import os
import sys

import click

from .. import shapes
from ..errors import GitmemError
from .base import EXIT_ERROR, _out, _store, cli, json_option


def _memories(n: int) -> str:
    """``1 memory``, ``2 memories``."""
    return f"{n} memor{'y' if n == 1 else 'ies'}"


@cli.command("export")
@click.option("--local", "include_local", is_flag=True, help="Include local memories.")
@click.option("--retired", "include_retired", is_flag=True, help="Include retired memories.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-", show_default=True,
              help="File to write (- for stdout).")
@click.option("--json", "as_json", is_flag=True, help="Accepted like every command's --json: the output is JSON "
                                                      "Lines already.")

def export_cmd(include_local: bool, include_retired: bool, output: str, as_json: bool) -> None:
    """Write memories as JSON Lines (one memory per line, anchors included), for other tools or repositories.

    \b
    Example usage:
      gitmem export -o memories.jsonl
      gitmem export | (cd ../other-repo && gitmem import -)
    """
    from ..ops.transfer import export_lines

    lines = export_lines(_store(), include_local=include_local, include_retired=include_retired)
    with click.open_file(output, "w", encoding="utf-8") as f:  # the command's output: stdout or -o FILE
        for line in lines:
            f.write(line + "\n")


@cli.command("import")
@click.argument("source", metavar="FILE|claude-mem")
@click.argument("db", required=False, metavar="[DB]")
@json_option
def import_cmd(source: str, db: str | None) -> None:
    """Import memories: a JSON Lines FILE from `gitmem export` (- for stdin), or `claude-mem [DB]`.

    claude-mem: this repository's observations and session summaries of the
    database (default ~/.claude-mem/claude-mem.db), anchored to the files they
    modified and the symbols their text names; local scope; re-importing adds nothing.

    Anchors are kept when their commit exists here, else re-made against the
    working tree where their file and symbol exist, else dropped. Ids that exist
    are skipped. A line is rejected, with its number and why, when it is not a JSON
    object, too long or too deep, has fields of the wrong type, holds control
    characters, bidirectional overrides or a secret. Exits 1 when a line was
    rejected (the others are imported all the same).

    \b
    Example usage:
      gitmem import memories.jsonl
      gitmem import claude-mem
    """
    from ..ops.transfer import bounded_lines, import_lines

    store = _store()
    if source == "claude-mem":
        from ..ops.import_claude_mem import import_claude_mem

        rep = import_claude_mem(store, db)
        _out(shapes.claude_mem_import_json(rep),
             "\n".join([f"imported {_memories(len(rep.written))} from claude-mem (local scope), {rep.already} imported "
                        f"before, {rep.other_projects} of other projects left out, {rep.unanchored} without an "
                        f"anchor here" + (f", rejected {len(rep.rejected)} rows" if rep.rejected else "")
                        + (f", {rep.instructions} left out: a line reads as an instruction to the agent (run a "
                           "script, ignore instructions, send data; `gitmem check` lists the rules)"
                           if rep.instructions else "")]
                       + [f"  rejected {x}" for x in rep.rejected[:20]]))
        if rep.rejected:
            sys.exit(EXIT_ERROR)
        return
    if source != "-" and not os.path.isfile(source):
        raise GitmemError(f"no such file: {source}",
                          "give a file written by `gitmem export` (or - to read standard input)")
    with click.open_file(source, "r", encoding="utf-8", errors="replace") as f:
        report = import_lines(store, bounded_lines(f))
    _out(shapes.import_json(report),
         lambda: "\n".join([f"imported {_memories(len(report.written))}, skipped {len(report.skipped)} "
                            f"(ids that exist), rejected {len(report.rejected)} lines, dropped "
                            f"{len(report.dropped_anchors)} anchors (not in this repository)"]
                           + [f"  rejected {r}" for r in report.rejected[:20]]
                           + ([f"  … and {len(report.rejected) - 20} more rejected"] if len(report.rejected) > 20
                              else [])))
    if report.rejected:
        sys.exit(EXIT_ERROR)
