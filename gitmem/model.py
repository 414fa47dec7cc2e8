"""The vocabulary of gitmem: Memory, Anchor, Symbol, Status, AnchorStatus.

Plain dataclasses and enums, nothing else: no I/O, no git, no parsing. Every
other module speaks in these types. Paths are repo-relative POSIX paths; line
numbers are 1-based and spans inclusive; times are UTC ISO-8601 strings
(``2026-11-30T17:22:49Z``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Memory types (DESIGN.md §2). The first six come from observation logs; the
#: last four are the kinds users miss most in other tools.
MEMORY_TYPES: tuple[str, ...] = (
    "decision", "bugfix", "feature", "refactor", "discovery", "change",
    "constraint", "preference", "gotcha", "todo",
)

#: Who wrote a memory's text: a person (``user``), an agent session (``agent``: captured by the rules or
#: written through MCP), a consolidation model (``llm``), a commit message (``commit``), another tool or an
#: export (``import``). ``provenance`` turns it (with ``origin``, ``model`` and ``reviewed``) into a level.
SOURCES: tuple[str, ...] = ("user", "agent", "llm", "commit", "import")
SCOPES: tuple[str, ...] = ("team", "local")

#: Anchor kinds that are not symbols.
KIND_FILE = "file"
KIND_COMMIT = "commit"


class Status(str, enum.Enum):  # noqa: UP042 - a StrEnum would change str() and format() of a member
    """Status of an anchor (or a memory) at a revision.

    Ordered by severity: a memory's status is the worst of its anchors'
    (``Status.worst``). ``moved`` is milder than ``stale`` because the code
    itself is unchanged and the anchor can follow it. ``unchecked`` is the status of a
    cross-repository anchor whose repository could not be reached by this check (``gitmem stale``,
    ``gitmem org check``): not known to be fresh; the catalog keeps the last status that was checked. It is
    also that of an anchor on a git-lfs file that can be judged neither by what it recorded nor by the
    file's content id (the anchor's commit is not in this clone: ``anchors.Resolver``).
    ``unwritten`` is only ever a status at a past revision (``gitmem stale --rev R``, R older than the
    anchor): the anchored code was not yet written at R (``anchors.Resolver.status``); the memory does not
    apply there, nor is anything of it wrong.
    """

    FRESH = "fresh"
    UNCHECKED = "unchecked"
    UNWRITTEN = "unwritten"
    MOVED = "moved"
    STALE = "stale"
    DELETED = "deleted"

    @property
    def severity(self) -> int:
        return _SEVERITY[self]

    @property
    def label(self) -> str:
        """The status as listed for a person: ``fresh``, else ``⚠ `` and the status (``⚠ stale``)."""
        return self.value if self is Status.FRESH else f"⚠ {self.value}"

    @staticmethod
    def worst(statuses: list[Status]) -> Status:
        """The most severe of ``statuses``; ``FRESH`` for an empty list."""
        return max(statuses, key=lambda s: s.severity, default=Status.FRESH)


_SEVERITY = {Status.FRESH: 0, Status.UNCHECKED: 1, Status.UNWRITTEN: 2, Status.MOVED: 3, Status.STALE: 4,
             Status.DELETED: 5}

#: A status filter (``gitmem list --status``): a status, or ``not-fresh`` for any other than fresh.
STATUS_FILTERS = ("fresh", "moved", "stale", "deleted", "not-fresh")


class Change(str, enum.Enum):  # noqa: UP042 - a StrEnum would change str() and format() of a member
    """What changed about an anchored symbol or file (the ``what`` of a reason)."""

    BODY = "body"
    SIGNATURE = "signature"
    DECORATORS = "decorators"
    CONTENT = "content"        # a file anchor's code tokens changed
    RENAME = "rename"          # the symbol now has another qualified name
    MOVE = "move"              # the file was renamed, or the symbol is in another file
    DELETION = "deletion"


@dataclass(frozen=True)
class Symbol:
    """One symbol of a source file, as the code model sees it at one blob.

    Attributes:
        name: qualified name, nesting joined with ``.`` (``Signer.sign``).
        kind: ``function``, ``method``, ``class``, ``interface``, ``struct``,
            ``enum``, ``trait``, ``type``, ``property`` ...
        start_line, end_line: 1-based inclusive span, decorators included.
        fingerprint: ``ts1:<hex>`` hash of the symbol's syntax-tree tokens with
            comments, docstrings and whitespace left out.
        signature_fp: hash of the tokens before the body (name, parameters,
            return type); "" when the language has no separate body.
        body_fp: hash of the body's tokens.
        decorators_fp: hash of the decorator / annotation tokens ("" if none).
        shape_fp: hash of all the symbol's tokens except its own name: equal
            shapes under different names mean a rename. "" when the body is
            too small to identify code (see ``code.symbols.MIN_SHAPE_BODY_TOKENS``).
        shape_self_fp: like ``shape_fp`` but with the own name replaced by a
            placeholder in the body too, where the body names the symbol
            (recursion): a recursive function renamed with its own calls keeps
            it. "" when the body does not name the symbol.
        parts: when the symbol holds several definitions (overload stubs and
            their implementation, conditional alternatives), the fingerprint
            each definition had on its own as an earlier gitmem recorded it;
            () for a symbol of one plain definition.
        aliases: the other names an earlier gitmem gave this code (``f#2``,
            ``Parser.parse`` before the overloads were named by their
            parameters), so anchors recorded under them still resolve.
    """

    name: str
    kind: str
    start_line: int
    end_line: int
    fingerprint: str
    signature_fp: str = ""
    body_fp: str = ""
    decorators_fp: str = ""
    shape_fp: str = ""
    parts: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    shape_self_fp: str = ""


@dataclass
class Anchor:
    """What a memory is about, recorded against one commit.

    Exactly one of these shapes:
      * symbol anchor: ``path`` and ``symbol`` set (``src/a.py::Signer.sign``);
      * file anchor: ``path`` set, ``symbol`` None (``kind == "file"``);
      * commit anchor: ``path`` None, ``kind == "commit"``, ``commit`` the SHA.

    Attributes:
        path: repo-relative POSIX path, or None for a commit anchor.
        symbol: qualified name, or None.
        commit: full SHA of the commit the anchor was made against (None when
            made against a repository with no commits yet).
        kind: symbol kind, ``file`` or ``commit``.
        span: (start_line, end_line) at ``commit``, 1-based inclusive; None for commits.
        fingerprint: fingerprint at ``commit`` (symbol or file); None for commits.
        was: the anchor's key (``path::Qualified.Name`` or ``path``) before its code was moved or
            renamed and the anchor followed it (re-anchoring, the commit hooks); the first such key
            is kept across later moves, so it is the name the memory was written about. None when
            the anchor never changed place.
        repo: the organisation repository (a name of ``[org.repos]``) the code is in, for a
            cross-repository anchor (``ledger:src/api.py::retry_after``): ``path`` is relative to that
            repository and ``commit`` is one of its commits. None (the default): this repository. Nothing
            that resolves anchors against this repository touches a foreign one (``local``);
            ``gitmem.org.xrepo`` checks it against the other repository.
    """

    path: str | None
    symbol: str | None = None
    commit: str | None = None
    kind: str = KIND_FILE
    span: tuple[int, int] | None = None
    fingerprint: str | None = None
    was: str | None = None
    repo: str | None = None

    @property
    def local(self) -> bool:
        """Whether the anchor is to this repository's code or commits (not a cross-repository anchor)."""
        return self.repo is None

    @property
    def key(self) -> str:
        """The anchor's text form: ``path::Qualified.Name``, ``path`` or ``commit:<sha>``; a cross-repository
        anchor's has its repository in front: ``REPO:path::Qualified.Name``, ``REPO:path``."""
        if self.kind == KIND_COMMIT:
            return f"commit:{self.commit}"
        where = f"{self.repo}:" if self.repo is not None else ""
        if self.symbol:
            return f"{where}{self.path}::{self.symbol}"
        return where + (self.path or "")

    @property
    def local_key(self) -> str:
        """``key`` without the repository: ``path::Qualified.Name`` or ``path`` inside the anchor's repository."""
        return Anchor(self.path, self.symbol, self.commit, self.kind).key


def unique_anchors(anchors: list[Anchor]) -> list[Anchor]:
    """``anchors`` without repeats of an anchor key, first occurrence kept, order kept."""
    first: dict[str, Anchor] = {}
    for a in anchors:
        first.setdefault(a.key, a)
    return list(first.values())


def parse_anchor_spec(spec: str) -> tuple[str | None, str | None, str | None]:
    """Split a user-given anchor ``PATH[::SYMBOL]`` or ``commit:REV``.

    Returns:
        (path, symbol, commit_rev): ``(path, None, None)`` for a file,
        ``(path, symbol, None)`` for a symbol, ``(None, None, rev)`` for a commit.
    """
    if spec.startswith("commit:"):
        return None, None, spec[len("commit:"):]
    if "::" in spec:
        path, _, symbol = spec.partition("::")
        return path, symbol or None, None
    return spec, None, None


@dataclass
class Review:
    """A person's review of a memory's text (``Memory.reviewed``).

    Attributes:
        by: who reviewed it (git's ``user.name``; "" when unset).
        at: when (UTC ISO-8601).
        hash: ``provenance.text_hash`` of the text reviewed: when the text changes, the review lapses.
    """

    by: str
    at: str
    hash: str


@dataclass
class Memory:
    """One unit of knowledge (DESIGN.md §2).

    ``created`` / ``updated`` are UTC ISO-8601 strings with a ``Z`` suffix.
    ``confidence`` is in [0, 1]. ``scope`` is ``team`` (committed) or ``local``.
    ``retired``: when the memory was retired (no longer true; kept for its history), else None;
    ``superseded_by``: the memories that replaced it (``supersedes`` is the other direction).
    ``invariant``: its anchors must change together (a commit changing some and not the others is flagged).
    ``origin``: which agent (``codex``) or tool (``claude-mem``) the text came from, when known.
    ``reviewed``: the last person's review of its text (lapsed when the text changed since: ``provenance``).
    ``extra``: front-matter keys this version does not know (a newer gitmem's), kept as read and written back.
    """

    id: str
    type: str
    title: str
    body: str = ""
    facts: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    anchors: list[Anchor] = field(default_factory=list)
    author: str = ""
    source: str = "user"
    session: str | None = None
    model: str | None = None
    confidence: float = 1.0
    created: str = ""
    updated: str = ""
    supersedes: list[str] = field(default_factory=list)
    superseded_by: list[str] = field(default_factory=list)
    retired: str | None = None
    invariant: bool = False
    scope: str = "team"
    origin: str | None = None
    reviewed: Review | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """Title, body and facts as one string: what text search and embeddings see."""
        parts = [self.title, self.body, *self.facts]
        return "\n".join(p for p in parts if p)


@dataclass
class AnchorStatus:
    """The status of one anchor at one revision, with its reason.

    Attributes:
        anchor: the anchor evaluated.
        status: fresh, stale, moved or deleted (unchecked: a cross-repository anchor not reached; unwritten:
            at a past revision, the code was not yet written there).
        path_now: where the anchored code is at the revision (None if deleted).
        symbol_now: the symbol's qualified name at the revision (None if deleted
            or not a symbol anchor).
        commit: full SHA of the commit that made the anchor non-fresh, when one
            commit can be named (None for fresh, or for uncommitted changes).
        changes: what changed (body, signature, decorators, content, rename,
            move, deletion); empty when fresh.
        old_span, new_span: (start, end) 1-based inclusive at the anchor commit
            and at the revision (None when unknown or gone).
        reason: one human line explaining the status ("" when fresh).
        target: the file the anchor's path leads to at the revision when it is, or lies beyond, a symbolic
            link (``CLAUDE.md -> AGENTS.md``: ``AGENTS.md``), whose content the anchor is judged by; None
            when no link is on the way.
        links: the links followed to ``target``, in order (repo-relative); () when none.
    """

    anchor: Anchor
    status: Status
    path_now: str | None = None
    symbol_now: str | None = None
    commit: str | None = None
    changes: list[Change] = field(default_factory=list)
    old_span: tuple[int, int] | None = None
    new_span: tuple[int, int] | None = None
    reason: str = ""
    target: str | None = None
    links: tuple[str, ...] = ()

    @property
    def keyed_reason(self) -> str:
        """``<anchor key> <reason>`` on one line ("" parts left out), the anchor not named twice: a reason in a
        format's words (``key production.pool changed in abc1234``) after its key reads
        ``config/database.yml::production.pool key changed in abc1234``."""
        reason, kind, name = self.reason, self.anchor.kind, self.anchor.symbol
        if name and reason.startswith(f"{kind} {name} "):
            reason = f"{kind} {reason[len(kind) + len(name) + 2:]}"
        return f"{self.anchor.key} {reason}".strip()


@dataclass
class MemoryStatus:
    """A memory with the statuses of all its anchors at one revision."""

    memory: Memory
    anchors: list[AnchorStatus]

    @property
    def status(self) -> Status:
        return Status.worst([a.status for a in self.anchors])


@dataclass
class RecallHit:
    """One search result (``search.lexical``, ``search.warm``): the memory and its fused score (reciprocal
    rank fusion) with its rank in each list (None: not found by that side)."""

    memory: Memory
    score: float
    fts_rank: int | None
    vector_rank: int | None
