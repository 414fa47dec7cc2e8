"""The one place that talks to git: the ``git`` command's plumbing, machine formats only.

Answers questions about a repository: where it is, blobs at a revision, which
files changed between two revisions (with git's rename detection), which
commits touched a path, the hooks directory git will run. Functions are named
for the answer, not the git command. Every path in and out is a repo-relative
POSIX path. Every failure becomes a ``GitError`` (or ``NotARepository``).

Objects (blobs, commits, what a revision name points at) are read through one
``git cat-file --batch`` process per ``Repo`` (``_ObjectReader``: no process per
blob); everything else runs ``git`` once per question with ``-z`` output where
paths come back. No GitPython: importing it cost the post-commit hook ~85 ms.

Must not import: lancedb, tree-sitter, anything from ``gitmem.code``.
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import stat
import subprocess
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import IO

from . import layout
from .errors import AnchorError, GitError, MissingObject, NotARepository
from .layout import GITMEM_DIR, find_root

#: Seconds a ``Repo`` may spend, in all, fetching objects a partial clone lacks from its promisor remote (one
#: failed fetch ends fetching for that ``Repo``); 0: never fetch (``no_fetching``: the git hooks).
FETCH_SECONDS = 10.0

#: Fetches of one read (a treeless clone lacks each tree on the way to a file's blob).
MAX_FETCHES_PER_READ = 16

def no_fetching() -> None:
    """From now on, in this process, never fetch a missing object (a partial clone's): what is missing is said."""
    global FETCH_SECONDS
    FETCH_SECONDS = 0.0


def _end_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc`` and its process group (started with ``start_new_session``), and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


#: Sentinel revision meaning "the working tree" (files on disk, staged or not).
WORKTREE = None

#: Rename detection uses git's default similarity threshold (50%), as `git diff -M`.


@dataclass(frozen=True)
class FileChange:
    """One file changed between two revisions.

    Attributes:
        status: git's letter: A (added), D (deleted), M (modified), R (renamed),
            C (copied), T (type change).
        old_path: path before (None when added).
        new_path: path after (None when deleted).
    """

    status: str
    old_path: str | None
    new_path: str | None


#: What git says when git-lfs's filter is in its config but the program cannot run (``git-lfs filter-process: 1:
#: git-lfs: not found``, ``clean filter 'lfs' failed``, ``initialization for subprocess 'git-lfs …' failed``).
_LFS_MISSING = ("git-lfs: not found", "git-lfs: command not found", "filter 'lfs' failed", "subprocess 'git-lfs")


def _git_error(args: tuple[str, ...], code: int | None, stderr: bytes) -> GitError:
    """A ``GitError`` from a failed git command: its last line of stderr in the message, all of it kept; when
    git failed because git-lfs's filter is configured but git-lfs cannot run, that, and what to do."""
    text = stderr.decode("utf-8", "replace").strip()
    last = text.splitlines()[-1] if text else f"exit {code}"
    if any(m in text for m in _LFS_MISSING):
        return GitError(f"git {' '.join(args[:3])} failed: git's config runs git-lfs's filter (filter.lfs.*) "
                        "but git-lfs cannot run",
                        "install git-lfs (Debian: apt-get install git-lfs), or take its filter out of git's config "
                        "(git config --show-origin --get-regexp filter.lfs says where it is set)",
                        argv=list(args), code=code, stderr=text + "\n")
    return GitError(f"git {' '.join(args[:3])} failed: {last}", argv=list(args), code=code,
                    stderr=text + "\n" if text else "")


def _scrubbed_env() -> dict[str, str]:
    """The environment without the GIT_* variables a hook inherits.

    Git runs hooks with GIT_DIR / GIT_INDEX_FILE etc. set; they would point our
    own git commands at the wrong place (the pre-commit lesson, STYLE.md §1.5).
    GIT_CONFIG_* and identity variables are kept.
    """
    keep = {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
            "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
            "GIT_CONFIG_NOSYSTEM", "GIT_TEMPLATE_DIR", "GIT_CEILING_DIRECTORIES"}
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in keep}


def scrub_git_env() -> None:
    """Drop inherited GIT_* variables from ``os.environ`` (call first thing in a hook)."""
    for k in list(os.environ):
        if k.startswith("GIT_") and k not in _scrubbed_env():
            del os.environ[k]


#: git's words when a partial clone lacks an object it was promised and could not fetch it (promisor-remote.c:
#: ``die(_("could not fetch %s from promisor remote"))``), the same in every git since 2.20.
_PROMISED_MISSING = re.compile(rb"could not fetch ([0-9a-f]{40}(?:[0-9a-f]{24})?) from promisor remote")

#: Reads never fetch lazily (git would fetch a missing promised object inside ``cat-file``, ``diff``, ``log``,
#: unbounded, once per object, and die when the remote cannot be reached): ``GIT_NO_LAZY_FETCH`` (git 2.39.4,
#: 2.44) and, for a git that does not know it, no transport allowed (``protocol.allow``, git-config(1)). gitmem
#: fetches a missing object itself, bounded (``Repo.fetch_seconds``).
_NO_LAZY_ENV = {"GIT_NO_LAZY_FETCH": "1"}
_NO_LAZY_ARGS = ("-c", "protocol.allow=never")

#: A full object id (SHA-1 or SHA-256), the only revisions whose file list ``Repo.files_at`` keeps.
_FULL_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
#: File lists of commits kept per process (``Repo.files_at``): a warm process serving a few repositories asks
#: about their HEADs; a list of 100,000 paths is ~10 MB, so only the last few are kept.
FILES_AT_KEPT = 8
_FILES_AT: OrderedDict[tuple[str, str | None, bool], tuple[str, ...]] = OrderedDict()
_FILES_AT_LOCK = threading.Lock()

#: The git commands that talk to a remote on purpose (run as they are: fetching is their job).
_NETWORK_COMMANDS = frozenset({"fetch", "push", "pull", "remote", "merge", "clone", "ls-remote"})


def promised_missing(stderr: bytes) -> str | None:
    """The id of the promised object git said it could not fetch in ``stderr``, None when it said no such thing."""
    m = _PROMISED_MISSING.search(stderr)
    return m.group(1).decode("ascii") if m else None


def _scratch_file() -> IO[bytes]:
    """An unnamed read-write file for a git process's stderr: a memory file on Linux (``os.memfd_create``), else
    ``tempfile.TemporaryFile`` (imported here: ``tempfile`` brings ``shutil``, ``random`` and the compression
    modules, 5-10 ms the commit hooks need not pay)."""
    if hasattr(os, "memfd_create"):
        return os.fdopen(os.memfd_create("gitmem-git-stderr", getattr(os, "MFD_CLOEXEC", 0)), "w+b")
    import tempfile
    return tempfile.TemporaryFile()


class _ObjectReader:
    """One ``git cat-file --batch`` process: the objects a name points at, read one after another.

    Protocol (git-cat-file(1), "BATCH OUTPUT"): a name per input line; the answer is
    ``<oid> SP <type> SP <size> LF <contents> LF``, or ``<name> SP missing LF``
    (``ambiguous`` for a short SHA of several objects). Names are resolved when asked:
    ``HEAD`` or a branch moved by a commit since the process started reads as it is now.
    Thread-safe (one request at a time); restarted after a fork or if git died.
    """

    def __init__(self, root: Path, env: dict[str, str] | None = None, *, follow: bool = False) -> None:
        """``env``: GIT_DIR/GIT_WORK_TREE of a work tree whose git folder is elsewhere. ``follow``:
        ``--follow-symlinks`` (links inside the tree read as what they lead to; a link leading nowhere answers
        ``symlink``, ``loop``, ``dangling`` or ``notdir`` as its type, its text as contents)."""
        self._root = root
        self._env = env or {}
        self._follow = follow
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._pid = 0

    def _start(self) -> subprocess.Popen[bytes]:
        try:
            # stderr to a file, read only when git died: a missing promised object is named there
            self._stderr = _scratch_file()
            proc = subprocess.Popen(["git", *_NO_LAZY_ARGS, "cat-file", "--batch",
                                     *(["--follow-symlinks"] if self._follow else [])], cwd=self._root,
                                    env={**_scrubbed_env(), **_NO_LAZY_ENV, **self._env}, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=self._stderr)
        except OSError as e:
            raise GitError(f"git cannot be run: {e}", "install git and put it on PATH",
                           argv=["cat-file", "--batch"]) from e
        self._proc, self._pid = proc, os.getpid()
        weakref.finalize(self, _close_process, proc)
        return proc

    def get(self, name: str) -> tuple[str, str, bytes] | None:
        """(object id, type, contents) of what ``name`` (any revision expression, ``rev:path`` included)
        points at; None when nothing does.

        Raises:
            MissingObject: a partial clone lacks an object this needs (the file's blob; a tree on the way).
            GitError: git cannot be run or stopped answering.
        """
        if "\n" in name or not name:  # the batch protocol is line-based: ask git on its own
            return self._one_off(name)
        with self._lock:
            for attempt in (1, 2):
                proc = self._proc if self._proc is not None and self._pid == os.getpid() else self._start()
                try:
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
                    proc.stdin.flush()
                    header = proc.stdout.readline()
                    if not header.endswith(b"\n"):
                        raise OSError("git cat-file --batch ended")
                    parts = header.split()
                    if self._follow and len(parts) == 2 and parts[0] in _NOT_FOLLOWED and parts[1].isdigit():
                        data = _read_exactly(proc.stdout, int(parts[1]))  # "<what> SP <size> LF <text> LF"
                        proc.stdout.read(1)
                        return "", parts[0].decode("ascii"), data
                    if len(parts) != 3 or parts[1] not in (b"blob", b"tree", b"commit", b"tag"):
                        return None  # "<name> missing" / "<name> ambiguous"
                    data = _read_exactly(proc.stdout, int(parts[2]))
                    proc.stdout.read(1)  # the LF after the contents
                    return parts[0].decode("ascii"), parts[1].decode("ascii"), data
                except (OSError, ValueError) as e:
                    self._proc = None
                    _close_process(proc)
                    oid = self._died_missing()
                    if oid is not None:
                        raise MissingObject(oid) from e
                    if attempt == 2:
                        raise GitError(f"git cat-file --batch failed: {e}", "check that git works in this "
                                       "repository (git status)", argv=["cat-file", "--batch"]) from e
        return None

    def _died_missing(self) -> str | None:
        """The promised object the process that just ended said it could not fetch (None: it ended otherwise)."""
        err, self._stderr = self._stderr, None
        if err is None:
            return None
        try:
            err.seek(0)
            return promised_missing(err.read())
        except (OSError, ValueError):
            return None
        finally:
            err.close()

    def _one_off(self, name: str) -> tuple[str, str, bytes] | None:
        env = {**_scrubbed_env(), **_NO_LAZY_ENV, **self._env}
        try:
            kind = subprocess.run(["git", *_NO_LAZY_ARGS, "cat-file", "-t", name], cwd=self._root, env=env,
                                  capture_output=True, stdin=subprocess.DEVNULL)
            if kind.returncode != 0:
                oid = promised_missing(kind.stderr)
                if oid is not None:
                    raise MissingObject(oid)
                return None
            t = kind.stdout.decode("ascii", "replace").strip()
            oid = subprocess.run(["git", "rev-parse", "--verify", "--quiet", name], cwd=self._root, env=env,
                                 capture_output=True, stdin=subprocess.DEVNULL).stdout.decode("ascii").strip()
            got = subprocess.run(["git", *_NO_LAZY_ARGS, "cat-file", t, name], cwd=self._root, env=env,
                                 capture_output=True, stdin=subprocess.DEVNULL)
            oid_missing = promised_missing(got.stderr) if got.returncode != 0 else None
            if oid_missing is not None:
                raise MissingObject(oid_missing)
            data = got.stdout
        except OSError as e:
            raise GitError(f"git cannot be run: {e}", "install git and put it on PATH") from e
        return oid, t, data

    def close(self) -> None:
        """End the process (it also ends when the ``Repo`` is collected, or with this process)."""
        with self._lock:
            if self._proc is not None:
                _close_process(self._proc)
                self._proc = None
            if self._stderr is not None:
                self._stderr.close()
                self._stderr = None


#: What ``git cat-file --batch --follow-symlinks`` answers for a link it cannot follow (git-cat-file(1)): one
#: leading outside the tree (``symlink``), a cycle (``loop``), to nothing (``dangling``), through a file (``notdir``).
_NOT_FOLLOWED = (b"symlink", b"loop", b"dangling", b"notdir")

#: How many symbolic links one path is followed through before it counts as a cycle (Linux's ``MAXSYMLINKS``).
MAX_LINK_HOPS = 40


@dataclass(frozen=True)
class Link:
    """Where a repo-relative path leads through symbolic links at one revision (``Repo.follow``).

    Attributes:
        path: the file (or folder) reached, repo-relative; None when the links lead nowhere in the repository.
        links: the links followed, in order (repo-relative paths of the links themselves).
        outside: the text of the link that leads outside the repository (``../x``, ``/etc/x``), else None.
        loop: the links form a cycle (or a chain longer than ``MAX_LINK_HOPS``).
        missing: the path reached that does not exist (the links lead to nothing: dangling), else None.
    """

    path: str | None
    links: tuple[str, ...]
    outside: str | None = None
    loop: bool = False
    missing: str | None = None

    @property
    def first(self) -> str:
        """The first link followed."""
        return self.links[0] if self.links else ""

    def why(self) -> str:
        """Why the links lead nowhere in the repository, one line without a subject (\"\" when they lead to a
        file): ``points outside the repository (../x)``, ``is a cycle of symbolic links (a -> b -> a)``, ``leads
        to x/b.py, which does not exist``."""
        if self.path is not None:
            return ""
        if self.outside is not None:
            return f"points outside the repository ({self.outside})"
        if self.loop:
            shown = [*self.links[:4], self.links[0] if len(self.links) <= 4 else "…"]
            return f"is a cycle of symbolic links ({' -> '.join(shown)})"
        return f"leads to {self.missing}, which does not exist"


def _read_exactly(stream: IO[bytes], n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise OSError(f"git cat-file --batch sent {len(data)} of {n} bytes")
    return data


def _close_process(proc: subprocess.Popen[bytes]) -> None:
    """Close a ``cat-file --batch`` process's stdin (it exits at end of input) and reap it."""
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=5)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        proc.kill()
    finally:
        if proc.stdout is not None:
            proc.stdout.close()


#: What to do in a bare repository (``git clone --bare``, a ``.git`` file leading to one): gitmem works in a work tree.
BARE_HINT = ("gitmem needs a work tree: run it in one of the repository's worktrees (git worktree list; "
             "git worktree add makes one), or with GIT_WORK_TREE set to the folder it tracks")


#: What to do outside any work tree gitmem can find (no ``GIT_DIR`` set): the setup whose git folder is elsewhere first,
#: since a ``git init`` there would nest a second repository in, say, the home folder.
NOT_A_REPOSITORY_HINT = ("run gitmem inside a git work tree; for one whose git folder is elsewhere (a dotfiles "
                         "repository used as `git --git-dir=DIR --work-tree=TREE`), run it once with GIT_DIR=DIR and "
                         "GIT_WORK_TREE=TREE exported; no repository at all yet: `git init`")


def _config_may_move_work_tree(git_dir: Path, common: Path) -> bool:
    """Whether a git folder's config may put its work tree elsewhere or make it bare: a line setting ``worktree``
    (``core.worktree``; a submodule's config names its work tree) or ``bare`` other than ``bare = false``. Only
    then is git asked (``core.worktree``, ``core.bare``): a byte search, not a reading of the config, so an
    ordinary clone runs no git for it. A linked worktree has only its own ``config.worktree`` to look at (the
    common config's ``core.bare`` and ``core.worktree`` are the main work tree's)."""
    paths = [git_dir / "config.worktree"] if git_dir != common else [common / "config", git_dir / "config.worktree"]
    for path in paths:
        try:
            data = path.read_bytes().lower()
        except OSError:
            continue
        if _MOVES_WORK_TREE.search(data):
            return True
    return False


#: A config line that may set ``core.worktree`` or ``core.bare`` (``bare = false`` aside): see
#: ``_config_may_move_work_tree``.
_MOVES_WORK_TREE = re.compile(rb"(?m)^[ \t]*(?:worktree\b|bare\b(?![ \t]*=[ \t]*false[ \t]*(?:[#;]|\r?$)))")


def _env_core_worktree(where: Path, git_dir_value: str) -> Path | None:
    """The work tree ``core.worktree`` of the repository ``GIT_DIR`` names gives (git's answer, noted for
    ``layout.git_dirs``), or None when it sets none."""
    git_dir = Path(os.path.abspath(git_dir_value))
    env = {layout.GIT_DIR_ENV: os.fspath(git_dir)}
    if not Repo._git_at(where, "config", "--get", "core.worktree", env=env).stdout.strip():
        return None
    top = Repo._git_at(where, "rev-parse", "--show-toplevel", env=env)
    text = top.stdout.decode("utf-8", "surrogateescape").rstrip("\n")
    if top.returncode != 0 or not text or not os.path.isdir(text):
        return None
    layout.note_work_tree(Path(text), git_dir)
    return Path(text)


def _env_refusal(where: Path, git_dir_value: str, tree_value: str) -> NotARepository:
    """Why gitmem cannot use the repository ``GIT_DIR`` names from folder ``where``, naming the setup (one line and
    what to do; never ``git init``: the repository exists)."""
    git_dir = os.path.abspath(git_dir_value)
    env = {layout.GIT_DIR_ENV: git_dir}
    check = Repo._git_at(where, "rev-parse", "--is-bare-repository", env=env)
    if check.returncode != 0:
        last = check.stderr.decode("utf-8", "replace").strip().splitlines()
        return NotARepository(f"GIT_DIR is set to {git_dir_value}, which is not a git repository"
                              + (f" (git: {last[-1]})" if last else ""),
                              "unset GIT_DIR, or set it to the repository's git folder")
    if tree_value:
        return NotARepository(f"GIT_DIR is set to {git_dir_value} with GIT_WORK_TREE {tree_value}, and {where} is "
                              "not in that work tree nor in a repository of its own",
                              "run gitmem inside the work tree, or unset GIT_DIR and GIT_WORK_TREE")
    if check.stdout.strip() == b"true":
        return NotARepository(f"GIT_DIR is set to {git_dir_value}, a bare repository, without GIT_WORK_TREE: gitmem "
                              "cannot tell which folder it tracks",
                              "export GIT_WORK_TREE=<the folder it tracks> as well (what `git --work-tree` does)")
    return NotARepository(f"GIT_DIR is set to {git_dir_value} without GIT_WORK_TREE or core.worktree: git takes the "
                          "current folder as the top of the work tree, and gitmem does not guess",
                          "export GIT_WORK_TREE=<top of the work tree> as well, or unset GIT_DIR")


class Repo:
    """A git work tree, opened from any path inside it.

    Raises:
        NotARepository: ``path`` is not inside a git work tree.
    """

    #: True for a bare repository opened with ``bare_ok`` (``root`` is then the repository folder itself, and
    #: only revisions can be read: there is no work tree).
    is_bare: bool = False

    def __init__(self, path: str | os.PathLike[str] = ".", *, bare_ok: bool = False) -> None:
        """``bare_ok``: also open a bare repository (a mirror the organisation index reads commits of).

        A work tree whose git folder is elsewhere is opened too (docs/git-setups/bare.md): named by ``GIT_DIR`` and
        ``GIT_WORK_TREE`` (the dotfiles setup), by ``core.worktree``, or recorded by an earlier run
        (``layout.work_trees_file``); every git command is then told both.
        """
        start = Path(os.path.abspath(path))
        where = start if start.is_dir() else start.parent
        env_git_dir = os.environ.get(layout.GIT_DIR_ENV, "")
        env_tree = os.environ.get(layout.GIT_WORK_TREE_ENV, "")
        # the nearest folder holding ``.git`` (a folder, or a file naming one: linked worktrees, submodules), or the
        # work tree GIT_DIR/GIT_WORK_TREE name, found as git finds it, without running git; git itself then says
        # what is wrong with it, if anything. Read before the variables go: a hook exported them for this repository
        found = find_root(where) if where.is_dir() else None
        env_located = bool(env_git_dir) and found is not None and layout.separate_git_dir(found) is not None
        # variables a git hook exported for another repository or index must go now
        scrub_git_env()
        if bare_ok and where.is_dir() and not (where / ".git").exists() and (where / "HEAD").is_file() \
                and (where / "objects").is_dir():
            found = None  # a bare repository inside some work tree is itself, not that work tree
        self._git_env: dict[str, str] = {}
        if found is None and env_git_dir and not env_tree and where.is_dir():
            found = _env_core_worktree(where, env_git_dir)  # GIT_DIR alone, its config naming the work tree
            env_located = found is not None
        if found is None and not env_git_dir and where.is_dir():
            # inside a git folder itself (``cd X/repo.git``) whose ``core.worktree`` names the work tree: git uses
            # that work tree from there, and so does gitmem (asked of git only here, where nothing was found)
            inside = self._git_at(where, "rev-parse", "--absolute-git-dir")
            text = inside.stdout.decode("utf-8", "surrogateescape").strip()
            if inside.returncode == 0 and text:
                found = _env_core_worktree(where, text)
                if found is not None:  # so that commands and agent hooks in the work tree find its git folder
                    layout.record_work_tree(found, Path(text))
        if found is None:
            if env_git_dir:
                raise _env_refusal(where, env_git_dir, env_tree)
            if where.is_dir() and self._git_at(where, "rev-parse", "--is-bare-repository").stdout.strip() == b"true":
                if bare_ok:
                    git_dir = self._git_at(where, "rev-parse", "--absolute-git-dir").stdout.decode().strip()
                    found = Path(git_dir or where)
                    self.is_bare = True
                else:
                    raise NotARepository(f"bare repository (no work tree): {os.fspath(path)}", BARE_HINT)
        if found is None:
            raise NotARepository(f"not a git repository: {os.fspath(path)}",
                                 NOT_A_REPOSITORY_HINT)
        if env_tree and not found.is_dir():
            raise NotARepository(f"GIT_WORK_TREE is set to {env_tree}, which is not a folder (GIT_DIR {env_git_dir})",
                                 "set GIT_WORK_TREE to the top of the work tree, or unset GIT_DIR and GIT_WORK_TREE")
        if not self.is_bare:
            found = self._work_tree(found, recorded_by_env=env_located)
        self.root = found.resolve()
        # the work tree as reached from ``path`` (through a symlink it differs from ``root``): ``relpath``
        self._tree_as_given = Path(os.path.normpath(found))
        self._objects = _ObjectReader(self.root, self._git_env)
        self._linked = _ObjectReader(self.root, self._git_env, follow=True)  # started by the first link question
        self._entries: dict[tuple[str, str], tuple[str, str]] = {}
        self._plain_links_at: tuple[tuple[int, int] | None, frozenset[str]] | None = None  # (index stamp, links)
        self._blob_cache: dict[tuple[str, str], bytes | None] = {}
        self._parents: dict[str, list[str]] = {}
        self._promisor: str | None = None
        #: seconds this ``Repo`` may spend fetching objects a partial clone lacks (0: never fetch)
        self.fetch_seconds = FETCH_SECONDS
        self._fetch_spent = 0.0
        self._fetch_failed: str | None = None
        self._fetched: set[str] = set()

    def _work_tree(self, found: Path, *, recorded_by_env: bool) -> Path:
        """The work tree to use for ``found`` (what ``find_root`` gave), ``self._git_env`` set when its git folder
        is elsewhere; ``core.worktree`` and ``core.bare`` of a ``.git`` honoured (asked of git only when the
        config file mentions them: not on an ordinary clone's path).

        Raises:
            NotARepository: the git folder is a bare repository with no work tree, or is not a repository.
        """
        separate = layout.separate_git_dir(found)
        if separate is not None:
            self._git_env = {layout.GIT_DIR_ENV: os.fspath(separate), layout.GIT_WORK_TREE_ENV: os.fspath(found)}
            check = self._git_at(found, "rev-parse", "--absolute-git-dir", env=self._git_env)
            if check.returncode != 0:
                raise NotARepository(f"the git folder of work tree {found} is not a repository: {separate}",
                                     "set GIT_DIR to the repository's folder and GIT_WORK_TREE to its work tree")
            if recorded_by_env:
                layout.record_work_tree(found, separate)
            return found
        try:
            git_dir, common = layout.git_dirs(found)
        except OSError:
            return found  # git says what is wrong with it at the first command
        if not _config_may_move_work_tree(git_dir, common):
            return found
        if self._git_at(found, "rev-parse", "--is-bare-repository").stdout.strip() == b"true":
            raise NotARepository(f"{found / '.git'} leads to a bare repository ({git_dir}): it has no work tree here",
                                 BARE_HINT)
        top = self._git_at(found, "rev-parse", "--show-toplevel")
        text = top.stdout.decode("utf-8", "surrogateescape").rstrip("\n")
        if top.returncode != 0 or not text or os.path.realpath(text) == os.path.realpath(found):
            return found
        tree = Path(text)  # core.worktree: git's work tree for this git folder is elsewhere
        self._git_env = {layout.GIT_DIR_ENV: os.fspath(git_dir), layout.GIT_WORK_TREE_ENV: os.fspath(tree)}
        layout.note_work_tree(tree, git_dir)
        layout.record_work_tree(tree, git_dir)
        return tree

    @staticmethod
    def _git_at(where: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(["git", *args], cwd=where, env={**_scrubbed_env(), **(env or {})},
                                  capture_output=True, stdin=subprocess.DEVNULL)
        except OSError as e:
            raise NotARepository(f"git cannot be run: {e}", "install git and put it on PATH") from e

    # -- low level --------------------------------------------------------------------------

    def _get(self, name: str, wanted: str) -> tuple[str, str, bytes] | None:
        """``_ObjectReader.get`` of ``name``; an object a partial clone lacks is fetched from its promisor remote
        (bounded: ``fetch_seconds``) and read again, else ``MissingObject`` naming it and ``wanted`` (what was
        being read, for a person: ``pkg/a.py at 1a2b3c4d5e6f``).

        Raises:
            MissingObject: the object is missing and could not be fetched now.
            GitError: git cannot be run or stopped answering.
        """
        for _ in range(MAX_FETCHES_PER_READ):  # a treeless clone may lack the trees on the way, then the blob
            try:
                return self._objects.get(name)
            except MissingObject as e:
                if not self._fetch(e.oid):
                    raise self.missing(e.oid, wanted) from None
        return self._objects.get(name)

    def missing(self, oid: str, wanted: str = "") -> MissingObject:
        """The error for object ``oid``, missing from this partial clone, read for ``wanted``: it names the remote
        to fetch it from and why it was not fetched now."""
        return MissingObject(oid, wanted, self.promisor_remote() or "", why=self._fetch_failed or "")

    def promisor_remote(self) -> str | None:
        """The remote a partial clone fetches missing objects from (``remote.<name>.promisor``, or
        ``extensions.partialClone``), None when this is not a partial clone (read once)."""
        if self._promisor is None:
            try:
                out = self._run("config", "--get-regexp", r"^(remote\..*\.promisor|extensions\.partialclone)$")
            except GitError:
                out = ""
            name = ""
            for line in out.splitlines():
                key, _, value = line.partition(" ")
                if key.startswith("extensions."):
                    name = name or value.strip()
                elif value.strip().lower() in ("true", "yes", "on", "1"):
                    name = name or key[len("remote."):-len(".promisor")]
            self._promisor = name
        return self._promisor or None

    def _fetch(self, oid: str) -> bool:
        """Fetch object ``oid`` from the promisor remote, within what is left of ``fetch_seconds``; True when it is
        here now. After one failure (unreachable, refused, out of time) nothing more is fetched by this ``Repo``:
        ``_fetch_failed`` says why."""
        remote = self.promisor_remote()
        left = self.fetch_seconds - self._fetch_spent
        if self._fetch_failed is not None or remote is None or left <= 0 or oid in self._fetched:
            if self._fetch_failed is None and remote is not None:
                self._fetch_failed = ("fetching is off here (hooks and the warm process never wait on a remote)"
                                      if self.fetch_seconds <= 0 else
                                      f"fetching took over {self.fetch_seconds:g} s" if left <= 0 else None)
            return False
        self._fetched.add(oid)
        # as git's own lazy fetch does it (promisor-remote.c): no negotiation, no tags, no FETCH_HEAD
        args = ["git", "-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "--no-tags",
                "--no-write-fetch-head", "--recurse-submodules=no", "--", remote, oid]
        start = time.monotonic()
        try:
            with _scratch_file() as err:
                # its own session: on time out the whole group goes (ssh, a remote helper), no pipe left open
                proc = subprocess.Popen(args, cwd=self.root,
                                        env={**_scrubbed_env(), **self._git_env, "GIT_TERMINAL_PROMPT": "0"},
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                        start_new_session=True)
                try:
                    code = proc.wait(timeout=left)
                except subprocess.TimeoutExpired:
                    _end_group(proc)
                    self._fetch_failed = f"fetching it from {remote} took over {self.fetch_seconds:g} s"
                    return False
                finally:
                    self._fetch_spent += time.monotonic() - start
                err.seek(0)
                text = err.read().decode("utf-8", "replace").strip()
        except OSError as e:
            self._fetch_failed = f"git fetch cannot be run: {e}"
            return False
        if code != 0:
            lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
            at = next((i for i, ln in enumerate(lines) if ln.startswith("fatal:")), len(lines) - 1)
            last = lines[at] if lines else f"exit {code}"
            if last.endswith(":") and at + 1 < len(lines):  # "unable to connect to HOST:" and the why below it
                last = f"{last} {lines[at + 1]}"
            self._fetch_failed = f"{remote} could not be reached ({last.removeprefix('fatal: ')})"
            return False
        return True

    def _run(self, *args: str, env: dict[str, str] | None = None) -> str:
        """Run ``git <args>`` in the work tree and return stdout (text, one trailing newline stripped).

        ``env``: variables added to the scrubbed environment (e.g. the
        ``GIT_INDEX_FILE`` of the commit a pre-commit hook runs for).

        Raises:
            GitError: the command failed; carries argv, exit code and stderr.
        """
        return self._run_bytes(*args, env=env).decode("utf-8", "replace").removesuffix("\n")

    def close(self) -> None:
        """End this repository's ``git cat-file`` processes now (they end anyway when the object is collected)."""
        self._objects.close()
        self._linked.close()

    # -- paths ------------------------------------------------------------------------------

    def relpath(self, path: str | os.PathLike[str], *, cwd: str | os.PathLike[str] | None = None) -> str:
        """Turn a user-given path (absolute or relative to ``cwd``) into a repo-relative POSIX path.

        Raises:
            AnchorError: the path lies outside the repository.
        """
        p = Path(path)
        if not p.is_absolute():
            p = Path(cwd or os.getcwd()) / p
        p = Path(os.path.normpath(p))
        rp = None
        # Prefer the path as given (a symlink inside the repo is anchored as itself), then resolved.
        for base in (self.root, self._tree_as_given):
            try:
                rp = p.relative_to(base)
                break
            except ValueError:
                continue
        if rp is None:
            try:
                rp = p.resolve().relative_to(self.root)
            except ValueError:
                raise AnchorError(f"path outside the repository: {path}",
                                  f"give a path inside {self.root}") from None
        return PurePosixPath(*rp.parts).as_posix() if rp.parts else ""

    @cached_property
    def git_dir(self) -> Path:
        """This work tree's git dir (per-worktree for linked worktrees)."""
        return Path(self._run("rev-parse", "--absolute-git-dir")).resolve()

    @cached_property
    def common_dir(self) -> Path:
        """The git dir shared by all worktrees (where config and hooks live)."""
        out = Path(self._run("rev-parse", "--git-common-dir"))
        return (out if out.is_absolute() else self.root / out).resolve()

    def hooks_dir(self) -> Path:
        """The directory git will run hooks from (follows core.hooksPath, worktrees)."""
        out = self._run("rev-parse", "--git-path", "hooks")
        p = Path(out)
        return (p if p.is_absolute() else self.root / p).resolve()

    # -- named queries for the few callers outside this module --------------------------------

    def tree_sha(self, rev: str, path: str) -> str | None:
        """The SHA of the tree at ``path`` (a folder) in ``rev``, or None when there is none."""
        try:
            return self._run("rev-parse", "--verify", "--quiet", f"{rev}:{path}") or None
        except GitError:
            return None

    def is_ignored(self, path: str) -> bool:
        """Whether git's ignore rules (``.gitignore`` files, ``info/exclude``, ``core.excludesFile``) ignore
        ``path`` (repo-relative) as an untracked file (``git check-ignore --no-index``)."""
        try:
            self._run("check-ignore", "-q", "--no-index", "--", path)
            return True
        except GitError:
            return False

    def has_path(self, rev: str, path: str) -> bool:
        """Whether ``rev``'s tree has ``path`` (file or folder) at its top level or below."""
        try:
            return bool(self._run("--literal-pathspecs", "ls-tree", "--name-only", rev, "--", path))
        except GitError:
            return False

    def topo_order(self, rev: str = "HEAD") -> list[str]:
        """The commits reachable from ``rev``, newest first in topological order (``git rev-list --topo-order``).

        Raises:
            GitError: ``rev`` names no commit.
        """
        return self._run("rev-list", "--topo-order", rev).split()

    def path_log(self, path: str, *, revs: str = "HEAD", limit: int | None = None,
                 follow: bool = True) -> list[tuple[str, int, str, str, str]]:
        """(sha, commit time in seconds since the epoch, author name, subject, the path as named in that commit)
        per commit of ``revs`` (a revision or ``A..B``) that changed ``path``, newest first, at most ``limit``
        (``git log``; ``follow``: across renames).

        Raises:
            GitError: git failed.
        """
        # -z: file names as they are (not C-quoted: a tab, newline or quote in a name survives)
        out = self._run("--literal-pathspecs", "log", "-z", "--format=%x01%H%x00%ct%x00%an%x00%s", "--name-only",
                        *(["--follow"] if follow else []), *([f"-n{limit}"] if limit else []), revs, "--", path)
        rows = []
        for chunk in out.split("\x01")[1:]:
            sha, t, author, subject, *rest = chunk.split("\x00") + ["", "", "", ""]
            names = [rest[0].removeprefix("\n"), *rest[1:]] if rest else []
            name = next((n for n in names if n), "")
            rows.append((sha, int(t or 0), author, subject, name))
        return rows

    def last_commit_times(self, paths: list[str], revs: str = "HEAD") -> dict[str, int]:
        """path → commit time (seconds since the epoch) of the newest commit of ``revs`` (a revision or ``A..B``)
        that changed it, for each of ``paths`` some commit changed (others are left out). One ``git log`` per
        500 paths, renames not followed (a renamed file's first commit under its new name is its last change).

        Raises:
            GitError: git failed (``revs`` unknown).
        """
        out: dict[str, int] = {}
        listed = sorted(set(paths))
        for i in range(0, len(listed), 500):
            raw = self._run_bytes("--literal-pathspecs", "log", "-z", "--format=%x01%ct", "--name-only",
                                  "--no-renames", revs, "--", *listed[i:i + 500])
            for chunk in raw.split(b"\x01")[1:]:
                t, *names = chunk.split(b"\x00")
                for n in names:
                    name = _decode(n.removeprefix(b"\n"))
                    if name and name not in out:
                        out[name] = int(t or 0)
        return out

    def modified(self, path: str) -> bool:
        """Whether ``path`` differs from HEAD in the index or the work tree, or is untracked."""
        return bool(self._run("--literal-pathspecs", "status", "--porcelain", "--", path))

    def toplevel(self) -> Path:
        """The work tree's top as git itself reports it (``git rev-parse --show-toplevel``), symlinks resolved.

        Raises:
            GitError: git cannot read the repository (a ``.git`` that names no git folder).
        """
        return Path(os.path.realpath(self._run("rev-parse", "--show-toplevel")))

    def local_config(self, key: str) -> str:
        """The value of ``key`` in the repository's own config (``.git/config``), "" when unset."""
        return self._run("config", "--local", "--default", "", "--get", key)

    def set_local_config(self, key: str, value: str) -> None:
        """Set ``key`` in the repository's own config.

        Raises:
            GitError: git refused (an invalid key, an unwritable config).
        """
        self._run("config", "--local", key, value)

    # -- revisions --------------------------------------------------------------------------

    def _commit_of(self, rev: str) -> str | None:
        """The full SHA of the commit ``rev`` names now (a tag peeled), None when it names none."""
        got = self._get(f"{rev}^{{commit}}", rev)
        return got[0] if got is not None and got[1] == "commit" else None

    def has_commits(self) -> bool:
        """True when HEAD points at a commit."""
        return self.head() is not None

    def resolve(self, rev: str) -> str:
        """Full SHA of the commit ``rev`` names.

        Raises:
            GitError: ``rev`` names no commit.
        """
        sha = self._commit_of(rev) if rev else None
        if sha is None:
            try:
                shallow = bool(rev) and self.is_shallow()
            except GitError:
                shallow = False
            if shallow:  # a commit before the boundary, or a tag not fetched, is not here: say how to get it
                raise GitError(f"unknown revision: {rev} (a shallow clone: history before its boundary is not here)",
                               "git fetch --deepen=N (N more commits), git fetch --unshallow, or git fetch origin "
                               "tag NAME for a tag; then ask again")
            raise GitError(f"unknown revision: {rev}",
                           "give a commit, branch or tag that exists (git log --oneline)")
        return sha

    def head(self) -> str | None:
        """SHA of HEAD, or None in a repository with no commits."""
        return self._commit_of("HEAD")

    def commit_exists(self, sha: str) -> bool:
        """True when the object database holds commit ``sha`` (false in shallow gaps, and for the null SHA
        git hooks pass to mean "no commit"); cached per process."""
        if not sha.strip("0"):
            return False
        key = ("exists", sha)
        if key not in self._blob_cache:
            got = self._get(sha, sha)
            self._blob_cache[key] = b"1" if got is not None and got[1] == "commit" else None
        return self._blob_cache[key] is not None

    def commit_time(self, sha: str) -> int:
        """Committer time of commit ``sha`` in seconds since the epoch (UTC).

        Raises:
            GitError: ``sha`` names no commit.
        """
        got = self.commit_summary(sha)
        if got is None:
            raise GitError(f"unknown commit: {sha}", "give a commit that exists (git log --oneline)")
        return got[1]

    def parents(self, sha: str) -> list[str]:
        """Parent SHAs of a commit (empty for a root commit), from its object's ``parent`` lines.

        Raises:
            GitError: ``sha`` names no commit.
        """
        full = self.resolve(sha)
        if full not in self._parents:
            got = self._get(full, f"commit {full[:12]}")
            header = got[2].split(b"\n\n", 1)[0] if got is not None else b""
            # git's commit object format: "tree", then one "parent <sha>" line per parent, in order
            self._parents[full] = [ln[7:].decode("ascii") for ln in header.split(b"\n") if ln.startswith(b"parent ")]
        return list(self._parents[full])

    def commit_summary(self, sha: str) -> tuple[str, int, str, str] | None:
        """(full SHA, commit time in seconds since the epoch, author name, subject) of commit ``sha``; None when
        the object database has no such commit."""
        try:
            # --end-of-options: a SHA read from a memory file never becomes an option; -z: fields as they are
            out = self._run("log", "-1", "-z", "--format=%H%x00%ct%x00%an%x00%s", "--end-of-options",
                            f"{sha}^{{commit}}", "--")
        except GitError:
            return None
        full, t, author, subject, *_ = out.split("\x00") + ["", "", "", ""]
        return (full, int(t), author, subject) if full and t.isdigit() else None

    def user_name(self) -> str:
        """The name git authors commits with: ``$GIT_AUTHOR_NAME`` when set (git's own precedence), else
        ``user.name`` from git config, else "" (no guess from the system's user, as ``user.useConfigOnly``)."""
        env = os.environ.get("GIT_AUTHOR_NAME", "").strip()
        if env:
            return env
        try:
            return self._run("config", "--get", "user.name")
        except GitError:  # unset (exit 1) or an unreadable config: "unknown author"
            return ""

    #: Where the default branch is looked for, in order (``default_branch``).
    DEFAULT_BRANCHES = ("origin/HEAD", "origin/main", "origin/master", "main", "master")

    def default_branch(self) -> tuple[str, str] | None:
        """(name, commit SHA) of the first of ``DEFAULT_BRANCHES`` that exists here, or None."""
        for ref in self.DEFAULT_BRANCHES:
            sha = self._commit_of(ref)
            if sha is not None:
                return ref, sha
        return None

    def merge_base(self, a: str, b: str) -> str | None:
        """The best common ancestor of commits ``a`` and ``b`` (``git merge-base``), None when they have
        none here (unrelated histories, or a shallow clone cut above it: ``is_shallow``)."""
        try:
            out = self._run("merge-base", a, b)
        except GitError:  # exit 1: no common ancestor; or a name git does not know
            return None
        return out.split()[0] if out.strip() else None

    def is_ancestor(self, a: str, b: str) -> bool:
        """Whether commit ``a`` is an ancestor of commit ``b`` (or ``b`` itself): ``git merge-base --is-ancestor``.

        Raises:
            GitError: git failed otherwise than answering no (exit 1), e.g. a commit it does not know.
        """
        try:
            self._run("merge-base", "--is-ancestor", a, b)
        except GitError as e:
            if e.code == 1:
                return False
            raise
        return True

    def ancestry_path(self, old: str, new: str) -> list[str]:
        """The commits of ``old..new`` that descend from ``old`` (``git rev-list --ancestry-path``), newest first;
        [] when ``old`` is not an ancestor of ``new``.

        Raises:
            GitError: a name git does not know.
        """
        return self._run("rev-list", "--ancestry-path", f"{old}..{new}").split()

    def root_commits(self, rev: str) -> list[str]:
        """The root commits (no parent) reachable from ``rev``, sorted: ``git rev-list --max-parents=0``. A
        repository's identity across clones at different paths or URLs (the same history has the same roots).

        Raises:
            GitError: ``rev`` names no commit.
        """
        return sorted(self._run("rev-list", "--max-parents=0", rev).split())

    def is_shallow(self) -> bool:
        """Whether this is a shallow clone (``git rev-parse --is-shallow-repository``)."""
        return self._run("rev-parse", "--is-shallow-repository").strip() == "true"

    def cut_short(self, sha: str) -> bool:
        """Whether commit ``sha``'s history is not in this clone: its object names a parent the object database
        lacks (a shallow clone's boundary, listed in ``.git/shallow``; its diff against the missing parent would
        look like it added every file). From the commit object (``parents``), no extra git process.

        Raises:
            GitError: ``sha`` names no commit.
        """
        return any(not self.commit_exists(p) for p in self.parents(sha))

    def default_branch_base(self) -> str | None:
        """The merge base of HEAD with the default branch (``default_branch``), or None.

        None when there is no such branch, no merge base, or HEAD is on it (the merge base is HEAD).
        """
        head = self.head()
        found = self.default_branch() if head else None
        if head is None or found is None:
            return None
        base = self.merge_base(head, found[1])
        return None if base == head else base

    # -- content ----------------------------------------------------------------------------

    def blob_sha(self, rev: str | None, path: str) -> str | None:
        """The blob SHA of ``path`` at ``rev`` (WORKTREE: hashed from disk), None if absent."""
        if rev is WORKTREE:
            data = self.read(WORKTREE, path)
            return None if data is None else git_blob_sha(data)
        got = self._blob(rev, path)
        return None if got is None else got[0]

    def read(self, rev: str | None, path: str) -> bytes | None:
        """The bytes of ``path`` at ``rev`` (WORKTREE: from disk), None if the file is absent.

        Bytes are as stored (no smudge filters); a symlink yields its target text.
        """
        if rev is WORKTREE:
            full = self.root / path
            if self.symlinked_dir(path):  # git never follows those: the file may be outside the repo
                return None
            try:
                if full.is_symlink():  # git stores a symlink as its target text
                    return os.fsencode(os.readlink(full))
                if full.is_file():
                    return full.read_bytes()
            except OSError:
                return None
            # a sparse checkout leaves files out of the work tree unchanged: git reads them from the index
            return self.read_staged(path) if path in self.skip_worktree else None
        got = self._blob(rev, path)
        return None if got is None else got[1]

    def _blob(self, rev: str | None, path: str) -> tuple[str, bytes] | None:
        """(blob SHA, bytes) of ``path`` in commit ``rev``, None when absent or not a file (a folder, a
        submodule). Cached for the process by commit SHA: a commit's blobs never change."""
        sha = self._commit_sha(rev or "HEAD")
        if sha is None or not path:
            return None
        key = (sha, path)
        if key not in self._blob_cache:
            got = self._get(f"{sha}:{path}", f"{path} at {sha[:12]}")
            ok = got is not None and got[1] == "blob"
            self._blob_cache[key] = got[2] if ok and got is not None else None
            self._blob_cache[("sha", f"{sha}\0{path}")] = got[0].encode() if ok and got is not None else None
        data = self._blob_cache[key]
        oid = self._blob_cache[("sha", f"{sha}\0{path}")]
        return None if data is None or oid is None else (oid.decode(), data)

    def lfs_tracked(self, path: str) -> bool:
        """Whether git stores repo-relative ``path`` through git-lfs: its ``filter`` attribute is ``lfs``
        (``.gitattributes``, as ``git lfs track`` writes it). One ``git check-attr``; False when git cannot say."""
        try:
            out = self._run_bytes("check-attr", "-z", "filter", "--", path)
        except GitError:
            return False
        parts = out.split(b"\0")  # path NUL attribute NUL value NUL
        return len(parts) >= 3 and parts[2] == b"lfs"

    @cached_property
    def lfs_dir(self) -> Path:
        """git-lfs's local folder (``lfs.storage``, relative to git's common folder, else ``<common dir>/lfs``),
        where it keeps the content of the LFS files it fetched or cleaned (``layout.lfs_object``). Asked of
        git once, only when an LFS pointer is met."""
        try:
            set_to = self._run_bytes("config", "--get", "lfs.storage").decode("utf-8", "surrogateescape").strip()
        except GitError:
            set_to = ""
        return self.common_dir / (os.path.expanduser(set_to) if set_to else "lfs")

    def _commit_sha(self, rev: str) -> str | None:
        """The commit SHA ``rev`` names now (a full SHA as it is), None when it names none."""
        if len(rev) in (40, 64) and all(c in "0123456789abcdef" for c in rev):
            return rev
        return self._commit_of(rev)

    def symlinked_dir(self, path: str) -> str | None:
        """The leading directory of repo-relative ``path`` that is a symlink on disk, or None.

        Git never reads a file "beyond a symbolic link"; neither does gitmem (such a
        path may lead outside the repository).
        """
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):  # one lstat per folder level (cheaper than resolving the path)
            d = "/".join(parts[:i])
            if os.path.islink(os.path.join(self.root, d)):
                return d
        return None

    def follow(self, rev: str | None, path: str) -> Link | None:
        """Where repo-relative ``path`` leads at ``rev`` (WORKTREE: on disk) through symbolic links: any component
        may be one (``CLAUDE.md -> AGENTS.md``, ``lib -> src/lib`` then ``lib/x.py``, chains). None when no link
        is on the way (the path is what it says, or is absent without a link).

        Resolved as the system does, one component at a time: a link's text is relative to the link's folder
        (``..`` steps out of the folder reached, not lexically), an absolute one counts when it lies in this work
        tree; at a commit, read from git's objects (a 120000 entry's blob is its text), never from the disk.
        Leading outside the repository, a cycle, or to nothing: ``Link.path`` None (``Link.why``).
        Cost: a few ``lstat`` on disk; at a commit, one ``cat-file`` question per component (two for a blob:
        ``--follow-symlinks`` tells a link from a file), cached by commit.

        Raises:
            GitError: git cannot be run.
        """
        todo = [p for p in path.split("/") if p not in ("", ".")]
        done: list[str] = []
        links: list[str] = []
        text = ""
        while todo:
            comp = todo.pop(0)
            if comp in ("", "."):
                continue
            if comp == "..":
                if not done:
                    return Link(None, tuple(links), outside=text) if links else None
                done.pop()
                continue
            cur = "/".join([*done, comp])
            kind, text_here = self._entry(rev, cur)
            if kind == "link":
                links.append(cur)
                text = text_here
                if len(links) > MAX_LINK_HOPS:
                    return Link(None, tuple(dict.fromkeys(links)), loop=True)
                if text.startswith("/") or os.path.isabs(text):
                    inside = self._inside(text)
                    if inside is None:
                        return Link(None, tuple(links), outside=text)
                    done, todo = [], [*inside.split("/"), *todo]
                else:
                    todo = [*text.split("/"), *todo]  # relative to the link's folder: ``done``
                continue
            if kind == "tree" or (kind == "file" and not todo):
                done.append(comp)
                continue
            if not links:
                return None
            return Link(None, tuple(links), missing="/".join([*done, comp, *todo]))  # or a file used as a folder
        if not links:
            return None
        if done and done[0] == ".git":  # git's own folder is no file of the repository (never one of a commit)
            return Link(None, tuple(links), outside=text)
        return Link("/".join(done), tuple(links))

    def _inside(self, target: str) -> str | None:
        """An absolute link text as a repo-relative path when it lies in this work tree (as resolved or as
        reached), else None."""
        for top in (self.root, self._tree_as_given):
            try:
                rel = PurePosixPath(os.path.normpath(target)).relative_to(PurePosixPath(top.as_posix()))
            except ValueError:
                continue
            return rel.as_posix() if rel.parts else ""
        return None

    def _entry(self, rev: str | None, path: str) -> tuple[str, str]:
        """What ``path`` (no link before its last component) is at ``rev``: ``("link", its text)``, ``("tree",
        "")``, ``("file", "")`` or ``("missing", "")`` (absent, a submodule, anything else)."""
        if rev is WORKTREE:
            try:
                st = os.lstat(self.root / path)
                if stat.S_ISLNK(st.st_mode):
                    return "link", os.fsdecode(os.readlink(self.root / path))
            except OSError:
                return "missing", ""
            if stat.S_ISREG(st.st_mode) and path in self._plain_links:  # core.symlinks=false: the link's text
                try:
                    return "link", (self.root / path).read_bytes().decode("utf-8", "surrogateescape")
                except OSError:
                    return "missing", ""
            return ("tree", "") if stat.S_ISDIR(st.st_mode) else ("file", "") if stat.S_ISREG(st.st_mode) \
                else ("missing", "")
        sha = self._commit_sha(rev)
        if sha is None:
            return "missing", ""
        key = (sha, path)
        if key not in self._entries:
            got = self._get(f"{sha}:{path}", f"{path} at {sha[:12]}")
            if got is None or got[1] not in ("tree", "blob"):
                self._entries[key] = ("missing", "")
            elif got[1] == "tree":
                self._entries[key] = ("tree", "")
            else:  # a file or a link (mode 120000): only the mode tells, which --follow-symlinks reads
                led = self._linked.get(f"{sha}:{path}")
                same = led is not None and led[1] == "blob" and led[0] == got[0]
                self._entries[key] = ("file", "") if same else ("link", got[2].decode("utf-8", "surrogateescape"))
        return self._entries[key]

    @cached_property
    def _links_as_files(self) -> bool:
        """Whether this clone checks symbolic links out as plain files holding the link's text
        (``core.symlinks=false``: git's default on Windows, and where the file system has no links)."""
        try:
            return self._run("config", "--bool", "--default", "true", "--get", "core.symlinks").strip() == "false"
        except GitError:
            return False

    @property
    def _plain_links(self) -> frozenset[str]:
        """Index entries that are symbolic links (mode 120000) where links are checked out as plain files
        (``_links_as_files``); empty, without listing the index, elsewhere. Asked only on a path that may be a
        link (``Repo.follow`` on the work tree); listed again when the index file changed (a warm process keeps
        its ``Repo`` across commands)."""
        if not self._links_as_files:
            return frozenset()
        try:
            st = os.stat(self.git_dir / "index")
            stamp = (st.st_mtime_ns, st.st_size)
        except (OSError, GitError):
            stamp = None
        if stamp is None or self._plain_links_at is None or self._plain_links_at[0] != stamp:
            try:
                out = self._run_bytes("ls-files", "-z", "-s")
            except GitError:
                return frozenset()
            found = frozenset(e.split("\t", 1)[1] for e in _zsplit(out) if e.startswith("120000 ") and "\t" in e)
            self._plain_links_at = (stamp, found)
        return self._plain_links_at[1]

    @cached_property
    def skip_worktree(self) -> frozenset[str]:
        """Index entries with the skip-worktree bit (left out of a sparse checkout): git sees them as unchanged."""
        try:
            out = self._run_bytes("ls-files", "-z", "-t")
        except GitError:
            return frozenset()
        return frozenset(p[2:] for p in _zsplit(out) if p.startswith("S "))

    def files_at(self, rev: str | None, *, skip_gitmem: bool = False) -> list[str]:
        """All tracked files at ``rev`` (WORKTREE: the index plus untracked, not ignored;
        files a sparse checkout leaves out count as there, as git sees them).

        ``skip_gitmem``: leave out ``.gitmem/`` (100,000 memory files must not cost
        a code query anything): its tree is never walked.

        A commit given by its full object id names one tree for good: its list is kept in the process
        (``_FILES_AT``, the last ``FILES_AT_KEPT``), so a warm process asked about HEAD twice runs
        ``git ls-tree`` once (``context`` asks twice: the prompt's paths and the import graph).
        """
        key = (str(self.git_dir), rev, skip_gitmem) if rev is not WORKTREE and _FULL_OID.fullmatch(rev or "") else None
        if key is not None:
            with _FILES_AT_LOCK:
                kept = _FILES_AT.get(key)
                if kept is not None:
                    _FILES_AT.move_to_end(key)
                    return list(kept)
        files = self._files_at(rev, skip_gitmem=skip_gitmem)
        if key is not None:
            with _FILES_AT_LOCK:
                _FILES_AT[key] = tuple(files)
                while len(_FILES_AT) > FILES_AT_KEPT:
                    _FILES_AT.popitem(last=False)
        return files

    def _files_at(self, rev: str | None, *, skip_gitmem: bool) -> list[str]:
        """``files_at`` without the kept lists."""
        if rev is WORKTREE:
            extra = ("--exclude=/.gitmem/", "--", ".", ":(exclude).gitmem") if skip_gitmem else ()
            out = self._run_bytes("ls-files", "-z", "--cached", "--others", "--exclude-standard", *extra)
            return sorted({p for p in _zsplit(out) if (self.root / p).is_file() or p in self.skip_worktree})
        if skip_gitmem:
            top = [p for p in _zsplit(self._run_bytes("ls-tree", "-z", "--name-only", "--full-tree", rev))
                   if p != GITMEM_TOP]
            if not top:
                return []
            return _zsplit(self._run_bytes("--literal-pathspecs", "ls-tree", "-r", "-z", "--name-only", "--full-tree",
                                          rev, "--", *top))
        return _zsplit(self._run_bytes("ls-tree", "-r", "-z", "--name-only", "--full-tree", rev))

    # -- changes ----------------------------------------------------------------------------

    def _run_bytes(self, *args: str, env: dict[str, str] | None = None) -> bytes:
        """Run ``git <args>`` and return raw stdout (for ``-z`` output with arbitrary path bytes).

        Raises:
            GitError: the command failed (or git cannot be run).
        """
        command = next((a for a in args if not a.startswith("-")), "")
        lazy = command in _NETWORK_COMMANDS
        try:
            proc = subprocess.run(["git", "-c", "core.quotepath=off", *(() if lazy else _NO_LAZY_ARGS), *args],
                                  cwd=self.root, capture_output=True, stdin=subprocess.DEVNULL,
                                  env={**_scrubbed_env(), **({} if lazy else _NO_LAZY_ENV), **self._git_env,
                                       **(env or {})})
        except OSError as e:
            raise GitError(f"git cannot be run: {e}", "install git and put it on PATH", argv=list(args)) from e
        if proc.returncode != 0:
            oid = None if lazy else promised_missing(proc.stderr)
            if oid is not None:
                if self._fetch(oid):
                    return self._run_bytes(*args, env=env)
                raise self.missing(oid)
            raise _git_error(args, proc.returncode, proc.stderr)
        return proc.stdout

    def changed_files(self, old: str | None, new: str | None, *, skip_gitmem: bool = False) -> list[FileChange]:
        """Files changed from ``old`` to ``new`` with git's rename detection (``-M``, 50%).

        ``old`` None means the empty tree (everything added); ``new`` WORKTREE
        means the working tree including untracked files. Paths that are not
        valid UTF-8 are skipped (they cannot be anchored). Returns changes sorted
        by (new_path or old_path).
        """
        base = old or EMPTY_TREE
        spec = ("--", ".", f":(exclude){GITMEM_TOP}") if skip_gitmem else ()
        if new is WORKTREE:
            if old is None:
                return [FileChange("A", None, p) for p in self.files_at(WORKTREE, skip_gitmem=skip_gitmem)]
            skip = (f"--exclude=/{GITMEM_TOP}/",) if skip_gitmem else ()
            # both read the whole index (11 MB with 100,000 memory files): run side by side
            got: dict[str, bytes | BaseException] = {}

            def others() -> None:
                try:
                    got["others"] = self._run_bytes("ls-files", "-z", "--others", "--exclude-standard", *skip, *spec)
                except BaseException as e:  # noqa: BLE001 - re-raised below, in the caller's thread
                    got["others"] = e

            thread = threading.Thread(target=others, daemon=True)
            thread.start()
            try:
                changes = _name_status(self._run_bytes("diff", "-z", "-M", "--name-status", "--no-ext-diff", base,
                                                      *spec))
            finally:
                thread.join()
            untracked = got["others"]
            if isinstance(untracked, BaseException):
                raise untracked
            seen = {c.new_path for c in changes}
            changes += [FileChange("A", None, p) for p in _zsplit(untracked) if p not in seen]
        else:
            changes = _name_status(self._run_bytes("diff-tree", "-r", "-z", "-M", "--name-status",
                                                  "--no-ext-diff", base, new, *spec))
        return sorted(changes, key=lambda c: (c.new_path or c.old_path or ""))

    def changed_paths(self, old: str | None, new: str) -> list[str]:
        """Paths that differ between two trees or commits (``old`` None: the empty tree), no rename
        detection: cheap when few files changed among many."""
        return _zsplit(self._run_bytes("diff-tree", "-r", "-z", "--name-only", "--no-renames", old or EMPTY_TREE, new))

    def staged_changes(self, index_file: str | None = None, base: str | None = None) -> list[FileChange]:
        """Files the index (``index_file``, else the repository's) changes from ``base`` (a commit or tree; default
        HEAD), with rename detection."""
        env = {"GIT_INDEX_FILE": index_file} if index_file else None
        base = base or self.head() or EMPTY_TREE
        changes = _name_status(self._run_bytes("diff", "--cached", "-z", "-M", "--name-status", "--no-ext-diff",
                                              base, env=env))
        return sorted(changes, key=lambda c: (c.new_path or c.old_path or ""))

    def read_staged(self, path: str, index_file: str | None = None) -> bytes | None:
        """The bytes of ``path`` in the index (``index_file``, else the repository's); None if not staged.

        Raises:
            MissingObject: a partial clone lacks the blob (a sparse checkout leaves it unfetched) and could not
                fetch it now.
        """
        env = {"GIT_INDEX_FILE": index_file} if index_file else None
        try:
            return self._run_bytes("cat-file", "blob", f":0:{path}", env=env)  # ":0:": a name like "1:x" is a path
        except MissingObject as e:  # a sparse checkout of a partial clone: the file's blob was never fetched
            raise self.missing(e.oid, f"{path} in the index") from None
        except GitError:
            return None

    def stage(self, paths: list[str], index_file: str | None = None) -> None:
        """``git add`` ``paths`` to the index (``index_file``, else the repository's).

        Raises:
            GitError: git refused.
        """
        if paths:
            self._run("--literal-pathspecs", "add", "--", *paths,
                     env={"GIT_INDEX_FILE": index_file} if index_file else None)

    def staged_commit(self, index_file: str | None = None) -> str | None:
        """A commit object holding the index's tree (``index_file``, else the repository's) with HEAD as its
        parent, on no branch: a stand-in for the commit a pre-commit hook runs for, so that the code as
        staged can be read and diffed like any commit. None when there is no HEAD.

        Written with a fixed author, committer and date (the same tree and parent give the same SHA) and
        unsigned; git prunes it with other unreachable objects (``git gc``). ``git write-tree`` writes the
        tree objects the commit itself will use.

        Raises:
            GitError: git refused (e.g. an index with unmerged entries).
        """
        head = self.head()
        if head is None:
            return None
        env = {"GIT_INDEX_FILE": index_file} if index_file else {}
        tree = self._run("write-tree", env=env)
        stamp = {"GIT_AUTHOR_NAME": "gitmem", "GIT_AUTHOR_EMAIL": "gitmem@localhost", "GIT_AUTHOR_DATE": "@0 +0000",
                 "GIT_COMMITTER_NAME": "gitmem", "GIT_COMMITTER_EMAIL": "gitmem@localhost",
                 "GIT_COMMITTER_DATE": "@0 +0000"}
        return self._run("commit-tree", "--no-gpg-sign", tree, "-p", head, "-m", "gitmem: the staged change",
                         env=stamp).strip()

    def stage_with_commit(self, paths: list[str], index_file: str | None = None) -> None:
        """From a pre-commit hook: stage ``paths`` into the index the commit is made from (``index_file``)
        and, when that is a temporary one, into the index git writes after the commit too.

        ``git commit PATH`` commits from a temporary index and then writes the real one from
        ``<git dir>/index.lock``: a file staged only in the first would look deleted or modified
        after the commit.

        Raises:
            GitError: git refused.
        """
        self.stage(paths, index_file)
        real = self.git_dir / "index.lock"
        if index_file and real.exists() and Path(index_file).resolve() != real.resolve():
            self.stage(paths, str(real))

    def dirty_files(self, *, skip_gitmem: bool = False) -> list[str]:
        """Paths that differ between HEAD and the working tree (staged, unstaged, untracked).

        ``skip_gitmem``: leave out ``.gitmem/`` (git then never stats or lists the memory files).
        """
        head = self.head()
        return sorted({c.new_path or c.old_path or ""
                       for c in self.changed_files(head, WORKTREE, skip_gitmem=skip_gitmem)} - {""})

    def commits_touching(self, old: str | None, new: str, *paths: str, first_parent: bool = False) -> list[str]:
        """Commits in ``old..new`` (oldest first, first-parent order not assumed) that changed any of ``paths``.

        ``first_parent``: only the commits of ``new``'s first-parent line (a merge counts as what it changed
        against its first parent: ``git rev-list --first-parent``).
        Renames are not followed here; callers follow them with ``changed_files``.
        Paths are literal (no pathspec magic: ``*`` or ``:`` in a file name is itself).
        """
        rng = f"{old}..{new}" if old else new
        out = self._run("--literal-pathspecs", "rev-list", "--reverse", "--topo-order",
                        *(["--first-parent"] if first_parent else []), rng, "--", *paths)
        return [s for s in out.split() if s]

    # -- mirrors and committed trees (the organisation index: no work tree needed) -----------------

    def files_under(self, rev: str, folder: str) -> dict[str, str]:
        """path → blob SHA of every file under ``folder`` (repo-relative, e.g. ``.gitmem/memories``) in commit
        ``rev``, recursively (``git ls-tree -r``); {} when ``rev`` has no such folder. Submodules and symlinks
        are left out (not files git can read as text here).

        Raises:
            GitError: ``rev`` names no commit or tree.
        """
        out = self._run_bytes("--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", rev, "--",
                              folder.rstrip("/") + "/")
        files: dict[str, str] = {}
        for rec in out.split(b"\0"):
            meta, _, raw = rec.partition(b"\t")
            parts = meta.split()
            path = _decode(raw)
            # "<mode> SP <type> SP <object> TAB <path>" (git-ls-tree(1)); 120000 is a symlink
            if len(parts) == 3 and parts[1] == b"blob" and parts[0] != b"120000" and path:
                files[path] = parts[2].decode("ascii")
        return files

    def changes_under(self, old: str | None, new: str, folder: str) -> list[FileChange]:
        """Files under ``folder`` changed from commit ``old`` (None: the empty tree) to ``new``, without rename
        detection (a renamed file is a deletion and an addition): ``git diff-tree -r --name-status``.

        Raises:
            GitError: a commit is unknown here.
        """
        out = self._run_bytes("--literal-pathspecs", "diff-tree", "-r", "-z", "--name-status", "--no-renames",
                              "--no-ext-diff", old or EMPTY_TREE, new, "--", folder.rstrip("/") + "/")
        return sorted(_name_status(out), key=lambda c: (c.new_path or c.old_path or ""))

    def read_blob(self, sha: str) -> bytes | None:
        """The bytes of blob ``sha``, None when this repository has no such blob (one ``cat-file --batch``)."""
        got = self._get(sha, sha)
        return got[2] if got is not None and got[1] == "blob" else None

    def fetch_mirror(self) -> None:
        """Update a mirror (``clone_mirror``) from its remote: every ref as the remote has it, deleted ones
        pruned (``git remote update --prune``).

        Raises:
            GitError: the remote is unreachable or refused.
        """
        self._run("remote", "update", "--prune", env={"GIT_TERMINAL_PROMPT": "0"})

    def commits_between(self, old: str | None, new: str) -> list[str]:
        """Commits in ``old..new``, oldest first."""
        rng = f"{old}..{new}" if old else new
        out = self._run("rev-list", "--reverse", "--topo-order", rng)
        return [s for s in out.split() if s]

    # -- committing and syncing with a remote (the personal repository: ``ops.personal``) -----------------

    def commit_paths(self, paths: list[str], message: str) -> str:
        """Stage ``paths`` (repo-relative, literal; deleted files too) and commit only them, without running the
        repository's hooks (``--no-verify``: gitmem's own commits in its personal repository); returns HEAD.
        Nothing to commit (the paths are as HEAD has them): HEAD as it is (None before a first commit: "").

        Raises:
            GitError: git refused (no ``user.name`` / ``user.email``, an unwritable repository).
        """
        self._run("--literal-pathspecs", "add", "-A", "--", *paths)
        staged = self._run("--literal-pathspecs", "diff", "--cached", "--name-only", "-z", "--", *paths) \
            if self.has_commits() else "x"
        if staged:
            self._run("--literal-pathspecs", "commit", "--no-verify", "--quiet", "-m", message, "--", *paths)
        return self.head() or ""

    def current_branch(self) -> str | None:
        """The branch HEAD is on (``main``), None when detached."""
        try:
            return self._run("symbolic-ref", "--quiet", "--short", "HEAD") or None
        except GitError:
            return None

    def remote_url(self, name: str = "origin") -> str | None:
        """The URL of remote ``name``, None when there is no such remote."""
        try:
            return self._run("remote", "get-url", "--", name) or None
        except GitError:
            return None

    def set_remote(self, url: str, name: str = "origin") -> None:
        """Point remote ``name`` at ``url`` (added when missing).

        Raises:
            GitError: git refused the URL or name.
        """
        if self.remote_url(name) is None:
            self._run("remote", "add", "--", name, url)
        else:
            self._run("remote", "set-url", "--", name, url)

    def upstream(self) -> str | None:
        """The branch the current one tracks (``origin/main``), None when it tracks none."""
        try:
            return self._run("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}") or None
        except GitError:
            return None

    def ahead_behind(self, other: str) -> tuple[int, int]:
        """(commits of HEAD not in ``other``, commits of ``other`` not in HEAD), as the refs are here (no fetch).

        Raises:
            GitError: ``other`` names no commit.
        """
        left, _, right = self._run("rev-list", "--left-right", "--count", f"HEAD...{other}", "--").partition("\t")
        return int(left or 0), int(right or 0)

    def count_unpushed(self, remote: str = "origin") -> int:
        """How many commits of HEAD no remote-tracking branch of ``remote`` holds (as last fetched): what a push of
        HEAD to ``remote`` sends (all of HEAD's commits before a first push).

        Raises:
            GitError: there is no HEAD commit.
        """
        return int(self._run("rev-list", "--count", "HEAD", "--not", f"--remotes={remote}", "--") or 0)

    def fetch_remote(self, remote: str = "origin") -> None:
        """``git fetch`` ``remote``'s branches (its tracking refs updated).

        Raises:
            GitError: the remote cannot be reached or read (its last line of stderr in the message).
        """
        self._run("fetch", "--quiet", "--", remote)

    def push_branch(self, remote: str, branch: str, *, set_upstream: bool) -> None:
        """Push ``branch`` to the same name on ``remote`` (and track it there, with ``set_upstream``).

        Raises:
            GitError: refused (the remote has commits this branch lacks: ``rejected``) or unreachable.
        """
        self._run("push", "--quiet", *(["--set-upstream"] if set_upstream else []), "--", remote,
                  f"refs/heads/{branch}:refs/heads/{branch}")

    def set_upstream(self, branch: str, upstream: str) -> None:
        """Make ``branch`` track ``upstream`` (``origin/main``).

        Raises:
            GitError: ``upstream`` is not a remote-tracking branch here.
        """
        self._run("branch", "--quiet", f"--set-upstream-to={upstream}", "--", branch)

    def merge_from(self, rev: str) -> list[str]:
        """Merge ``rev`` into the current branch (fast-forward when it can; a merge commit with git's default
        message otherwise; histories that share no commit are merged too: two machines' first commits).
        The repository's merge drivers apply (``.gitattributes``). Returns the paths left in conflict ([]: merged,
        or nothing to merge); on a conflict the merge is left in progress for a person to finish or abort.

        Raises:
            GitError: git could not start or record the merge (local changes in the way, no identity).
        """
        try:
            self._run("merge", "--no-edit", "--quiet", "--allow-unrelated-histories", rev)
            return []
        except GitError:
            conflicted = self.unmerged_paths()
            if conflicted:
                return conflicted
            raise

    def merge_in_progress(self) -> bool:
        """Whether a merge is under way here (``MERGE_HEAD`` exists: a merge stopped on conflicts, or one whose
        conflicts are resolved but not committed yet)."""
        try:
            self._run("rev-parse", "-q", "--verify", "MERGE_HEAD")
            return True
        except GitError:
            return False

    def unmerged_paths(self) -> list[str]:
        """Paths the index holds in conflict (unmerged entries: not resolved and ``git add``-ed yet), repo-relative,
        sorted; [] when there are none."""
        return sorted(set(_zsplit(self._run_bytes("diff", "--name-only", "--diff-filter=U", "-z"))))

    def status_paths(self) -> list[str]:
        """Paths with changes not committed (staged, unstaged, untracked), as ``git status`` lists them."""
        out = self._run_bytes("status", "--porcelain", "-z", "--untracked-files=all")
        return [entry[3:] for entry in _zsplit(out) if len(entry) > 3]


def init_work_tree(path: Path, *, branch: str = "main") -> Repo:
    """``git init`` a new work tree at ``path`` (created with its parents) on ``branch``; returns it.

    Raises:
        GitError: git cannot be run, or refused.
    """
    path.mkdir(parents=True, exist_ok=True)
    proc = Repo._git_at(path, "init", "--quiet", f"--initial-branch={branch}", ".")
    if proc.returncode != 0:
        raise _git_error(("init",), proc.returncode, proc.stderr)
    return Repo(path)


def clone_work_tree(url: str, path: Path) -> Repo:
    """``git clone`` ``url`` into ``path`` (which must not exist or be empty); returns the work tree.

    Raises:
        GitError: the remote cannot be reached or read, or ``path`` is in the way.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    proc = Repo._git_at(path.parent, "clone", "--quiet", "--", url, str(path))
    if proc.returncode != 0:
        raise _git_error(("clone", url), proc.returncode, proc.stderr)
    return Repo(path)


def clone_mirror(url: str, dest: Path) -> None:
    """``git clone --mirror URL DEST``: a bare copy of every ref of ``url`` (a git URL or a local path), to be
    updated with ``Repo.fetch_mirror``. ``dest`` must not exist; the caller makes the clone atomic (clone
    beside, then rename).

    Raises:
        GitError: the URL is unreachable, not a repository, or git refused; the message has git's last line.
    """
    args = ("clone", "--mirror", "--quiet", "--", url, os.fspath(dest))
    try:
        proc = subprocess.run(["git", *args], env={**_scrubbed_env(), "GIT_TERMINAL_PROMPT": "0"},
                              capture_output=True, stdin=subprocess.DEVNULL)
    except OSError as e:
        raise GitError(f"git cannot be run: {e}", "install git and put it on PATH", argv=list(args)) from e
    if proc.returncode != 0:
        raise _git_error(args, proc.returncode, proc.stderr)


#: gitmem's folder at the top of a work tree (skipped by code queries: ``skip_gitmem``).
GITMEM_TOP = GITMEM_DIR


def git_blob_sha(data: bytes) -> str:
    """The SHA git gives a blob of ``data`` (``git hash-object --no-filters``), computed in-process.

    Source: git's object format, ``sha1("blob <size>\\0" + data)`` (Pro Git §10.2).
    """
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


#: The id of git's empty tree (SHA-1 repositories): the "before" of a root commit.
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def _decode(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _zsplit(out: bytes) -> list[str]:
    """NUL-separated paths as str; paths that are not valid UTF-8 are left out."""
    return [p for p in (_decode(x) for x in out.split(b"\0") if x) if p is not None]


def _name_status(out: bytes) -> list[FileChange]:
    """Parse ``--name-status -z`` output: ``S\0path\0`` or ``Rnnn\0old\0new\0`` records."""
    fields = out.split(b"\0")
    changes: list[FileChange] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i][:1].decode("ascii", "replace")
        if status in ("R", "C"):
            old, new = _decode(fields[i + 1]), _decode(fields[i + 2])
            i += 3
            if status == "C":
                if new is not None:
                    changes.append(FileChange("A", None, new))
                continue
            if old is not None and new is not None:
                changes.append(FileChange("R", old, new))
            elif new is not None:
                changes.append(FileChange("A", None, new))
            continue
        path = _decode(fields[i + 1])
        i += 2
        if path is None:
            continue
        if status == "A":
            changes.append(FileChange("A", None, path))
        elif status == "D":
            changes.append(FileChange("D", path, None))
        else:
            changes.append(FileChange(status, path, path))
    return changes


# -- hooks (git_hooks.py) --


@dataclass(frozen=True)
class HooksPathSetting:
    """The ``core.hooksPath`` git uses, as configured.

    Attributes:
        value: the setting as written (``~`` not expanded; relative means relative
            to the work tree root).
        scope: which config file set it: "local", "worktree", "global", "system" or "command".
    """

    value: str
    scope: str


def hooks_path_setting(repo: Repo) -> HooksPathSetting | None:
    """The ``core.hooksPath`` in force for ``repo`` (the last one git reads), or None when unset.

    Raises:
        GitError: git could not read its configuration.
    """
    try:
        out = repo._run("config", "--show-scope", "--get", "core.hooksPath")
    except GitError as e:
        if e.code == 1:  # git config: key not set
            return None
        raise
    scope, _, value = out.partition("\t")
    return HooksPathSetting(value=value, scope=scope)
