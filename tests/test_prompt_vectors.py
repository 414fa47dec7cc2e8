"""The prompt hook with vectors: the warm process's hybrid hits fused with BM25 and the named paths and symbols.

The ranking itself (``rank.fusion``) on hand-computed inputs; then real hook processes in a real repository
with a real LanceDB index and the WordLlama embedder: a prompt that paraphrases a memory, sharing no word
with it, gets it through a real warm process and not without one (BM25 alone); a warm process that dies
mid-request, hangs or answers garbage (a real process on the worktree's socket) leaves the hook on BM25
alone, exit 0, valid output.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gitmem import layout
from gitmem.daemon import client
from gitmem.rank import fusion
from gitmem.textsplit import query_terms
from tests.test_claude_hooks import context_of, fixture, hook
from tests.test_daemon import init_repo, ok, servers, start, wait_for

__all__ = ["servers"]  # a fixture, used by name

#: A memory and a prompt that paraphrases it without one shared word (checked below).
PARAPHRASED = ("Timestamps are stored in UTC",
               "Convert to local time only when rendering; comparisons across servers break otherwise.")
PROMPT = "which timezone do we persist dates with?"
#: WordLlama puts ``PROMPT`` and ``PARAPHRASED`` at cosine 0.40, under the default vector floor
#: (``rank.relevance.DEFAULT_MIN_SIMILARITY``, set where noise stops: WordLlama does not separate paraphrases from
#: noise); a team that wants paraphrases found lowers it, as here.
PARAPHRASE_FLOOR = 0.35


# -- the ranking ---------------------------------------------------------------------------------------------------


def test_without_the_warm_process_the_ranking_is_bm25_and_names_as_before() -> None:
    bm25 = [("a", 8.0), ("b", 6.0), ("c", 4.0), ("d", 3.9)]  # d is below half the best: not relevant
    ranked = fusion.prompt_ranking(["p"], ["s", "b"], bm25)
    # named symbol 3 (+ b's BM25 6/8), named path 2, then BM25 relative to the best hit
    assert ranked == [("b", 3.75), ("s", 3.0), ("p", 2.0), ("a", 1.0), ("c", 0.5)]
    assert fusion.prompt_ranking([], [], []) == []
    assert fusion.prompt_ranking([], [], [("x", 0.0)]) == []  # no positive best: nothing matches


def test_with_the_warm_process_vector_hits_join_and_named_memories_stay_first() -> None:
    bm25 = [("a", 8.0), ("b", 6.0)]
    hybrid = [{"id": "v", "score": 1 / 61, "fts_rank": None, "vector_rank": 1},
              {"id": "a", "score": 2 / 62, "fts_rank": 1, "vector_rank": 2}]
    ranked = dict(fusion.prompt_ranking(["p"], [], bm25, hybrid))
    k = fusion.RRF_K
    best = 1 / (k + 1) + 1 / (k + 2)  # a: first in BM25, second in the hybrid list
    assert ranked["a"] == pytest.approx(1.0)
    assert ranked["v"] == pytest.approx((1 / (k + 1)) / best)  # found by the vectors alone
    assert ranked["b"] == pytest.approx((1 / (k + 2)) / best)
    assert ranked["p"] == fusion.NAMED_PATH_SCORE  # a named file's memory beats any text match
    assert [m for m, _ in fusion.prompt_ranking(["p"], [], bm25, hybrid)] == ["p", "a", "v", "b"]
    # an empty answer of the warm process: BM25 alone, as RRF of one list
    assert [m for m, _ in fusion.prompt_ranking([], [], bm25, [])] == ["a", "b"]


def test_rrf_is_the_one_fusion_of_the_hybrid_search_too() -> None:
    from gitmem.search.hybrid import rrf_fuse

    hits = rrf_fuse(["a", "b", "a"], ["b", "c"])
    fused = fusion.rrf([(["a", "b", "a"], 1.0), (["b", "c"], 1.0)])
    assert {h.id: h.score for h in hits} == pytest.approx(fused)
    assert [(h.id, h.fts_rank, h.vector_rank) for h in hits] == [("b", 2, 1), ("a", 1, None), ("c", None, 2)]


# -- the hook, with and without a warm process ---------------------------------------------------------------------


def _prompt(repo: Path, session: str, prompt: str = PROMPT) -> str:
    """The prompt hook's additionalContext ("" when it printed nothing), asserting exit 0 and no stderr."""
    code, out, err = hook(fixture("UserPromptSubmit", repo, session_id=session, prompt=prompt), repo)
    assert code == 0 and err == "", err
    return context_of(out, "UserPromptSubmit") if out else ""


@pytest.fixture
def paraphrased(tmp_path: Path) -> tuple[Path, str]:
    """A repository with two anchored memories and ``PARAPHRASED`` (its id), its catalog built; the vector floor
    lowered to ``PARAPHRASE_FLOOR`` (``[relevance] min_similarity``)."""
    repo = init_repo(tmp_path / "repo", f"\n[relevance]\nmin_similarity = {PARAPHRASE_FLOOR}\n")
    title, body = PARAPHRASED
    assert not set(query_terms(PROMPT)) & set(query_terms(f"{title} {body}")), "the prompt must share no word"
    out = ok(repo, "remember", f"{title}\n\n{body}", "--type", "decision", "--json")
    mid = json.loads(out)["id"]
    ok(repo, "sync")
    return repo, mid


def test_a_paraphrase_is_found_with_the_warm_process_and_not_without(paraphrased: tuple[Path, str],
                                                                       servers: list[layout.Layout]) -> None:
    repo, mid = paraphrased
    lay = layout.of(repo)
    # down: BM25 alone, which cannot match a prompt that shares no word with the memory
    assert not lay.daemon_socket.exists()
    assert mid not in _prompt(repo, "cold")
    assert not client.running(lay)  # the prompt hook starts none
    # up: a real warm process (real LanceDB index, WordLlama vectors)
    servers.append(lay)
    start(lay)
    assert client.request(lay, "search", {"query": PROMPT, "limit": 5}, timeout_s=60)  # the index is built
    before = client.status(lay)["requests"]  # type: ignore[index]
    # a loaded machine can miss the hook's short wait (it then falls back to BM25): a few prompts at most
    tries = iter(range(20))
    text = wait_for(lambda: (lambda t: t if mid in t else "")(_prompt(repo, f"warm-{next(tries)}")), 120,
                    "the hook to inject the paraphrased memory")
    assert "Timestamps are stored in UTC" in text
    # the status call before counts one, the hooks' searches the rest (each counted once answered)
    wait_for(lambda: client.status(lay)["requests"] > before + 1, 30, "the hook's search")  # type: ignore[index]
    # down again: the next prompt is BM25 alone again
    assert client.stop(lay)
    wait_for(lambda: not client.running(lay), 30, "the server to exit")
    assert mid not in _prompt(repo, "cold-again")


#: A process that holds the worktree's socket and misbehaves: ``die`` (reads the request, then SIGKILLs
#: itself), ``hang`` (reads it, never answers), ``garbage`` (not JSON), ``shape`` (JSON, but hits that are
#: no list of {"id": str}).
FAKE = textwrap.dedent("""
    import os, signal, socket, sys, time
    path, mode = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(4)
    print("ready", flush=True)
    while True:
        conn, _ = s.accept()
        data = b""
        while not data.endswith(b"\\n"):
            data += conn.recv(65536)
        if mode == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        elif mode == "hang":
            time.sleep(3600)
        elif mode == "garbage":
            conn.sendall(b"\\x00\\xffnot json{")
        elif mode == "shape":
            conn.sendall(b'{"ok": true, "result": {"hits": [{"id": 5}, "x"]}}\\n')
        conn.close()
""")


@pytest.mark.parametrize("mode", ["die", "hang", "garbage", "shape"])
def test_a_broken_warm_process_leaves_the_hook_on_bm25(paraphrased: tuple[Path, str], mode: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    repo, mid = paraphrased
    lay = layout.of(repo)
    prompt = "why are passwords compared in constant time?"  # BM25 finds the login memory
    expected = _prompt(repo, f"cold-{mode}", prompt)  # GITMEM_NO_DAEMON=1 (conftest): BM25 alone
    assert "constant time" in expected
    monkeypatch.delenv(client.NO_DAEMON_ENV, raising=False)
    client.make_run_dir()  # the user's warm process's folder, where the fake listens instead
    proc = subprocess.Popen([sys.executable, "-c", FAKE, os.fspath(lay.daemon_socket), mode], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        got = _prompt(repo, f"warm-{mode}", prompt)
        assert got == expected
        assert mid not in got
        if mode == "die":
            assert proc.wait(timeout=30) == -signal.SIGKILL  # it did die mid-request
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    log = lay.log_file(client.LOG_NAME).read_text()
    assert "client search:" in log  # each fallback says why
