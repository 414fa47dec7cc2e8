"""The one error hierarchy of gitmem.

Library code raises these; only the CLI's top-level wrapper (and the hook
wrappers, which log instead) render them. Each error has a one-line ``message``
saying what is wrong and a ``hint`` saying what to do.
"""

from __future__ import annotations


class GitmemError(Exception):
    """Base of every expected gitmem failure.

    Attributes:
        message: one line, what went wrong (names the file or object concerned).
        hint: one line, what the user can do about it ("" when there is nothing to do).
    """

    exit_code = 1

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class NotARepository(GitmemError):
    """The working directory (or given path) is not inside a git work tree."""


class NotInitialized(GitmemError):
    """The repository has no ``.gitmem/`` directory (``gitmem init`` was not run)."""


class GitError(GitmemError):
    """A git command failed. ``argv``, ``code`` and ``stderr`` say which and how."""

    def __init__(self, message: str, hint: str = "", *, argv: list[str] | None = None,
                 code: int | None = None, stderr: str = "") -> None:
        super().__init__(message, hint)
        self.argv = argv or []
        self.code = code
        self.stderr = stderr


class MissingObject(GitError):
    """A partial clone (``git clone --filter=…``) lacks an object it was promised and could not fetch it now (its
    promisor remote unreachable, or fetching not allowed here: the git hooks). Not a broken repository: the
    object can be fetched later. Readers say "unchecked" with ``message`` rather than a verdict.

    Attributes:
        oid: the missing object's full id.
        wanted: what was being read when it was found missing (``pkg/a.py at 1a2b3c4d5e6f``, ``1a2b…``), or "".
        remote: the promisor remote it can be fetched from ("" when none is configured).
    """

    def __init__(self, oid: str, wanted: str = "", remote: str = "", *, why: str = "") -> None:
        self.oid, self.wanted, self.remote = oid, wanted, remote
        what = f"object {oid}" + (f" ({wanted})" if wanted and wanted != oid else "")
        where = remote or "its promisor remote"
        super().__init__(f"{what} is not in this partial clone" + (f": {why}" if why else ""),
                         f"fetch it when {where} can be reached: {self.fetch_command}", argv=["cat-file", "--batch"])

    @property
    def fetch_command(self) -> str:
        """The command that fetches it: ``git fetch REMOTE OID``."""
        return f"git fetch {self.remote or 'origin'} {self.oid}"


class MemoryFileError(GitmemError):
    """A memory file cannot be read: bad YAML, unknown type, conflict markers, bad anchor.

    Attributes:
        path: the file's path (repo-relative POSIX when known).
        line: 1-based line of the problem, or None.
    """

    def __init__(self, path: str, message: str, hint: str = "", line: int | None = None) -> None:
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}", hint)
        self.path = path
        self.line = line


class MemoryNotFound(GitmemError):
    """No memory has the given id (or id prefix)."""


class AnchorError(GitmemError):
    """An anchor cannot be made: unknown file, unknown symbol, path outside the repository.

    Attributes:
        candidates: closest symbol names in that file (may be empty).
    """

    def __init__(self, message: str, hint: str = "", candidates: list[str] | None = None) -> None:
        super().__init__(message, hint)
        self.candidates = candidates or []


class IndexUnavailable(GitmemError):
    """The LanceDB index cannot be opened or rebuilt."""


class EmbeddingError(GitmemError):
    """The configured embedding provider failed (endpoint down, bad answer)."""


class OrgStoreError(GitmemError):
    """The organisation index's object store cannot be used: unreachable, refused credentials, or it ignores
    conditional writes (LanceDB would lose rows on it)."""

    exit_code = 2


class OrgNameTaken(GitmemError):
    """A repository claims a name the organisation index holds for another repository (different root commits):
    indexing it would replace the other's rows (``org.index``)."""

    exit_code = 2


class MissingExtra(GitmemError):
    """A feature needs a package of gitmem's ``all`` extra that this install lacks (a lean ``pip install gitmem-cli``).

    The message is the whole story in one line: what needs it, the missing package, the command that installs
    the extra (``extras.install_command``); no hint. Exit 2, like a usage error: nothing was attempted.

    Attributes:
        feature: what needs it, as a user names it (``gitmem mcp``, ``the organisation index``).
        module: the top-level import name that is missing (``mcp``, ``lancedb``).
    """

    exit_code = 2

    def __init__(self, feature: str, module: str, command: str) -> None:
        super().__init__(f"{feature} needs gitmem's `all` extra ({module} is not installed): {command}")
        self.feature = feature
        self.module = module


class ConfigError(GitmemError):
    """``.gitmem/config.toml`` is invalid."""
