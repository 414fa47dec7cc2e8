"""Consolidation: a session's spooled events → anchored memories.

For each session with spooled events (``capture.spool``), under that session's
lock: claim the live spool as a batch, digest its events, and turn them into
memories

* **with an LLM** (``[llm]`` in config.toml, ``capture.llm``): the redacted
  transcript goes to the model, which answers with observations (type, title,
  body, facts, tags, files, symbols); each is anchored to the files and symbols
  it names that really exist in the working tree (the others are dropped);
* **without one**, or when the model fails twice: one ``change`` memory per
  session, titled from the user's first prompt, with the agent's last message
  as body, anchored to the symbols the session edited.

Sessions that only read, searched or listed produce nothing; a later batch of a
session that recorded something (it is cut into batches by every consolidation
that runs while it is open) is consolidated even without edits, so the agent's
final message is not lost. An observation that
repeats a memory on the same code (``compare.near_duplicate``, word overlap ≥ ``SAME_JACCARD``) raises
that memory's confidence by ``CONFIDENCE_STEP`` and merges its facts and tags
instead of adding another; one that rewrites it (overlap ≥ ``SUPERSEDE_JACCARD``,
same type) becomes a new memory that ``supersedes`` it (a local one it
replaces outright); one that contradicts a memory on the same code (``compare.contradiction``) is
added beside it with a note. Captured memories are ``local`` scope.

Provenance (``provenance``): the rules' memories are ``source: agent`` and the model's ``source: llm`` (with
``model``), both with ``origin`` the agent whose session it was. Consolidation never raises a level: a memory
that takes facts from an observation takes the observation's provenance when that is lower (a person's
memory reinforced with a model's facts becomes model-written), and its review lapses with the text change.

Nothing lost, nothing twice: once a session has ended (or a turn, Stop), its spool is first reconciled with the
agent's transcript (``reconcile_with_transcript``), and every record a batch consumes is remembered
(``spool.add_seen``), so a tool call or final message arriving again (a late hook, a re-run) is
dropped (``spool.fresh``).

Crash safety: the memories of a batch are first written to a plan file next to
it, then to their files, then the batch and the plan are deleted. A run that
finds a plan applies it again (idempotent: same ids, same content), so a kill at
any moment neither loses events nor writes a memory twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock, Timeout

from .. import provenance
from ..anchors import Resolver
from ..compare import DUPLICATE_JACCARD, contradiction, near_duplicate, same_code
from ..errors import GitmemError
from ..git import WORKTREE
from ..infra import atomic_write, utc_now
from ..layout import GITMEM_DIR
from ..memfile import memory_from_dict, memory_to_dict
from ..memories import derive_title
from ..model import Anchor, Memory, unique_anchors
from ..rank.focus import changed_symbols
from ..store import Store, new_id
from . import llm as llm_mod
from . import redact, spool

#: Word overlap (``compare.similarity``) at which an observation is the same memory again: tidy's threshold.
SAME_JACCARD = DUPLICATE_JACCARD
#: Overlap at which an observation of the same type on the same anchors rewrites a memory.
SUPERSEDE_JACCARD = 0.3
#: Confidence added each time a memory is observed again (capped at 1.0).
CONFIDENCE_STEP = 0.1
#: Starting confidence of captured memories: rules know less than a model, a model less than a person.
#: The lock (in the spool folder) held while a batch's plan is made from the memories and applied.
MEMORIES_LOCK = "memories.lock"
#: Seconds a consolidation waits for another one's plan-and-apply (seconds each, never a model call).
MEMORIES_LOCK_WAIT_S = 120.0
CONFIDENCE_RULES = 0.5
CONFIDENCE_LLM = 0.6
#: Most anchors on one captured memory (the most specific first).
MAX_ANCHORS = 8
#: Commands too routine to be worth a fact.
ROUTINE_COMMANDS = {"ls", "cat", "cd", "pwd", "echo", "head", "tail", "grep", "rg", "find", "wc", "which",
                    "tree", "less", "sed", "awk", "true", "clear"}
#: Commands longer than this (characters) are inline scripts, not facts.
MAX_FACT_COMMAND_CHARS = 160
ROUTINE_GIT = {"status", "diff", "log", "show", "branch", "add", "stash"}



@dataclass
class SessionDigest:
    """What a batch of events says: prompts, the agent's last message, edits, reads, commands, failures."""

    key: str
    prompts: list[str] = field(default_factory=list)
    last_message: str = ""
    head: str | None = None
    edits: list[tuple[str, str]] = field(default_factory=list)  # (path, new text) per Edit/Write
    edited_files: list[str] = field(default_factory=list)
    read_files: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    events: int = 0
    agent: str | None = None  # the adapter's name (``codex``): prompt records carry it, and those naming a transcript

    @property
    def worth_recording(self) -> bool:
        """Only reads, searches and listings are not."""
        return bool(self.edited_files or self.failures)

    @property
    def has_content(self) -> bool:
        """Anything a memory could take from: prompts, a message, commands, reads, edits, failures."""
        return bool(self.prompts or self.last_message or self.commands or self.read_files or self.worth_recording)


#: Claude Code's file-changing tools; another agent's are recognised by the record's ``kind``
#: (``edit`` / ``write``, with ``file_path`` and ``new_string`` / ``content`` in its input).
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")


def digest(key: str, records: list[dict[str, Any]]) -> SessionDigest:
    """Summarise spooled ``records`` (see ``integrations.agents.capture.tool_record`` for their shape)."""
    d = SessionDigest(key=key, events=len(records))
    for r in records:
        kind = r.get("event")
        if d.agent is None and isinstance(r.get("agent"), str) and r["agent"].strip():
            d.agent = r["agent"].strip()
        if kind == "UserPromptSubmit" and isinstance(r.get("prompt"), str):
            d.prompts.append(r["prompt"])
        elif kind == "Stop" and isinstance(r.get("last_message"), str):
            d.last_message = r["last_message"]
        elif kind == "SessionStart" and isinstance(r.get("head"), str) and d.head is None:
            d.head = r["head"]
        elif kind in ("PostToolUse", "PostToolUseFailure"):
            tool = r.get("tool")
            inp = r.get("input")
            if not isinstance(inp, dict):
                inp = {}
            path = inp.get("file_path") or inp.get("notebook_path")
            if kind == "PostToolUseFailure":
                d.failures.append(f"{tool} failed: {str(r.get('error') or '')[:300]}")
            elif (tool in EDIT_TOOLS or r.get("kind") in ("edit", "write")) and isinstance(path, str):
                if path not in d.edited_files:
                    d.edited_files.append(path)
                new = inp.get("content") if tool == "Write" or r.get("kind") == "write" else inp.get("new_string")
                d.edits.append((path, new if isinstance(new, str) else ""))
            elif (tool == "Read" or r.get("kind") == "read") and isinstance(path, str) and path not in d.read_files:
                d.read_files.append(path)
            elif (tool == "Bash" or r.get("kind") == "shell") and isinstance(inp.get("command"), str):
                d.commands.append(inp["command"])
    return d


def notable_commands(commands: list[str], limit: int = 5) -> list[str]:
    """Distinct commands worth a fact (tests, builds, migrations), routine ones left out."""
    out: list[str] = []
    for c in commands:
        words = c.strip().split()
        if not words or words[0] in ROUTINE_COMMANDS:
            continue
        if "[REDACTED" in c or "[PRIVATE]" in c or len(c) > MAX_FACT_COMMAND_CHARS or "\n" in c.strip():
            continue  # a secret was in it, or an inline script: not a fact anyone wants to read again
        if words[0] == "git" and (len(words) < 2 or words[1] in ROUTINE_GIT):
            continue
        line = " ".join(c.split())
        if line not in out:
            out.append(line)
    return out[:limit]


# -- anchoring ------------------------------------------------------------------------------------


def _lines_of(text: str, needle: str) -> tuple[int, int] | None:
    if not needle.strip():
        return None
    i = text.find(needle)
    if i < 0:
        return None
    start = text.count("\n", 0, i) + 1
    return start, start + needle.count("\n")


def edited_anchors(store: Store, resolver: Resolver, d: SessionDigest) -> list[Anchor]:
    """Anchors on what the session edited: the symbols whose code changed since the session's start
    commit that also hold an edit's new text, else all changed symbols, else the file."""
    repo = store.repo
    base = d.head if d.head and repo.commit_exists(d.head) else repo.head()
    out: list[Anchor] = []
    for path in d.edited_files:
        if path.startswith(GITMEM_DIR + "/") or not (repo.root / path).is_file():
            continue
        changed = changed_symbols(resolver, path, base, WORKTREE) if base else []
        table = resolver.table(WORKTREE, path) or {}
        try:
            text = (repo.root / path).read_text("utf-8", errors="replace")
        except OSError:
            continue
        hit: list[str] = []
        for p, new in d.edits:
            span = _lines_of(text, new) if p == path else None
            if span is None:
                continue
            inner = [n for n, s in table.items() if s.start_line <= span[0] and span[1] <= s.end_line]
            if inner:
                hit.append(max(inner, key=lambda n: n.count(".")))  # the innermost symbol
        names = [n for n in changed if n in hit] or hit or changed
        names = [n for n in dict.fromkeys(names) if "#" not in n]
        try:
            if names:
                out.extend(resolver.make(path, n, WORKTREE, as_typed=False) for n in names[:MAX_ANCHORS])
            else:
                out.append(resolver.make(path, None, WORKTREE))
        except GitmemError:
            continue
    return unique_anchors(out)[:MAX_ANCHORS]


def observation_anchors(store: Store, resolver: Resolver, obs: llm_mod.Observation,
                        session_files: list[str]) -> list[Anchor]:
    """Anchors for what an observation names, keeping only files and symbols that exist now.

    A symbol is ``path::Qualified.Name``, or a bare name found in exactly one of
    the observation's files or the session's files.
    """
    repo = store.repo
    out: list[Anchor] = []
    files = [f for f in (_rel(repo.root, f) for f in obs.files) if f]
    for spec in obs.symbols:
        given, _, name = spec.rpartition("::")
        path = _rel(repo.root, given) if given else None
        name = name.strip().rstrip("()")
        candidates = [path] if path else list(dict.fromkeys(files + session_files))
        found = [(p, name) for p in candidates if p and name in (resolver.table(WORKTREE, p) or {})]
        if len(found) == 1:
            try:
                out.append(resolver.make(found[0][0], found[0][1], WORKTREE, as_typed=False))
            except GitmemError:
                pass
    symbol_files = {a.path for a in out}
    for f in files:
        if f not in symbol_files and (repo.root / f).is_file():
            try:
                out.append(resolver.make(f, None, WORKTREE))
            except GitmemError:
                pass
    return unique_anchors(out)[:MAX_ANCHORS]


def _rel(root: Path, path: str) -> str | None:
    p = path.strip().strip("`'\"")
    if not p:
        return None
    if p.startswith("/"):
        try:
            p = Path(p).resolve().relative_to(root.resolve()).as_posix()
        except (ValueError, OSError):
            return None
    p = p.removeprefix("./")
    return None if p.startswith("../") or p.startswith(GITMEM_DIR + "/") else p


# -- the plan: what a batch writes --------------------------------------------------------------------


@dataclass
class Plan:
    """Memories to write (full) and local memory ids to delete, for one batch."""

    write: list[Memory] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)

    def to_json(self) -> bytes:
        return json.dumps({"write": [memory_to_dict(m) for m in self.write], "delete": self.delete},
                          ensure_ascii=True).encode("ascii")

    @staticmethod
    def from_json(data: bytes) -> Plan:
        raw = json.loads(data)
        return Plan([memory_from_dict(d) for d in raw.get("write", [])], [str(i) for i in raw.get("delete", [])])


def apply_plan(store: Store, plan: Plan) -> None:
    """Write the plan's memories (each cut to ``[memory] max_chars``: ``memories.fit``) and delete its local
    ids; the hook index learns exactly those files."""
    from ..memories import fit, max_chars, write

    limit = max_chars(store)
    write(store, [fit(m, limit) for m in plan.write], removed=plan.delete, removed_scope="local")


def merge_into(plan: Plan, new: Memory, existing: list[Memory], notes: list[str] | None = None) -> None:
    """Add ``new`` to ``plan``, or reinforce / supersede the near-duplicate it repeats (``compare.near_duplicate``,
    the measure ``gitmem tidy`` merges by). A near-duplicate that ``new`` contradicts (``compare.contradiction``:
    ``timeout = 30`` then ``timeout = 60``) is never reinforced: ``new`` supersedes it when it is of the same
    type, else is added beside it. A contradiction with another memory on the same code is kept as it is, and
    ``notes`` says so (``gitmem tidy`` lists the pair for review)."""
    candidates = existing + [m for m in plan.write if m not in existing]
    dup = near_duplicate(new, candidates)
    clash = contradiction(new, dup[0], any_type=True) if dup is not None else None
    if dup is not None and dup[1] >= SAME_JACCARD and clash is None:
        old = dup[0]
        before = provenance.memory_hash(old)
        old.confidence = round(min(1.0, old.confidence + CONFIDENCE_STEP), 2)
        old.facts = list(dict.fromkeys(old.facts + new.facts))
        if provenance.memory_hash(old) != before:  # its text now holds ``new``'s: never a higher level than that
            provenance.lowered(old, new)
        old.tags = list(dict.fromkeys(old.tags + new.tags))
        old.anchors = unique_anchors(old.anchors + new.anchors)[:MAX_ANCHORS]
        old.updated = utc_now()
        if old not in plan.write:
            plan.write.append(old)
        return
    if dup is not None and dup[1] >= SUPERSEDE_JACCARD and dup[0].type == new.type:
        old = dup[0]
        new.supersedes = list(dict.fromkeys([*new.supersedes, old.id]))
        new.confidence = max(new.confidence, old.confidence)
        if old.scope == "local":
            plan.delete.append(old.id)
            plan.write = [m for m in plan.write if m.id != old.id]
    elif notes is not None:
        found = (dup[0], clash) if dup is not None and clash is not None else next(
            ((m, c) for m in candidates if m.id != new.id and same_code(new, m)
             for c in [contradiction(new, m)] if c is not None), None)
        if found is not None:
            notes.append(f"new memory {new.id} contradicts {found[0].id} ({found[1].rule}: {found[1].reason}): "
                         "both kept, see `gitmem tidy`")
    plan.write.append(new)


# -- one session --------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What consolidating one session did."""

    session: str
    batches: int = 0
    events: int = 0
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    path: str = "rules"  # "rules", "llm", "llm-empty" or "skipped"
    notes: list[str] = field(default_factory=list)


def transcript(d: SessionDigest, records: list[dict[str, Any]]) -> str:
    """The (already redacted) session as compact text for the model."""
    return redact.redact_text("\n".join(_transcript_lines(records)))


def transcript_parts(records: list[dict[str, Any]], limit: int) -> list[str]:
    """The transcript in parts of at most ``limit`` characters, cut between events (an event longer than
    ``limit`` is cut itself): a long session reaches the model whole, not just its beginning."""
    parts: list[str] = []
    cur: list[str] = []
    size = 0
    for line in (redact.redact_text(ln)[:max(limit, 1)] for ln in _transcript_lines(records)):
        if cur and size + 1 + len(line) > limit:
            parts.append("\n".join(cur))
            cur, size = [], 0
        cur.append(line)
        size += len(line) + (1 if size else 0)
    if cur:
        parts.append("\n".join(cur))
    return parts


def _transcript_lines(records: list[dict[str, Any]]) -> list[str]:
    """One text block per event worth showing the model."""
    lines: list[str] = []
    for r in records:
        kind = r.get("event")
        if kind == "UserPromptSubmit":
            lines.append(f"USER: {r.get('prompt', '')}")
        elif kind == "Stop" and r.get("last_message"):
            lines.append(f"AGENT: {r['last_message']}")
        elif kind in ("PostToolUse", "PostToolUseFailure"):
            inp = r.get("input")
            if not isinstance(inp, dict):
                inp = {}
            tool = r.get("tool")
            if tool == "Edit" or (r.get("kind") == "edit" and "old_string" in inp):
                line = (f"EDIT {inp.get('file_path')}:\n- {str(inp.get('old_string', ''))[:800]}\n"
                        f"+ {str(inp.get('new_string', ''))[:800]}")
            elif tool == "Write" or r.get("kind") == "write":
                line = f"WRITE {inp.get('file_path')}"
            elif tool == "Read" or r.get("kind") == "read":
                line = f"READ {inp.get('file_path')}"
            elif tool == "Bash" or r.get("kind") == "shell":
                resp = r.get("response")
                if not isinstance(resp, dict):
                    resp = {}
                out = (str(resp.get("stdout", "")) + "\n" + str(resp.get("stderr", ""))).strip()[:600]
                line = f"$ {inp.get('command')}\n{out}"
            else:
                line = f"{tool} {json.dumps(inp, ensure_ascii=False)[:300]}"
            if kind == "PostToolUseFailure":
                line += f"\nFAILED: {str(r.get('error', ''))[:400]}"
            lines.append(line)
    return lines


def rules_memory(store: Store, resolver: Resolver, d: SessionDigest, existing: list[Memory]) -> Memory | None:
    """The deterministic memory of a session: one ``change`` memory, updated by later batches."""
    prev = next((m for m in existing if m.session == d.key and m.source == "agent" and m.type == "change"
                 and m.scope == "local"), None)
    anchors = edited_anchors(store, resolver, d) if d.edited_files else []
    if not anchors and (prev is None or not (d.last_message.strip() or notable_commands(d.commands))):
        return None  # nothing edited, and nothing new for the session's memory
    first_prompt = next((p for p in d.prompts if p.strip()), "")
    title = derive_title(first_prompt) if first_prompt else "Edited " + ", ".join(d.edited_files[:3])
    body = d.last_message.strip()[:2000]
    facts = [f"Ran: {c}" for c in notable_commands(d.commands)]  # failures are environment noise more often than not
    now = utc_now()
    if prev is not None:
        prev.origin = prev.origin or d.agent
        prev.anchors = unique_anchors(prev.anchors + anchors)[:MAX_ANCHORS]
        prev.body = body or prev.body
        prev.facts = list(dict.fromkeys(prev.facts + facts))[:12]
        prev.updated = now
        return prev
    return Memory(id=new_id(), type="change", title=title[:160], body=body or "Edited " + ", ".join(d.edited_files),
                  facts=facts, anchors=anchors, author=store.repo.user_name(), source="agent", session=d.key,
                  confidence=CONFIDENCE_RULES, created=now, updated=now, scope="local", origin=d.agent)


def existing_for(store: Store, key: str, d: SessionDigest) -> list[Memory]:
    """The memories a batch can repeat or extend: those anchored to the files the session read or
    edited (near duplicates share an anchor) and the session's own. Read from the hook index, so
    100,000 memories cost what is on those files; every memory when the hook index cannot be opened."""
    from ..catalog import db as catalog_db
    from ..catalog import files as catalog_files

    con = catalog_files.open_current(store)
    if con is None:
        return list(store.load_all().memories.values())
    try:
        root = store.repo.root
        paths = {r for r in (_rel(root, p) for p in d.edited_files + d.read_files) if r}
        ids = catalog_db.ids_on_paths(con, paths)
        ids |= catalog_files.session_ids(con, key)
        return list(catalog_files.load(con, sorted(ids)).values())
    finally:
        con.close()


def observe_batch(store: Store, key: str, records: list[dict[str, Any]], *, use_llm: bool,
                  notes: list[str]) -> list[llm_mod.LLMAnswer] | None:
    """The model's answers for a batch (None: rules, no model configured or it failed; the note says why).

    Called before the memories are locked: the model may take a minute.
    """
    cfg = llm_mod.llm_config(store.config.get("llm")) if use_llm else None
    d = digest(key, records)
    if cfg is None or not d.has_content:
        return None
    if not d.worth_recording and not any(m.session == key for m in existing_for(store, key, SessionDigest(key))):
        return None  # plan_batch skips it: no need to ask the model
    try:
        return [llm_mod.observe(cfg, part) for part in transcript_parts(records, cfg.max_input_chars)]
    except GitmemError as e:
        notes.append(e.message)
        return None


def plan_batch(store: Store, key: str, records: list[dict[str, Any]], *, use_llm: bool,
               notes: list[str], answers: list[llm_mod.LLMAnswer] | None | Literal[False] = False,
               ) -> tuple[Plan, str]:
    """The plan for one batch and which path made it ("rules", "llm", "llm-empty", "skipped").

    ``answers``: what ``observe_batch`` returned (False: ask the model here).
    """
    d = digest(key, records)
    if not d.has_content:
        return Plan(), "skipped"
    existing = existing_for(store, key, d)
    if not d.worth_recording and not any(m.session == key for m in existing):
        return Plan(), "skipped"  # only reads so far, and no memory of this session to add to
    resolver = Resolver(store.repo)
    plan = Plan()
    cfg = llm_mod.llm_config(store.config.get("llm")) if use_llm else None
    if answers is False:
        answers = observe_batch(store, key, records, use_llm=use_llm, notes=notes)
    if cfg is not None and answers is not None:
        now = utc_now()
        agent = d.agent or next((m.origin for m in existing if m.session == key and m.origin), None)
        observations = [obs for a in answers for obs in a.observations]
        for obs in observations:
            anchors = observation_anchors(store, resolver, obs, d.edited_files + d.read_files)
            if not anchors:
                notes.append(f"dropped observation without a resolvable anchor: {obs.title[:80]}")
                continue
            m = Memory(id=new_id(), type=obs.type, origin=agent, title=redact.redact_text(obs.title),
                       body=redact.redact_text(obs.body), facts=[redact.redact_text(f) for f in obs.facts],
                       tags=obs.tags, anchors=anchors, author=store.repo.user_name(), source="llm",
                       session=key, model=cfg.model, confidence=CONFIDENCE_LLM, created=now,
                       updated=now, scope="local")
            _strip_instructions(m, notes)
            merge_into(plan, m, existing, notes)
        return plan, "llm" if observations else "llm-empty"
    memory = rules_memory(store, resolver, d, existing)
    if memory is not None:
        _strip_instructions(memory, notes)
        plan.write.append(memory)
    return plan, "rules"


def _strip_instructions(m: Memory, notes: list[str]) -> None:
    """Drop the lines of ``m`` that read as instructions to an agent (``memories.strip_instructions``: a
    captured tool output or web page laundered into a memory), each noted in ``notes``."""
    from ..memories import strip_instructions

    for dropped in strip_instructions(m):
        notes.append(f"dropped a line that reads as an instruction from {m.id}: {dropped}")


def reconcile_with_transcript(store: Store, key: str, seen: set[str], notes: list[str]) -> None:
    """If session ``key`` has ended or finished a turn (a SessionEnd or Stop record is pending: headless
    Codex, Gemini and Copilot runs are consolidated from their Stop hooks) and its agent left a transcript,
    append to its live spool what the transcript holds and the spool does not: tool calls whose asynchronous
    hook was cut short, the final message of a cancelled Stop hook or of one that carries none
    (``integrations.agents.reconcile``).

    The caller holds the session's lock and claims the live spool afterwards, so the added records are
    consolidated in this run; ``seen`` (already consolidated) and the pending records keep each event once.
    Never raises: a failure leaves the spool as the hooks wrote it (a note says why).
    """
    root = store.repo.root
    pending: list[dict[str, Any]] = []
    for path in [*spool.batches(root, key), spool.live_path(root, key)]:
        pending += spool.read_records(path)[0]
    if not any(r.get("event") in ("SessionEnd", "Stop") for r in pending):
        return
    try:
        from ..integrations.agents import reconcile

        added = reconcile.reconcile(root, key, pending, seen)
    except Exception as e:  # noqa: BLE001 - the spool alone still makes the memories
        notes.append(f"transcript not reconciled: {type(e).__name__}: {e}")
        return
    if added:
        notes.append(f"reconciled with the transcript: {added} event{'' if added == 1 else 's'} added")


def consolidate_session(store: Store, key: str, *, use_llm: bool = True,
                        progress: Callable[[str], None] | None = None, wait: float = 0) -> Outcome | None:
    """Consolidate session ``key``: pending plans, then every batch (the live spool claimed first).

    Returns None when another process is consolidating this session right now and
    did not finish within ``wait`` seconds.

    Raises:
        OSError: the spool or memory files cannot be written.
    """
    root = store.repo.root
    folder = spool.spool_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        lock = FileLock(str(folder / f"{key}.lock"), timeout=wait)
        lock.acquire()
    except Timeout:
        return None
    try:
        out = Outcome(session=key)
        seen = spool.read_seen(root, key)
        reconcile_with_transcript(store, key, seen, out.notes)
        spool.claim(root, key)
        for batch in spool.batches(root, key):
            plan_path = batch.with_name(batch.name.removesuffix(spool.BATCH_SUFFIX) + spool.PLAN_SUFFIX)
            if plan_path.exists():
                try:
                    plan = Plan.from_json(plan_path.read_bytes())
                except (ValueError, KeyError, TypeError):
                    plan_path.unlink()
                    plan = None
                if plan is not None:
                    apply_plan(store, plan)
                    out.written += [m.id for m in plan.write]
                    spool.add_seen(root, key, spool.fresh(spool.read_records(batch)[0], seen)[1])
                    batch.unlink(missing_ok=True)
                    plan_path.unlink(missing_ok=True)
                    continue
            records, keys = spool.fresh(spool.read_records(batch)[0], seen)
            out.batches += 1
            out.events += len(records)
            if progress:
                progress(f"session {key}: {len(records)} events")
            answers = observe_batch(store, key, records, use_llm=use_llm, notes=out.notes)
            # one consolidation at a time reads, merges and writes the memories (two sessions repeating
            # one memory must both strengthen it); the model was asked before, outside this lock
            with FileLock(str(folder / MEMORIES_LOCK), timeout=MEMORIES_LOCK_WAIT_S):
                plan, how = plan_batch(store, key, records, use_llm=use_llm, notes=out.notes, answers=answers)
                if plan.write or plan.delete:
                    atomic_write(plan_path, plan.to_json())
                    apply_plan(store, plan)
            out.path = how if out.path in ("rules", "skipped") else out.path
            out.written += [m.id for m in plan.write]
            out.removed += plan.delete
            spool.add_seen(root, key, keys)  # before the batch goes: a crash leaves them to be read again
            batch.unlink(missing_ok=True)
            plan_path.unlink(missing_ok=True)
        out.written = list(dict.fromkeys(out.written))
        return out
    finally:
        lock.release()


def consolidate_all(store: Store, *, use_llm: bool = True,
                    progress: Callable[[str], None] | None = None) -> list[Outcome]:
    """Consolidate every session with spooled events (sessions busy elsewhere are skipped)."""
    out = []
    for key in spool.pending_sessions(store.repo.root):
        res = consolidate_session(store, key, use_llm=use_llm, progress=progress)
        if res is not None:
            out.append(res)
    return out
