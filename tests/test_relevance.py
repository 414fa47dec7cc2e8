"""Relevance floors: the prompt hook injects nothing for a prompt that matches nothing, in any language, with and
without the warm process, and records no use for it; a real match is still injected.

The pieces (``stopwords``, ``rank.relevance``, ``config``) on hand-computed inputs; then real hook processes
(``python -m gitmem.integrations.agents.claude``) in real repositories, and a real warm process (real LanceDB
index, WordLlama vectors) for the nonsense prompt.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem import config, layout, stopwords, usage
from gitmem.daemon import client
from gitmem.errors import ConfigError
from gitmem.rank import relevance
from tests.test_claude_hooks import context_of, fixture, hook
from tests.test_daemon import init_repo, ok, servers, start, wait_for

__all__ = ["servers"]  # a fixture, used by name

# -- content terms -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("prompt", [
    "explain the code", "what is it?", "can you help me with this", "and then?", "the", "hello there",
    "explique le code", "qu'est-ce que c'est ?", "erkläre mir den Code", "was ist das?", "explica el código",
    "¿qué es esto?", "spiega il codice", "o que é isso?", "wat is dit?",
])
def test_a_prompt_of_stop_words_and_request_words_has_no_content_terms(prompt: str) -> None:
    assert stopwords.content_terms(prompt) == []


def test_stop_words_are_those_of_the_prompts_language() -> None:
    # English: "die" is a verb here (German and Dutch list it)
    assert stopwords.content_terms("why does the worker die") == ["worker", "die"]
    # German: "die" is an article here
    assert stopwords.content_terms("warum stirbt der Prozess, wenn die Datei fehlt") == [
        "stirbt", "prozess", "datei", "fehlt"]
    # French; "explique", "fonction": request words (``REQUEST_WORDS``)
    assert stopwords.content_terms("explique le cache de la fonction parseConfig") == [
        "cache", "parseconfig", "parse", "config"]
    assert stopwords.content_terms("这个 函数 是 的") == ["这个", "函数"]  # 是, 的: Chinese stop words
    assert stopwords.content_terms("fix the http timeout") == ["fix", "http", "timeout"]


def test_the_shipped_stop_words_are_what_the_package_generates() -> None:
    pytest.importorskip("stopwords")  # the test extra installs it
    proc = subprocess.run([sys.executable, "-m", "gitmem.stopwords", "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(Path(stopwords.DATA_FILE).read_text("utf-8"))
    langs = {lang for codes in data["words"].values() for lang in codes.split()}
    assert {"en", "fr", "de", "es", "zh", "ja", "ru"} <= langs
    assert "en" in data["words"]["the"].split() and "de" in data["words"]["die"].split()
    assert "fix" not in data["words"] and "http" not in data["words"]  # stop-words' English lists them


# -- the scores and floors -----------------------------------------------------------------------------------------


def test_idf_is_smoothed_and_small_stores_count_as_min_store_size() -> None:
    assert relevance.idf(1, 2) == pytest.approx(math.log(1 + 99.5 / 1.5))  # as if 1 of 100 held it
    assert relevance.idf(1, 10_000) == pytest.approx(math.log(1 + 9999.5 / 1.5))
    assert relevance.idf(9_000, 10_000) < relevance.idf(100, 10_000) < relevance.idf(1, 10_000)
    assert relevance.idf(10_000, 10_000) > 0


def test_match_score_is_bm25_of_the_terms_a_memory_holds() -> None:
    docs, n = {"cache": 10, "parser": 1}, 200
    text = "The cache of the Parser; the cache"  # cache twice, parser once (case and diacritics folded)
    tf2 = 2 * (relevance.BM25_K1 + 1) / (2 + relevance.BM25_K1)
    want = relevance.idf(10, n) * tf2 + relevance.idf(1, n)
    assert relevance.match_score(["cache", "parser", "missing"], text, docs, n) == pytest.approx(want)
    assert relevance.match_score(["café"], "le cafe", {"cafe": 1}, n) == pytest.approx(relevance.idf(1, n))
    assert relevance.match_score(["absent"], text, docs, n) == 0.0
    assert relevance.self_score(["cache", "parser", "lorem"], docs, n) == pytest.approx(
        relevance.idf(10, n) + relevance.idf(1, n))  # "lorem": no memory holds it, none can match it


def test_the_text_floor_asks_a_short_prompt_for_coverage_and_a_long_one_for_min_bm25() -> None:
    assert relevance.text_floor(8.0, 6.0, 0.6) == pytest.approx(4.8)
    assert relevance.text_floor(40.0, 6.0, 0.6) == 6.0
    hits = [("a", 9.0), ("b", 5.0), ("c", 1.0)]
    assert relevance.lexical_floor(hits, {"a": 7.0, "b": 4.0, "c": 6.5}, 6.0) == [("a", 9.0), ("c", 1.0)]


def test_the_vector_floor_keeps_text_hits_and_close_vectors() -> None:
    hybrid = [{"id": "t", "similarity": 0.1}, {"id": "v", "similarity": 0.5}, {"id": "w", "similarity": 0.3},
              {"id": "x", "similarity": None}]
    assert [h["id"] for h in relevance.vector_floor(hybrid, ["t"], 0.45) or []] == ["t", "v"]
    assert relevance.vector_floor(None, ["t"], 0.45) is None


def test_a_prompt_without_content_terms_gets_no_vector_hit() -> None:
    from gitmem.integrations.agents import core

    close = [{"id": "v", "similarity": 0.9}]
    assert core.prompt_hybrid("explain the code", close, []) == []  # its vector is that of "code"
    assert core.prompt_hybrid("why is the cache cleared?", close, []) == close
    assert core.prompt_hybrid("explain the code", None, []) is None  # no warm process: nothing to floor


def test_the_floors_are_configured_in_relevance() -> None:
    defaults = (relevance.DEFAULT_MIN_BM25, relevance.DEFAULT_MIN_COVERAGE, relevance.DEFAULT_MIN_SIMILARITY)
    assert config.relevance_floors({}) == defaults
    assert config.relevance_floors({"relevance": {"min_bm25": 3, "min_similarity": 0.3}}) == (
        3.0, relevance.DEFAULT_MIN_COVERAGE, 0.3)
    assert config.relevance_floors({"relevance": {"min_bm25": "high", "min_coverage": -1}}) == defaults
    cfg = {"context": {}, "relevance": {"min_bm25": 4.5, "min_coverage": 0.5, "min_similarity": 0}}
    config.validate(cfg, "config.toml")
    with pytest.raises(ConfigError, match="relevance.min_recall"):
        config.validate({"context": {}, "relevance": {"min_recall": 1}}, "config.toml")
    with pytest.raises(ConfigError, match="relevance.min_bm25 must be a number"):
        config.validate({"context": {}, "relevance": {"min_bm25": True}}, "config.toml")


# -- the hook, real processes ---------------------------------------------------------------------------------------

#: Memories full of stop words of several languages and of "code", and one real subject each.
MEMORIES = (
    "The code of the parser cache is cleared on every reload of the config",
    "Le code de la fonction de connexion compare les mots de passe en temps constant",
    "Der Code für die Sitzung wird beim Abmelden für das Audit behalten",
    "El código de la sesión se guarda para la auditoría y no se borra",
    "The code that is in the retry loop must not be changed without the on-call team",
)


def _prompt(repo: Path, session: str, prompt: str) -> str:
    """The prompt hook's additionalContext ("" when it printed nothing), asserting exit 0 and no stderr."""
    code, out, err = hook(fixture("UserPromptSubmit", repo, session_id=session, prompt=prompt), repo)
    assert code == 0 and err == "", err
    return context_of(out, "UserPromptSubmit") if out else ""


def _given_by_prompt(repo: Path) -> list[str]:
    """The ids the use log records as given by the prompt hook."""
    records, _ = usage.read(layout.of(repo).usage_log)
    return [i for r in records if r.get("use") == usage.GIVEN and r.get("via") == "prompt"
            for i in r["ids"]]  # type: ignore[union-attr]


@pytest.fixture
def wordy(tmp_path: Path) -> tuple[Path, list[str]]:
    """A repository with ``MEMORIES`` (their ids) besides ``init_repo``'s two, the catalog built."""
    repo = init_repo(tmp_path / "repo")
    ids = [json.loads(ok(repo, "remember", text, "--type", "gotcha", "--json"))["id"] for text in MEMORIES]
    ok(repo, "sync")
    return repo, ids


@pytest.mark.parametrize("prompt", [
    "explain the code", "what does the code do?", "and the rest of it?", "please, can you help me with this?",
    "explique-moi le code de la fonction", "qu'est-ce que c'est que ce code ?", "erkläre mir bitte den Code",
    "was macht der Code hier?", "explícame el código, por favor", "¿qué hace esto?", "请解释一下这段代码的作用",
    "xyzzy plugh frobnicate", "lorem ipsum dolor sit amet",
])
def test_a_prompt_that_matches_nothing_gets_nothing_and_no_use(wordy: tuple[Path, list[str]], prompt: str) -> None:
    repo, _ = wordy
    assert _prompt(repo, "nothing", prompt) == ""
    assert _given_by_prompt(repo) == []


def test_a_real_match_is_still_injected_and_counted(wordy: tuple[Path, list[str]]) -> None:
    repo, ids = wordy
    text = _prompt(repo, "real", "why is the parser cache cleared on reload?")
    assert ids[0] in text and "parser cache" in text
    assert ids[1] not in text and ids[4] not in text  # "the", "code" shared: not enough
    assert ids[0] in _given_by_prompt(repo)
    # a match in another language
    text = _prompt(repo, "real-fr", "pourquoi compare-t-on les mots de passe en temps constant ?")
    assert ids[1] in text
    # one rare word of a short prompt is enough: it is most of what the prompt says
    assert ids[4] in _prompt(repo, "real-retry", "retry loop?")


def test_the_floors_follow_config_toml(wordy: tuple[Path, list[str]]) -> None:
    repo, ids = wordy
    prompt = "what happens on the audit after logout with the parser"
    cfg = repo / ".gitmem" / "config.toml"
    cfg.write_text(cfg.read_text() + "\n[relevance]\nmin_bm25 = 0\nmin_coverage = 0\n")
    loose = _prompt(repo, "loose", prompt)
    assert loose  # no text floor: any content word counts
    cfg.write_text(cfg.read_text().replace("min_bm25 = 0\nmin_coverage = 0", "min_bm25 = 100\nmin_coverage = 1"))
    assert _prompt(repo, "strict", prompt) == ""


def test_with_the_warm_process_a_nonsense_prompt_gets_no_nearest_vector(wordy: tuple[Path, list[str]],
                                                                         servers: list[layout.Layout]) -> None:
    repo, ids = wordy
    lay = layout.of(repo)
    servers.append(lay)
    start(lay)
    assert client.request(lay, "search", {"query": "xyzzy", "limit": 5}, timeout_s=60) is not None  # index built
    # the warm process does return a nearest neighbour for nonsense (its own floor is for recall, not the hook)
    hits = client.request(lay, "search", {"query": "the code of it", "limit": 5}, timeout_s=60)
    assert isinstance(hits, dict) and hits["hits"]
    before = client.status(lay)["requests"]  # type: ignore[index]
    for i, prompt in enumerate(("the code of it", "xyzzy plugh frobnicate", "explain the code", "hmm, and then?")):
        assert _prompt(repo, f"warm-nothing-{i}", prompt) == ""
    # the hook did ask the warm process (each search counted once answered), and still injected nothing
    wait_for(lambda: client.status(lay)["requests"] >= before + 3, 30, "the hooks' searches")  # type: ignore[index]
    assert _given_by_prompt(repo) == []
    # a real match still comes, with the warm process up
    text = wait_for(lambda: _prompt(repo, f"warm-real-{len(_given_by_prompt(repo))}",
                                    "why are passwords compared in constant time?"), 60, "a real match")
    assert "constant time" in text
    assert _given_by_prompt(repo)
