"""The organisation index: ``gitmem org index [REPO…]``, ``gitmem org status``; and ``recall --org``'s search.
``gitmem org check``: the cross-repository anchors (``gitmem.org.xrepo``) against their repositories' refs.

Exit codes of ``org index``: 0 every repository indexed or up to date; 1 some repository failed (the others were
indexed); 2 a configuration or store error (nothing indexed; one line says why, and what to do).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .. import extras, shapes
from ..errors import ConfigError, GitmemError
from .base import EXIT_ERROR, State, _out, _warn, cli, json_option

if TYPE_CHECKING:
    from ..org.repos import OrgRepo
    from ..org.search import OrgHit
    from ..org.settings import OrgSettings

#: The one line said when no organisation index is configured.
NOT_CONFIGURED = ('no organisation index is configured: set [org] uri = "s3://BUCKET/PREFIX" (or a folder) in '
                  ".gitmem/config.toml or ~/.config/gitmem/config.toml (docs/org.md)")


#: Invalid or cut memory files named under a repository's line of ``org index`` (the rest counted; ``--json``
#: has them all).
NAMED_FILES = 5


class OrgConfigError(GitmemError):
    """``[org]``, ``[embeddings]`` or the user's config cannot be used for the organisation index (exit 2)."""

    exit_code = 2


def org_context(*, require: bool = True) -> tuple[OrgSettings, Path | None, dict[str, Any] | None]:
    """(``[org]`` as used, the repository root or None outside one, its ``[embeddings]`` table) from the project's
    config (when run inside a repository) and the user's; a relative folder uri made absolute against the root.

    Raises:
        OrgConfigError: a config file is invalid, or (``require``) no ``[org] uri`` is configured.
    """
    from ..config import load_user
    from ..errors import NotARepository
    from ..org.settings import of_config
    from ..org.store import db_uri
    from .base import _store

    warnings: list[str] = []
    try:
        user = load_user(warnings)
        try:
            store = _store(require=False)
            project, root = store.config, store.repo.root
        except NotARepository:
            project, root = {}, None
    except ConfigError as e:
        raise OrgConfigError(e.message, e.hint) from e
    for w in warnings:
        _warn(w)
    settings, _ = of_config(project, user)
    if not settings.configured:
        if require:
            raise OrgConfigError(NOT_CONFIGURED)
        return settings, root, None
    if not settings.is_s3:
        settings = dataclasses.replace(settings, uri=db_uri(settings, root))
    emb = project.get("embeddings") if isinstance(project, dict) else None
    return settings, root, emb if isinstance(emb, dict) else None


def _targets(settings: OrgSettings, root: Path | None, args: tuple[str, ...]) -> list[OrgRepo]:
    from ..org import repos

    if args:
        out = []
        for a in args:
            r = repos.find(settings, root, a) or repos.from_argument(a, None)
            if root is not None and not r.is_url and Path(r.location) == root:
                r = repos.OrgRepo(repos.this_name(settings, root), r.location)  # this repository: [org] name
            out.append(r)
        return out
    configured = repos.configured(settings, root)
    if configured:
        return configured
    if root is not None:
        return [repos.OrgRepo(repos.this_name(settings, root), str(root))]
    raise OrgConfigError("no repository to index: none named and no [org.repos] configured",
                         "gitmem org index PATH_OR_URL…, or list them under [org.repos] (docs/org.md)")


def _this_repo_left_out(settings: OrgSettings, root: Path | None, targets: list[OrgRepo]) -> str:
    """The hint line when ``gitmem org index`` (no REPO) runs in a repository that has committed-folder memories
    but is not among the repositories of ``[org.repos]`` it indexes ("" otherwise). Its memories are not indexed:
    ``[org.repos]``, once set, is the whole list (a CI job indexing a fixed set must not pick up the repository
    it happens to run in)."""
    from ..layout import TEAM_MEMORIES
    from ..memfile import FILE_SUFFIX
    from ..org import repos as org_repos

    if root is None or not settings.repos:
        return ""
    here = root.resolve()
    name = org_repos.this_name(settings, root)
    for t in targets:
        if t.name == name or (not t.is_url and Path(t.location).resolve() == here):
            return ""
    folder = root / TEAM_MEMORIES
    if not folder.is_dir() or not any(p.suffix == FILE_SUFFIX for p in folder.iterdir()):
        return ""
    return (f"this repository ({name}) has memories but is not in [org.repos], so they were not indexed: add "
            f'{name} = "." under [org.repos] (docs/org.md), or run gitmem org index .')


@cli.group()
def org() -> None:
    """The organisation index: the memories of many repositories, searchable from each (``recall --org``).

    \b
    Example usage:
      gitmem org index                     # the repositories of [org.repos] (else this one)
      gitmem org index ../ledger git@github.com:team/billing.git
      gitmem org status
    """


@org.command("index")
@click.argument("repos", nargs=-1, metavar="[REPO]…")
@click.option("--full", is_flag=True, help="Re-read and rewrite every memory of the repositories, not only what "
              "changed (e.g. after upgrading gitmem: rows an older version wrote are brought up to date).")
@click.option("--rebuild", is_flag=True, help="Drop the index's tables first and index every repository again "
              "from git (a damaged index: its data files gone).")
@json_option
def org_index(repos: tuple[str, ...], full: bool, rebuild: bool) -> None:
    """Index the committed memories of repositories into [org] uri (incremental).

    REPO: a name of [org.repos], a path or a git URL (default: every repository of [org.repos], else this one).
    Reads each repository's ref ([org] ref, else its default branch) with git, no work tree needed; a URL is
    mirrored under ~/.cache/gitmem/org. Exits 1 when a repository failed, 2 on a configuration or store error
    (or a name the index holds for another repository).
    """
    extras.require("gitmem org index")
    from ..config import max_chars
    from ..org.index import drop, index, repo_line
    from ..rank.render import inline, visible

    settings, root, embeddings = org_context()
    targets = _targets(settings, root, repos)
    left_out = _this_repo_left_out(settings, root, targets) if not repos else ""

    def progress(line: str) -> None:
        if not State.json:
            click.echo(visible(line), err=True)

    if rebuild:
        drop(settings)
    try:
        rep = index(settings, targets, progress=progress, embeddings=embeddings, full=full or rebuild,
                    max_chars=max_chars(_project_config()))
    except ConfigError as e:
        raise OrgConfigError(e.message, e.hint) from e

    def text() -> str:
        lines = []
        for r in rep.repos:
            lines.append(visible(repo_line(r)))
            named = [("invalid", e) for e in r.errors] + [("cut", p) for p in r.truncated]
            lines += [f"    {what}: {visible(inline(e))}" for what, e in named[:NAMED_FILES]]
            if len(named) > NAMED_FILES:
                lines.append(f"    … and {len(named) - NAMED_FILES} more (--json lists them all)")
        n = {s: sum(1 for r in rep.repos if r.state == s) for s in ("indexed", "skipped", "failed")}
        count = f"{len(rep.repos)} repositor{'y' if len(rep.repos) == 1 else 'ies'}"
        lines.append(f"{count}: {n['indexed']} indexed, {n['skipped']} up to date, "
                     f"{n['failed']} failed; rows +{rep.added} ~{rep.updated} -{rep.deleted} in {rep.seconds:.1f} s")
        return "\n".join(lines)

    _out(shapes.org_index_json(rep), text)
    if left_out and not State.json:
        click.echo(f"hint: {left_out}", err=True)
    for r in rep.failed:
        if r.hint and not State.json:
            click.echo(visible(f"hint: {r.repo}: {r.hint}"), err=True)
    if rep.failed:
        sys.exit(EXIT_ERROR)


def _project_config() -> dict[str, Any]:
    """The project's config when run in a repository, else {} (for ``[memory] max_chars``)."""
    from ..errors import NotARepository
    from .base import _store

    try:
        return _store(require=False).config
    except (NotARepository, ConfigError):
        return {}


@org.command("remove")
@click.argument("name")
@json_option
def org_remove(name: str) -> None:
    """Remove repository NAME from the organisation index: its memories and its row (exit 1 when not indexed).

    Its memory files are untouched; `gitmem org index` indexes it again if it is still in [org.repos].
    """
    extras.require("gitmem org remove")
    from ..org.index import remove

    settings, _, _ = org_context()
    rows = remove(settings, name)
    doc = shapes.org_remove_json(settings.uri, name, rows)
    if rows is None:
        _out(doc, lambda: f"gitmem: no repository {name} in the organisation index at {settings.uri} "
                          "(gitmem org status lists them)")
        sys.exit(EXIT_ERROR)
    _out(doc, lambda: f"gitmem: removed {name} from {settings.uri} ({rows} memor{'y' if rows == 1 else 'ies'})")


@org.command("status")
@json_option
def org_status() -> None:
    """The repositories of the organisation index: the commit indexed, their ref's commit now, their rows.

    The current commit of a URL is its mirror's as last fetched (``gitmem org index`` fetches).
    """
    extras.require("gitmem org status")
    from ..org import repos as org_repos
    from ..org.index import states

    settings, root, _ = org_context()
    indexed = {s.repo: s for s in states(settings)}
    configured = {r.name: r for r in org_repos.configured(settings, root)}
    rows = []
    for name in [*configured, *sorted(set(indexed) - set(configured))]:
        st = indexed.get(name)
        r = configured.get(name) or (org_repos.OrgRepo(name, st.location) if st and st.location else None)
        current, note = "", ""
        if r is None:
            note = "location unknown"
        elif r.is_url and not (org_repos.mirror_dir(r.location) / "HEAD").is_file():
            note = "not mirrored here (gitmem org index fetches it)"
        else:
            try:
                opened = org_repos.open_repo(r, fetch=False)
                try:
                    current = org_repos.ref_commit(opened, settings.ref)
                finally:
                    opened.close()
            except GitmemError as e:
                note = e.message
        rows.append(shapes.org_repo_status_json(st, name, org_repos.safe_location(r.location) if r else "", current,
                                                org_repos.strip_userinfo(note)))
    doc = shapes.org_status_json(settings.uri, rows)

    def text() -> str:
        if not rows:
            return f"{settings.uri}: nothing indexed yet (gitmem org index)"
        lines = []
        for row in rows:
            where = f"indexed {row['indexed'][:12] or '-'}, current {row['current'][:12] or '?'}"
            note = f"; {row['note']}" if row["note"] else ""
            lines.append(f"{row['repo']}: {row['state']} ({where}, {row['memories']} memories{note})")
        lines.append(f"{settings.uri}: {len(rows)} repositories, {doc['memories']} memories")
        return "\n".join(lines)

    _out(doc, text)


@org.command("check")
@click.option("--fetch", is_flag=True, help="Fetch the mirrors of repositories reached by URL first.")
@json_option
def org_check(fetch: bool) -> None:
    """Check every cross-repository anchor (REPO:PATH::SYMBOL) against its repository's ref.

    Exits 1 when one is not fresh (stale, moved, deleted) or could not be checked (its repository
    unreachable), so a CI job can gate on it. Results are recorded: the agents' hooks then warn about a
    stale one without running git in the other repository. Needs no [org] uri: only [org.repos].

    \b
    Example usage:
      gitmem org check
      gitmem org check --fetch --json
    """
    from ..org.xrepo import check
    from .base import _store

    rep = check(_store(), fetch=fetch)

    def text() -> str:
        if not rep.checks:
            return "gitmem: no memory has a cross-repository anchor"
        lines = [f"{c.status.value:9} {c.anchor.key}  {c.memory.id}  {c.memory.title}"
                 + (f"\n          — {c.reason}" if c.reason else "") for c in rep.checks]
        counts: dict[str, int] = {}
        for c in rep.not_fresh:
            counts[c.status.value] = counts.get(c.status.value, 0) + 1
        n = len(rep.checks)
        lines.append(f"{n} cross-repository anchor{'s' if n != 1 else ''}: "
                     + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) if counts else "all fresh"))
        return "\n".join(lines)

    _out(shapes.org_check_json(rep), text)
    if rep.not_fresh:
        sys.exit(EXIT_ERROR)  # (click's Exit is swallowed by cli.main's standalone_mode=False: returns 0)


def recall_org(query: str, limit: int, repo: tuple[str, ...]) -> None:
    """``gitmem recall --org QUERY [--repo NAME]…``: the organisation index's hits, labelled with their repository
    and status (text or ``--json``: ``shapes.org_hit_json``)."""
    extras.require("gitmem recall --org")
    from ..org.search import search

    settings, _, embeddings = org_context()
    hits = search(settings, query, limit=limit, repos=list(repo) or None, embeddings=embeddings)
    _out([shapes.org_hit_json(h) for h in hits], lambda: "\n".join(_hit_line(h) for h in hits) or "no matches")


def _hit_line(h: OrgHit) -> str:
    """One hit for a person's terminal: every field made one line with its escape sequences visible
    (``render.inline``; the title at most ``render.MAX_ORG_TITLE_CHARS``), the reason as the agents get it
    (``render.org_reason_shown``: another repository's text that is not gitmem's reason withheld)."""
    from ..rank.render import MAX_ORG_TITLE_CHARS, cap_text, inline, org_reason_shown, visible

    def one(text: str) -> str:
        return visible(inline(text))

    status = one(h.status) if h.status == "fresh" else f"⚠ {one(h.status)}"
    trust = f" ({one(h.trust)})" if h.trust else ""
    line = (f"{one(h.repo)}:{one(h.id)}  {h.score:.4f}  {status:9} [{one(h.type)}] "
            f"{one(cap_text(h.title, MAX_ORG_TITLE_CHARS))}{trust}")
    reason = org_reason_shown(h.reason)
    return line + (f"\n    {one(h.status)}: {one(reason)}" if reason and h.status != "fresh" else "")
