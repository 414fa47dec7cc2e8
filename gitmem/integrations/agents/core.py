"""The agent-neutral hook core: what gitmem does for each normalised event, once, for every agent.

========================  ===========================================================  ==========
event (``events``)        what gitmem does                                             time limit
========================  ===========================================================  ==========
SessionStart              the ``gitmem context`` of the current focus                  8 s
                          (``session_start``), then the developer's personal
                          memories (``personal_session``); records the start commit;
                          after compaction, forgets what the session was given and
                          gives again the memories of the files it worked on
Prompt                    spools the prompt; memories the prompt names (paths,         4 s
                          symbols) or matches (BM25; with the warm process up, BM25
                          and vectors: ``warm_search``) not yet given this session
                          (or named, and given with a status that changed since);
                          then the personal memories it matches (``personal_prompt``)
BeforeFile                memories anchored to the file — first those given with a     3 s
                          status that changed since, then those on the symbol the
                          edit's old text falls in — not yet given (or changed)
BeforeShell               the ``constraint``, ``gotcha`` and ``bugfix`` memories the    3 s
                          command concerns (a file or symbol it runs or targets, a
                          command they quote: ``shellwords``) not yet given (or changed)
AfterTool                 appends the redacted call to the session's spool              3 s
AfterToolFailure          the same; then the memories matching the failure ("seen       3 s
                          before": its exception names, test ids, error codes,
                          traceback frames; ``failure_terms``) not yet given (or
                          changed)
Stop                      spools the agent's last message (or the transcript's path);  3 s
                          with ``consolidate``, hands the spool to a detached
                          consolidation (which reconciles it with the transcript)
SessionEnd                spools the end (with the transcript's path) and hands         1.2 s
                          consolidation to a detached process, which reconciles the
                          spool with the agent's transcript first (``reconcile``)
BeforeCompact             forgets what the session was given (what is given from now    3 s
                          on may not survive the compaction either)
AfterCompact              forgets what the session was given                            3 s
========================  ===========================================================  ==========

Owns: the handlers (``handle``), what each session was given and with which status (``<sessions>/<key>.given``;
a memory whose status changed since — ``is_news`` — is given again at the next event touching its code, saying
what it was given as: ``news``, ``session_items``), the status a hook may claim (``as_shown``: never "fresh" for
a file changed since gitmem last checked it) and the files
it worked on (``<sessions>/<key>.worked``: read, edited, run; given again after a compaction), context
held for an agent's next event that can take it (``hold``, ``take_held``: ``<sessions>/<key>.held``),
the hook index's background refresh (one detached ``gitmem.catalog.sync`` per
``SYNC_RETRY_S``), the consolidation of orphaned spools, the time limits and the never-fail
wrapper (``run``: always returns 0; errors go redacted to ``<logs>/<agent>-hooks.log``). Each memory a
handler gives in full is noted in the clone's use log (``usage.note``; one append per hook call,
``usage.flush`` in ``run``); near-ties are ordered by the decay factor (``fading``, ``usage.fade``).

Guarantees: a handler returns the text to inject (packed by ``rank.render`` in its ``HOOK``
style, at most 9,500 characters for BeforeFile and Prompt) or None; the repository is found
from the event's ``cwd``, else the files it names, else its project folder, and must hold
``.gitmem/``.

Must not import: anything outside the standard library and gitmem's stdlib-only modules
(``layout``, ``infra``, ``config``, ``catalog.db``, ``rank.render``, ``rank.mentions``, ``rank.fusion``,
``rank.relevance``, ``stopwords``, ``capture.spool``, ``capture.redact``, ``daemon.client``, ``personal``) at module
level or on the per-tool-call paths; SessionStart imports the library (``session_start``) when it runs.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ... import agent_edits, config, infra, layout, usage
from ...capture import redact, spool
from ...provenance import WEIGHT
from . import capture
from .events import (
    AfterCompact,
    AfterTool,
    AfterToolFailure,
    BeforeCompact,
    BeforeFile,
    BeforeShell,
    Event,
    Prompt,
    SessionEnd,
    SessionStart,
    Stop,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    import sqlite3
    from collections.abc import Callable, Iterable
    from typing import Any

    from ...rank import render

#: Seconds each event may take before the handler gives up (nothing injected, exit 0).
TIME_LIMITS: dict[type[Event], float] = {SessionStart: 8.0, Prompt: 4.0, BeforeFile: 3.0, SessionEnd: 1.2}
DEFAULT_TIME_LIMIT = 3.0
#: At most this many memories per Prompt injection (the first PROMPT_DETAIL in full).
MAX_PROMPT_MEMORIES = 5
PROMPT_DETAIL = 3
#: Memories taken per path or symbol the prompt names (newest first): a common name can hold thousands.
NAMED_LIMIT = 100
#: BM25 hits (the catalog's, and the warm process's hybrid hits) considered per prompt; ranked by
#: ``rank.fusion.prompt_ranking`` with the memories the prompt names.
PROMPT_SEARCH_HITS = 20
#: Seconds the prompt hook waits for the warm process's hybrid search (connect, send, answer) before it
#: ranks by BM25 alone (``warm_search``). The prompt hook's target is 300 ms whole process (``bench/hooks.py``)
#: and it takes ~100 ms without the warm process at 10,000 memories (README), so one whose warm process does
#: not answer still ends near 300 ms. Measured at 10,000 memories on a 2-core machine at load 18 (``python -c
#: pass`` ~180 ms there): a search round trip took 118 ms median, 220 ms p90 (``bench/README.md``).
WARM_SEARCH_TIMEOUT_S = 0.2
#: The organisation's memories (``[org] inject = true``): at most this many per prompt and per session start, each
#: in its own small budget (``[org] prompt_budget`` / ``session_budget``) after the repository's own; asked of
#: the org index for a few more (``ORG_SEARCH_HITS``) so that the floor and the memories already given leave some.
MAX_ORG_MEMORIES = 3
ORG_SEARCH_HITS = 10
#: Seconds the prompt hook waits for the warm process's org search (``warm_org_search``), asked in a thread
#: while the catalog is read, like ``WARM_SEARCH_TIMEOUT_S``: a warm org search (one LanceDB hybrid query on
#: an open connection) takes about what the local one does; past it the prompt gets no org memories.
ORG_SEARCH_TIMEOUT_S = 0.25
ORG_PROMPT_HEADER = "# gitmem: memories of other repositories of the organisation, relevant to this prompt\n"
ORG_SESSION_HEADER = "# gitmem: memories of other repositories of the organisation about this one ({name})\n"
#: At most this many memories per BeforeFile injection.
MAX_FILE_MEMORIES = 6
#: A spool untouched this long (seconds) belongs to a session that ended without SessionEnd.
ORPHAN_AFTER_S = 3600.0
#: Touched (in ``run_dir``) when a hook starts a hook-index refresh; another is started only
#: SYNC_RETRY_S seconds later.
SYNC_MARKER = "catalog-sync.requested"
#: The status shown for a memory on a file that changed after its status was checked (``rank.render``
#: marks it with ⚠ like stale and deleted).
MAY_BE_STALE = "may be stale"
SYNC_RETRY_S = 10.0
#: Spool records of tool calls (``capture``'s vocabulary).
TOOL_RECORD = "PostToolUse"
TOOL_FAILURE_RECORD = "PostToolUseFailure"

PROMPT_HEADER = "# gitmem: memories relevant to this prompt\n"
#: The memory types given at the moment of action (before a shell command, after a failure), most binding
#: first: a rule to keep, a trap to avoid, a fix already found. Decisions, features and changes explain
#: code; they are for reading it (before a file), not for the seconds before a command runs.
ACTION_TYPES = ("constraint", "gotcha", "bugfix")
#: At most this many memories before a shell command or after a failure (all offered in full).
MAX_ACTION_MEMORIES = 4
#: Memories taken per file a command targets (newest first): a file can hold hundreds.
ACTION_PER_PATH = 50
#: Before a shell command: how a memory concerns it (higher first): a symbol it targets (a test id), a
#: command it quotes, a file it runs or targets.
SHELL_SYMBOL_SCORE = 3.0
SHELL_COMMAND_SCORE = 3.0
SHELL_FILE_SCORE = 2.0
#: Longest command shown in the before-shell header.
SHELL_HEADER_CHARS = 80
#: Characters of a failure's text read for its salient terms (an error's head and tail hold them).
FAILURE_TEXT_CHARS = 20_000
#: BM25 hits considered per failure; a hit must score at least ``fusion.MIN_RELATIVE_BM25`` of the best one and
#: name one of the failure's distinctive terms in its own text (the precision guard, ``failure_terms``).
FAILURE_SEARCH_HITS = 20
#: Files worked on kept per session, and given again after a compaction (most recent first).
MAX_WORKED_FILES = 20


class _TimeUp(BaseException):
    pass


# -- where things are ---------------------------------------------------------------------------


def state(root: Path) -> layout.Layout:
    """The layout of the work tree at ``root`` (``layout.of``: an older gitmem's state is moved first).

    Raises:
        OSError: ``root/.git`` cannot be read.
    """
    return layout.of(root)


def resolve_root(event: Event) -> Path | None:
    """The work tree with a ``.gitmem/`` folder ``event`` is about: from its ``cwd``, else the files it
    names, else its ``project_dir``; None when there is none."""
    base = Path(event.cwd) if event.cwd and os.path.isabs(event.cwd) else Path.cwd()
    starts = [base] + [base / p for p in event.paths]
    if event.project_dir:
        starts.append(Path(event.project_dir))
    for s in starts:
        try:
            root = layout.find_root(Path(os.path.abspath(s)))
        except (OSError, ValueError):
            continue
        if root is not None and (root / layout.GITMEM_DIR).is_dir():
            return root
    return None


# -- session state: which memories this session was given, with which status --------------------

#: ``<sessions>/<key>.given``: one line per memory given in full, ``id<TAB>status<TAB>when``: the status it was
#: shown with (a catalog status, ``MAY_BE_STALE``, or ``UNCHECKED``) and the event that gave it (``session
#: start``, ``a prompt``, ``a read of src/a.py`` …); a later line for an id replaces an earlier one. A line of a
#: bare id (an older gitmem's) is a memory given with a status not known: it is not given again for a change.
GIVEN_SEP = "\t"
#: The status recorded for a memory shown as "status not checked yet" (no status in the catalog).
UNCHECKED = "unchecked"
#: Characters of the event recorded with a given memory (``when``).
GIVEN_WHEN_CHARS = 120


def _given_path(lay: layout.Layout, key: str) -> Path:
    return lay.sessions_dir / f"{key}.given"


def given_statuses(lay: layout.Layout, key: str) -> dict[str, tuple[str, str, str]]:
    """id → (the status it was last given with: a catalog status, ``MAY_BE_STALE`` or ``UNCHECKED``, "" when
    not known; the event that gave it, "" when not known; the last checked status it was given with — the
    last one not ``MAY_BE_STALE`` —, "" when none) of the memories given in full to session ``key`` (empty
    when none or unreadable)."""
    try:
        text = _given_path(lay, key).read_text("utf-8")
    except (OSError, ValueError):
        return {}
    out: dict[str, tuple[str, str, str]] = {}
    for ln in text.splitlines():
        mid, _, rest = ln.partition(GIVEN_SEP)
        mid = mid.strip()
        if mid:
            status, _, when = (x.strip() for x in rest.partition(GIVEN_SEP))
            checked = out.get(mid, ("", "", ""))[2] if status == MAY_BE_STALE else status
            out[mid] = (status, when, checked)
    return out


def given_ids(lay: layout.Layout, key: str) -> set[str]:
    """Ids of the memories given in full to session ``key`` so far (empty when none or unreadable)."""
    return set(given_statuses(lay, key))


def mark_given(lay: layout.Layout, key: str, ids: list[str], statuses: dict[str, str] | None = None,
               when: str = "") -> None:
    """Record ``ids`` as given to session ``key`` (``infra.append_records``: parallel hooks do not interleave),
    each with the status it was shown with (``statuses``: id → ``shown_status``; an id without one is recorded
    bare, status not known) and the event that gave it (``when``, e.g. ``a read of src/a.py``).

    Raises:
        OSError: the sessions folder cannot be written.
    """
    when = " ".join(when.split())[:GIVEN_WHEN_CHARS]
    known = statuses or {}
    infra.append_records(_given_path(lay, key), [GIVEN_SEP.join((i, known[i], when)) if known.get(i) else i
                                                 for i in ids])


def shown_status(row: dict[str, Any]) -> str:
    """The status a catalog row (``as_shown``) is shown with, as ``.given`` records it: its status, or
    ``UNCHECKED``."""
    return str(row.get("status") or UNCHECKED)


def is_news(was: tuple[str, str, str] | None, now: str) -> bool:
    """Whether a memory given as ``was`` (``given_statuses``: last status shown, event, last checked status
    shown; None: never given) is to be given again now that it would be shown ``now`` (``shown_status``).

    Never given: yes. A status not known (a bare id, an older gitmem's): no. ``MAY_BE_STALE`` now: only when
    it was last shown ``fresh`` (a doubt adds nothing to a warning, to "not checked yet", or to the same doubt).
    A checked status now: when it differs from the last checked one shown (after a doubt settled as it was —
    the agent's own edit left the memory fresh — nothing is given again: editing a file does not make its
    memories come back at every event), or, when none was, from the doubt; ``UNCHECKED`` → ``fresh``: no
    (nothing to correct)."""
    if was is None:
        return True
    shown, _, checked = was
    if not shown or shown == now:
        return False
    if now == MAY_BE_STALE:
        return shown == "fresh"
    if now == (checked or shown):
        return False
    return not ((checked or shown) == UNCHECKED and now == "fresh")


def as_shown(con: sqlite3.Connection, root: Path, lay: layout.Layout,
             rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` (``catalog.db.rows``) with the status a hook may claim now: a memory ``fresh`` (or not checked
    yet) whose anchored file changed since gitmem last checked it (``catalog.db.changed_since_checks``: the
    agent's edit, a ``git reset --hard``, any change no git hook saw) is ``MAY_BE_STALE``, with the files as
    its reason, and a re-check is started in the background (``request_sync``). One ``stat`` per anchored file.

    Raises:
        sqlite3.Error: the catalog cannot be read.
        OSError: the re-check could not be started.
    """
    from ...catalog import db as catalog_db

    paths = catalog_db.anchored_paths_of(con, [r["id"] for r in rows]) if rows else {}
    changed = catalog_db.changed_since_checks(con, root, sorted({p for ps in paths.values() for p in ps}))
    if not changed:
        return rows
    request_sync(root, lay)  # every status on these files is re-checked, warnings included
    out = []
    for r in rows:
        hit = sorted(paths.get(r["id"], set()) & changed) if r.get("status") in (None, "fresh") else []
        if hit:
            r = {**r, "status": MAY_BE_STALE,
                 "reason": f"{', '.join(hit)} changed since gitmem last checked it (re-checking now)"}
        out.append(r)
    return out


def news(con: sqlite3.Connection, root: Path, lay: layout.Layout, ids: list[str],
         given: dict[str, tuple[str, str, str]]) -> dict[str, dict[str, Any]]:
    """Of ``ids``, those given before (``given``: ``given_statuses``) whose status changed since (``is_news``):
    id → its row as shown now (``as_shown``). Reads only the rows of the ids given before.

    Raises:
        sqlite3.Error: the catalog cannot be read.
        OSError: a re-check could not be started.
    """
    from ...catalog import db as catalog_db

    before = [i for i in dict.fromkeys(ids) if given.get(i, ("", "", ""))[0]]
    if not before:
        return {}
    rows = as_shown(con, root, lay, catalog_db.rows(con, before))
    return {r["id"]: r for r in rows if is_news(given[r["id"]], shown_status(r))}


def session_items(rows: list[dict[str, Any]], given: dict[str, tuple[str, str, str]],
                  again: Iterable[str]) -> list[render.Item]:
    """``rows`` as ``rank.render`` items; those given again (``again``: ids, ``news``) say what they were given
    as and when (``render.given_again``: "was given as fresh at session start; now ⚠ stale: …"); one that
    replaces (``supersedes``) a memory given to this session says so (``render.replaces_given``)."""
    from ...rank import render

    again = set(again)
    items = []
    for r in rows:
        item = render.item_from_row(r)
        if r["id"] in again and r["id"] in given:
            was, when, _ = given[r["id"]]
            item.status = render.given_again(None if was == UNCHECKED else was, when, item.status)
        replaced = [i for i in r.get("supersedes") or () if i in given]
        if replaced:  # a pull brought the memory that replaces one this session was given: say which
            item.status = render.replaces_given(replaced, [given[i][1] for i in replaced], item.status)
        items.append(item)
    return items


def mark_shown(lay: layout.Layout, key: str, packed: render.Packed, rows: list[dict[str, Any]], when: str) -> None:
    """Record the memories ``packed`` gave in full (``mark_given``) with the status each was shown with.

    Raises:
        OSError: the sessions folder cannot be written.
    """
    mark_given(lay, key, packed.detailed, {r["id"]: shown_status(r) for r in rows}, when)


#: ``<sessions>/<key>.events.jsonl``: one JSON line per time gitmem gave session ``key`` something (``log_given``).
EVENTS_SUFFIX = ".events.jsonl"

#: Characters of the (redacted) prompt kept in a session's event log: enough to recognise it.
LOGGED_PROMPT_CHARS = 200


def events_path(lay: layout.Layout, key: str) -> Path:
    """Session ``key``'s event log (``log_given``): what it was given, when, and at which event."""
    return lay.sessions_dir / f"{key}{EVENTS_SUFFIX}"


def log_given(lay: layout.Layout, key: str, event: Event, ids: list[str], listed: list[str] | None = None,
              **about: str) -> None:
    """Append one JSON line to session ``key``'s event log: ``{"time" (UTC), "event" (SessionStart, Prompt,
    BeforeFile, AfterCompact), "agent", "ids" (given in full), "listed" (titles only), **about}`` (``about``:
    ``prompt`` cut to ``LOGGED_PROMPT_CHARS``, ``file`` and ``kind``, ``source``) — read by ``gitmem ui``'s
    sessions view. One append, like
    ``mark_given``; pruned with the session's other state (``capture.worker.prune_sessions``). Never raises:
    the log is for people, the hook's answer does not depend on it."""
    import json

    line = {"time": infra.utc_now(), "event": type(event).__name__, "agent": event.agent, "ids": ids,
            "listed": listed or [], **{k: v for k, v in about.items() if v}}
    try:
        infra.append_records(events_path(lay, key), [json.dumps(line, ensure_ascii=False)])
    except OSError:
        pass


def forget_given(lay: layout.Layout, key: str) -> None:
    """Start over (after compaction the agent no longer has what it was given); never raises."""
    try:
        _given_path(lay, key).unlink()
    except OSError:
        pass


def _worked_path(lay: layout.Layout, key: str) -> Path:
    return lay.sessions_dir / f"{key}.worked"


def mark_worked(lay: layout.Layout, key: str, rels: list[str]) -> None:
    """Record that session ``key`` read, edited or ran the repo-relative files ``rels`` (one append; never
    raises: this is a hint for after a compaction)."""
    try:
        infra.append_records(_worked_path(lay, key), rels)
    except OSError:
        pass


def worked_files(lay: layout.Layout, key: str) -> list[str]:
    """The files session ``key`` worked on, most recent first, at most ``MAX_WORKED_FILES`` (empty when none
    or unreadable)."""
    try:
        lines = _worked_path(lay, key).read_text("utf-8").splitlines()
    except (OSError, ValueError):
        return []
    return list(dict.fromkeys(ln.strip() for ln in reversed(lines) if ln.strip()))[:MAX_WORKED_FILES]


def _held_path(lay: layout.Layout, key: str) -> Path:
    return lay.sessions_dir / f"{key}.held"


def hold(event: Event, text: str | None) -> None:
    """Keep ``text`` for ``event``'s session until ``take_held``: for an agent that cannot take context at
    the event that produced it (Cursor's beforeSubmitPrompt), its next event that can carries it. Appends
    (several held texts are joined); nothing without a repository or text.

    Raises:
        OSError: the sessions folder cannot be written.
    """
    text = (text or "").strip()
    root = resolve_root(event) if text else None
    if root is None:
        return
    p = _held_path(state(root), spool.session_key(event.session_id))
    p.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (text + "\n\n").encode("utf-8"))
    finally:
        os.close(fd)


def take_held(event: Event) -> str | None:
    """The text held for ``event``'s session (``hold``), removed as it is taken; None when there is none.
    Never raises."""
    try:
        root = resolve_root(event)
        if root is None:
            return None
        p = _held_path(state(root), spool.session_key(event.session_id))
        taken = p.with_name(p.name + f".{os.getpid()}")
        os.replace(p, taken)  # atomic: two parallel hooks never both take it
        try:
            text = taken.read_text("utf-8", errors="replace").strip()
        finally:
            taken.unlink()
    except OSError:
        return None
    return text or None


def fading(con: sqlite3.Connection, cfg: dict[str, Any], ids: list[str]) -> dict[str, float]:
    """id → decay factor of ``ids`` (``usage.fading``; ``cfg``: config.toml, its ``[ranking]``) for ordering
    near-ties: ``{}`` (nothing decays) when decay is off or there are fewer than two to order."""
    half_life = config.decay_half_life(cfg) if len(ids) > 1 else None
    return usage.fading(con, ids, half_life) if half_life is not None else {}


def _private_globs(cfg: dict[str, object]) -> tuple[str, ...]:
    """Redaction's default private-file globs plus ``[capture] private_files``."""
    return tuple(redact.DEFAULT_PRIVATE_GLOBS) + config.private_files(cfg)


# -- the hook index ------------------------------------------------------------------------------


def hook_index(root: Path, lay: layout.Layout) -> sqlite3.Connection | None:
    """The hook index (None when there is none yet); a refresh is started in the background when it is
    missing or out of date, at most one per ``SYNC_RETRY_S`` seconds.

    Raises:
        OSError: the refresh could not be started.
    """
    from ...catalog import db as catalog_db

    con = catalog_db.connect(root)
    if con is None or not catalog_db.is_current(con, root):
        request_sync(root, lay)
    return con


def request_sync(root: Path, lay: layout.Layout) -> None:
    """Start ``python -m gitmem.catalog.sync ROOT`` in the background, at most one per ``SYNC_RETRY_S`` seconds.

    Raises:
        OSError: the process could not be started.
    """
    marker = lay.run_dir / SYNC_MARKER
    age = infra.age_s(marker)
    if age is None or age >= SYNC_RETRY_S:  # one refresh at a time, not one per tool call
        infra.touch(marker)
        infra.spawn_detached("gitmem.catalog.sync", str(root), cwd=root)


def edited_lines(root: Path, rel: str, old_text: str | None) -> tuple[int, int] | None:
    """1-based inclusive line span of the first occurrence of ``old_text`` in file ``rel`` now; None if absent."""
    if not old_text:
        return None
    try:
        text = (root / rel).read_text("utf-8", errors="replace")
    except OSError:
        return None
    i = text.find(old_text)
    if i < 0:
        return None
    start = text.count("\n", 0, i) + 1
    return start, start + old_text.rstrip("\n").count("\n")


# -- handlers ------------------------------------------------------------------------------------


def transcript_of(event: Event) -> dict[str, str]:
    """The spool fields naming the agent's transcript (``agent``, ``transcript``, and ``cwd``: the folder the
    transcript's relative paths are relative to): the consolidation reconciles the spool with it
    (``reconcile``); empty when the agent gave none."""
    if not event.transcript:
        return {}
    return {"agent": capture.clean(event.agent, 40), "transcript": capture.clean(event.transcript, 4_000),
            "cwd": capture.clean(event.cwd, 4_000)}


def on_session_start(event: SessionStart, root: Path, lay: layout.Layout, key: str) -> str | None:
    """The session's opening context (and one line when config.toml has sections or keys of a newer gitmem:
    ``config.unknown_warning``); records the start commit; consolidates orphaned spools."""
    from .session_start import session_start_context

    worked: list[str] = []
    if event.source == "compact":
        forget_given(lay, key)  # the compacted conversation no longer holds what it was given
        worked = [str(root / rel) for rel in worked_files(lay, key)]  # … so the files it worked on come back
    raw = config.read_cached(lay)
    org = session_org_start(root, lay, raw)  # the organisation's memories, off by default: in a thread meanwhile
    text, shown, head = session_start_context(root, cwd=event.cwd or None, files=worked,
                                              budget_tokens=config.budget(raw, "session_budget"))
    org_text = session_org_text(lay, key, org)
    if org_text:
        text = f"{text.rstrip()}\n\n{org_text}" if text else org_text
    mine = personal_session(root, lay, key, raw)
    if mine:  # the developer's own memories, after the project's (their own header, frame and label)
        text = f"{text.rstrip()}\n\n{mine}" if text else mine
    warning = config.unknown_warning(raw, layout.CONFIG_FILE)
    if warning:  # a teammate's newer gitmem wrote it: said in one line, never an outage
        text = f"{text.rstrip()}\n\ngitmem warning: {warning}" if text else f"gitmem warning: {warning}"
    capture.spool_record(root, key, "SessionStart", {"head": head, "source": capture.clean(event.source, 40),
                                                     **transcript_of(event)})
    mark_given(lay, key, shown, catalog_statuses(root, shown), SESSION_START)
    log_given(lay, key, event, shown, source=capture.clean(event.source, 40))
    usage.note(lay, usage.GIVEN, "session", shown)
    if orphaned_spools(root, key):  # sessions that ended without SessionEnd (a crash, a killed terminal)
        infra.spawn_detached("gitmem.capture.worker", str(root), cwd=root)
    from ...daemon import client as daemon_client

    daemon_client.ensure_started(lay)  # the warm process, for the session's commands and prompts (detached)
    return text


def session_org_start(root: Path, lay: layout.Layout,
                      cfg: dict[str, Any]) -> tuple[Any, list[Any], float, float] | None:
    """With ``[org] inject = true`` (``org_inject_on``), a thread running ``session_start.org_for_session``
    (its result or exception appended to the list), when it started and how long to wait for it (``[org]
    session_timeout``, seconds); None when org injection is off. The thread is a daemon: one still searching
    when the session's text is ready is left behind (``session_org_text``)."""
    user = config.read_user_cached(lay)
    if not org_inject_on(cfg, user):
        return None
    import threading

    from ...org.settings import of_config
    from .session_start import org_for_session

    timeout_s = of_config(cfg, user)[0].session_timeout

    out: list[Any] = []

    def run() -> None:
        try:
            out.append(org_for_session(root, lay, ORG_SEARCH_HITS))
        except Exception as e:  # noqa: BLE001 - logged by the caller; the session starts without them
            out.append(e)

    t = threading.Thread(target=run, daemon=True, name="gitmem-org")
    t.start()
    return t, out, time.monotonic(), timeout_s


def session_org_text(lay: layout.Layout, key: str, org: tuple[Any, list[Any], float, float] | None) -> str | None:
    """The organisation's memories for the session (``session_org_start``'s search, waited for until ``[org]
    session_timeout`` seconds after it started), packed in ``[org] session_budget`` and marked given; None when
    off, late, failed (logged to ``<logs>/org-hooks.log``) or empty.

    Raises:
        OSError: the sessions folder cannot be written.
    """
    if org is None:
        return None
    thread, out, started, timeout_s = org
    thread.join(max(0.0, timeout_s - (time.monotonic() - started)))
    if not out:
        infra.append_log(lay.log_file(ORG_LOG), f"{infra.utc_now()} session start: no org memories: the search "
                                                f"took over {timeout_s:g} s ([org] session_timeout)\n")
        return None
    got = out[0]
    if isinstance(got, BaseException):
        infra.append_log(lay.log_file(ORG_LOG), f"{infra.utc_now()} session start: no org memories: "
                                                f"{type(got).__name__}: {got}\n")
        return None
    if not got or not got["hits"]:
        return None
    packed = pack_org(got["hits"], got["session_budget"], ORG_SESSION_HEADER.format(name=got["name"]))
    if packed is None:
        return None
    mark_org_given(lay, key, packed, got["hits"], SESSION_START)
    return packed.text


#: The log of the organisation's memories the hooks could not give (``session_org_text``).
ORG_LOG = "org-hooks.log"


#: How ``.given`` names the session-start event (``mark_given``'s ``when``).
SESSION_START = "session start"


def personal_session(root: Path, lay: layout.Layout, key: str, cfg: dict[str, Any]) -> str | None:
    """The developer's personal memories for session ``key``'s start (``session_start.personal_context``: in the
    ``[personal] session_budget``, labelled ``personal``), marked given in this session and noted as used in the
    personal repository's use log; None when there is no personal repository (one ``stat``), it is off here, or
    it holds nothing. Never raises: the project's context goes out whatever happens here (a failure is logged)."""
    from ... import personal

    proot = personal.root(root)
    if proot is None:
        return None
    try:
        from ...ops.personal import user_config_warning

        bad = user_config_warning()  # the commands say it; a hook only logs it (read as if not set: one rule)
        if bad is not None:
            _log_personal(lay, "at session start (your config.toml)", ValueError(bad))
        from .session_start import personal_context

        got = personal_context(proot, cfg, config.read_user_cached(lay))
        if got is None:
            return None
        packed, rows = got
        mark_shown(lay, key, packed, rows, SESSION_START)
        usage.note(layout.of(proot), usage.GIVEN, "session", packed.detailed)
        return packed.text or None
    except Exception as e:  # noqa: BLE001 - the personal scope never costs the session its project's memories
        _log_personal(lay, "at session start", e)
        return None


def catalog_statuses(root: Path, ids: list[str]) -> dict[str, str]:
    """id → ``shown_status`` of ``ids`` as the catalog holds them (the session-start context just recorded
    them: ``session_start.statuses_of``); {} when it cannot be read (the ids are then recorded as given with a
    status not known). Imports the library: for SessionStart only."""
    from .session_start import statuses_of

    return {mid: status or UNCHECKED for mid, status in statuses_of(root, ids).items()}


def orphaned_spools(root: Path, key: str) -> bool:
    """Whether another session's spool has not been written to for ``ORPHAN_AFTER_S`` seconds."""
    folder = spool.spool_dir(root)
    now = time.time()
    try:
        with os.scandir(folder) as it:
            for e in it:
                if (e.name.endswith((spool.LIVE_SUFFIX, spool.BATCH_SUFFIX)) and not e.name.startswith(key + ".")
                        and now - e.stat().st_mtime > ORPHAN_AFTER_S):
                    return True
    except OSError:
        return False
    return False


def warm_search(lay: layout.Layout, query: str) -> list[dict[str, Any]] | None:
    """The warm process's hybrid hits for ``query`` (BM25 + vectors fused by reciprocal rank fusion, after
    ``search.hybrid.relevant``'s floor), best first, each ``{"id", ...}``; None when no warm process answers
    within ``WARM_SEARCH_TIMEOUT_S`` or its answer is not that shape. Never raises, never starts one.

    No socket file means no warm process: that costs one ``stat`` (no connect, no log line). Starting one
    is the session-start hook's job (``on_session_start``); a detached spawn per prompt would cost more
    than the search saves.
    """
    try:
        if not os.path.exists(lay.daemon_socket):
            return None
        from ...daemon import client

        reply = client.request(lay, "search", {"query": query, "limit": PROMPT_SEARCH_HITS},
                               timeout_s=WARM_SEARCH_TIMEOUT_S, start=False)
        hits = reply.get("hits") if isinstance(reply, dict) else None
        if not isinstance(hits, list) or not all(isinstance(h, dict) and isinstance(h.get("id"), str) for h in hits):
            if reply is not None:
                client.log(lay, "client search: an answer without a list of hits: BM25 alone")
            return None
        return hits
    except Exception:  # noqa: BLE001 - the warm process is an optimisation: the hook falls back to BM25
        return None


def prompt_candidates(con: sqlite3.Connection, prompt: str, text_floors: tuple[float, float] | None = None,
                      ) -> tuple[list[str], list[str], list[tuple[str, float]]]:
    """What the catalog has for ``prompt``: (ids of memories on the paths it names, on the symbols it names
    (``rank.mentions``), its text hits above the floor (``prompt_text_hits``)), for ``rank.fusion.prompt_ranking``.

    Raises:
        sqlite3.Error: the catalog cannot be read.
    """
    from ...catalog import db as catalog_db
    from ...rank.mentions import prompt_mentions

    paths, names = prompt_mentions(prompt, catalog_db.anchored_paths(con))
    path_ids = [mid for ids in catalog_db.paths_like(con, paths, NAMED_LIMIT).values() for mid in ids]
    symbol_ids = [mid for ids in catalog_db.symbols_named(con, names, NAMED_LIMIT).values() for mid in ids]
    return path_ids, symbol_ids, prompt_text_hits(con, prompt, text_floors)


def prompt_text_hits(con: sqlite3.Connection, prompt: str,
                     text_floors: tuple[float, float] | None = None) -> list[tuple[str, float]]:
    """The catalog's BM25 hits for ``prompt``'s content terms (``stopwords.content_terms``: no stop word of its
    language, no request word), at most ``PROMPT_SEARCH_HITS``, best first as (id, FTS5 score), keeping those whose
    absolute text score (``rank.relevance.match_score``) reaches ``rank.relevance.text_floor`` for ``text_floors``
    = (min_bm25, min_coverage) (None: the defaults; ``config.relevance_floors``). ``[]`` for a prompt without
    content terms ("explain the code") or whose hits all fall below the floor.

    Raises:
        sqlite3.Error: the catalog cannot be read.
    """
    from ... import stopwords
    from ...catalog import db as catalog_db
    from ...rank import relevance

    terms = stopwords.content_terms(prompt)
    hits = catalog_db.search_terms(con, terms, PROMPT_SEARCH_HITS) if terms else []
    if not hits:
        return []
    min_bm25, min_coverage = text_floors or (relevance.DEFAULT_MIN_BM25, relevance.DEFAULT_MIN_COVERAGE)
    texts = catalog_db.fts_texts(con, [mid for mid, _ in hits])
    docs = catalog_db.term_docs(con, sorted({relevance.fold(t) for t in terms}))
    n = catalog_db.count(con)
    need = relevance.text_floor(relevance.self_score(terms, docs, n), min_bm25, min_coverage)
    scores = {mid: relevance.match_score(terms, text, docs, n) for mid, text in texts.items()}
    return relevance.lexical_floor(hits, scores, need)


def prompt_hybrid(prompt: str, hybrid: list[dict[str, Any]] | None, text_hits: list[tuple[str, float]],
                  min_similarity: float | None = None, con: sqlite3.Connection | None = None,
                  text_floors: tuple[float, float] | None = None,
                  shared_fraction: float | None = None) -> list[dict[str, Any]] | None:
    """The warm process's hybrid hits for ``prompt`` the prompt hook may use (``rank.relevance.vector_floor``):
    those the text floor kept (in ``text_hits``) or whose cosine similarity reaches ``min_similarity`` (None:
    ``DEFAULT_MIN_SIMILARITY``), or the search's own floor for a memory whose text reaches the text floor for
    ``text_floors`` (None: the defaults) with ``min_bm25`` scaled by ``shared_fraction`` (None:
    ``SHARED_TEXT_FRACTION``): text and meaning agree. Only the absolute part is relaxed: a long prompt (a
    pasted message) needs fewer shared words, a short one still most of its words. Texts are read from the
    catalog ``con`` (without it, no memory is taken as sharing words); none for a
    prompt without content terms ("explain the code": its vector is that of "code", close to any memory about
    code); None when the warm process did not answer.

    Raises:
        sqlite3.Error: the catalog cannot be read.
    """
    from ... import stopwords
    from ...catalog import db as catalog_db
    from ...rank import relevance

    if hybrid is None:
        return None
    terms = stopwords.content_terms(prompt)
    if not terms:
        return []
    shared: list[str] = []
    if con is not None:
        min_bm25, min_coverage = text_floors or (relevance.DEFAULT_MIN_BM25, relevance.DEFAULT_MIN_COVERAGE)
        fraction = relevance.SHARED_TEXT_FRACTION if shared_fraction is None else shared_fraction
        texts = catalog_db.fts_texts(con, [str(h["id"]) for h in hybrid])
        docs = catalog_db.term_docs(con, sorted({relevance.fold(t) for t in terms}))
        n = catalog_db.count(con)
        need = relevance.text_floor(relevance.self_score(terms, docs, n), fraction * min_bm25, min_coverage)
        shared = [mid for mid, text in texts.items() if (s := relevance.match_score(terms, text, docs, n)) > 0
                  and s >= need]
    floor = relevance.DEFAULT_MIN_SIMILARITY if min_similarity is None else min_similarity
    kept = relevance.vector_floor(hybrid, [mid for mid, _ in text_hits], floor, shared,
                                  min(relevance.DEFAULT_MIN_SHARED_SIMILARITY, floor))
    return None if kept is None else [dict(h) for h in kept]


def org_inject_on(cfg: dict[str, Any], user: dict[str, Any]) -> bool:
    """Whether the hooks give the organisation's memories unasked: ``[org] inject = true`` and an ``[org] uri``
    in the repository's config or the user's (``config.scopes``; ``cfg``, ``user``: ``config.read_cached``,
    ``config.read_user_cached``). Read here, not through ``org.settings`` (which imports ``dataclasses``, ~10 ms
    a prompt): the rest of the settings are the warm process's (its ``org_search`` answer carries the budgets)."""
    org = config.scopes(cfg, user)["org"]
    uri = org.get("uri")
    return org.get("inject") is True and isinstance(uri, str) and bool(uri.strip())


def warm_org_search(lay: layout.Layout, query: str, *, limit: int = ORG_SEARCH_HITS,
                    timeout_s: float = ORG_SEARCH_TIMEOUT_S) -> dict[str, Any] | None:
    """The warm process's ``org_search`` answer for ``query`` (``{"configured", "exclude", "hits": [org hit],
    "inject", "session_budget", "prompt_budget"}``; this repository's own memories left out), or None when no
    warm process answers within ``timeout_s`` or the answer is not that shape. Never raises, never starts one
    (one ``stat`` when there is no socket)."""
    try:
        if not os.path.exists(lay.daemon_socket):
            return None
        from ...daemon import client

        reply = client.request(lay, "org_search", {"query": query, "limit": limit}, timeout_s=timeout_s, start=False)
        return reply if org_reply_ok(reply) else None
    except Exception:  # noqa: BLE001 - the org memories are an addition: the hook goes on without them
        return None


def org_reply_ok(reply: Any) -> bool:
    """Whether ``reply`` is an ``org_search`` answer: hits with a text repository and id, positive budgets."""
    if not isinstance(reply, dict):
        return False
    hits = reply.get("hits")
    budgets = [reply.get("session_budget"), reply.get("prompt_budget")]
    return (isinstance(hits, list) and all(isinstance(h, dict) and isinstance(h.get("repo"), str)
                                           and isinstance(h.get("id"), str) for h in hits)
            and all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in budgets))


def pack_org(hits: list[dict[str, Any]], budget_tokens: int, header: str,
             given: dict[str, tuple[str, str, str]] | None = None) -> render.Packed | None:
    """The organisation index's ``hits`` (``shapes.org_hit_json``, best first) not yet given this session
    (``render.org_key`` in ``given``), at most ``MAX_ORG_MEMORIES``, packed in ``budget_tokens`` under ``header``
    and ``render.ORG_FRAME`` (``render.ORG_FOOTER`` last), each labelled ``org: <repo>`` and fenced like every
    memory (``render.item_from_org``);
    None when none is left."""
    from ...rank import render

    fresh = [h for h in hits if render.org_key(h) not in (given or {})][:MAX_ORG_MEMORIES]
    if not fresh:
        return None
    packed = render.pack([render.item_from_org(h) for h in fresh], budget_tokens, header=header,
                         detail=len(fresh), style=render.HOOK, frame=render.ORG_FRAME, footer=render.ORG_FOOTER)
    return packed if packed.text else None


def mark_org_given(lay: layout.Layout, key: str, packed: render.Packed, hits: list[dict[str, Any]],
                   when: str) -> None:
    """Record the org memories ``packed`` gave in full (by ``render.org_key``, with their status) in the session's
    ``.given``, so a later prompt does not give them again.

    Raises:
        OSError: the sessions folder cannot be written.
    """
    from ...rank import render

    by_id = {str(h.get("id")): h for h in hits}
    keys = [render.org_key(by_id[i]) for i in packed.detailed if i in by_id]
    statuses = {render.org_key(h): str(h.get("status") or UNCHECKED) for h in by_id.values()}
    mark_given(lay, key, keys, statuses, when)


def on_prompt(event: Prompt, root: Path, lay: layout.Layout, key: str) -> str | None:
    """Spool the prompt; the memories it names or matches (BM25, and vectors when the warm process answers:
    ``warm_search``, asked while the catalog is read), not yet given, ranked by ``rank.fusion.prompt_ranking``
    and packed in ``prompt_budget``."""
    if not event.prompt.strip():
        return None
    prompt = redact.redact_text(capture.prepare(event.prompt))
    capture.spool_record(root, key, "UserPromptSubmit", {"prompt": capture.cap(prompt, capture.MAX_MESSAGE_CHARS),
                                                         "agent": capture.clean(event.agent, 40)})
    cfg = config.read_cached(lay)
    warm: list[list[dict[str, Any]] | None] = []
    org: list[dict[str, Any] | None] = []
    asking = org_asking = None
    if os.path.exists(lay.daemon_socket):  # a warm process may be up: ask it while the catalog is read
        import threading

        asking = threading.Thread(target=lambda: warm.append(warm_search(lay, prompt)), daemon=True)
        asking.start()
        if org_inject_on(cfg, config.read_user_cached(lay)):  # the organisation's memories, off by default
            org_asking = threading.Thread(target=lambda: org.append(warm_org_search(lay, prompt)), daemon=True)
            org_asking.start()
    con = hook_index(root, lay)
    if con is None:
        return personal_prompt(root, lay, key, cfg, prompt)
    from ...rank import fusion

    try:
        min_bm25, min_coverage, min_similarity = config.relevance_floors(cfg)
        found = prompt_candidates(con, prompt, (min_bm25, min_coverage))
        if asking is not None:
            asking.join(WARM_SEARCH_TIMEOUT_S + 0.05)  # warm_search gives up at its timeout on its own
        hybrid = prompt_hybrid(prompt, warm[0] if warm else None, found[2], min_similarity, con,
                               (min_bm25, min_coverage))
        ranked = fusion.prompt_ranking(*found, hybrid)
        given = given_statuses(lay, key)
        again = news(con, root, lay, found[0] + found[1], given)  # named, and their status changed since given
        skip = set(given) - set(again)
        fade = fading(con, cfg, [mid for mid, _ in ranked if mid not in skip])  # near-ties: the used first
        weight = trust_weights(con, [mid for mid, _ in ranked if mid not in skip])
        order = [mid for mid, _ in sorted(ranked, key=lambda kv: (-kv[1] * weight.get(kv[0], 1.0),
                                                                  -fade.get(kv[0], 1.0))) if mid not in skip]
        rows = as_shown(con, root, lay, prompt_rows(con, order))
        packed = pack_prompt_rows(rows, config.budget(cfg, "prompt_budget"), given, again)
    finally:
        con.close()
    text = None
    if packed is not None:
        mark_shown(lay, key, packed, rows, "a prompt")
        log_given(lay, key, event, packed.detailed, packed.indexed, prompt=prompt[:LOGGED_PROMPT_CHARS])
        usage.note(lay, usage.GIVEN, "prompt", packed.detailed)
        text = packed.text
    if org_asking is not None:
        org_asking.join(ORG_SEARCH_TIMEOUT_S + 0.05)  # warm_org_search gives up at its timeout on its own
        org_text = prompt_org(lay, key, prompt, org[0] if org else None, (min_bm25, min_coverage), given)
        if org_text:
            text = f"{text.rstrip()}\n\n{org_text}" if text else org_text
    mine = personal_prompt(root, lay, key, cfg, prompt)  # the developer's own memories, last
    if mine:
        text = f"{text.rstrip()}\n\n{mine}" if text else mine
    return text


def prompt_org(lay: layout.Layout, key: str, prompt: str, reply: dict[str, Any] | None,
               text_floors: tuple[float, float], given: dict[str, tuple[str, str, str]]) -> str | None:
    """The organisation's memories for ``prompt`` from the warm process's ``reply`` (``warm_org_search``; None:
    none), kept by the same text floor as the repository's own (``rank.relevance.org_floor`` with
    ``text_floors`` = (min_bm25, min_coverage)), not yet given, packed in ``[org] prompt_budget``; marked given.

    Raises:
        OSError: the sessions folder cannot be written.
    """
    from ... import stopwords
    from ...rank import relevance

    if not reply or not reply["hits"]:
        return None
    kept = [dict(h) for h in relevance.org_floor(stopwords.content_terms(prompt), reply["hits"], *text_floors)]
    packed = pack_org(kept, reply["prompt_budget"], ORG_PROMPT_HEADER, given)
    if packed is None:
        return None
    mark_org_given(lay, key, packed, kept, "a prompt")
    return packed.text


def personal_prompt(root: Path, lay: layout.Layout, key: str, cfg: dict[str, Any], prompt: str) -> str | None:
    """The developer's personal memories that ``prompt`` (redacted) matches, not yet given to session ``key``: BM25
    of its content terms in the personal repository's catalog above the same floors as the project's
    (``prompt_text_hits``, ``[relevance]``), near-ties by trust, at most ``personal.PROMPT_MEMORIES`` in the
    ``[personal] prompt_budget``, labelled ``personal``; marked given and noted as used in the personal
    repository's use log. None when there is no personal repository (one ``stat``: the whole cost), it is off here
    (``[personal] enabled``), its catalog is not built yet (a background sync is started: ``hook_index``), or
    nothing matches. Standard library only (the prompt hook's path). Never raises: the project's memories go out
    whatever happens here (a failure is logged)."""
    from ... import personal

    proot = personal.root(root)
    if proot is None:
        return None
    try:
        return _personal_prompt(proot, lay, key, cfg, prompt)
    except Exception as e:  # noqa: BLE001 - the personal scope never costs the prompt its project's memories
        _log_personal(lay, "per prompt", e)
        return None


def _log_personal(lay: layout.Layout, when: str, e: Exception) -> None:
    """One redacted line in ``<logs>/agent-hooks.log`` about the personal scope failing ``when``; never raises."""
    try:
        infra.append_log(lay.log_file("agent-hooks.log"),
                         redact.redact_text(f"{infra.utc_now()} personal memories {when}: {type(e).__name__}: {e}\n"))
    except OSError:
        pass


def _personal_prompt(proot: Path, lay: layout.Layout, key: str, cfg: dict[str, Any], prompt: str) -> str | None:
    """``personal_prompt`` once the personal repository at ``proot`` is known to be there.

    Raises:
        sqlite3.Error: its catalog cannot be read.
        OSError: the session state or its use log cannot be written, or a sync could not be started.
    """
    from ... import personal

    budget = personal.prompt_budget(cfg, config.read_user_cached(lay))
    if budget is None:
        return None
    plat = layout.of(proot)
    con = hook_index(proot, plat)  # missing or out of date (a pull, an edit): rebuilt in the background
    if con is None:
        return None
    from ...catalog import db as catalog_db

    try:
        min_bm25, min_coverage, _ = config.relevance_floors(cfg)
        given = given_statuses(lay, key)
        hits = [(mid, score) for mid, score in prompt_text_hits(con, prompt, (min_bm25, min_coverage))
                if mid not in given]
        weight = trust_weights(con, [mid for mid, _ in hits])
        order = [mid for mid, _ in sorted(hits, key=lambda kv: -kv[1] * weight.get(kv[0], 1.0))]
        wanted = order if personal.merging(proot) else order[:personal.PROMPT_MEMORIES]  # some may be left out
        rows = personal.unconflicted(proot, catalog_db.rows(con, wanted))[:personal.PROMPT_MEMORIES]
    finally:
        con.close()
    if not rows:
        return None
    packed = personal.pack(rows, budget, header=personal.PROMPT_HEADER, detail=personal.PROMPT_DETAIL)
    if not packed.text:
        return None
    mark_shown(lay, key, packed, rows, "a prompt")
    usage.note(plat, usage.GIVEN, "prompt", packed.detailed)
    return packed.text


def trust_weights(con: sqlite3.Connection, ids: list[str]) -> dict[str, float]:
    """id → its provenance weight (``provenance.WEIGHT`` of its catalog ``level``; 1.0 when unknown), for ordering
    near-ties: text a person wrote or reviewed before text nobody has read.

    Raises:
        sqlite3.Error: the catalog cannot be read.
    """
    from ...catalog import db as catalog_db

    return {mid: WEIGHT.get(level, 1.0) for mid, level in catalog_db.levels(con, ids).items()}


def prompt_rows(con: sqlite3.Connection, order: list[str]) -> list[dict[str, Any]]:
    """The catalog rows of the first ``MAX_PROMPT_MEMORIES`` of ``order`` (ids best first; unknown ids skipped).

    Raises:
        sqlite3.Error: the catalog cannot be read.
    """
    from ...catalog import db as catalog_db

    return catalog_db.rows(con, order[:MAX_PROMPT_MEMORIES])


def pack_prompt(con: sqlite3.Connection, order: list[str], budget_tokens: int) -> render.Packed | None:
    """The first ``MAX_PROMPT_MEMORIES`` of ``order`` (ids best first) packed in ``budget_tokens`` as the prompt
    hook injects them (the first ``PROMPT_DETAIL`` in full); None when none is in the catalog.

    Raises:
        sqlite3.Error: the catalog cannot be read.
    """
    return pack_prompt_rows(prompt_rows(con, order), budget_tokens)


def pack_prompt_rows(rows: list[dict[str, Any]], budget_tokens: int,
                     given: dict[str, tuple[str, str, str]] | None = None,
                     again: Iterable[str] = ()) -> render.Packed | None:
    """``rows`` (``prompt_rows``, best first) packed in ``budget_tokens`` as the prompt hook injects them (the
    first ``PROMPT_DETAIL`` in full; those in ``again`` say what they were given as: ``session_items``); None
    when there are none."""
    from ...rank import render

    if not rows:
        return None
    return render.pack(session_items(rows, given or {}, again), budget_tokens, header=PROMPT_HEADER,
                       detail=PROMPT_DETAIL, detail_among=PROMPT_DETAIL, style=render.HOOK)


def on_before_file(event: BeforeFile, root: Path, lay: layout.Layout, key: str) -> str | None:
    """Memories anchored to the file not yet given: on an edit, those on the edited symbol, the warnings
    and the file-level ones in full, the rest listed; packed in ``file_budget``."""
    rel = capture.repo_relative(root, event.path, event.cwd or None) if event.path else None
    if not rel or rel.startswith(layout.GITMEM_DIR + "/"):
        return None
    cfg = config.read_cached(lay)
    if redact.is_private_path(rel, _private_globs(cfg)):
        return None
    real = layout.linked_path(root, rel)  # read through a symbolic link: the file it leads to counts too
    if real and redact.is_private_path(real, _private_globs(cfg)):
        return None
    mark_worked(lay, key, [rel, real] if real else [rel])
    con = hook_index(root, lay)
    if con is None:
        return None
    from ...catalog import db as catalog_db
    from ...rank import render

    Spans = list[tuple[str | None, int | None, int | None]]
    try:
        given = given_statuses(lay, key)
        on = catalog_db.on_path(con, rel)
        if real:
            seen = {f[0] for f in on}
            on += [f for f in catalog_db.on_path(con, real) if f[0] not in seen]
        again = news(con, root, lay, [f[0] for f in on], given)  # given before; their status changed since
        found = [f for f in on if f[0] not in given or f[0] in again]
        if not found:
            return None
        edit = edited_lines(root, rel, event.old_text) if event.kind == "edit" else None

        def on_edit(spans: Spans) -> bool:
            return edit is not None and any(s and a is not None and b is not None and a <= edit[1] and edit[0] <= b
                                            for s, a, b in spans)

        def file_level(spans: Spans) -> bool:
            return any(s is None for s, _, _ in spans)

        def not_fresh(status: str | None) -> bool:
            return status not in (None, "fresh")

        # what changed since it was given first, then the edited symbol's memories, then warnings, then
        # file-level ones, then the rest (within each, text a person wrote or reviewed first:
        # ``provenance.WEIGHT``; then newest first; with decay on, the least faded first: ``usage.fade``)
        fade = fading(con, cfg, [f[0] for f in found])
        weight = trust_weights(con, [f[0] for f in found])
        found.sort(key=lambda f: (f[0] not in again, not on_edit(f[2]), not not_fresh(f[1]), not file_level(f[2]),
                                  -weight.get(f[0], 1.0), -fade.get(f[0], 1.0)))
        found = found[:MAX_FILE_MEMORIES]
        by_id = {r["id"]: r for r in as_shown(con, root, lay, catalog_db.rows(con, [f[0] for f in found]))}
    finally:
        con.close()
    found = [f for f in found if f[0] in by_id]
    if edit is not None:
        first = [f for f in found if f[0] in again or on_edit(f[2]) or file_level(f[2]) or not_fresh(f[1])]
        rows = [by_id[f[0]] for f in first] + [by_id[f[0]] for f in found if f not in first]
        n_full = len(first)
        lines = f"line {edit[0]}" if edit[0] == edit[1] else f"lines {edit[0]}–{edit[1]}"
        where = f"{rel} (the edit is at {lines})"
    else:
        rows, n_full, where = [by_id[f[0]] for f in found], len(found), rel
    packed = render.pack(session_items(rows, given, again), config.budget(cfg, "file_budget"),
                         header=f"# gitmem: memories about {where}\n", detail=n_full, detail_among=n_full,
                         style=render.HOOK)
    # each with the status it was shown with: one shown "may be stale" is shown again once it is checked
    mark_shown(lay, key, packed, rows, f"{'an edit' if event.kind == 'edit' else 'a read'} of {rel}")
    log_given(lay, key, event, packed.detailed, packed.indexed, file=rel, kind=event.kind)
    usage.note(lay, usage.GIVEN, "file", packed.detailed)
    return packed.text


def noted_memory_edits(event: AfterTool, root: Path, lay: layout.Layout) -> list[str]:
    """Record (``agent_edits.note``) the team memory files a successful write or edit (Write, Edit,
    ``apply_patch``: ``event.path_keys``) of ``event.agent`` changed: the file is the agent's text, whatever it
    claims. Returns their ids."""
    if event.kind not in ("write", "edit") or isinstance(event, AfterToolFailure):
        return []
    ids = []
    for k in event.path_keys:
        path = event.input.get(k)
        if isinstance(path, str) and layout.TEAM_MEMORIES in path.replace("\\", "/"):  # cheap test first
            mid = agent_edits.memory_id(capture.repo_relative(root, path, event.cwd or None))
            if mid is not None and mid not in ids:
                ids.append(mid)
    if ids:
        try:
            agent_edits.note(lay, ids, event.agent)
        except OSError as e:  # logged; the spool still records the call
            log_error(event, e)
    return ids


def on_after_tool(event: AfterTool, root: Path, lay: layout.Layout, key: str) -> None:
    """Record an agent's write of a memory file (``noted_memory_edits``); append the redacted call to the
    session's spool, unless it touches a private file."""
    noted_memory_edits(event, root, lay)
    cfg = config.read_cached(lay)
    if capture.is_private_event(event, root, _private_globs(cfg)):
        return  # never captured, not even redacted
    rec = capture.tool_record(event, root)
    if event.tool_use_id:
        rec["id"] = capture.clean(event.tool_use_id, 100)
    else:  # the agent gives no id (Gemini CLI, Copilot CLI): the n-th call of this tool and input, as in its transcript
        digest = capture.content_digest(rec)
        rec["id"] = capture.content_id(digest, spool.occurrence(root, key, digest))
    kind = TOOL_FAILURE_RECORD if isinstance(event, AfterToolFailure) else TOOL_RECORD
    capture.spool_record(root, key, kind, rec)


def on_stop(event: Stop, root: Path, lay: layout.Layout, key: str) -> None:
    """Spool the agent's last message (or, without one, the transcript that holds it: Copilot CLI's
    ``agentStop``); with ``event.consolidate``, hand what the session spooled so far to a detached
    consolidation, which first reconciles the spool with the transcript (safe mid-session: it claims the
    spool, later events start a new one, and a later batch updates the session's memory)."""
    if event.last_message.strip():
        capture.spool_record(root, key, "Stop",
                             {"last_message": capture.clean(event.last_message, capture.MAX_MESSAGE_CHARS),
                              **transcript_of(event)})
    elif event.transcript:
        capture.spool_record(root, key, "Stop", transcript_of(event))
    if event.consolidate:
        infra.spawn_detached("gitmem.capture.worker", str(root), key, cwd=root)


def on_session_end(event: SessionEnd, root: Path, lay: layout.Layout, key: str) -> None:
    """Spool the end and hand the session's spool to a detached consolidation."""
    capture.spool_record(root, key, "SessionEnd", {"reason": capture.clean(event.reason, 40), **transcript_of(event)})
    infra.spawn_detached("gitmem.capture.worker", str(root), key, cwd=root)


def on_after_compact(event: AfterCompact | BeforeCompact, root: Path, lay: layout.Layout, key: str) -> None:
    """Forget what the session was given: the compacted conversation no longer holds it (before a compaction:
    what is given until it happens is lost with it). The next read of a file gives its memories again; an
    agent that starts the session again after compacting it (Claude Code's ``compact`` source) also gets
    those of the files the session worked on then."""
    forget_given(lay, key)
    log_given(lay, key, event, [])


def same_symbol(anchor: str | None, named: str | None) -> bool:
    """Whether an anchor's qualified name ``anchor`` is the symbol a command or failure names (``named``: a
    qualified name, or the last part of one: a traceback names functions by their last part), or is nested in
    it, or holds it (a test class anchor and one of its tests)."""
    if not anchor or not named:
        return False
    return (anchor == named or anchor.startswith(named + ".") or named.startswith(anchor + ".")
            or anchor.endswith("." + named))


def given_again_on(con: sqlite3.Connection, root: Path, lay: layout.Layout, paths: list[str],
                   given: dict[str, tuple[str, str, str]], again: dict[str, dict[str, Any]]) -> list[str]:
    """The memories of any type anchored to ``paths`` that the session was given (``given``) with a status that
    changed since (``news``; added to ``again``): a command about to run their code corrects what the session
    was told about it, whatever the type (the shell hook otherwise gives only ``ACTION_TYPES``).

    Raises:
        sqlite3.Error: the catalog cannot be read.
        OSError: a re-check could not be started.
    """
    from ...catalog import db as catalog_db

    before = [f[0] for p in dict.fromkeys(paths) for f in catalog_db.on_path(con, p)
              if f[0] in given and f[0] not in again]
    more = news(con, root, lay, before, given) if before else {}
    again.update(more)
    return list(more)


def _action_rows(con: sqlite3.Connection, root: Path, lay: layout.Layout, ranked: dict[str, float],
                 given: dict[str, tuple[str, str, str]], again: Iterable[str]) -> list[dict[str, Any]]:
    """The rows of ``ranked`` (id → score) not in ``given`` or in ``again`` (``news``), as shown now
    (``as_shown``), best first, then by ``ACTION_TYPES``' order, not-fresh (⚠) first, newest first; at most
    ``MAX_ACTION_MEMORIES``."""
    from ...catalog import db as catalog_db

    again = set(again)
    ids = [mid for mid in ranked if mid not in given or mid in again]
    rows = as_shown(con, root, lay, catalog_db.rows(con, ids))
    type_rank = {t: i for i, t in enumerate(ACTION_TYPES)}
    rows.sort(key=lambda r: r.get("updated") or "", reverse=True)
    rows.sort(key=lambda r: (-ranked[r["id"]] * WEIGHT.get(str(r.get("level")), 1.0),
                             type_rank.get(str(r.get("type")), len(ACTION_TYPES)), r.get("status") in (None, "fresh")))
    return rows[:MAX_ACTION_MEMORIES]


def _pack_action(rows: list[dict[str, Any]], budget_key: str, header: str, lay: layout.Layout,
                 key: str, event: Event, via: str, given: dict[str, tuple[str, str, str]] | None = None,
                 when: str = "", **about: str) -> str | None:
    """``rows`` packed in ``[claude] <budget_key>`` under ``header`` (all offered in full; those given before,
    in ``given``, say what they were given as: ``session_items``), marked given with their status at ``when``,
    logged in the session's event log (``log_given``) and noted as used (``usage.note`` by ``via``)."""
    from ...rank import render

    if not rows:
        return None
    given = given or {}
    packed = render.pack(session_items(rows, given, [r["id"] for r in rows if r["id"] in given]),
                         config.budget(config.read_cached(lay), budget_key), header=header, detail=len(rows),
                         style=render.HOOK)
    mark_shown(lay, key, packed, rows, when)
    log_given(lay, key, event, packed.detailed, packed.indexed, **about)
    usage.note(lay, usage.GIVEN, via, packed.detailed)
    return packed.text or None


def _repo_targets(root: Path, event: Event, found: list[tuple[str, str | None]],
                  cfg: dict[str, Any]) -> list[tuple[str, str | None]]:
    """``found`` ((path relative to the event's folder, symbol)) as repo-relative paths, without gitmem's own
    files and private files."""
    out: list[tuple[str, str | None]] = []
    private = _private_globs(cfg)
    for path, symbol in found:
        rel = capture.repo_relative(root, path, event.cwd or None)
        if rel and not rel.startswith(layout.GITMEM_DIR + "/") and not redact.is_private_path(rel, private):
            out.append((rel, symbol))
    return out


def on_before_shell(event: BeforeShell, root: Path, lay: layout.Layout, key: str) -> str | None:
    """The ``ACTION_TYPES`` memories the command concerns, not yet given, in ``shell_budget``: anchored to a
    file it runs or targets (on the symbol a test id or ``-k`` names first; of a file it runs only some entries of,
    ``shellwords.Targets.scoped`` — ``make build``'s targets, ``npm test``'s scripts, ``docker build --target``'s
    stages —, those entries and the whole file, not its other entries), or quoting a command it runs
    (``shellwords.concerns``); and a memory of any type on a file it runs or targets that the session was given
    with a status that changed since (``given_again_on``); nothing for a command no memory concerns."""
    if not event.command.strip():
        return None
    from ... import shellwords
    from ...textsplit import name_base
    from .shell_reads import READERS

    cfg = config.read_cached(lay)
    cwd = event.cwd or os.getcwd()
    # a file a reader shows (`cat x.py`) gets all its memories as a read (``BeforeFile``), not here
    found = shellwords.targets(event.command, cwd, skip=READERS)
    targets = _repo_targets(root, event, found, cfg)
    # files the command runs only some entries of (`make build`, `npm test`, `docker build --target x`)
    scoped = {rel for rel, _ in _repo_targets(root, event, [(p, None) for p in found.scoped], cfg)}
    mark_worked(lay, key, list(dict.fromkeys(rel for rel, _ in targets)))
    commands = shellwords.line_commands(event.command)
    if not targets and not commands:
        return None
    con = hook_index(root, lay)
    if con is None:
        return None
    from ...catalog import db as catalog_db

    try:
        ranked: dict[str, float] = {}
        named = {(rel, sym) for rel, sym in targets if sym}
        on = catalog_db.typed_on_paths(con, dict.fromkeys(rel for rel, _ in targets), ACTION_TYPES, ACTION_PER_PATH)
        for mid, more in catalog_db.typed_on_symbols(con, sorted(named), ACTION_TYPES, ACTION_PER_PATH).items():
            on.setdefault(mid, []).extend(a for a in more if a not in on[mid])  # past a busy file's newest
        for mid, anchors in on.items():
            on_symbol = any(p == np and (same_symbol(sym, n) or same_symbol(name_base(sym or ""), n))
                            for p, sym in anchors for np, n in named)  # `build#2`: make's second rule of build
            if not on_symbol and all(p in scoped and sym is not None for p, sym in anchors):
                continue  # another target, script or stage of a file the command runs only some entries of
            ranked[mid] = max(ranked.get(mid, 0.0), SHELL_SYMBOL_SCORE if on_symbol else SHELL_FILE_SCORE)
        for mid, quoted in catalog_db.quoting(con, [c[0] for c in commands], ACTION_TYPES):
            if any(shellwords.concerns(quoted, c) for c in commands):
                ranked[mid] = max(ranked.get(mid, 0.0), SHELL_COMMAND_SCORE)
        given = given_statuses(lay, key)
        again = news(con, root, lay, list(ranked), given)  # given before; their status changed since
        for mid in given_again_on(con, root, lay, [rel for rel, _ in targets], given, again):
            ranked.setdefault(mid, SHELL_FILE_SCORE)
        rows = _action_rows(con, root, lay, ranked, given, again) if ranked else []
    finally:
        con.close()
    shown = " ".join(event.command.split())
    shown = shown if len(shown) <= SHELL_HEADER_CHARS else shown[:SHELL_HEADER_CHARS - 1] + "…"
    return _pack_action(rows, "shell_budget", f"# gitmem: before you run `{shown}` — rules and known traps\n",
                        lay, key, event, "shell", given, "a shell command", command=shown)


def on_after_failure(event: AfterToolFailure, root: Path, lay: layout.Layout, key: str) -> str | None:
    """Spool the failed call (``on_after_tool``); then the ``ACTION_TYPES`` memories the failure matches ("seen
    before"), not yet given, in ``failure_budget``: on a symbol or test the failure names (a traceback
    frame, a test id), or found by BM25 over the failure's distinctive terms and naming one of them in its own
    text (the precision guard: a generic failure, ``exit code 1``, names none and gets nothing)."""
    from .failures import failure_terms, failure_text

    on_after_tool(event, root, lay, key)
    text = failure_text(event)
    command = event.input.get("command") if isinstance(event.input, dict) else None
    terms, frames = failure_terms(text, command if isinstance(command, str) else "")
    if not terms and not frames:
        return None
    cfg = config.read_cached(lay)
    con = hook_index(root, lay)
    if con is None:
        return None
    from ...catalog import db as catalog_db
    from ...rank import fusion

    try:
        ranked: dict[str, float] = {}
        repo_frames = _repo_targets(root, event, frames, cfg)
        on = catalog_db.typed_on_paths(con, dict.fromkeys(rel for rel, _ in repo_frames), ACTION_TYPES,
                                       ACTION_PER_PATH)
        for mid, anchors in on.items():
            if any(p == fp and same_symbol(sym, fs) for p, sym in anchors for fp, fs in repo_frames):
                ranked[mid] = SHELL_SYMBOL_SCORE
        hits = catalog_db.search_terms(con, terms, FAILURE_SEARCH_HITS) if terms else []
        if hits:
            best = hits[0][1]
            kinds = catalog_db.types_of(con, [mid for mid, _ in hits])
            hit_rows = {r["id"]: r for r in catalog_db.rows(con, [mid for mid, sc in hits
                                                                  if best > 0 and sc >= fusion.MIN_RELATIVE_BM25 * best
                                                                  and kinds.get(mid) in ACTION_TYPES])}
            lowered = [t.lower() for t in terms]
            for mid, row in hit_rows.items():
                own = "\n".join([str(row.get("title") or ""), str(row.get("body") or ""),
                                  *map(str, row.get("facts") or [])]).lower()
                if any(t in own for t in lowered):
                    ranked[mid] = max(ranked.get(mid, 0.0), SHELL_FILE_SCORE + dict(hits)[mid] / best)
        given = given_statuses(lay, key)
        again = news(con, root, lay, list(ranked), given)  # given before; their status changed since
        rows = _action_rows(con, root, lay, ranked, given, again) if ranked else []
    finally:
        con.close()
    named = ", ".join(terms[:3]) if terms else ", ".join(f"{p}::{s}" if s else p for p, s in frames[:2])
    return _pack_action(rows, "failure_budget", f"# gitmem: seen before — memories matching this failure ({named})\n",
                        lay, key, event, "failure", given, "a failure", failure=named)


HANDLERS: dict[type[Event], Callable[[Any, Path, layout.Layout, str], str | None]] = {
    SessionStart: on_session_start,
    Prompt: on_prompt,
    BeforeFile: on_before_file,
    BeforeShell: on_before_shell,
    AfterTool: on_after_tool,
    AfterToolFailure: on_after_failure,
    Stop: on_stop,
    SessionEnd: on_session_end,
    BeforeCompact: on_after_compact,
    AfterCompact: on_after_compact,
}


def handle(event: Event) -> str | None:
    """Run ``event``'s handler in its repository; returns the text to inject ("" or None: nothing).

    Returns None when no repository with ``.gitmem/`` is found.

    Raises:
        whatever the handler raises (``run`` logs it).
    """
    kind: type[Event] = type(event)
    handler = HANDLERS.get(kind) or next((h for k, h in HANDLERS.items() if isinstance(event, k)), None)
    if handler is None:
        return None
    root = resolve_root(event)
    if root is None:
        return None
    return handler(event, root, state(root), spool.session_key(event.session_id))


def time_limit(event: Event) -> float:
    """Seconds ``event``'s handler may take (``TIME_LIMITS``)."""
    return next((t for k, t in TIME_LIMITS.items() if isinstance(event, k)), DEFAULT_TIME_LIMIT)


def log_error(event: Event, exc: BaseException) -> None:
    """One redacted record (a line and the traceback) in ``<logs>/<agent>-hooks.log``; never raises."""
    try:
        root = resolve_root(event)
        if root is None:
            return
        text = f"{infra.utc_now()} {event.name} error: {type(exc).__name__}: {exc}\n" + infra.format_exception(exc)
        infra.append_log(state(root).log_file(f"{event.agent}-hooks.log"), redact.redact_text(text))
    except BaseException:  # noqa: BLE001 - the log is best effort
        pass


def bounded(text: str | None, limit: int, cut_note: str) -> str | None:
    """``text`` stripped and cut at a line end under ``limit`` characters (then ``cut_note`` and how to expand
    an id follow); None when there is no text. For an adapter's output: agents cap injected context."""
    text = (text or "").strip()
    if not text:
        return None
    if len(text) > limit:
        from ...rank.render import EXPAND_LINE

        text = text[:limit].rsplit("\n", 1)[0] + cut_note + EXPAND_LINE
    return text


#: Set by ``gitmem doctor`` when it runs a registered hook command: the handler answers ``PROBE_ANSWER`` at once.
PROBE_ENV = "GITMEM_HOOK_PROBE"
#: What a handler prints under ``PROBE_ENV``: proof that the command reached this gitmem.
PROBE_ANSWER = '{"gitmem_probe": "ok"}'


def main(argv: list[str] | None, *, usage: str, to_event: Callable[[Any, str | None], Event | list[Event] | None],
         output: Callable[[Event, str | None], dict[str, Any] | None], need_event_arg: bool = False) -> int:
    """An adapter's entry point: one hook input (JSON) on stdin → ``to_event(raw, EVENT argument)`` → ``run``
    → ``output`` printed as one JSON object, or nothing. ``-h``/``--help`` (or no EVENT argument when
    ``need_event_arg``) prints ``usage``. With ``PROBE_ENV`` set (``gitmem doctor``), prints ``PROBE_ANSWER``
    and does nothing else (stdin is not read). Returns 0, always."""
    import json
    import sys

    if os.environ.get(PROBE_ENV):
        sys.stdout.write(PROBE_ANSWER)
        sys.stdout.flush()
        return 0
    args = sys.argv[1:] if argv is None else argv

    def read() -> Event | list[Event] | None:
        if args[:1] in (["-h"], ["--help"]) or (need_event_arg and not args):
            sys.stdout.write(usage)
            return None
        data = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()
        try:
            raw = json.loads(data) if data.strip() else None
        except (ValueError, RecursionError):
            return None
        return to_event(raw, args[0] if args else None)

    def write(event: Event, text: str | None) -> None:
        out = output(event, text)
        if out is not None:
            sys.stdout.write(json.dumps(out, ensure_ascii=True))
            sys.stdout.flush()

    return run(read, write)


def run(read: Callable[[], Event | list[Event] | None], write: Callable[[Event, str | None], None]) -> int:
    """The never-fail wrapper of an adapter's entry point; returns 0, always.

    ``read()`` gives the normalised event, or the events one agent event stands for (a patch
    touching several files: one ``BeforeFile`` each), or None (nothing to do); their handlers run
    in order under the first event's time limit (``SIGALRM`` where there is one; past it
    nothing is injected); ``write(first event, texts joined by a blank line)`` prints the
    adapter's answer. Any exception — a handler's, the time limit, ``write``'s — is logged
    (``log_error``) and swallowed.
    """
    event: Event | None = None
    try:
        got = read()
        batch = got if isinstance(got, list) else [got] if got is not None else []
        if not batch:
            return 0
        event = batch[0]

        def time_up(signum: int, frame: object) -> None:
            raise _TimeUp()

        # ``_signal``, the C module under ``signal``: the same functions without ``signal``'s enum
        # wrappers, which cost ~0.5 ms to build on every hook call
        if TYPE_CHECKING:
            import signal as _signal
        else:
            import _signal

        alarm = hasattr(_signal, "setitimer")
        if alarm:
            _signal.signal(_signal.SIGALRM, time_up)
            _signal.setitimer(_signal.ITIMER_REAL, time_limit(event))
        try:
            texts = [t.strip() for t in (handle(e) for e in batch) if t and t.strip()]
            text = "\n\n".join(texts) if texts else None
        finally:
            if alarm:
                _signal.setitimer(_signal.ITIMER_REAL, 0)
            usage.flush()  # what the handlers gave: one append per hook call
        write(event, text)
    except BaseException as e:  # noqa: BLE001 - an agent hook always exits 0
        if event is not None:
            log_error(event, e)
            _say_config_error(event, e, write)
    return 0


def _say_config_error(event: Event, e: BaseException, write: Callable[[Event, str | None], None]) -> None:
    """At session start, tell the agent (and so its user) that an invalid committed ``config.toml`` turned
    gitmem's memories off, instead of staying silent; never raises. (By class name: the hot path does not
    import ``errors``.)"""
    if not isinstance(event, SessionStart) or type(e).__name__ != "ConfigError":
        return
    try:
        message, hint = getattr(e, "message", str(e)), getattr(e, "hint", "")
        write(event, f"gitmem: no memories in this session: {message}" + (f" — {hint}" if hint else "")
              + " (gitmem doctor)")
    except BaseException:  # noqa: BLE001 - an agent hook always exits 0
        pass
