"""The focus set: the code the user is working on right now.

Built from, in order of weight: the files (and changed symbols) dirty in the
working tree, files and symbols named in the prompt, files given explicitly,
and the files the branch changed since it left the default branch. The ranker
scores memories by their anchors' proximity to this set.

Must not import: lancedb.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .anchors import Resolver
from .git import WORKTREE, Repo

#: Weight of each focus source (multiplies the proximity tier). Dirty code and
#: what the user names are what they are working on now; the branch's earlier
#: changes are context, so they count less.
WEIGHT_DIRTY = 1.0
WEIGHT_PROMPT = 1.0
WEIGHT_GIVEN = 1.0
WEIGHT_BRANCH = 0.7

#: Dirty files above this size (bytes) count as files in focus without diffing their symbols.
MAX_SYMBOL_DIFF_BYTES = 1_000_000

#: Paths under gitmem's own directory never count as code in focus.
GITMEM_PREFIX = ".gitmem/"

#: Tokens of a prompt that may name a path or a symbol.
_TOKEN_RE = re.compile(r"[A-Za-z_][\w$]*(?:[./:-][\w$]+)*")
#: Shortest bare name taken as a symbol mention (shorter ones are words like "id", "io").
MIN_SYMBOL_MENTION = 3


@dataclass
class Focus:
    """What the user is working on.

    Attributes:
        files: repo-relative path → (weight, why) for each file in focus.
        symbols: (path, qualified name) → (weight, why) for changed or named symbols.
        names: bare identifiers from the prompt (matched against anchored symbol
            names by the ranker) → weight.
        prompt: the prompt text ("" when none).
    """

    files: dict[str, tuple[float, str]] = field(default_factory=dict)
    symbols: dict[tuple[str, str], tuple[float, str]] = field(default_factory=dict)
    names: dict[str, float] = field(default_factory=dict)
    prompt: str = ""

    def add_file(self, path: str, weight: float, why: str) -> None:
        if weight > self.files.get(path, (0.0, ""))[0]:
            self.files[path] = (weight, why)

    def add_symbol(self, path: str, name: str, weight: float, why: str) -> None:
        key = (path, name)
        if weight > self.symbols.get(key, (0.0, ""))[0]:
            self.symbols[key] = (weight, why)

    @property
    def empty(self) -> bool:
        return not (self.files or self.symbols or self.names)


def changed_symbols(resolver: Resolver, path: str, old: str | None, new: str | None) -> list[str]:
    """Qualified names in ``path`` whose fingerprint differs between ``old`` and ``new`` (or are new)."""
    before = resolver.table(old, path) or {} if old else {}
    after = resolver.table(new, path) or {}
    return [n for n, s in after.items() if before.get(n) is None or before[n].fingerprint != s.fingerprint]


def build_focus(repo: Repo, *, files: list[str] | tuple[str, ...] = (), prompt: str = "",
                cwd: str | None = None, include_dirty: bool = True, include_branch: bool = True,
                resolver: Resolver | None = None) -> Focus:
    """Collect the focus set (see module docstring). Paths in ``files`` may be absolute or cwd-relative."""
    resolver = resolver or Resolver(repo)
    focus = Focus(prompt=prompt)
    head = repo.head()
    if include_dirty:
        for p in repo.dirty_files():
            if p.startswith(GITMEM_PREFIX):
                continue  # memory files are not code in focus
            focus.add_file(p, WEIGHT_DIRTY, "dirty")
            try:
                big = (repo.root / p).stat().st_size > MAX_SYMBOL_DIFF_BYTES
            except OSError:
                big = True
            if big:
                continue  # a huge or vanished file is in focus as a file; parsing it twice costs seconds
            for n in changed_symbols(resolver, p, head, WORKTREE):
                focus.add_symbol(p, n, WEIGHT_DIRTY, "changed")
    if include_branch and head:
        base = repo.default_branch_base()
        if base:
            for ch in repo.changed_files(base, head):
                if ch.new_path and not ch.new_path.startswith(GITMEM_PREFIX):
                    focus.add_file(ch.new_path, WEIGHT_BRANCH, "branch")
    for f in files:
        rel = repo.relpath(f, cwd=cwd)
        if rel:
            focus.add_file(rel, WEIGHT_GIVEN, "given")
    if prompt:
        _add_prompt_mentions(repo, focus, prompt)
    return focus


def _add_prompt_mentions(repo: Repo, focus: Focus, prompt: str) -> None:
    """Paths (full, suffix or unique basename), ``path::Symbol`` and identifiers named in the prompt."""
    tracked = repo.files_at(repo.head()) if repo.head() else repo.files_at(WORKTREE)
    by_base: dict[str, list[str]] = {}
    for p in tracked:
        by_base.setdefault(p.rsplit("/", 1)[-1], []).append(p)
    tracked_set = set(tracked)
    for m in re.finditer(r"(\S+?)::([A-Za-z_$][\w$.]*)", prompt):
        path = m.group(1).strip("`'\"(")
        if path in tracked_set:
            focus.add_file(path, WEIGHT_PROMPT, "named")
            focus.add_symbol(path, m.group(2), WEIGHT_PROMPT, "named")
    for tok in _TOKEN_RE.findall(prompt):
        tok = tok.strip("./:-")
        if not tok:
            continue
        if tok in tracked_set:
            focus.add_file(tok, WEIGHT_PROMPT, "named")
            continue
        if "/" not in tok and "." in tok and len(by_base.get(tok, [])) == 1:
            focus.add_file(by_base[tok][0], WEIGHT_PROMPT, "named")
            continue
        if "/" in tok:
            hits = [p for p in tracked if p.endswith("/" + tok)]
            if len(hits) == 1:
                focus.add_file(hits[0], WEIGHT_PROMPT, "named")
                continue
        if len(tok) >= MIN_SYMBOL_MENTION and "/" not in tok:
            focus.names[tok.rstrip("()")] = WEIGHT_PROMPT
