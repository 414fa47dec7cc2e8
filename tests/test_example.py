"""`.gitmem-example/` holds real memory files anchored to gitmem's own code: they must stay valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import memfile
from gitmem.anchors import Resolver
from gitmem.git import Repo

EXAMPLE = Path(__file__).resolve().parent.parent / ".gitmem-example"


def test_example_memories_are_valid_and_deterministic() -> None:
    files = sorted((EXAMPLE / "memories").glob("*.md"))
    assert len(files) >= 5
    for p in files:
        m, data = memfile.read(p)
        assert memfile.dumps(m).encode() == data, p.name
        assert m.anchors


def test_example_anchors_resolve_in_gitmem_history() -> None:
    repo = Repo(EXAMPLE.parent)
    if (EXAMPLE.parent / ".git" / "shallow").exists():
        pytest.skip("shallow clone: the anchor commits may be missing")
    resolver = Resolver(repo)
    for p in sorted((EXAMPLE / "memories").glob("*.md")):
        m, _ = memfile.read(p)
        for a in m.anchors:
            assert a.commit and repo.commit_exists(a.commit), f"{p.name}: {a.commit} not in history"
            st = resolver.status(a, a.commit)
            assert st.status.value == "fresh", f"{p.name}: {a.key} at its own commit is {st.status}"
