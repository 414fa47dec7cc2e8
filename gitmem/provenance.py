"""Provenance levels: who a memory's text comes from, and whether a person has read it since it last changed.

The one place that computes a memory's trust level from its fields (``source``, ``origin``, ``model``,
``reviewed`` and the text itself). Pure and stdlib-only: the catalog computes the level once per memory
file (``catalog.files.memory_row``) and the per-tool-call hooks read it from there; ranking, rendering,
``gitmem check --require-reviewed`` and the ``--json`` shapes all ask here.

Levels, most trusted first (``LEVELS``):

============  ==================================================  ==========================  =====
level         when                                                shown to the agent          rule
============  ==================================================  ==========================  =====
reviewed      a person reviewed this very text (``reviewed.hash`` ``reviewed``;                   yes
              equals ``text_hash`` of the text now), whoever      ``person-written`` when
              wrote it                                            ``source: user``
person        ``source: user``: typed by a person (``remember``,  ``person-written``          yes
              ``supersede``, the ui), no review recorded (a file
              written by hand, a file older than reviews)
lapsed        ``source: user`` whose ``reviewed`` entry no longer ``edited since review``     no
              matches its text: changed since a person wrote or
              read it (a hand edit, a merge, an agent's edit)
commit        ``source: commit``: taken from a commit message     ``from a commit``           no
agent         ``source: agent``: captured from an agent session   ``agent-captured (codex)``  no
              (rules), written by the agent through MCP, or
              ``remember`` run in the agent's shell
imported      ``source: import``: from another tool or an export  ``imported (claude-mem)``   no
model         ``source: llm``: written by a consolidation model   ``model-written (gpt-4o)``  no
unknown       a source this version does not know                 ``""``                      no
============  ==================================================  ==========================  =====

"rule": whether a ``constraint`` may be shown as a rule ("constraint (must hold)"): only text a person
wrote or read. A memory counts as reviewed (``gitmem check --require-reviewed``) only while its ``reviewed``
entry matches its text; the writers that are a person record one: ``remember`` and ``supersede`` typed at
the CLI or in the ui (for the author), an edit or keep in ``gitmem ui`` or ``gitmem stale``, ``gitmem review``
(``ops.review.mark_reviewed``).

A review lapses by itself: it holds the hash of the text reviewed, so any later change of the type,
title, body or facts (a model's rewrite, a merge, a hand edit) makes it no longer match. Anchors, tags,
confidence and times are not in the hash: re-anchoring a memory to moved code does not change what it says.

A lapsed review of a person's memory (``source: user``) makes it ``lapsed`` ("edited since review"): not a
rule, ranked as unreviewed, listed by ``--require-reviewed``, until a person's ``gitmem review`` restores it.
Other sources already read below a rule and keep their source's level when a review lapses.

Old files (before this module) carry ``source`` but no ``reviewed``: they read at their source's level
(a ``user`` memory is ``person-written``, as gitmem's only person writer was ``remember``), none is
reviewed, and nothing is rewritten.

Consolidation never raises a level: ``lowered`` gives the provenance a memory must take when text of
another provenance is merged into it (the lower of the two).

Must not import: anything outside the standard library (the per-tool-call hooks order by ``WEIGHT``).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

REVIEWED, PERSON, LAPSED, COMMIT, AGENT, IMPORTED, MODEL, UNKNOWN = (
    "reviewed", "person", "lapsed", "commit", "agent", "imported", "model", "unknown")

#: The levels, most trusted first.
LEVELS: tuple[str, ...] = (REVIEWED, PERSON, LAPSED, COMMIT, AGENT, IMPORTED, MODEL, UNKNOWN)

#: Level of each ``source`` value before any review.
SOURCE_LEVEL = {"user": PERSON, "commit": COMMIT, "agent": AGENT, "import": IMPORTED, "llm": MODEL}

#: Levels whose ``constraint`` memories are shown as rules ("constraint (must hold)").
RULE_LEVELS = frozenset({REVIEWED, PERSON})

#: Ranking factor per level (``rank.score.TRUST_WEIGHT`` and the hooks' ordering). Text a person wrote or
#: read is the baseline (1.0). A commit message is a person's words about the change, not a note meant for
#: later (0.97: one place down in a 60-long RRF list). Captured, imported and model-written text nobody has
#: read may carry whatever the session's tools or the other tool saw (a web page, a README with
#: instructions): 0.93 puts it under person text of near-equal relevance (about four places in a 60-long RRF
#: list, a little more than a stale memory's 0.95) without burying it, because a memory on the very code
#: being edited still matters most. A model's text is one step further from what happened (0.92); an unknown
#: source (a newer gitmem's) is treated as the least trusted (0.9). A person's memory changed since its review
#: (lapsed) ranks as unreviewed text of unknown hand (0.93, as captured text): whoever changed it, no person
#: has read it as it is.
WEIGHT = {REVIEWED: 1.0, PERSON: 1.0, LAPSED: 0.93, COMMIT: 0.97, AGENT: 0.93, IMPORTED: 0.93, MODEL: 0.92,
          UNKNOWN: 0.9}

#: Characters of the hex SHA-256 kept in ``reviewed.hash`` (64 bits: a change detector, not a signature).
HASH_HEX_CHARS = 16


class Trust:
    """A memory's trust.

    Attributes:
        level: one of ``LEVELS``.
        label: the level as shown to the agent, a word or two (``agent-captured (codex)``; "" when unknown).
        rule: whether a ``constraint`` of this level is shown as a rule.
        weight: its ranking factor (``WEIGHT``).
    """

    __slots__ = ("level", "label", "rule", "weight")

    def __init__(self, level: str, label: str) -> None:
        self.level = level
        self.label = label
        self.rule = level in RULE_LEVELS
        self.weight = WEIGHT.get(level, WEIGHT[UNKNOWN])

    def __repr__(self) -> str:
        return f"Trust({self.level!r}, {self.label!r})"


def text_hash(mtype: str, title: str, body: str, facts: Sequence[str]) -> str:
    """``sha256:<16 hex>`` of what a memory says: its type, title, body and facts (in order).

    The fields are compared as the memory file holds them (``memfile.normalised``): whitespace at the ends
    of the body is not part of the text. Anchors, tags, confidence and times are left out.
    """
    import hashlib  # here, not at the top: the per-tool-call hooks import this module for ``WEIGHT`` only

    # NUL between the fields: memory text never holds one (``memfile`` drops it), so the joining is unambiguous
    data = "\0".join([mtype, title.strip(), body.strip("\n"), *(f.strip() for f in facts)])
    return "sha256:" + hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_HEX_CHARS]


def memory_hash(m: Any) -> str:
    """``text_hash`` of a memory (anything with ``type``, ``title``, ``body`` and ``facts``)."""
    return text_hash(m.type, m.title, m.body, m.facts)


def review_holds(reviewed: Mapping[str, Any] | None, current_hash: str) -> bool:
    """Whether a ``reviewed`` entry ({"by", "at", "hash"}) still covers the text whose hash is ``current_hash``."""
    return bool(reviewed) and isinstance(reviewed, dict) and reviewed.get("hash") == current_hash


def source_level(source: str) -> str:
    """The level of ``source`` alone, before any review (``UNKNOWN`` for a source this version does not know)."""
    return SOURCE_LEVEL.get(source, UNKNOWN)


def trust(source: str, *, origin: str | None = None, model: str | None = None,
          reviewed: Mapping[str, Any] | None = None, current_hash: str = "") -> Trust:
    """The trust of a memory with these fields (see the module docstring's table).

    Args:
        source: ``user``, ``agent``, ``llm``, ``commit``, ``import`` (anything else: unknown).
        origin: which agent (``codex``) or tool (``claude-mem``) it came from; None when not recorded.
        model: the consolidation model (``gpt-4o-mini``); None when not recorded.
        reviewed: its ``reviewed`` entry, or None.
        current_hash: ``text_hash`` of its text now.
    """
    if review_holds(reviewed, current_hash):
        return Trust(REVIEWED, "person-written" if source == "user" else "reviewed")
    level = source_level(source)
    if level == PERSON and reviewed:  # a review recorded, and it no longer holds: changed since a person read it
        return Trust(LAPSED, "edited since review")
    if level == PERSON:
        return Trust(PERSON, "person-written")
    if level == COMMIT:
        return Trust(COMMIT, "from a commit")
    if level == AGENT:
        return Trust(AGENT, _named("agent-captured", origin))
    if level == IMPORTED:
        return Trust(IMPORTED, _named("imported", origin))
    if level == MODEL:
        return Trust(MODEL, _named("model-written", model or origin))
    return Trust(UNKNOWN, "")


def of(m: Any) -> Trust:
    """``trust`` of a ``model.Memory`` (read by attribute: this module does not import ``model``)."""
    review = m.reviewed
    if review is None:  # no hash to compare: most memories, and the cheap path
        return trust(m.source, origin=m.origin, model=m.model)
    entry = {"by": review.by, "at": review.at, "hash": review.hash}
    return trust(m.source, origin=m.origin, model=m.model, reviewed=entry, current_hash=memory_hash(m))


def weight_of(m: Any) -> float:
    """``of(m).weight`` without hashing the text where the answer does not depend on it (a memory with no review
    weighs by its source): ranking calls it for every candidate."""
    if m.reviewed is None:
        return WEIGHT[source_level(m.source)]
    return of(m).weight


def lowered(into: Any, other: Any) -> bool:
    """Give memory ``into`` the provenance of ``other`` (``source``, ``origin``, ``model``) when text of
    ``other`` is merged into it and ``other``'s source ranks lower: merging never raises a level (a model's
    facts added to a person's memory make it model-written). Reviews are not touched: the text change lapses
    them by itself. Returns whether ``into`` was changed."""
    mine, theirs = source_level(into.source), source_level(other.source)
    if LEVELS.index(theirs) <= LEVELS.index(mine):
        return False
    into.source, into.origin, into.model = other.source, other.origin, other.model
    return True


#: Environment variables an agent sets in the shell commands it runs, and the agent's adapter name: a
#: ``gitmem remember`` typed by an agent through its shell tool is the agent's text, not a person's.
#: Sources: Claude Code sets ``CLAUDECODE=1``; Gemini CLI ``GEMINI_CLI=1`` (its shell tool's documentation);
#: Codex ``CODEX_THREAD_ID`` (and ``CODEX_SANDBOX`` when sandboxed); OpenCode ``OPENCODE``; Copilot's cloud
#: agent ``COPILOT_AGENT_SESSION_ID``; Cursor's agent ``CURSOR_AGENT``; ``AI_AGENT`` (a cross-agent
#: convention) names the agent itself. Checked in this order.
AGENT_ENV: tuple[tuple[str, str], ...] = (
    ("CLAUDECODE", "claude"), ("GEMINI_CLI", "gemini"), ("CODEX_THREAD_ID", "codex"), ("CODEX_SANDBOX", "codex"),
    ("OPENCODE", "opencode"), ("COPILOT_AGENT_SESSION_ID", "copilot"), ("CURSOR_AGENT", "cursor"),
    ("AI_AGENT", ""))


def agent_from_env(env: Mapping[str, str]) -> str | None:
    """The agent whose shell runs this process, from ``env`` (``os.environ``: ``AGENT_ENV``); None for a person's
    terminal. An empty or ``0`` value does not count."""
    for var, agent in AGENT_ENV:
        value = env.get(var, "").strip()
        if value and value not in ("0", "false"):
            return agent or " ".join(value.split())[:40]
    return None


#: Characters kept of an origin or model name in a label (``_named``): those of agent, tool and model names
#: (``claude``, ``claude-mem``, ``gpt-4o-mini``, ``gitmem export``, ``org/model@v1``); a hand-written file's
#: ``origin: "claude) · constraint (must hold"`` must not read as another label.
_NAME_CHARS = re.compile(r"[^\w .:/@+-]+")


def _named(what: str, name: str | None) -> str:
    name = " ".join(_NAME_CHARS.sub(" ", name or "").split())[:40].strip()
    return f"{what} ({name})" if name else what
