"""The organisation index (issue 21): real repositories in temp folders, real LanceDB, on a local folder and on the
real object store (Ceph RGW, ``rgw`` fixtures: skipped with the reason when Ceph is not installed).

Index three repositories (two work trees and a URL mirrored from a bare remote), search across them, re-index
incrementally after a push (rows updated, re-checked and deleted), two indexers at once (no row lost or
duplicated), a store that ignores conditional writes refused, reading with the read-only key.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.errors import OrgStoreError
from gitmem.org import index as org_index
from gitmem.org import repos as org_repos
from gitmem.org import store as org_store
from gitmem.org.search import search
from gitmem.org.settings import OrgSettings
from testing.repos import commit, git, make_repo

NO_VECTORS = {"provider": "none"}
APP = ('def retry_after(resp):\n    """Seconds to wait."""\n    return int(resp.headers["Retry-After"])\n\n\n'
       "def charge(amount):\n    return amount * 2\n")


@pytest.fixture(params=["folder", "rgw"])
def org(request: pytest.FixtureRequest, tmp_path: Path) -> OrgSettings:
    """``OrgSettings`` of a fresh organisation index: a local folder, or a fresh bucket on the real RGW (its
    read-write keys in the environment)."""
    if request.param == "folder":
        return OrgSettings(uri=str(tmp_path / "org-index"))
    s3 = request.getfixturevalue("s3_org")
    return OrgSettings(uri=s3.uri, endpoint=s3.endpoint, region=s3.region)


def _remember(repo: Path, run_cli, *args: str) -> str:
    code, out, err = run_cli(repo, "remember", *args, "--json")
    assert code == 0, err
    return str(json.loads(out)["id"])


def _service(tmp_path: Path, name: str, run_cli) -> tuple[Path, dict[str, str]]:
    """A repository ``name`` with src/app.py and two committed memories: {"retry": id, "charge": id}."""
    repo = make_repo(tmp_path / name, {"src/app.py": APP})
    code, _, err = run_cli(repo, "init", "--no-hooks")
    assert code == 0, err
    (repo / ".gitmem" / "config.toml").write_text('[embeddings]\nprovider = "none"\n')
    ids = {"retry": _remember(repo, run_cli, f"{name}: Retry-After is in seconds, never milliseconds",
                              "--type", "gotcha", "--anchor", "src/app.py::retry_after"),
           "charge": _remember(repo, run_cli, f"{name}: charge doubles the amount (a fee is included)",
                               "--anchor", "src/app.py::charge", "--fact", "the fee is 100%")}
    commit(repo, "memories", no_verify=True)
    return repo, ids


def _rows(settings: OrgSettings) -> list[dict[str, object]]:
    t = org_store.connect(settings).open_table(org_index.MEMORIES_TABLE)
    return list(t.search().select(["key", "repo", "id", "status", "reason", "title", "commit"]).limit(None)
                .to_arrow().to_pylist())


def _three(tmp_path: Path, run_cli) -> tuple[list[org_repos.OrgRepo], dict[str, tuple[Path, dict[str, str]]]]:
    made = {n: _service(tmp_path, n, run_cli) for n in ("billing", "ledger", "web")}
    bare = tmp_path / "remote" / "web.git"
    git(tmp_path, "clone", "-q", "--bare", str(made["web"][0]), str(bare))
    git(made["web"][0], "remote", "add", "origin", str(bare))
    return [org_repos.OrgRepo("billing", str(made["billing"][0])), org_repos.OrgRepo("ledger", str(made["ledger"][0])),
            org_repos.OrgRepo("web", bare.as_uri())], made


def test_index_three_repositories_and_search_across_them(org: OrgSettings, tmp_path: Path, run_cli) -> None:
    targets, made = _three(tmp_path, run_cli)
    lines: list[str] = []
    rep = org_index.index(org, targets, progress=lines.append, embeddings=NO_VECTORS)
    assert [(r.repo, r.state, r.added, r.updated, r.deleted, r.memories) for r in rep.repos] == [
        ("billing", "indexed", 2, 0, 0, 2), ("ledger", "indexed", 2, 0, 0, 2), ("web", "indexed", 2, 0, 0, 2)]
    assert all(r.before == "" and len(r.after) == 40 for r in rep.repos)
    # progress: one start line per repository (the results are the report's, printed once by the CLI)
    assert [line.split(":")[0] for line in lines] == ["billing", "ledger", "web"]
    assert all(": indexing " in line for line in lines)
    rows = _rows(org)
    assert sorted(r["key"] for r in rows) == sorted(f"{n}\x1f{i}" for n, (_, ids) in made.items() for i in ids.values())
    assert {r["status"] for r in rows} == {"fresh"}

    hits = search(org, "Retry-After seconds milliseconds", embeddings=NO_VECTORS)
    assert {h.repo for h in hits[:3]} == {"billing", "ledger", "web"}
    top = hits[0]
    assert top.type == "gotcha" and top.anchors == ("src/app.py::retry_after",) and top.status == "fresh"
    assert top.trust and top.commit == git(made[top.repo][0], "rev-parse", "HEAD").strip()
    assert top.id == made[top.repo][1]["retry"]
    facts = search(org, "fee", embeddings=NO_VECTORS, repos=["ledger"])
    assert [(h.repo, h.id) for h in facts] == [("ledger", made["ledger"][1]["charge"])]
    assert "- the fee is 100%" in facts[0].body
    assert {h.repo for h in search(org, "seconds", exclude=["billing", "web"], embeddings=NO_VECTORS)} == {"ledger"}
    assert search(org, "seconds", repos=[], embeddings=NO_VECTORS) == []

    again = org_index.index(org, targets, embeddings=NO_VECTORS)
    assert [r.state for r in again.repos] == ["skipped"] * 3 and again.added == again.updated == 0
    assert [s.repo for s in org_index.states(org)] == ["billing", "ledger", "web"]


def test_incremental_reindex_after_a_push(org: OrgSettings, tmp_path: Path, run_cli) -> None:
    targets, made = _three(tmp_path, run_cli)
    org_index.index(org, targets, embeddings=NO_VECTORS)
    web, ids = made["web"]
    before = git(web, "rev-parse", "HEAD").strip()
    # the push: charge's body changes (its memory goes stale), the retry memory is edited, a memory is added and
    # the charge memory of billing is left alone (billing is not pushed)
    code, _, err = run_cli(web, "forget", ids["retry"])
    assert code == 0, err
    new_id = _remember(web, run_cli, "web: refunds are never charged twice", "--anchor", "src/app.py")
    commit(web, "charge triples", {"src/app.py": APP.replace("amount * 2", "amount * 3")}, no_verify=True)
    git(web, "push", "-q", "origin", "main")
    after = git(web, "rev-parse", "HEAD").strip()

    rep = org_index.index(org, targets, embeddings=NO_VECTORS)
    by = {r.repo: r for r in rep.repos}
    assert by["billing"].state == by["ledger"].state == "skipped"
    w = by["web"]
    assert (w.state, w.before, w.after) == ("indexed", before, after)
    # added: the new memory; deleted: the forgotten one; re-checked: charge (its code changed)
    assert (w.added, w.deleted, w.rechecked, w.memories) == (1, 1, 1, 2)
    rows = {r["id"]: r for r in _rows(org) if r["repo"] == "web"}
    assert set(rows) == {ids["charge"], new_id}
    assert rows[ids["charge"]]["status"] == "stale" and after[:12] in str(rows[ids["charge"]]["reason"])
    assert rows[new_id]["status"] == "stale"  # anchored to the whole file, recorded before the change
    keys = collections.Counter(r["key"] for r in _rows(org))
    assert len(keys) == 6 and set(keys.values()) == {1}
    hit = search(org, "charge doubles", repos=["web"], embeddings=NO_VECTORS)[0]
    assert (hit.id, hit.status, hit.commit) == (ids["charge"], "stale", after)
    assert not search(org, "Retry-After milliseconds", repos=["web"], embeddings=NO_VECTORS)


def test_a_memory_file_that_cannot_be_read_is_reported_and_left_out(tmp_path: Path, run_cli) -> None:
    settings = OrgSettings(uri=str(tmp_path / "idx"))
    repo, ids = _service(tmp_path, "svc", run_cli)
    commit(repo, "broken", {".gitmem/memories/01BROKEN000000000000000000.md": "---\nnot: [valid\n"}, no_verify=True)
    rep = org_index.index(settings, [org_repos.OrgRepo("svc", str(repo))], embeddings=NO_VECTORS)
    r = rep.repos[0]
    assert (r.state, r.added, r.invalid, r.memories) == ("indexed", 2, 1, 2)
    assert "01BROKEN" in r.errors[0]


def test_vectors_from_the_default_embedder_and_a_mismatch_refused(tmp_path: Path, run_cli) -> None:
    settings = OrgSettings(uri=str(tmp_path / "idx"))
    repo, ids = _service(tmp_path, "svc", run_cli)
    org_index.index(settings, [org_repos.OrgRepo("svc", str(repo))])  # wordllama
    t = org_store.connect(settings).open_table(org_index.MEMORIES_TABLE)
    assert "vector" in t.schema.names and t.schema.metadata[org_index.EMBEDDER_META].startswith(b"wordllama")
    # meaning, not words: no term of the query is in the memory
    hits = search(settings, "how long to wait before trying again", repos=["svc"])
    assert hits and hits[0].id == ids["retry"]
    with pytest.raises(OrgStoreError, match="embedder"):
        org_index.index(settings, [org_repos.OrgRepo("svc", str(repo))], embeddings=NO_VECTORS)


# ------------------------------------------------------------------------------------------ the store


def test_a_store_that_ignores_conditional_writes_is_refused(s3_ignoring_conditions, tmp_path: Path, run_cli) -> None:
    s3 = s3_ignoring_conditions
    settings = OrgSettings(uri=s3.uri, endpoint=s3.endpoint, region=s3.region)
    with pytest.raises(OrgStoreError) as e:
        org_store.probe_conditional_writes(settings)
    assert "ignores conditional writes (If-None-Match): LanceDB would lose rows" in e.value.message
    assert "AWS S3, Ceph RGW" in e.value.message
    repo, _ = _service(tmp_path, "svc", run_cli)
    with pytest.raises(OrgStoreError, match="ignores conditional writes"):
        org_index.index(settings, [org_repos.OrgRepo("svc", str(repo))], embeddings=NO_VECTORS)
    assert not org_store.org_probe_file().exists() or s3.uri not in org_store.org_probe_file().read_text()
    # nothing was written: no table, and the probe object is gone
    listed = [o["path"] for batch in __import__("obstore").list(s3.object_store()) for o in batch]
    assert listed == []


def test_the_probe_passes_on_the_real_store_and_is_remembered_for_a_day(s3_org) -> None:
    settings = OrgSettings(uri=s3_org.uri, endpoint=s3_org.endpoint, region=s3_org.region)
    org_store.probe_conditional_writes(settings, use_cache=False)
    seen = json.loads(org_store.org_probe_file().read_text())
    assert any(k.startswith(s3_org.uri) for k in seen)
    listed = [o["path"] for batch in __import__("obstore").list(s3_org.object_store()) for o in batch]
    assert listed == []  # the probe object was deleted


def test_reading_needs_only_the_read_only_key(s3_org, tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = OrgSettings(uri=s3_org.uri, endpoint=s3_org.endpoint, region=s3_org.region)
    repo, ids = _service(tmp_path, "svc", run_cli)
    org_index.index(settings, [org_repos.OrgRepo("svc", str(repo))], embeddings=NO_VECTORS)
    for name, value in s3_org.env(read_only=True).items():
        monkeypatch.setenv(name, value)
    hits = search(settings, "Retry-After seconds", embeddings=NO_VECTORS)
    assert hits[0].id == ids["retry"]
    assert [s.repo for s in org_index.states(settings)] == ["svc"]
    # writing is refused with the read-only key (the probe's first write), in one line
    with pytest.raises(OrgStoreError, match=r"the credentials cannot write to s3://.*\(AccessDenied\)"):
        org_store.probe_conditional_writes(settings, use_cache=False)


def test_storage_options_from_config_and_environment() -> None:
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ACCESS_KEY_ID": "ak", "AWS_SECRET_ACCESS_KEY": "sk"}
    s3 = OrgSettings(uri="s3://b/p", region="eu-west-1")
    timeouts = {"connect_timeout": "5s", "client_max_retries": "3", "client_retry_timeout": "20"}
    assert org_store.storage_options(s3, env) == {"region": "eu-west-1", "endpoint": "http://127.0.0.1:9000",
                                                  "allow_http": "true", "aws_access_key_id": "ak",
                                                  "aws_secret_access_key": "sk", **timeouts}
    https = OrgSettings(uri="s3://b/p", endpoint="https://s3.example.com")
    assert org_store.storage_options(https, env)["endpoint"] == "https://s3.example.com"
    assert "allow_http" not in org_store.storage_options(https, env)
    assert org_store.storage_options(OrgSettings(uri="s3://b/p"), {}) == {"region": "us-east-1", **timeouts}
    assert org_store.storage_options(OrgSettings(uri="/srv/org"), env) == {}
    assert org_store.db_uri(OrgSettings(uri="file:///srv/my%20org")) == "/srv/my org"
    assert org_store.db_uri(OrgSettings(uri="org"), Path("/repo")) == "/repo/org"
    with pytest.raises(OrgStoreError, match="only s3://"):
        org_store.db_uri(OrgSettings(uri="gs://b/p"))
    with pytest.raises(OrgStoreError, match="no organisation index"):
        org_store.db_uri(OrgSettings())


# ------------------------------------------------------------------------------------------ concurrency


def _hub(tmp_path: Path, org: OrgSettings, names: list[str]) -> Path:
    """A repository whose config names the organisation index and the repositories (relative paths)."""
    hub = make_repo(tmp_path / "hub", {"README": "hub\n"})
    (hub / ".gitmem").mkdir()
    uri = org.uri
    lines = ["[embeddings]", 'provider = "none"', "[org]", f"uri = {json.dumps(uri)}"]
    if org.endpoint:
        lines.append(f"endpoint = {json.dumps(org.endpoint)}")
    lines.append("[org.repos]")
    lines += [f'{n} = "../{n}"' for n in names]
    (hub / ".gitmem" / "config.toml").write_text("\n".join(lines) + "\n")
    return hub


def test_two_indexers_at_once_lose_and_duplicate_nothing(org: OrgSettings, tmp_path: Path, run_cli) -> None:
    names = ["a", "b", "c", "d"]
    made = {n: _service(tmp_path, n, run_cli) for n in names}
    for n in names:  # more rows per repository: longer writes, more overlap
        for i in range(6):
            _remember(made[n][0], run_cli, f"{n}: note {i} about the charge path", "--anchor", "src/app.py::charge")
        commit(made[n][0], "more", no_verify=True)
    hub = _hub(tmp_path, org, names)
    env = {**os.environ, "GITMEM_NO_DAEMON": "1"}
    # the first indexes a, b, c; the second c, d, b: b and c by both at the same time
    procs = [subprocess.Popen([sys.executable, "-m", "gitmem", "org", "index", *order, "--json"], cwd=hub, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for order in (["a", "b", "c"], ["c", "d", "b"])]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert json.loads(out)["failed"] == 0
    keys = collections.Counter(r["key"] for r in _rows(org))
    assert len(keys) == 4 * 8 and set(keys.values()) == {1}, [k for k, v in keys.items() if v > 1]
    states = {s.repo: s for s in org_index.states(org)}
    assert {n: states[n].commit for n in names} == {n: git(made[n][0], "rev-parse", "HEAD").strip() for n in names}
    assert all(states[n].memories == 8 for n in names)
    hits = search(org, "note about the charge path", embeddings=NO_VECTORS, limit=40)
    # every memory naming the charge, once: 6 notes and the charge memory of each repository
    assert len(hits) == 28 and len({(h.repo, h.id) for h in hits}) == 28


# ------------------------------------------------------------------------------------------ the command line


def test_cli_index_status_and_recall(org: OrgSettings, tmp_path: Path, run_cli) -> None:
    names = ["billing", "ledger"]
    made = {n: _service(tmp_path, n, run_cli) for n in names}
    hub = _hub(tmp_path, org, names)
    code, out, err = run_cli(hub, "org", "index")
    assert code == 0, err
    assert out.splitlines()[0].startswith("billing: nothing -> ") and "+2 ~0 -0" in out.splitlines()[0]
    assert "2 repositories: 2 indexed, 0 up to date, 0 failed; rows +4 ~0 -0" in out
    assert "billing: indexing" in err and "ledger: indexing" in err

    commit(made["ledger"][0], "charge triples", {"src/app.py": APP.replace("amount * 2", "amount * 3")},
           no_verify=True)
    code, out, _ = run_cli(hub, "org", "status")
    assert code == 0 and "billing: up to date" in out and "ledger: behind" in out and "4 memories" in out
    code, out, _ = run_cli(hub, "org", "status", "--json")
    doc = json.loads(out)
    assert [r["state"] for r in doc["repos"]] == ["up to date", "behind"] and doc["memories"] == 4

    code, out, _ = run_cli(hub, "org", "index", "ledger", "--json")
    rep = json.loads(out)
    assert code == 0 and rep["repos"][0]["rechecked"] == 2 and rep["repos"][0]["state"] == "indexed"

    code, out, _ = run_cli(hub, "recall", "--org", "charge doubles the amount")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith(("ledger:", "billing:")) and "[discovery]" in first
    assert "⚠ stale" in out and "body changed" in out
    code, out, _ = run_cli(hub, "recall", "--org", "charge doubles", "--repo", "billing", "--json")
    hits = json.loads(out)
    assert code == 0 and {h["repo"] for h in hits} == {"billing"} and hits[0]["schema_version"] == 1
    assert hits[0]["status"] == "fresh" and hits[0]["anchors"] == ["src/app.py::charge"] and hits[0]["trust"]

    code, out, err = run_cli(hub, "org", "index", "billing", str(tmp_path / "nowhere"))
    assert code == 1 and "billing: up to date" in out and "nowhere: failed:" in out and "hint: nowhere:" in err


def test_cli_with_no_org_configured_says_how_in_one_line(tmp_path: Path, run_cli) -> None:
    repo, _ = _service(tmp_path, "svc", run_cli)
    for args in (["recall", "--org", "x"], ["org", "index"], ["org", "status"]):
        code, out, err = run_cli(repo, *args)
        assert code == 2 and out == ""
        assert err.strip().splitlines() == [
            'error: no organisation index is configured: set [org] uri = "s3://BUCKET/PREFIX" (or a folder) in '
            ".gitmem/config.toml or ~/.config/gitmem/config.toml (docs/org.md)"]
    code, _, err = run_cli(repo, "recall", "x", "--repo", "svc")
    assert code == 2 and "--repo needs --org" in err


def test_cli_store_error_exits_2_in_one_line(s3_ignoring_conditions, tmp_path: Path, run_cli) -> None:
    s3 = s3_ignoring_conditions
    repo, _ = _service(tmp_path, "svc", run_cli)
    with (repo / ".gitmem" / "config.toml").open("a") as f:
        f.write(f'[org]\nuri = "{s3.uri}"\nendpoint = "{s3.endpoint}"\n')
    code, out, err = run_cli(repo, "org", "index")
    assert code == 2 and out == ""
    assert err.startswith("error: the store at s3://") and "ignores conditional writes" in err


def test_an_indexer_that_loses_the_race_starts_over_from_the_winners_commit(tmp_path: Path, run_cli,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The repos row moves by compare-and-swap: when another indexer moved it meanwhile, this one's rows are
    checked again against the winner's commit; the rows end right, once each."""
    settings = OrgSettings(uri=str(tmp_path / "idx"))
    repo, ids = _service(tmp_path, "svc", run_cli)
    target = [org_repos.OrgRepo("svc", str(repo))]
    org_index.index(settings, target, embeddings=NO_VECTORS)
    code, _, _ = run_cli(repo, "forget", ids["retry"])
    assert code == 0
    extra = _remember(repo, run_cli, "svc: a third memory about charge", "--anchor", "src/app.py::charge")
    commit(repo, "push", {"src/app.py": APP.replace("amount * 2", "amount * 3")}, no_verify=True)
    head = git(repo, "rev-parse", "HEAD").strip()

    real_apply = org_index._apply
    raced: list[org_index.RepoReport] = []
    started: list[bool] = []

    def apply_then_lose_the_race(ix, r, name, before, new):  # type: ignore[no-untyped-def]
        got = real_apply(ix, r, name, before, new)
        if not started:  # another indexer finishes the same push first
            started.append(True)
            raced.append(org_index.index(settings, target, embeddings=NO_VECTORS).repos[0])
        return got

    monkeypatch.setattr(org_index, "_apply", apply_then_lose_the_race)
    rep = org_index.index(settings, target, embeddings=NO_VECTORS).repos[0]
    assert raced and raced[0].state == "indexed" and raced[0].after == head, raced[0].error
    assert (rep.state, rep.after, rep.memories) == ("indexed", head, 2)
    rows = [r for r in _rows(settings) if r["repo"] == "svc"]
    assert sorted(str(r["id"]) for r in rows) == sorted([ids["charge"], extra])
    assert {r["status"] for r in rows} == {"stale"}
    assert [s.commit for s in org_index.states(settings)] == [head]


def test_rows_written_after_the_full_text_index_are_found_and_folded_in(tmp_path: Path, run_cli,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    settings = OrgSettings(uri=str(tmp_path / "idx"))
    repo, ids = _service(tmp_path, "svc", run_cli)
    target = [org_repos.OrgRepo("svc", str(repo))]
    org_index.index(settings, target, embeddings=NO_VECTORS)
    new = _remember(repo, run_cli, "svc: the ledger rounds half to even", "--anchor", "src/app.py")
    commit(repo, "one more", no_verify=True)
    org_index.index(settings, target, embeddings=NO_VECTORS)
    t = org_store.connect(settings).open_table(org_index.MEMORIES_TABLE)
    assert t.index_stats("title_idx").num_unindexed_rows == 1  # searched flat until folded in
    assert [h.id for h in search(settings, "rounds half even", embeddings=NO_VECTORS)] == [new]
    monkeypatch.setattr(org_index, "OPTIMIZE_UNINDEXED", 0)
    commit(repo, "another", {"src/other.py": "x = 1\n"}, no_verify=True)
    _remember(repo, run_cli, "svc: other is one", "--anchor", "src/other.py")
    commit(repo, "and a memory", no_verify=True)
    org_index.index(settings, target, embeddings=NO_VECTORS)
    t = org_store.connect(settings).open_table(org_index.MEMORIES_TABLE)
    assert t.index_stats("title_idx").num_unindexed_rows == 0
    assert [h.id for h in search(settings, "rounds half even", embeddings=NO_VECTORS)] == [new]
    assert len(search(settings, "svc", embeddings=NO_VECTORS)) == 4


def test_recall_org_runs_in_the_callers_process() -> None:
    """The store's endpoint and keys are this shell's AWS_* variables: never the warm process's."""
    from gitmem.daemon.front import forwardable

    assert forwardable(["recall", "x"]) == "recall"
    assert forwardable(["recall", "--org", "x"]) is None


def test_a_duplicated_row_is_repaired_at_the_next_index(tmp_path: Path, run_cli) -> None:
    settings = OrgSettings(uri=str(tmp_path / "idx"))
    repo, ids = _service(tmp_path, "svc", run_cli)
    target = [org_repos.OrgRepo("svc", str(repo))]
    org_index.index(settings, target, embeddings=NO_VECTORS)
    t = org_store.connect(settings).open_table(org_index.MEMORIES_TABLE)
    key = f"svc\x1f{ids['retry']}"
    t.add(t.search().where(f"key = '{key}'").limit(None).to_arrow())  # what a store without conditions would leave
    assert collections.Counter(r["key"] for r in _rows(settings))[key] == 2
    commit(repo, "a push", {"README": "x\n"}, no_verify=True)
    org_index.index(settings, target, embeddings=NO_VECTORS)
    keys = collections.Counter(r["key"] for r in _rows(settings))
    assert keys == {key: 1, f"svc\x1f{ids['charge']}": 1}


def test_the_vector_index_is_built_from_its_threshold_on(tmp_path: Path, run_cli,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(org_index, "VECTOR_INDEX_MIN_ROWS", 2)
    monkeypatch.setattr(org_index, "VECTOR_PARTITIONS", 2)
    settings = OrgSettings(uri=str(tmp_path / "idx"))
    repo, ids = _service(tmp_path, "svc", run_cli)
    org_index.index(settings, [org_repos.OrgRepo("svc", str(repo))])
    t = org_store.connect(settings).open_table(org_index.MEMORIES_TABLE)
    assert "vector_idx" in {i.name for i in t.list_indices()}
    assert search(settings, "how long to wait before trying again")[0].id == ids["retry"]


def test_a_cross_repository_anchor_goes_stale_in_the_index_when_the_other_repository_changes(
        tmp_path: Path, run_cli) -> None:
    """billing's memory anchored to ledger's code: fresh when indexed; ledger's body change committed and
    re-indexed → billing's row is stale with ledger's commit as the reason, though billing's own ref did not move."""
    settings = OrgSettings(uri=str(tmp_path / "org-index"))
    ledger, _ = _service(tmp_path, "ledger", run_cli)
    billing, _ = _service(tmp_path, "billing", run_cli)
    cfg = billing / ".gitmem" / "config.toml"
    cfg.write_text(cfg.read_text() + '\n[org.repos]\nledger = "../ledger"\n')
    mid = _remember(billing, run_cli, "billing relies on ledger's retry_after being seconds",
                    "--anchor", "ledger:src/app.py::retry_after")
    commit(billing, "cross-repository memory", no_verify=True)
    targets = [org_repos.OrgRepo("ledger", str(ledger)), org_repos.OrgRepo("billing", str(billing))]
    first = {r.repo: r for r in org_index.index(settings, targets, embeddings=NO_VECTORS).repos}["billing"]
    assert (first.added, first.foreign) == (3, 1) and "1 with cross-repository anchors checked" in org_index.repo_line(
        first)
    row = next(r for r in _rows(settings) if r["key"] == org_index.row_key("billing", mid))
    assert row["status"] == "fresh", row
    sha = commit(ledger, "milliseconds", {"src/app.py": APP.replace('["Retry-After"])', '["Retry-After"]) * 1000')},
                 no_verify=True)
    report = org_index.index(settings, targets, embeddings=NO_VECTORS)
    row = next(r for r in _rows(settings) if r["key"] == org_index.row_key("billing", mid))
    assert row["status"] == "stale" and f"ledger@{sha[:7]}" in str(row["reason"]), row
    assert {r.repo: r.state for r in report.repos}["billing"] == "indexed"
    # nothing moved since: both up to date; billing's cross-repository row re-checked, still stale: not rewritten
    versions = org_store.connect(settings).open_table(org_index.MEMORIES_TABLE).version
    report = org_index.index(settings, targets, embeddings=NO_VECTORS)
    rows = [r for r in _rows(settings) if r["repo"] == "billing"]
    assert len(rows) == 3 and [r["status"] for r in rows if r["id"] == mid] == ["stale"]
    billing_report = {r.repo: r for r in report.repos}["billing"]
    assert (billing_report.state, billing_report.updated, billing_report.rechecked, billing_report.foreign) == (
        "skipped", 0, 1, 1)
    assert org_index.repo_line(billing_report).startswith("billing: up to date at ")
    assert "1 with cross-repository anchors checked" in org_index.repo_line(billing_report)
    assert org_store.connect(settings).open_table(org_index.MEMORIES_TABLE).version == versions


# ------------------------------------------------------------------------------------------ what a new user met


def test_a_retired_or_superseded_memory_leaves_the_index(org: OrgSettings, tmp_path: Path, run_cli) -> None:
    """``gitmem supersede`` and ``gitmem retire``, committed, then indexed: their rows are deleted (the repository's
    own recall hides them, so does the organisation's) and the counts leave them out."""
    repo, ids = _service(tmp_path, "svc", run_cli)
    targets = [org_repos.OrgRepo("svc", str(repo))]
    org_index.index(org, targets, embeddings=NO_VECTORS)
    assert search(org, "Retry-After seconds", embeddings=NO_VECTORS)[0].id == ids["retry"]
    code, out, err = run_cli(repo, "supersede", ids["retry"], "svc: Retry-After may be an HTTP date, or seconds",
                             "--anchor", "src/app.py::retry_after", "--json")
    assert code == 0, err
    new_id = str(json.loads(out)["id"])
    code, _, err = run_cli(repo, "retire", ids["charge"], "--reason", "the fee moved to the ledger")
    assert code == 0, err
    commit(repo, "supersede and retire", no_verify=True)

    rep = org_index.index(org, targets, embeddings=NO_VECTORS).repos[0]
    assert (rep.state, rep.added, rep.deleted, rep.memories) == ("indexed", 1, 2, 1)
    assert {r["id"] for r in _rows(org)} == {new_id}
    assert [s.memories for s in org_index.states(org)] == [1]
    hits = search(org, "Retry-After seconds charge doubles the amount", embeddings=NO_VECTORS, limit=10)
    assert [h.id for h in hits] == [new_id]
    # indexed again after another commit: the retired files are read, and stay out
    commit(repo, "unrelated", {"README": "svc\n"}, no_verify=True)
    rep = org_index.index(org, targets, embeddings=NO_VECTORS).repos[0]
    assert (rep.state, rep.added, rep.updated, rep.deleted, rep.memories) == ("indexed", 0, 0, 0, 1)
    assert {r["id"] for r in _rows(org)} == {new_id}


def test_indexing_with_the_read_only_key_stops_in_one_line_with_exit_2(
        s3_org, tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe passed with the write key (remembered for a day), then ``org index`` runs with the read-only key:
    the first write is refused and the whole run stops with the cause, once, exit 2."""
    repo, _ = _service(tmp_path, "svc", run_cli)
    with (repo / ".gitmem" / "config.toml").open("a") as f:
        f.write(f'[org]\nuri = "{s3_org.uri}"\nendpoint = "{s3_org.endpoint}"\n')
    code, out, err = run_cli(repo, "org", "index")
    assert code == 0, err
    _remember(repo, run_cli, "svc: refunds are never charged twice", "--anchor", "src/app.py::charge")
    commit(repo, "a memory", no_verify=True)
    for name, value in s3_org.env(read_only=True).items():
        monkeypatch.setenv(name, value)
    code, out, err = run_cli(repo, "org", "index")
    assert code == 2 and out == "", (out, err)
    lines = [line for line in err.splitlines() if not line.startswith("svc: indexing")]
    assert lines == [f"error: the credentials cannot write to {s3_org.uri} ({s3_org.endpoint}) (AccessDenied)",
                     "hint: `gitmem org index` needs the write key (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY of a key "
                     "that may write the bucket); searching needs only the read-only one"], err
    assert "lance" not in err.lower()
    code, out, err = run_cli(repo, "recall", "--org", "Retry-After")  # reading still works with it
    assert code == 0 and "Retry-After" in out, err


def test_missing_or_wrong_credentials_and_an_unreachable_store_say_the_cause(
        s3_org, tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Rust debug text: one line with the cause and one with what to do, exit 2, from index, status and recall."""
    repo, _ = _service(tmp_path, "svc", run_cli)
    cfg = repo / ".gitmem" / "config.toml"
    base = cfg.read_text()
    cfg.write_text(base + f'[org]\nuri = "{s3_org.uri}"\nendpoint = "{s3_org.endpoint}"\n')
    code, _, err = run_cli(repo, "org", "index")
    assert code == 0, err

    def said(*args: str) -> tuple[str, str]:
        code, out, err = run_cli(repo, *args)
        lines = [line for line in err.splitlines() if not line.startswith("svc: indexing")]
        assert code == 2 and out == "" and len(lines) == 2, (args, code, out, err)
        assert lines[0].startswith("error: ") and lines[1].startswith("hint: "), err
        assert not any(w in err for w in ("RetryError", "LanceError", "Debug", ".rs:", "{")), err
        return lines[0], lines[1]

    commands = (("org", "index"), ("org", "status"), ("recall", "--org", "Retry-After"))
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    for args in commands:
        error, hint = said(*args)
        assert "(SignatureDoesNotMatch)" in error and "AWS_SECRET_ACCESS_KEY" in hint
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "NOBODYKNOWSME")
    for args in commands:
        error, hint = said(*args)
        assert "(InvalidAccessKeyId)" in error and "AWS_ACCESS_KEY_ID" in hint
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    for name in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.setenv(name, str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for args in commands:
        error, hint = said(*args)
        assert "no S3 credentials were found" in error and "AWS_ACCESS_KEY_ID" in hint
    for name, value in s3_org.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens on it here
    # another bucket's uri: Lance keeps the object store of a uri it opened for the process (this one's, reached)
    cfg.write_text(base + f'[org]\nuri = "s3://elsewhere-{s3_org.bucket}/org"\nendpoint = "{closed}"\n')
    for args in commands:
        error, hint = said(*args)
        assert f"({closed}): the endpoint cannot be reached" in error and "[org] endpoint" in hint


def test_the_error_translator_names_each_cause_and_leaves_the_unknown_alone() -> None:
    s3 = OrgSettings(uri="s3://b/p", endpoint="http://127.0.0.1:9000")
    lance_403 = RuntimeError("lance error: LanceError(IO): single PUT of p/t.lance/data/x.lance failed: 403 Forbidden: "
                             "<Code>AccessDenied</Code>, /root/.cargo/lance-io/src/object_writer.rs:627:9")
    assert org_store.explain(lance_403, s3, writing=True) == (
        "the credentials cannot write to s3://b/p (http://127.0.0.1:9000) (AccessDenied)",
        "`gitmem org index` needs the write key (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY of a key that may write "
        "the bucket); searching needs only the read-only one")
    assert "may not read" in org_store.explain(lance_403, s3)[0]  # type: ignore[index]
    cut = ValueError('Failed to connect to namespace: IO { source: Generic { store: "N/A", source: IO { source: '
                     '"Failed to get AWS credentials: CredentialsNotLoaded(CredentialsNotLoaded { source: Some(')
    assert org_store.explain(cut, s3)[0].endswith("no S3 credentials were found")  # type: ignore[index]
    try:
        try:
            raise OSError("Code>NoSuchBucket</Code")
        except OSError as inner:
            raise RuntimeError("outer text") from inner
    except RuntimeError as chained:
        assert "(NoSuchBucket)" in org_store.explain(chained, s3)[0]  # type: ignore[index]
    other = RuntimeError('inner: Status { status: 400, body: Some("<Error><Code>InvalidBucketName</Code></Error>") }')
    assert org_store.explain(other, s3)[0].endswith("the store refused the request (InvalidBucketName)")  # type: ignore[index]
    bare = ValueError("ListRequest { source: RetryError(RetryErrorImpl { inner: Status { status: 404, body: None }")
    assert "answered HTTP 404 with no S3 error" in org_store.explain(bare, s3)[0]  # type: ignore[index]
    odd = RuntimeError("Schema error: field vector has dimension 3\nsecond line")
    assert org_store.explain(odd, s3) is None
    err = org_store.store_error(odd, s3, "search the organisation index")
    assert err.message == ("cannot search the organisation index at s3://b/p (http://127.0.0.1:9000): Schema error: "
                           "field vector has dimension 3")


def test_cli_index_says_each_line_once_and_when_this_repository_is_not_listed(tmp_path: Path, run_cli) -> None:
    """Progress (what is being done) on stderr, the results on stdout, each once; "1 repository"; a repository with
    memories but not in its own [org.repos] is told so (and still not indexed: the list is the whole list)."""
    ledger, _ = _service(tmp_path, "ledger", run_cli)
    svc, _ = _service(tmp_path, "svc", run_cli)
    cfg = svc / ".gitmem" / "config.toml"
    cfg.write_text(cfg.read_text() + f'[org]\nuri = "{tmp_path / "idx"}"\n[org.repos]\nledger = "../ledger"\n')
    code, out, err = run_cli(svc, "org", "index")
    assert code == 0, err
    assert out.splitlines()[0].startswith("ledger: nothing -> ") and "+2 ~0 -0" in out
    assert out.splitlines()[-1].startswith("1 repository: 1 indexed, 0 up to date, 0 failed; rows +2 ~0 -0")
    assert "nothing ->" not in err and "1 repository" not in err
    assert err.splitlines() == [
        f"ledger: indexing {ledger}",
        'hint: this repository (svc) has memories but is not in [org.repos], so they were not indexed: add '
        'svc = "." under [org.repos] (docs/org.md), or run gitmem org index .']
    assert {r["repo"] for r in _rows(OrgSettings(uri=str(tmp_path / "idx")))} == {"ledger"}
    cfg.write_text(cfg.read_text() + 'svc = "."\n')
    code, out, err = run_cli(svc, "org", "index")
    assert code == 0 and "hint" not in err and "svc: nothing -> " in out and "ledger: up to date" in out, err
    assert "2 repositories: 1 indexed, 1 up to date" in out


def test_index_full_drops_a_retired_memorys_row_an_older_version_wrote(tmp_path: Path, run_cli) -> None:
    """An index built before retired memories were left out still holds their rows at the commit indexed (nothing
    to re-read incrementally); ``org index --full`` re-reads every file and drops them."""
    repo, ids = _service(tmp_path, "svc", run_cli)
    cfg = repo / ".gitmem" / "config.toml"
    cfg.write_text(cfg.read_text() + f'[org]\nuri = "{tmp_path / "idx"}"\n')
    settings = OrgSettings(uri=str(tmp_path / "idx"))
    code, _, err = run_cli(repo, "org", "index")
    assert code == 0, err
    first = git(repo, "rev-parse", "HEAD").strip()
    code, _, err = run_cli(repo, "retire", ids["charge"], "--reason", "the fee moved to the ledger")
    assert code == 0, err
    now = commit(repo, "retire", no_verify=True)
    # what an older gitmem wrote at this commit: the retired memory's row, its blob the retired file's
    ix = org_index._Index(settings, None)
    row = next(r for r in ix.rows_of("svc") if r["id"] == ids["charge"])
    blob = git(repo, "rev-parse", f"{now}:{row['path']}").strip()
    ix.memories.update(where=f"key = {org_index.sql_str(row['key'])}", values={"blob": blob})
    assert ix.move_repo(org_index.RepoState("svc", str(repo), "", now, "2026-12-04T00:00:00Z", 2), first)
    code, out, err = run_cli(repo, "org", "index")
    assert code == 0 and "svc: up to date" in out and ids["charge"] in {r["id"] for r in _rows(settings)}, err
    code, out, err = run_cli(repo, "org", "index", "--full")
    assert code == 0 and "-1" in out and "1 memory)" in out, (out, err)
    assert {r["id"] for r in _rows(settings)} == {ids["retry"]}
    assert [s.memories for s in org_index.states(settings)] == [1]
