"""Reading a prompt (issue 25 item 2): identifiers vs plain words, names resolved against the focus files first,
a name weighed by how many anchored symbols share it, and a common word never outranking the focus files.

Real git repositories in temp dirs, real tree-sitter parses (``build_focus``), ``gitmem context`` in-process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.git import Repo
from gitmem.model import Anchor
from gitmem.ops.context import build_context
from gitmem.rank import mentions as M
from gitmem.rank.focus import FOCUS_NAME_WEIGHT, FOCUS_WORD_WEIGHT, WEIGHT_PROMPT, Focus, build_focus, weigh_names
from gitmem.rank.score import TIER_SAME_FILE, anchor_proximity
from gitmem.store import Store
from testing.repos import commit, make_repo

pytestmark = pytest.mark.usefixtures("fresh_symbol_caches")

MODELS = '''\
class Request:
    def prepare(self):
        return self._serialize()

    def _serialize(self):
        return "r"

    def remove(self, key):
        return key


class Response:
    def _serialize(self):
        return "s"

    def json(self):
        return {}
'''

SESSIONS = '''\
class Session:
    def _serialize(self):
        return "x"

    def timeout(self):
        return 3

    def send(self):
        return 1
'''

ADAPTERS = '''\
class HTTPAdapter:
    def timeout(self):
        return 5

    def close(self):
        return None
'''


def _repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"requests/models.py": MODELS, "requests/sessions.py": SESSIONS,
                                         "requests/adapters.py": ADAPTERS, "README.md": "# requests\n"})


# -- the reader: shapes -------------------------------------------------------------------------------------

def test_identifiers_by_shape_words_apart() -> None:
    r = M.read_prompt("guard against undefined timeout option in `Ky.retry`, _serialize() and parseConfig; see "
                      "Session.request in requests/models.py and README.md", {"requests/models.py", "README.md"})
    assert r.identifiers == ["Ky.retry", "_serialize", "parseConfig", "Session.request"]
    assert "timeout" in r.words and "guard" in r.words and "option" in r.words
    assert r.paths == {"requests/models.py", "README.md"}
    # nothing of a path is read as a name or a word
    assert not {"models.py", "models", "requests", "README", "md"} & set(r.identifiers + r.words)


def test_call_and_backquotes_make_an_identifier_of_a_plain_word() -> None:
    r = M.read_prompt("fix `timeout` and close() here", set())
    assert r.identifiers == ["timeout", "close"]
    assert "timeout" not in r.words and "close" not in r.words and "fix" in r.words and "here" in r.words


def test_qualified_path_symbol() -> None:
    r = M.read_prompt("look at requests/models.py::Request.prepare please", {"requests/models.py"})
    assert r.qualified == [("requests/models.py", "Request.prepare")]


def test_hook_reader_takes_no_plain_word() -> None:
    paths, names = M.prompt_mentions("the timeout list error in `Session.send` of models.py",
                                     {"requests/models.py", "requests/sessions.py"})
    assert paths == {"requests/models.py"} and names == {"Session.send"}


def test_name_weight_is_a_smoothed_idf() -> None:
    assert M.name_weight(1, 1000) == 1.0
    assert M.name_weight(0, 1000) == 1.0
    w5, w50, w500 = M.name_weight(5, 1000), M.name_weight(50, 1000), M.name_weight(500, 1000)
    assert 1.0 > w5 > w50 > w500 >= M.MIN_NAME_WEIGHT
    assert round(w50, 2) == 0.46  # ln(1 + 950.5/50.5) / ln(1 + 999.5/1.5)
    assert M.name_weight(1000, 1000) == M.MIN_NAME_WEIGHT


# -- context's reader: resolved against the focus files first ------------------------------------------------

def test_bare_name_resolves_to_the_focus_file(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    focus = build_focus(Repo(repo), files=["requests/models.py"], prompt="Fix _serialize for empty bodies",
                        cwd=str(repo))
    named = {k for k, (_, why) in focus.symbols.items() if why == "named"}
    assert named == {("requests/models.py", "Request._serialize"), ("requests/models.py", "Response._serialize")}
    assert "_serialize" not in focus.names  # not every X._serialize of the code base
    assert {focus.symbols[k][0] for k in named} == {WEIGHT_PROMPT * FOCUS_NAME_WEIGHT}
    other = Anchor(path="requests/sessions.py", symbol="Session._serialize", commit="0" * 40, kind="function")
    mine = Anchor(path="requests/models.py", symbol="Request._serialize", commit="0" * 40, kind="function")
    assert anchor_proximity(mine, focus)[0] > anchor_proximity(other, focus)[0]
    assert anchor_proximity(other, focus)[0] == 0.25  # only the focus directory


def test_unresolved_identifier_names_every_symbol(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    focus = build_focus(Repo(repo), files=["requests/models.py"], prompt="call HTTPAdapter.close on exit",
                        cwd=str(repo))
    assert focus.names.get("HTTPAdapter.close") == WEIGHT_PROMPT


def test_plain_word_resolved_in_focus_file_at_word_weight(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    focus = build_focus(Repo(repo), files=["requests/sessions.py"], prompt="Guard against undefined timeout option",
                        cwd=str(repo))
    assert focus.symbols[("requests/sessions.py", "Session.timeout")] == (WEIGHT_PROMPT * FOCUS_WORD_WEIGHT, "named")
    assert "timeout" not in focus.names  # HTTPAdapter.timeout is not what the task is about


def test_sentence_initial_word_matches_lower_case_symbol(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    focus = build_focus(Repo(repo), files=["requests/models.py"], prompt="Remove extra variable", cwd=str(repo))
    assert ("requests/models.py", "Request.remove") in focus.symbols


def test_plain_word_outside_the_focus_stays_below_the_focus_files(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    focus = build_focus(Repo(repo), files=["requests/models.py"], prompt="Guard against undefined timeout option",
                        cwd=str(repo))
    assert focus.names["timeout"] == WEIGHT_PROMPT * M.WORD_WEIGHT
    far = Anchor(path="requests/adapters.py", symbol="HTTPAdapter.timeout", commit="0" * 40, kind="function")
    own = Anchor(path="requests/models.py", symbol="Response.json", commit="0" * 40, kind="function")
    assert anchor_proximity(far, focus)[0] < anchor_proximity(own, focus)[0] == TIER_SAME_FILE


def test_weigh_names_by_how_many_symbols_share_them() -> None:
    focus = Focus(names={"timeout": 1.0, "prepare": 1.0, "Session.send": 1.0})
    anchors = [Anchor(path=f"m{i}.py", symbol=f"C{i}.timeout", commit="0" * 40, kind="function") for i in range(20)]
    anchors += [Anchor(path="a.py", symbol="Request.prepare", commit="0" * 40, kind="function"),
                Anchor(path="s.py", symbol="Session.send", commit="0" * 40, kind="function"),
                Anchor(path="t.py", symbol="Other.send", commit="0" * 40, kind="function")]
    weigh_names(focus, anchors)
    assert focus.names["prepare"] == 1.0 and focus.names["Session.send"] == 1.0
    assert focus.names["timeout"] == M.name_weight(20, 23) < 1.0


# -- end to end: gitmem context ------------------------------------------------------------------------------

def test_common_word_does_not_pull_unrelated_memories_above_the_focus_files(tmp_path: Path, run_cli,
                                                                           run_json) -> None:
    repo = _repo(tmp_path)
    assert run_cli(repo, "init")[0] == 0
    far = [run_json(repo, "remember", f"adapter note {i}", "--anchor", "requests/adapters.py::HTTPAdapter.timeout")
           ["id"] for i in range(3)]
    far.append(run_json(repo, "remember", "session note", "--anchor", "requests/sessions.py::Session.timeout")["id"])
    own = [run_json(repo, "remember", "responses are json", "--anchor", "requests/models.py::Response.json")["id"],
           run_json(repo, "remember", "prepare serializes", "--anchor", "requests/models.py::Request.prepare")["id"]]
    commit(repo, "memories")
    res = build_context(Store(Repo(repo)), files=["requests/models.py"], cwd=str(repo), use_index=False,
                        prompt="guard against undefined timeout option")
    order = [s.memory.id for s in res.ranked]
    assert set(order[:2]) == set(own), order
    assert all(order.index(f) > 1 for f in far if f in order)
