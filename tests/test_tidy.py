"""``gitmem tidy`` on real repositories: planted near-duplicates merged, a planted contradiction flagged (by rules
and by a model on a scripted OpenAI-compatible server), memories of long-deleted code retired; unrelated memories
left alone; ``--apply`` writes what the dry run said; a second run has nothing to apply. Plus the rules of
``gitmem.compare`` one by one, and the same checks at consolidation time, in ``stale`` and in ``doctor``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from gitmem.capture.consolidate import Plan, merge_into
from gitmem.compare import contradiction, near_duplicate
from gitmem.git import Repo
from gitmem.memfile import read as read_memory
from gitmem.model import Anchor, Memory
from gitmem.store import Store
from testing.chat_server import chat_server
from testing.repos import commit, git, make_repo

CODE = '''\
def load(path, timeout):
    """Read a whole file."""
    return open(path).read()


def save(path, data):
    open(path, "w").write(data)


def fetch(url, timeout):
    return url


def legacy_export(rows):
    return ",".join(rows)
'''


def _repo(tmp_path: Path, run_cli, deleted_days: str = "") -> Path:
    repo = make_repo(tmp_path / "r", {"io.py": CODE})
    assert run_cli(repo, "init", "--no-hooks")[0] == 0
    if deleted_days:
        _set_days(repo, deleted_days)
    commit(repo, "gitmem init")
    return repo


def _set_days(repo: Path, days: str) -> None:
    """``[tidy] deleted_days = days`` in the config ``init`` wrote."""
    cfg = repo / ".gitmem" / "config.toml"
    text = cfg.read_text().split("\n[tidy]\n")[0]  # the default config has it commented out
    assert "# deleted_days = " in text
    cfg.write_text(f"{text}\n[tidy]\ndeleted_days = {days}\n")


def _remember(run_json, repo: Path, text: str, anchor: str, mtype: str, *extra: str) -> str:
    return str(run_json(repo, "remember", text, "--anchor", anchor, "--type", mtype, *extra)["id"])


def _tidy(run_cli, repo: Path, *args: str, code: int) -> dict[str, Any]:
    got, out, err = run_cli(repo, "tidy", *args, "--json")
    assert got == code, f"exit {got}: {err}"
    return json.loads(out)


@pytest.fixture
def planted(tmp_path: Path, run_cli, run_json) -> tuple[Path, dict[str, str]]:
    """A repository with planted duplicates, a contradiction, and memories that must be left alone."""
    repo = _repo(tmp_path, run_cli)
    ids = {
        # three observations of one gotcha on load: the second is the most complete
        "dup1": _remember(run_json, repo, "load reads the whole file into memory at once; big files are slow",
                          "io.py::load", "gotcha", "--tag", "memory", "--fact", "seen with a 2 GB log"),
        "dup2": _remember(run_json, repo, "load reads the whole file into memory at once, so big files are slow "
                          "to load and can exhaust memory", "io.py::load", "gotcha", "--tag", "performance"),
        "dup3": _remember(run_json, repo, "load reads the whole file into memory at once: big files are slow",
                          "io.py::load", "gotcha"),
        # the same words on other code: not a duplicate
        "other_code": _remember(run_json, repo, "save writes the whole file into memory at once; big files are slow",
                                "io.py::save", "gotcha"),
        # a planted contradiction: two values for one setting of fetch
        "c30": _remember(run_json, repo, "The fetch timeout = 30 seconds", "io.py::fetch", "decision"),
        "c60": _remember(run_json, repo, "Keep the fetch timeout at 60 seconds: slow mirrors need it",
                         "io.py::fetch", "constraint"),
        # different but compatible things about one symbol
        "ok1": _remember(run_json, repo, "save must write UTF-8 text, the readers expect it", "io.py::save",
                         "constraint"),
        "ok2": _remember(run_json, repo, "save never creates missing parent folders: callers create them first",
                         "io.py::save", "decision"),
    }
    commit(repo, "memories")
    return repo, ids


def _memory(repo: Path, mid: str) -> Memory:
    return read_memory(repo / ".gitmem" / "memories" / f"{mid}.md")[0]


def test_dry_run_finds_planted_and_leaves_the_rest(planted, run_cli) -> None:
    repo, ids = planted
    rep = _tidy(run_cli, repo, code=1)
    assert not rep["applied"] and rep["checked"] == 8 and rep["how"] == "rules"
    [group] = rep["duplicates"]
    assert group["keep"]["id"] == ids["dup2"]  # the most complete
    assert sorted(m["id"] for m in group["merge"]) == sorted([ids["dup1"], ids["dup3"]])
    assert all(m["similarity"] >= 0.6 for m in group["merge"]) and group["anchors"] == ["io.py::load"]
    [flag] = rep["contradictions"]
    assert {flag["a"]["id"], flag["b"]["id"]} == {ids["c30"], ids["c60"]} and flag["rule"] == "value"
    assert "30" in flag["reason"] and "60" in flag["reason"]
    named = json.dumps(rep)
    for key in ("other_code", "ok1", "ok2"):
        assert ids[key] not in named
    assert rep["long_deleted"] == [] and rep["written"] == [] and rep["retired"] == []
    assert git(repo, "status", "--porcelain") == ""  # a dry run writes nothing
    code, out, _ = run_cli(repo, "tidy")
    assert code == 1 and "keep  " + ids["dup2"] in out and "value: timeout" in out and "--apply" in out


def test_apply_writes_what_the_dry_run_said_and_is_idempotent(planted, run_cli, run_json) -> None:
    repo, ids = planted
    dry = _tidy(run_cli, repo, code=1)
    done = _tidy(run_cli, repo, "--apply", code=0)
    assert done["applied"] and done["duplicates"] == dry["duplicates"]
    assert done["contradictions"] == dry["contradictions"]  # flagged, never changed
    assert done["written"] == [ids["dup2"]] and sorted(done["retired"]) == sorted([ids["dup1"], ids["dup3"]])
    changed = set(git(repo, "diff", "--name-only").split())
    assert changed == {f".gitmem/memories/{ids[k]}.md" for k in ("dup1", "dup2", "dup3")}
    keep = _memory(repo, ids["dup2"])
    assert sorted(keep.supersedes) == sorted([ids["dup1"], ids["dup3"]])
    assert keep.facts == ["seen with a 2 GB log"] and sorted(keep.tags) == ["memory", "performance"]
    assert [a.key for a in keep.anchors] == ["io.py::load"] and not keep.retired
    for k in ("dup1", "dup3"):
        old = _memory(repo, ids[k])
        assert old.retired and old.superseded_by == [ids["dup2"]]
    assert {m["id"] for m in run_json(repo, "list")} == set(ids.values()) - {ids["dup1"], ids["dup3"]}
    commit(repo, "tidy")
    again = _tidy(run_cli, repo, "--apply", code=0)  # nothing left to apply: nothing written
    assert again["duplicates"] == [] and again["long_deleted"] == [] and again["written"] == []
    assert git(repo, "status", "--porcelain") == ""
    assert len(_tidy(run_cli, repo, code=1)["contradictions"]) == 1  # still there until someone decides
    assert run_cli(repo, "supersede", ids["c30"], "The fetch timeout is 60 seconds", "--type", "decision")[0] == 0
    # the replacement agrees with c60 and repeats nothing of it closely enough to merge
    final = _tidy(run_cli, repo, code=0)
    assert final["findings"] == 0, final


def test_long_deleted_code_is_proposed_then_retired(tmp_path: Path, run_cli, run_json) -> None:
    repo = _repo(tmp_path, run_cli)
    gone = _remember(run_json, repo, "legacy_export writes CSV without quoting", "io.py::legacy_export", "gotcha")
    recent = _remember(run_json, repo, "fetch ignores its timeout", "io.py::fetch", "bugfix")
    commit(repo, "memories")
    old = time.time() - 45 * 86400
    stamp = f"@{int(old)} +0000"
    (repo / "io.py").write_text(CODE.split("\n\ndef legacy_export")[0] + "\n")
    git(repo, "commit", "-qam", "drop legacy_export", env={"GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_DATE": stamp})
    rep = _tidy(run_cli, repo, code=1)
    [d] = rep["long_deleted"]
    assert d["id"] == gone and d["days"] >= 44 and d["commit"] == git(repo, "rev-parse", "HEAD").strip()
    # fetch deleted in the working tree only: no commit to date it, not proposed
    (repo / "io.py").write_text(CODE.split("\n\ndef fetch")[0] + "\n")
    rep = _tidy(run_cli, repo, code=1)
    assert [x["id"] for x in rep["long_deleted"]] == [gone] and recent not in json.dumps(rep)
    git(repo, "checkout", "--", "io.py")
    _set_days(repo, "60")
    assert _tidy(run_cli, repo, code=0)["long_deleted"] == []
    _set_days(repo, "30")
    done = _tidy(run_cli, repo, "--apply", code=0)
    assert done["retired"] == [gone]
    m = _memory(repo, gone)
    assert m.retired and any(f.startswith("Retired: tidy: all its code deleted since") for f in m.facts)
    assert _tidy(run_cli, repo, code=0)["findings"] == 0


def test_bad_tidy_config_is_refused(tmp_path: Path, run_cli) -> None:
    repo = _repo(tmp_path, run_cli, "-1")
    code, _, err = run_cli(repo, "tidy")
    assert code == 1 and "tidy.deleted_days must be an integer >= 0" in err


def test_contradictions_judged_by_the_model(planted, run_cli) -> None:
    repo, ids = planted
    with chat_server() as server:
        def respond(body: dict[str, Any]) -> dict[str, Any]:
            pairs = body["messages"][-1]["content"].split("PAIR ")[1:]
            verdicts = [{"pair": i, "contradicts": "save must write UTF-8" in text,
                         "why": "one says UTF-8 text, the other bytes"} for i, text in enumerate(pairs, 1)]
            return {"content": json.dumps({"pairs": verdicts})}

        server.respond = respond
        with (repo / ".gitmem" / "config.toml").open("a") as f:
            f.write(f'\n[llm]\nbase_url = "{server.base_url}"\nmodel = "judge"\n')
        rep = _tidy(run_cli, repo, code=1)
        assert rep["how"] == "llm" and len(server.requests) == 1
        sent = server.requests[0]["messages"][-1]["content"]
        assert "The fetch timeout = 30 seconds" in sent and "save must write UTF-8" in sent
        # the model, not the rules, decided: the timeouts pass, the save pair is flagged
        [flag] = rep["contradictions"]
        assert {flag["a"]["id"], flag["b"]["id"]} == {ids["ok1"], ids["ok2"]} and flag["rule"] == "llm"
        # a model that answers nonsense twice: the rules judge, and a note says so
        server.respond = lambda body: {"content": "no idea"}
        rep = _tidy(run_cli, repo, code=1)
        assert rep["how"] == "rules" and [f["rule"] for f in rep["contradictions"]] == ["value"]
        assert any("judged by rules" in n for n in rep["notes"])
        assert len(_tidy(run_cli, repo, "--no-llm", code=1)["contradictions"]) == 1


def test_doctor_shows_tidy_findings_the_stale_listing_does_not(planted, run_cli) -> None:
    repo, _ = planted
    code, out, _ = run_cli(repo, "stale", "--list")  # a listing stays fast: tidy reads every memory
    assert code == 0 and "tidy:" not in out
    code, out, _ = run_cli(repo, "doctor", "--json")
    [check] = [c for c in json.loads(out)["checks"] if c["name"] == "tidy"]
    assert check["level"] == "warn" and "2 finding(s)" in check["message"] and "gitmem tidy" in check["hint"]


def test_consolidation_merges_by_the_same_measure_and_never_reinforces_a_contradiction(planted) -> None:
    repo, ids = planted
    store = Store(Repo(repo))
    existing = list(store.load_all().memories.values())
    again = Memory(id="01NEWNEWNEWNEWNEWNEWNEWNEW", type="gotcha", title="load reads the whole file into memory",
                   body="at once, so big files are slow to load and can exhaust memory", scope="local",
                   anchors=[a for a in store.get(ids["dup2"]).anchors])
    plan = Plan()
    merge_into(plan, again, existing)
    assert [m.id for m in plan.write] == [ids["dup2"]]  # the near-copy reinforced the memory tidy would keep
    clash = Memory(id="01NEWNEWNEWNEWNEWNEWNEWNEX", type="gotcha", title="The fetch timeout = 45 seconds",
                   scope="local", anchors=list(store.get(ids["c30"]).anchors))
    notes: list[str] = []
    plan = Plan()
    merge_into(plan, clash, existing, notes)
    assert [m.id for m in plan.write] == [clash.id] and not clash.supersedes
    assert notes and "contradicts" in notes[0] and "gitmem tidy" in notes[0]


def _m(text: str, mtype: str = "decision", anchor: str = "a.py::f") -> Memory:
    path, _, sym = anchor.partition("::")
    return Memory(id=f"{anchor}:{text}", type=mtype, title=text, anchors=[Anchor(path=path, symbol=sym or None,
                                                                         kind="function" if sym else "file")])


@pytest.mark.parametrize(("a", "b", "rule"), [
    ("Never call save twice in one request", "call save twice: once for the draft, once for the final", "negation"),
    ("Run migrations with `make migrate`, never `alembic upgrade` by hand", "Use `alembic upgrade head` to migrate",
     "negation"),
    ("Hooks must never hang on a lock", "hooks must hang on the lock until it is free", "negation"),
    ("The request timeout = 30", "the timeout is 60 seconds", "value"),
    ("MAX_TITLE_CHARS = 120", "MAX_TITLE_CHARS = 160", "value"),
    ("Use make migrate to run migrations", "Use alembic upgrade to run migrations", "use"),
    ("Use orjson instead of json for speed", "use json for parsing memory files", "use"),
])
def test_rules_flag(a: str, b: str, rule: str) -> None:
    found = contradiction(_m(a), _m(b, "constraint"))
    assert found is not None and found.rule == rule, found


@pytest.mark.parametrize(("a", "b"), [
    ("The request timeout = 60", "the timeout is 1 minute"),                       # one value, two units
    ("save must write UTF-8 text", "save never creates missing parent folders"),   # different things
    ("Cache is keyed by blob SHA", "Cache is never keyed by mtime"),
    ("Titles longer than 120 characters are cut", "The token budget is 1500 tokens"),
    ("Never call save twice", "call load twice to warm the cache"),
    ("The timeout changed from 30 to 60 seconds", "the timeout is 60 seconds"),    # a history, not a value
    ("Use make migrate to run migrations", "Use make migrate to run migrations in CI too"),
])
def test_rules_leave_compatible_statements(a: str, b: str) -> None:
    assert contradiction(_m(a), _m(b)) is None


def test_rules_only_for_statement_types_and_duplicates_only_on_the_same_code() -> None:
    assert contradiction(_m("The timeout = 30", "discovery"), _m("The timeout = 60")) is None
    a, b = _m("load reads the whole file at once"), _m("load reads the whole file at once", anchor="a.py::g")
    assert near_duplicate(a, [b]) is None
    whole_file = _m("load reads the whole file at once", anchor="a.py")
    assert near_duplicate(a, [whole_file]) == (whole_file, 1.0)
