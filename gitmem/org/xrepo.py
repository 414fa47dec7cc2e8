"""Cross-repository anchors (issue 21): a memory anchored to code in another repository of the organisation.

``gitmem remember ... --anchor REPO:PATH::SYMBOL`` (or ``REPO:PATH`` for a whole file) anchors to ``PATH``
(and ``SYMBOL``) in the repository ``REPO`` names in ``[org.repos]`` (this repository's config, or the user's),
at the commit of that repository's ref (``[org] ref``, else its default branch): ``make`` finds the symbol there
and records its fingerprint and span, as ``anchors.Resolver.make`` does in this repository. The anchor is
``model.Anchor`` with ``repo`` set; its path and commit are the other repository's.

``check`` resolves every foreign anchor of this repository's memories against its repository's current ref
(``anchors.Resolver.status`` on that repository: fingerprints by blob, so a bare mirror serves), and records the
result (``org.checks``) and the memories' statuses in the catalog, so the hooks warn "stale" without running git
in the other repository. A stale or moved anchor's reason names the other repository's commit
(``ledger@1a2b3c4: `retry_after` body changed``). A repository that cannot be reached is ``unchecked`` with
why, never ``fresh``; its anchors keep their last checked status in the catalog. ``gitmem stale`` checks with
``local_only`` (a local path of ``[org.repos]``, or a mirror already in ``layout.org_cache_dir()``: never the
network); ``gitmem org check`` checks all (``fetch``: mirrors fetched first).

Nothing that resolves anchors against this repository touches a foreign one: ``Resolver.status`` answers it from
the last check (``Anchor.local``).

Must not import: lancedb (the hooks never import this module).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import config as config_mod
from ..anchors import Resolver
from ..errors import AnchorError, GitmemError
from ..git import Repo
from ..infra import utc_now
from ..memfile import check_anchor_path
from ..model import Anchor, AnchorStatus, Memory, MemoryStatus, Status
from ..store import Store
from . import checks as org_checks
from . import repos
from .settings import OrgSettings, of_config

#: ``REPO:PATH[::SYMBOL]``: a repository name (``settings.REPO_NAME``), a colon, the anchor in that repository.
FOREIGN_SPEC = re.compile(r"^(?P<repo>[A-Za-z0-9][A-Za-z0-9._-]{0,99}):(?!:)(?P<rest>.+)$")

#: Characters of a commit SHA shown in a reason (``ledger@1a2b3c4``): git's own default abbreviation.
SHORT_SHA = 7

#: The longest file extension (after the dot) that makes ``REPO`` of ``REPO:REST`` read as a file name typed
#: with one colon for two (``.tfvars``, ``.swift``; a repository's name rarely ends so).
MAX_EXTENSION = 6


def split_spec(spec: str) -> tuple[str, str] | None:
    """``(REPO, PATH[::SYMBOL])`` of an anchor spec written ``REPO:PATH[::SYMBOL]``; None for any other spec
    (a path of this repository, ``commit:REV``). Whether REPO is a repository of ``[org.repos]`` is the caller's
    question (``is_foreign_spec``)."""
    if spec.startswith("commit:"):
        return None
    m = FOREIGN_SPEC.match(spec)
    return (m.group("repo"), m.group("rest")) if m else None


def settings_of(store: Store) -> OrgSettings:
    """This repository's ``[org]`` settings (its config.toml over the user's).

    Raises:
        ConfigError: a config file is invalid.
    """
    return of_config(store.config, config_mod.load_user())[0]


def is_foreign_spec(store: Store, spec: str) -> bool:
    """Whether the user's anchor ``spec`` is a cross-repository anchor: ``REPO:PATH…`` with REPO in
    ``[org.repos]``, or with REPO not there and no such path in this repository (``make`` then says how to add
    it). A path of this repository that holds a colon (``notes:2024.md``) stays a path of this repository."""
    parts = split_spec(spec)
    if parts is None:
        return False
    if parts[0] in settings_of(store).repos:
        return True
    return not (store.repo.root / spec.partition("::")[0]).exists()


@dataclass(frozen=True)
class Reached:
    """Another repository opened at its ref: the ``git.Repo``, the ref's commit, a resolver over it."""

    name: str
    repo: Repo
    commit: str
    resolver: Resolver


def reach(settings: OrgSettings, root: Path | None, name: str, *, fetch: bool, local_only: bool = False) -> Reached:
    """Open the organisation repository ``name`` of ``settings`` at its ref (``root``: the repository whose
    config names it, which its relative path is relative to).

    ``fetch``: fetch its mirror first (a repository reached by URL). ``local_only``: never the network: a
    repository reached by URL only through a mirror already in ``layout.org_cache_dir()``.

    Raises:
        GitmemError: ``name`` is not in ``[org.repos]`` (the hint says how to add it), or the repository cannot
            be reached or has no commit at its ref (one line with why, and what to do).
    """
    where = repos.find(settings, root, name)
    if where is None:
        raise GitmemError(f"no repository {name} in [org.repos]",
                          f'add it to .gitmem/config.toml (or your own ~/.config/gitmem/config.toml): [org.repos] '
                          f'{name} = "PATH or git URL"')
    if local_only and not _local(where):
        raise GitmemError(f"{name} is reached by URL ({where.location}) and has no mirror here yet",
                          "gitmem org check --fetch (gitmem stale never uses the network)")
    other = repos.open_repo(where, fetch=fetch and not local_only)
    commit = repos.ref_commit(other, settings.ref)
    return Reached(name, other, commit, Resolver(other))


def _local(where: repos.OrgRepo) -> bool:
    """Whether ``where`` is reachable without the network: a local path, or a URL whose mirror is already here."""
    return not where.is_url or (repos.mirror_dir(where.location) / "HEAD").is_file()


def make(store: Store, spec: str, *, settings: OrgSettings | None = None) -> Anchor:
    """A cross-repository anchor from the user's ``REPO:PATH[::SYMBOL]``, made at the commit of REPO's ref: the
    file (and symbol) must be there; its fingerprint and span are recorded, ``commit`` is that commit.

    Raises:
        AnchorError: not a ``REPO:PATH`` spec, REPO not in ``[org.repos]`` or unreachable, no such file or symbol
            at the ref (with the closest names, as for an anchor in this repository).
    """
    parts = split_spec(spec)
    if parts is None:
        raise AnchorError(f"anchor {spec}: not REPO:PATH[::SYMBOL]", "e.g. --anchor ledger:src/api.py::retry_after")
    name, rest = parts
    path, sep, symbol = rest.partition("::")
    if sep and not symbol:
        raise AnchorError(f"anchor {spec}: no symbol after '::'",
                          f"name the symbol ({name}:{path}::Class.method), or give {name}:{path} for the whole file")
    why = check_anchor_path(path)
    if why:
        raise AnchorError(f"anchor {spec}: {why}", f"a path inside {name}, from its root")
    try:
        settings = settings or settings_of(store)
        if repos.find(settings, store.repo.root, name) is None and _file_like(store, name):
            raise AnchorError(f"anchor {spec}: no repository {name} in [org.repos]; {name} is a "
                              + ("file here" if (store.repo.root / name).is_file() else "file name"),
                              f"a symbol follows two colons: --anchor {name}::{rest.lstrip(':')} (or add the "
                              f"repository {name} to [org.repos] in .gitmem/config.toml)")
        reached = reach(settings, store.repo.root, name, fetch=True)
        made = reached.resolver.make(path, symbol or None, reached.commit)
    except AnchorError as e:
        if e.message.startswith(f"anchor {spec}: "):
            raise
        raise AnchorError(f"anchor {spec}: {e.message} in {name}", e.hint, candidates=e.candidates) from None
    except GitmemError as e:
        raise AnchorError(f"anchor {spec}: {e.message}", e.hint) from None
    return replace(made, repo=name)


def _file_like(store: Store, name: str) -> bool:
    """Whether the ``REPO`` of a ``REPO:REST`` spec is rather a file with one colon typed for two
    (``cJSON.c:cJSON_Minify``): a file of this repository, or a name with a file extension (``.c``, ``.py``)."""
    if (store.repo.root / name).is_file() or Path(name).is_file():
        return True
    ext = os.path.splitext(name)[1]
    return 0 < len(ext) - 1 <= MAX_EXTENSION and ext[1:].isalnum()


@dataclass
class ForeignCheck:
    """One foreign anchor of one memory, as a check found it.

    Attributes:
        memory: the memory.
        anchor: its foreign anchor.
        status: fresh, moved, stale, deleted, or unchecked (the repository could not be reached).
        reason: one line (``ledger@1a2b3c4: `retry_after` body changed``; for unchecked, why).
        commit: the other repository's commit checked at (None when unchecked).
        changed_in: the other repository's commit that made it not fresh, when one can be named.
        path_now, symbol_now: where its code is at ``commit``.
    """

    memory: Memory
    anchor: Anchor
    status: Status
    reason: str = ""
    commit: str | None = None
    changed_in: str | None = None
    path_now: str | None = None
    symbol_now: str | None = None


@dataclass
class CheckReport:
    """What ``check`` found: one ``ForeignCheck`` per foreign anchor (by memory id, then anchor key), and per
    repository ``(commit checked at, "")`` or ``(None, why it was not checked)`` (``repos``, by name)."""

    checks: list[ForeignCheck] = field(default_factory=list)
    repos: dict[str, tuple[str | None, str]] = field(default_factory=dict)

    @property
    def not_fresh(self) -> list[ForeignCheck]:
        return [c for c in self.checks if c.status != Status.FRESH]

    def unchecked(self) -> dict[str, str]:
        """``org.checks.record_key`` of each anchor that could not be checked → why."""
        return {org_checks.record_key(c.anchor): c.reason for c in self.checks if c.status == Status.UNCHECKED}


def foreign_memories(store: Store) -> list[Memory]:
    """The memories (retired ones left out) with at least one cross-repository anchor, by id: the catalog's rows
    refreshed (the memory files that changed are read) and one query; every memory file when it cannot be
    opened."""
    from ..catalog import db as catalog_db
    from ..catalog import files as catalog_files

    con = None
    try:
        con = catalog_files.open_current(store)  # the rows brought up to date: only changed files are read
        if con is not None:
            mems = list(catalog_files.load(con, sorted(catalog_db.ids_with_foreign_anchors(con))).values())
        else:
            mems = list(store.load_all().memories.values())
    except Exception:  # noqa: BLE001 - the catalog is a cache: read the files instead
        mems = list(store.load_all().memories.values())
    finally:
        if con is not None:
            con.close()
    return sorted((m for m in mems if not m.retired and any(not a.local for a in m.anchors)), key=lambda m: m.id)


def reason_of(name: str, st: AnchorStatus, checked_at: str) -> str:
    """The one line of a non-fresh foreign anchor: ``ledger@1a2b3c4: `retry_after` body changed`` (the commit
    that changed it when one can be named, else the commit checked at)."""
    if st.status == Status.FRESH:
        return ""
    a = st.anchor
    what = st.reason
    if st.commit:
        what = what.replace(f" in {st.commit[:12]}", "")
    return f"{name}@{(st.commit or checked_at)[:SHORT_SHA]}: `{a.symbol or a.path}` {what}".rstrip()


class Live:
    """Foreign anchors checked at their repositories now, each repository opened once (``reach``).

    ``status`` suits ``anchors.Resolver(repo, foreign=…)``: ``gitmem org index`` resolves the foreign anchors of
    the repositories it indexes with it. ``repos``: per repository name, ``(commit checked at, "")`` or ``(None,
    why it could not be)``.
    """

    def __init__(self, settings: OrgSettings, root: Path | None, *, fetch: bool = False,
                 local_only: bool = False) -> None:
        self.settings, self.root, self.fetch, self.local_only = settings, root, fetch, local_only
        self._reached: dict[str, Reached | str] = {}
        self.repos: dict[str, tuple[str | None, str]] = {}

    def reached(self, name: str) -> Reached | str:
        """Repository ``name`` opened at its ref, or why it could not be (one line)."""
        if name not in self._reached:
            try:
                got = reach(self.settings, self.root, name, fetch=self.fetch, local_only=self.local_only)
                self._reached[name] = got
                self.repos[name] = (got.commit, "")
            except GitmemError as e:
                why = f"{name} not checked: {e.message.removeprefix(name + ': ')}" + (f" ({e.hint})" if e.hint else "")
                self._reached[name] = why
                self.repos[name] = (None, why)
        return self._reached[name]

    def status(self, a: Anchor) -> AnchorStatus:
        """``a``'s status at its repository's ref now: the reason names that repository's commit
        (``reason_of``); ``unchecked`` with why when the repository cannot be reached or read."""
        r = self.reached(a.repo or "")
        if isinstance(r, str):
            return AnchorStatus(a, Status.UNCHECKED, reason=r)
        try:
            st = r.resolver.status(replace(a, repo=None), r.commit)
        except GitmemError as e:
            return AnchorStatus(a, Status.UNCHECKED, reason=f"{a.repo} not checked: {e.message}")
        return replace(st, anchor=a, reason=reason_of(r.name, st, r.commit))


def check(store: Store, *, fetch: bool = False, local_only: bool = False,
          memories: list[Memory] | None = None) -> CheckReport:
    """Check every foreign anchor of ``memories`` (default: ``foreign_memories``) against its repository's ref,
    record the results (``org.checks``) and the statuses of the memories they changed in the catalog. With
    ``memories`` None the records of anchors no memory has any more are dropped.

    ``fetch``: fetch the mirrors of repositories reached by URL first. ``local_only``: never the network (see
    ``reach``). A repository that cannot be reached makes its anchors ``unchecked`` (with why) in the report;
    their recorded status stays the last one checked.

    Raises:
        ConfigError: a config file is invalid.
    """
    mems = foreign_memories(store) if memories is None else memories
    report = CheckReport()
    if not mems:
        if memories is None and store.layout.xrepo_checks_file.exists():
            try:
                org_checks.save(store.layout.xrepo_checks_file, {})  # no foreign anchor left: nothing to keep
            except OSError:
                pass
        return report
    live = Live(settings_of(store), store.repo.root, fetch=fetch, local_only=local_only)
    lay = store.layout
    recorded = org_checks.load(lay.xrepo_checks_file)
    before = dict(recorded)
    now = utc_now()
    for m in mems:
        for a in m.anchors:
            if a.local:
                continue
            st = live.status(a)
            r = live.reached(a.repo or "")
            at = None if isinstance(r, str) or st.status == Status.UNCHECKED else r.commit
            report.checks.append(ForeignCheck(m, a, st.status, st.reason, at, st.commit, st.path_now, st.symbol_now))
            if at is not None:
                recorded[org_checks.record_key(a)] = org_checks.Checked(
                    status=st.status.value, reason=st.reason, commit=at, changed_in=st.commit, path_now=st.path_now,
                    symbol_now=st.symbol_now, changes=tuple(c.value for c in st.changes), at=now)
    report.repos = dict(live.repos)
    if memories is None:  # every foreign anchor was checked: the records of anchors no memory has any more go
        current = {org_checks.record_key(c.anchor) for c in report.checks}
        recorded = {k: v for k, v in recorded.items() if k in current}
    changed_ids = {c.memory.id for c in report.checks
                   if _status_of(before.get(org_checks.record_key(c.anchor))) != _status_of(
                       recorded.get(org_checks.record_key(c.anchor)))}
    if recorded != before:
        try:
            org_checks.save(lay.xrepo_checks_file, recorded)
        except OSError:
            return report  # the report stands; the catalog keeps the last statuses it had
    if changed_ids:
        from ..analyzer import memory_status
        from ..catalog.sync import record_statuses
        from ..git import WORKTREE

        resolver = Resolver(store.repo)
        record_statuses(store, {m.id: memory_status(resolver, m, WORKTREE) for m in mems if m.id in changed_ids})
    return report


def _status_of(c: org_checks.Checked | None) -> tuple[str, str]:
    return ("fresh", "") if c is None else (c.status, c.reason)


def with_unchecked(statuses: list[MemoryStatus], unchecked: dict[str, str]) -> list[MemoryStatus]:
    """``statuses`` with each foreign anchor that could not be checked now shown ``unchecked`` (``unchecked``:
    ``CheckReport.unchecked()``), with why and the status it was last checked with."""
    if not unchecked:
        return statuses
    out = []
    for ms in statuses:
        anchors = []
        for st in ms.anchors:
            why = unchecked.get(org_checks.record_key(st.anchor)) if not st.anchor.local else None
            if why is None:
                anchors.append(st)
                continue
            last = f"; last known: {st.status.value}" + (f" ({st.reason})" if st.reason else "")
            anchors.append(AnchorStatus(st.anchor, Status.UNCHECKED, path_now=st.path_now, symbol_now=st.symbol_now,
                                        old_span=st.old_span, reason=why + last))
        out.append(MemoryStatus(ms.memory, anchors))
    return out
