"""Redaction: remove secrets and private spans from captured text before anything is stored.

Every captured Claude Code hook event goes through :func:`redact` before it is written to the
spool, so a secret never reaches the spool, an LLM, the index or a commit. This module runs on the
PostToolUse hot path: it imports only the standard library (``re``) and compiles a few small
regexes at import time.

Measured on the dev box (CPython 3.11, see ``tests/test_redact.py::test_performance_budget``):
import ≈ 1.5 ms; ``redact_text`` ≈ 0.3 ms for 100 KB of ordinary code/log text and ≈ 3 ms for
100 KB dense with key=value pairs and tokens; a 1 MB pathological input (one huge token, long
runs of ``a=`` or ``://:`` or unclosed quotes/tags) finishes in tens of milliseconds (no
catastrophic backtracking; every ambiguous repetition is bounded or guarded by a literal).

What is removed, each replaced by a marker that names the kind, e.g. ``[REDACTED:github-token]``:

* ``<private>…</private>`` spans (case-insensitive, multi-line, nested, and an unclosed
  ``<private>`` to the end of the text) become ``[PRIVATE]`` — :func:`strip_private`.
* PEM private key blocks (RSA, EC, DSA, OPENSSH, PGP, ENCRYPTED, plain ``PRIVATE KEY``), with real
  or JSON-escaped (``\\n``) line breaks; a BEGIN without END is redacted to the end of the text.
  Certificates and public keys are kept.
* Provider tokens recognisable by their shape: AWS access key ids (AKIA/ASIA/…), AWS secret keys
  after an ``aws…secret…`` key, GitHub (``ghp_ gho_ ghu_ ghs_ ghr_ github_pat_``), GitLab
  (``glpat- gldt- glrt- glptt-``), Slack (``xox?-``, ``xapp-`` and ``hooks.slack.com`` webhook
  paths), Discord webhook paths, Stripe (``sk_live_ rk_live_ sk_test_ rk_test_ whsec_``),
  Anthropic (``sk-ant-``), OpenAI-style (``sk-…``, ``sk-proj-…``, ``sk-svcacct-…``), Google API
  keys (``AIza…``) and OAuth client secrets (``GOCSPX-``), npm (``npm_``), PyPI (``pypi-AgE…``),
  Twilio API keys (``SK`` + 32 hex), SendGrid (``SG.x.y``), Azure storage connection strings
  (``AccountKey=`` / ``SharedAccessKey=`` / ``SharedAccessSignature=`` values), Heroku UUIDs after a
  ``heroku…`` key, and JWTs (``eyJ….eyJ….sig``).
* Passwords in URLs: ``scheme://user:pass@host`` keeps scheme, user and host.
* HTTP auth: ``Authorization: Bearer/Basic/Token … <credential>`` (scheme kept), a standalone
  ``Bearer <16+ chars>``, and ``curl -u user:pass`` / ``--user user:pass`` (the password part).
* Values of secret-named keys (``KEY=value``, ``export KEY=value``, ``KEY: value``,
  ``"key": "value"``, ``key = 'value'``, ``--key=value``, ``--key value``). A key is
  secret-named when it contains, case-insensitively, PASSWORD/PASSWD/PASSPHRASE, API_KEY/APIKEY,
  ACCESS_KEY, PRIVATE_KEY, SECRET_KEY, CLIENT_SECRET, CREDENTIAL(S), AUTH_TOKEN/ACCESS_TOKEN/…, or
  has a word SECRET(S), TOKEN, AUTH, AUTHORIZATION, PASS, PWD, PW, CREDS (words split on ``_ - .``
  and camelCase). Keys whose last word says they hold metadata, not the secret
  (``password_length``, ``token_count``, ``secret_name``, ``token_url``, ``api_key_header``,
  ``password_file``, ``auth_type``, …) are left alone. DSNs and database URLs lose their password
  through the URL rule.

The literal-value rule for secret-named keys (so that code is not mangled):

* A quoted value (``"…"``, ``'…'``, JSON-escaped ``\\"…\\"``, with ``f``/``r``/``b`` prefixes,
  unclosed quotes run to the line end) is always redacted, keeping the quotes.
* An unquoted value is redacted only when it is a word that is not an expression: it is kept if
  it is followed by ``(`` or ``[`` (a call or subscript), starts with ``$`` (``$VAR``, ``${VAR}``,
  ``$(cmd)``), is a template (``{{x}}``, ``{x}``, ``<your-token>``, ``%VAR%``), a keyword or
  literal (``None null true false await new …``), a number of at most 6 digits, a mask
  (``****``), a type name after ``:`` (``password: str``), an identifier that itself names a
  secret (``password=password``, ``token = auth_token``, ``self.password``,
  ``process.env.TOKEN``, ``os.environ``), or follows ``==``/``!=`` (a comparison).
* A whitespace separator (``--password hunter2``) counts only for command-line flags (keys
  starting with ``-``), so prose such as "the password is" is untouched.
* ``key: value`` at the start of a line (YAML, HTTP headers) redacts to the end of the line, so
  multi-word passphrases do not leak; elsewhere an unquoted value ends at whitespace or one of
  ``" ' ` , ; & | < > ( ) { } [ ]``.

Deliberately not caught (too ambiguous, or would destroy ordinary text): bare high-entropy
strings with no prefix and no secret-named key (a 40-hex git SHA and a UUID in prose must
survive; memories cite commits), ``-p value`` / ``-pSECRET`` short flags, ``password is
hunter2`` in prose, secrets inside triple-quoted multi-line strings, and non-string leaves such as
``bytes`` in :func:`redact` (returned unchanged).
"""

from __future__ import annotations

import re

__all__ = [
    "REDACTED",
    "PRIVATE",
    "DEFAULT_PRIVATE_GLOBS",
    "redact_text",
    "redact",
    "strip_private",
    "is_private_path",
    "mentions_private_path",
]

REDACTED = "[REDACTED]"
"""The bare marker; kinds are written as ``[REDACTED:<kind>]``."""

PRIVATE = "[PRIVATE]"
"""What a ``<private>…</private>`` span becomes."""

DEFAULT_PRIVATE_GLOBS = (
    ".env*",
    "*.pem",
    "id_rsa*",
    "secrets/**",
    # Extra defaults: key stores and credential files that tools read routinely.
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    "credentials.json",
    ".aws/credentials",
)
"""Paths whose content is never captured. A glob without ``/`` matches a path component at any
depth (``.env*`` matches ``app/.env.local``); ``dir/**`` matches ``dir`` and everything under a
``dir`` component at any depth. Matching is case-insensitive (a false positive only drops an
event; a false negative leaks a file)."""


def _marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


# Patterns are compiled on first use, not at import: a hook that sees no ``<`` never pays for the
# <private> regex, one whose text has no ``ghp_`` never compiles the GitHub rule.
_compiled: dict[tuple[str, int], re.Pattern] = {}


def _rx(pattern: str, flags: int = 0) -> re.Pattern:
    rx = _compiled.get((pattern, flags))
    if rx is None:
        rx = _compiled[(pattern, flags)] = re.compile(pattern, flags)
    return rx


def _ci(word: str) -> str:
    """A case-insensitive literal as character classes (keeps the regex's fast prefix scan)."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in word)


_MARKER = r"\[(?:REDACTED(?::[a-z0-9-]+)?|PRIVATE)\]"

# ---------------------------------------------------------------------------------------------
# <private> spans

_PRIVATE_TAG = r"<(/?)[pP][rR][iI][vV][aA][tT][eE](?:[ \t][^<>\n]{0,200})?>"


def strip_private(text: str) -> str:
    """Replace every ``<private>…</private>`` span with ``[PRIVATE]``.

    Tags match case-insensitively and may carry attributes; spans may cross lines and nest (the
    span ends at the matching close tag); an unclosed ``<private>`` hides everything to the end of
    the text. A stray ``</private>`` with no opening tag is left as is. Text outside the spans is
    returned unchanged.
    """
    if "<" not in text:
        return text
    out: list[str] = []
    pos = 0
    depth = 0
    for m in _rx(_PRIVATE_TAG).finditer(text):
        closing = m.group(1) == "/"
        if depth == 0:
            if closing:
                continue
            out.append(text[pos:m.start()])
            depth = 1
        elif closing:
            depth -= 1
            if depth == 0:
                out.append(PRIVATE)
                pos = m.end()
        else:
            depth += 1
    if not out:
        return text
    if depth:
        out.append(PRIVATE)
    else:
        out.append(text[pos:])
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Shape-recognised secrets.
#
# Each rule: (kind, needles, pattern, flags, group, boundary). ``needles`` are lower-case
# substrings looked up in a case-folded copy of the text; the pattern runs only when one occurs
# (``None``: the pattern starts with a distinctive literal, so running it is itself one fast
# scan). Every pattern starts with a literal or a small character class so the regex engine can
# skip ahead; a word boundary before the match is checked in Python ("word": no letter, digit
# or _ before it; "space": start or whitespace before it). Only the named group (or the whole
# match for group 0) is replaced. Each pass over 100 KB costs ~50 µs, so passes are few.

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_KEYSEP = r"""[\w.-]{0,30}?["']?[ \t]*[:=]{1,2}[ \t]*["']?"""

_RULES = (
    ("private-key", ("-----begin",),
     r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
     r".*?(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)", re.DOTALL, 0, None),
    ("aws-access-key", None,
     r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])", 0, 0, "word"),
    ("aws-secret-key", ("aws",),
     _ci("aws") + r"(?i:[\w.-]{0,30}?secret)" + _KEYSEP + r"(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
     0, "v", "word"),
    ("github-token", None,
     r"g(?:h[pousr]_[A-Za-z0-9]{30,251}(?![A-Za-z0-9_])|ithub_pat_[A-Za-z0-9_]{22,255})", 0, 0, "word"),
    ("gitlab-token", None, r"gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}", 0, 0, "word"),
    ("slack-token", None, r"x(?:ox[abposre]-[A-Za-z0-9-]{10,}|app-\d-[A-Za-z0-9-]{10,})", 0, 0, "word"),
    ("slack-webhook", ("hooks",),
     r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/-]+)", 0, "v", None),
    ("discord-webhook", ("hooks",),
     r"discord(?:app)?\.com/api/webhooks/(?P<v>[0-9]+/[A-Za-z0-9_-]+)", 0, "v", None),
    ("stripe-key", ("_live_", "_test_"), r"[sr]k_(?:live|test)_[A-Za-z0-9]{10,}", 0, 0, "word"),
    ("stripe-key", None, r"whsec_[A-Za-z0-9+/=]{20,}", 0, 0, "word"),
    ("anthropic-key", ("sk-",), r"sk-ant-[A-Za-z0-9_-]{20,}", 0, 0, "word"),
    ("openai-key", ("sk-",),
     r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20,}(?![A-Za-z0-9_]))", 0, 0, "word"),
    ("google-api-key", None, r"AIza[0-9A-Za-z_-]{35}", 0, 0, "word"),
    ("google-oauth-secret", None, r"GOCSPX-[A-Za-z0-9_-]{20,}", 0, 0, "word"),
    ("npm-token", None, r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])", 0, 0, "word"),
    ("pypi-token", None, r"pypi-AgE[A-Za-z0-9_-]{20,}", 0, 0, "word"),
    ("twilio-api-key", None, r"SK[0-9a-f]{32}(?![A-Za-z0-9_])", 0, 0, "word"),
    ("sendgrid-key", None, r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}", 0, 0, "word"),
    ("azure-storage-key", ("accountkey=", "sharedaccess"),
     r"(?:AccountKey|SharedAccess(?:Key|Signature))=(?P<v>[^;\s\"'<>]+)", 0, "v", "word"),
    ("heroku-api-key", ("heroku",), _ci("heroku") + _KEYSEP + f"(?P<v>{_UUID})(?![0-9a-fA-F-])",
     0, "v", "word"),
    ("jwt", None, r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*", 0, 0, "word"),
)

# Rules that run after the secret-named-key rule: their values may be keys of an assignment
# (``Authorization: SECRET_KEY = '…'``), which that rule must see first.
_LATE_RULES = (
    ("url-password", None, r"://[^\s:/?#@'\"<>\[\]]{0,256}:(?P<v>[^\s/?#'\"<>]{1,512})@", 0, "v", None),
    ("authorization", ("authorization",),
     _ci("authorization") + r"\b\\?[\"']?[ \t]*[:=][ \t]*(?:\\?[rRbBuUfF]{0,2}[\"'`])?"
     r"(?P<s>(?i:bearer|basic|token|digest|negotiate|ntlm|bot|apikey|sso-key)[ \t]+)?"
     r"(?P<v>[^\s\"'`<>\\,]+)", 0, "v", "word"),
    ("bearer-token", ("bearer",), r"[Bb]earer[ \t]+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)", 0, "v", "word"),
    ("basic-auth", ("basic",),
     r"[Bb]asic[ \t]+(?P<v>(?=[A-Za-z0-9+/]*[0-9+/])[A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])", 0, "v", "word"),
    ("basic-auth", None,
     r"-(?:u|-user)(?:[ \t]+|=)[\"']?[^\s:\"'@]{1,256}:(?P<v>[^\s\"']{1,512})", 0, "v", "space"),
)


def _fold(text: str) -> str:
    """ASCII-lower-cased copy of ``text`` with the same length (non-ASCII characters become ``?``),
    so offsets found in it are offsets in ``text``."""
    if text.isascii():
        return text.lower()
    return text.encode("ascii", "replace").decode("ascii").lower()


_REFERENCE = (r"\$|%\w+%$|%\(\w+\)s$|%s$|\{\{|\{[\w.]*\}$|<[^<>]*>$|\*{3,}$|•+$|[xX]{3,}$|\.\.\.$|"
              + _MARKER + "$")
_PLACEHOLDER = r"\$\{[^{}]*\}|\{[^{}]*\}|\$\w+"
_MORE_ON_LINE = r"[ \t\r]*[^\s]"
_NEXT_KEY = r"[ \t]*(?::(?![:=])|=(?!=))"
_KEYLIKE = r"[A-Za-z_][\w.-]*(?=[:=])"
_SCHEMES = ("", "bearer", "basic", "token", "digest", "bot")
_SCHEME_PREFIX = r"(?i:bearer|basic|token|digest|bot)[ \t]+(?=\S)"


def _is_reference(value: str) -> bool:
    """A value that points at a secret instead of being one (``$VAR``, ``{{x}}``, ``<token>``…)."""
    return _rx(_REFERENCE).match(value) is not None


def _is_template(value: str) -> bool:
    """``f"Bearer {token}"``, ``"Bearer ${TOKEN}"``: placeholders around at most a scheme word."""
    if "{" not in value and "$" not in value:
        return False
    rest = _rx(_PLACEHOLDER).sub("", value)
    return rest != value and rest.strip().lower() in _SCHEMES


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _rule_sub(kind: str, pattern: str, flags: int, group, boundary, text: str) -> str:
    mark = _marker(kind)

    def repl(m: re.Match) -> str:
        s = m.start()
        if s and boundary:
            before = text[s - 1]
            if (_word_char(before) if boundary == "word" else not before.isspace()):
                return m.group(0)
        if group == 0:
            return mark
        v = m.group(group)
        if _is_reference(v) or (kind == "basic-auth" and v.replace(":", "").isdigit()):
            return m.group(0)
        if kind == "authorization" and not m.group("s") and v.isalpha() and v.islower():
            return m.group(0)            # prose: "Authorization: check roles first"
        whole = m.group(0)
        return whole[:m.start(group) - s] + mark + whole[m.end(group) - s:]

    return _rx(pattern, flags).sub(repl, text)


# ---------------------------------------------------------------------------------------------
# Secret-named keys.

# Candidate keys are found with substring searches for these hints in the case-folded text; the
# whole key around a hit is then recovered and classified by _secret_key_kind.
_HINTS = ("pass", "pw", "secret", "token", "auth", "cred", "key")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_MAX_KEY = 80
_KEY_REST = r"[\w.-]*"
_KV_TAIL = r"""
    (?P<kq>\\?["'`]?)                              # closing quote of a quoted key
    (?P<ann>[ \t]*:[ \t]*[A-Za-z_][\w.]*(?:\[[\w.\[\], |]{0,40}\])?    # type annotation
        (?:[ \t]*\|[ \t]*[A-Za-z_][\w.]*(?:\[[\w.\[\], |]{0,40}\])?){0,3}(?=[ \t]*=(?!=)))?
    (?P<sep>[ \t]*(?:=>|:=|==|!=|=|:(?!:))[ \t]*|[ \t]+)
    (?P<val>
        [rRbBuUfF]{0,2}"[^"\\\n]*(?:\\.[^"\\\n]*)*"?
      | [rRbBuUfF]{0,2}'[^'\\\n]*(?:\\.[^'\\\n]*)*'?
      | \\"[^"\\\n]*(?:\\[^"\n][^"\\\n]*)*(?:\\")?
      | (?:[^\s"'`,;&|<>(){}\[\]\\]|\\(?![nrt"'\\]))+    # an escaped \n or quote ends it
    )?
"""

_CAMEL = r"([a-z0-9])([A-Z])"
_SPLIT = r"[^a-z0-9]+"
_IDENT_CHAIN = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_VAR_NAME = r"_*(?:[a-z]+(?:_+[a-z]+)*_*|[A-Z]+(?:_+[A-Z]+)*_*|[a-z]+(?:[A-Z][a-z]+)+)"
_STRONG = ("password", "passwd", "passphrase", "apikey", "accesskey", "privatekey", "secretkey",
           "clientsecret", "credential", "authtoken", "accesstoken", "refreshtoken",
           "sessiontoken", "bearertoken", "signingkey", "encryptionkey")
_WEAK = frozenset(("secret", "secrets", "token", "auth", "authorization", "pass", "pwd", "pw",
                   "creds", "cred", "passwd"))
_META = frozenset("""count counts type types kind len length limit limits size min max minlength
    maxlength url uri urls endpoint file filename files path paths dir directory name names env
    var variable vars field fields header headers prompt prompts policy mode method methods enabled
    disabled required regex re pattern format strength expiry expires expiration ttl timeout
    lifetime age provider providers user username login email host port scheme scope scopes label
    description help hint placeholder message msg error errors index idx position pos start end
    offset budget usage used cost rate version class cls factory manager service store cache
    validator validation check checker handler callback fn func hook hooks valid invalid exists
    set enable disable flow flows status state level backend backends plugin plugins module
    py js ts tsx jsx go rs java rb md txt json yaml yml toml cfg ini sh""".split())
_NON_SECRET_WORDS = frozenset("""none null nil undefined true false yes no on off enabled disabled
    required optional await new yield lambda function fn not typeof self this str string bytes
    int integer bool boolean float number any object dict list secretstr char text bearer
    basic digest negotiate ntlm""".split())


def _key_words(key: str) -> list[str]:
    return [w for w in _rx(_SPLIT).split(_rx(_CAMEL).sub(r"\1_\2", key).lower()) if w]


_key_cache: dict[str, tuple[str | None, bool]] = {}


def _key_info(key: str) -> tuple[str | None, bool]:
    """(marker kind or None, is a single everyday word such as ``auth``) for a key; cached."""
    info = _key_cache.get(key)
    if info is not None:
        return info
    words = _key_words(key)
    kind = None
    if words and words[-1] not in _META:
        flat = "".join(words)
        if any(s in flat for s in _STRONG) or any(
                w in _WEAK or w.endswith(("secret", "token", "password", "passwd")) for w in words):
            if "pass" in flat or "pw" in words or "pwd" in words:
                kind = "password"
            elif "token" in flat:
                kind = "token"
            elif "apikey" in flat:
                kind = "api-key"
            elif "auth" in words or "authorization" in words:
                kind = "authorization"
            elif "cred" in flat:
                kind = "credential"
            else:
                kind = "secret"
    weak = len(words) == 1 and words[0] in _WEAK and not any(s in words[0] for s in _STRONG)
    info = (kind, weak)
    if len(_key_cache) < 4096 and len(key) <= _MAX_KEY:
        _key_cache[key] = info
    return info


def _secret_key_kind(key: str) -> str | None:
    """The marker kind for a secret-named key (``password``, ``token``, ``api-key``…), else None."""
    return _key_info(key)[0]


def _names_secret(value: str) -> bool:
    """A variable such as ``db_password``, ``authToken``, ``API_KEY`` or ``self.token``.

    Only digit-free snake_case, UPPER_CASE and lowerCamelCase names (or dotted chains ending in
    one) count, so literals such as ``MySecret`` or ``FakeToken77`` are still redacted.
    """
    if not _rx(_IDENT_CHAIN).fullmatch(value):
        return False
    if "." in value and value.split(".", 1)[0] in ("os", "process", "env", "ENV", "environ",
                                                    "settings", "config"):
        return True
    last = value.rsplit(".", 1)[-1]
    if not _rx(_VAR_NAME).fullmatch(last):
        return False
    kind, weak = _key_info(last)
    return kind is not None or weak


def _keep_unquoted(value: str, sep: str, after: str, flag: bool) -> bool:
    """True when an unquoted value of a secret-named key is code or a reference, not a literal."""
    op = sep.strip()
    if not op and not flag:
        return True                      # "the password is", "for token in tokens"
    if op in ("==", "!="):
        return True                      # comparison with a variable
    if after in ("(", "["):
        return True                      # call or subscript: getpass(), os.environ["X"]
    if _is_reference(value) or value.lower() in _NON_SECRET_WORDS:
        return True
    if value.isdigit() and len(value) <= 6:
        return True
    return _names_secret(value)          # password=password, self.token, process.env.TOKEN


def _unquote(val: str) -> tuple[int, int]:
    """Start and end offsets of the content inside a (possibly prefixed/unclosed) quoted value."""
    i = 0
    while i < len(val) and val[i] in "rRbBuUfF":
        i += 1
    if val.startswith('\\"', i):
        end = len(val) - 2 if len(val) >= i + 4 and val.endswith('\\"') else len(val)
        return i + 2, end
    q = val[i]
    end = len(val) - 1 if len(val) >= i + 2 and val.endswith(q) and val[-2:-1] != "\\" else len(val)
    return i + 1, end


def _only_markers(inner: str) -> bool:
    rest = _rx(_MARKER).sub("", inner)
    return rest != inner and rest.replace("\\n", "").strip() == ""


def _hint_positions(low: str) -> list[tuple[int, int]]:
    hits = []
    for h in _HINTS:
        i = low.find(h)
        while i >= 0:
            hits.append((i, i + len(h)))
            i = low.find(h, i + 1)
    hits.sort()
    return hits


def _redact_key_values(text: str, low: str) -> str:
    hits = _hint_positions(low)
    if not hits:
        return text
    rest_rx = _rx(_KEY_REST)
    tail_rx = _rx(_KV_TAIL, re.VERBOSE)
    scheme_rx = _rx(_SCHEME_PREFIX)
    more_rx = _rx(_MORE_ON_LINE)
    next_key_rx = _rx(_NEXT_KEY)
    keylike_rx = _rx(_KEYLIKE)
    out: list[str] = []
    done = 0          # text[:done] is already copied to out
    skip_until = 0    # hits before this offset belong to a processed key or value
    for hs, he in hits:
        if hs < skip_until:
            continue
        key_end = rest_rx.match(text, he).end()
        skip_until = key_end                # later hits in this key would find the same tail
        if key_end - hs > _MAX_KEY:
            continue
        tail = tail_rx.match(text, key_end)
        if tail is None or tail.group("val") is None:
            continue
        ks = hs
        limit = max(hs - _MAX_KEY, done, 0)
        while ks > limit and text[ks - 1] in _KEY_CHARS:
            ks -= 1
        if ks == hs - _MAX_KEY and ks > 0 and text[ks - 1] in _KEY_CHARS:
            continue                        # an 80+ character identifier is not a key
        key = text[ks:key_end].lstrip("-.")
        kind, weak = _key_info(key) if key else (None, False)
        if kind is None:
            continue
        flag = text[ks] == "-"
        val = tail.group("val")
        vs, ve = tail.span("val")
        sep = tail.group("sep")
        # A value that is kept is still scanned for keys of its own (skip_until stays key_end).
        if val.lstrip("rRbBuUfF")[:1] in ("'", '"') or val.startswith('\\"'):
            a, b = _unquote(val)
            scheme = scheme_rx.match(val, a, b)
            if scheme:
                a = scheme.end()                 # "Bearer …": keep the scheme word
            inner = val[a:b]
            if not inner or _is_reference(inner) or _only_markers(inner) or _is_template(inner):
                continue
            if not sep.strip() and not flag:
                continue
            if len(inner) <= 3 and not any(c.isalnum() for c in inner):
                continue                    # 'token = " ".join(…)'
            if b == len(val) and not any(c.isalnum() for c in inner):
                continue                    # 'input("Password: ")': the key was inside a string
            if next_key_rx.match(text, ve):
                continue                    # 'x: "api_key": "…"': the string is the next key
            rs, re_ = vs + a, vs + b
        else:
            if _keep_unquoted(val, sep, text[ve:ve + 1], flag):
                continue
            if weak and sep.strip() == ":" and more_rx.match(text, ve):
                continue                    # prose: "auth: rotate the token cache"
            keylike = keylike_rx.match(val)
            if keylike and _key_info(keylike.group())[0]:
                continue                    # "token=" in "password=token=…" is the next key
            rs, re_ = vs, ve
            if sep.strip() == ":" and not tail.group("kq"):
                head = text[max(0, ks - 12):ks]
                if ks > 12 and "\n" not in head:
                    head = "?"              # not at the start of a line
                if head[head.rfind("\n") + 1:].strip(" \t-#*>") in ("", "export", "set"):
                    nl = text.find("\n", ve)
                    re_ = len(text) if nl < 0 else nl
                    while re_ > ve and text[re_ - 1] in " \t\r":
                        re_ -= 1
        out.append(text[done:rs])
        out.append(_marker(kind))
        done = skip_until = re_
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Public API


def redact_text(text: str) -> str:
    """Return ``text`` with private spans and secrets replaced by markers.

    Runs :func:`strip_private` first, then the shape rules (PEM blocks, provider tokens, URL
    passwords, Authorization headers), then the secret-named-key rule. Everything that is not a
    secret — surrounding words, keys, quotes, URL scheme/user/host, the auth scheme word — is kept
    byte for byte. Idempotent: redacting already-redacted text changes nothing. Never raises on a
    ``str``; any other value is returned unchanged.
    """
    if not isinstance(text, str) or not text:
        return text
    text = strip_private(text)
    low = _fold(text)
    before = text
    text = _apply_rules(_RULES, text, low)
    text = _redact_key_values(text, low if text is before else _fold(text))
    return _apply_rules(_LATE_RULES, text, low)


def _apply_rules(rules, text: str, low: str) -> str:
    # ``low`` may be stale after a substitution; it only gates rules (a marker never creates a
    # secret, and a needle that a marker happens to contain only costs one extra scan).
    seen: dict[tuple, bool] = {}
    for kind, needles, pattern, flags, group, boundary in rules:
        if needles is not None:
            present = seen.get(needles)
            if present is None:
                present = seen[needles] = any(n in low for n in needles)
            if not present:
                continue
        text = _rule_sub(kind, pattern, flags, group, boundary, text)
    return text


def _redact_wholesale(value, kind: str):
    if isinstance(value, str):
        if not value or _is_reference(value.strip()):
            return value
        return _marker(kind)
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        return value if len(str(abs(value))) <= 6 else _marker(kind)
    if isinstance(value, dict):
        return {redact_text(k) if isinstance(k, str) else k: _redact_wholesale(v, kind)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_redact_wholesale(v, kind) for v in value)
    return value


def redact(obj):
    """Return a redacted copy of a JSON-like value (dict/list/tuple/str/int/float/bool/None).

    Every string, including dict keys, goes through :func:`redact_text`. A dict entry whose key
    names a secret (``password``, ``api_key``, ``Authorization``, ``clientSecret``…) has its value
    replaced wholesale by a marker — every string leaf if the value is a container; references
    such as ``${VAR}``, empty strings, booleans, ``None`` and numbers of at most 6 digits are
    kept. Other types are returned unchanged. The input is not modified.
    """
    if isinstance(obj, str):
        return redact_text(obj)
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            kind = _secret_key_kind(k) if isinstance(k, str) else None
            nk = redact_text(k) if isinstance(k, str) else k
            out[nk] = _redact_wholesale(v, kind) if kind else redact(v)
        return out
    if isinstance(obj, (list, tuple)):
        return type(obj)(redact(v) for v in obj)
    return obj


# ---------------------------------------------------------------------------------------------
# Private paths

_glob_cache: dict[tuple, re.Pattern] = {}


def _glob_part(glob: str) -> str:
    """Translate one glob to a regex over a ``/``-joined path (``*`` stays inside a component)."""
    out = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            if glob.startswith("**", i):
                before_ok = i == 0 or glob[i - 1] == "/"
                after = glob[i + 2:i + 3]
                if before_ok and after == "/":
                    out.append("(?:[^/]*/)*")
                    i += 3
                    continue
                if before_ok and after == "":
                    out.append(".*")
                    i += 2
                    continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = glob.find("]", i + 2)
            if j < 0:
                out.append(r"\[")
            else:
                body = glob[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _compile_globs(globs) -> re.Pattern:
    key = tuple(globs)
    pat = _glob_cache.get(key)
    if pat is None:
        parts = []
        for g in key:
            g = g.strip()
            if not g:
                continue
            if g.endswith("/**"):
                body = _glob_part(g[:-3].strip("/"))
                tail = "(?:/.*)?"             # the directory itself and everything below
            else:
                body = _glob_part(g.strip("/"))
                tail = "(?:/.*)?"             # a matching directory hides its contents
            if "/" not in g.rstrip("/").removesuffix("/**") and not g.startswith("/"):
                parts.append(f"(?:.*/)?{body}{tail}")     # any component, any depth
            elif g.startswith("/"):
                parts.append(f"(?:{body}{tail})")          # anchored to a relative path's start
                parts.append(f"(?:/.*/{body}{tail})")      # absolute path: root is unknown
            else:
                parts.append(f"(?:.*/)?{body}{tail}")
        pat = re.compile("|".join(parts) or r"(?!)", re.IGNORECASE | re.DOTALL)
        if len(_glob_cache) < 64:
            _glob_cache[key] = pat
    return pat


def _normalise_path(path: str) -> str:
    p = path.strip()
    while p.startswith("./"):
        p = p[2:]
    if p.startswith("~/"):
        p = "/" + p[2:]
    while "//" in p:
        p = p.replace("//", "/")
    return p.rstrip("/") if p != "/" else p


def is_private_path(path: str, globs=DEFAULT_PRIVATE_GLOBS) -> bool:
    """True when a repo-relative or absolute POSIX ``path`` matches one of ``globs``.

    gitignore-style: a glob without ``/`` matches the name of any path component (so a file
    ``a/b/.env`` and anything inside a directory ``.env.d/`` match ``.env*``); ``dir/**`` matches
    ``dir`` and everything below a ``dir`` component at any depth; ``**`` spans components, ``*``
    and ``?`` stay within one; ``[abc]`` classes work. A leading ``/`` anchors a glob to the start
    of a relative path (an absolute path may match it at any depth, since the repository root is
    unknown). Matching ignores case. ``./`` and ``~/`` prefixes and trailing slashes are ignored.
    """
    if not isinstance(path, str) or not path.strip():
        return False
    p = _normalise_path(path)
    pat = _compile_globs(globs)
    return bool(pat.fullmatch(p) or (p.startswith("/") and pat.fullmatch(p[1:])))


_SHELL_SPLIT = r"[\s\"'`;&|<>()=,]+"


def mentions_private_path(text: str, globs=DEFAULT_PRIVATE_GLOBS) -> bool:
    """True when any word of ``text`` (e.g. a Bash command) is a path matching ``globs``.

    ``text`` is split on whitespace, quotes, backticks and shell operators (``; & | < > ( )``) and
    on ``=`` and ``,`` (``--env-file=.env``); each word is also tried without a leading ``@``
    (``curl -d @secrets.json``) and, for ``host:path`` or ``src:dst`` forms, each side of ``:``.
    So ``cat .env``, ``source secrets/prod.sh`` and ``ssh -i ~/.ssh/id_rsa host`` match; a false
    positive (``echo "see .env.example"``) only drops one event.
    """
    if not isinstance(text, str) or not text:
        return False
    for word in _rx(_SHELL_SPLIT).split(text):
        if not word or word.startswith("-") and "/" not in word and "." not in word:
            continue
        word = word.lstrip("@")
        candidates = [word]
        if ":" in word and "://" not in word:
            candidates.extend(word.split(":"))
        for c in candidates:
            if c and is_private_path(c, globs):
                return True
    return False
