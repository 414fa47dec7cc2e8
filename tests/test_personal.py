"""The personal scope (issue 21): the developer's memories in a git repository of their own, given in every
repository by the real hook entry points, never written into a project, searchable with ``--personal``, shared
between two machines through a bare remote, and costing nothing when there is no personal repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem import layout
from gitmem.catalog import db as catalog_db
from testing.jsontext import strings
from testing.repos import commit, git, make_repo
from tests.test_claude_hooks import AUTH_PY, CLIENT_PY, context_of, fixture, hook, remember, wait_for

PREFERENCE = "I prefer small commits whose body says why the change was made"
FORCE_PUSH = "Never force-push a branch someone else has pulled: rebase locally, then push a new branch"


@pytest.fixture
def me(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's personal repository folder (not created) and user config home."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-home"))
    d = tmp_path / "me"
    monkeypatch.setenv(layout.PERSONAL_DIR_ENV, str(d))
    return d


def project(tmp_path: Path, run_cli, name: str) -> Path:  # type: ignore[no-untyped-def]
    """A repository with gitmem initialised and everything committed (a clean tree to compare against)."""
    r = make_repo(tmp_path / name)
    commit(r, "init", {"src/client.py": CLIENT_PY, "src/auth.py": AUTH_PY})
    code, _, err = run_cli(r, "init", "--no-hooks")
    assert code == 0, err
    git(r, "add", "-A")
    git(r, "commit", "-qm", "gitmem")
    return r


def remember_personal(run_cli, cwd: Path, text: str, mtype: str = "preference", *extra: str) -> str:  # type: ignore[no-untyped-def]
    code, out, err = run_cli(cwd, "remember", "--personal", text, "--type", mtype, "--json", *extra)
    assert code == 0, err
    data = json.loads(out)
    assert data["label"] == "personal"
    return str(data["id"])


def tree_state(repo: Path) -> tuple[str, str, str, list[str]]:
    """What a project's git and memory folder hold: status, index, HEAD, memory files."""
    return (git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored"), git(repo, "ls-files", "-s"),
            git(repo, "rev-parse", "HEAD"), sorted(p.name for p in (repo / ".gitmem" / "memories").iterdir()))


def all_text(stdout: str) -> str:
    """Every string in a hook's JSON answer, joined (each agent puts its context somewhere else)."""
    return "\n".join(strings(json.loads(stdout) if stdout.strip() else None))


def codex_hook(payload: dict[str, Any], cwd: Path) -> str:
    proc = subprocess.run([sys.executable, "-m", "gitmem.integrations.agents.codex"],
                          input=json.dumps(payload).encode(), cwd=cwd, capture_output=True, env=dict(os.environ),
                          timeout=60)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr.decode()
    return proc.stdout.decode()


# -- writing: into the personal repository, committed there, never into the project -----------------------------


def test_remember_personal_commits_in_the_personal_repository_and_never_touches_the_project(
        tmp_path: Path, run_cli, me: Path) -> None:  # type: ignore[no-untyped-def]
    proj = project(tmp_path, run_cli, "project")
    code, _, err = run_cli(proj, "remember", "--personal", PREFERENCE)
    assert code == 1 and "no personal repository" in err and "gitmem personal init" in err
    code, out, err = run_cli(proj, "personal", "init", "--json")
    assert code == 0, err and json.loads(out)["action"] == "created"
    before = tree_state(proj)
    project_catalog = catalog_db.connect(proj)
    count_before = catalog_db.count(project_catalog) if project_catalog else 0
    mid = remember_personal(run_cli, proj / "src", PREFERENCE, "preference", "--tag", "git")
    assert tree_state(proj) == before  # nothing in the project's tree, index, HEAD or memory folder
    con = catalog_db.connect(proj)
    assert (catalog_db.count(con) if con else 0) == count_before and not (con and catalog_db.rows(con, [mid]))
    assert (me / ".gitmem" / "memories" / f"{mid}.md").is_file()
    assert git(me, "status", "--porcelain") == ""  # committed there: push has it
    assert f".gitmem/memories/{mid}.md" in git(me, "show", "--name-only", "--format=", "HEAD")
    # anchors name code of one repository: refused, with what to do
    code, _, err = run_cli(proj, "remember", "--personal", "x is slow", "--anchor", "src/client.py::fetch")
    assert code == 1 and "no anchors" in err and "--tag" in err
    assert tree_state(proj) == before
    # listed, shown and found as personal
    code, out, _ = run_cli(proj, "list", "--personal", "--json")
    assert code == 0 and [(m["id"], m["label"]) for m in json.loads(out)] == [(mid, "personal")]
    code, out, _ = run_cli(proj, "show", "--personal", mid[:10])
    assert code == 0 and "scope: personal" in out and PREFERENCE in out
    code, out, err = run_cli(proj, "recall", "--personal", "small commits why", "--json")
    assert code == 0, err
    hits = json.loads(out)
    assert hits[0]["id"] == mid and hits[0]["label"] == "personal"
    code, out, _ = run_cli(proj, "recall", "--personal", "small commits why")
    assert out.startswith(mid) and " personal " in out
    code, out, _ = run_cli(proj, "recall", "small commits why", "--json")
    assert mid not in out  # the project's own search never holds it
    code, _, err = run_cli(proj, "forget", "--personal", mid)
    assert code == 0, err
    assert not (me / ".gitmem" / "memories" / f"{mid}.md").exists() and git(me, "status", "--porcelain") == ""
    assert tree_state(proj) == before


# -- given in every repository, by the real hook entry points ------------------------------------------------------


def test_personal_memories_are_given_in_two_repositories_and_never_enter_either(
        tmp_path: Path, run_cli, me: Path) -> None:  # type: ignore[no-untyped-def]
    first = project(tmp_path, run_cli, "first")
    second = project(tmp_path, run_cli, "second")
    own = remember(run_cli, first, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    git(first, "add", "-A")
    git(first, "commit", "-qm", "memory")
    assert run_cli(first, "personal", "init")[0] == 0
    pref = remember_personal(run_cli, first, PREFERENCE)
    rule = remember_personal(run_cli, second, FORCE_PUSH, "constraint", "--tag", "git")
    states = {r: tree_state(r) for r in (first, second)}

    # session start, Claude Code, in the first repository: its own memory, then the personal ones, labelled
    code, out, err = hook(fixture("SessionStart", first, session_id="s-first"), first)
    assert code == 0 and err == ""
    text = context_of(out, "SessionStart")
    assert own in text and pref in text and rule in text
    assert text.index(own) < text.index("# gitmem: the developer's personal memories")
    assert f"### {rule} · constraint (must hold) · person-written · personal" in text
    assert "The developer's own notes, not instructions" in text and "gitmem show --personal ID" in text
    assert f"### {own} · constraint (must hold) · person-written\n" in text  # the project's own: no scope label

    # the second repository, through Codex's entry point: the same personal memories
    text = all_text(codex_hook({"session_id": "s-second", "transcript_path": None, "cwd": str(second),
                                "hook_event_name": "SessionStart", "model": "gpt-5.5", "source": "startup"}, second))
    assert pref in text and rule in text and own not in text

    # per prompt: what the prompt is about, once per session; nothing for a prompt about something else
    ask = fixture("UserPromptSubmit", second, session_id="p-second",
                  prompt="Can I force-push the branch after the rebase?")
    code, out, _ = hook(ask, second)
    text = context_of(out, "UserPromptSubmit")
    assert rule in text and pref not in text and "· personal" in text
    assert text.startswith("# gitmem: the developer's personal memories relevant to this prompt")
    code, out, _ = hook(ask, second)
    assert code == 0 and rule not in out  # given already in this session
    code, out, _ = hook(fixture("UserPromptSubmit", second, session_id="p-other",
                                prompt="Explain the parser's tokenizer states"), second)
    assert code == 0 and rule not in out and pref not in out
    # a prompt in the first repository that matches both its own memory and a personal one gets both, own first
    code, out, _ = hook(fixture("UserPromptSubmit", first, session_id="p-first",
                                prompt="Why does fetch keep timeout=10, and may I force-push the branch?"), first)
    text = context_of(out, "UserPromptSubmit")
    assert own in text and rule in text and text.index(own) < text.index(rule)

    # nothing of it in either repository's tree, index, history or memory folder
    assert {r: tree_state(r) for r in (first, second)} == states
    for r in (first, second):
        con = catalog_db.connect(r)
        assert con is not None and not catalog_db.rows(con, [pref, rule])
        con.close()


def test_off_in_a_repository_that_says_so(tmp_path: Path, run_cli, me: Path) -> None:  # type: ignore[no-untyped-def]
    proj = project(tmp_path, run_cli, "project")
    assert run_cli(proj, "personal", "init")[0] == 0
    rule = remember_personal(run_cli, proj, FORCE_PUSH, "constraint")
    cfg = proj / ".gitmem" / "config.toml"
    cfg.write_text(cfg.read_text() + "\n[personal]\nenabled = false\n")
    _, out, _ = hook(fixture("SessionStart", proj, session_id="off-start"), proj)
    assert rule not in out
    _, out, _ = hook(fixture("UserPromptSubmit", proj, session_id="off-prompt", prompt="may I force-push?"), proj)
    assert rule not in out
    # the person's own config decides over the project's
    user_cfg = layout.user_config_file()
    user_cfg.parent.mkdir(parents=True, exist_ok=True)
    user_cfg.write_text("[personal]\nenabled = true\nprompt_budget = 150\n")
    _, out, _ = hook(fixture("UserPromptSubmit", proj, session_id="on-prompt", prompt="may I force-push?"), proj)
    assert rule in context_of(out, "UserPromptSubmit")


def test_the_personal_catalog_is_rebuilt_when_missing_and_follows_its_files(
        tmp_path: Path, run_cli, me: Path) -> None:  # type: ignore[no-untyped-def]
    proj = project(tmp_path, run_cli, "project")
    assert run_cli(proj, "personal", "init")[0] == 0
    rule = remember_personal(run_cli, proj, FORCE_PUSH, "constraint")
    catalog_db.drop_catalog(me)
    # session start rebuilds it before it reads it
    _, out, _ = hook(fixture("SessionStart", proj, session_id="rebuilt"), proj)
    assert rule in context_of(out, "SessionStart")
    assert catalog_db.connect(me) is not None
    # per prompt, a missing catalog costs no wait: a background sync rebuilds it, the next prompt has it
    catalog_db.drop_catalog(me)
    ask = fixture("UserPromptSubmit", proj, session_id="later", prompt="may I force-push this branch?")
    hook(ask, proj)
    assert wait_for(lambda: rule in hook({**ask, "session_id": f"later-{os.urandom(3).hex()}"}, proj)[1], 30)
    # a memory file that arrives by plain git (another machine's, copied in) is seen: the folder changed
    text = (me / ".gitmem" / "memories" / f"{rule}.md").read_text()
    new_id = "01KZZZZZZZZZZZZZZZZZZZZZZ0"
    (me / ".gitmem" / "memories" / f"{new_id}.md").write_text(
        text.replace(rule, new_id).replace("force-push", "squash-merge").replace("Never", "Always"))
    ask2 = fixture("UserPromptSubmit", proj, session_id="squash", prompt="should I squash-merge it?")
    assert wait_for(lambda: new_id in hook({**ask2, "session_id": f"sq-{os.urandom(3).hex()}"}, proj)[1], 30)


# -- two machines ------------------------------------------------------------------------------------------------


def test_push_and_pull_between_two_machines(tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-home"))
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    laptop, desktop = tmp_path / "laptop", tmp_path / "desktop"
    proj = project(tmp_path, run_cli, "project")

    def on(machine: Path) -> None:
        monkeypatch.setenv(layout.PERSONAL_DIR_ENV, str(machine))

    on(laptop)
    code, out, err = run_cli(proj, "personal", "init", "--remote", str(remote), "--json")
    assert code == 0, err
    assert json.loads(out)["action"] == "cloned"  # an empty remote: cloned, then gitmem's folder committed
    code, out, _ = run_cli(proj, "personal", "push")
    assert code == 0, out
    first = remember_personal(run_cli, proj, PREFERENCE)
    assert run_cli(proj, "personal", "push")[0] == 0

    on(desktop)
    code, out, _ = run_cli(proj, "personal", "init", "--remote", str(remote), "--json")
    assert code == 0 and json.loads(out)["memories"] == 1
    second = remember_personal(run_cli, proj, FORCE_PUSH, "constraint")
    code, out, _ = run_cli(proj, "personal", "status", "--json")
    st = json.loads(out)
    assert (st["exists"], st["memories"], st["remote"], st["ahead"], st["behind"]) == (True, 2, str(remote), 1, 0)
    assert run_cli(proj, "personal", "push")[0] == 0

    on(laptop)
    third = remember_personal(run_cli, proj, "I keep a CHANGELOG entry in every pull request", "preference")
    code, _, err = run_cli(proj, "personal", "push")
    assert code == 1 and "nothing was pushed" in err and "gitmem personal pull" in err
    code, out, err = run_cli(proj, "personal", "pull", "--json")
    assert code == 0, err
    pulled = json.loads(out)
    assert pulled["changed"] == [f".gitmem/memories/{second}.md"] and pulled["memories"] == 3
    con = catalog_db.connect(laptop)  # refreshed by the pull: the next hook reads it current
    assert con is not None and catalog_db.is_current(con, laptop) and catalog_db.count(con) == 3
    con.close()
    _, out, _ = hook(fixture("UserPromptSubmit", proj, session_id="after-pull", prompt="may I force-push?"), proj)
    assert second in context_of(out, "UserPromptSubmit")
    assert run_cli(proj, "personal", "push")[0] == 0

    on(desktop)
    assert run_cli(proj, "personal", "pull")[0] == 0
    code, out, _ = run_cli(proj, "list", "--personal", "--json")
    assert {m["id"] for m in json.loads(out)} == {first, second, third}

    # both machines change the same memory's text: the merge driver cannot pick one; the pull says so and how
    def edit(machine: Path, words: str) -> None:
        path = machine / ".gitmem" / "memories" / f"{first}.md"
        path.write_text(path.read_text().rstrip("\n") + f"\n\n{words}\n")
        git(machine, "commit", "-qam", words)

    edit(desktop, "On the desktop I also sign them.")
    assert run_cli(proj, "personal", "push")[0] == 0
    on(laptop)
    edit(laptop, "On the laptop I never sign them.")
    code, _, err = run_cli(proj, "personal", "pull")
    assert code == 1 and "conflicts" in err and f"{first}.md" in err and "merge --abort" in err
    conflicted = f".gitmem/memories/{first}.md"
    index_before = git(laptop, "ls-files", "-s")
    # with the merge in progress, status says so and push refuses before it stages anything
    code, out, err = run_cli(proj, "personal", "status", "--json")
    st = json.loads(out)
    assert code == 0, err
    assert (st["merging"], st["conflicts"], st["memories"]) == (True, [conflicted], 2)
    code, out, _ = run_cli(proj, "personal", "status")
    assert "memories: 2 (and 1 file in conflict, below)" in out
    assert f"merge in progress: a pull left conflicts in {conflicted}" in out and "merge --abort" in out
    files_before = sorted((laptop / ".gitmem" / "memories").iterdir())
    for command in (("personal", "push"), ("personal", "pull"), ("forget", "--personal", second),
                    ("remember", "--personal", "I review my own diff before asking for a review")):
        code, out, err = run_cli(proj, *command)
        assert sorted((laptop / ".gitmem" / "memories").iterdir()) == files_before, command
        assert code == 1 and out == "", (command, out)
        assert f"a pull left conflicts in {conflicted}: resolve them (or `git -C {laptop} merge --abort`)" in err
        assert "fatal" not in err and "partial commit" not in err
        assert git(laptop, "ls-files", "-s") == index_before  # nothing staged: the conflict is still there
        assert git(laptop, "diff", "--name-only", "--diff-filter=U").strip() == conflicted
    # resolved and added but not committed: push says how to finish the merge
    path = laptop / ".gitmem" / "memories" / f"{first}.md"
    path.write_text("\n".join(line for line in path.read_text().splitlines()
                               if not line.startswith(("<<<<<<<", "=======", ">>>>>>>"))) + "\n")
    git(laptop, "add", conflicted)
    code, _, err = run_cli(proj, "personal", "push")
    assert code == 1 and "resolved but not committed" in err and "commit --no-edit" in err
    code, out, _ = run_cli(proj, "personal", "status")
    assert "merge in progress, its conflicts resolved" in out and "memories: 3\n" in out
    git(laptop, "commit", "-q", "--no-edit")
    code, out, err = run_cli(proj, "personal", "push")
    branch = git(laptop, "rev-parse", "--abbrev-ref", "HEAD").strip()
    assert code == 0 and out == f"gitmem: pushed {branch} to {remote} (2 commits)\n", (out, err)


def test_push_says_the_same_thing_every_time(tmp_path: Path, run_cli, me: Path) -> None:  # type: ignore[no-untyped-def]
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    assert run_cli(tmp_path, "personal", "init", "--remote", str(remote))[0] == 0
    branch = git(me, "rev-parse", "--abbrev-ref", "HEAD").strip()
    code, out, err = run_cli(tmp_path, "personal", "push")  # the first push: gitmem's folder, one commit
    assert code == 0 and out == f"gitmem: pushed {branch} to {remote} (1 commit)\n", (out, err)
    code, out, _ = run_cli(tmp_path, "personal", "push")
    assert code == 0 and out == f"gitmem: pushed {branch} to {remote} (up to date: nothing new to send)\n"
    mid = remember_personal(run_cli, tmp_path, PREFERENCE)
    remember_personal(run_cli, tmp_path, FORCE_PUSH, "constraint")
    path = me / ".gitmem" / "memories" / f"{mid}.md"
    path.write_text(path.read_text().rstrip("\n") + "\n\nAnd a test for each fix.\n")  # edited, not committed
    code, out, _ = run_cli(tmp_path, "personal", "push")
    assert code == 0 and out.splitlines() == [
        "gitmem: committed memory files changed in the personal repository",
        f"gitmem: pushed {branch} to {remote} (3 commits)"], out
    assert git(remote, "rev-parse", branch) == git(me, "rev-parse", "HEAD")


# -- no personal repository: nothing, no error, no cost beyond one stat ------------------------------------------


def test_without_a_personal_repository_nothing_changes_and_nothing_is_read(
        tmp_path: Path, run_cli, me: Path) -> None:  # type: ignore[no-untyped-def]
    proj = project(tmp_path, run_cli, "project")
    own = remember(run_cli, proj, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    _, start, err = hook(fixture("SessionStart", proj, session_id="none-start"), proj)
    assert err == "" and own in context_of(start, "SessionStart") and "personal" not in start
    _, out, err = hook(fixture("UserPromptSubmit", proj, session_id="none-prompt",
                               prompt="Why must fetch keep timeout=10?"), proj)
    assert err == "" and own in context_of(out, "UserPromptSubmit") and "personal" not in out
    assert not me.exists()  # nothing created
    # the user's config was never read for it (its cached copy is written on the first read)
    assert not (layout.of(proj).worktree_dir / "user-config.json").exists()
    logs = layout.of(proj).logs_dir
    assert not logs.exists() or "personal" not in "".join(p.read_text() for p in logs.glob("*.log"))
    code, out, _ = run_cli(proj, "personal", "status", "--json")
    assert code == 0 and json.loads(out)["exists"] is False
    code, out, _ = run_cli(proj, "personal", "path")
    assert out.strip() == str(me)
    code, _, err = run_cli(proj, "recall", "--personal", "anything")
    assert code == 1 and "gitmem personal init" in err


def test_the_hot_path_reads_personal_the_way_org_settings_does() -> None:
    """``personal.prompt_budget`` (stdlib, for the prompt hook) gives ``org.settings.personal_settings``' values."""
    from gitmem import personal
    from gitmem.config import scopes
    from gitmem.org import settings

    assert personal.DEFAULT_PROMPT_BUDGET == settings.DEFAULT_PERSONAL_PROMPT_BUDGET
    cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({}, {}), ({"personal": {"enabled": False}}, {}),
        ({"personal": {"enabled": False}}, {"personal": {"enabled": True}}),
        ({}, {"personal": {"prompt_budget": 50}}), ({"personal": {"prompt_budget": 0}}, {}),
        ({"personal": {"prompt_budget": True}}, {}), ({"personal": {"prompt_budget": "9"}}, {}),
        ({"personal": {"prompt_budget": 70}}, {"personal": {"prompt_budget": 90}}), ({"personal": "x"}, {}),
        ({"personal": {"enabled": "no"}}, {}), ({}, {"personal": {"enabled": 0}}),
    ]
    for project_cfg, user_cfg in cases:
        ps = settings.personal_settings(scopes(project_cfg, user_cfg))
        assert personal.prompt_budget(project_cfg, user_cfg) == (ps.prompt_budget if ps.enabled else None), \
            (project_cfg, user_cfg)


def test_a_session_in_the_personal_repository_itself_is_not_given_its_memories_twice(
        tmp_path: Path, run_cli, me: Path) -> None:  # type: ignore[no-untyped-def]
    proj = project(tmp_path, run_cli, "project")
    assert run_cli(proj, "personal", "init")[0] == 0
    rule = remember_personal(run_cli, proj, FORCE_PUSH, "constraint")
    _, out, _ = hook(fixture("SessionStart", me, session_id="inside"), me)
    text = context_of(out, "SessionStart")
    assert text.count(f"### {rule}") == 1 and "the developer's personal memories" not in text


def test_init_is_idempotent_and_says_what_is_wrong(tmp_path: Path, run_cli, me: Path,  # type: ignore[no-untyped-def]
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run_cli(tmp_path, "personal", "init", "--json")
    assert code == 0 and json.loads(out)["action"] == "created" and json.loads(out)["remote"] is None
    assert git(me, "status", "--porcelain") == "" and git(me, "log", "--format=%s") != ""
    assert "merge=gitmem" in (me / ".gitmem" / ".gitattributes").read_text()
    assert "gitmem merge-file" in git(me, "config", "--local", "merge.gitmem.driver")
    head = git(me, "rev-parse", "HEAD")
    code, out, _ = run_cli(tmp_path, "personal", "init", "--json")
    assert code == 0 and json.loads(out)["action"] == "existing" and git(me, "rev-parse", "HEAD") == head
    code, _, err = run_cli(tmp_path, "personal", "push")
    assert code == 1 and "has no remote" in err and "--remote URL" in err
    code, _, err = run_cli(tmp_path, "personal", "pull")
    assert code == 1 and "has no remote" in err
    # a remote added later: pointed at it, and a first push tracks it
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    code, out, err = run_cli(tmp_path, "personal", "init", "--remote", str(remote), "--json")
    assert code == 0, err
    assert json.loads(out)["remote"] == str(remote)
    assert run_cli(tmp_path, "personal", "push")[0] == 0
    assert git(remote, "rev-parse", "main") == git(me, "rev-parse", "HEAD")
    # an unreachable remote, a folder in the way
    monkey_dir = tmp_path / "other"
    monkeypatch.setenv(layout.PERSONAL_DIR_ENV, str(monkey_dir))
    code, _, err = run_cli(tmp_path, "personal", "init", "--remote", str(tmp_path / "nowhere.git"))
    assert code == 1 and "could not clone" in err and not monkey_dir.exists()
    monkey_dir.mkdir()
    (monkey_dir / "notes.txt").write_text("mine")
    code, _, err = run_cli(tmp_path, "personal", "init")
    assert code == 1 and "is not a git repository" in err and (monkey_dir / "notes.txt").read_text() == "mine"


def test_a_broken_personal_repository_never_costs_the_projects_memories(
        tmp_path: Path, run_cli, me: Path) -> None:  # type: ignore[no-untyped-def]
    proj = project(tmp_path, run_cli, "project")
    own = remember(run_cli, proj, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    (me / ".gitmem" / "memories").mkdir(parents=True)
    (me / ".git").write_text("not a gitdir line\n")  # git's folder cannot be found from it
    code, out, err = hook(fixture("SessionStart", proj, session_id="broken-start"), proj)
    assert code == 0 and err == "" and own in context_of(out, "SessionStart")
    code, out, err = hook(fixture("UserPromptSubmit", proj, session_id="broken-prompt",
                                  prompt="Why must fetch keep timeout=10?"), proj)
    assert code == 0 and err == "" and own in context_of(out, "UserPromptSubmit")
    assert "personal memories per prompt" in (layout.of(proj).logs_dir / "agent-hooks.log").read_text()


def test_the_documented_lines_show_what_an_agent_is_given(tmp_path: Path, run_cli, me: Path) -> None:  # type: ignore[no-untyped-def]
    """docs/agents.md, docs/personal.md and docs/org.md give lines that run an agent's hook by hand: run as written
    (bash, the installed ``gitmem-hook``), they print the project's memories and the personal ones that
    ``gitmem context`` leaves out."""
    proj = project(tmp_path, run_cli, "project")
    own = remember(run_cli, proj, "fetch must keep timeout=10: the gateway cuts requests at 12 s",
                   "src/client.py::fetch")
    assert run_cli(proj, "personal", "init")[0] == 0
    rule = remember_personal(run_cli, proj, FORCE_PUSH, "constraint")
    code, out, _ = run_cli(proj, "context")
    assert code == 0 and own in out and rule not in out  # what the docs say `gitmem context` is
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for doc in ("docs/agents.md", "docs/personal.md", "docs/org.md"):
        lines = [line.removeprefix("$ ") for line in (root / doc).read_text().splitlines()
                 if line.startswith("$ echo '{\"hook_event_name\"") and "| gitmem-hook |" in line]
        assert len(lines) == 2, doc
        start, prompt = (subprocess.run(["bash", "-c", line], cwd=proj, env=env, capture_output=True, text=True,
                                        timeout=120) for line in lines)
        assert start.returncode == 0 and start.stderr == "", (doc, start.stderr)
        assert own in start.stdout and rule in start.stdout and "· personal" in start.stdout, doc
        assert start.stdout.startswith("# gitmem: "), doc  # the text itself, not JSON
        assert prompt.returncode == 0 and rule in prompt.stdout, (doc, prompt.stderr)


# -- the guard: a personal memory is never written, committed or pushed into a project ---------------------------


def git_state(repo: Path) -> tuple[str, str, str, str]:
    """A repository's tree, index, HEAD and refs (to check nothing changed)."""
    return (git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored"), git(repo, "ls-files", "-s"),
            git(repo, "rev-parse", "HEAD"), git(repo, "for-each-ref"))


def test_a_project_is_never_taken_for_the_personal_repository(
        tmp_path: Path, run_cli, me: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    proj = project(tmp_path, run_cli, "project")
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    git(proj, "remote", "add", "origin", str(origin))
    link = tmp_path / "link"
    link.symlink_to(proj)
    before = git_state(proj)
    for where in (proj, link):
        monkeypatch.setenv(layout.PERSONAL_DIR_ENV, str(where))
        for command in (("personal", "init"), ("remember", "--personal", PREFERENCE), ("personal", "push"),
                        ("personal", "pull"), ("forget", "--personal", "01ABC")):
            code, out, err = run_cli(proj / "src", *command)
            assert code == 1 and out == "", (where, command, out)
            assert "is the repository you are working in" in err and layout.PERSONAL_DIR_ENV in err, (command, err)
            assert len(err.strip().splitlines()) == 2  # the error and what to do
            assert git_state(proj) == before, (where, command)
    assert git(origin, "for-each-ref") == ""  # nothing pushed to the project's origin
    # from outside it too: a project is not adopted (it tracks code), unless the person says it is theirs
    for command in (("personal", "init"), ("remember", "--personal", PREFERENCE), ("personal", "push")):
        code, out, err = run_cli(tmp_path, *command)
        assert code == 1 and "looks like a project" in err and "src/auth.py and 1 more" in err, (command, err)
        assert git_state(proj) == before, command

    # a folder with .gitmem/ and no .git of its own, inside the project: git would commit into the project
    pp = proj / "pp"
    (pp / ".gitmem" / "memories").mkdir(parents=True)
    (pp / ".gitmem" / "config.toml").write_text("")
    git(proj, "add", "-A")
    git(proj, "commit", "-qm", "a folder that looks like a personal repository")
    before = git_state(proj)
    monkeypatch.setenv(layout.PERSONAL_DIR_ENV, str(pp))
    for cwd in (proj, tmp_path):
        for command in (("personal", "init"), ("remember", "--personal", PREFERENCE), ("personal", "push"),
                        ("personal", "pull"), ("recall", "--personal", "commits")):
            code, out, err = run_cli(cwd, *command)
            assert code == 1 and out == "", (cwd, command, out)
            assert ("not a git repository of its own" in err or "is not a git repository" in err), (command, err)
            assert git_state(proj) == before, (cwd, command)
    # and the hooks give nothing from it and write nothing for it
    _, out, err = hook(fixture("SessionStart", proj, session_id="pp-start"), proj)
    assert err == "" and "personal" not in out and git_state(proj) == before


def test_a_personal_repository_inside_a_project_is_its_own_and_init_says_how_to_hide_it(
        tmp_path: Path, run_cli, me: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    proj = project(tmp_path, run_cli, "project")
    before = git_state(proj)
    qq = proj / "qq"
    monkeypatch.setenv(layout.PERSONAL_DIR_ENV, str(qq))
    code, out, err = run_cli(proj, "personal", "init")
    assert code == 0, err
    assert f"inside the repository {proj.resolve()}" in out and f"/qq/ to {proj.resolve()}/.git/info/exclude" in out
    mid = remember_personal(run_cli, proj, PREFERENCE)
    assert git(qq, "show", "--name-only", "--format=", "HEAD").strip() == f".gitmem/memories/{mid}.md"
    status, index, head, refs = git_state(proj)
    assert (index, head, refs) == before[1:]  # nothing of it in the project's index, HEAD or refs
    assert sorted(status.splitlines()) == sorted([*before[0].splitlines(), "?? qq/"])  # only listed, as said
    # working inside the personal repository itself is fine: init marked it as personal
    code, _, err = run_cli(qq, "remember", "--personal", FORCE_PUSH, "--type", "constraint")
    assert code == 0, err
    assert git(qq, "status", "--porcelain") == ""


def test_a_broken_user_config_is_said_by_the_commands_and_logged_by_the_hooks(
        tmp_path: Path, run_cli, me: Path) -> None:  # type: ignore[no-untyped-def]
    proj = project(tmp_path, run_cli, "project")
    assert run_cli(proj, "personal", "init")[0] == 0
    rule = remember_personal(run_cli, proj, FORCE_PUSH, "constraint")
    user_file = layout.user_config_file()
    user_file.parent.mkdir(parents=True, exist_ok=True)
    for text, problem in (("[personal\nenabled = false\n", "invalid TOML"),
                          ('[personal]\nenabled = "no"\n', "personal.enabled must be true or false, got 'no'")):
        user_file.write_text(text)
        for command in (("recall", "--personal", "force-push"), ("remember", "--personal", "I rebase before I push")):
            code, out, err = run_cli(proj, *command)
            assert code == 0, err
            warnings = [line for line in err.splitlines() if line.startswith("warning:")]
            assert len(warnings) == 1 and problem in warnings[0] and str(user_file) in warnings[0], err
            assert "only [personal] enabled = false turns them off" in warnings[0]
        # the command that depends on it refuses, in one line and what to do
        code, out, err = run_cli(proj, "personal", "status")
        assert code != 0 and problem in err and out == ""
        # the hooks: the same rule (given, as if not set), silent, logged
        session = f"cfg-{len(text)}"
        code, out, err = hook(fixture("SessionStart", proj, session_id=session), proj)
        assert code == 0 and err == "" and rule in context_of(out, "SessionStart")
        log = (layout.of(proj).logs_dir / "agent-hooks.log").read_text()
        assert problem in log and "your config.toml" in log
    user_file.write_text("[personal]\nenabled = false\n")
    code, out, err = hook(fixture("SessionStart", proj, session_id="cfg-off"), proj)
    assert code == 0 and rule not in out
    code, _, err = run_cli(proj, "recall", "--personal", "force-push")
    assert code == 0 and "warning" not in err


def retitle(machine: Path, mid: str, title: str, updated: str) -> None:
    """Change memory ``mid``'s title and ``updated`` in ``machine``'s personal repository, committed there."""
    path = machine / ".gitmem" / "memories" / f"{mid}.md"
    lines = [f"title: {title}" if line.startswith("title: ") else f"updated: '{updated}'"
             if line.startswith("updated: ") else line for line in path.read_text().splitlines()]
    path.write_text("\n".join(lines) + "\n")
    git(machine, "commit", "-qam", f"retitle {title}")


def test_pull_says_which_side_won_a_field_both_machines_changed(
        tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-home"))
    remote, laptop, desktop = tmp_path / "remote.git", tmp_path / "laptop", tmp_path / "desktop"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    monkeypatch.setenv(layout.PERSONAL_DIR_ENV, str(laptop))
    assert run_cli(tmp_path, "personal", "init", "--remote", str(remote))[0] == 0
    mid = remember_personal(run_cli, tmp_path, PREFERENCE)
    other = remember_personal(run_cli, tmp_path, FORCE_PUSH, "constraint")
    assert run_cli(tmp_path, "personal", "push")[0] == 0
    monkeypatch.setenv(layout.PERSONAL_DIR_ENV, str(desktop))
    assert run_cli(tmp_path, "personal", "init", "--remote", str(remote))[0] == 0
    retitle(desktop, mid, "Small commits (desktop)", "2030-01-02T00:00:00Z")
    retitle(desktop, other, "Force-push (desktop, older)", "2030-01-01T00:00:00Z")
    assert run_cli(tmp_path, "personal", "push")[0] == 0
    monkeypatch.setenv(layout.PERSONAL_DIR_ENV, str(laptop))
    retitle(laptop, mid, "Small commits (laptop, older)", "2030-01-01T00:00:00Z")
    retitle(laptop, other, "Force-push (laptop)", "2030-01-02T00:00:00Z")
    code, out, err = run_cli(tmp_path, "personal", "pull")
    assert code == 0, err
    lines = out.splitlines()
    assert [line for line in lines if mid in line] == [
        f"gitmem: {mid} changed on both sides, merged field by field (title: the remote's kept: the later updated "
        f"wins; the other value is in git -C {laptop} log -p -- .gitmem/memories/{mid}.md)"], out
    assert [line for line in lines if other in line] == [
        f"gitmem: {other} changed on both sides, merged field by field (title: this machine's kept: the later "
        f"updated wins; the other value is in git -C {laptop} log -p -- .gitmem/memories/{other}.md)"], out
    code, out, _ = run_cli(tmp_path, "list", "--personal", "--json")
    assert {m["id"]: m["title"] for m in json.loads(out)} == {mid: "Small commits (desktop)",
                                                              other: "Force-push (laptop)"}


def test_a_memory_left_in_conflict_by_a_pull_is_never_given_nor_found(
        tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """The project's rule (``memfile.loads``: a file with ``<<<<<<<`` … ``>>>>>>>`` is invalid, never loaded), and
    for the personal scope during an unfinished pull: a half-resolved file (some markers left, so it parses) and
    a file git still lists as unmerged are left out of recall, list and both hooks."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config-home"))
    proj = project(tmp_path, run_cli, "project")
    remote, laptop, desktop = tmp_path / "remote.git", tmp_path / "laptop", tmp_path / "desktop"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    monkeypatch.setenv(layout.PERSONAL_DIR_ENV, str(laptop))
    assert run_cli(tmp_path, "personal", "init", "--remote", str(remote))[0] == 0
    mid = remember_personal(run_cli, tmp_path, FORCE_PUSH, "constraint")
    keep = remember_personal(run_cli, tmp_path, "I force-push only my own draft branches, never shared ones")
    assert run_cli(tmp_path, "personal", "push")[0] == 0
    monkeypatch.setenv(layout.PERSONAL_DIR_ENV, str(desktop))
    assert run_cli(tmp_path, "personal", "init", "--remote", str(remote))[0] == 0
    path = desktop / ".gitmem" / "memories" / f"{mid}.md"
    path.write_text(path.read_text().rstrip("\n") + "\n\nforce-push: the desktop says yes\n")
    git(desktop, "commit", "-qam", "desktop")
    assert run_cli(tmp_path, "personal", "push")[0] == 0
    monkeypatch.setenv(layout.PERSONAL_DIR_ENV, str(laptop))
    path = laptop / ".gitmem" / "memories" / f"{mid}.md"
    path.write_text(path.read_text().rstrip("\n") + "\n\nforce-push: the laptop says no\n")
    git(laptop, "commit", "-qam", "laptop")
    assert run_cli(tmp_path, "personal", "pull")[0] == 1  # the bodies conflict: the merge is in progress
    text = path.read_text()
    assert "<<<<<<< ours" in text and ">>>>>>> theirs" in text
    for state in ("conflicted", "half-resolved"):
        if state == "half-resolved":  # the >>>>>>> line removed, the rest not yet: the file parses again
            path.write_text("".join(line for line in text.splitlines(keepends=True) if not line.startswith(">>>")))
        code, out, err = run_cli(proj, "recall", "--personal", "force-push", "--json")
        assert code == 0, err
        assert [h["id"] for h in json.loads(out)] == [keep], state
        code, out, _ = run_cli(proj, "list", "--personal", "--json")
        assert [m["id"] for m in json.loads(out)] == [keep], state
        _, out, err = hook(fixture("SessionStart", proj, session_id=f"c-start-{state}"), proj)
        assert err == "" and keep in out and mid not in out and "<<<<<<<" not in out, state
        _, out, err = hook(fixture("UserPromptSubmit", proj, session_id=f"c-prompt-{state}",
                                   prompt="may I force-push the branch?"), proj)
        assert err == "" and mid not in out and "<<<<<<<" not in out, state
    # resolved and committed: given again
    path.write_text("".join(line for line in text.splitlines(keepends=True)
                            if not line.startswith(("<<<", "===", ">>>"))))
    git(laptop, "commit", "-qam", "resolved")
    code, out, _ = run_cli(proj, "list", "--personal", "--json")
    assert sorted(m["id"] for m in json.loads(out)) == sorted([mid, keep])
