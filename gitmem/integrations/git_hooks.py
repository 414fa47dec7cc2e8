"""Install, uninstall and check gitmem's git hooks.

Owns the hook files gitmem writes: one small POSIX sh shim per hook
(``gitmem/resources/hook-tmpl``), put where git will run it (``git rev-parse
--git-path hooks``: follows local and global ``core.hooksPath`` and linked
worktrees). A hook that was there before is chained, never clobbered: it moves
to ``<hook>.legacy`` and the shim runs it first with the same arguments and
stdin, returning its exit code. gitmem's own part (``python -m
gitmem.hook_entry``) never changes that exit code and is skipped silently when
the interpreter or the package is gone.

Guarantees: installing twice leaves every file byte-identical; ``uninstall``
removes only gitmem's shims and puts the ``.legacy`` files back; a shim written by
an older gitmem (lower ``SHIM_VERSION``) is rewritten in place, a newer one is
left alone.

Must not import: lancedb, tree-sitter, the LLM client, ``gitmem.code``.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from gitmem.git import Repo, hooks_path_setting

#: The hooks gitmem installs. Adding "pre-commit" here is enough to manage it too:
#: the shim passes the legacy hook's exit code through, so a blocking hook still blocks.
HOOK_NAMES: tuple[str, ...] = ("post-commit", "post-merge", "post-checkout", "post-rewrite", "pre-commit")

#: Format version of the shim, written in its marker line. Bump it whenever
#: ``resources/hook-tmpl`` changes so that ``install`` upgrades older shims.
SHIM_VERSION = 2

#: Suffix a foreign hook gets when gitmem's shim takes its place.
LEGACY_SUFFIX = ".legacy"

_MARKER_RE = re.compile(rb"^# gitmem-hook: v(\d+)$", re.MULTILINE)
#: ``hooks/git-hook`` (the dispatcher for hook managers): gitmem's, but the user's file.
_DISPATCHER_RE = re.compile(rb"^# gitmem-hook-dispatcher: v(\d+)$", re.MULTILINE)
_PYTHON_RE = re.compile(r"^INSTALL_PYTHON=(.*)$", re.MULTILINE)
_BLOCK_START = "# start templated\n"
_BLOCK_END = "# end templated\n"
#: How far into a file the marker may sit (it is on line 2 of the shim).
_MARKER_SCAN_BYTES = 512


@dataclass
class HookState:
    """Where one hook stands, for ``gitmem doctor`` and ``gitmem hooks status``.

    Attributes:
        name: the hook, e.g. "post-commit".
        path: the file git runs for it (in the hooks dir git uses now).
        installed: ``path`` is gitmem's shim (or gitmem's dispatcher, ``hooks/git-hook``).
        ours_current: installed and written by this gitmem version's template.
        legacy: the chained ``<hook>.legacy`` next to ``path``, or None.
        will_run: git will run gitmem's shim for this hook (installed where git looks, executable).
        problem: "" or one line saying what is wrong and what to do.
    """

    name: str
    path: Path
    installed: bool
    ours_current: bool
    legacy: Path | None
    will_run: bool
    problem: str


@dataclass
class InstallReport:
    """What ``install`` did.

    Attributes:
        hooks_dir: the directory the shims were written to (where git runs hooks).
        installed: hooks whose shim was written (new, upgraded, or re-pointed to another Python).
        already: hooks whose shim was already current (files untouched).
        chained: hooks whose previous (foreign) hook moved to ``<hook>.legacy``; also in ``installed``.
        notes: lines to show the user (global hooks dir, husky, files inside the work tree,
            conflicts that kept a hook from being installed).
        skipped: hooks left as they were because of a conflict (the reason is in ``notes``).
    """

    hooks_dir: Path
    installed: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    chained: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


# -- shim text ------------------------------------------------------------------------------


def _template() -> str:
    return (resources.files("gitmem") / "resources" / "hook-tmpl").read_text(encoding="utf-8")


def render_shim(name: str, python: str) -> bytes:
    """The shim for hook ``name`` that runs gitmem with interpreter ``python`` (absolute path)."""
    tmpl = _template()
    head, rest = tmpl.split(_BLOCK_START, 1)
    _, tail = rest.split(_BLOCK_END, 1)
    block = f"HOOK_NAME={shlex.quote(name)}\nINSTALL_PYTHON={shlex.quote(python)}\n"
    return (head + _BLOCK_START + block + _BLOCK_END + tail).encode("utf-8")


def _head(path: Path) -> bytes:
    """The first bytes of the file at ``path`` (following symlinks), b"" when unreadable."""
    try:
        with open(path, "rb") as f:
            return f.read(_MARKER_SCAN_BYTES)
    except OSError:
        return b""


def shim_version(path: Path) -> int | None:
    """The format version of gitmem's shim at ``path``; None when it is not one.

    A symlink is never counted as gitmem's shim, even if it points at one: gitmem
    writes plain files and must not write through someone else's link.
    """
    if path.is_symlink() or not path.is_file():
        return None
    m = _MARKER_RE.search(_head(path))
    return int(m.group(1)) if m else None


def _dispatcher_version(path: Path) -> int | None:
    m = _DISPATCHER_RE.search(_head(path))
    return int(m.group(1)) if m else None


def _is_dispatcher(path: Path) -> bool:
    return _dispatcher_version(path) is not None


def baked_python(path: Path) -> str | None:
    """The interpreter written into gitmem's shim at ``path`` (None if unreadable)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = _PYTHON_RE.search(text)
    if not m:
        return None
    try:
        words = shlex.split(m.group(1))
    except ValueError:
        return None
    return words[0] if len(words) == 1 else None


def _write_executable(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file + rename), mode 0755."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


# -- where ------------------------------------------------------------------------------------


def _default_hooks_dir(repo: Repo) -> Path:
    """Where hooks live without core.hooksPath: the common git dir's hooks/ (shared by worktrees)."""
    return repo.common_dir / "hooks"


def _show(repo: Repo, path: Path) -> str:
    """``path`` relative to the work tree root when inside it, else absolute, POSIX style."""
    try:
        return path.relative_to(repo.root).as_posix()
    except ValueError:
        return path.as_posix()


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False


def _is_husky_generated(hooks_dir: Path) -> bool:
    """husky v9 keeps generated hooks in ``.husky/_`` (with its helper ``h``) and regenerates them."""
    return (hooks_dir.name == "_" and hooks_dir.parent.name == ".husky") or (
        (hooks_dir / "h").is_file() and (hooks_dir / ".gitignore").is_file())


def _placement_notes(repo: Repo, hooks_dir: Path) -> list[str]:
    """Notes on where the hooks dir is, for the install report."""
    notes: list[str] = []
    setting = hooks_path_setting(repo)
    if setting is not None:
        where = _show(repo, hooks_dir)
        if setting.scope in ("global", "system"):
            notes.append(
                f"core.hooksPath={setting.value} is set in your {setting.scope} git config: "
                f"the hooks in {where} run in every repository that has no core.hooksPath of its own; "
                f"gitmem's hooks do nothing where there is no .gitmem/ and always run the hook "
                f"that was there before (set a local core.hooksPath or run `gitmem hooks uninstall` "
                f"to stop)")
        else:
            notes.append(f"core.hooksPath={setting.value} ({setting.scope} config): "
                         f"installed into {where}, where git runs hooks")
    if _inside(hooks_dir, repo.root) and not _inside(hooks_dir, repo.git_dir) \
            and not _inside(hooks_dir, repo.common_dir):
        notes.append(f"{_show(repo, hooks_dir)} is inside the work tree: do not commit gitmem's "
                     f"hook files or the *.legacy files there (they name this machine's Python)")
    if _is_husky_generated(hooks_dir):
        notes.append(f"husky regenerates {_show(repo, hooks_dir)} when it is installed (npm install): "
                     f"run `gitmem hooks install` again after that")
    return notes


# -- install / uninstall ------------------------------------------------------------------------


def install(repo: Repo, *, python: str = sys.executable) -> InstallReport:
    """Install gitmem's shim for every hook in ``HOOK_NAMES`` where git will run it.

    ``python`` is the interpreter baked into the shims (absolute path; default: the
    one running gitmem). A foreign hook in the way moves to ``<hook>.legacy`` and is
    chained; if ``<hook>.legacy`` exists already, that hook is skipped with a note.

    Returns:
        The report; ``installed``/``already``/``chained``/``skipped`` follow ``HOOK_NAMES`` order.

    Raises:
        GitError: git could not say where hooks go.
        OSError: the hooks dir cannot be created or written.
    """
    hooks_dir = repo.hooks_dir()
    report = InstallReport(hooks_dir=hooks_dir)
    report.notes.extend(_placement_notes(repo, hooks_dir))
    hooks_dir.mkdir(parents=True, exist_ok=True)
    for name in HOOK_NAMES:
        _install_one(repo, hooks_dir, name, python, report)
    return report


def _install_one(repo: Repo, hooks_dir: Path, name: str, python: str, report: InstallReport) -> None:
    path = hooks_dir / name
    legacy = hooks_dir / (name + LEGACY_SUFFIX)
    want = render_shim(name, python)
    if not os.path.lexists(path):
        _write_executable(path, want)
        report.installed.append(name)
        return
    version = shim_version(path)
    if version is not None:
        if version > SHIM_VERSION:
            report.already.append(name)
            report.notes.append(f"{_show(repo, path)} was written by a newer gitmem "
                                f"(shim v{version}); left as is")
        elif path.read_bytes() == want and os.access(path, os.X_OK):
            report.already.append(name)
        else:
            _write_executable(path, want)
            report.installed.append(name)
        return
    if _is_dispatcher(path):
        report.already.append(name)
        report.notes.append(f"{_show(repo, path)} runs gitmem's dispatcher (hooks/git-hook); left as is")
        return
    if path.is_dir():
        report.skipped.append(name)
        report.notes.append(f"{_show(repo, path)} is a directory, not a hook: {name} not installed")
        return
    if os.path.lexists(legacy):
        report.skipped.append(name)
        report.notes.append(
            f"{name} not installed: {_show(repo, path)} is another tool's hook and "
            f"{_show(repo, legacy)} exists too; merge or remove one of them, then run "
            f"`gitmem hooks install` again")
        return
    # Write the shim first under a temp name, so a failure leaves the foreign hook in place.
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=hooks_dir)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(want)
        os.chmod(tmp, 0o755)
        os.replace(path, legacy)
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    report.installed.append(name)
    report.chained.append(name)
    if not legacy.is_symlink() and legacy.is_file() and not os.access(legacy, os.X_OK):
        report.notes.append(f"{_show(repo, legacy)} (your previous {name} hook) is not executable, "
                            f"so git did not run it and gitmem's shim will not either")


def uninstall(repo: Repo) -> list[str]:
    """Remove gitmem's shims and put each ``<hook>.legacy`` back in its place.

    Looks in the hooks dir git uses now and in the default one (``.git/hooks``) when
    ``core.hooksPath`` points elsewhere. Foreign hooks and gitmem's dispatcher are left alone.

    Returns:
        The names (in ``HOOK_NAMES`` order, each once) of hooks whose shim was removed.

    Raises:
        GitError: git could not say where hooks go.
    """
    removed: list[str] = []
    dirs = [repo.hooks_dir()]
    if _default_hooks_dir(repo) != dirs[0]:
        dirs.append(_default_hooks_dir(repo))
    for name in HOOK_NAMES:
        for hooks_dir in dirs:
            path = hooks_dir / name
            legacy = hooks_dir / (name + LEGACY_SUFFIX)
            if shim_version(path) is not None:
                path.unlink()
                if name not in removed:
                    removed.append(name)
            if not os.path.lexists(path) and os.path.lexists(legacy):
                os.replace(legacy, path)
    return removed


# -- status ---------------------------------------------------------------------------------


def status(repo: Repo) -> list[HookState]:
    """Whether gitmem's hooks are installed where git will actually run them.

    Returns:
        One ``HookState`` per name in ``HOOK_NAMES``, in that order.

    Raises:
        GitError: git could not say where hooks go.
    """
    hooks_dir = repo.hooks_dir()
    default_dir = _default_hooks_dir(repo)
    setting = hooks_path_setting(repo) if hooks_dir != default_dir else None
    states = []
    for name in HOOK_NAMES:
        path = hooks_dir / name
        legacy_path = hooks_dir / (name + LEGACY_SUFFIX)
        legacy = legacy_path if os.path.lexists(legacy_path) else None
        version = shim_version(path)
        dispatcher = version is None and path.is_file() and _is_dispatcher(path)
        installed = version is not None or dispatcher
        executable = installed and os.access(path, os.X_OK)
        ours_current = version == SHIM_VERSION or (dispatcher and _dispatcher_version(path) == SHIM_VERSION)
        problem = ""
        if installed and not executable:
            problem = f"{_show(repo, path)} is not executable: git skips it (chmod +x it, or run " \
                      f"`gitmem hooks install`)"
        elif version is not None and version < SHIM_VERSION:
            problem = f"{_show(repo, path)} is an older gitmem shim (v{version}): " \
                      f"`gitmem hooks install` upgrades it"
        elif version is not None:
            py = baked_python(path)
            if py and not (os.path.isfile(py) and os.access(py, os.X_OK)):
                problem = f"{_show(repo, path)} names a Python that is gone ({py}): it falls back " \
                          f"to `gitmem`'s or python3 on PATH; `gitmem hooks install` re-points it"
        elif not installed:
            old = default_dir / name
            if setting is not None and shim_version(old) is not None:
                problem = f"core.hooksPath={setting.value} points elsewhere: git will not run " \
                          f"{_show(repo, old)} (`gitmem hooks install` installs into " \
                          f"{_show(repo, hooks_dir)})"
            elif os.path.lexists(path):
                problem = f"{_show(repo, path)} is another tool's hook: `gitmem hooks install` " \
                          f"chains it"
            else:
                problem = f"not installed in {_show(repo, hooks_dir)}: run `gitmem hooks install`"
        states.append(HookState(name=name, path=path, installed=installed, ours_current=ours_current,
                                legacy=legacy, will_run=installed and executable, problem=problem))
    return states
