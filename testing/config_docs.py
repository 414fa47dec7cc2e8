"""docs/configuration.md's key reference, generated from ``gitmem.config.SCHEMA`` so that it cannot drift.

The page is hand-written prose around one generated part, between ``BEGIN`` and ``END``; ``render`` replaces that
part with ``config.reference_markdown()`` and keeps the rest. ``python -m testing.config_docs`` rewrites the page;
``tests/test_docs.py`` checks the committed page equals ``render`` of itself.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gitmem import config

#: The page, from the repository's root.
PAGE = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
#: The command that rewrites it (said by the test when the page is out of date).
COMMAND = "python -m testing.config_docs"
BEGIN = (f"<!-- generated from gitmem/config.py's SCHEMA by `{COMMAND}`: change the schema and run it; "
         "edits here are overwritten -->")
END = "<!-- end of the generated part -->"


def render(page: str) -> str:
    """``page`` (the text of docs/configuration.md) with its generated part, from ``BEGIN`` to ``END``, made again.

    Raises:
        ValueError: ``BEGIN`` or ``END`` is missing or out of order.
    """
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{PAGE.name}: the markers of the generated part are missing ({BEGIN!r} … {END!r})")
    return page[:start] + BEGIN + "\n\n" + config.reference_markdown() + "\n" + page[end:]


def main() -> int:
    """Rewrite ``PAGE`` in place; prints whether it changed. Returns the exit code (0)."""
    old = PAGE.read_text("utf-8")
    new = render(old)
    if new != old:
        PAGE.write_text(new, "utf-8")
    print(f"{PAGE}: {'rewritten' if new != old else 'already current'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
