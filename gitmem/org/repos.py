"""TEMPORARY stand-in for i21-org's ``gitmem.org.repos`` (``this_name`` only); removed at the merge."""

from __future__ import annotations

from pathlib import Path

from .settings import OrgSettings


def this_name(settings: OrgSettings, root: Path) -> str:
    return settings.name or root.name
