"""The focus set: the code the user is working on right now.

Built from, in order of weight: the files (and changed symbols) dirty in the
working tree, files and symbols named in the prompt, files given explicitly,
and the files the branch changed since it left the default branch. The ranker
scores memories by their anchors' proximity to this set.

``add_import_neighbours`` adds the code graph around it: files that a focus
file imports and files that import a focus file (``gitmem.code.imports``).

Must not import: lancedb.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..anchors import Resolver
from ..code import contain
from ..code.imports import MAX_IMPORT_SOURCE_BYTES, ImportCache, ImportResolver, import_neighbours
from ..git import WORKTREE, Repo
from ..layout import GITMEM_DIR, linked_path
from ..model import Anchor, Symbol
from ..textsplit import name_leaf
from .mentions import WORD_WEIGHT, name_weight, read_prompt

#: Weight of each focus source (multiplies the proximity tier). Dirty code and
#: what the user names are what they are working on now; the branch's earlier
#: changes are context, so they count less.
WEIGHT_DIRTY = 1.0
WEIGHT_PROMPT = 1.0
WEIGHT_GIVEN = 1.0
WEIGHT_BRANCH = 0.7

#: Dirty files above this size (bytes) count as files in focus without diffing their symbols.
MAX_SYMBOL_DIFF_BYTES = 1_000_000

#: Focus files whose imports are followed (the highest-weighted first): bounds the parsing a
#: long branch could cause (a parse is ~2.5 ms; the branch's 51st file adds little signal).
MAX_IMPORT_FOCUS_FILES = 50
#: Anchored files parsed to find those that import a focus file (the ones closest to the focus
#: in the directory tree first). Measured on pip's 441 modules (11 KB average): ~2.5 ms a file
#: uncached, ~0.2 ms cached by blob SHA, so this bounds the first run to ~1.3 s and later runs
#: to ~0.1 s.
MAX_IMPORT_CANDIDATES = 500

#: Paths under gitmem's own directory never count as code in focus.
GITMEM_PREFIX = GITMEM_DIR + "/"

#: Focus files (dirty, given, named; highest weight first) whose symbols a prompt's names are resolved
#: against: their tables are parsed anyway or cheap (~2.5 ms a file, cached by blob), and a task names
#: few files.
MAX_RESOLVE_FILES = 20
#: Weight of a focus file's symbol named by an identifier of the prompt: just under a symbol changed in the
#: working tree (1.0), as ``score.NAMED_CERTAINTY`` (0.95) orders a name's match under what is known for certain,
#: so mid-task the changed symbols' memories stay first and a named one comes next.
FOCUS_NAME_WEIGHT = 0.95
#: Weight of a focus file's symbol named by a plain word of the prompt (an identifier's is
#: ``WEIGHT_PROMPT``): the focus file says the word is a name there, but it may still be English
#: ("Remove extra variable" and a method ``remove``), so its memories come just above the rest of the
#: file's (0.7 × ``score.TIER_SAME_SYMBOL`` 1.0 > ``score.TIER_SAME_FILE`` 0.6), below a changed symbol.
FOCUS_WORD_WEIGHT = 0.7


@dataclass
class Focus:
    """What the user is working on.

    Attributes:
        files: repo-relative path → (weight, why) for each file in focus.
        symbols: (path, qualified name) → (weight, why) for changed or named symbols.
        names: bare names from the prompt that no focus file defines (matched against
            anchored symbol names by the ranker) → weight: ``WEIGHT_PROMPT`` for an identifier,
            ``mentions.WORD_WEIGHT`` for a plain word, times ``weigh_names``' IDF once weighed.
        prompt: the prompt text ("" when none).
        imports: repo-relative path → (weight, why) for import neighbours of
            the focus files: a file a focus file imports (why ``imported by
            <focus file>``) or one that imports a focus file (``imports <focus
            file>``); weight is that focus file's. Filled by ``add_import_neighbours``.
    """

    files: dict[str, tuple[float, str]] = field(default_factory=dict)
    symbols: dict[tuple[str, str], tuple[float, str]] = field(default_factory=dict)
    names: dict[str, float] = field(default_factory=dict)
    prompt: str = ""
    imports: dict[str, tuple[float, str]] = field(default_factory=dict)

    def add_file(self, path: str, weight: float, why: str) -> None:
        if weight > self.files.get(path, (0.0, ""))[0]:
            self.files[path] = (weight, why)

    def add_import(self, path: str, weight: float, why: str) -> None:
        """Record ``path`` as an import neighbour, keeping the highest weight (and its why) seen."""
        if weight > self.imports.get(path, (0.0, ""))[0]:
            self.imports[path] = (weight, why)

    def add_symbol(self, path: str, name: str, weight: float, why: str) -> None:
        key = (path, name)
        if weight > self.symbols.get(key, (0.0, ""))[0]:
            self.symbols[key] = (weight, why)

    def add_links(self, root: Path, paths: Iterable[str]) -> None:
        """Symbolic links in focus both ways: a focus file that is or lies beyond a link (``CLAUDE.md`` ->
        ``AGENTS.md``, ``lib/x.py`` -> ``src/lib/x.py``) brings the file it leads to, and each of ``paths``
        (anchored paths) that leads to a focus file comes into focus as that file, its symbols too. Cost: about one
        ``lstat`` per path and folder (``layout.linked_path``; only a path with a link on it is resolved)."""
        seen: dict[str, bool] = {}
        for path, (w, why) in list(self.files.items()):
            real = linked_path(root, path, seen)
            if real:
                self.add_file(real, w, f"{why} {path} ->")
        for path in paths:
            real = None if path in self.files else linked_path(root, path, seen)
            if not real:
                continue
            if real in self.files:
                w, why = self.files[real]
                self.add_file(path, w, f"{why} {real} via")
            for (p, name), (w, why) in list(self.symbols.items()):
                if p == real:
                    self.add_symbol(path, name, w, why)

    def dirs(self) -> dict[str, tuple[float, str, str]]:
        """Directory ("" for the root) → (weight, why, path) of the first focus file in it."""
        out: dict[str, tuple[float, str, str]] = {}
        for path, (w, src) in self.files.items():
            out.setdefault(path.rpartition("/")[0], (w, src, path))
        return out

    @property
    def empty(self) -> bool:
        return not (self.files or self.symbols or self.names)


def changed_symbols(resolver: Resolver, path: str, old: str | None, new: str | None, *,
                    through_members: bool = True) -> list[str]:
    """Qualified names in ``path`` whose fingerprint differs between ``old`` and ``new`` (or are new).

    A type's fingerprint covers its members where they sit inside it (Python, Java, TypeScript, C#, Ruby, Kotlin
    ...: ``code.contain``), so a one-method edit changes the class too. ``through_members=False`` leaves out a
    container whose own code is the same (``contain.changed_through_members``; in a programming language only:
    a YAML key's value is its nested keys, ``contain.has_members_apart_from_value``): for the focus, the class is then
    not "changed" and its other methods are not "nested in a changed symbol"; a memory on the class is near the
    changed method as its container (``score.TIER_ENCLOSING``). The default keeps every fingerprint change (what
    a commit changed: memories anchored by capture, the benchmarks' ground truth).
    """
    before = resolver.table(old, path) or {} if old else {}
    after = resolver.table(new, path) or {}
    out = [n for n, s in after.items() if before.get(n) is None or before[n].fingerprint != s.fingerprint]
    if through_members or not out or not contain.has_members_apart_from_value(path):
        return out
    return _own_changes(resolver, path, old, new, before, after, out)


def _own_changes(resolver: Resolver, path: str, old: str | None, new: str | None, before: dict[str, Symbol],
                 after: dict[str, Symbol], changed: list[str]) -> list[str]:
    """``changed`` without the containers changed only through their members (``contain.changed_through_members``);
    reads the file's two versions only when one of ``changed`` has members."""
    if not any(contain.members(after, n) for n in changed if n in before):
        return changed
    old_src = resolver.source(old, path) if old else None
    new_src = resolver.source(new, path)
    if old_src is None or new_src is None:
        return changed
    comments = contain.line_comments(path)
    return [n for n in changed if not contain.changed_through_members(n, before, old_src, after, new_src, comments)]


def deleted_symbols(resolver: Resolver, path: str, old: str | None, new: str | None) -> list[str]:
    """Qualified names in ``path`` at ``old`` that are gone at ``new`` (the file still there).

    Deleting a symbol changes it most: a memory on it (why it was kept, who calls it) is about the
    code being edited.
    """
    after = resolver.table(new, path)
    if not old or after is None:
        return []
    return [n for n in resolver.table(old, path) or {} if n not in after]


def build_focus(repo: Repo, *, files: list[str] | tuple[str, ...] = (), prompt: str = "",
                cwd: str | None = None, include_dirty: bool = True, include_branch: bool = True,
                resolver: Resolver | None = None) -> Focus:
    """Collect the focus set (see module docstring). Paths in ``files`` may be absolute or cwd-relative."""
    resolver = resolver or Resolver(repo)
    focus = Focus(prompt=prompt)
    head = repo.head()
    if include_dirty:
        for p in repo.dirty_files(skip_gitmem=True):
            if p.startswith(GITMEM_PREFIX):
                continue  # memory files are not code in focus
            focus.add_file(p, WEIGHT_DIRTY, "dirty")
            try:
                big = (repo.root / p).stat().st_size > MAX_SYMBOL_DIFF_BYTES
            except OSError:
                big = True
            if big:
                continue  # a huge or vanished file is in focus as a file; parsing it twice costs seconds
            for n in changed_symbols(resolver, p, head, WORKTREE, through_members=False):
                focus.add_symbol(p, n, WEIGHT_DIRTY, "changed")
            for n in deleted_symbols(resolver, p, head, WORKTREE):
                focus.add_symbol(p, n, WEIGHT_DIRTY, "deleted")
    if include_branch and head:
        base = repo.default_branch_base()
        if base:
            for ch in repo.changed_files(base, head, skip_gitmem=True):
                if ch.new_path and not ch.new_path.startswith(GITMEM_PREFIX):
                    focus.add_file(ch.new_path, WEIGHT_BRANCH, "branch")
    for f in files:
        rel = repo.relpath(f, cwd=cwd)
        if rel:
            focus.add_file(rel, WEIGHT_GIVEN, "given")
    if prompt:
        _add_prompt_mentions(repo, focus, prompt, resolver)
    return focus


def _add_prompt_mentions(repo: Repo, focus: Focus, prompt: str, resolver: Resolver | None = None) -> None:
    """Read ``prompt`` (``mentions.read_prompt``, against the files tracked at HEAD) into ``focus``.

    Named paths and ``path::Symbol`` pairs come into focus as named. Each identifier and plain word is
    first resolved against the focus files (``_resolve_in_focus``): a name one of them defines means that
    symbol (``_serialize`` with ``requests/models.py`` given is that file's ``_serialize``, not every
    ``X._serialize``). An identifier no focus file defines goes to ``focus.names`` (matched against every
    anchored symbol, weighed later by ``weigh_names``); a plain word too, at ``mentions.WORD_WEIGHT``,
    so an English word ("timeout", "list", "error") never pulls memories on unrelated code above
    those of the focus files.
    """
    head = repo.head()
    tracked = repo.files_at(head, skip_gitmem=True) if head else repo.files_at(WORKTREE, skip_gitmem=True)
    reading = read_prompt(prompt, set(tracked))
    for path in sorted(reading.paths):
        focus.add_file(path, WEIGHT_PROMPT, "named")
    for path, name in reading.qualified:
        focus.add_file(path, WEIGHT_PROMPT, "named")
        focus.add_symbol(path, name, WEIGHT_PROMPT, "named")
    tables = _focus_tables(repo, focus, resolver or Resolver(repo), head)
    for name in reading.identifiers:
        if not _resolve_in_focus(focus, tables, name, WEIGHT_PROMPT * FOCUS_NAME_WEIGHT):
            focus.names[name] = max(focus.names.get(name, 0.0), WEIGHT_PROMPT)
    for word in reading.words:
        if not _resolve_in_focus(focus, tables, word, WEIGHT_PROMPT * FOCUS_WORD_WEIGHT, word=True):
            focus.names[word] = max(focus.names.get(word, 0.0), WEIGHT_PROMPT * WORD_WEIGHT)


def _focus_tables(repo: Repo, focus: Focus, resolver: Resolver, head: str | None
                  ) -> dict[str, list[tuple[str, str]]]:
    """Path → (qualified name, leaf) of the symbols of the focus files a prompt's names are resolved against: the dirty,
    given and named ones (not the branch's), at most ``MAX_RESOLVE_FILES``, none over ``MAX_SYMBOL_DIFF_BYTES``,
    the working tree's version of a dirty file, HEAD's of a clean one (cached by blob). A file that cannot be
    parsed has no names."""
    out: dict[str, list[tuple[str, str]]] = {}
    ranked = sorted(((p, w, why) for p, (w, why) in focus.files.items() if w >= WEIGHT_GIVEN),
                    key=lambda t: (-t[1], t[0]))
    for path, _w, why in ranked[:MAX_RESOLVE_FILES]:
        try:
            if (repo.root / path).stat().st_size > MAX_SYMBOL_DIFF_BYTES:
                continue  # a huge file (generated, vendored): parsing it costs seconds, and it names little
        except OSError:
            pass  # not in the working tree: HEAD's copy, if any
        rev = WORKTREE if why == "dirty" or not head else head
        try:
            table = resolver.table(rev, path)
        except Exception:  # noqa: BLE001 - an odd file (binary, vanished, unparsable) names nothing
            table = None
        if table:
            out[path] = [(q, name_leaf(q)) for q in table]
    return out


def _resolve_in_focus(focus: Focus, tables: dict[str, list[tuple[str, str]]], term: str, weight: float,
                      word: bool = False) -> bool:
    """Add the symbols of the focus files that ``term`` names to ``focus.symbols`` ("named"); False if none.

    A symbol is named by its qualified name, its leaf (``name_leaf``) or, for a dotted term, a dotted
    suffix (``models.Session`` names ``Session``); a plain ``word`` also by its lower-case form when only
    its first letter is a capital (a sentence's first word: "Remove" names ``remove``). A word naming many
    symbols of the focus files is weighed down by ``mentions.name_weight`` over their symbols ("value" in
    a module of values is its vocabulary, not a pointer); an identifier is not (the writer marked it as a
    name, and the focus file already says which ones).
    """
    forms = {term}
    if word and term[:1].isupper() and term[1:].islower():
        forms.add(term.lower())
    hits: list[tuple[str, str]] = []
    total = 0
    for path, names in tables.items():
        total += len(names)
        for q, leaf in names:
            if q in forms or leaf in forms or any(t.endswith("." + q) for t in forms):
                hits.append((path, q))
    if not hits:
        return False
    w = weight * name_weight(len(hits), total) if word else weight
    for path, q in hits:
        focus.add_symbol(path, q, w, "named")
    return True


def weigh_names(focus: Focus, anchors: Iterable[Anchor]) -> None:
    """Scale each weight of ``focus.names`` by how many of ``anchors``' distinct symbols bear the name
    (``mentions.name_weight``, an IDF): a name that fifty anchored methods share says little. A symbol
    bears a name as ``score.anchor_proximity`` matches it (qualified name, leaf, or a dotted name's
    suffix). Call once, with the anchors of the memories being ranked; only local symbol anchors count.
    """
    if not focus.names:
        return
    symbols = {(a.path, a.symbol) for a in anchors if a.symbol and a.path and a.local}
    by_leaf: dict[str, int] = {}
    by_symbol: dict[str, int] = {}
    for _path, sym in symbols:
        by_symbol[sym] = by_symbol.get(sym, 0) + 1
        leaf = name_leaf(sym)
        by_leaf[leaf] = by_leaf.get(leaf, 0) + 1
    for name, w in list(focus.names.items()):
        if "." not in name:
            shared = by_leaf.get(name, 0)
        else:  # Session.send: that symbol, or a symbol named by one of its dotted suffixes (send)
            parts = name.split(".")
            shared = sum(by_symbol.get(".".join(parts[i:]), 0) for i in range(len(parts)))
        focus.names[name] = w * name_weight(shared, len(symbols))


def add_import_neighbours(repo: Repo, focus: Focus, anchored: Iterable[str], *,
                          cache_path: Path | None = None, files: Iterable[str] | None = None) -> None:
    """Fill ``focus.imports`` with the import neighbours of the focus files that hold anchors.

    Reads the working tree. Outgoing: the imports of up to
    ``MAX_IMPORT_FOCUS_FILES`` focus files (highest weight first), resolved
    against ``files`` (default: the files at HEAD plus the focus files, which
    include the dirty and untracked ones).
    Incoming: of the ``anchored`` paths (the files memories are anchored to,
    since only those can rank), up to ``MAX_IMPORT_CANDIDATES`` nearest the
    focus in the directory tree are parsed, and those importing a focus file are
    added. Only neighbours in ``anchored`` are kept. Files over
    ``MAX_IMPORT_SOURCE_BYTES`` are skipped. Import lists are cached by blob
    SHA in memory and, with ``cache_path``, in that JSON file (see
    ``gitmem.code.imports.ImportCache``). Does nothing when the focus has no
    files or nothing is anchored. Raises nothing for unreadable or odd files.
    """
    anchored_set = {p for p in anchored if p and not p.startswith(GITMEM_PREFIX)}
    if not focus.files or not anchored_set:
        return
    ordered = sorted(focus.files.items(), key=lambda item: (-item[1][0], item[0]))
    focus_files = dict(ordered[:MAX_IMPORT_FOCUS_FILES])
    focus_dirs: dict[str, int] = {}
    for p in focus_files:
        parts = p.split("/")[:-1]
        for i in range(len(parts) + 1):
            focus_dirs["/".join(parts[:i])] = i

    def closeness(p: str) -> int:
        """Depth of the deepest directory ``p`` shares with a focus file (higher is nearer)."""
        parts = p.split("/")[:-1]
        for i in range(len(parts), -1, -1):
            d = focus_dirs.get("/".join(parts[:i]))
            if d is not None:
                return d
        return -1

    candidates = sorted(anchored_set - set(focus_files), key=lambda p: (-closeness(p), p))
    candidates = candidates[:MAX_IMPORT_CANDIDATES]

    root = str(repo.root)

    def read(path: str) -> bytes | None:
        """A regular file of the working tree up to the size limit (a symlink's text is no code)."""
        full = os.path.join(root, path)
        try:
            st = os.lstat(full)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_IMPORT_SOURCE_BYTES:
                return None
            with open(full, "rb") as f:
                return f.read()
        except OSError:
            return None

    if files is None:  # HEAD's tree (no stat per file, unlike the working tree's list) + dirty files
        head = repo.head()
        files = set(repo.files_at(head, skip_gitmem=True) if head else repo.files_at(WORKTREE, skip_gitmem=True))
        files |= set(focus.files)
    resolver = ImportResolver(files, read)
    cache = ImportCache(cache_path)
    edges = import_neighbours(focus_files, candidates, resolver, read, cache=cache)
    cache.save()
    for importer, imported in sorted(edges):
        if importer in focus_files and imported in anchored_set:
            focus.add_import(imported, focus_files[importer][0], f"imported by {importer}")
        if imported in focus_files and importer in anchored_set:
            focus.add_import(importer, focus_files[imported][0], f"imports {imported}")
