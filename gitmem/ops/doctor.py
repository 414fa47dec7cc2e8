"""``gitmem doctor``: is everything where git and gitmem will actually use it?

Checks, each an ``ok`` / ``warn`` / ``error`` line with a hint:
which install of gitmem runs (``gitmem.dist``: an editable clone, a wheel in a uv tool or pipx environment, a
venv; its metadata's version; another distribution providing ``gitmem``),
the ``.gitmem/`` layout and config (``[llm]`` too), the per-clone and per-worktree folders in git's
folder (usable, an older gitmem's state moved out of every work tree, copies a migration kept aside),
every memory file, each git hook (installed where git will run it, chained legacy hooks), the search's vectors
(``search.hybrid.behind``: which memories the next search would embed; an older gitmem's LanceDB index folder left
over), every hook and MCP command registered for gitmem in the project's agent files (each run in a harmless way:
does it reach gitmem on this machine? does it name one machine's path?), whether gitmem's ``all`` extra is
installed (else: a lean install, BM25 search only), sessions waiting for consolidation, the logs' recent errors,
and what ``gitmem tidy`` would merge, flag or retire (its rules: ``ops.tidy.find``).
Re-derives; changes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .. import dist, layout
from ..errors import GitmemError
from ..integrations import git_hooks
from ..layout import CONFIG_FILE
from ..store import Store


@dataclass
class Check:
    """One finding: ``level`` is ok, warn or error; ``message`` one line; ``hint`` what to do."""

    name: str
    level: str
    message: str
    hint: str = ""


@dataclass
class Report:
    """All findings; ``ok`` is false when any is an error."""

    checks: list[Check] = field(default_factory=list)
    #: Which gitmem ran the checks (``dist.detect``), None when not looked at.
    install: dist.Install | None = None

    @property
    def ok(self) -> bool:
        return all(c.level != "error" for c in self.checks)

    def add(self, name: str, level: str, message: str, hint: str = "") -> None:
        self.checks.append(Check(name, level, message, hint))


def diagnose(store: Store, *, check_index: bool = True) -> Report:
    """Run every check (see module docstring). Never raises for what it finds."""
    r = Report()
    _install_checks(r)
    try:
        from ..search.embed import embedder_from_config

        embedder_from_config(dict(store.config.get("embeddings", {})))
        for w in store.config_warnings:
            r.add("config", "warn", w, "upgrade gitmem to the version your teammates use; meanwhile they are ignored")
        if not store.config_warnings:
            r.add("config", "ok", f"{CONFIG_FILE} is valid")
    except GitmemError as e:
        r.add("config", "error", e.message, e.hint)
    try:
        from ..capture.llm import llm_config

        if llm_config(store.config.get("llm")) is not None:
            r.add("llm", "ok", "consolidation uses the [llm] endpoint")
    except GitmemError as e:
        if all(c.message != e.message for c in r.checks):  # a config.toml error is reported once
            r.add("llm", "error", e.message, e.hint)
    _state_checks(store, r)
    from ..catalog.files import unreadable_folders

    loaded = store.load_all()
    folders = unreadable_folders(store)
    for err in folders + loaded.errors:
        r.add("memory", "error", err.message, err.hint)
    r.add("memories", "ok" if not (loaded.errors or folders) else "error",
          f"{len(loaded.memories)} valid memory file(s), {len(loaded.errors)} invalid"
          + (f", {len(folders)} unreadable folder(s)" if folders else "")
          + (f", {len(loaded.retired)} retired (kept for history)" if loaded.retired else ""))
    from .check import unknown_key_warnings  # front-matter keys of a newer gitmem: kept, worth knowing

    for line in unknown_key_warnings(store, [*loaded.memories.values(), *loaded.retired.values()]):
        r.add("memory", "warn", line)
    for h in git_hooks.status(store.repo):
        if h.will_run and h.ours_current:
            extra = (f" (chained: {h.legacy.name})" if h.legacy else "") + (f"; {h.note}" if h.note else "")
            r.add("hook", "ok", f"{h.name}: git will run gitmem's hook at {h.path}{extra}")
        elif not h.installed:
            r.add("hook", "error", f"{h.name}: git will not run gitmem's hook: not installed in {h.path.parent}"
                  + (f" ({h.problem})" if h.problem else ""),
                  "run `gitmem hooks install` (installs where git looks, keeping existing hooks)")
        else:
            r.add("hook", "error" if not h.will_run else "warn",
                  f"{h.name}: {h.problem or 'installed shim is outdated'}",
                  "run `gitmem hooks install` to install where git looks")
    lean = _extras_check(store, r)
    if check_index and not lean:
        _search_check(store, r, loaded.hashes)
    _old_index_check(store, r)
    _sharing_checks(store, r)
    _daemon_checks(store, r)
    _tidy_check(store, r)
    _agent_checks(store, r)
    _claude_checks(store, r)
    log = store.log_dir / "hooks.log"
    if log.is_file():
        tail = log.read_text("utf-8", "replace").splitlines()[-200:]
        errors = [ln for ln in tail if "Traceback" in ln or " ERROR " in ln]
        if errors:
            r.add("hooks-log", "warn", f"{len(errors)} recent hook error(s) in {store.display(log)}",
                  "read the log; hooks never block git, but their work was skipped")
    return r


def _extras_check(store: Store, r: Report) -> bool:
    """Is gitmem's ``all`` extra installed (``extras``)? One ``extras`` line: ok with it, else a warning naming what
    is missing, what works without it and the command that installs it. Returns whether this store's searches
    run over the catalog (BM25 only: ``search.lexical``), in which case no search index is checked."""
    from .. import extras
    from ..search import lexical

    absent = extras.missing()
    how = lexical.mode(store)
    if not absent:
        r.add("extras", "ok", f"gitmem's `{extras.EXTRA}` extra is installed: search is {how.name}"
              + (" (BM25 + vectors)" if how.name == lexical.HYBRID else " ([embeddings] provider = \"none\")"))
    else:
        r.add("extras", "warn", f"lean install: gitmem's `{extras.EXTRA}` extra is missing ({', '.join(absent)}): "
              f"search is {how.name} (full text from the catalog{', no vectors' if how.lean else ''}); "
              "gitmem mcp and the organisation index need it",
              f"to add it: {extras.install_command()}")
    return how.lean


def _search_check(store: Store, r: Report, hashes: Mapping[str, str]) -> None:
    """The hybrid search's tables in the catalog (``search.hybrid.behind``): which of the memory files (``hashes``:
    id → content hash) the next search or ``gitmem sync`` would embed. Reads only."""
    from ..catalog import db as catalog_db
    from ..search import hybrid
    from ..search.embed import embedder_from_config

    if not catalog_db.db_path(store.repo.root).exists():
        r.add("index", "ok", "search vectors not built yet (the next search builds them, or `gitmem sync`)")
        return
    try:
        embedder = embedder_from_config(dict(store.config.get("embeddings", {})))
    except GitmemError:  # a bad [embeddings] table is reported by the config check
        return
    con = catalog_db.connect(store.repo.root)
    if con is None:
        r.add("index", "warn", "search vectors unreadable: the catalog cannot be opened", "run `gitmem sync --rebuild`")
        return
    try:
        todo = hybrid.behind(con, embedder, hashes)
    except Exception as e:  # noqa: BLE001 - a broken catalog is a finding, not a crash
        r.add("index", "warn", f"search vectors unreadable: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
              "run `gitmem sync --rebuild`")
        return
    finally:
        con.close()
    if todo.rebuilt:
        r.add("index", "ok", f"search vectors to be built for {todo.added} memories ({todo.reason}): the next search "
              "builds them, or `gitmem sync`")
    elif todo.added or todo.updated or todo.deleted:
        r.add("index", "ok", f"search vectors: {todo.added} new, {todo.updated} changed, {todo.deleted} removed "
              "memories not embedded yet (the next search embeds them, or `gitmem sync`)")
    else:
        r.add("index", "ok", f"search vectors in sync ({len(hashes)} memories)")


def _old_index_check(store: Store, r: Report) -> None:
    """The LanceDB index folder an older gitmem kept in git's folder (``layout.index_dir``): no longer read."""
    old = store.layout.index_dir
    if os.path.lexists(old):
        r.add("index", "warn", f"{store.display(old)}: the LanceDB index of an older gitmem, no longer read",
              "run `gitmem sync` (it removes it; it holds no memory)")


def _install_checks(r: Report) -> None:
    """Which gitmem runs (``dist.detect``): how and where it is installed, and what is wrong with that install."""
    inst = r.install = dist.detect()
    line = f"{dist.DIST_NAME} {inst.version}: {dist.describe(inst)}"
    on_path = dist.path_is_this(inst)
    if on_path is False:
        line += f"; the gitmem on PATH is another install ({inst.on_path})"
    elif on_path is None:
        line += "; no gitmem on PATH"
    r.add("install", "ok", line)
    for p in inst.problems:
        r.add("install", "warn", p, "then check again with `gitmem --version`")


def _sharing_checks(store: Store, r: Report) -> None:
    """Can team memories be committed (git does not ignore them), and did a hook fail at its job?"""
    from .. import problems
    from .share import UNIGNORE_HINT, ignored_reason

    why = ignored_reason(store)
    if why is not None:
        r.add("sharing", "error", f"team memories cannot be committed: {why}", UNIGNORE_HINT)
    for p in problems.current(store.repo.root):
        r.add(f"hook-{p.job}", "error", f"{p.message} (at {p.at})", p.hint)


def _daemon_checks(store: Store, r: Report) -> None:
    """The warm process: running or not is fine; one that does not answer, or a dead one's socket that cannot be
    removed, is not."""
    from . import daemon

    st = daemon.status(store.layout)
    if st.state == "not answering":
        r.add("daemon", "error", f"the warm process (pid {st.info.get('pid', '?')}) does not answer on {st.socket}",
              "run `gitmem daemon stop --all`; commands work without it meanwhile")
        return
    if st.state == "running":
        served = "serving this repository" if isinstance(st.info.get("root"), dict) else "this repository not loaded"
        r.add("daemon", "ok", f"warm process running: pid {st.info.get('pid')}, {st.info.get('requests')} requests, "
                              f"{st.info.get('roots_loaded')} repositories, {served} (one per user)")
        return
    if st.state == "starting":
        r.add("daemon", "ok", "warm process starting")
        return
    if st.problem and st.enabled:
        r.add("daemon", "warn", st.problem, "chmod 700 the folder if it is yours, or remove it (gitmem makes it "
              "again, 0700)")
        return
    left = daemon.clean_stale(store.layout) if st.stale else []
    if left:
        r.add("daemon", "error", f"a dead warm process left {', '.join(left)}, which cannot be removed",
              "remove it by hand (check the folder's owner and permissions)")
    else:
        why = "turned off" if not st.enabled else "the next read command starts it"
        r.add("daemon", "ok", f"no warm process running ({why})"
              + (f"; removed what a dead one left: {', '.join(st.stale)}" if st.stale else ""))
def _tidy_check(store: Store, r: Report) -> None:
    """What ``gitmem tidy`` would do (its rules, never the model): a count of each kind of finding and the command."""
    from .tidy import find

    try:
        rep = find(store, use_llm=False)
    except Exception as e:  # noqa: BLE001 - a finding of doctor, never a crash of it
        r.add("tidy", "warn", f"tidy could not check the memories: {type(e).__name__}: {e}",
              "run `gitmem tidy` to see the error")
        return
    if not rep.findings:
        r.add("tidy", "ok", f"tidy: no near-duplicates, contradictions or memories of long-deleted code "
              f"({rep.checked} memories)")
        return
    r.add("tidy", "warn", f"tidy: {rep.summary()}",
          "run `gitmem tidy` to see them; `gitmem tidy --apply` merges the duplicates and retires the deleted")


def _usable_folder(path: Path) -> str | None:
    """Why gitmem cannot keep its files in folder ``path`` (to be created if missing), or None."""
    probe = path
    while not os.path.lexists(probe):
        if probe.parent == probe:
            return "no existing parent folder"
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a folder"
    if not os.access(probe, os.R_OK | os.W_OK | os.X_OK):
        return f"{probe} is not readable and writable"
    return None


def _state_checks(store: Store, r: Report) -> None:
    """The folders in git's folder, an older gitmem's state, and what a migration kept aside."""
    lay = store.layout
    problems = []
    for what, folder in (("per-clone", lay.clone_dir), ("per-worktree", lay.worktree_dir),
                         ("local memory", lay.local_memories_dir)):
        why = _usable_folder(folder)
        if why:
            problems.append(why)
            r.add("state", "error", f"the {what} folder {store.display(folder)} cannot be used: {why}",
                  "make it a writable folder (move a file in its way aside); gitmem recreates what is missing")
    if not problems:
        r.add("state", "ok", f"per-clone state in {store.display(lay.clone_dir)}, this worktree's in "
              f"{store.display(lay.worktree_dir)}")
    _git_setup_check(store, r)
    for root in layout.worktree_roots(lay):
        for old in layout.old_state(root):
            r.add("state", "error", f"an older gitmem's state is still in {old}: its local memories are not seen",
                  f"check that {lay.clone_dir} is writable and read {lay.log_file('hooks.log')}; any gitmem "
                  "command moves it")
    try:
        aside = sorted(p.name for p in lay.local_memories_dir.iterdir()
                       if any(s in p.name for s in layout.KEPT_ASIDE))
    except OSError:
        aside = []
    for name in aside:
        base = name.split(".md", 1)[0] + ".md"
        r.add("state", "error", f"{name}: a copy of local memory {base} that a migration kept beside a "
              f"different one in {store.display(lay.local_memories_dir)}",
              f"compare the two, keep the right text in {base}, delete {name}")


def _git_setup_check(store: Store, r: Report) -> None:
    """A work tree whose git folder is elsewhere (``GIT_DIR``/``GIT_WORK_TREE``, ``core.worktree``): whether a gitmem
    process given only a folder (an agent hook, a command run without ``GIT_DIR``) finds it
    (docs/git-setups/bare.md)."""
    lay = store.layout
    git_dir = layout.separate_git_dir(lay.root)
    if git_dir is None:
        return
    recorded = layout.recorded_git_dir(lay.root)
    if recorded is not None and os.path.realpath(recorded) == os.path.realpath(git_dir):
        r.add("git-setup", "ok", f"work tree {lay.root} has its git folder elsewhere ({git_dir}): recorded in "
              f"{layout.work_trees_file()}, so agent hooks and commands run without GIT_DIR find it")
    else:
        r.add("git-setup", "warn", f"work tree {lay.root} has its git folder elsewhere ({git_dir}), not recorded in "
              f"{layout.work_trees_file()}: agent hooks, which get only a folder, will not find this repository",
              "run any gitmem command here with GIT_DIR and GIT_WORK_TREE set (it records them; the file must be "
              "writable)")


def _agent_checks(store: Store, r: Report) -> None:
    """Every hook and MCP command registered for gitmem in the project's agent files, run in a harmless way
    (``integrations.agents.probe``): one line per agent, ``ok`` only when every one reached gitmem here; an
    error names those that do not; a warning, a committed command that names one machine's path."""
    from ..integrations.agents import probe

    probes = probe.run(probe.registered(store.repo.root), store.repo.root)
    for agent in dict.fromkeys(p.agent for p in probes):
        mine = [p for p in probes if p.agent == agent]
        files = ", ".join(dict.fromkeys(store.display(p.file) for p in mine))
        fix = (f"run `gitmem install {agent}` in this repository (it tells the committed hooks where gitmem is on "
               "this machine), or put gitmem on the PATH the agent starts with")
        failed = [p for p in mine if not p.ok]
        hooks = [p for p in mine if p.kind == "hook"]
        if failed:
            names = ", ".join(p.label for p in failed)
            r.add(agent, "error", f"{agent}: {len(failed)} of {len(mine)} registered command(s) in {files} do not "
                  f"reach gitmem ({names}): {failed[0].detail}", fix)
        else:
            mcp = " and the MCP server" if any(p.kind == "mcp" for p in mine) else ""
            r.add(agent, "ok", f"{agent}: {len(hooks)} hook command(s){mcp} in {files} reach gitmem on this machine")
        fixed = [p for p in mine if not p.portable]
        if fixed:
            r.add(agent, "warn", f"{agent}: {store.display(fixed[0].file)} names a path of one machine in "
                  f"{len(fixed)} command(s) (an earlier gitmem): a teammate's agent does not find gitmem through it",
                  f"run `gitmem install {agent}` again and commit the file (the same bytes on every machine)")


def _claude_checks(store: Store, r: Report) -> None:
    """Claude Code hooks (project settings), sessions waiting for consolidation, recent hook errors."""
    from ..capture import spool
    from ..integrations.agents import claude_install as claude_code

    st = claude_code.status(store.repo.root)
    if st.get("error"):
        r.add("claude", "warn", st["error"], "fix the file, then `gitmem install claude`")
    elif any(st["events"].values()) and not all(st["events"].values()):
        missing = ", ".join(e for e, on in st["events"].items() if not on)
        r.add("claude", "warn", f"Claude Code hooks partly registered (missing: {missing})",
              "run `gitmem install claude`")
    from ..catalog import db as catalog_db

    if catalog_db.db_path(store.repo.root).exists():
        con = catalog_db.connect(store.repo.root)
        if con is None:
            r.add("hook-index", "warn", f"{store.display(catalog_db.db_path(store.repo.root))} is unreadable",
                  "run `gitmem sync` (it is rebuilt from the memory files)")
        else:
            current = catalog_db.is_current(con, store.repo.root)
            r.add("hook-index", "ok", f"hook index: {catalog_db.count(con)} memories"
                  + ("" if current else " (a refresh is due; the next session start does it)"))
            con.close()
    pending = spool.pending_sessions(store.repo.root)
    if pending:
        r.add("spool", "warn", f"{len(pending)} captured session(s) not consolidated yet",
              "run `gitmem consolidate` (sessions still open are consolidated when they end)")
    for name in ("claude-hooks.log", "consolidate.log"):
        log = store.log_dir / name
        if log.is_file():
            tail = log.read_text("utf-8", "replace").splitlines()[-200:]
            errors = [ln for ln in tail if " error: " in ln or "Traceback" in ln]
            if errors:
                r.add(name, "warn", f"{len(errors)} recent error(s) in {store.display(log)}",
                      "read the log; hooks never block Claude Code, but their work was skipped")
