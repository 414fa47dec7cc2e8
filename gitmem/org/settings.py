"""The organisation and personal scopes' settings of one repository (issue 21), stdlib only.

Owns: reading ``[org]`` (with ``[org.repos]``) and ``[personal]`` from a repository's config.toml and the user's
(``config.scopes`` merges them: the project's ``[org]`` wins, the user's ``[personal]`` wins) into
``OrgSettings`` and ``PersonalSettings``, each value falling back to its default when missing or invalid (the hooks
read config unvalidated). Must not import anything outside the standard library at module level (the hooks use it).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

#: Default token budgets of org memories given unasked (``[org] session_budget`` / ``prompt_budget``) and of
#: personal ones (``[personal] ...``): a fifth and a third of the project's own (``config.DEFAULT_BUDGETS``
#: 1500 / 600): another team's or the person's notes add to the project's, they never crowd them out.
DEFAULT_ORG_SESSION_BUDGET = 300
DEFAULT_ORG_PROMPT_BUDGET = 200
DEFAULT_PERSONAL_SESSION_BUDGET = 300
DEFAULT_PERSONAL_PROMPT_BUDGET = 200
#: Region when neither ``[org] region`` nor ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` says one (the AWS SDKs' own
#: fallback; S3-compatible servers such as Ceph RGW accept it).
DEFAULT_REGION = "us-east-1"
#: A repository's name in the organisation: what ``REPO:PATH::SYMBOL`` anchors and the index's ``repo`` column use.
REPO_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True)
class OrgSettings:
    """``[org]`` as used. ``uri`` "" means no organisation index is configured (``configured`` False).

    Attributes:
        uri: ``s3://BUCKET/PREFIX`` or a local folder (a path or ``file://`` URI).
        endpoint: the S3 endpoint URL ("" = ``AWS_ENDPOINT_URL`` / ``AWS_ENDPOINT_URL_S3``, else AWS's own).
        region: the S3 region (``[org] region``, else ``AWS_REGION`` / ``AWS_DEFAULT_REGION``, else
            ``DEFAULT_REGION``).
        ref: the ref indexed in each repository ("" = its default branch).
        name: this repository's name in the organisation ("" = unknown: ``repos.this_name`` derives one).
        inject: whether the hooks give org memories unasked (off by default).
        session_budget, prompt_budget: their token budgets (tokens ≈ characters / 4).
        session_timeout: seconds a session start waits for them (``config.DEFAULT_ORG_SESSION_TIMEOUT_S``).
        repos: repository name → location (a local path, relative to the repository holding the config, or a git
            URL), in config order.
    """

    uri: str = ""
    endpoint: str = ""
    region: str = DEFAULT_REGION
    ref: str = ""
    name: str = ""
    inject: bool = False
    session_budget: int = DEFAULT_ORG_SESSION_BUDGET
    prompt_budget: int = DEFAULT_ORG_PROMPT_BUDGET
    session_timeout: float = 5.0  # config.DEFAULT_ORG_SESSION_TIMEOUT_S (config is not imported at module level)
    repos: dict[str, str] = field(default_factory=dict)

    @property
    def configured(self) -> bool:
        return bool(self.uri)

    @property
    def is_s3(self) -> bool:
        return self.uri.startswith("s3://")


@dataclass(frozen=True)
class PersonalSettings:
    """``[personal]`` as used: whether personal memories are given in this repository, and their budgets."""

    enabled: bool = True
    session_budget: int = DEFAULT_PERSONAL_SESSION_BUDGET
    prompt_budget: int = DEFAULT_PERSONAL_PROMPT_BUDGET


def _budget(section: dict[str, Any], key: str, default: int) -> int:
    v = section.get(key, default)
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 1 else default


def _text(section: dict[str, Any], key: str) -> str:
    v = section.get(key, "")
    return v.strip() if isinstance(v, str) else ""


def org_settings(scopes: dict[str, Any], env: Mapping[str, str] | None = None) -> OrgSettings:
    """``OrgSettings`` of ``scopes`` (``config.scopes``'s result) and the environment (``env``, default
    ``os.environ``, read for the region only; the endpoint and credentials are read where the store is opened)."""
    from ..config import DEFAULT_ORG_SESSION_TIMEOUT_S, is_org_timeout

    environ: Mapping[str, str] = os.environ if env is None else env
    org = scopes.get("org")
    org = org if isinstance(org, dict) else {}
    repos = org.get("repos")
    repos = {k: v for k, v in repos.items() if isinstance(k, str) and REPO_NAME.match(k) and isinstance(v, str) and v} \
        if isinstance(repos, dict) else {}
    region = (_text(org, "region") or environ.get("AWS_REGION", "") or environ.get("AWS_DEFAULT_REGION", "")
              or DEFAULT_REGION)
    name = _text(org, "name")
    return OrgSettings(uri=_text(org, "uri"), endpoint=_text(org, "endpoint"), region=region, ref=_text(org, "ref"),
                       name=name if REPO_NAME.match(name) else "", inject=org.get("inject") is True,
                       session_budget=_budget(org, "session_budget", DEFAULT_ORG_SESSION_BUDGET),
                       prompt_budget=_budget(org, "prompt_budget", DEFAULT_ORG_PROMPT_BUDGET),
                       session_timeout=float(t) if isinstance(t := org.get("session_timeout"), (int, float))
                       and is_org_timeout(t) else DEFAULT_ORG_SESSION_TIMEOUT_S, repos=repos)


def personal_settings(scopes: dict[str, Any]) -> PersonalSettings:
    """``PersonalSettings`` of ``scopes`` (``config.scopes``'s result)."""
    p = scopes.get("personal")
    p = p if isinstance(p, dict) else {}
    return PersonalSettings(enabled=p.get("enabled", True) is not False,
                            session_budget=_budget(p, "session_budget", DEFAULT_PERSONAL_SESSION_BUDGET),
                            prompt_budget=_budget(p, "prompt_budget", DEFAULT_PERSONAL_PROMPT_BUDGET))


def of_config(project: dict[str, Any], user: dict[str, Any]) -> tuple[OrgSettings, PersonalSettings]:
    """Both settings of a repository from its config (``project``: ``config.load``'s or ``read_cached``'s) and the
    user's (``config.load_user``'s or ``read_user_cached``'s)."""
    from ..config import scopes

    s = scopes(project, user)
    return org_settings(s), personal_settings(s)
