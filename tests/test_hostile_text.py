"""Hostile text through search and output: queries full of operators, quotes, NUL, emoji, lone surrogates.

Queries go through ``gitmem recall`` (LanceDB full text + vectors), the hook index's BM25
(``catalog.db.search`` and the UserPromptSubmit hook through the ``gitmem-hook`` entry) and the
MCP search tool: never an exception, and a query naming a word of a memory finds that memory.
Memory text with emoji and lone surrogates comes in through ``gitmem remember``, a JSON Lines
import, the Claude Code capture and MCP ``remember``: every output stays valid UTF-8 and valid
JSON, and whatever can be represented (emoji, accents, quotes) is kept.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem import layout
from gitmem.catalog import db as catalog_db
from gitmem.catalog.sync import sync_hook_index
from gitmem.git import Repo
from gitmem.memfile import read
from gitmem.memories import RememberRequest, remember
from gitmem.search.lexical import hybrid_recall as recall
from gitmem.shapes import dumps, memory_json
from gitmem.store import Store
from gitmem.textsplit import MAX_QUERY_TERMS
from testing.repos import commit, make_repo

from test_claude_hooks import context_of, fixture, local_memories, scripted_session, spool_empty, wait_for

#: (unique word, memory text): each memory is found by its word and by no other memory's.
MEMORIES = {
    "zanzibar": "Zanzibar retries are capped at three 🚀 because the gateway (v2) drops the 4th",
    "quokka": "The quokka parser rejects tabs: \"quoted\" and 'single' and `code` and \\backslash\\",
    "wombat": "SELECT * FROM memories; DROP TABLE fts; -- the wombat note /* not a comment */",
    "marmot": "AND OR NOT NEAR(a b) * ^ : ( ) \" marmot {col}: x* -y +z",
    "narwhal": "Paths like C:\\Users\\narwhal and /etc/passwd and ../../up — naïve café 日本語 👩‍💻",
}

_FRAGMENTS = ['"', "'", "`", "\\", "\\\\", "/", "//", "-", "--", "---", "+", "*", "^", ":", "::", "(", ")", "()",
              "{", "}", "[", "]", "AND", "OR", "NOT", "NEAR", "NEAR(", "NEAR/2", "a*", "*a", "-x", "+y", "col:",
              "title:", "body : x", '"unclosed', "'; DROP TABLE memories; --", "1=1", "OR 1=1", "%", "_", "\0",
              "\x1b[2J", "\udcff", "\ud83d", "🚀", "👩‍💻", "é", "e\u0301", "\u202e", "\ufeff", "\u2028", "\t", "\n",
              "\r\n", "NULL", "null", "$", "${x}", "%s", "{0}", "\\u0000", "<private>", "MATCH", "fts", "bm25(fts)",
              "x" * 5000, "word " * 300]
hostile = st.lists(st.sampled_from(_FRAGMENTS) | st.text(st.characters(codec=None), max_size=8),
                   min_size=1, max_size=8).map(" ".join)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """One repository with the MEMORIES, its LanceDB index and hook index built once: (repo, word -> id)."""
    repo = make_repo(tmp_path_factory.mktemp("hostile") / "repo")
    commit(repo, "init", {"src/app.py": "def main():\n    return 1\n"})
    proc = subprocess.run([sys.executable, "-m", "gitmem", "init", "--no-hooks"], cwd=repo,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    store = Store(Repo(repo))
    ids = {word: remember(store, RememberRequest(text=text, anchors=("src/app.py::main",))).id
           for word, text in MEMORIES.items()}
    recall(store, "warm up the index")
    sync_hook_index(store)
    return repo, ids


def _with_word(query: str, word: str, at: int) -> str:
    parts = query.split(" ")
    parts.insert(at % (len(parts) + 1), word)
    return " ".join(parts)


def _valid_json_text(text: str) -> object:
    """``text`` encodes as strict UTF-8 (no lone surrogate) and parses as JSON."""
    text.encode("utf-8")
    return json.loads(text)


@settings(max_examples=25, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=hostile, word=st.sampled_from(sorted(MEMORIES)), at=st.integers(0, 8))
def test_recall_never_raises_and_finds_the_named_word(corpus, query: str, word: str, at: int) -> None:
    repo, ids = corpus
    store = Store(Repo(repo))
    recall(store, query)  # the hostile query alone: any result, no exception
    q = _with_word(query, word, at)
    hits = recall(store, q, limit=10)
    _valid_json_text(dumps([memory_json(h.memory) for h in hits]))
    if len(q.split()) < MAX_QUERY_TERMS:  # a longer query keeps only its first terms
        assert ids[word] in [h.memory.id for h in hits], f"{word!r} not found by {q[:200]!r}"


@settings(max_examples=40, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=hostile, word=st.sampled_from(sorted(MEMORIES)), at=st.integers(0, 8))
def test_hook_index_bm25_never_raises_and_finds_the_named_word(corpus, query: str, word: str, at: int) -> None:
    repo, ids = corpus
    con = catalog_db.connect(repo)
    assert con is not None
    try:
        catalog_db.search(con, query)
        q = _with_word(query, word, at)
        found = [mid for mid, _ in catalog_db.search(con, q, limit=20)]
    finally:
        con.close()
    if len(q.split()) < MAX_QUERY_TERMS:
        assert ids[word] in found, f"{word!r} not found by {q[:200]!r}"


@pytest.mark.parametrize("query", [
    'marmot AND "NEAR(' , "wombat'; DROP TABLE memories; --", "zanzibar\0\\", "quokka -- /* */ ^*:()",
    "🚀🚀 narwhal \udcff", "narwhal " + "x" * 20_000,
])
def test_recall_context_and_mcp_search_with_hostile_query(corpus, run_cli, query: str) -> None:
    repo, ids = corpus
    word = next(w for w in MEMORIES if w in query)
    code, out, err = run_cli(repo, "recall", query, "--json")
    assert code == 0, err
    assert ids[word] in [h["id"] for h in _valid_json_text(out)]
    code, out, err = run_cli(repo, "recall", query)
    assert code == 0 and ids[word] in out, err
    out.encode("utf-8")

    code, out, err = run_cli(repo, "context", "--prompt", query, "--json")
    assert code == 0, err
    assert ids[word] in json.dumps(_valid_json_text(out))

    from gitmem.integrations.mcp_server import GitmemTools

    text, data = GitmemTools(repo).search(query)
    text.encode("utf-8")
    assert ids[word] in [h["id"] for h in _valid_json_text(dumps(data))["hits"]]


def _cli(repo: Path, *args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    """``python -m gitmem ARGS`` as a real process; args may be bytes (not UTF-8: a lone surrogate in argv)."""
    return subprocess.run([sys.executable, "-m", "gitmem", *args], cwd=repo, capture_output=True, timeout=120)


def test_recall_process_with_undecodable_argv_gives_utf8_json(corpus) -> None:
    repo, ids = corpus
    proc = _cli(repo, "recall", b"zanzibar \xff \xf0\x9f\x9a\x80", "--json")
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert b"not embedded" not in proc.stderr  # the query is embedded too (its bad byte replaced)
    hits = _valid_json_text(proc.stdout.decode("utf-8"))
    assert ids["zanzibar"] in [h["id"] for h in hits]


def _gitmem_hook() -> str:
    exe = Path(sys.executable).parent / "gitmem-hook"
    if not exe.exists():
        pytest.skip("the gitmem-hook entry point is not installed next to this Python")
    return str(exe)


def _hook(exe: str, repo: Path, event: dict) -> tuple[int, bytes, bytes]:
    proc = subprocess.run([exe], input=json.dumps(event).encode(), cwd=repo, capture_output=True, timeout=60,
                          env=dict(os.environ))
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("prompt", [
    "why does the marmot note say AND OR NOT NEAR(a b) * ^ : ( ) \"",
    "wombat'; DROP TABLE fts; -- SELECT bm25(fts) MATCH \"x",
    "zanzibar \udcff \ud83d 🚀 \0 \\ // -- ++ **",
    "quokka " + "lorem ipsum " * 2_000,
])
def test_user_prompt_hook_with_hostile_prompt(corpus, prompt: str) -> None:
    repo, ids = corpus
    exe = _gitmem_hook()
    word = next(w for w in MEMORIES if w in prompt)
    event = fixture("UserPromptSubmit", repo, session_id=f"hostile-{word}", prompt=prompt)
    code, out, err = _hook(exe, repo, event)
    assert code == 0 and err == b""
    text = context_of(out.decode("utf-8"), "UserPromptSubmit")
    assert ids[word] in text


# -- memory text with emoji and lone surrogates, in through every door ---------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = make_repo(tmp_path / "project")
    commit(r, "init", {"src/client.py": "def fetch(url):\n    return url\n"})
    proc = _cli(r, "init", "--no-hooks")
    assert proc.returncode == 0, proc.stderr
    return r


def _assert_clean_file(repo: Path, mid: str) -> dict:
    lay = layout.of(repo)
    paths = [p for p in (lay.team_memories_dir / f"{mid}.md", lay.local_memories_dir / f"{mid}.md") if p.exists()]
    assert len(paths) == 1
    paths[0].read_bytes().decode("utf-8")
    return memory_json(read(paths[0])[0])


def test_remember_with_undecodable_argv_keeps_what_it_can(repo: Path) -> None:
    title = b"caf\xc3\xa9 \xf0\x9f\x9a\x80 gazelle bad \xff byte"  # UTF-8 with one byte that is not
    proc = _cli(repo, "remember", title + b"\n\nbody \xfe with \xe2\x80\x8d joiner and \"quotes\"", "--tag",
                b"t\xff", "--json")
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    m = _valid_json_text(proc.stdout.decode("utf-8"))
    assert m["title"] == "café 🚀 gazelle bad \ufffd byte"
    on_disk = _assert_clean_file(repo, m["id"])
    assert on_disk["title"] == m["title"] and on_disk["body"] == 'body \ufffd with \u200d joiner and "quotes"'
    assert on_disk["tags"] == ["t\ufffd"]
    text = _cli(repo, "show", m["id"])  # a real process: its stdout must encode
    assert text.returncode == 0 and "café 🚀 gazelle bad \ufffd byte" in text.stdout.decode("utf-8"), text.stderr
    js = _cli(repo, "recall", "gazelle", "--json")
    assert js.returncode == 0 and [h["title"] for h in _valid_json_text(js.stdout.decode("utf-8"))] == [m["title"]]
    # the hook index got the memory as written: a prompt naming its word finds it
    con = catalog_db.connect(repo)
    assert con is not None
    try:
        assert m["id"] in [mid for mid, _ in catalog_db.search(con, "gazelle")]
        (row,) = catalog_db.full_memories(con, [m["id"]])
        _valid_json_text(json.dumps(row, ensure_ascii=False))
    finally:
        con.close()
    assert not (layout.of(repo).log_file("hooks.log")).exists() or \
        "Error" not in (layout.of(repo).log_file("hooks.log")).read_text()


def test_import_jsonl_with_lone_surrogates_and_emoji(repo: Path, run_cli) -> None:
    line = {"format": "gitmem/1", "id": "01JD3V6Q4W8N5X2Y7Z9A0B1C2D", "type": "gotcha",
            "title": "ibis 🚀 \udcff title", "body": "body \ud83d half an emoji, CR\r\nLF",
            "facts": ["fact \udcff"], "tags": ["🚀", "\udcff"], "anchors": [], "author": "A\udcffda",
            "created": "2026-11-30T17:22:49Z", "updated": "2026-11-30T17:22:49Z"}
    src = repo / "in.jsonl"
    src.write_text(json.dumps(line) + "\n", encoding="ascii")  # \udcff escaped: valid JSON, not valid UTF-8 text
    code, out, err = run_cli(repo, "import", str(src), "--json")
    assert code == 0, err
    report = _valid_json_text(out)
    assert report["written"] == ["01JD3V6Q4W8N5X2Y7Z9A0B1C2D"], report
    m = _assert_clean_file(repo, "01JD3V6Q4W8N5X2Y7Z9A0B1C2D")
    assert m["title"] == "ibis 🚀 \ufffd title"
    assert m["body"] == "body \ufffd half an emoji, CR\nLF"  # a NUL rejects the line (tests/test_transfer.py)
    assert m["facts"] == ["fact \ufffd"] and m["tags"] == ["\ufffd", "🚀"] and m["author"] == "A\ufffdda"
    code, out, err = run_cli(repo, "list")
    assert code == 0 and "ibis 🚀 \ufffd title" in out, err
    code, out, err = run_cli(repo, "recall", "ibis", "--json")
    assert [h["id"] for h in _valid_json_text(out)] == ["01JD3V6Q4W8N5X2Y7Z9A0B1C2D"]


def test_claude_capture_with_lone_surrogates_and_emoji(repo: Path) -> None:
    scripted_session(repo, "hostile-capture", secret_prompt=" 🚀 \udcff \ud83d émoji")
    assert wait_for(lambda: local_memories(repo) and spool_empty(repo))
    (m,) = local_memories(repo)
    assert m["title"].endswith(" 🚀 \ufffd \ufffd émoji")
    _assert_clean_file(repo, m["id"])
    exe = _gitmem_hook()
    code, out, err = _hook(exe, repo, {"session_id": "next", "cwd": str(repo), "hook_event_name": "SessionStart",
                                       "source": "startup"})
    assert code == 0 and err == b""
    assert m["id"] in context_of(out.decode("utf-8"), "SessionStart")


def test_mcp_remember_and_search_with_lone_surrogates(repo: Path) -> None:
    from gitmem.integrations.mcp_server import GitmemTools

    tools = GitmemTools(repo)
    text, data = tools.remember("heron \udcff note 🚀", tags=["\ud83d"], facts=["f \udcff"])
    text.encode("utf-8")
    _valid_json_text(dumps(data))
    assert data["title"] == "heron \ufffd note 🚀"
    text, data = tools.search("heron \udcff")
    text.encode("utf-8")
    assert [h["id"] for h in _valid_json_text(dumps(data))["hits"]] == [data["hits"][0]["id"]]
    assert data["hits"][0]["title"] == "heron \ufffd note 🚀"
