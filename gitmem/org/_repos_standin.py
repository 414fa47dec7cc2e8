"""TEMPORARY stand-in for ``gitmem.org.repos`` (branch i21-org) with the signatures of ISSUE21.md: local work
trees only. Deleted once i21-org is merged."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .. import git
from ..errors import GitmemError
from .settings import OrgSettings


@dataclass(frozen=True)
class OrgRepo:
    name: str
    location: str


def _is_url(location: str) -> bool:
    return "://" in location or (":" in location and "@" in location.split(":", 1)[0])


def configured(settings: OrgSettings, root: Path | None) -> list[OrgRepo]:
    out = []
    for name, loc in settings.repos.items():
        if not _is_url(loc) and not os.path.isabs(loc) and root is not None:
            loc = str((root / loc).resolve())
        out.append(OrgRepo(name, loc))
    return out


def find(settings: OrgSettings, root: Path | None, name: str) -> OrgRepo | None:
    return next((r for r in configured(settings, root) if r.name == name), None)


def open_repo(repo: OrgRepo, *, fetch: bool) -> git.Repo:
    if _is_url(repo.location):
        raise GitmemError(f"{repo.name}: no mirror of {repo.location}", "gitmem org check --fetch")
    try:
        return git.Repo(repo.location)
    except GitmemError as e:
        raise GitmemError(f"{repo.name}: {e.message}", f"check [org.repos] {repo.name}") from None


def ref_commit(repo: git.Repo, ref: str) -> str:
    sha = repo.resolve(ref or "HEAD")
    return sha
