"""Ranking before the first edit (issue 25 item 1): with only files given and a prompt, the memories on the
symbols the prompt's words point at come before the file's other, newer memories; real repositories in
temporary folders, real parses."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.anchors import Resolver
from gitmem.git import WORKTREE, Repo
from gitmem.memories import make_anchors, write
from gitmem.model import Memory
from gitmem.ops.context import build_context
from gitmem.rank.focus import Focus, build_focus
from gitmem.rank.task import WEIGHT_GUESSED, add_task_symbols, guess_symbols, prompt_stems, stem
from gitmem.store import Store
from testing.repos import commit, make_repo

MODELS_PY = '''\
class Response:
    def json(self):
        return _serialize_json(self.body)

    def close(self):
        self.raw = None


def _serialize_json(obj):
    return str(obj)


def parse_header_links(value):
    return value.split(",")


def send(request):
    return request


def rebuild_auth(prepared):
    return prepared
'''


@pytest.fixture
def repo(tmp_path: Path, run_cli) -> Path:  # type: ignore[no-untyped-def]
    r = make_repo(tmp_path / "project")
    commit(r, "code", {"src/models.py": MODELS_PY, "src/other.py": "def serialize_json():\n    return 1\n"})
    assert run_cli(r, "init", "--no-hooks")[0] == 0
    return r


def test_stems_meet_across_word_forms() -> None:
    assert stem("serializing") == stem("serialize") == stem("serialized") == stem("serializes")
    assert stem("headers") == stem("header")
    assert stem("use") == "use"  # too short to strip
    assert "fix" not in prompt_stems("Fix the parser") and stem("parser") in prompt_stems("Fix the parser")


def test_guesses_are_the_symbols_whose_name_words_the_prompt_holds(repo: Path) -> None:
    table = Resolver(Repo(repo)).table(WORKTREE, "src/models.py")
    assert table is not None
    got = [n for n, _ in guess_symbols(list(table), prompt_stems("Throw value error when serializing JSON"))]
    assert got[:2] == ["Response.json", "_serialize_json"]
    assert "send" not in got and "parse_header_links" not in got
    assert guess_symbols(list(table), prompt_stems("Update the changelog")) == []


def test_a_word_in_most_names_of_the_file_guesses_nothing() -> None:
    names = ["json_a", "json_b", "json_c", "read_json", "tokens"]
    assert guess_symbols(names, prompt_stems("json")) == []
    assert [n for n, _ in guess_symbols(names, prompt_stems("read json"))] == ["read_json"]


def _memory(store: Store, mid: str, text: str, spec: str, day: int) -> Memory:
    when = f"2026-11-{day:02d}T00:00:00Z"
    return Memory(id=mid, type="discovery", title=text, body="", anchors=make_anchors(store, [spec], None),
                  created=when, updated=when)


def test_context_before_the_edit_puts_the_guessed_symbols_memory_first(repo: Path) -> None:
    store = Store(Repo(repo))
    target = _memory(store, "01JTARGET0000000000000000T", "built by hand: keep default=str out of it",
                     "src/models.py::_serialize_json", 1)
    newer = [_memory(store, f"01JNEWER{i}00000000000000000", f"note {i}", f"src/models.py::{sym}", 2 + i)
             for i, sym in enumerate(["send", "parse_header_links", "rebuild_auth", "Response.close"])]
    write(store, [target, *newer])

    def ids(prompt: str) -> list[str]:
        res = build_context(Store(Repo(repo)), files=["src/models.py"], prompt=prompt, cwd=str(repo), use_index=False)
        return [s.memory.id for s in res.ranked]

    assert ids("") == [m.id for m in reversed(newer)] + [target.id]  # no prompt: the file's memories, newest first
    assert ids("Throw value error when serializing objects")[0] == target.id
    assert ids("Update the changelog") == ids("")  # no word of a name: nothing guessed, the order stays


def test_files_with_changed_symbols_get_no_guesses(repo: Path) -> None:
    (repo / "src/models.py").write_text(MODELS_PY.replace("value.split", "value.strip().split"))
    r = Repo(repo)
    focus = build_focus(r, files=["src/models.py"], prompt="serializing JSON", cwd=str(repo))
    assert ("src/models.py", "parse_header_links") in focus.symbols
    add_task_symbols(focus, Resolver(r), WORKTREE)
    assert not [k for k, (_, why) in focus.symbols.items() if why == "guessed from the prompt"]


def test_guessed_weight_sits_between_the_file_and_a_changed_symbol(repo: Path) -> None:
    focus = Focus(prompt="serializing JSON")
    focus.add_file("src/models.py", 1.0, "given")
    add_task_symbols(focus, Resolver(Repo(repo)), WORKTREE)
    w = focus.symbols[("src/models.py", "_serialize_json")][0]
    assert 0.6 < w <= WEIGHT_GUESSED < 1.0
    assert ("src/other.py", "serialize_json") not in focus.symbols  # only the files in focus are guessed for


def test_a_text_hit_far_from_the_given_files_counts_less_than_one_on_them() -> None:
    from gitmem.model import Anchor
    from gitmem.rank import score as R

    def mem(mid: str, path: str, day: int) -> Memory:
        when = f"2026-11-{day:02d}T00:00:00Z"
        return Memory(id=mid, type="discovery", title=mid, body="", created=when, updated=when,
                      anchors=[Anchor(path=path, symbol="f", commit="0" * 40, kind="function")])

    on_file = [mem(f"F{i:02d}", "src/given.py", 1 + i) for i in range(12)]
    far = mem("FAR", "elsewhere/other.py", 20)
    focus = Focus()
    focus.add_file("src/given.py", 1.0, "given")
    ids = [s.memory.id for s in R.rank([*on_file, far], focus, text_ranking=["FAR"])]
    assert ids[-1] == "FAR"  # the given file's twelve memories first
    assert R.text_weight(0.0, True) == R.W_TEXT * R.TEXT_FAR_SHARE < R.text_weight(0.4, True) < R.W_TEXT
    assert R.text_weight(0.6, True) == R.text_weight(0.0, False) == R.W_TEXT  # on the file, or no file: full
    no_files = [s.memory.id for s in R.rank([*on_file, far], Focus(prompt="x"), text_ranking=["FAR"])]
    assert no_files == ["FAR"]  # from the prompt alone the text hit keeps its full weight
