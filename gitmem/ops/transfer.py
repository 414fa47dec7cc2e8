"""Moving memories between tools and repositories: JSON Lines export and import.

Format: one JSON object per line, ``shapes.export_line_json``: ``shapes.memory_json`` (every
field, anchors with their path, symbol, kind, commit, span and fingerprint), plus
``"format": "gitmem/1"`` and ``"schema_version"``.

Import writes one memory file per line:

* an anchor whose commit exists here is kept as it is (same repository);
* otherwise (another repository, a rewritten history) it is re-made against the
  working tree when its path — and symbol — exist here, and dropped when not
  (counted in the report); commit anchors to unknown commits are dropped;
* an id that already exists is skipped (the local copy wins);
* provenance: ``source: import`` (``origin: gitmem export``), or the line's own source when that is lower
  (``provenance.lowered``: an exported model-written memory stays model-written); reviews are not imported;
* a memory with a line that reads as an instruction to the agent (``gitmem.injection``: run a downloaded
  script, ignore your instructions, …) is rejected, its line reported (``memories.refuse_instructions``);
* a line is rejected on its own (its number and why; the rest is imported) when it is longer than
  ``MAX_LINE_CHARS``, not a JSON object, nested deeper than ``MAX_DEPTH``, has a field of the wrong
  type, holds control characters or bidirectional overrides, or a secret (``hostile``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import provenance
from ..anchors import Resolver
from ..errors import GitmemError
from ..git import WORKTREE
from ..infra import utc_now
from ..memfile import check_anchor_path, dumps, valid_id
from ..memories import check_size, max_chars, refuse_instructions, write
from ..model import KIND_COMMIT, MEMORY_TYPES, SCOPES, SOURCES, Anchor, Memory
from ..org.settings import REPO_NAME
from ..shapes import EXPORT_FORMAT, dumps_line, export_line_json
from ..store import Store, new_id

FORMAT = EXPORT_FORMAT
#: ``origin`` of a memory imported from an export (``source: import``): shown as "imported (gitmem export)".
IMPORT_ORIGIN = "gitmem export"


def export_lines(store: Store, *, include_local: bool = False, include_retired: bool = False) -> Iterator[str]:
    """The JSON lines of the team memories (and local ones with ``include_local``), oldest first."""
    loaded = store.load_all()
    mems = list(loaded.memories.values()) + (list(loaded.retired.values()) if include_retired else [])
    for m in sorted(mems, key=lambda m: m.id):
        if m.scope == "local" and not include_local:
            continue
        yield dumps_line(export_line_json(m))


@dataclass
class ImportReport:
    """What an import did: ids written, skipped (exists), rejected lines (with why), anchors dropped."""

    written: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    dropped_anchors: list[str] = field(default_factory=list)


def _one_of(value: object, allowed: tuple[str, ...], default: str) -> str:
    """``value`` when it is one of ``allowed``, else ``default``."""
    return value if isinstance(value, str) and value in allowed else default


def _anchor(resolver: Resolver, store: Store, raw: dict[str, Any], report: ImportReport) -> Anchor | None:
    kind = raw.get("kind") or "file"
    commit = raw.get("commit")
    key = raw.get("anchor") or raw.get("path") or ""
    if kind == KIND_COMMIT:
        if isinstance(commit, str) and _SHA.fullmatch(commit) and store.repo.commit_exists(commit):
            return Anchor(path=None, commit=commit, kind=KIND_COMMIT)
        report.dropped_anchors.append(key)
        return None
    path, symbol = raw.get("path"), raw.get("symbol")
    repo = raw.get("repo")
    if repo is not None:  # a cross-repository anchor: kept as exported (its repository checks it: gitmem org check)
        span = raw.get("span")
        if (isinstance(repo, str) and REPO_NAME.match(repo) and isinstance(path, str) and not check_anchor_path(path)
                and isinstance(commit, str) and _SHA.fullmatch(commit) and (symbol is None or isinstance(symbol, str))):
            fp = raw.get("fingerprint")
            return Anchor(path=path, symbol=symbol, commit=commit, kind=str(kind), repo=repo,
                          span=(int(span[0]), int(span[1])) if isinstance(span, list) and len(span) == 2 else None,
                          fingerprint=fp if isinstance(fp, str) else None)
        report.dropped_anchors.append(str(key))
        return None
    if (not isinstance(path, str) or not path or check_anchor_path(path) or path == ".git"
            or path.startswith(".git/") or (symbol is not None and not isinstance(symbol, str))):
        report.dropped_anchors.append(str(key))
        return None
    if (isinstance(commit, str) and _SHA.fullmatch(commit) and store.repo.commit_exists(commit)
            and isinstance(raw.get("fingerprint"), str) and store.repo.read(commit, path) is not None):
        span = raw.get("span")
        return Anchor(path=path, symbol=symbol, commit=commit, kind=kind,
                      span=(int(span[0]), int(span[1])) if isinstance(span, list) and len(span) == 2 else None,
                      fingerprint=raw.get("fingerprint"))
    try:
        return resolver.make(path, symbol if isinstance(symbol, str) else None, WORKTREE, as_typed=False)
    except GitmemError:
        report.dropped_anchors.append(str(key))
        return None


_SHA = re.compile(r"[0-9a-f]{40}")
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _stamp(value: object, default: str) -> str:
    """``value`` if it is a ``YYYY-MM-DDTHH:MM:SSZ`` time, else ``default``."""
    return value if isinstance(value, str) and _STAMP.fullmatch(value) else default


#: The longest line imported (characters): an exported memory is at most ``[memory] max_chars`` of text (4,000
#: by default) plus its anchors, well under this; a longer line is rejected without being parsed.
MAX_LINE_CHARS = 256 * 1024
#: The deepest nesting of objects and arrays in a line: an exported memory nests 3 levels (the line, its
#: anchors, a span); deeper is not an export (and would make Python's parser raise ``RecursionError``).
MAX_DEPTH = 8
#: Fields that must be strings (or absent/null), and those that must be lists of strings.
_STRING_FIELDS = ("id", "type", "title", "body", "author", "source", "origin", "session", "model", "created", "updated",
                  "retired", "scope")
_LIST_FIELDS = ("facts", "tags", "supersedes", "superseded_by")
#: Text fields checked for control characters and secrets.
_TEXT_FIELDS = ("title", "body", "author", "facts", "tags")
#: C0 controls but tab, line feed and carriage return; DEL; C1 controls; and the Unicode bidirectional
#: embeddings, overrides and isolates, which make text read differently from what it holds ("Trojan Source",
#: CVE-2021-42574: U+202A-U+202E, U+2066-U+2069).
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def bounded_lines(stream: Iterable[str] | Any, limit: int = MAX_LINE_CHARS) -> Iterator[str]:
    """The lines of text ``stream`` (a file, or any iterable of lines), none held longer than ``limit`` + 1
    characters: a longer line is read to its end in pieces and given as its first ``limit`` + 1 characters
    (``import_lines`` rejects it by its length), so one endless line never fills the memory."""
    readline = getattr(stream, "readline", None)
    if readline is None:
        yield from stream
        return
    while True:
        line = readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith("\n"):
            rest = line
            while rest and not rest.endswith("\n"):
                rest = readline(65536)
        yield line


def control_character(text: str) -> str | None:
    """``U+XXXX`` of the first control character or bidirectional override in ``text`` (``_CONTROL``), or None."""
    bad = _CONTROL.search(text)
    return None if bad is None else f"U+{ord(bad.group()):04X}"


def _depth(value: Any) -> int:
    """The nesting depth of a parsed JSON value (a scalar: 0), without recursion."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        v, d = todo.pop()
        items = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
        if items is not None:
            deepest = max(deepest, d)
            todo.extend((x, d + 1) for x in items)
    return deepest


def hostile(raw: dict[str, Any]) -> str | None:
    """Why the parsed export line ``raw`` is refused, or None: nested deeper than ``MAX_DEPTH``, a field of the
    wrong type (``_STRING_FIELDS``, ``_LIST_FIELDS``, ``anchors`` a list of objects), a control character or a
    bidirectional override in its text (``_CONTROL``), or a secret in its text (what ``capture.redact`` would
    remove: a line holding one is not imported, so that the source can be fixed and the secret revoked)."""
    from ..capture.redact import redact_text

    if _depth(raw) > MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH} levels"
    for key in _STRING_FIELDS:
        if raw.get(key) is not None and not isinstance(raw[key], str):
            return f"{key} must be a string, not {type(raw[key]).__name__}"
    for key in _LIST_FIELDS:
        value = raw.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(x, str) for x in value)):
            return f"{key} must be a list of strings"
    anchors = raw.get("anchors")
    if anchors is not None and not (isinstance(anchors, list) and all(isinstance(a, dict) for a in anchors)):
        return "anchors must be a list of objects"
    for a in anchors or []:
        for key in ("path", "symbol", "kind", "commit", "anchor", "fingerprint"):
            if a.get(key) is not None and not isinstance(a[key], str):
                return f"an anchor's {key} must be a string, not {type(a[key]).__name__}"
            bad = control_character(a[key]) if isinstance(a.get(key), str) else None
            if bad is not None:
                return f"an anchor's {key} holds the control character {bad}"
    confidence = raw.get("confidence")
    if confidence is not None and (isinstance(confidence, bool) or not isinstance(confidence, (int, float))):
        return f"confidence must be a number, not {type(confidence).__name__}"
    if raw.get("invariant") is not None and not isinstance(raw["invariant"], bool):
        return f"invariant must be true or false, not {type(raw['invariant']).__name__}"
    for key in _TEXT_FIELDS:
        value = raw.get(key)
        for text in value if isinstance(value, list) else [value] if isinstance(value, str) else []:
            bad = control_character(text)
            if bad is not None:
                return f"{key} holds the control character {bad}"
            if key == "title" and ("\n" in text or "\r" in text):
                return "title holds a line break"
            redacted = redact_text(text)
            if redacted != text:
                kinds = sorted(set(re.findall(r"\[REDACTED:([\w-]+)\]", redacted))
                               - set(re.findall(r"\[REDACTED:([\w-]+)\]", text))) or ["private"]
                return f"{key} holds a secret ({', '.join(kinds)}): remove it from the source and revoke it"
    return None


def _opt_text(value: Any) -> str | None:
    """``value`` as a one-line string of at most 100 characters, or None when it is not a non-empty string."""
    return " ".join(value.split())[:100] or None if isinstance(value, str) else None


def import_lines(store: Store, lines: Iterable[str]) -> ImportReport:
    """Write the memories of JSON ``lines`` (see the module docstring); bad lines are reported, not fatal.

    Each line is refused on its own, with its number and why (the others are imported): longer than
    ``MAX_LINE_CHARS``, not JSON, not an object, or ``hostile`` (too deep, wrong types, control characters or
    bidirectional overrides, secrets); as before, no title, or more than ``[memory] max_chars``.
    """
    report = ImportReport()
    resolver = Resolver(store.repo)
    loaded = store.load_all()
    existing = set(loaded.memories) | set(loaded.retired)
    written: list[Memory] = []
    limit = max_chars(store)
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            if len(line.rstrip("\r\n")) > MAX_LINE_CHARS:
                raise ValueError(f"longer than {MAX_LINE_CHARS} characters")
            try:
                raw = json.loads(line)
            except RecursionError:
                raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
            except ValueError:
                raise ValueError("not JSON") from None
            if not isinstance(raw, dict):
                raise ValueError("not a JSON object")
            why = hostile(raw)
            if why is not None:
                raise ValueError(why)
            mid = str(raw.get("id") or "")
            if not valid_id(mid):
                mid = new_id()
            if mid in existing:
                report.skipped.append(mid)
                continue
            mtype = _one_of(raw.get("type"), MEMORY_TYPES, "discovery")
            title = str(raw.get("title") or "").strip()
            if not title:
                raise ValueError("no title")
            anchors = [a for a in (_anchor(resolver, store, r, report) for r in raw.get("anchors") or []
                                   if isinstance(r, dict)) if a is not None]
            now = utc_now()
            m = Memory(id=mid, type=mtype, title=title, body=str(raw.get("body") or ""),
                       facts=[str(f) for f in raw.get("facts") or []],
                       tags=[str(t) for t in raw.get("tags") or []], anchors=anchors,
                       author=str(raw.get("author") or ""), source="import", origin=IMPORT_ORIGIN,
                       session=raw.get("session"), model=_opt_text(raw.get("model")),
                       confidence=float(raw["confidence"]) if isinstance(raw.get("confidence"), (int, float))
                       and 0 <= raw["confidence"] <= 1 else 1.0,
                       created=_stamp(raw.get("created"), now), updated=_stamp(raw.get("updated"), now),
                       supersedes=[str(x) for x in raw.get("supersedes") or []],
                       superseded_by=[str(x) for x in raw.get("superseded_by") or []],
                       retired=_stamp(raw.get("retired"), now) if raw.get("retired") else None,
                       scope=_one_of(raw.get("scope"), SCOPES, "team"),
                       invariant=raw.get("invariant") is True
                       and sum(1 for a in anchors if a.kind != KIND_COMMIT) >= 2)
            # imported text is at most "imported", and no higher than the level it had where it came from
            # (a model's memory stays model-written); a review made elsewhere is not carried over
            provenance.lowered(m, Memory(id=mid, type=mtype, title=title, source=_one_of(
                raw.get("source"), SOURCES, "import"), origin=_opt_text(raw.get("origin")), model=m.model))
            dumps(m)  # what the writer would refuse is rejected here, line by line
            check_size(m, limit)
            refuse_instructions(m)  # a line that reads as an instruction to the agent
        except (ValueError, TypeError, KeyError, OSError) as e:
            report.rejected.append(f"line {n}: {e}")
            continue
        except GitmemError as e:  # MemoryTooLong, refuse_instructions
            report.rejected.append(f"line {n}: {e.message}")
            continue
        existing.add(m.id)
        written.append(m)
        report.written.append(m.id)
    if written:
        write(store, written)
    return report
