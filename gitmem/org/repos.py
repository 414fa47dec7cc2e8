"""The organisation's repositories: which ones, where they are, and the commit of each that is indexed.

Owns: ``OrgRepo`` (a repository's name in the organisation and its location), the set configured in
``[org.repos]`` or named on the command line, opening one for reading committed trees (a local repository as it
is, bare or not; a git URL as a bare mirror under ``layout.org_cache_dir()``, cloned once and fetched when asked),
and the commit of its ref that is indexed. All git goes through ``gitmem.git``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import git
from ..errors import GitError, GitmemError, NotARepository
from ..infra import file_lock
from ..layout import find_root, org_cache_dir
from .settings import REPO_NAME, OrgSettings

#: A location that is a git URL rather than a local path: ``scheme://…`` or scp-like ``user@host:path``.
_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[^/\s:]+@[^/\s:]+:)")
#: How long an indexer waits for another process cloning or fetching the same mirror (seconds): a clone of a
#: large repository over a slow link takes minutes.
MIRROR_LOCK_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class OrgRepo:
    """One repository of the organisation.

    Attributes:
        name: its name in the organisation (``settings.REPO_NAME``): the index's ``repo`` column and the REPO of
            ``REPO:PATH::SYMBOL`` anchors.
        location: an absolute local path (a work tree or a bare repository) or a git URL.
    """

    name: str
    location: str

    @property
    def is_url(self) -> bool:
        """Whether ``location`` is a git URL (mirrored) rather than a local path."""
        return is_url(self.location)


def is_url(location: str) -> bool:
    """Whether ``location`` is a git URL (``https://``, ``ssh://``, ``file://``, ``git@host:path``), not a path."""
    return bool(_URL.match(location))


#: The userinfo of a URL (``scheme://USER[:PASSWORD]@``), anywhere in a text.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]+@")


def strip_userinfo(text: str) -> str:
    """``text`` with the userinfo of every ``scheme://user:token@host`` URL in it replaced by ``***``
    (``https://***@host/ledger.git``): what the ``repos`` table stores and what lines print. An scp-like
    ``git@host:path`` has no secret and is kept."""
    return _USERINFO.sub(lambda m: f"{m.group('scheme')}***@", text)


def safe_location(location: str) -> str:
    """``location`` as stored in the shared ``repos`` table and printed: a URL without its credentials
    (``strip_userinfo``); a path as it is."""
    return strip_userinfo(location) if is_url(location) else location


def _absolute(location: str, root: Path | None) -> str:
    if is_url(location):
        return location
    p = Path(os.path.expanduser(location))
    if not p.is_absolute():
        p = (root or Path.cwd()) / p
    return os.path.normpath(p)


def name_of(location: str) -> str:
    """The repository name a location suggests: its last path part without ``.git`` (``git@h:team/billing.git``
    → ``billing``), with characters ``REPO_NAME`` refuses replaced by ``-``; "" when nothing is left."""
    last = re.split(r"[/:\\]", location.rstrip("/\\"))[-1]
    last = last.removesuffix(".git") or last
    name = re.sub(r"[^A-Za-z0-9._-]", "-", last).lstrip("._-")[:100]
    return name if REPO_NAME.match(name) else ""


def configured(settings: OrgSettings, root: Path | None) -> list[OrgRepo]:
    """The repositories of ``[org.repos]`` in config order, local paths made absolute (relative ones are relative
    to ``root``, the repository holding the config; the current folder when None)."""
    return [OrgRepo(name, _absolute(loc, root)) for name, loc in settings.repos.items()]


def from_argument(arg: str, root: Path | None) -> OrgRepo:
    """The repository ``gitmem org index REPO`` names: a path (relative to the current folder) or a git URL;
    named by the last part of its path minus ``.git`` (a folder inside a work tree stands for that work tree:
    ``.`` in ``svc/src`` is ``svc``).

    Raises:
        GitmemError: no repository name can be made of it.
    """
    loc = arg if is_url(arg) else os.path.normpath(os.path.abspath(os.path.expanduser(arg)))
    bare = os.path.isfile(os.path.join(loc, "HEAD")) and os.path.isdir(os.path.join(loc, "objects"))
    if not is_url(loc) and os.path.isdir(loc) and not bare:
        top = find_root(Path(loc))  # a folder inside a work tree names that work tree
        if top is not None:
            loc = os.path.normpath(top)
    name = name_of(loc)
    if not name:
        raise GitmemError(f"no repository name can be made of {arg!r}",
                          "name it in [org.repos] (name = \"PATH or URL\") and run gitmem org index NAME")
    return OrgRepo(name, loc)


def find(settings: OrgSettings, root: Path | None, name: str) -> OrgRepo | None:
    """The configured repository called ``name`` (``[org.repos]``), or None."""
    return next((r for r in configured(settings, root) if r.name == name), None)


def this_name(settings: OrgSettings, root: Path) -> str:
    """This repository's name in the organisation: ``[org] name``, else the last part of its ``origin`` URL,
    else its folder's name ("" when none of them makes a valid name)."""
    if settings.name:
        return settings.name
    try:
        url = git.Repo(root, bare_ok=True).local_config("remote.origin.url")
    except GitmemError:
        url = ""
    return (name_of(url) if url else "") or name_of(root.resolve().name)


def mirror_dir(url: str) -> Path:
    """The bare mirror of ``url`` under ``layout.org_cache_dir()``: ``<name>-<12 hex of sha256(url)>.git``
    (the name for a person reading the folder, the hash so two URLs never share one)."""
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]
    return org_cache_dir() / f"{name_of(url) or 'repo'}-{digest}.git"


def open_repo(repo: OrgRepo, *, fetch: bool) -> git.Repo:
    """The git repository ``repo`` is read from.

    A local path: that repository as it is (a work tree or a bare repository; never fetched: it is what the
    person has). A URL: its bare mirror (``mirror_dir``), cloned with ``git clone --mirror`` the first time and
    updated with a fetch when ``fetch`` is True. Clones and fetches of one mirror are serialised by a lock file
    beside it (several indexers at once); a clone is made beside and renamed into place, so a half-made mirror
    is never seen.

    Raises:
        GitmemError: the location is not a repository or the URL is unreachable (one line, and what to do).
    """
    if not repo.is_url:
        if os.path.exists(repo.location) and not os.path.isdir(repo.location):
            raise GitmemError(f"{repo.name}: {repo.location} is not a git repository (a file)",
                              "give the path of a clone, or its URL ([org.repos] or gitmem org index PATH)")
        if not os.path.isdir(repo.location):
            raise GitmemError(f"{repo.name}: {repo.location} does not exist",
                              "give the path of a clone, or its URL ([org.repos] or gitmem org index PATH)")
        try:
            return git.Repo(repo.location, bare_ok=True)
        except NotARepository as e:
            raise GitmemError(f"{repo.name}: {repo.location} is not a git repository",
                              "give the path of a clone, or its URL ([org.repos] or gitmem org index PATH)") from e
    dest = mirror_dir(repo.location)
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        with file_lock(dest.with_name(dest.name + ".lock"), timeout_s=MIRROR_LOCK_TIMEOUT_S):
            if not (dest / "HEAD").is_file():
                tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", suffix=".tmp", dir=dest.parent))
                try:
                    git.clone_mirror(repo.location, tmp / "m.git")
                    if dest.exists():
                        shutil.rmtree(dest)
                    os.replace(tmp / "m.git", dest)
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
                fetch = False
            opened = git.Repo(dest, bare_ok=True)
            if fetch:
                opened.fetch_mirror()
            return opened
    except GitError as e:
        raise GitmemError(strip_userinfo(f"{repo.name}: cannot {'fetch' if dest.exists() else 'clone'} "
                                         f"{repo.location}: {e.message}"),
                          "check the URL and that git can reach it here (git ls-remote URL); credentials come from "
                          "git's own (ssh agent, credential helper)") from e
    except TimeoutError as e:
        raise GitmemError(f"{repo.name}: another process has been updating {dest} for "
                          f"{MIRROR_LOCK_TIMEOUT_S:.0f} s", "wait for it: the lock (an flock on "
                          f"{dest}.lock) is released when that process ends, even killed") from e


def ref_commit(repo: git.Repo, ref: str) -> str:
    """The full SHA of the commit indexed in ``repo``: ``ref`` (``[org] ref``: a branch, tag or commit), or when
    ``ref`` is "" the default branch: HEAD of a bare repository or mirror, else ``origin/HEAD`` of a work tree
    when it has one, else its HEAD.

    Raises:
        GitmemError: the ref names no commit (or the repository has none).
    """
    if ref:
        for name in (ref, f"origin/{ref}", f"refs/remotes/origin/{ref}"):
            try:
                return repo.resolve(name)
            except GitError:
                continue
        raise GitmemError(f"{repo.root}: no commit at ref {ref!r}",
                          "set [org] ref to a branch or tag every repository has, or leave it empty for the "
                          "default branch")
    names = ("HEAD",) if repo.is_bare else ("origin/HEAD", "HEAD")
    for name in names:
        try:
            return repo.resolve(name)
        except GitError:
            continue
    raise GitmemError(f"{repo.root}: the repository has no commit yet", "commit something first, or leave it out")
