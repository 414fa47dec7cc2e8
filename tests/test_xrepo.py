"""Cross-repository anchors (issue 21): ``--anchor REPO:PATH::SYMBOL`` to code of another repository of
``[org.repos]``, checked by ``gitmem stale`` (when reachable locally) and ``gitmem org check``, and left alone by
everything that resolves anchors against this repository (its commits, ``stale``'s own checks, tidy, reanchor)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gitmem import memfile
from gitmem.model import Anchor, Memory
from testing.repos import commit, git, make_repo

LEDGER_API = ('"""The ledger service\'s HTTP helpers."""\n\n\n'
              "def retry_after(resp):\n"
              "    \"\"\"Seconds to wait before retrying.\"\"\"\n"
              "    return int(resp.headers['Retry-After'])\n\n\n"
              "def backoff(n):\n"
              "    return min(60, 2 ** n)\n")
# billing has a file at the same path, with a function of the same name: a foreign anchor must never be taken
# for it (nor be called deleted because ledger's path is not in billing)
BILLING_API = "def retry_after(resp):\n    return 5\n"


def _setup(tmp_path: Path, run_cli, *, hooks: bool = True) -> tuple[Path, Path, str]:
    ledger = make_repo(tmp_path / "ledger")
    commit(ledger, "api", {"src/api.py": LEDGER_API})
    billing = make_repo(tmp_path / "billing")
    commit(billing, "client", {"client.py": "import requests\n\n\ndef charge():\n    return 1\n"})
    code, _, err = run_cli(billing, "init", *([] if hooks else ["--no-hooks"]))
    assert code == 0, err
    cfg = billing / ".gitmem" / "config.toml"
    cfg.write_text(cfg.read_text() + '\n[org.repos]\nledger = "../ledger"\n')
    commit(billing, "gitmem")
    code, out, err = run_cli(billing, "remember", "our client relies on ledger's retry_after being seconds",
                             "--anchor", "ledger:src/api.py::retry_after", "--json")
    assert code == 0, err
    return ledger, billing, json.loads(out)["id"]


def _stale(run_cli, repo: Path, *args: str) -> dict[str, dict[str, object]]:
    code, out, err = run_cli(repo, "stale", "--json", *args)
    assert code == 0, err
    return {a["anchor"]: a for m in json.loads(out) for a in m["anchors"]}


def test_anchor_made_at_the_other_repository_and_written_with_its_repo(tmp_path: Path, run_cli) -> None:
    ledger, billing, mid = _setup(tmp_path, run_cli, hooks=False)
    head = git(ledger, "rev-parse", "HEAD").strip()
    text = (billing / ".gitmem" / "memories" / f"{mid}.md").read_text()
    assert "- anchor: ledger:src/api.py::retry_after\n  repo: ledger\n" in text and f"commit: {head}" in text
    m = memfile.loads(text)
    (a,) = m.anchors
    assert (a.repo, a.path, a.symbol, a.kind, a.span) == ("ledger", "src/api.py", "retry_after", "function", (4, 6))
    assert memfile.dumps(m) == text  # byte-stable
    statuses = _stale(run_cli, billing, "--all")
    assert statuses["ledger:src/api.py::retry_after"]["status"] == "fresh"
    assert statuses["ledger:src/api.py::retry_after"]["repo"] == "ledger"
    code, out, _ = run_cli(billing, "org", "check", "--json")
    assert code == 0 and json.loads(out)["ok"] is True
    assert json.loads(out)["repos"]["ledger"] == {"commit": head, "error": None}


def test_unknown_repository_and_unknown_symbol_are_refused_with_a_hint(tmp_path: Path, run_cli) -> None:
    _, billing, _ = _setup(tmp_path, run_cli, hooks=False)
    code, _, err = run_cli(billing, "remember", "x", "--anchor", "payments:src/pay.py::charge")
    assert code == 1 and "no repository payments in [org.repos]" in err and '[org.repos] payments = "' in err
    code, _, err = run_cli(billing, "remember", "x", "--anchor", "ledger:src/api.py::retry_afterr")
    assert code == 1 and "no symbol retry_afterr" in err and "retry_after" in err
    code, _, err = run_cli(billing, "remember", "x", "--anchor", "ledger:src/nope.py")
    assert code == 1 and "no file src/nope.py" in err


def test_a_body_change_committed_in_the_other_repository_makes_it_stale(tmp_path: Path, run_cli) -> None:
    ledger, billing, mid = _setup(tmp_path, run_cli)
    sha = commit(ledger, "milliseconds now", {"src/api.py": LEDGER_API.replace(
        "int(resp.headers['Retry-After'])", "int(resp.headers['Retry-After']) * 1000")})
    st = _stale(run_cli, billing)["ledger:src/api.py::retry_after"]
    assert st["status"] == "stale" and st["commit"] == sha
    assert st["reason"] == f"ledger@{sha[:7]}: `retry_after` body changed"
    # recorded: the catalog (what the hooks read) has it stale without asking ledger again
    code, out, _ = run_cli(billing, "list", "--status", "stale", "--json")
    assert [m["id"] for m in json.loads(out)] == [mid]
    code, out, _ = run_cli(billing, "org", "check", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False and doc["not_fresh"] == 1
    (c,) = doc["anchors"]
    assert (c["status"], c["changed_in"], c["commit"]) == ("stale", sha, sha)
    code, out, _ = run_cli(billing, "org", "check")
    assert code == 1 and f"ledger@{sha[:7]}" in out and "1 cross-repository anchor: stale 1" in out


def test_a_rename_in_the_other_repository_is_moved(tmp_path: Path, run_cli) -> None:
    ledger, billing, _ = _setup(tmp_path, run_cli, hooks=False)
    git(ledger, "mv", "src/api.py", "src/http.py")
    sha = commit(ledger, "rename", {"src/http.py": LEDGER_API.replace("def retry_after", "def retry_after_s")})
    st = _stale(run_cli, billing)["ledger:src/api.py::retry_after"]
    assert st["status"] == "moved" and (st["path_now"], st["symbol_now"]) == ("src/http.py", "retry_after_s")
    assert st["reason"].startswith(f"ledger@{sha[:7]}: `retry_after` ")


def test_an_unreachable_repository_is_unchecked_never_fresh(tmp_path: Path, run_cli) -> None:
    ledger, billing, mid = _setup(tmp_path, run_cli, hooks=False)
    shutil.move(str(ledger), str(tmp_path / "elsewhere"))
    st = _stale(run_cli, billing)["ledger:src/api.py::retry_after"]
    assert st["status"] == "unchecked" and "ledger" in str(st["reason"]) and "last known: fresh" in str(st["reason"])
    code, out, _ = run_cli(billing, "org", "check", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["anchors"][0]["status"] == "unchecked" and doc["repos"]["ledger"]["commit"] is None
    # the last checked status stays in the catalog: the hooks are not told "unchecked" on every call
    code, out, _ = run_cli(billing, "list", "--json")
    assert [(m["id"], m["status"]) for m in json.loads(out)] == [(mid, "fresh")]


def test_foreign_anchors_are_left_alone_by_this_repositorys_commits_tidy_and_reanchor(tmp_path: Path,
                                                                                        run_cli) -> None:
    _, billing, mid = _setup(tmp_path, run_cli)
    path = billing / ".gitmem" / "memories" / f"{mid}.md"
    commit(billing, "share", {})
    before = path.read_bytes()
    # billing's own src/api.py, its own retry_after, then changed and deleted: none of it is ledger's code
    commit(billing, "own api", {"src/api.py": BILLING_API})
    commit(billing, "change it", {"src/api.py": BILLING_API.replace("5", "7")})
    (billing / "src" / "api.py").unlink()
    commit(billing, "drop it")
    assert path.read_bytes() == before
    assert _stale(run_cli, billing, "--all")["ledger:src/api.py::retry_after"]["status"] == "fresh"
    code, _, err = run_cli(billing, "tidy", "--apply")
    assert code == 0, err
    code, out, err = run_cli(billing, "reanchor", mid, "--json")
    assert code == 0, err
    after = memfile.loads(path.read_text())
    assert [(a.key, a.commit, a.fingerprint, a.repo) for a in after.anchors] == [
        (a.key, a.commit, a.fingerprint, a.repo) for a in memfile.loads(before.decode()).anchors]
    assert after.retired is None
    code, out, _ = run_cli(billing, "list", "--json")
    assert [(m["id"], m["status"]) for m in json.loads(out)] == [(mid, "fresh")]
    code, out, _ = run_cli(billing, "check", "--json")
    assert code == 0, out


def test_old_files_stay_byte_identical_and_a_local_path_with_a_colon_stays_local() -> None:
    text = ("---\nid: m1\ntype: decision\ntitle: t\nanchors:\n- anchor: notes:2024.md\n  commit: "
            + "a" * 40 + "\n  kind: file\nsource: user\nconfidence: 1.0\ncreated: '2026-12-04T10:00:00Z'\n"
            "updated: '2026-12-04T10:00:00Z'\nscope: team\n---\n")
    m = memfile.loads(text)
    assert m.anchors[0].repo is None and m.anchors[0].path == "notes:2024.md"
    assert memfile.dumps(m) == text
    mem = Memory(id="m2", type="decision", title="t",
                 anchors=[Anchor("src/a.py", "f", "b" * 40, "function", (1, 2), "ts1:x", repo="ledger")])
    again = memfile.loads(memfile.dumps(mem))
    assert again.anchors[0] == mem.anchors[0] and again.anchors[0].key == "ledger:src/a.py::f"
    assert memfile.memory_from_dict(memfile.memory_to_dict(mem)).anchors[0].repo == "ledger"
    with pytest.raises(memfile.MemoryFileError, match="repository name"):
        memfile.loads(text.replace("  kind: file\n", "  kind: file\n  repo: ../x\n"))


def test_a_bare_repository_serves(tmp_path: Path, run_cli) -> None:
    ledger, billing, _ = _setup(tmp_path, run_cli, hooks=False)
    bare = tmp_path / "ledger.git"
    git(tmp_path, "clone", "-q", "--bare", str(ledger), str(bare))
    cfg = billing / ".gitmem" / "config.toml"
    cfg.write_text(cfg.read_text().replace('ledger = "../ledger"', f'ledger = "{bare}"'))
    assert _stale(run_cli, billing, "--all")["ledger:src/api.py::retry_after"]["status"] == "fresh"
    sha = commit(ledger, "ms", {"src/api.py": LEDGER_API.replace("int(resp", "1000 * int(resp")})
    git(ledger, "push", "-q", str(bare), "main")
    st = _stale(run_cli, billing)["ledger:src/api.py::retry_after"]
    assert st["status"] == "stale" and st["reason"] == f"ledger@{sha[:7]}: `retry_after` body changed"


def test_a_url_is_read_from_its_mirror_stale_never_fetches(tmp_path: Path, run_cli) -> None:
    from gitmem.org.repos import mirror_dir

    ledger, billing, _ = _setup(tmp_path, run_cli, hooks=False)
    url = ledger.as_uri()
    cfg = billing / ".gitmem" / "config.toml"
    cfg.write_text(cfg.read_text().replace('ledger = "../ledger"', f'ledger = "{url}"'))
    # no mirror yet: stale does not clone one
    st = _stale(run_cli, billing)["ledger:src/api.py::retry_after"]
    assert st["status"] == "unchecked" and "--fetch" in str(st["reason"])
    assert not mirror_dir(url).exists()
    code, out, err = run_cli(billing, "org", "check", "--fetch", "--json")
    assert code == 0, err
    assert (mirror_dir(url) / "HEAD").is_file()
    sha = commit(ledger, "ms", {"src/api.py": LEDGER_API.replace("int(resp", "1000 * int(resp")})
    # the mirror as last fetched: stale reads it, without the network
    assert _stale(run_cli, billing, "--all")["ledger:src/api.py::retry_after"]["status"] == "fresh"
    code, out, _ = run_cli(billing, "org", "check", "--fetch", "--json")
    assert code == 1 and json.loads(out)["anchors"][0]["changed_in"] == sha
    assert _stale(run_cli, billing)["ledger:src/api.py::retry_after"]["status"] == "stale"


def test_supersede_show_export_and_import_keep_the_foreign_anchor(tmp_path: Path, run_cli) -> None:
    ledger, billing, mid = _setup(tmp_path, run_cli, hooks=False)
    sha = commit(ledger, "ms", {"src/api.py": LEDGER_API.replace("int(resp", "1000 * int(resp")})
    code, out, err = run_cli(billing, "show", mid)
    assert code == 0 and "ledger:src/api.py::retry_after" in out, err
    code, out, err = run_cli(billing, "supersede", mid, "our client now converts ledger's milliseconds", "--json")
    assert code == 0, err
    new = json.loads(out)
    assert new["anchors"] == ["ledger:src/api.py::retry_after"]
    m = memfile.loads((billing / ".gitmem" / "memories" / f"{new['id']}.md").read_text())
    assert m.anchors[0].repo == "ledger" and m.anchors[0].commit != sha  # kept as it was: re-made only on purpose
    code, out, err = run_cli(billing, "supersede", new["id"], "re-made at ledger's ref",
                             "--anchor", "ledger:src/api.py::retry_after", "--json")
    assert code == 0, err
    last = memfile.loads((billing / ".gitmem" / "memories" / f"{json.loads(out)['id']}.md").read_text())
    assert last.anchors[0].repo == "ledger" and last.anchors[0].commit == sha
    export = tmp_path / "export.jsonl"
    code, _, err = run_cli(billing, "export", "-o", str(export))
    assert code == 0, err
    other = make_repo(tmp_path / "other")
    commit(other, "x", {"a.py": "x = 1\n"})
    run_cli(other, "init", "--no-hooks")
    code, out, err = run_cli(other, "import", str(export), "--json")
    assert code == 0, err
    assert json.loads(out)["dropped_anchors"] == []
    keys = {a.key: a.repo for f in (other / ".gitmem" / "memories").glob("*.md")
            for a in memfile.loads(f.read_text()).anchors}
    assert keys == {"ledger:src/api.py::retry_after": "ledger"}


def test_the_hooks_warn_of_the_last_check_without_the_other_repository(tmp_path: Path, run_cli) -> None:
    """The prompt hook (stdlib, catalog only) gives the memory as stale once a check found it so, with ledger gone:
    no git ran in ledger for it."""
    import os
    import subprocess
    import sys

    from test_claude_hooks import context_of, fixture

    exe = Path(sys.executable).parent / "gitmem-hook"
    if not exe.exists():
        pytest.skip("the gitmem-hook entry point is not installed next to this Python")
    ledger, billing, mid = _setup(tmp_path, run_cli)
    commit(ledger, "ms", {"src/api.py": LEDGER_API.replace("int(resp", "1000 * int(resp")})
    assert run_cli(billing, "org", "check")[0] == 1
    shutil.move(str(ledger), str(tmp_path / "gone"))
    event = fixture("UserPromptSubmit", billing, session_id="xrepo",
                    prompt="does our client still rely on ledger retry_after being seconds?")
    proc = subprocess.run([str(exe)], input=json.dumps(event).encode(), cwd=billing, capture_output=True,
                          timeout=60, env=dict(os.environ))
    assert proc.returncode == 0 and proc.stderr == b""
    text = context_of(proc.stdout.decode(), "UserPromptSubmit")
    assert mid in text and "ledger:src/api.py::retry_after" in text and "stale" in text


def test_the_record_of_checks_keeps_only_anchors_memories_still_have(tmp_path: Path, run_cli) -> None:
    from gitmem import layout
    from gitmem.org import checks

    _, billing, mid = _setup(tmp_path, run_cli, hooks=False)
    assert run_cli(billing, "org", "check")[0] == 0
    record = layout.of(billing).xrepo_checks_file
    assert [k.split("\x1f")[0] for k in checks.load(record)] == ["ledger:src/api.py::retry_after"]
    assert run_cli(billing, "forget", mid)[0] == 0
    code, out, _ = run_cli(billing, "org", "check")
    assert code == 0 and "no memory has a cross-repository anchor" in out
    assert run_cli(billing, "stale")[0] == 0
    assert checks.load(record) == {}


def test_a_whole_file_anchor_a_deletion_and_list_by_foreign_anchor(tmp_path: Path, run_cli) -> None:
    ledger, billing, mid = _setup(tmp_path, run_cli, hooks=False)
    code, out, err = run_cli(billing, "remember", "ledger's api module is ours to read",
                             "--anchor", "ledger:src/api.py", "--json")
    assert code == 0, err
    fid = json.loads(out)["id"]
    code, out, _ = run_cli(billing, "list", "--anchor", "ledger:src/api.py::retry_after", "--json")
    assert [m["id"] for m in json.loads(out)] == [mid]
    code, out, _ = run_cli(billing, "list", "--anchor", "ledger:src/", "--json")
    assert sorted(m["id"] for m in json.loads(out)) == sorted([mid, fid])
    code, out, _ = run_cli(billing, "list", "--anchor", "src/api.py", "--json")
    assert json.loads(out) == []  # billing's own path: not ledger's
    sha = commit(ledger, "drop retry_after", {"src/api.py": LEDGER_API.split("def retry_after")[0]
                                              + "def backoff(n):\n    return min(60, 2 ** n)\n"})
    st = _stale(run_cli, billing)
    assert st["ledger:src/api.py::retry_after"]["status"] == "deleted"
    assert st["ledger:src/api.py::retry_after"]["reason"] == f"ledger@{sha[:7]}: `retry_after` symbol deleted"
    assert st["ledger:src/api.py"]["status"] == "stale"
    assert st["ledger:src/api.py"]["reason"] == f"ledger@{sha[:7]}: `src/api.py` file content changed"
    code, out, err = run_cli(billing, "tidy", "--apply", "--json")
    assert code == 0, err
    assert memfile.loads((billing / ".gitmem" / "memories" / f"{mid}.md").read_text()).retired is None


def test_a_hand_written_anchor_with_repo_and_a_bare_path_reads_as_foreign() -> None:
    text = ("---\nid: m3\ntype: gotcha\ntitle: t\nanchors:\n- anchor: src/api.py::retry_after\n  repo: ledger\n"
            "  commit: " + "c" * 40 + "\n  kind: function\n---\n")
    (a,) = memfile.loads(text).anchors
    assert (a.repo, a.path, a.symbol) == ("ledger", "src/api.py", "retry_after")
    assert a.key == "ledger:src/api.py::retry_after"
    assert "- anchor: ledger:src/api.py::retry_after\n  repo: ledger\n" in memfile.dumps(memfile.loads(text))
