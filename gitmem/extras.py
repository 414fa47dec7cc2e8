"""gitmem's ``all`` extra: which of its packages this install has, and the one error for a feature that lacks them.

``pip install gitmem-cli`` is the lean install: the git hooks, ``check``, ``stale``, ``remember``/``list``/``show``,
the agent hooks and BM25 retrieval from the catalog. ``gitmem-cli[all]`` adds what the rest needs (``MODULES``):
vector search (numpy and the embedder: wordllama with tokenizers and safetensors, or the ``openai`` client), the
MCP server (``mcp``), the organisation index (LanceDB, pyarrow, ``obstore``) and the LLM client.

The one owner of "this needs the all extra":

* ``require(feature, modules)``: checked before a feature starts any work (``find_spec``), ``MissingExtra`` if
  one is missing;
* ``needed(feature)``: a context manager around the imports of a feature; a ``ModuleNotFoundError`` for one of
  ``MODULES`` becomes ``errors.MissingExtra`` (exit 2, one line: what needs it, what is missing, the command that
  installs the extra). The CLI's top-level wrapper does the same for any such import it did not expect, so a lean
  install never shows a traceback;
* ``missing(modules)`` / ``search_missing(embeddings)``: what is absent, without importing it (``find_spec``: no
  package is loaded), for ``doctor`` and for choosing BM25-only retrieval (``search.lexical``);
* ``install_command()``: the command for *this* install (a ``uv tool`` environment, a pipx one, an editable
  checkout, else pip).

Standard library only; imports nothing of the extra.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from .errors import MissingExtra

#: The distribution and its extra.
DISTRIBUTION = "gitmem-cli"  # = dist.DIST_NAME (dist imports importlib.metadata: not here)
EXTRA = "all"

#: The top-level import names the ``all`` extra provides → what in gitmem needs them.
MODULES: dict[str, str] = {
    "lancedb": "the organisation index",
    "pyarrow": "the organisation index",
    "numpy": "vector search",
    "wordllama": "the default embedder",
    "tokenizers": "the default embedder",
    "safetensors": "the default embedder",
    "openai": "an OpenAI-compatible embedder or LLM",
    "mcp": "gitmem mcp",
    "obstore": "the organisation index on object storage",
}

#: What hybrid (BM25 + vector) search needs whatever the embedder (``search.hybrid``: the vectors as arrays).
INDEX_MODULES: tuple[str, ...] = ("numpy",)

#: What the organisation index needs (``gitmem.org``: its LanceDB tables).
ORG_MODULES: tuple[str, ...] = ("lancedb", "pyarrow", "numpy")

#: What each ``[embeddings] provider`` needs on top (``search.embed.PROVIDERS``).
EMBEDDER_MODULES: dict[str, tuple[str, ...]] = {
    "wordllama": ("wordllama", "tokenizers", "safetensors"),
    "openai": ("openai",),
    "none": (),
}


def is_extra_module(name: str | None) -> bool:
    """Whether ``name`` (a dotted import name, as ``ModuleNotFoundError.name`` holds) is one of ``MODULES``."""
    return bool(name) and str(name).partition(".")[0] in MODULES


def installed(module: str) -> bool:
    """Whether ``module`` can be imported here, without importing it (``importlib.util.find_spec``)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a finder that refuses it, a half-removed package
        return False


def missing(modules: Iterable[str] = MODULES) -> list[str]:
    """The names of ``modules`` (default: all of ``MODULES``) that cannot be imported here, in the order given."""
    return [m for m in modules if not installed(m)]


def search_missing(embeddings: dict[str, object] | None = None) -> list[str]:
    """What hybrid search lacks here: numpy, then the ``[embeddings]`` provider's modules ([] = it can run).

    ``embeddings``: the ``[embeddings]`` table of config.toml (default provider ``wordllama``); an unknown
    provider needs only numpy here (``search.embed`` reports the bad config).
    """
    provider = str((embeddings or {}).get("provider", "wordllama")).lower()
    return missing((*INDEX_MODULES, *EMBEDDER_MODULES.get(provider, ())))


def install_command() -> str:
    """The one command that adds the ``all`` extra to the install running this process (which install: ``dist``).

    A ``uv tool`` environment (its ``uv-receipt.toml``) → ``uv tool install --reinstall "gitmem-cli[all]"``;
    a pipx one (``pipx_metadata.json``) → ``pipx install --force "gitmem-cli[all]"``; an editable install of a
    checkout → ``pip install -e "CHECKOUT[all]"``; else ``pip install "gitmem-cli[all]"``.
    """
    from . import dist  # importlib.metadata, ~30 ms: only on the way to an error message

    spec = f'"{DISTRIBUTION}[{EXTRA}]"'
    env = dist.environment()
    if env == "uv tool":
        return f"uv tool install --reinstall {spec}"
    if env == "pipx":
        return f"pipx install --force {spec}"
    inst = dist.detect()
    if inst.mode == "editable" and inst.source:
        return f'pip install -e "{inst.source}[{EXTRA}]"'
    return f"pip install {spec}"


def error(feature: str, module: str) -> MissingExtra:
    """The ``MissingExtra`` for ``feature`` lacking ``module`` (its top-level name is used), with this install's
    command."""
    return MissingExtra(feature, module.partition(".")[0], install_command())


def require(feature: str, modules: Iterable[str] = ORG_MODULES) -> None:
    """Check before any work that ``modules`` (default: the organisation index's, ``ORG_MODULES``) are installed.

    Raises:
        MissingExtra: the first of ``modules`` that is missing, named with ``feature``.
    """
    absent = missing(modules)
    if absent:
        raise error(feature, absent[0])


@contextmanager
def needed(feature: str) -> Iterator[None]:
    """Run the block; a ``ModuleNotFoundError`` for a module of ``MODULES`` raised in it becomes ``MissingExtra``
    naming ``feature`` (e.g. ``"gitmem mcp"``). Any other exception passes unchanged.

    Raises:
        MissingExtra: the block needed a package of the ``all`` extra that is not installed.
    """
    try:
        yield
    except ModuleNotFoundError as e:
        if not is_extra_module(e.name):
            raise
        raise error(feature, str(e.name)) from None
