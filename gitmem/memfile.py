"""Memory files: parse, validate and write ``.gitmem/memories/<id>.md``.

Format (a documented contract; see docs/how-it-works.md, "Memory files")::

    ---
    id: 01JD3V6Q4W8N5X2Y7Z9A0B1C2D
    type: decision
    title: Config load order is env > yaml > defaults
    anchors:
    - anchor: src/config.py::parse_config
      commit: 3f2a...            # full SHA the anchor was made against
      kind: function
      span: [10, 42]             # 1-based, inclusive, at that commit
      fingerprint: ts1:9c0e...
      was: src/conf.py::load_config   # optional: the key before the code moved or was renamed
    - anchor: ledger:src/api.py::retry_after   # a cross-repository anchor: REPO:PATH::SYMBOL
      repo: ledger               # the [org.repos] name; commit, span and fingerprint are that repository's
      commit: 9b1d...
    tags: [config]
    facts:
    - env wins over yaml
    author: Ada
    source: user
    origin: codex                # optional: which agent or tool the text came from
    confidence: 1.0
    created: '2026-11-30T17:22:49Z'
    updated: '2026-11-30T17:22:49Z'
    scope: team
    reviewed:                    # optional: a person's review of this very text
      by: Ada
      at: '2026-11-30T17:25:00Z'
      hash: sha256:1f0c9a7e3b2d4c5a   # provenance.text_hash of type, title, body, facts
    ---
    Markdown body.

Writing is deterministic: a fixed key order, keys with default values left out,
LF line endings, exactly one trailing newline, so writing an unchanged memory
again gives byte-identical output (``dumps(loads(x)) == x`` for files we wrote).

Must not import: lancedb, tree-sitter, git.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path, PurePosixPath
from typing import Any

from . import infra
from .errors import MemoryFileError
from .model import KIND_COMMIT, KIND_FILE, MEMORY_TYPES, SCOPES, SOURCES, Anchor, Memory, Review
from .org.settings import REPO_NAME

FILE_SUFFIX = ".md"
# A conflict is a "<<<<<<<" line followed later by a ">>>>>>>" line; either alone (or a
# setext "=======" underline) is ordinary Markdown.
_CONFLICT_START_RE = re.compile(r"^<{7}(?: |$)", re.M)
_CONFLICT_END_RE = re.compile(r"^>{7}(?: |$)", re.M)
_ID_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z_-]{0,63}$")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_SHA_RE = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")

#: Front-matter key order on write. A key not listed (a newer gitmem's) is kept in ``Memory.extra`` and
#: written back after these, in the order read (``unknown_keys`` names them for a warning).
_KEYS = ("id", "type", "title", "anchors", "tags", "facts", "author", "source", "origin", "session",
         "model", "confidence", "created", "updated", "supersedes", "superseded_by", "retired", "invariant", "scope",
         "reviewed")
#: The fields of a ``reviewed`` entry, in the order written.
_REVIEW_KEYS = ("by", "at", "hash")


def content_hash(data: bytes) -> str:
    """``sha256:<hex>`` of a memory file's bytes (the index's change detector)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def valid_id(mem_id: str) -> bool:
    """True when ``mem_id`` is usable as a file name (ULID-like: letters, digits, _ and -)."""
    return bool(_ID_RE.match(mem_id))


def without_surrogates(text: str) -> str:
    """``text`` with lone surrogates (unencodable in UTF-8) replaced by U+FFFD."""
    return _SURROGATE_RE.sub("\ufffd", text)


def _clean(text: str) -> str:
    """Make ``text`` safe to store: lone surrogates → U+FFFD, CRLF/CR → LF, no NULs."""
    text = _SURROGATE_RE.sub("\ufffd", text)
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "")


#: Line breaks and control characters (C0, DEL, C1, Unicode line and paragraph separators).
_BREAKS_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def one_line(text: str) -> str:
    """``text`` as one line: each run of line breaks and control characters a space, ends stripped. For the
    fields shown on gitmem's own lines (author, origin, model, session, tags, reviewer): a hand-written file
    could otherwise put a line that forges a memory header there (``author: "P\\n### ID · constraint …"``)."""
    return _BREAKS_RE.sub(" ", text).strip()


def check_anchor_path(path: str) -> str | None:
    """Why ``path`` is not a valid repo-relative POSIX path, or None when it is.

    Rejects absolute paths, drive letters, backslashes, ``..`` components,
    empty components and NUL / newline characters (path traversal guard).
    """
    if not path:
        return "empty path"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "the file name is not valid UTF-8: gitmem cannot anchor it"
    if "\0" in path or "\n" in path:
        return f"path contains a NUL or newline: {path!r} (gitmem cannot anchor it; rename the file)"
    if "::" in path:
        return f"path contains '::', which separates a file from a symbol in an anchor: {path}"
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path) or "\\" in path:
        return f"path outside the repository: {path}"
    parts = PurePosixPath(path).parts
    if any(p == ".." for p in parts):
        return f"path outside the repository: {path}"
    if path != PurePosixPath(path).as_posix() or any(p in ("", ".") for p in path.split("/")):
        return f"path is not a normalised repo-relative path: {path}"
    return None


# -- writing -----------------------------------------------------------------------------------


def _anchor_dict(a: Anchor) -> dict[str, Any]:
    d: dict[str, Any] = {"anchor": a.key}
    if a.repo is not None and a.kind != KIND_COMMIT:
        d["repo"] = a.repo
    if a.kind != KIND_COMMIT:
        d["commit"] = a.commit
        d["kind"] = a.kind
        if a.span is not None:
            d["span"] = [int(a.span[0]), int(a.span[1])]
        if a.fingerprint:
            d["fingerprint"] = a.fingerprint
        if a.was:
            d["was"] = a.was
    return d


def to_front_matter(m: Memory) -> dict[str, Any]:
    """The memory's front matter as an ordered dict (defaults left out).

    Text is cleaned (see ``_clean``: lone surrogates, NUL, CR); a memory the
    reader would refuse (empty title, bad anchor, unknown type...) is refused here.

    Raises:
        MemoryFileError: the memory cannot be written as a valid file (the reader's message).
    """
    def opt(v: str | None) -> str | None:
        return None if v is None else _clean(v)

    def opt_line(v: str | None) -> str | None:  # read back through ``one_line``: written the same way
        return None if v is None else one_line(_clean(v))

    d: dict[str, Any] = {
        "id": m.id,
        "type": m.type,
        "title": _clean(m.title).replace("\n", " ").strip(),
        "anchors": [_anchor_dict(a) for a in m.anchors],
        "tags": sorted({t for t in (one_line(_clean(t)) for t in m.tags) if t}),
        "facts": [f for f in (_clean(f).strip() for f in m.facts) if f],
        "author": one_line(_clean(m.author)),
        "source": m.source,
        "origin": opt_line(m.origin),
        "session": opt_line(m.session),
        "model": opt_line(m.model),
        "confidence": float(m.confidence),
        "created": _clean(m.created),
        "updated": _clean(m.updated),
        "supersedes": sorted({_clean(s) for s in m.supersedes}),
        "superseded_by": sorted({_clean(s) for s in m.superseded_by}),
        "retired": opt(m.retired),
        "invariant": bool(m.invariant),
        "scope": m.scope,
        "reviewed": None if m.reviewed is None else {"by": _clean(m.reviewed.by), "at": _clean(m.reviewed.at),
                                                     "hash": _clean(m.reviewed.hash)},
    }
    for key in ("anchors", "tags", "facts", "supersedes", "superseded_by"):
        if not d[key]:
            del d[key]
    for key in ("session", "model", "author", "retired", "invariant", "origin", "reviewed"):
        if not d[key]:
            del d[key]
    for key, value in m.extra.items():
        if key not in _KEYS and key not in d:
            d[key] = value
    name = f"{m.id}{FILE_SUFFIX}"
    for a in m.anchors:
        why = check_anchor_path(a.path or "") if a.kind != KIND_COMMIT else None
        if a.repo is not None and not why and not REPO_NAME.match(a.repo):
            why = f"not a repository name: {a.repo!r}"
        if why:
            raise MemoryFileError(name, f"anchor {a.key!r}: {why}", hint="anchors are repo-relative POSIX paths")
    _from_front_matter(d, "", name)  # what the reader would refuse is not written
    return d


_YAML: tuple[Any, Any, Any] | None = None


def _yaml() -> tuple[Any, Any, Any]:
    """(the ``yaml`` module, its safe loader, the dumper ``dumps`` writes with), made on first use: PyYAML is
    imported only by what reads or writes a memory file's YAML, not by a command served by the catalog's rows
    (``gitmem recall``, ``context``). The C loader and dumper are ~10x faster; pure Python when libyaml is absent.
    The dumper keeps insertion order and writes short lists of numbers inline."""
    global _YAML
    if _YAML is None:
        import yaml

        try:
            from yaml import CSafeDumper as dumper_base
            from yaml import CSafeLoader as loader
        except ImportError:  # pragma: no cover - depends on the PyYAML build
            from yaml import SafeDumper as dumper_base  # type: ignore[assignment]
            from yaml import SafeLoader as loader  # type: ignore[assignment]

        class OrderedDumper(dumper_base):
            """Dumper keeping insertion order and writing short lists of scalars inline."""

        def repr_list(dumper: Any, data: list[Any]) -> Any:
            flow = all(isinstance(x, (int, float)) for x in data)
            return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)

        OrderedDumper.add_representer(list, repr_list)
        _YAML = (yaml, loader, OrderedDumper)
    return _YAML


def dumps(m: Memory) -> str:
    """Serialise ``m`` to the memory file format (deterministic; see module docstring)."""
    yaml, _, dumper = _yaml()
    fm = yaml.dump(to_front_matter(m), Dumper=dumper, sort_keys=False,
                   allow_unicode=True, default_flow_style=False, width=100_000)
    body = "\n".join(line.rstrip() for line in _clean(m.body).split("\n")).strip("\n")
    out = f"---\n{fm}---\n"
    if body:
        out += f"{body}\n"
    return out


def anchor_yaml(a: Anchor) -> str:
    """The lines ``dumps`` writes for anchor ``a`` in a file's ``anchors:`` list (``- anchor: …`` and its
    fields, each line ending in a newline), for a text that shows one anchor on its own (the merge driver's
    conflict block)."""
    yaml, _, dumper = _yaml()
    return str(yaml.dump([_anchor_dict(a)], Dumper=dumper, sort_keys=False, allow_unicode=True,
                         default_flow_style=False, width=100_000))


def normalised(m: Memory) -> Memory:
    """``m`` as it reads back once written: text cleaned, empty tags and facts dropped, sorted.

    Raises:
        MemoryFileError: see ``to_front_matter``.
    """
    return loads(dumps(m), path=f"{m.id}{FILE_SUFFIX}")


def write(path: Path, m: Memory) -> bytes:
    """Write memory ``m`` to ``path`` atomically; returns the bytes written."""
    data = dumps(m).encode("utf-8")
    infra.atomic_write(path, data)
    return data


# -- reading -----------------------------------------------------------------------------------


def loads(text: str, *, path: str = "<memory>") -> Memory:
    """Parse and validate a memory file's text.

    Raises:
        MemoryFileError: conflict markers, missing or invalid front matter,
            unknown type / source / scope, bad anchors (path outside the
            repository, malformed commit SHA), wrong field types. The message
            names ``path`` and, where known, the line.
    """
    m = _CONFLICT_START_RE.search(text)
    if m and _CONFLICT_END_RE.search(text, m.end()):
        line = text.count("\n", 0, m.start()) + 1
        raise MemoryFileError(path, "leftover merge-conflict markers", line=line,
                              hint="resolve the conflict in the file, then `gitmem doctor`")
    text = text.replace("\r\n", "\n")
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---\n"):
        raise MemoryFileError(path, "no YAML front matter (the file must start with '---')", line=1,
                              hint="a memory file starts with a --- line, YAML front matter, then ---")
    end = text.find("\n---\n", 3)
    if end < 0:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            raise MemoryFileError(path, "front matter is not closed by a '---' line",
                                  hint="add a line '---' after the front matter")
    fm_text = text[4:end + 1]
    body = text[end + 5:] if end + 5 <= len(text) else ""
    yaml, loader, _ = _yaml()
    try:
        fm = yaml.load(fm_text, Loader=loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        yaml_line = mark.line + 2 if mark is not None else None
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise MemoryFileError(path, f"invalid YAML front matter: {problem}", line=yaml_line,
                              hint="fix the YAML or restore the file from git") from None
    except Exception as e:  # noqa: BLE001 - constructors raise ValueError etc. (a date like 2020-13-45)
        first = (str(e).splitlines() or [type(e).__name__])[0]
        raise MemoryFileError(path, f"invalid YAML value in front matter: {first}",
                              hint="fix the value or restore the file from git") from None
    if not isinstance(fm, dict):
        raise MemoryFileError(path, "front matter is not a mapping", line=2)
    return _from_front_matter(fm, body, path)


def _req_str(fm: dict[str, Any], key: str, path: str, *, allow_empty: bool = False) -> str:
    v = fm.get(key)
    if v is None and allow_empty:
        return ""
    if not isinstance(v, str) or (not v and not allow_empty):
        raise MemoryFileError(path, f"'{key}' must be a non-empty string")
    return v


def _str_list(fm: dict[str, Any], key: str, path: str) -> list[str]:
    v = fm.get(key) or []
    if not isinstance(v, list) or not all(isinstance(x, (str, int, float)) for x in v):
        raise MemoryFileError(path, f"'{key}' must be a list of strings")
    return [str(x) for x in v]


def unknown_keys(m: Memory) -> list[str]:
    """The front-matter keys of ``m``'s file that this version does not know (a newer gitmem's), in file order:
    they are kept as read and written back, and ``gitmem check`` names them."""
    return list(m.extra)


def _plain(v: Any) -> Any:
    """A YAML value as JSON-able data (dates and other scalars as strings), so a kept unknown key survives the
    catalog's JSON copy of the memory."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    return v.isoformat() if hasattr(v, "isoformat") else str(v)


def _from_front_matter(fm: dict[str, Any], body: str, path: str) -> Memory:
    extra = {str(k): _plain(v) for k, v in fm.items() if k not in _KEYS}
    mem_id = fm.get("id")
    mem_id = str(mem_id) if isinstance(mem_id, (str, int)) else ""
    if not valid_id(mem_id):
        raise MemoryFileError(path, f"invalid id: {fm.get('id')!r}")
    mtype = _req_str(fm, "type", path)
    if mtype not in MEMORY_TYPES:
        raise MemoryFileError(path, f"unknown type {mtype!r}", hint=f"use one of: {', '.join(MEMORY_TYPES)}")
    source = fm.get("source", "user")
    if source not in SOURCES:
        raise MemoryFileError(path, f"unknown source {source!r}", hint=f"use one of: {', '.join(SOURCES)}")
    scope = fm.get("scope", "team")
    if scope not in SCOPES:
        raise MemoryFileError(path, f"unknown scope {scope!r}", hint="use team or local")
    conf = fm.get("confidence", 1.0)
    if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0.0 <= float(conf) <= 1.0:
        raise MemoryFileError(path, f"confidence must be a number in [0, 1], got {conf!r}")
    anchors_raw = fm.get("anchors") or []
    if not isinstance(anchors_raw, list):
        raise MemoryFileError(path, "'anchors' must be a list")
    anchors = [_anchor_from(a, path) for a in anchors_raw]
    return Memory(
        id=mem_id, type=mtype, title=_req_str(fm, "title", path),
        body=body.strip("\n"),
        facts=_str_list(fm, "facts", path), tags=[one_line(t) for t in _str_list(fm, "tags", path)],
        anchors=anchors, author=one_line(_req_str(fm, "author", path, allow_empty=True)), source=source,
        session=_opt_line(fm.get("session")), model=_opt_line(fm.get("model")),
        confidence=float(conf),
        created=_time_str(fm.get("created"), "created", path),
        updated=_time_str(fm.get("updated"), "updated", path),
        supersedes=_str_list(fm, "supersedes", path), superseded_by=_str_list(fm, "superseded_by", path),
        retired=_time_str(fm.get("retired"), "retired", path) or None,
        invariant=_bool(fm.get("invariant", False), "invariant", path), scope=scope,
        origin=_opt_line(fm.get("origin")), reviewed=_review_from(fm.get("reviewed"), path), extra=extra,
    )


def _review_from(raw: Any, path: str) -> Review | None:
    """A ``reviewed`` entry ({by, at, hash}) as a ``Review``; None when absent.

    Raises:
        MemoryFileError: not a mapping of those three strings.
    """
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("hash"), str):
        raise MemoryFileError(path, "'reviewed' must be a mapping with by, at and hash",
                              hint="remove it and mark the memory reviewed again: gitmem review ID")
    by = raw.get("by")
    return Review(by="" if by is None else one_line(str(by)), at=_time_str(raw.get("at"), "reviewed.at", path),
                  hash=raw["hash"])


def _bool(v: Any, key: str, path: str) -> bool:
    if not isinstance(v, bool):
        raise MemoryFileError(path, f"'{key}' must be true or false, got {v!r}")
    return v


def _opt_str(v: Any) -> str | None:
    return None if v is None else str(v)


def _opt_line(v: Any) -> str | None:
    return None if v is None else one_line(str(v)) or None


def _time_str(v: Any, key: str, path: str) -> str:
    if v is None:
        return ""
    if hasattr(v, "isoformat"):  # YAML may parse an unquoted timestamp
        s: str = v.isoformat()
        return s.replace("+00:00", "Z")
    if not isinstance(v, str):
        raise MemoryFileError(path, f"'{key}' must be an ISO-8601 time string")
    return v


def _anchor_from(raw: Any, path: str) -> Anchor:
    if isinstance(raw, str):
        raw = {"anchor": raw}
    if not isinstance(raw, dict) or not isinstance(raw.get("anchor"), str):
        raise MemoryFileError(path, "each anchor needs an 'anchor' string",
                              hint="anchor: path/to/file.py::Symbol.name")
    spec: str = raw["anchor"]
    repo = raw.get("repo")
    if repo is not None:
        # a cross-repository anchor: ``repo`` names it (an older gitmem ignores the key and sees a path
        # ``REPO:PATH`` that is in no repository: deleted, never this repository's code); the anchor is written
        # ``REPO:PATH[::SYMBOL]``, a hand-written one may give the path alone
        if not isinstance(repo, str) or not REPO_NAME.match(repo):
            raise MemoryFileError(path, f"anchor {spec}: 'repo' must be a repository name of [org.repos], "
                                        f"got {repo!r}")
        if spec.startswith("commit:"):
            raise MemoryFileError(path, f"anchor {spec}: a commit anchor has no 'repo'")
        spec = spec.removeprefix(f"{repo}:")
    commit = raw.get("commit")
    if commit is not None and (not isinstance(commit, str) or not _SHA_RE.match(commit)):
        raise MemoryFileError(path, f"anchor {spec}: commit must be a full hex SHA, got {commit!r}")
    if spec.startswith("commit:"):
        sha = spec[len("commit:"):]
        if not _SHA_RE.match(sha):
            raise MemoryFileError(path, f"anchor {spec}: not a full hex commit SHA")
        return Anchor(path=None, commit=sha, kind=KIND_COMMIT)
    file_path, sep, symbol = spec.partition("::")
    why = check_anchor_path(file_path)
    if why:
        raise MemoryFileError(path, f"anchor {spec!r}: {why}",
                              hint="anchors are repo-relative POSIX paths")
    if sep and not symbol:
        raise MemoryFileError(path, f"anchor {spec!r}: empty symbol name after '::'")
    span = raw.get("span")
    if span is not None:
        if (not isinstance(span, list) or len(span) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in span)):
            raise MemoryFileError(path, f"anchor {spec}: span must be [start, end]")
        span = (span[0], span[1])
    fp = raw.get("fingerprint")
    kind = raw.get("kind") or (KIND_FILE if not symbol else "symbol")
    if kind == KIND_COMMIT:
        raise MemoryFileError(path, f"anchor {spec}: kind commit needs the form 'commit:<sha>'")
    was = raw.get("was")
    if was is not None:
        why = check_anchor_path(was.partition("::")[0]) if isinstance(was, str) else "not a string"
        if why:
            raise MemoryFileError(path, f"anchor {spec}: 'was' must be an earlier anchor (path[::Symbol]): {why}")
    return Anchor(path=file_path, symbol=symbol or None, commit=commit, kind=str(kind),
                  span=span, fingerprint=str(fp) if fp else None, was=was or None, repo=repo)


def memory_to_dict(m: Memory) -> dict[str, Any]:
    """A memory as plain JSON-able data (for caches; not the file format)."""
    return dataclasses.asdict(m)


def memory_from_dict(d: dict[str, Any]) -> Memory:
    """Inverse of ``memory_to_dict``. Raises KeyError / TypeError on a malformed dict."""
    anchors = [Anchor(path=a["path"], symbol=a["symbol"], commit=a["commit"], kind=a["kind"],
                      span=tuple(a["span"]) if a["span"] else None,
                      fingerprint=a["fingerprint"], was=a.get("was"), repo=a.get("repo")) for a in d["anchors"]]
    review = d.get("reviewed")
    return Memory(**{**d, "anchors": anchors, "reviewed": Review(**review) if review else None})


def parse_bytes(data: bytes, path: Path, *, display: str | None = None) -> Memory:
    """Decode, parse and validate a memory file's bytes; the file stem must equal the id.

    Raises:
        MemoryFileError: not UTF-8, or invalid (see ``loads``).
    """
    name = display or str(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise MemoryFileError(name, f"not valid UTF-8 (byte {e.start})",
                              hint="memory files must be UTF-8 text") from None
    mem = loads(text, path=name)
    if path.suffix == FILE_SUFFIX and path.stem != mem.id:
        raise MemoryFileError(name, f"file name does not match id {mem.id}",
                              hint=f"rename the file to {mem.id}{FILE_SUFFIX}")
    return mem


def read(path: Path, *, display: str | None = None) -> tuple[Memory, bytes]:
    """Read and validate one memory file.

    Returns:
        (memory, raw bytes). The file name stem must equal the memory id.
    Raises:
        MemoryFileError: unreadable, not UTF-8, or invalid (see ``loads``).
    """
    name = display or str(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise MemoryFileError(name, f"cannot read: {e.strerror}") from None
    return parse_bytes(data, path, display=name), data
