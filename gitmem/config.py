"""The configuration: ``.gitmem/config.toml``'s schema, defaults and validation, and the hooks' cached reader.

Owns: ``DEFAULT_CONFIG`` (what ``gitmem init`` writes), the known sections and keys, their
checks (``validate``), reading the file merged over the defaults (``load``, for
``Store.config``), the cached reader of the agent hooks (``read_cached``: parsed with
``tomllib`` only when the file changed, else a JSON copy in the worktree's state folder), and
the hook budgets (``[claude]``: ``budget``), private-file globs (``[capture]``) and the decay
(``[ranking]``: ``decay_half_life``). Nothing
else in gitmem parses config.toml.

Guarantees: ``load`` returns every default section, validated, or raises ``ConfigError``;
``read_cached`` never raises (``{}`` when the file is missing or invalid: a hook never fails
on config).

Must not import: anything outside the standard library at module level (the per-tool-call
hooks import this module; ``tomllib`` costs ~8 ms and is imported only to parse; ``errors`` only
to raise).
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from pathlib import Path
    from typing import Any

    from .layout import Layout

#: The hint of a config file that cannot be read.
FIX_FILE = "fix the file (every key: gitmem's docs/configuration.md)"

#: The config written by ``gitmem init``. Every key is documented in docs/configuration.md.
DEFAULT_CONFIG = """\
# gitmem team settings (committed). Every key, its default and what it does: gitmem's docs/configuration.md.

[context]
# Token budget of `gitmem context` (tokens estimated as characters / 4).
budget = 1500
# Memories shown in full (title, body, facts) at the top of the context; the rest as a compact index.
detail = 3
# How not-fresh memories appear in context: "mark" (shown with their reason) or "omit".
stale = "mark"

[embeddings]
# "wordllama" (default, offline, bundled), "openai" (any OpenAI-compatible endpoint) or "none" (full-text only).
provider = "wordllama"
# For provider = "openai":
# base_url = "http://127.0.0.1:8080/v1"
# model = "text-embedding-3-small"
# api_key_env = "OPENAI_API_KEY"
# timeout = 10

[memory]
# Most characters of one memory (title, body, facts and tags together): memories are short notes; a longer text
# is refused (remember, MCP remember, import) or cut (consolidation, claude-mem import).
max_chars = 4000

[claude]
# Token budgets of what the agent hooks inject: at session start, per prompt, before a file is read or edited.
session_budget = 1500
prompt_budget = 600
file_budget = 500
# Before a shell command (its rules and traps), after a failed tool call (memories matching the failure).
# A gitmem older than these keys rejects them: uncomment once everyone sharing this file runs one that has them.
# shell_budget = 300
# failure_budget = 300

# Memories never given to an agent, searched or opened, whose code nobody committed to, for long, rank lower:
# their recency weighs 0.5 ** (idle days / decay_half_life_days). Never for constraints. false: off.
# A gitmem older than this section rejects it: uncomment once everyone sharing this file runs one that has it.
# [ranking]
# decay = true
# decay_half_life_days = 90

[share]
# When local memories (captured from agent sessions) become team memories: "with-code" (a commit that changes
# the code a local memory is anchored to carries it), "all" (every commit carries all of them), "manual"
# (`gitmem share ID`).
policy = "with-code"

[review]
# A memory whose code only moved (renamed file, moved function, same code) follows it: the pre-commit hook
# re-anchors it into the same commit (post-commit, for commits made without it). false: reported as moved.
follow_moves = true

# The warm process (one per user, serving every repository) that answers recall, context, stale, show, list and
# log without loading the index and the embedding model again. A gitmem without the warm process rejects this
# section: uncomment it once everyone sharing this file runs one that has it.
# [daemon]
# false: this repository's commands never use it; each runs in its own process.
# enabled = true
# Minutes without a request after which it drops this repository's state (it exits once it holds none; a number > 0).
# idle_minutes = 30

# `gitmem tidy` proposes retiring a memory whose anchored code has all been deleted for at least this many days.
# A gitmem older than this section rejects it: uncomment once everyone sharing this file runs one that has it.
# [tidy]
# deleted_days = 30

# How well a memory must match a prompt for the prompt hook to inject it unasked (recall and MCP search rank
# without these floors). Text: BM25 of the prompt's content words (stop words out; about 2.3 per match of a
# word one memory in ten holds) must reach min_coverage of the prompt's own score, or min_bm25 if that is less.
# min_similarity: cosine of the prompt and a memory found by vectors alone. 0 turns a floor off.
# A gitmem older than this section rejects it: uncomment once everyone sharing this file runs one that has it.
# [relevance]
# min_bm25 = 8.0
# min_coverage = 0.6
# min_similarity = 0.45

# The organisation index (gitmem's docs/org.md): every listed repository's committed memories in LanceDB tables
# on S3-compatible object storage (credentials only from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, never here),
# searched with `gitmem recall --org`; `gitmem org index` builds it. Your own ~/.config/gitmem/config.toml may hold
# the same section; this file's keys win. A gitmem older than this section rejects it: uncomment once everyone
# sharing this file runs one that has it.
# [org]
# uri = "s3://acme-gitmem/org"          # or a folder, for one machine
# endpoint = "https://s3.example.com"   # "" = AWS_ENDPOINT_URL, else AWS's own
# region = ""                           # "" = AWS_REGION, else us-east-1
# ref = ""                              # the ref indexed in each repository; "" = its default branch
# name = ""                             # this repository's name in the org; "" = its origin URL's last part
# inject = false                        # org memories at session start and per prompt, in their own budgets
# session_budget = 300
# prompt_budget = 200
# [org.repos]
# ledger = "https://git.example.com/acme/ledger.git"
# billing = "../billing"

[capture]
# Files never captured, in addition to .env*, *.pem, *.key, id_rsa*, secrets/** and the other defaults.
private_files = []

# Consolidation of captured sessions through an OpenAI-compatible endpoint (without it: rules).
# [llm]
# base_url = "http://127.0.0.1:8080/v1"
# model = "qwen3-8b"
# api_key_env = "OPENAI_API_KEY"
# timeout = 60
# extra_body = { chat_template_kwargs = { enable_thinking = false } }
"""

#: Sections config.toml may have (``KNOWN_KEYS``: their keys), and for [context] each key's check: (test, what it
#: must be).
KNOWN_SECTIONS = ("context", "embeddings", "claude", "capture", "llm", "share", "review", "memory", "ranking",
                  "daemon", "tidy", "relevance", "org", "personal")
_CONTEXT_KEYS: dict[str, tuple[Any, str]] = {
    "budget": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1, "an integer >= 1"),
    "detail": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0, "an integer >= 0"),
    "stale": (lambda v: v in ("mark", "omit"), '"mark" or "omit"'),
}


#: The schema of config.toml, one row per key: (section, key, what it must be, default, what it does). The one
#: owner of the keys gitmem knows (``KNOWN_KEYS`` is made from it) and of their reference, docs/configuration.md
#: (``reference_markdown``; ``python -m testing.config_docs`` rewrites the page, a test checks it is current).
#: A default of None means unset; ``{}`` and ``[]`` empty. The checks themselves are ``validate``'s (and, for
#: [embeddings] and [llm], their owners', ``embed`` and ``capture.llm``); a test checks each default here against
#: ``DEFAULT_CONFIG`` and the constants the code uses.
SCHEMA: tuple[tuple[str, str, str, Any, str], ...] = (
    ("context", "budget", "an integer >= 1", 1500,
     "token budget of `gitmem context` (tokens estimated as characters / 4)"),
    ("context", "detail", "an integer >= 0", 3, "memories shown in full; the rest as a one-line index"),
    ("context", "stale", '"mark" or "omit"', "mark",
     'not-fresh memories in context: `"mark"` (shown with their reason, ranked lower) or `"omit"`'),
    ("embeddings", "provider", '"wordllama", "openai" or "none"', "wordllama",
     '`"wordllama"` (offline, bundled), `"openai"` (any OpenAI-compatible endpoint), `"none"` (full-text only)'),
    ("embeddings", "base_url", "a URL", None, 'for `"openai"` (required): the endpoint, e.g. `http://127.0.0.1:11434/v1`'),
    ("embeddings", "model", "a model name", None,
     'for `"openai"` (required): the embedding model; for `"wordllama"` only `l2_supercat_256`, the bundled one'),
    ("embeddings", "api_key_env", "an environment variable's name", "OPENAI_API_KEY",
     'for `"openai"`: the *name* of the environment variable holding the key (never the key)'),
    ("embeddings", "timeout", "a number > 0", 10.0, 'for `"openai"`: seconds per request'),
    ("embeddings", "dimensions", "an integer > 0", None,
     'for `"openai"`: sent as `dimensions` (models that support it); unset: the model\'s own length'),
    ("embeddings", "max_retries", "an integer >= 0", 2, 'for `"openai"`: the client\'s retries on 429/5xx'),
    ("embeddings", "batch_size", "an integer > 0", 64, 'for `"openai"`: texts per request'),
    ("memory", "max_chars", "an integer >= 200", 4000,
     "most characters of one memory (title, body, facts, tags): memories are short notes; longer text is refused by "
     "`remember`, MCP `remember` and `import` (with a hint) and cut by consolidation and the claude-mem import"),
    ("claude", "session_budget", "an integer >= 1", 1500,
     "tokens every agent's hooks inject at session start (all agents, not only Claude Code)"),
    ("claude", "prompt_budget", "an integer >= 1", 600, "tokens the hooks inject per prompt"),
    ("claude", "file_budget", "an integer >= 1", 500, "tokens the hooks inject before a file is read or edited"),
    ("claude", "shell_budget", "an integer >= 1", 300,
     "tokens the hooks inject before a shell command (its rules and traps)"),
    ("claude", "failure_budget", "an integer >= 1", 300,
     "tokens the hooks inject after a failed tool call (memories matching the failure)"),
    ("ranking", "decay", "true or false", True,
     "rank lower the memories never given, searched or opened whose code was not committed to for long (never a "
     "`constraint`); `false`: off"),
    ("ranking", "decay_half_life_days", "a number > 0", 90.0,
     "days of idleness (since written, last used, or the last commit to the anchored code) after which a memory's "
     "recency weighs half; a quarter after twice as long"),
    ("relevance", "min_bm25", "a number >= 0", 8.0,
     "how well a memory must match a prompt for the prompt hook to inject it unasked (`recall` and MCP `search` rank "
     "without these floors): its BM25 over the prompt's content words (stop words out) must reach `min_coverage` of "
     "what the prompt scores against itself, or `min_bm25` if less; `0`: off (calibration: `bench/relevance.py`)"),
    ("relevance", "min_coverage", "a number >= 0", 0.6, "see `relevance.min_bm25`; `0`: off"),
    ("relevance", "min_similarity", "a number >= 0", 0.45,
     "the cosine a memory only the vectors find needs with the prompt; `0`: off"),
    ("share", "policy", '"with-code", "all" or "manual"', "with-code",
     'when local memories become team memories: `"with-code"` (with the commit that changes their code), `"all"` '
     '(every commit carries all of them), `"manual"` (`gitmem share ID`)'),
    ("review", "follow_moves", "true or false", True,
     "a memory whose code only moved (renamed file, moved or renamed function, same code) is re-anchored by the "
     "pre-commit hook and staged into that commit; `false`: reported as moved"),
    ("tidy", "deleted_days", "an integer >= 0", 30,
     "`gitmem tidy` proposes retiring a memory once all its anchored code has been deleted (by commits) for this "
     "many days"),
    ("capture", "private_files", "a list of globs", [],
     "files never captured, added to `.env*`, `*.pem`, `*.key`, `id_rsa*`, `secrets/**` and the other defaults"),
    ("llm", "base_url", "a URL", None,
     "consolidation and `gitmem tidy`'s contradiction check through this OpenAI-compatible chat endpoint; unset: "
     "rules"),
    ("llm", "model", "a model name", None, "the chat model (with `base_url`)"),
    ("llm", "api_key_env", "an environment variable's name", "OPENAI_API_KEY",
     "the *name* of the environment variable holding the key (never the key)"),
    ("llm", "timeout", "a number > 0", 60.0, "seconds per request"),
    ("llm", "max_retries", "an integer >= 0", 1, "the client's retries on 429/5xx"),
    ("llm", "extra_body", "a table", {},
     "merged into every request, e.g. `{ chat_template_kwargs = { enable_thinking = false } }` to switch a "
     "reasoning model's thinking off"),
    ("llm", "max_input_chars", "an integer > 0", 24_000, "characters of a session's transcript sent per request"),
    ("daemon", "enabled", "true or false", True,
     "`false`: this repository's commands never use the warm process; each runs in its own process"),
    ("daemon", "idle_minutes", "a number > 0", 30,
     "minutes without a request for this repository after which the warm process drops its state (and exits once "
     "it holds none)"),
    ("org", "uri", "a string", "",
     "where the organisation index lives: `s3://BUCKET/PREFIX`, or a local folder (a path or `file://` URI) for one "
     "machine; `\"\"`: no index"),
    ("org", "endpoint", "a string", "",
     "the S3 endpoint URL of a server that is not AWS (Ceph RGW, MinIO, ...); `\"\"`: `AWS_ENDPOINT_URL_S3`, else "
     "`AWS_ENDPOINT_URL` from the environment, else AWS's own"),
    ("org", "region", "a string", "",
     "the S3 region; `\"\"`: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1`"),
    ("org", "ref", "a string", "", "the ref indexed in each repository; `\"\"`: its default branch"),
    ("org", "name", "a string", "",
     "this repository's name in the organisation (what `REPO:PATH::SYMBOL` anchors and the index's `repo` use; "
     "letters, digits, `.`, `_`, `-`); `\"\"`: the last part of its `origin` URL, else its folder's name"),
    ("org", "inject", "true or false", False,
     "`true`: agents are given the organisation's memories unasked at session start and per prompt (labelled "
     "`org: <repo>`), within the two budgets below; `false`: only when asked (`gitmem recall --org`, MCP "
     "`org_search`)"),
    ("org", "session_budget", "an integer >= 1", 300,
     "tokens of org memories given at session start (with `inject = true`), on top of the project's own"),
    ("org", "prompt_budget", "an integer >= 1", 200,
     "tokens of org memories given per prompt (with `inject = true`), on top of the project's own"),
    ("org", "session_timeout", "seconds in (0, 7]", 5.0,
     "seconds a session start waits for the organisation's memories (with `inject = true`; at most `7`: the "
     "session start's own limit is 8 s); past it the session starts without them and `org-hooks.log` says so"),
    ("org", "repos", "a table of NAME = \"LOCATION\"", {},
     "`[org.repos]`: the repositories `gitmem org index` indexes, `NAME = \"LOCATION\"`: a git URL (mirrored under "
     "`~/.cache/gitmem/org`) or a local path (relative to the repository holding the config; use absolute paths in "
     "your own file)"),
    ("personal", "enabled", "true or false", True,
     "`false`: your personal memories are not given in this repository (in a project's file: its choice for "
     "everyone; in yours: everywhere; yours wins)"),
    ("personal", "session_budget", "an integer >= 1", 300,
     "tokens of personal memories given at session start, on top of the project's own"),
    ("personal", "prompt_budget", "an integer >= 1", 200,
     "tokens of personal memories given per prompt, on top of the project's own"),
)

#: Every key each section may have, from ``SCHEMA`` (the values of [embeddings] and [llm] are checked by their
#: owners, ``embed`` and ``capture.llm``, which read these sets). A section or key not here is a newer gitmem's:
#: ``load`` warns about it in one line (``unknown_warning``) and ignores it, never fails on it (issue 20: a
#: teammate on a newer gitmem must not turn memories off for the whole team).
KNOWN_KEYS: dict[str, frozenset[str]] = {
    name: frozenset(key for section, key, *_ in SCHEMA if section == name) for name in KNOWN_SECTIONS}


#: Each section's heading in docs/configuration.md (``reference_markdown``), in ``KNOWN_SECTIONS`` order.
SECTION_TITLES = {
    "context": "what `gitmem context` gives",
    "embeddings": "the vectors of search",
    "claude": "what every agent's hooks inject (every agent, not only Claude Code)",
    "capture": "what is never captured from sessions",
    "llm": "consolidation through a model",
    "share": "when local memories become team memories",
    "review": "code that only moved",
    "memory": "one memory's size",
    "ranking": "memories nobody uses",
    "daemon": "the warm process",
    "tidy": "`gitmem tidy`",
    "relevance": "what a prompt is given unasked",
    "org": "the organisation index ([org.md](org.md))",
    "personal": "your personal memories ([personal.md](personal.md))",
}


def _toml_value(value: Any) -> str:
    """``value`` (a ``SCHEMA`` default) as written in config.toml, in backticks; ``unset`` for None."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, (dict, list)):
        return "`{}`" if isinstance(value, dict) else "`[]`"
    return f"`{json.dumps(value)}`"


def reference_markdown() -> str:
    """docs/configuration.md's generated part: one Markdown table per section of ``SCHEMA`` (key, what it must be,
    default, what it does), headed by ``SECTION_TITLES``; a str ending in a newline."""
    out = []
    for name in KNOWN_SECTIONS:
        out += [f"### `[{name}]`: {SECTION_TITLES[name]}", "", "| key | default | must be | what it does |",
                "|---|---|---|---|"]
        for section, key, kind, default, meaning in SCHEMA:
            if section == name:
                shown = f"`{name}.{key}`" if key != "repos" else f"`[{name}.repos]` `NAME`"
                out.append(f"| {shown} | {_toml_value(default)} | {kind} | {meaning} |")
        out.append("")
    return "\n".join(out)


def unknown_items(cfg: dict[str, Any]) -> list[str]:
    """The sections (``[name]``, or a top-level ``name``) and keys (``section.key``) of ``cfg`` (config.toml as
    written) that this gitmem does not know, in file order."""
    out = []
    for name, value in cfg.items():
        if name not in KNOWN_KEYS:
            out.append(f"[{name}]" if isinstance(value, dict) else name)
        elif isinstance(value, dict):
            out += [f"{name}.{key}" for key in value if key not in KNOWN_KEYS[name]]
    return out


def unknown_warning(cfg: dict[str, Any], where: str) -> str | None:
    """One line about ``unknown_items`` of ``cfg`` (``where``: the file as shown), None when there is none."""
    items = unknown_items(cfg)
    if not items:
        return None
    from . import __version__

    them = "it" if len(items) == 1 else "them"
    return (f"{where}: {', '.join(items)} unknown to this gitmem ({__version__}; a newer gitmem's?), ignored: "
            f"upgrade gitmem to use {them}")


def without_unknown(cfg: dict[str, Any]) -> dict[str, Any]:
    """``cfg`` without its ``unknown_items``."""
    return {name: ({k: v for k, v in value.items() if k in KNOWN_KEYS[name]} if isinstance(value, dict) else value)
            for name, value in cfg.items() if name in KNOWN_KEYS}


def validate(cfg: dict[str, Any], where: str) -> None:
    """Check ``cfg`` (merged over the defaults); ``where`` names the file in messages.

    [embeddings], [llm] and [share] values are checked by their owners when used
    (``embed``, ``capture.llm``, ``share``); here: the sections, and the keys of [context],
    [claude], [review], [share], [capture], [memory], [ranking], [daemon], [tidy] and [relevance].

    Raises:
        ConfigError: an unknown section or key, or a value of the wrong type or range.
    """
    from .errors import ConfigError

    hint = "fix the value (every key: gitmem's docs/configuration.md)"
    for key in cfg:
        if key not in KNOWN_SECTIONS:
            raise ConfigError(f"{where}: unknown section [{key}]", f"known sections: {', '.join(KNOWN_SECTIONS)}")
        if not isinstance(cfg[key], dict):
            raise ConfigError(f"{where}: '{key}' must be a [section]", hint)
    for key, value in cfg.get("claude", {}).items():
        if key not in DEFAULT_BUDGETS:
            raise ConfigError(f"{where}: unknown key claude.{key}",
                              f"known keys: {', '.join(DEFAULT_BUDGETS)}")
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            raise ConfigError(f"{where}: claude.{key} must be an integer >= 1, got {value!r}", hint)
    for key, value in cfg.get("review", {}).items():
        if key != "follow_moves" or not isinstance(value, bool):
            raise ConfigError(f"{where}: review.{key} = {value!r}: the known key is follow_moves (true or false)", hint)
    for key, value in cfg.get("share", {}).items():
        if key != "policy":
            raise ConfigError(f"{where}: unknown key share.{key}", "known keys: policy")
        if value not in ("with-code", "all", "manual"):
            raise ConfigError(f"{where}: share.policy must be \"with-code\", \"all\" or \"manual\", got {value!r}",
                              hint)
    for key, value in cfg.get("capture", {}).items():
        if key != "private_files":
            raise ConfigError(f"{where}: unknown key capture.{key}", "known keys: private_files")
        if not (isinstance(value, list) and all(isinstance(g, str) for g in value)):
            raise ConfigError(f"{where}: capture.private_files must be a list of globs", hint)
    for key, value in cfg.get("memory", {}).items():
        if key != "max_chars":
            raise ConfigError(f"{where}: unknown key memory.{key}", "known keys: max_chars")
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= MIN_MAX_CHARS):
            raise ConfigError(f"{where}: memory.max_chars must be an integer >= {MIN_MAX_CHARS}, got {value!r}", hint)
    for key, value in cfg.get("ranking", {}).items():
        if key == "decay":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: ranking.decay must be true or false, got {value!r}", hint)
        elif key == "decay_half_life_days":
            if not (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0):
                raise ConfigError(f"{where}: ranking.decay_half_life_days must be a number > 0, got {value!r}", hint)
        else:
            raise ConfigError(f"{where}: unknown key ranking.{key}", "known keys: decay, decay_half_life_days")
    for key, value in cfg.get("daemon", {}).items():
        if key == "enabled":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: daemon.enabled must be true or false, got {value!r}", hint)
        elif key == "idle_minutes":
            if not (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0):
                raise ConfigError(f"{where}: daemon.idle_minutes must be a number > 0, got {value!r}", hint)
        else:
            raise ConfigError(f"{where}: unknown key daemon.{key}", "known keys: enabled, idle_minutes")
    for key, value in cfg.get("tidy", {}).items():
        if key != "deleted_days":
            raise ConfigError(f"{where}: unknown key tidy.{key}", "known keys: deleted_days")
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            raise ConfigError(f"{where}: tidy.deleted_days must be an integer >= 0, got {value!r}", hint)
    for key, value in cfg.get("relevance", {}).items():
        if key not in RELEVANCE_KEYS:
            raise ConfigError(f"{where}: unknown key relevance.{key}", f"known keys: {', '.join(RELEVANCE_KEYS)}")
        if not (isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0):
            raise ConfigError(f"{where}: relevance.{key} must be a number >= 0, got {value!r}", hint)
    _validate_scopes(cfg, where, hint)
    for key, value in cfg["context"].items():
        if key not in _CONTEXT_KEYS:
            raise ConfigError(f"{where}: unknown key context.{key}", f"known keys: {', '.join(_CONTEXT_KEYS)}")
        ok, what = _CONTEXT_KEYS[key]
        if not ok(value):
            raise ConfigError(f"{where}: context.{key} must be {what}, got {value!r}", hint)



def _is_budget(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def _validate_scopes(cfg: dict[str, Any], where: str, hint: str) -> None:
    """The checks of ``[org]`` (with ``[org.repos]``) and ``[personal]`` (issue 21) for ``validate``."""
    from .errors import ConfigError

    for key, value in cfg.get("org", {}).items():
        if key in ("uri", "endpoint", "region", "ref", "name"):
            if not isinstance(value, str):
                raise ConfigError(f"{where}: org.{key} must be a string, got {value!r}", hint)
        elif key == "inject":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: org.inject must be true or false, got {value!r}", hint)
        elif key in ("session_budget", "prompt_budget"):
            if not _is_budget(value):
                raise ConfigError(f"{where}: org.{key} must be an integer >= 1, got {value!r}", hint)
        elif key == "session_timeout":
            if not is_org_timeout(value):
                raise ConfigError(f"{where}: org.session_timeout must be seconds in (0, "
                                  f"{MAX_ORG_SESSION_TIMEOUT_S:g}], got {value!r}", hint)
        elif key == "repos":
            if not (isinstance(value, dict) and all(isinstance(k, str) and k and isinstance(v, str) and v
                                                    for k, v in value.items())):
                raise ConfigError(f"{where}: [org.repos] must map repository names to paths or git URLs",
                                  'e.g. ledger = "https://git.example.com/acme/ledger.git"')
        else:
            raise ConfigError(f"{where}: unknown key org.{key}", f"known keys: {', '.join(sorted(KNOWN_KEYS['org']))}")
    for key, value in cfg.get("personal", {}).items():
        if key == "enabled":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: personal.enabled must be true or false, got {value!r}", hint)
        elif key in ("session_budget", "prompt_budget"):
            if not _is_budget(value):
                raise ConfigError(f"{where}: personal.{key} must be an integer >= 1, got {value!r}", hint)
        else:
            raise ConfigError(f"{where}: unknown key personal.{key}",
                              f"known keys: {', '.join(sorted(KNOWN_KEYS['personal']))}")


#: Seconds a session start waits for the organisation's memories (``[org] session_timeout``); past it the session
#: starts without them. A cold search loads LanceDB and the embedding model (1.7–2.3 s, bench/README.md
#: "Organisation memories in the hooks"), so 5 s leaves room on a busy machine. At most 7 s: the session start's
#: own limit is 8 s (``integrations.agents.core.TIME_LIMITS``), and the repository's context needs the rest.
DEFAULT_ORG_SESSION_TIMEOUT_S = 5.0
MAX_ORG_SESSION_TIMEOUT_S = 7.0


def is_org_timeout(v: object) -> bool:
    """Whether ``v`` is a valid ``[org] session_timeout``: seconds in (0, ``MAX_ORG_SESSION_TIMEOUT_S``]."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= MAX_ORG_SESSION_TIMEOUT_S


#: ``[memory] max_chars``: its default, and the least it may be set to (characters).
DEFAULT_MAX_CHARS = 4000
MIN_MAX_CHARS = 200


def max_chars(cfg: dict[str, Any]) -> int:
    """``[memory] max_chars`` of ``cfg`` (validated by ``validate``): the most characters of one memory."""
    section = cfg.get("memory")
    v = section.get("max_chars", DEFAULT_MAX_CHARS) if isinstance(section, dict) else DEFAULT_MAX_CHARS
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= MIN_MAX_CHARS else DEFAULT_MAX_CHARS


#: ``[ranking] decay_half_life_days``: a quarter of a year. Most projects ship and revisit their code within one;
#: a memory nobody was given and whose code nobody committed to for a whole quarter weighs half in the recency
#: component, after a year a sixteenth (``usage.fade``).
DEFAULT_DECAY_HALF_LIFE_DAYS = 90.0


def decay_half_life(cfg: dict[str, Any]) -> float | None:
    """The decay half-life in days of ``cfg`` (``[ranking]``), or None when decay is off (``decay = false``);
    the default when missing or invalid (the hooks read config.toml unvalidated)."""
    section = cfg.get("ranking")
    section = section if isinstance(section, dict) else {}
    if section.get("decay", True) is False:
        return None
    v = section.get("decay_half_life_days", DEFAULT_DECAY_HALF_LIFE_DAYS)
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
    return float(v) if ok else DEFAULT_DECAY_HALF_LIFE_DAYS
#: ``[relevance]``'s keys: the prompt hook's score floors (``rank.relevance``: their defaults and calibration).
RELEVANCE_KEYS = ("min_bm25", "min_coverage", "min_similarity")


def relevance_floors(cfg: dict[str, Any]) -> tuple[float, float, float]:
    """``[relevance]`` of ``cfg`` (raw or merged): (min_bm25, min_coverage, min_similarity), each the default
    (``rank.relevance.DEFAULT_MIN_BM25`` / ``DEFAULT_MIN_COVERAGE`` / ``DEFAULT_MIN_SIMILARITY``) when missing or
    not a number >= 0 (the hooks read config.toml unvalidated)."""
    from .rank.relevance import DEFAULT_MIN_BM25, DEFAULT_MIN_COVERAGE, DEFAULT_MIN_SIMILARITY

    section = cfg.get("relevance")
    section = section if isinstance(section, dict) else {}

    def number(key: str, default: float) -> float:
        v = section.get(key, default)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else default

    return (number("min_bm25", DEFAULT_MIN_BM25), number("min_coverage", DEFAULT_MIN_COVERAGE),
            number("min_similarity", DEFAULT_MIN_SIMILARITY))


#: ``[daemon] idle_minutes``: minutes without a request for a repository after which the warm process drops that
#: repository's state, and exits once it holds none. A new process takes ~1.8 CPU-seconds and ~4.5 s (a loaded
#: machine) before its first answer, and the commands meanwhile run cold (1.3–5 s each instead of ~0.17 s); kept
#: idle, it holds ~320–350 MiB for all repositories together (bench/daemon_rss.py, bench/README.md): 30 minutes
#: keeps it over a working session's pauses without lingering all day.
DEFAULT_IDLE_MINUTES = 30


def daemon_enabled(cfg: dict[str, Any]) -> bool:
    """``[daemon] enabled`` of ``cfg`` (raw or merged): True unless it is ``false``."""
    section = cfg.get("daemon")
    return not (isinstance(section, dict) and section.get("enabled") is False)


def daemon_idle_s(cfg: dict[str, Any]) -> float:
    """``[daemon] idle_minutes`` of ``cfg`` in seconds; the default when missing or not a number > 0."""
    section = cfg.get("daemon")
    v = section.get("idle_minutes", DEFAULT_IDLE_MINUTES) if isinstance(section, dict) else DEFAULT_IDLE_MINUTES
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
    return float(v if ok else DEFAULT_IDLE_MINUTES) * 60.0
#: ``[tidy] deleted_days``: its default (days). A month: long enough for a deletion to be reverted or its
#: memories re-anchored by hand, short enough that a store does not fill with memories of code long gone.
DEFAULT_DELETED_DAYS = 30


def deleted_days(cfg: dict[str, Any]) -> int:
    """``[tidy] deleted_days`` of ``cfg`` (validated by ``validate``): days all of a memory's code must have been
    deleted before ``gitmem tidy`` proposes retiring it."""
    section = cfg.get("tidy")
    v = section.get("deleted_days", DEFAULT_DELETED_DAYS) if isinstance(section, dict) else DEFAULT_DELETED_DAYS
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else DEFAULT_DELETED_DAYS


#: Token budgets of what the agent hooks inject (tokens ≈ characters / 4), keys of ``[claude]``:
#: at session start, per prompt, before a file is read or edited, before a shell command, after a failed
#: tool call (the last two small: a warning, not a briefing; about two memories in full).
DEFAULT_BUDGETS = {"session_budget": 1500, "prompt_budget": 600, "file_budget": 500, "shell_budget": 300,
                   "failure_budget": 300}
#: The hooks' copy of the parsed config, in the worktree's state folder.
CACHE_NAME = "config.json"


#: Largest config.toml read, in bytes: gitmem's whole configuration is a few hundred bytes; a committed file far
#: larger (a hostile one) would cost every hook the time to parse it.
MAX_CONFIG_BYTES = 1_000_000


def load(path: Path, where: str, warnings: list[str] | None = None) -> dict[str, Any]:
    """``path`` (config.toml) merged over ``DEFAULT_CONFIG``, validated; the defaults alone when it is missing.

    A section of the file updates the default section key by key. ``where`` names the file in messages. A
    section or key this gitmem does not know (``KNOWN_KEYS``: a newer gitmem's) is left out, and one line about
    them (``unknown_warning``) is appended to ``warnings``.

    Raises:
        ConfigError: the file is not valid TOML (or not UTF-8, or nested too deeply for the parser, or over
            ``MAX_CONFIG_BYTES``), or ``validate`` rejects a known key's value.
    """
    import tomllib

    from .errors import ConfigError

    cfg: dict[str, Any] = tomllib.loads(DEFAULT_CONFIG)
    if path.is_file():
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{where}: over {MAX_CONFIG_BYTES // 1000} kB, not read (a config is a few lines)",
                              FIX_FILE)
        try:
            user = tomllib.loads(path.read_text("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(f"{where}: invalid TOML: {e}", FIX_FILE) from None
        except RecursionError:  # tomllib recurses per nesting level: a committed file can nest thousands deep
            raise ConfigError(f"{where}: nested too deeply to read", FIX_FILE) \
                from None
        warning = unknown_warning(user, where)
        if warning is not None:
            if warnings is not None:
                warnings.append(warning)
            user = without_unknown(user)
        for k, v in user.items():
            if isinstance(v, dict) and isinstance(cfg.get(k), dict):
                cfg[k].update(v)
            else:
                cfg[k] = v
    validate(cfg, where)
    return cfg


def read_cached(lay: Layout) -> dict[str, Any]:
    """The work tree's config.toml as a dict, as written (not merged, not validated); ``{}`` when
    missing or invalid. Never raises.

    Parsed with tomllib only when the file changed (by size and modification time);
    otherwise read back from ``<worktree state>/config.json`` (JSON is already loaded in
    a hook, tomllib costs ~8 ms to import).
    """
    return _read_cached(lay.config_file, lay.worktree_dir / CACHE_NAME)


#: The hooks' copy of the user's parsed config.toml (``layout.user_config_file``), in the worktree's state folder.
USER_CACHE_NAME = "user-config.json"
#: The sections the user's config.toml may hold (issue 21): the others are a project's.
USER_SECTIONS = ("org", "personal")


def read_user_cached(lay: Layout) -> dict[str, Any]:
    """The user's config.toml (``layout.user_config_file``) as a dict, as written, ``USER_SECTIONS`` only; ``{}``
    when missing or invalid. Never raises; cached like ``read_cached`` (for the hooks)."""
    from .layout import user_config_file

    raw = _read_cached(user_config_file(), lay.worktree_dir / USER_CACHE_NAME)
    return {k: v for k, v in raw.items() if k in USER_SECTIONS}


def load_user(warnings: list[str] | None = None) -> dict[str, Any]:
    """The user's config.toml (``layout.user_config_file``), ``USER_SECTIONS`` only, validated; ``{}`` when it is
    missing. Other sections and unknown keys are left out with one line appended to ``warnings``.

    Raises:
        ConfigError: not valid TOML (or not UTF-8, too deep, over ``MAX_CONFIG_BYTES``), or a bad value.
    """
    import tomllib

    from .errors import ConfigError
    from .layout import user_config_file

    path = user_config_file()
    where = str(path)
    if not path.is_file():
        return {}
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise ConfigError(f"{where}: over {MAX_CONFIG_BYTES // 1000} kB, not read", FIX_FILE)
    try:
        raw = tomllib.loads(path.read_text("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{where}: invalid TOML: {e}", FIX_FILE) from None
    except RecursionError:
        raise ConfigError(f"{where}: nested too deeply to read", FIX_FILE) from None
    other = [f"[{k}]" for k in raw if k not in USER_SECTIONS]
    if other and warnings is not None:
        warnings.append(f"{where}: {', '.join(other)} ignored: this file holds only [org] and [personal] "
                        "(the rest is a project's .gitmem/config.toml)")
    user = {k: v for k, v in raw.items() if k in USER_SECTIONS}
    warning = unknown_warning(user, where)
    if warning is not None:
        if warnings is not None:
            warnings.append(warning)
        user = without_unknown(user)
    validate({"context": {}, **user}, where)
    return user


def scopes(project: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    """``{"org": {...}, "personal": {...}}``: the sections of the organisation and personal scopes, from the
    project's config (``project``, raw or merged) and the user's (``user``, from ``load_user`` or
    ``read_user_cached``).

    ``[org]``: the user's keys, then the project's over them key by key (the team's index is the team's choice);
    ``[org.repos]`` is the union, the project's location winning for a name in both. ``[personal]``: the project's
    keys, then the user's over them (the person decides about their own memories). Values are as given (the
    readers of each key, ``org.settings``, fall back to defaults on a bad value).
    """
    def section(cfg: dict[str, Any], name: str) -> dict[str, Any]:
        v = cfg.get(name)
        return v if isinstance(v, dict) else {}

    org = {**section(user, "org"), **section(project, "org")}
    repos_user, repos_project = section(section(user, "org"), "repos"), section(section(project, "org"), "repos")
    if repos_user or repos_project:
        org["repos"] = {**repos_user, **repos_project}
    personal = {**section(project, "personal"), **section(user, "personal")}
    return {"org": org, "personal": personal}


def _read_cached(path: Path, cache: Path) -> dict[str, Any]:
    try:
        st = path.stat()
    except OSError:
        return {}
    stamp = f"{st.st_mtime_ns}:{st.st_size}"
    try:
        cached = json.loads(cache.read_bytes())
        if cached.get("stamp") == stamp and isinstance(cached.get("config"), dict):
            return cached["config"]  # type: ignore[no-any-return]  # JSON: a dict checked above
    except (OSError, ValueError, AttributeError):
        pass
    if st.st_size > MAX_CONFIG_BYTES:
        return {}
    try:
        import tomllib

        cfg = tomllib.loads(path.read_text("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    try:
        from . import infra

        infra.atomic_write(cache, json.dumps({"stamp": stamp, "config": cfg}, default=str).encode(), fsync=False)
    except OSError:
        pass
    return cfg


def budget(cfg: dict[str, Any], key: str) -> int:
    """``[claude] <key>`` of ``cfg`` (a key of ``DEFAULT_BUDGETS``) in tokens; the default when
    missing or not a positive integer."""
    raw = cfg.get("claude")
    section = raw if isinstance(raw, dict) else {}
    v = section.get(key, DEFAULT_BUDGETS[key])
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else DEFAULT_BUDGETS[key]


def private_files(cfg: dict[str, Any]) -> tuple[str, ...]:
    """``[capture] private_files`` of ``cfg``: the globs given, strings only (``()`` when none)."""
    section = cfg.get("capture")
    extra = section.get("private_files", []) if isinstance(section, dict) else []
    return tuple(g for g in extra if isinstance(g, str)) if isinstance(extra, list) else ()
