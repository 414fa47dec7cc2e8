"""``gitmem stale`` on a terminal: review the not-fresh memories one by one.

For each memory: its text, then for each anchor that is not fresh the diff of
the anchored code between the anchor's commit and now (syntax-highlighted with
Pygments when the terminal shows colour), with the commit that changed it. Then
one key:

* ``k`` keep — the memory is still true: re-anchor it to today's code (``reanchor``), and record that
  the person reviewed its text (``mark_reviewed``);
* ``e`` edit — open the memory file in ``$EDITOR``, then re-anchor it and record the review of the
  edited text (a file left unchanged cancels: nothing is re-anchored);
* ``r`` retire — no longer true (``lifecycle.retire``), with an optional reason, then a
  confirmation (``q`` at the reason, or anything but ``y`` at the confirmation, cancels);
* ``u`` supersede (or the word ``supersede``) — type the replacement text (``lifecycle.supersede``; an empty
  answer or ``q`` cancels; a text of fewer than ``MIN_REPLACEMENT_WORDS`` words, or one that is a key, is refused
  and asked again), then a confirmation (anything but ``y`` cancels);
* ``s``, ``n`` or Enter skip, ``q`` quit.

The keys are the ``KEYS`` table: each action answers to its letter and its full word. ``s`` is skip, not
supersede (people read "skip" in the walkthrough's "keep, edit, retire, supersede or skip").

A cancelled action leaves the memory as it was and counts it as skipped.

Every action only writes memory files; commit them to share the decisions.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import click

from .. import provenance
from ..anchors import Resolver
from ..errors import GitmemError
from ..git import WORKTREE
from ..infra import utc_now
from ..memories import RememberRequest, write
from ..model import AnchorStatus, Memory, MemoryStatus, Review, Status
from ..rank.render import visible
from ..store import Store
from .lifecycle import retire, supersede
from .reanchor import reanchor

#: Lines of context around the changed code in the diff.
DIFF_CONTEXT = 3


def mark_reviewed(store: Store, mem_ids: Sequence[str]) -> list[Memory]:
    """Record that the person running gitmem (git's ``user.name``) has read the text of each memory as it is
    now (``Memory.reviewed``, with ``provenance.text_hash``), and write them; returns them, in order.

    Nothing else changes (not ``updated``: a review is not an edit). A later change of the text lapses the
    review by itself (``provenance``); an agent's edit of the file waiting to be marked as the agent's text
    (``agent_edits``) no longer is. Used by ``gitmem review``, the keep and edit of ``gitmem stale`` and of
    ``gitmem ui``.

    Raises:
        MemoryNotFound: an id is unknown or an ambiguous prefix (nothing is written).
        OSError: a memory file cannot be written.
    """
    from .. import agent_edits

    mems = [store.get(mid) for mid in mem_ids]
    by, now = store.repo.user_name(), utc_now()
    for m in mems:
        m.reviewed = Review(by=by, at=now, hash=provenance.memory_hash(m))
    agent_edits.done(store.layout, [m.id for m in mems])  # a person read the agent's text: no longer to be marked
    write(store, mems)
    return mems


@dataclass
class ReviewResult:
    """Ids per action taken."""

    kept: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _lines(resolver: Resolver, rev: str | None, path: str | None, span: tuple[int, int] | None) -> list[str]:
    if not path or not span:
        return []
    data = resolver.source(rev, path)
    if data is None:
        return []
    text = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    return text[span[0] - 1:span[1]]


def anchor_diff(resolver: Resolver, a: AnchorStatus) -> str:
    """Unified diff of an anchor's code: at its commit → now (empty when there is nothing to compare, and for a
    cross-repository anchor: its code is another repository's)."""
    if not a.anchor.local:
        return ""
    old = _lines(resolver, a.anchor.commit, a.anchor.path, a.old_span or a.anchor.span)
    new = [] if a.status == Status.DELETED else _lines(resolver, WORKTREE, a.path_now or a.anchor.path, a.new_span)
    if not old and not new:
        return ""
    label_old = f"{a.anchor.path}@{(a.anchor.commit or '')[:12]}"
    label_new = f"{a.path_now or a.anchor.path} (now)"
    return "".join(difflib.unified_diff(old, new, label_old, label_new, n=DIFF_CONTEXT))


def _highlight(diff: str, color: bool) -> str:
    if not color or not diff:
        return diff
    from pygments import highlight
    from pygments.formatters import TerminalFormatter
    from pygments.lexers import DiffLexer

    return highlight(diff, DiffLexer(), TerminalFormatter())


def render(resolver: Resolver, ms: MemoryStatus, color: bool) -> str:
    """The memory and the diffs of its not-fresh anchors, ready to print."""
    m = ms.memory
    head = visible(f"{m.id}  [{m.type}] {m.title}")  # the text as the agent is given it: nothing hidden
    out = [click.style(head, bold=True) if color else head]
    if m.body:
        out += ["", visible(m.body.strip())]
    out += [visible(f"- {f}") for f in m.facts]
    for a in ms.anchors:
        if a.status == Status.FRESH:
            continue
        out += ["", visible(f"{a.status.value}: {a.anchor.key} — {a.reason}")]
        diff = anchor_diff(resolver, a)
        if diff:
            out.append(_highlight(visible(diff), color).rstrip("\n"))
    return "\n".join(out)


def review(store: Store, statuses: list[MemoryStatus], *, color: bool,
           echo: Callable[[str], None] = click.echo) -> ReviewResult:
    """Walk ``statuses`` (the not-fresh ones) interactively; returns what was done."""
    resolver = Resolver(store.repo)
    res = ReviewResult()
    todo = [ms for ms in statuses if ms.status != Status.FRESH]
    for i, ms in enumerate(todo, 1):
        m = ms.memory
        echo("")
        echo(f"── {i}/{len(todo)} " + "─" * 40)
        echo(render(resolver, ms, color))
        echo("")
        answer = click.prompt(PROMPT, type=click.Choice(list(KEYS), case_sensitive=False), show_choices=False,
                              default="s", show_default=False)
        choice = KEYS[answer.lower()]
        try:
            _act(store, m, choice, res, echo)
        except _Quit:
            res.skipped += [x.memory.id for x in todo[i - 1:]]
            break
        except _Cancel as c:
            echo(f"cancelled: {m.id} left as it was ({c})")
            res.skipped.append(m.id)
        except (GitmemError, click.ClickException) as e:
            msg = e.message if isinstance(e, GitmemError) else e.format_message()
            echo(f"error: {msg} — {m.id} left as it was")
            res.skipped.append(m.id)
    return res


class _Quit(Exception):
    pass


class _Cancel(Exception):
    """The user backed out of an action (its message says how)."""


#: The answers of the review prompt -> the action: each action's letter and full word. ``s`` is skip (the word
#: people reach for when they read "skip"); supersede is ``u`` (s\ **u**\ persede) or the word itself.
KEYS: dict[str, str] = {"k": "k", "keep": "k", "e": "e", "edit": "e", "r": "r", "retire": "r",
                        "u": "u", "supersede": "u", "s": "n", "skip": "n", "n": "n", "next": "n", "q": "q", "quit": "q"}

#: The review prompt: says every key of ``KEYS`` (Enter is skip).
PROMPT = "[k]eep (re-anchor)  [e]dit  [r]etire  s[u]persede  [s]kip (Enter)  [q]uit"

#: Answers to a free-text prompt that back out of the action rather than becoming its text.
_CANCEL_WORDS = {"", "q", "quit", "n", "no"}

#: The fewest words a replacement memory may have: a stray key ("s", "u", "ok") pressed at the replacement prompt
#: is not a memory (the smallest useful one is a short sentence: "quote uses repr()" has 3).
MIN_REPLACEMENT_WORDS = 3


def _replacement_text(echo: Callable[[str], None]) -> str:
    """Ask for a supersede's replacement text until it is a sentence (``MIN_REPLACEMENT_WORDS`` words or more,
    not a key of ``KEYS``); raises ``_Cancel`` on an empty answer or ``q``."""
    while True:
        text = click.prompt(f"the replacement memory, at least {MIN_REPLACEMENT_WORDS} words (first line = title; "
                            "empty or q cancels)", default="", show_default=False).strip()
        if text.lower() in _CANCEL_WORDS:
            raise _Cancel("no replacement text")
        if text.lower() in KEYS or len(text.split()) < MIN_REPLACEMENT_WORDS:
            echo(f"refused: \"{visible(text)}\" is not a replacement memory (a sentence of at least "
                       f"{MIN_REPLACEMENT_WORDS} words; empty or q cancels)")
            continue
        return text


def _mark_by_person(store: Store, mem_id: str, echo: Callable[[str], None]) -> None:
    """``mark_reviewed`` unless an agent's shell runs this (``provenance.agent_from_env``): an agent's keep or
    edit is not a person's review (the memory is re-anchored all the same)."""
    if provenance.agent_from_env(os.environ) is None:
        mark_reviewed(store, [mem_id])
    else:
        echo(f"{mem_id}: not marked reviewed (an agent's shell runs this; a review is a person's)")


def _act(store: Store, m: Memory, choice: str, res: ReviewResult, echo: Callable[[str], None]) -> None:
    """Carry out one review choice for memory ``m``; raises ``_Quit`` for q."""
    if choice == "q":
        raise _Quit()
    if choice == "n":
        res.skipped.append(m.id)
    elif choice == "k":
        reanchor(store, m.id, drop_deleted=True)
        _mark_by_person(store, m.id, echo)
        res.kept.append(m.id)
        echo(f"kept {m.id}: re-anchored to the code as it is now")
    elif choice == "e":
        path = store.find_path(m.id)
        before = path.read_bytes()
        click.edit(filename=str(path))
        if path.read_bytes() == before:
            raise _Cancel("the file was not changed")
        reanchor(store, m.id, drop_deleted=True)
        _mark_by_person(store, m.id, echo)
        res.edited.append(m.id)
        echo(f"edited {m.id} and re-anchored it")
    elif choice == "r":
        reason = click.prompt("reason (optional; q cancels)", default="", show_default=False).strip()
        if reason.lower() in ("q", "quit"):
            raise _Cancel("q at the reason")
        answer = click.prompt(f"retire {m.id} \"{m.title}\"? [y/N]", default="", show_default=False)
        if answer.strip().lower() not in ("y", "yes"):
            raise _Cancel("not confirmed")
        retire(store, m.id, reason)
        res.retired.append(m.id)
        echo(f"retired {m.id}")
    elif choice == "u":
        text = _replacement_text(echo)
        answer = click.prompt(f"retire {m.id} \"{m.title}\" and record the replacement? [y/N]", default="",
                              show_default=False)
        if answer.strip().lower() not in ("y", "yes"):
            raise _Cancel("not confirmed")
        agent = provenance.agent_from_env(os.environ)  # typed in an agent's shell: the agent's text
        sup = supersede(store, m.id, RememberRequest(text=text, type="", source="user" if agent is None else "agent",
                                                     origin=agent))
        res.superseded.append(m.id)
        echo(f"{sup.new.id} supersedes {m.id}")
