"""Which gitmem runs here: its installed distribution (``gitmem-cli``), how it was installed and from where.

Owns: ``DIST_NAME`` (the distribution's name on the package index); ``detect`` (an ``Install``: the version
running and the one the metadata records, the install mode — an editable install of a clone, a built wheel
from the index or a file, or a source tree the metadata does not know —, the environment — a ``uv tool``
or ``pipx`` environment, a virtual environment, the system's Python —, and the folders); ``describe`` and
``version_text`` (what ``gitmem --version`` and ``gitmem doctor`` print).

Reads the distribution's metadata with ``importlib.metadata``: PEP 610's ``direct_url.json`` (an editable
install's clone, the wheel file or URL it came from; absent for an install from the index), the
``INSTALLER`` file, and the marker files the tools leave in the environment's folder (uv's
``uv-receipt.toml``, pipx's ``pipx_metadata.json``).

Guarantees: never raises for what it finds (a broken or missing metadata file is a finding).
Must not import: anything outside the standard library and ``gitmem`` itself; it is never on a hook's path
(``importlib.metadata`` alone costs 35-150 ms a process, ``bench/package.py``: why ``gitmem.__version__`` is a
constant).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from . import __version__

#: The distribution's name on the package index (the command and the import package are ``gitmem``).
DIST_NAME = "gitmem-cli"
#: Other distributions that provide an importable ``gitmem``: an earlier gitmem's own name, and the unrelated
#: project of that name on PyPI. Installed beside ``gitmem-cli`` in one environment, they overwrite each other.
CONFLICTING = ("gitmem",)
#: The install modes ``detect`` tells apart.
MODES = ("editable", "wheel", "source")
#: The environments ``detect`` tells apart.
ENVIRONMENTS = ("uv tool", "pipx", "venv", "system")


@dataclass
class Install:
    """The gitmem running in this process, as installed.

    ``version``: the running code's (``gitmem.__version__``); ``dist_version``: the installed metadata's, None
    when no ``gitmem-cli`` distribution is installed in this Python. ``mode``: ``editable`` (``source`` is the
    clone's folder), ``wheel`` (``source``: the wheel file or URL it was installed from, None from the package
    index) or ``source`` (the running package is not the installed distribution's, e.g. a checkout on
    ``PYTHONPATH``; ``source``: the folder holding the package). ``environment``: one of ``ENVIRONMENTS``;
    ``prefix``: ``sys.prefix`` (a uv tool's or pipx's environment folder); ``python``: ``sys.executable``;
    ``scripts``: the folder of this install's console scripts; ``package``: the running ``gitmem`` folder;
    ``installer``: the ``INSTALLER`` file's tool (``pip``, ``uv``), ``""`` when unknown; ``on_path``: the
    ``gitmem`` command on ``PATH`` (None when none); ``problems``: one line each, what is wrong with the
    install (``conflicts`` names the other distributions that provide ``gitmem``).
    """

    version: str
    dist_version: str | None
    mode: str
    source: str | None
    environment: str
    prefix: str
    python: str
    scripts: str
    package: str
    installer: str = ""
    on_path: str | None = None
    conflicts: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _package_dir() -> Path:
    return Path(__file__).resolve().parent


def _file_url_path(url: str) -> str | None:
    """The local path of a ``file:`` URL, else None."""
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return None
    return unquote(parsed.path)


def _direct_url(dist: metadata.Distribution) -> dict[str, object] | None:
    """PEP 610's ``direct_url.json`` of ``dist`` as an object, None when absent or unreadable."""
    try:
        text = dist.read_text("direct_url.json")
    except OSError:
        return None
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def environment() -> str:
    """The kind of environment this Python runs in (one of ``ENVIRONMENTS``): a uv tool (uv's
    ``uv-receipt.toml`` in ``sys.prefix``), pipx's (``pipx_metadata.json``), another virtual environment, or
    the system's Python."""
    prefix = Path(sys.prefix)
    if (prefix / "uv-receipt.toml").is_file():
        return "uv tool"
    if (prefix / "pipx_metadata.json").is_file():
        return "pipx"
    if sys.prefix != sys.base_prefix:
        return "venv"
    return "system"


def _same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _installed(dist: metadata.Distribution) -> bool:
    """Whether ``dist`` was installed by an installer (it has a ``RECORD``), not a build's ``*.egg-info`` left in
    a source tree that happens to be on ``sys.path``."""
    try:
        return dist.read_text("RECORD") is not None
    except OSError:
        return False


def _holds(dist: metadata.Distribution, package: Path) -> tuple[str, str | None] | None:
    """``(mode, source)`` when ``dist`` is the install of the running ``package`` folder, else None."""
    direct = _direct_url(dist) or {}
    url = direct.get("url") if isinstance(direct.get("url"), str) else None
    dir_info = direct.get("dir_info")
    if isinstance(dir_info, dict) and dir_info.get("editable") and url:
        clone = _file_url_path(str(url))
        return ("editable", clone) if clone is not None and _same_file(Path(clone) / "gitmem", package) else None
    if _same_file(str(dist.locate_file("gitmem/__init__.py")), package / "__init__.py"):
        return "wheel", (_file_url_path(str(url)) or str(url)) if url else None
    return None


def _where(dist: metadata.Distribution) -> str:
    direct = _direct_url(dist) or {}
    url = direct.get("url")
    if isinstance(direct.get("dir_info"), dict) and isinstance(url, str):
        return f"an editable install of {_file_url_path(url) or url}"
    return f"in {dist.locate_file('')}"


def detect() -> Install:
    """The gitmem running in this process, as installed (see ``Install``). Never raises."""
    package = _package_dir()
    problems: list[str] = []
    source: str | None = os.fspath(package.parent)
    mode, dist_version, installer = "source", None, ""
    try:
        dists = [d for d in metadata.distributions(name=DIST_NAME) if _installed(d)]
    except Exception:  # noqa: BLE001 - unreadable metadata is a finding of the report, not a crash of it
        dists = []
    mine = None
    for dist in dists:
        try:
            held = _holds(dist, package)
        except (OSError, ValueError):  # an unreadable metadata file: not this install's, as far as can be told
            held = None
        if held is not None:
            mine, (mode, source) = dist, held
            break
    if mine is not None:
        dist_version = mine.version
        try:
            installer = (mine.read_text("INSTALLER") or "").strip()
        except (OSError, ValueError):
            installer = ""
        if dist_version != __version__:
            again = f"pip install -e {source}" if mode == "editable" else f"reinstall {DIST_NAME}"
            problems.append(f"the installed metadata says {DIST_NAME} {dist_version}, the code is {__version__}: "
                            f"{again} (the warm process and the hooks compare versions)")
    elif dists:
        problems.append(f"{DIST_NAME} {dists[0].version} is installed ({_where(dists[0])}), but the gitmem "
                        f"running is the one in {package}")
    conflicts = []
    for name in CONFLICTING:
        try:
            others = [d for d in metadata.distributions(name=name) if _installed(d)]
        except Exception:  # noqa: BLE001 - metadata too broken to say: not reported as a conflict
            others = []
        for other in others[:1]:
            conflicts.append(f"{name} {other.version}")
            problems.append(f"a distribution named {name} ({other.version}: an earlier gitmem's name, or the "
                            f"unrelated PyPI project) is installed here too and provides a gitmem package: "
                            + (f"uninstall both ({name} and {DIST_NAME}), then install {DIST_NAME} again"
                               if dists else f"uninstall it, then install {DIST_NAME}"))
    from .integrations.agents.installing import scripts_dir  # the folder `gitmem install` writes to bin-dir

    return Install(version=__version__, dist_version=dist_version, mode=mode, source=source,
                   environment=environment(), prefix=sys.prefix, python=sys.executable,
                   scripts=os.fspath(scripts_dir()), package=os.fspath(package), installer=installer,
                   on_path=shutil.which("gitmem"), conflicts=conflicts, problems=problems)


def path_is_this(inst: Install) -> bool | None:
    """Whether the ``gitmem`` on ``PATH`` is this install's script (None when there is none on ``PATH``)."""
    if inst.on_path is None:
        return None
    return _same_file(inst.on_path, Path(inst.scripts) / "gitmem")


def describe(inst: Install) -> str:
    """One line: how this gitmem is installed and where, e.g. ``editable install of the clone /src/gitmem, in the
    venv /src/gitmem/.venv (Python 3.12.3)``."""
    env = {"uv tool": "the uv tool environment", "pipx": "the pipx environment", "venv": "the venv",
           "system": "the Python of"}[inst.environment]
    where = f"in {env} {inst.prefix}" if inst.environment != "system" else f"in the system Python {inst.prefix}"
    py = f"(Python {sys.version.split()[0]})"
    if inst.mode == "editable":
        what = f"editable install of the clone {inst.source}"
    elif inst.mode == "wheel":
        what = f"wheel from {inst.source}" if inst.source else "wheel from the package index"
    else:
        what = f"source tree {inst.source}, not an installed {DIST_NAME}"
    return f"{what}, {where} {py}"


def version_text(inst: Install | None = None) -> str:
    """What ``gitmem --version`` prints: ``gitmem-cli X.Y.Z`` then where it runs from (``describe``) and the
    install's problems, one line each."""
    inst = inst or detect()
    lines = [f"{DIST_NAME} {inst.version}", describe(inst)]
    lines += [f"warning: {p}" for p in inst.problems]
    return "\n".join(lines)
