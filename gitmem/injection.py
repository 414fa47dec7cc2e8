"""Instruction-like text in a memory: the one detector of lines that tell an agent to act, not inform it.

Owns: the named rules (``RULES``: each a name, why it is dangerous, and a pattern) and ``scan``, which
finds the lines of a text that match one. Used where a memory enters (``memories.remember``, consolidation,
``import``, the MCP ``remember`` tool), by ``gitmem check`` (a memory file with such a line fails it, with the
line number and the rule) and by ``rank.render`` (a flagged line is withheld from what agents are given).

A memory is a note from the repository, shown to every teammate's agent; a line that asks that agent to run a
downloaded script, to ignore its instructions, to send data somewhere, to run encoded code, or that poses as a
system/role message or as gitmem's own frame, is what a prompt injection looks like, whoever wrote it.

Rules are narrow on purpose: an engineering note that *talks about* such things ("never pipe curl to sh in
CI", "the installer used to run `curl | sh`; we vendor it now") must pass. A line is exempt from the
command rules when a negation governs the command right before it (``NEGATION_SOURCE``); the rules were measured on
gitmem's own commit messages and README and on ``bench/retrieval.py``'s memories (docs/trust.md, "What the
agent is told").

Guarantees: pure and deterministic; standard library only (the per-tool-call hooks import it through
``rank.render``); linear in the text (no backtracking-prone patterns: every repetition is bounded or
over a class that excludes what follows it).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

#: Longest stretch of a line searched at once, in characters (bounds the regex work per search); a longer line
#: is searched in windows this long, each overlapping the one before by ``WINDOW_OVERLAP``.
MAX_LINE_CHARS = 2000
#: Characters a window shares with the one before: more than any rule's longest match (pipe-to-shell: a fetch
#: word, 300 characters, ``|`` and a shell; ~330) plus ``NEGATION_SOURCE``'s 40-character look-back, so a command that
#: straddles a window's start is whole in the window before.
WINDOW_OVERLAP = 500

#: Characters a reader does not see, which split a command's words for a pattern yet not for a model reading
#: the text ("cu\u200brl"): zero-width spaces and joiners, word joiner and invisible operators, soft hyphen,
#: BOM, Mongolian vowel separator, bidirectional marks, embeddings, overrides and isolates (CVE-2021-42574,
#: "Trojan Source"), variation selectors, and the Unicode tag characters (U+E0000–E007F, "ASCII smuggling":
#: invisible text that models read). Removed before the rules search a line (``invisible``).
INVISIBLE_SOURCE = ("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
                    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
                    "\U000e0000-\U000e0fff]")


@functools.cache
def invisible() -> re.Pattern[str]:
    """``INVISIBLE_SOURCE`` compiled, on first use (only text that is not ASCII needs it)."""
    return re.compile(INVISIBLE_SOURCE)

#: A negation right before a command ("never", "don't", "do not run", "avoid piping", "instead of"): the
#: line warns against the command rather than asking for it. At most one verb and a backtick may sit between.
NEGATION_SOURCE = (
    r"(?:\bnever|\bdon'?t|\bdo not|\bmust not|\bmustn'?t|\bshould not|\bshouldn'?t|\bavoid|\bno longer"
    r"|\binstead of|\brather than|\bnot|\bforbid(?:s|den)?|\bban(?:s|ned)?|\bprohibit(?:s|ed)?|\bstop"
    r"|\bwithout|\bused\s+to(?:\s+\w+){0,2}|\b(?:removed|dropped|replaced))\s+(?:(?:run(?:ning)?|us(?:e|ing)|pip(?:e|ing)|call(?:ing)?|execut(?:e|ing)|do(?:ing)?)\s+)?"
    r"(?:via\s+|with\s+)?`?$")


@functools.cache
def negation() -> re.Pattern[str]:
    """``NEGATION_SOURCE`` compiled (on first use: compiling the rules costs ~5 ms, and a hook whose lines hold no
    trigger never needs them)."""
    return re.compile(NEGATION_SOURCE, re.IGNORECASE)


_FETCH = r"(?:\bcurl|\bwget|\biwr|\binvoke-webrequest|\birm|\binvoke-restmethod|\bfetch)\b"
#: A program that runs the code it is given (a shell, an interpreter, PowerShell's Invoke-Expression).
_RUNNER = (r"(?:(?:ba|z|da|k|c|tc|fi|a)?sh|python[0-9.]*|perl|ruby|node|php|iex|invoke-expression|pwsh"
           r"|powershell(?:\.exe)?)\b")
#: ``_RUNNER`` as a pipe's target: behind ``sudo``, ``env`` (with options) and a folder (``/usr/bin/env bash``).
_SHELL = (r"(?:sudo\s+(?:-\S+\s+){0,4})?(?:(?:/[\w.-]+){0,4}/)?(?:env\s+(?:-\S+\s+){0,4})?"
          r"(?:(?:/[\w.-]+){0,4}/)?\b" + _RUNNER)

class Rule:
    """One named rule: ``name`` (shown by ``gitmem check``), ``why`` (one line), ``pattern`` (searched in each
    line), ``negatable`` (a ``NEGATION_SOURCE`` match right before the match exempts the line)."""

    __slots__ = ("name", "why", "source", "_compiled", "negatable", "triggers")

    def __init__(self, name: str, why: str, pattern: str, triggers: tuple[str, ...], *,
                 negatable: bool = True) -> None:
        self.name = name
        self.why = why
        self.source = pattern
        self._compiled: re.Pattern[str] | None = None
        self.negatable = negatable
        #: lower-case substrings, one of which every match holds: a line with none is not searched
        #: (measured by ``bench/injection.py``: ~50 µs per line without them)
        self.triggers = triggers

    @property
    def pattern(self) -> re.Pattern[str]:
        """``source`` compiled, case-insensitive, on first use (see ``negation``)."""
        if self._compiled is None:
            self._compiled = re.compile(self.source, re.IGNORECASE)
        return self._compiled


RULES: tuple[Rule, ...] = (
    Rule("pipe-to-shell", "runs a downloaded script: whoever controls the URL runs code on the agent's machine",
         # piped into a runner, through up to three filters (``| tee x | sh``); each stretch between pipes is
         # matched possessively (``{0,300}+``), so a line of many pipes costs linear time
         rf"{_FETCH}(?:[^|\n]{{0,300}}+\|){{1,4}}?\s*{_SHELL}"
         rf"|(?:\b(?:ba|z)?sh|\bsource|\beval|\.)\s+<\(\s*{_FETCH}"
         # a runner or eval given the download as its argument: ``python -c "$(curl …)"``, ``eval `curl …` ``
         rf"|(?:\b{_RUNNER}|\beval)\s+(?:-\S+\s+){{0,3}}[\"']?(?:\$\(|`)\s*{_FETCH}"
         rf"|\b(?:iex|invoke-expression)\s*\(+\s*(?:new-object|{_FETCH})"
         # saved to a file, then that file run: ``curl -o i.sh URL && sh i.sh``, ``wget URL -O x; ./x``
         rf"|{_FETCH}[^;&|\n]{{0,300}}?(?:\s-[oO]\s*|\s--output[=\s]\s*|>\s*)[\"']?(?P<f>[\w.~/$-]{{1,200}}+)"
         r"[^;&|\n]{0,200}+(?:&&|;|\|\|)\s*(?:sudo\s+(?:-\S+\s+){0,4})?"
         rf"(?:{_RUNNER}\s+(?:-\S+\s+){{0,3}}|chmod\s+\S+\s+\S+\s*(?:&&|;)\s*|source\s+|\.\s+)?[\"']?(?:\./)?"
         r"(?P=f)(?![\w.-])"
         # the script the URL names, run right after the download: ``curl -O https://x/i.sh && sh i.sh``
         rf"|{_FETCH}[^;&|\n]{{0,300}}?/(?P<g>[\w.-]{{1,100}}+)(?:(?<=\.sh)|(?<=\.py)|(?<=\.ps1)|(?<=\.bash))"
         rf"[^;&|\n]{{0,200}}+(?:&&|;)\s*(?:sudo\s+(?:-\S+\s+){{0,4}})?(?:{_RUNNER}\s+(?:-\S+\s+){{0,3}})?"
         r"[\"']?(?:\./)?(?P=g)(?![\w.-])"
         # or made executable and run: ``wget URL; chmod +x i.sh; ./i.sh``
         rf"|{_FETCH}[^;&\n]{{0,300}}+(?:&&|;)\s*chmod\s+[+\w]*x\b[^;&\n]{{0,200}}+(?:&&|;)\s*(?:sudo\s+)?\.?/",
         ("curl", "wget", "iwr", "invoke-", "irm", "fetch", "iex")),
    Rule("encoded-exec", "runs code hidden in base64 or an encoded command: nobody reviewing the text can read it",
         r"base64\s+(?:-d|--decode|-D)\b[^\n]{0,200}\|\s*(?:" + _SHELL + r")"
         r"|\b(?:exec|eval)\s*\(\s*(?:__import__\(\s*['\"]base64['\"]\s*\)|base64)\.b64decode"
         r"|\b(?:exec|eval)\s*\(\s*(?:atob|Buffer\.from)\s*\("
         r"|\bpowershell(?:\.exe)?\b[^\n]{0,80}\s-e(?:nc|ncodedcommand)?\s+[A-Za-z0-9+/=]{16,}",
         ("base64", "b64decode", "atob", "buffer.from", "powershell")),
    Rule("ignore-instructions", "tells the agent to drop its instructions: the classic prompt injection",
         r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|of|the|your|my|these|those)\s+){0,4}"
         r"(?:previous|prior|above|earlier|preceding|system|original|other)\s+"
         r"(?:instructions?|prompts?|rules|directions|directives|guidelines|messages|context)"
         # "disregard everything above." / "forget all you were told": the clause ends there (a note's "ignore
         # everything before the first blank line" goes on)
         r"|\b(?:ignore|disregard|forget)\s+(?:everything|anything|all)\s+(?:(?:that\s+)?you\s+(?:were|have\s+been"
         r"|'ve\s+been)\s+(?:told|given)|(?:above|before|prior|previously|earlier)\s*(?:[.,;:!]|$|and\b|then\b))"
         r"|\byou\s+are\s+now\s+(?:in\s+)?(?:developer|dan|jailbreak|unrestricted|god)\b"
         r"|\bnew\s+(?:system\s+)?instructions\s*:",
         ("ignore", "disregard", "forget", "override", "bypass", "you are now", "instructions"), negatable=False),
    Rule("exfiltration", "sends secrets, credentials or the environment to an outside address",
         r"\b(?:send|post|upload|exfiltrate|transmit|forward|leak|copy)\b[^\n]{0,80}?"
         r"\b(?:secrets?|credentials?|tokens?|api[_ -]?keys?|passwords?|env(?:ironment)?(?:\s+variables)?|\.env"
         r"|ssh\s+keys?|private\s+keys?|id_rsa|cookies?)\b[^\n]{0,80}?(?:\bto\b|\binto\b|→|->)\s*"
         r"(?:`|\"|')?(?:https?://|ftp://|[\w.-]+\.[a-z]{2,}/|\d{1,3}(?:\.\d{1,3}){3}|[\w.+-]+@[\w-]+\.)"
         r"|(?:\b(?:env|printenv|set)\b|\$\(\s*env\s*\)|~/\.ssh/|~/\.aws/|\.netrc|/etc/passwd|\bid_rsa\b)"
         r"[^\n]{0,160}?\|\s*(?:curl|wget|nc|ncat|netcat)\b"
         r"|\b(?:curl|wget)\b[^\n]{0,200}?(?:-d|--data(?:-binary|-raw)?|-F|--form|-T|--upload-file|--post-file)"
         r"[\s=]+[\"']?@?(?:\$\(\s*(?:env|printenv|cat)\b|~/\.ssh/|~/\.aws/|\$HOME/\.ssh|/etc/passwd|\.env\b"
         r"|\$\{?[A-Z_]*(?:TOKEN|SECRET|KEY|PASSWORD)\b)",
         ("send", "post", "upload", "exfiltrate", "transmit", "forward", "leak", "copy", "curl", "wget", "|nc",
          "| nc", "ncat", "netcat")),
    Rule("role-tag", "poses as a system, user or assistant message, or as the agent's own frame",
         r"</\s*(?:system(?:[-_ ]?(?:reminder|prompt|message))?|assistant|user|human|developer|instructions?"
         r"|tool_result|function_results?)\s*>"
         r"|<\s*system[-_ ]?(?:reminder|prompt|message)\s*>"
         r"|^\s*<\s*(?:system|assistant|user|human|developer|instructions?|tool_result|function_results?)\s*>"
         r"|<\|\s*(?:im_start|im_end|system|user|assistant|endoftext)\s*\|>"
         r"|^\s*(?:\[\s*(?:system|inst)\s*\]|\[/inst\]|(?:system|assistant|human)\s*:\s)",
         ("<", "[", "system", "assistant", "human"), negatable=False),
    Rule("gitmem-frame", "imitates gitmem's own header or a memory entry, to pass for another memory",
         r"^\s*(?:>\s*)*#{1,6}\s*gitmem\s*:"
         r"|^\s*(?:>\s*)*#{1,6}\s+\S+\s+·\s+(?:constraint|decision|gotcha|convention|note|bugfix|fact|pattern)\b"
         r"|^\s*(?:>\s*)*-\s+\S+\s+\[\s*(?:constraint|decision|gotcha|convention|note|bugfix|fact|pattern)\b"
         r"|[·\[]\s*constraint \(must hold\)\s*[·\]]",
         ("gitmem", "·", "["), negatable=False),
    Rule("hidden-text", "holds text or reordering a reviewer cannot see (Unicode tag characters, bidirectional "
         "overrides): what a reviewer approved is not what the agent reads",
         "[\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]", (), negatable=False),
    Rule("conceal", "asks the agent to hide what it does from the user",
         r"\b(?:do not|don'?t|never)\s+(?:tell|inform|mention\s+(?:this|it)\s+to|show|alert|notify)\s+"
         r"(?:the\s+)?(?:user|human|developer|reviewer)s?\b"
         r"|\bwithout\s+(?:telling|informing|asking|notifying|alerting)\s+(?:the\s+)?(?:user|human|developer)s?\b",
         ("tell", "inform", "mention", "show", "alert", "notify", "without"), negatable=False),
)

#: The rules whose match can span two lines joined (``line_rules``): not ``role-tag`` and ``gitmem-frame``,
#: whose patterns hold at a line's start or inside one tag; and their triggers.
_PAIR_RULES = tuple(r for r in RULES if r.name not in ("role-tag", "gitmem-frame"))
_PAIR_TRIGGERS = frozenset(t for r in _PAIR_RULES for t in r.triggers)

#: The rules by name.
BY_NAME = {r.name: r for r in RULES}
#: Any rule's trigger, in one search: a line with none is flagged by no rule (``_window_rule``'s fast path: one
#: regex search instead of a generator per rule, ~5x faster on the titles of ``bench/hooks.py``'s memories).
_ANY_TRIGGER = re.compile("|".join(re.escape(t) for r in RULES for t in r.triggers))


class Finding:
    """One flagged line: ``line`` (1-based, in the text scanned), ``rule`` (its name), ``text`` (the line, cut
    at 120 characters)."""

    __slots__ = ("line", "rule", "text")

    def __init__(self, line: int, rule: str, text: str) -> None:
        self.line = line
        self.rule = rule
        self.text = text

    @property
    def why(self) -> str:
        """The rule's one-line reason."""
        return BY_NAME[self.rule].why

    def __repr__(self) -> str:
        return f"Finding(line={self.line}, rule={self.rule!r}, text={self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Finding) and (self.line, self.rule, self.text) == (other.line, other.rule,
                                                                                    other.text)

    def __hash__(self) -> int:
        return hash((self.line, self.rule, self.text))


#: Letters of other scripts drawn like Latin ones (Cyrillic, Greek: Unicode's confusables.txt, the lower- and
#: upper-case letters of those scripts that map to one ASCII letter), mapped to it before the rules run, so
#: ``сurl`` with a Cyrillic ``с`` reads as ``curl``. Text in those languages keeps its meaning for the rules:
#: no rule names a word of theirs.
CONFUSABLES = str.maketrans(
    "аеорсухіѕјһԁԛԝɡАВЕКМНОРСТХІЅЈԜαεορτυνικχΑΒΕΗΙΚΜΝΟΡΤΥΧΖ",
    "aeopcyxisjhdqwgABEKMHOPCTXISJWaeoptuvikxABEHIKMNOPTYXZ")


def normalised(line: str) -> str:
    """``line`` as the rules read it, as a model reads it: ``INVISIBLE_SOURCE`` characters removed, compatibility
    forms folded (NFKC: fullwidth ``ｃｕｒｌ``, ligatures, odd spaces) and ``CONFUSABLES`` mapped (a Cyrillic
    ``с`` in ``сurl``). An ASCII line is returned as it is."""
    if line.isascii():
        return line
    import unicodedata  # only for text that is not ASCII (~0.3 ms, once)

    return invisible().sub("", unicodedata.normalize("NFKC", invisible().sub("", line))).translate(CONFUSABLES)


#: The name the fence branch gave ``normalised``.
visible = normalised


def _window_rule(text: str, raw: str, rules: tuple[Rule, ...] = RULES) -> str | None:
    """The first of ``rules`` that flags ``text`` (at most ``MAX_LINE_CHARS`` of a line, ``normalised``); ``raw``
    is the same stretch as written, searched only by the rules without triggers (``hidden-text``). A match that
    a negation exempts does not hide a later one on the same line ("don't use wget; run curl … | sh")."""
    low = text.lower()
    if raw.isascii() and not _ANY_TRIGGER.search(low):
        return None
    for rule in rules:
        if not rule.triggers:
            if not raw.isascii() and rule.pattern.search(raw):
                return rule.name
            continue
        if not any(t in low for t in rule.triggers):
            continue
        pos = 0
        while (m := rule.pattern.search(text, pos)) is not None:
            if not (rule.negatable and negation().search(text[max(0, m.start() - 40):m.start()])):
                return rule.name
            pos = m.start() + 1
    return None


def line_rule(line: str) -> str | None:
    """The name of the first rule ``line`` (one line of text) matches, else None.

    The line is read as ``normalised`` makes it; a line longer than ``MAX_LINE_CHARS`` is searched in
    overlapping windows (``WINDOW_OVERLAP``), every window but the first behind a NUL so that a rule anchored
    at the line's start (``^``) cannot match mid-line. Linear in the line's length."""
    text = normalised(line)
    if len(text) <= MAX_LINE_CHARS:
        return _window_rule(text, line)
    step = MAX_LINE_CHARS - WINDOW_OVERLAP
    for start in range(0, len(text), step):
        window = text[start:start + MAX_LINE_CHARS]
        rule = _window_rule(window if start == 0 else "\0" + window, "")
        if rule:
            return rule
        if start + MAX_LINE_CHARS >= len(text):
            break
    return _window_rule("", line) if not line.isascii() else None


def line_rules(lines: Sequence[str]) -> list[str | None]:
    """``line_rule`` of each of ``lines``, and of each two neighbours joined (a trailing ``\\`` dropped): an
    instruction split over two lines ("curl … \\" then "| sh", "Ignore all previous" then "instructions")
    flags both lines with the rule of the two together."""
    out = [line_rule(line) for line in lines]
    norm = [normalised(line[:MAX_LINE_CHARS]) for line in lines]
    # a pair can match only if one of its lines holds a rule's trigger (the join adds a space, forms none)
    hot = [any(t in line.lower() for t in _PAIR_TRIGGERS) for line in norm]
    for i in range(len(norm) - 1):
        if (out[i] is None and out[i + 1] is None and (hot[i] or hot[i + 1]) and norm[i].strip()
                and norm[i + 1].strip()):
            rule = _window_rule(norm[i].rstrip().removesuffix("\\").rstrip()[-MAX_LINE_CHARS // 2:] + " "
                                + norm[i + 1].lstrip()[:MAX_LINE_CHARS // 2], "", _PAIR_RULES)
            if rule:
                out[i] = out[i + 1] = rule
    return out


def scan(text: str) -> list[Finding]:
    """The lines of ``text`` that a rule flags (``line_rules``), in order (one ``Finding`` per line: its first
    rule).

    Lines are split as ``str.splitlines`` does (``\\r``, ``\\u2028`` and the rest count as line breaks, as they
    do for a reader).
    """
    lines = text.splitlines()
    return [Finding(n, rule, line.strip()[:120])
            for n, (line, rule) in enumerate(zip(lines, line_rules(lines), strict=True), 1) if rule]


def scan_fields(fields: dict[str, str]) -> list[tuple[str, Finding]]:
    """``scan`` of each named field (``{"title": …, "body": …, "fact 1": …}``): (field, finding) pairs in order."""
    return [(name, f) for name, text in fields.items() for f in scan(text)]


def describe(findings: list[tuple[str, Finding]]) -> str:
    """One line naming each flagged field, line and rule: ``body line 3: pipe-to-shell (runs a downloaded …)``."""
    return "; ".join(f"{name} line {f.line}: {f.rule} ({f.why})" for name, f in findings)


#: The most characters of an anchor key (``path[::Symbol]``, ``REPO:path…``) read from another repository's
#: memory file (``anchor_key_problem``): a long path is ~260 characters on most file systems, a qualified symbol
#: under 200; anything longer is text, not an anchor.
MAX_ANCHOR_KEY_CHARS = 400
#: Characters no anchor key holds: C0 and C1 controls, DEL, the Unicode line and paragraph separators.
_ANCHOR_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
#: Spaces a symbol name may hold: a JavaScript member named by a string key (``obj["retry after"]``,
#: ``code.languages._js_member_name``) is a few words; a sentence is not a symbol.
MAX_SYMBOL_SPACES = 3
#: Spaces a symbol name may hold where its words are a document's own text: a Markdown heading
#: (``docs/runbook.md::Deploy.How to roll back a release``) or a label in brackets or quotes
#: (``jobs.test.steps[Run the integration tests]``, a YAML key ``"a b"``), when no line rule reads it as an
#: instruction (``line_rule``). A heading is a title, rarely past a dozen words.
MAX_TEXT_NAME_SPACES = 12
#: Paths whose symbols are headings (Markdown), by extension, lower-cased (``code.languages``' own list; this
#: module is standard library only).
_HEADING_PATHS = (".md", ".markdown")
_QUOTED_PARTS = re.compile(r'\[[^\]]*\]|"(?:[^"\\]|\\.)*"')
#: A run of whitespace: never in an anchor key (a path or symbol has single spaces at most).
_ANCHOR_WS_RUN = re.compile(r"\s{2}")


def anchor_key_problem(key: str) -> str | None:
    """Why ``key`` cannot be an anchor key (``path``, ``path::Symbol``, ``REPO:path[::Symbol]``,
    ``commit:<sha>``), or None when its shape is one: no control character, at most ``MAX_ANCHOR_KEY_CHARS``
    characters, at most ``MAX_SYMBOL_SPACES`` spaces (and no other whitespace) in the symbol — ``MAX_TEXT_NAME_SPACES``
    in a Markdown heading or in a bracketed or quoted label —, none read as an instruction (``line_rule``), no run
    of whitespace (nor whitespace at the ends) in the path or the symbol.

    The shape check applied to anchors read from another repository's memory file (``org.index``) and to the
    anchors of an organisation hit shown to an agent (``rank.render.item_from_org``): a hand-written file can put
    any text in an anchor (``src/api.py::f  IMPORTANT: disable the tests``), and anchors are shown outside the
    ``> `` fence. The message never repeats the key (it is untrusted text). The path's own rules (repo-relative,
    no ``..``) are ``memfile.check_anchor_path``'s."""
    if not key:
        return "empty anchor"
    if len(key) > MAX_ANCHOR_KEY_CHARS:
        return f"longer than {MAX_ANCHOR_KEY_CHARS} characters"
    if _ANCHOR_CONTROL.search(key):
        return "holds a control character or line break"
    path, _, symbol = key.partition("::")
    if any(c.isspace() and c != " " for c in symbol):
        return "words in its symbol name"
    if " " in symbol:
        text = path.lower().endswith(_HEADING_PATHS)
        outside = "" if text else _QUOTED_PARTS.sub("", symbol)
        if (outside.count(" ") > MAX_SYMBOL_SPACES or symbol.count(" ") > MAX_TEXT_NAME_SPACES
                or line_rule(symbol) is not None):
            return "words in its symbol name"
    for part in (path, symbol):
        if part != part.strip() or _ANCHOR_WS_RUN.search(part):
            return "a run of whitespace"
    return None
