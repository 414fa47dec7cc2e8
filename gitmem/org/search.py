"""TEMPORARY stand-in for i21-org's ``gitmem.org.search`` (the signature of ISSUE21.md); removed at the merge."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .settings import OrgSettings


@dataclass(frozen=True)
class OrgHit:
    repo: str
    id: str
    title: str
    body: str
    type: str
    status: str
    reason: str
    trust: str
    anchors: tuple[str, ...]
    score: float
    commit: str


def search(settings: OrgSettings, query: str, *, limit: int = 10, repos: Sequence[str] | None = None,
           exclude: Sequence[str] = ()) -> list[OrgHit]:
    raise NotImplementedError("i21-org")
