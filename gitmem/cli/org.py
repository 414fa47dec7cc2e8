"""The organisation index: ``gitmem org index [REPO…]``, ``gitmem org status``; and ``recall --org``'s search.

Exit codes of ``org index``: 0 every repository indexed or up to date; 1 some repository failed (the others were
indexed); 2 a configuration or store error (nothing indexed; one line says why, and what to do).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .. import shapes
from ..errors import ConfigError, GitmemError
from .base import EXIT_ERROR, State, _out, _warn, cli, json_option

if TYPE_CHECKING:
    from ..org.repos import OrgRepo
    from ..org.search import OrgHit
    from ..org.settings import OrgSettings

#: The one line said when no organisation index is configured.
NOT_CONFIGURED = ('no organisation index is configured: set [org] uri = "s3://BUCKET/PREFIX" (or a folder) in '
                  ".gitmem/config.toml or ~/.config/gitmem/config.toml (docs/org.md)")


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
@json_option
def org_index(repos: tuple[str, ...]) -> None:
    """Index the committed memories of repositories into [org] uri (incremental).

    REPO: a name of [org.repos], a path or a git URL (default: every repository of [org.repos], else this one).
    Reads each repository's ref ([org] ref, else its default branch) with git, no work tree needed; a URL is
    mirrored under ~/.cache/gitmem/org. Exits 1 when a repository failed, 2 on a configuration or store error.
    """
    from ..org.index import index, repo_line

    settings, root, embeddings = org_context()
    targets = _targets(settings, root, repos)

    def progress(line: str) -> None:
        if not State.json:
            click.echo(line, err=True)

    try:
        rep = index(settings, targets, progress=progress, embeddings=embeddings)
    except ConfigError as e:
        raise OrgConfigError(e.message, e.hint) from e

    def text() -> str:
        lines = [repo_line(r) for r in rep.repos]
        n = {s: sum(1 for r in rep.repos if r.state == s) for s in ("indexed", "skipped", "failed")}
        lines.append(f"{len(rep.repos)} repositories: {n['indexed']} indexed, {n['skipped']} up to date, "
                     f"{n['failed']} failed; rows +{rep.added} ~{rep.updated} -{rep.deleted} in {rep.seconds:.1f} s")
        return "\n".join(lines)

    _out(shapes.org_index_json(rep), text)
    for r in rep.failed:
        if r.hint and not State.json:
            click.echo(f"hint: {r.repo}: {r.hint}", err=True)
    if rep.failed:
        sys.exit(EXIT_ERROR)


@org.command("status")
@json_option
def org_status() -> None:
    """The repositories of the organisation index: the commit indexed, their ref's commit now, their rows.

    The current commit of a URL is its mirror's as last fetched (``gitmem org index`` fetches).
    """
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
        rows.append(shapes.org_repo_status_json(st, name, r.location if r else "", current, note))
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


def recall_org(query: str, limit: int, repo: tuple[str, ...]) -> None:
    """``gitmem recall --org QUERY [--repo NAME]…``: the organisation index's hits, labelled with their repository
    and status (text or ``--json``: ``shapes.org_hit_json``)."""
    from ..org.search import search

    settings, _, embeddings = org_context()
    hits = search(settings, query, limit=limit, repos=list(repo) or None, embeddings=embeddings)
    _out([shapes.org_hit_json(h) for h in hits], lambda: "\n".join(_hit_line(h) for h in hits) or "no matches")


def _hit_line(h: OrgHit) -> str:
    status = h.status if h.status == "fresh" else f"⚠ {h.status}"
    trust = f" ({h.trust})" if h.trust else ""
    line = f"{h.repo}:{h.id}  {h.score:.4f}  {status:9} [{h.type}] {h.title}{trust}"
    return line + (f"\n    {h.status}: {h.reason}" if h.reason and h.status != "fresh" else "")
