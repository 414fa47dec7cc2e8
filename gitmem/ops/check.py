"""``gitmem check``: the pull-request gate — does this change leave team memories true, valid and clean?

For the change from the merge base of ``base`` (default: the default branch,
``Repo.default_branch``) and HEAD to HEAD, one ``Problem`` per:

* ``stale`` — a team memory that a commit of the change made not fresh (its
  anchor's code changed, moved away or was deleted) unless what it says was
  changed since (updated, retired or superseded by a person; re-anchored
  memories are fresh). gitmem's own writes (sharing a local memory with the
  commit, following moved code) change no text, so they never count as a review;
* ``invalid`` — a memory file that does not parse (bad YAML, conflict markers, …);
* ``invariant`` — an ``invariant: true`` memory whose sites the change did not
  change together (``gitmem.invariants``), counted from the last commit of the change
  that wrote the memory (its creation, for one made in the change), else from the base;
* ``secret`` — a memory file holding something the redactor removes (a token, a
  key, a password), which must not be committed;
* ``instruction`` — a team memory file with a line that reads as an instruction to the agent
  (``gitmem.injection``'s rules: run a downloaded script, ignore your instructions, send data
  somewhere, run encoded code, a fake role tag or gitmem header), one problem per line, naming the
  file, the line number in it and the rule: every teammate's agent is given the memory.

No all-clear that is not backed: when there is no base to compare with, or no merge base (a
shallow clone, the default checkout of most CI systems, or unrelated histories), ``check``
raises ``GitmemError`` naming the base it tried and the fix, rather than checking nothing.

Work is proportional to the change: only memories anchored to files the change
touched are evaluated. Local-scope memories are never checked (never committed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..analyzer import memories_touching, memory_status
from ..anchors import Resolver
from ..errors import GitError, GitmemError
from ..git import Repo
from ..layout import TEAM_MEMORIES
from ..model import Memory, Status
from ..store import Store

_MARKER = re.compile(r"\[REDACTED:([\w-]+)\]")


@dataclass
class Problem:
    """One finding: ``kind`` (stale, invalid, secret), the memory id or file, and one line saying what."""

    kind: str
    subject: str
    message: str


@dataclass
class Checked:
    """What ``check`` compared: ``base_ref`` as named (``origin/main``), its commit ``tip``, the merge
    base with HEAD ``base`` (equal to ``head`` when HEAD is already in the base: nothing to check),
    and the ``problems`` found."""

    base_ref: str
    tip: str
    base: str
    head: str
    problems: list[Problem]


_SHALLOW_HINT = ("fetch the history: git fetch --unshallow (GitHub Actions: actions/checkout with "
                 "fetch-depth: 0; GitLab CI: GIT_DEPTH: 0)")


def resolve_base(repo: Repo, base: str | None) -> tuple[str, str, str, str]:
    """(base as named, its commit, the merge base with HEAD, HEAD) for ``check``.

    Raises:
        GitmemError: no commits; ``base`` names no commit; no ``base`` given and no default branch
            here; HEAD and the base have no merge base here (the hint says ``git fetch --unshallow``
            in a shallow clone). Each message names the base it tried.
    """
    head = repo.head()
    if head is None:
        raise GitmemError("the repository has no commits yet", "commit first")
    shallow = repo.is_shallow()
    if base:
        try:
            name, tip = base, repo.resolve(base)
        except GitError:
            raise GitmemError(f"cannot check: the base {base!r} is not a commit in this clone",
                              f"fetch it first (git fetch origin {base.removeprefix('origin/')})"
                              + ("; this is a shallow clone: " + _SHALLOW_HINT if shallow else "")) from None
    else:
        found = repo.default_branch()
        if found is None:
            raise GitmemError("cannot check: no base to compare with (none of "
                              f"{', '.join(repo.DEFAULT_BRANCHES)} exists in this clone)",
                              "pass --base REV, or fetch the target branch (git fetch origin main)")
        name, tip = found
    merge_base = repo.merge_base(tip, head)
    if merge_base is None:
        if shallow:
            raise GitmemError(f"cannot check: HEAD and the base {name} ({tip[:12]}) have no merge base in this "
                              "shallow clone", _SHALLOW_HINT)
        raise GitmemError(f"cannot check: HEAD and the base {name} ({tip[:12]}) share no history",
                          "pass --base with a commit this branch grew from")
    return name, tip, merge_base, head


def check(store: Store, base: str | None = None) -> Checked:
    """Check the change from the merge base of ``base`` (default: the default branch) and HEAD to HEAD.

    Raises:
        GitmemError: see ``resolve_base``; nothing is reported as fine when the change cannot be found.
    """
    repo = store.repo
    base_ref, tip, base_sha, head = resolve_base(repo, base)
    loaded = store.load_all()
    problems: list[Problem] = []
    for e in loaded.errors:
        problems.append(Problem("invalid", e.path if hasattr(e, "path") else "", e.message))
    from ..capture.redact import redact_text

    for mid, path in loaded.paths.items():
        if loaded.memories[mid].scope != "team":
            continue
        text = path.read_text("utf-8", errors="replace")
        redacted = redact_text(text)
        if redacted != text:
            kinds = sorted(set(_MARKER.findall(redacted)) - set(_MARKER.findall(text))) or ["private"]
            problems.append(Problem("secret", mid, f"{store.display(path)} holds a secret ({', '.join(kinds)}): "
                                                   "remove it before committing"))
        problems.extend(_instructions(store.display(path), mid, text, loaded.memories[mid]))
    result = Checked(base_ref, tip, base_sha, head, problems)
    if base_sha == head:
        return result  # HEAD is in the base: no change to check (the memory files were)
    changes = repo.changed_files(base_sha, head)
    touched = {p for ch in changes for p in (ch.old_path, ch.new_path) if p}
    commits = repo.commits_between(base_sha, head)  # the change, oldest first
    order = {c: i for i, c in enumerate(commits)}
    resolver = Resolver(repo)
    team = [m for m in loaded.memories.values() if m.scope == "team"]
    from ..invariants import breaks

    concerned = memories_touching(team, touched)
    # per memory, the last commit of the change that wrote its file (updated, re-anchored, retired, superseded,
    # created, shared, or re-anchored by gitmem's pre-commit follow of moved code); -1: none did
    written = {m.id: max((order[c] for c in repo.commits_touching(base_sha, head, f"{TEAM_MEMORIES}/{m.id}.md")
                          if c in order), default=-1) for m in concerned}
    since: dict[str, list[Memory]] = {}  # an invariant's sites must change together after it was last written
    for m in concerned:
        since.setdefault(commits[written[m.id]] if written[m.id] >= 0 else base_sha, []).append(m)
    for start, mems in since.items():
        for b in breaks(repo, mems, start, head):
            problems.append(Problem("invariant", b.memory.id, b.line()))
    for m in concerned:
        last = written[m.id]
        ms = memory_status(resolver, m, head)
        for a in ms.anchors:
            if a.status == Status.FRESH:
                continue
            if a.commit is not None and a.commit not in order:
                continue  # made not fresh before this change: not this change's problem
            if last >= 0 and _reviewed(repo, m, commits[order[a.commit]] if a.commit is not None else None,
                                       base_sha):
                continue  # its author changed what it says at or after the commit that made it not fresh
            where = ""
            if a.status == Status.MOVED and a.path_now:
                where = f" (now {a.path_now}" + (f"::{a.symbol_now})" if a.symbol_now else ")")
            problems.append(Problem("stale", m.id, f"{m.id} \"{m.title}\": {a.anchor.key} {a.status.value}"
                                                   f"{where} — {a.reason}"))
    return result


def _instructions(shown: str, mid: str, text: str, m: Memory) -> list[Problem]:
    """One ``instruction`` problem per line of memory file ``text`` (shown as ``shown``) that ``injection``
    flags: ``<file>:<line>: <rule> — <why>: "<line>"``; then one per line of ``m``'s front-matter fields (its
    parsed title, tags and facts) flagged only once YAML's escapes are read (``"| \\x73h"``, ``"\\U000E0072"``):
    ``<file> (<field> line <n>): <rule> — …``."""
    from .. import injection

    tail = "; reword it as a note about the code (memories reach every agent as data, not orders)"
    found = injection.scan(text)
    out = [Problem("instruction", mid, f"{shown}:{f.line}: {f.rule} — {f.why}: \"{f.text}\"{tail}") for f in found]
    lines = text.splitlines()
    raw = [lines[f.line - 1] for f in found]
    fields = {"title": m.title, **{f"tag {i}": t for i, t in enumerate(m.tags, 1)},
              **{f"fact {i}": f for i, f in enumerate(m.facts, 1)}}
    for name, value in fields.items():
        for n, line in enumerate(value.splitlines(), 1):
            rule = injection.line_rule(line)
            if rule and not any(line.strip() in r for r in raw):
                out.append(Problem("instruction", mid, f"{shown} ({name} line {n}): {rule} — "
                                                       f"{injection.BY_NAME[rule].why}: {line.strip()[:120]!r}{tail}"))
    return out


def _reviewed(repo: Repo, m: Memory, made_stale: str | None, base: str) -> bool:
    """Whether a person changed what memory ``m`` says (its title, body, facts, type, or retired it) between
    the commit before ``made_stale`` (the commit that made it not fresh; None: unknown, then the base) and
    now. gitmem's own writes (sharing a local memory, re-anchoring it to moved code) leave the text as it was,
    so they never count as a review; a memory that did not exist then was not reviewed either."""
    from ..memfile import loads

    parents = repo.parents(made_stale) if made_stale else []
    then_rev = parents[0] if parents else base
    data = repo.read(then_rev, f"{TEAM_MEMORIES}/{m.id}.md")
    if data is None:
        return False
    try:
        then = loads(data.decode("utf-8", "replace"))
    except GitmemError:
        return False
    return (then.title, then.body, then.facts, then.type, then.retired) != (m.title, m.body, m.facts, m.type,
                                                                          m.retired)
