"""A lean install, for real: Python processes that see only the distributions ``pip install gitmem-cli`` installs.

``lean_env(folder)`` builds, in ``folder``, a view of this venv's site-packages holding only the lean closure:
the distributions ``pyproject.toml``'s ``[project] dependencies`` require, transitively (markers evaluated for
this interpreter, extras not followed), each top-level entry of their RECORD symlinked (packages, modules,
extension modules, ``.dist-info`` folders). It writes a ``sitecustomize.py`` there that swaps the venv's
site-packages for that view on ``sys.path``, and returns the environment (``PYTHONPATH``) that makes every
Python process started with it (``gitmem``, the git hooks it installed, the warm process it spawns) load it.

In such a process ``import lancedb`` raises ``ModuleNotFoundError`` and ``importlib.util.find_spec("mcp")`` is
None, exactly as in a venv where only the lean distributions were installed; gitmem itself comes from this
checkout (the editable install's finder, set up by its ``.pth`` before ``sitecustomize`` runs).

Seconds, no network, no second install. ``lean_distributions()`` and ``all_only()`` say what is in and out.
"""

from __future__ import annotations

import sysconfig
import tomllib
from importlib.metadata import Distribution, distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent

SITECUSTOMIZE = '''\
"""Written by testing/lean.py: this process sees only the lean install's distributions."""
import sys

REAL = {real!r}
VIEW = {view!r}
sys.path[:] = [VIEW if p in REAL else p for p in sys.path]
'''


def _installed() -> dict[str, Distribution]:
    """Canonical name → distribution, for this venv (first found wins, as imports do)."""
    found: dict[str, Distribution] = {}
    for d in distributions():
        name = d.metadata["Name"]
        if name:
            found.setdefault(canonicalize_name(name), d)
    return found


def _closure(requirements: list[str], dists: dict[str, Distribution]) -> set[str]:
    """Canonical names of the distributions ``requirements`` need here, transitively (extras not followed)."""
    seen: set[str] = set()
    todo = list(requirements)
    while todo:
        req = Requirement(todo.pop())
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name in seen or name not in dists:
            continue
        seen.add(name)
        todo.extend(dists[name].requires or ())
    return seen


def base_requirements() -> list[str]:
    """``[project] dependencies`` of this checkout's ``pyproject.toml``: what ``pip install gitmem-cli`` installs."""
    return list(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])


def all_requirements() -> list[str]:
    """The ``all`` extra's requirements in ``pyproject.toml`` (self-references to gitmem left out)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    return [r for r in extras["all"] if not canonicalize_name(Requirement(r).name).startswith("gitmem")]


def lean_distributions() -> set[str]:
    """Canonical names of the lean install's distributions present in this venv."""
    return _closure(base_requirements(), _installed())


def all_only() -> set[str]:
    """Canonical names of the distributions only the ``all`` extra brings (hidden from a lean process)."""
    dists = _installed()
    return _closure(all_requirements(), dists) - _closure(base_requirements(), dists)


def lean_env(folder: Path) -> dict[str, str]:
    """Build the view and its ``sitecustomize.py`` in ``folder`` (see the module docstring); returns
    ``{"PYTHONPATH": folder}`` to merge into a subprocess's environment."""
    view = folder / "site-packages"
    view.mkdir(parents=True, exist_ok=True)
    dists = _installed()
    ours = {n for n in dists if n in ("gitmem", "gitmem-cli")}  # its own metadata, as an install has it
    for name in sorted(lean_distributions() | ours):
        for f in dists[name].files or ():
            top = f.parts[0]
            if top in ("..", "__pycache__") or (view / top).exists():
                continue
            target = Path(str(f.locate()))
            for _ in f.parts[1:]:
                target = target.parent
            if target.exists():
                (view / top).symlink_to(target)
    paths = sysconfig.get_paths()
    real = sorted({paths["purelib"], paths["platlib"]})
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE.format(real=real, view=str(view)))
    return {"PYTHONPATH": str(folder)}
