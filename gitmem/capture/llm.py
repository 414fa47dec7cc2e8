"""Structured answers from an OpenAI-compatible chat endpoint (the ``[llm]`` table of config.toml): observations
of a session (consolidation), and verdicts on pairs of memories that may contradict (``gitmem tidy``).

::

    [llm]
    base_url = "http://127.0.0.1:8080/v1"   # any OpenAI-compatible server (required to enable)
    model = "qwen3-8b"                      # required
    api_key_env = "OPENAI_API_KEY"          # the variable holding the key (unset: "none" is sent)
    timeout = 60                            # seconds per request
    max_retries = 1                         # the openai client's retries on connection errors, 429, 5xx
    extra_body = { chat_template_kwargs = { enable_thinking = false } }   # merged into every request

The model is asked for one JSON object ``{"observations": [...]}`` (``observe``), or
``{"pairs": [{"pair", "contradicts", "why"}]}`` (``judge_contradictions``). Reasoning
models: ``<think>…</think>`` text and ``reasoning_content`` are dropped, never
stored; an empty answer with ``finish_reason == "stop"`` means "nothing to
record". An answer that is not valid JSON of that shape is asked for once more;
a second failure raises ``LLMOutputError`` (the caller then consolidates
deterministically, or tidy judges by its rules).
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from .. import config, extras
from ..errors import ConfigError, GitmemError
from ..model import MEMORY_TYPES

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

_KEYS = set(config.KNOWN_KEYS["llm"])
#: Characters of session transcript sent per request (about 6k tokens at 4 characters per token).
MAX_INPUT_CHARS = 24_000
MAX_OBSERVATIONS = 8

SYSTEM_PROMPT = """You turn a coding-agent session into durable memories for a software repository.
Record only what a future engineer or agent working on this code would need and could not see from the code
itself: decisions and their reasons, constraints ("never call X from Y"), gotchas and failed attempts, bugs and
their root causes, non-obvious behaviour discovered. Skip routine reads, listings, formatting, and anything
already obvious from the diff. Never include secrets, tokens or passwords.

Answer with one JSON object and nothing else:
{"observations": [{"type": "<one of: %s>", "title": "<one line, under 100 characters>",
  "body": "<2-6 sentences>", "facts": ["<short fact>", ...], "tags": ["<concept>", ...],
  "files": ["<repo-relative path>", ...], "symbols": ["<path>::<Qualified.Name>", ...]}]}
Use only files and symbols that appear in the session. If nothing is worth remembering, answer
{"observations": []}.""" % ", ".join(MEMORY_TYPES)  # noqa: UP031 - JSON braces all through the text


class LLMOutputError(GitmemError):
    """The model's answer was not valid observations JSON, twice."""


@dataclass
class Observation:
    """One validated observation: what the model says is worth remembering, and where."""

    type: str
    title: str
    body: str = ""
    facts: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    symbols: list[str] = field(default_factory=list)


@dataclass
class LLMConfig:
    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 60.0
    max_retries: int = 1
    extra_body: dict[str, Any] = field(default_factory=dict)
    max_input_chars: int = MAX_INPUT_CHARS


def llm_config(cfg: dict[str, Any] | None) -> LLMConfig | None:
    """The ``[llm]`` table as an ``LLMConfig``; None when it is absent or has no ``base_url``.

    Raises:
        ConfigError: unknown key, missing model, a value of the wrong type.
    """
    cfg = dict(cfg or {})
    if not cfg.get("base_url"):
        return None
    extra = sorted(set(cfg) - _KEYS)
    if extra:
        raise ConfigError(f"[llm] unknown key(s): {', '.join(extra)}", f"allowed: {', '.join(sorted(_KEYS))}")
    for k in ("base_url", "model"):
        if not isinstance(cfg.get(k), str) or not cfg[k].strip():
            raise ConfigError(f"[llm] needs `{k}` (a string)",
                              'e.g. base_url = "http://127.0.0.1:8080/v1", model = "qwen3-8b"')
    if not isinstance(cfg.get("extra_body", {}), dict):
        raise ConfigError("[llm] extra_body must be a table", "e.g. extra_body = { temperature = 0 }")
    for k in ("timeout", "max_retries", "max_input_chars"):
        v = cfg.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
            raise ConfigError(f"[llm] {k} = {v!r} must be a non-negative number", "fix .gitmem/config.toml")
    return LLMConfig(base_url=cfg["base_url"].strip(), model=cfg["model"].strip(),
                     api_key_env=str(cfg.get("api_key_env", "OPENAI_API_KEY")),
                     timeout=float(cfg.get("timeout", 60.0)), max_retries=int(cfg.get("max_retries", 1)),
                     extra_body=dict(cfg.get("extra_body", {})),
                     max_input_chars=int(cfg.get("max_input_chars", MAX_INPUT_CHARS)))


_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.S | re.I)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.M)


def _answer_list(text: str, key: str) -> list[Any]:
    """The ``key`` list of the JSON object in a model answer (thinking text and code fences dropped; the object
    from the first ``{`` to the last ``}``).

    Raises:
        ValueError: no JSON object, or no ``key`` list in it.
    """
    text = _FENCE.sub("", _THINK.sub("", text)).strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the answer")
    data = json.loads(text[start:end + 1])
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        raise ValueError(f'the answer has no "{key}" list')
    items: list[Any] = data[key]
    return items


def parse_observations(text: str) -> list[Observation]:
    """Validated observations from a model answer; thinking text and code fences are dropped.

    Raises:
        ValueError: not a JSON object with an ``observations`` list.
    """
    data = {"observations": _answer_list(text, "observations")}
    out: list[Observation] = []
    for raw in data["observations"][:MAX_OBSERVATIONS]:
        if not isinstance(raw, dict):
            continue
        title = raw.get("title")
        if not isinstance(title, str) or not title.strip():
            continue
        mtype = raw.get("type")
        if not isinstance(mtype, str) or mtype not in MEMORY_TYPES:
            mtype = "discovery"
        body = raw.get("body")
        if not isinstance(body, str):
            body = ""
        out.append(Observation(type=mtype, title=" ".join(title.split())[:160], body=body.strip()[:4000],
                               facts=_strs(raw, "facts"), tags=_strs(raw, "tags"), files=_strs(raw, "files"),
                               symbols=_strs(raw, "symbols")))
    return out


def _strs(raw: dict[str, Any], key: str, limit: int = 12) -> list[str]:
    """The non-blank strings of the list ``raw[key]``, stripped, the first ``limit``; [] when it is no list."""
    v = raw.get(key)
    return [s.strip() for s in v if isinstance(s, str) and s.strip()][:limit] if isinstance(v, list) else []


@dataclass
class LLMAnswer:
    observations: list[Observation]
    model: str
    attempts: int


def observe(config: LLMConfig, transcript: str) -> LLMAnswer:
    """Ask the model for observations of ``transcript`` (already redacted).

    Raises:
        LLMOutputError: two answers that are not valid observations.
        GitmemError: the endpoint cannot be reached or refuses (one line, with the URL).
    """
    none: list[Observation] = []
    observations, attempts = _ask_json(config, SYSTEM_PROMPT, transcript[:config.max_input_chars],
                                       parse_observations, empty=none, what="observations",
                                       fallback="consolidation fell back to rules",
                                       refused="the session was consolidated by rules instead")
    return LLMAnswer(observations, config.model, attempts)


T = TypeVar("T")


def _ask_json(config: LLMConfig, system: str, user: str, parse: Callable[[str], T], *, empty: T | None,
              what: str, fallback: str, refused: str) -> tuple[T, int]:
    """One chat completion of ``system`` + ``user``, its answer through ``parse`` (which raises ``ValueError``
    for an answer of the wrong shape); a wrong answer is asked for once more. Returns (the parsed answer,
    attempts). ``empty``: what an answer with no visible text and ``finish_reason == "stop"`` means (None: a
    wrong answer). ``what``, ``fallback``, ``refused``: the words of the errors.

    Raises:
        LLMOutputError: two answers that ``parse`` refuses.
        GitmemError: the endpoint cannot be reached or refuses (one line, with the URL); ``MissingExtra``
            without the ``openai`` package (gitmem's ``all`` extra).
    """
    with extras.needed("the [llm] model"):  # a lean install: a GitmemError, so callers fall back to rules
        import openai  # ~0.4 s: only the detached consolidation and tidy pay it

    client = openai.OpenAI(base_url=config.base_url, api_key=os.environ.get(config.api_key_env or "") or "none",
                           timeout=config.timeout, max_retries=config.max_retries)
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": system},
                                                  {"role": "user", "content": user}]
    last_error = ""
    for attempt in (1, 2):
        try:
            resp = client.chat.completions.create(model=config.model, messages=messages,
                                                  temperature=0, extra_body=config.extra_body or None)
        except openai.OpenAIError as e:
            raise GitmemError(f"LLM request to {config.base_url} failed: {type(e).__name__}: "
                              f"{str(e).splitlines()[0] if str(e) else ''}",
                              f"check [llm] in .gitmem/config.toml; {fallback}") from None
        choice = resp.choices[0] if resp.choices else None
        content = (choice.message.content or "") if choice is not None and choice.message is not None else ""
        visible = _THINK.sub("", content).strip()
        if not visible and empty is not None and choice is not None and choice.finish_reason == "stop":
            return empty, attempt  # a reasoning model with nothing to say
        try:
            return parse(content), attempt
        except ValueError as e:
            last_error = str(e)
            messages = messages[:2] + [
                {"role": "assistant", "content": visible[:2000]},
                {"role": "user", "content": "That was not valid JSON of the requested shape "
                                            f"({last_error}). Answer again with only the JSON object."}]
    raise LLMOutputError(f"the model's answer was not valid {what} JSON twice ({last_error})", refused)


CONTRADICTION_PROMPT = """You check notes about the same code of a software repository for contradictions.
Two notes contradict when both cannot be true at once, or following one means breaking the other: opposite
instructions (always / never, must / must not), different values for the same setting or name, a different tool
or command for the same job. Notes that say different but compatible things, or where one only adds detail,
do not contradict.

You get numbered pairs. Answer with one JSON object and nothing else:
{"pairs": [{"pair": <number>, "contradicts": true or false, "why": "<one line quoting both sides>"}, ...]}"""

#: Pairs sent in one request to the model (each note cut to ``MAX_NOTE_CHARS``).
PAIRS_PER_REQUEST = 10
MAX_NOTE_CHARS = 1200


def parse_verdicts(text: str, n: int) -> list[tuple[bool, str] | None]:
    """The model's verdict on each of ``n`` pairs: (contradicts, why), None for a pair it did not answer.

    Raises:
        ValueError: not a JSON object with a ``pairs`` list.
    """
    data = {"pairs": _answer_list(text, "pairs")}
    out: list[tuple[bool, str] | None] = [None] * n
    for raw in data["pairs"]:
        if not isinstance(raw, dict):
            continue
        i, verdict = raw.get("pair"), raw.get("contradicts")
        if isinstance(i, int) and not isinstance(i, bool) and 1 <= i <= n and isinstance(verdict, bool):
            why = raw.get("why")
            out[i - 1] = (verdict, " ".join(why.split())[:300] if isinstance(why, str) else "")
    return out


def judge_contradictions(config: LLMConfig, pairs: list[tuple[str, str]]) -> list[tuple[bool, str] | None]:
    """Ask the model whether each pair of notes (texts, already redacted) contradicts; returns one verdict
    per pair, in order: (contradicts, why), or None when the model left the pair out. ``PAIRS_PER_REQUEST``
    pairs per request.

    Raises:
        LLMOutputError: two answers to one request that are not valid verdicts JSON.
        GitmemError: the endpoint cannot be reached or refuses (one line, with the URL).
    """
    out: list[tuple[bool, str] | None] = []
    for start in range(0, len(pairs), PAIRS_PER_REQUEST):
        chunk = pairs[start:start + PAIRS_PER_REQUEST]
        user = "\n\n".join(f"PAIR {i}\nA: {a[:MAX_NOTE_CHARS]}\nB: {b[:MAX_NOTE_CHARS]}"
                            for i, (a, b) in enumerate(chunk, 1))
        verdicts, _ = _ask_json(config, CONTRADICTION_PROMPT, user, functools.partial(parse_verdicts, n=len(chunk)),
                                empty=None, what="verdicts", fallback="tidy used its rules instead",
                                refused="tidy used its rules instead")
        out += verdicts
    return out
