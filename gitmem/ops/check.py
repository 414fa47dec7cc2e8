"""``gitmem check``: the pull-request gate — does this change leave team memories true, valid and clean?

For the change from the merge base of ``base`` (default: the default branch,
``Repo.default_branch``) and HEAD to HEAD, one ``Problem`` per:

* ``stale`` — a team memory that a commit of the change made not fresh (its
  anchor's code changed, moved away or was deleted) unless what it says was
  changed since (updated, retired or superseded by a person; re-anchored
  memories are fresh). gitmem's own writes (sharing a local memory with the
  commit, following moved code) change no text, so they never count as a review;
* ``moved`` — the same for an anchor whose code moved (another name or file, its body unchanged) and was not
  followed (the git hooks follow moves in the commit; ``gitmem reanchor`` after a commit made without them);
  worded like the statuses of ``stale`` and ``show``, not as ``stale``;
* ``invalid`` — a memory file that does not parse (bad YAML, conflict markers, …);
* ``unreviewed`` — with ``require_reviewed`` (``--require-reviewed``, for teams that want every shared
  memory read by a person): a team memory no person has reviewed since its text last changed
  (``provenance``: its ``reviewed`` entry is missing or no longer matches its text), named by file;
  (warnings, never a failure: memory files with front-matter keys this version does not know, a newer
  gitmem's, kept as they are; a memory the change makes a rule when it was not, ``raised_warnings``);
* ``invariant`` — an ``invariant: true`` memory whose sites the change did not
  change together (``gitmem.invariants``), counted from the last commit of the change
  that wrote the memory (its creation, for one made in the change), else from the base;
* ``secret`` — a file in the team memory folder holding something the redactor removes (a token, a
  key, a password), which must not be committed: every file there, retired, superseded and unparsable
  ones included (a token pasted by hand into an old file is as public as one in a live memory).
* ``instruction`` — a team memory file with a line that reads as an instruction to the agent
  (``gitmem.injection``'s rules: run a downloaded script, ignore your instructions, send data
  somewhere, run encoded code, a fake role tag or gitmem header), one problem per line, naming the
  file, the line number in it and the rule: every teammate's agent is given the memory.

No all-clear that is not backed: when there is no base to compare with, or no merge base (a
shallow clone, the default checkout of most CI systems, or unrelated histories), ``check``
raises ``GitmemError`` naming the base it tried and the fix, rather than checking nothing.

Work is proportional to the change: only memories anchored to files the change
touched are evaluated (the secret scan reads every file of the folder). Local-scope memories are never
checked (never committed; redaction runs on every way in).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..analyzer import memories_touching, memory_status
from ..anchors import Resolver
from ..errors import GitError, GitmemError
from ..git import Repo
from ..layout import MEMORY_SUFFIX, TEAM_MEMORIES
from ..memfile import valid_id
from ..model import Memory, Status
from ..store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

_MARKER = re.compile(r"\[REDACTED:([\w-]+)\]")
#: A YAML key (``was: ``, ``- anchor: ``) at the start of a memory file's line.
_YAML_LINE = re.compile(r"^[-\s]*[\w-]+:\s*")


@dataclass
class Problem:
    """One finding: ``kind`` (stale, moved, unchecked, invalid, unreviewed, invariant, secret, instruction), the
    memory id or file, and one line saying what."""

    kind: str
    subject: str
    message: str


@dataclass
class Checked:
    """What ``check`` compared: ``base_ref`` as named (``origin/main``), its commit ``tip``, the merge
    base with HEAD ``base`` (equal to ``head`` when HEAD is already in the base: nothing to check),
    and the ``problems`` found; ``warnings``: one line each for what is not a problem but worth knowing."""

    base_ref: str
    tip: str
    base: str
    head: str
    problems: list[Problem]
    warnings: list[str] = field(default_factory=list)


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


def check(store: Store, base: str | None = None, *, require_reviewed: bool = False) -> Checked:
    """Check the change from the merge base of ``base`` (default: the default branch) and HEAD to HEAD;
    with ``require_reviewed``, also every team memory for a review of its text as it is (``unreviewed``).

    Raises:
        GitmemError: see ``resolve_base``; nothing is reported as fine when the change cannot be found.
    """
    repo = store.repo
    base_ref, tip, base_sha, head = resolve_base(repo, base)
    loaded = store.load_all()
    problems: list[Problem] = []
    for e in loaded.errors:
        problems.append(Problem("invalid", e.path if hasattr(e, "path") else "", e.message))
    problems.extend(secrets_in_files(store))
    for mid, path in loaded.paths.items():
        if loaded.memories[mid].scope == "team":
            problems.extend(_instructions(store.display(path), loaded.memories[mid],
                                          path.read_text("utf-8", errors="replace")))
    result = Checked(base_ref, tip, base_sha, head, problems)
    if require_reviewed:
        problems += unreviewed(store, loaded.memories.values(), loaded.paths)
    result.warnings = unknown_key_warnings(store, [*loaded.memories.values(), *loaded.retired.values()])
    if base_sha == head:
        # HEAD is in the base: no change to check (the memory files were). Memories already stale there are not
        # this change's doing, but "ok" must not read as "the memories are fresh": they are named as a warning.
        result.warnings += stale_at_head_warnings(store, head, loaded.memories.values())
        return result
    changes = repo.changed_files(base_sha, head)
    touched = {p for ch in changes for p in (ch.old_path, ch.new_path) if p}
    result.warnings += raised_warnings(store, base_sha, [m for m in loaded.memories.values()
                                                         if f"{TEAM_MEMORIES}/{m.id}.md" in touched], loaded.paths)
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
            if a.status == Status.FRESH or not a.anchor.local:  # another repository's code: gitmem org check
                continue
            if a.commit is not None and a.commit not in order:
                continue  # made not fresh before this change: not this change's problem
            if last >= 0 and _reviewed(repo, m, commits[order[a.commit]] if a.commit is not None else None,
                                       base_sha):
                continue  # its author changed what it says at or after the commit that made it not fresh
            where = ""
            if a.status == Status.MOVED and a.path_now:
                where = f" (now {a.path_now}" + (f"::{a.symbol_now})" if a.symbol_now else ")")
            # unchecked: a partial clone lacks the code (the reason names the object and its fetch): not passed
            kind = {Status.MOVED: "moved", Status.UNCHECKED: "unchecked"}.get(a.status, "stale")
            problems.append(Problem(kind, m.id, f"{m.id} \"{m.title}\": {a.anchor.key} {a.status.value}"
                                                   f"{where} — {a.reason}"))
    return result


def _instructions(shown: str, m: Memory, text: str) -> list[Problem]:
    """One ``instruction`` problem per line of memory file ``text`` (shown as ``shown``) that ``injection``
    flags: ``<file>:<line>: <rule> — <why>: "<line>"``; then one per flagged line of ``m``'s fields as read
    (title, body, facts, tags, anchors and their old names) that the file's own lines do not show as they are
    (YAML escapes, ``"\\x7C"`` for ``|``, or a quoted string folded over lines): ``<file>: <field> line N: …``."""
    from .. import injection
    from ..memories import instruction_lines

    tail = "; reword it as a note about the code (memories reach every agent as data, not orders)"
    raw = injection.scan(text)
    out = [Problem("instruction", m.id, f"{shown}:{f.line}: {f.rule} — {f.why}: \"{f.text}\"{tail}") for f in raw]
    anchors = {f"anchor {i}": a.key + (f" (was {a.was})" if a.was else "") for i, a in enumerate(m.anchors, 1)}
    # what each flagged file line says without its YAML key and quotes, to tell the same line read from the file
    said = [(f.rule, _YAML_LINE.sub("", f.text).strip("-\"'\\ ")) for f in raw]
    for name, f in [*instruction_lines(m), *injection.scan_fields(anchors)]:
        if f.text in text or any(rule == f.rule and bit and bit in f.text for rule, bit in said):
            continue  # the file shows this line as it is: reported by its line above
        out.append(Problem("instruction", m.id, f"{shown}: {name} line {f.line}: {f.rule} — {f.why}: "
                                                f"\"{f.text}\" (as read from the file's escapes){tail}"))
    return out


#: Files larger than this are scanned only up to it (a memory file is a few KB; ``[memory] max_chars``).
SCAN_MAX_BYTES = 4 * 1024 * 1024


def secrets_in_files(store: Store) -> list[Problem]:
    """One ``secret`` problem per file under the team memory folder that holds a secret, by path.

    Every regular file of ``.gitmem/memories/`` (recursively, whatever its name) is read — live,
    retired and superseded memories, files that do not parse, stray files — since all of them are
    committed; symbolic links are not followed (``load_all`` reports them). The subject is the memory id
    of a ``<id>.md`` file, else the file's path as shown (``store.display``); the message names the file
    and the kinds of secret (the redactor's markers), never the secret.
    """
    from ..capture.redact import redact_text

    problems: list[Problem] = []
    top = store.memories_dir
    if not top.is_dir():
        return problems
    files: list[Path] = []
    for folder, dirs, names in os.walk(top):
        dirs.sort()
        files.extend(Path(folder) / n for n in sorted(names))
    for path in files:
        if path.is_symlink() or not path.is_file():
            continue
        try:
            with path.open("rb") as f:
                text = f.read(SCAN_MAX_BYTES).decode("utf-8", errors="replace")
        except OSError as e:
            problems.append(Problem("invalid", store.display(path), f"cannot read: {e.strerror}"))
            continue
        redacted = redact_text(text)
        if redacted != text:
            kinds = sorted(set(_MARKER.findall(redacted)) - set(_MARKER.findall(text))) or ["private"]
            shown = store.display(path)
            subject = path.stem if path.suffix == MEMORY_SUFFIX and valid_id(path.stem) else shown
            problems.append(Problem("secret", subject, f"{shown} holds a secret ({', '.join(kinds)}): "
                                                     "remove it before committing (and revoke it: it may be in "
                                                     "the history)"))
    return problems


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


def unreviewed(store: Store, memories: Iterable[Memory], paths: Mapping[str, Path]) -> list[Problem]:
    """One ``unreviewed`` problem per team memory whose text no person has reviewed as it is now
    (``provenance.of``: level other than reviewed), naming its file and how it came to be; by file name."""
    from .. import provenance

    out = []
    for m in sorted(memories, key=lambda m: m.id):
        if m.scope != "team":
            continue
        trust = provenance.of(m)
        if trust.level == provenance.REVIEWED:
            continue
        why = "its text changed since the review" if m.reviewed is not None else "never reviewed"
        name = store.display(paths[m.id]) if m.id in paths else m.id
        out.append(Problem("unreviewed", m.id, f"{name} \"{m.title}\": not reviewed by a person ({why}; "
                                               f"{trust.label or 'source ' + m.source}) — read it, then "
                                               f"`gitmem review {m.id}`"))
    return out


def raised_warnings(store: Store, base: str, memories: Iterable[Memory], paths: Mapping[str, Path]) -> list[str]:
    """One line per team memory of ``memories`` (those whose files the change wrote) that the change makes a rule
    (``provenance``: reviewed or person-written) when it was not one at ``base`` (agent-captured, imported,
    model-written, from a commit), or adds as reviewed text no person wrote: a review or a ``source`` is a line
    anyone (an agent too) can write by hand, so the pull request's reviewer is told to confirm a person did."""
    from .. import provenance
    from ..memfile import loads

    out = []
    for m in sorted(memories, key=lambda m: m.id):
        now = provenance.of(m)
        if m.scope != "team" or not now.rule:
            continue
        data = store.repo.read(base, f"{TEAM_MEMORIES}/{m.id}.md")
        try:
            then = provenance.of(loads(data.decode("utf-8", "replace"))) if data is not None else None
        except GitmemError:
            then = None
        if then is not None and then.rule:
            continue
        if then is None and m.source == "user":
            continue  # a person's new memory (``remember``): the usual case
        name = store.display(paths[m.id]) if m.id in paths else m.id
        was = f"from {then.label or 'unknown'}" if then is not None else f"added ({m.source}"
        was += "" if then is not None else (f" {m.origin})" if m.origin else ")")
        by = f"reviewed by {m.reviewed.by or '?'}" if now.level == provenance.REVIEWED and m.reviewed else \
            f"source: {m.source}"
        out.append(f"{name} \"{m.title}\": this change makes it a rule {was}, {by}; a review or source "
                   "is a line anyone can write: make sure a person read it (agents cannot run gitmem review)")
    return out


def stale_at_head_warnings(store: Store, head: str, memories: Iterable[Memory]) -> list[str]:
    """One line when team memories of ``memories`` are not fresh at ``head`` (stale, moved, deleted anchors),
    naming up to ``MAX_NAMED`` ids and ``gitmem stale``; [] when every one is fresh."""
    from ..analyzer import evaluate

    team = [m for m in memories if m.scope == "team" and m.anchors]
    bad = [ms.memory.id for ms in evaluate(store, head, team) if ms.status != Status.FRESH]
    if not bad:
        return []
    named = ", ".join(bad[:MAX_NAMED]) + (f" and {len(bad) - MAX_NAMED} more" if len(bad) > MAX_NAMED else "")
    return [f"{len(bad)} team memor{'y is' if len(bad) == 1 else 'ies are'} not fresh at HEAD ({named}), made so "
            "before the checked range: `gitmem stale` lists them; `--base REV` checks a change"]


#: Ids named in one ``stale_at_head_warnings`` line.
MAX_NAMED = 5


def unknown_key_warnings(store: Store, memories: Iterable[Memory]) -> list[str]:
    """One line per memory file (retired ones included) holding front-matter keys this version does not know
    (``memfile.unknown_keys``), by id."""
    from ..memfile import unknown_keys

    out = []
    for m in sorted(memories, key=lambda m: m.id):
        keys = unknown_keys(m)
        if keys:
            name = store.display(store.path_for(m))
            out.append(f"{name}: front-matter key(s) {', '.join(keys)} unknown to this gitmem (written by a newer "
                       "one?): kept as they are; upgrade gitmem to use them")
    return out
