"""Redaction: remove secrets and private spans from captured text before anything is stored.

Every captured Claude Code hook event goes through :func:`redact` before it is written to the
spool, so a secret never reaches the spool, an LLM, the index or a commit. This module runs on the
PostToolUse hot path: it imports only the standard library (``re``), and compiles nothing at
import; a pattern is compiled on first use, and only when a cheap substring test ("needle") shows
it could match, so a hook pays only for the rules its text needs.

Measured on the dev box (CPython 3.11, a loaded 2-core VM; see the last tests in
``tests/test_redact.py``, and ``bench/redaction.py`` for the classes added in issue 12, which cost
≈ 1.5× CPU time on source code): import ≈ 0.5 ms with a bytecode cache (≈ 10 ms when the source must be
recompiled, e.g. under PYTHONDONTWRITEBYTECODE); the first ``redact()`` of a typical Bash event
≈ 3-5 ms including its regex compiles, later ones ≈ 0.3 ms; ``redact_text`` on 100 KB ≈ 2.5-3 ms
for source code, ≈ 3-5 ms for Markdown prose (non-ASCII), ≈ 20-45 ms for a worst case holding
~4500 secrets. Every rule is linear (bounded repetitions, literal prefixes, memoised value runs):
1 MB pathological inputs (``password=`` × 110k, unclosed quotes, tags or CDATA, ``://:`` runs, 66k
``key: value`` pairs on one line, 80k ``setx KEY`` / ``KEY=x;`` assignments) take 0.03-1.6 s. The bare-token
pass (issue 20) adds ≈ 35-60 ms per MB of source and ≈ 35 µs to a typical shell event (``bench/redaction.py``,
one regular-expression scan; candidates without a digit cost nothing more); its worst case, 1 MB of distinct
random 25-character tokens (38k of them, every one redacted), takes ≈ 1.9 s.

What is removed, each replaced by a marker that names the kind, e.g. ``[REDACTED:github-token]``:

* ``<private>…</private>`` spans (case-insensitive, multi-line, nested, and an unclosed
  ``<private>`` to the end of the text) become ``[PRIVATE]`` — :func:`strip_private`.
* PEM private key blocks (RSA, EC, DSA, OPENSSH, PGP, ENCRYPTED, SIGSTORE…, plain ``PRIVATE KEY``,
  and the four-dash SSH2 framing), with real or JSON-escaped (``\\n``) line breaks or split over
  concatenated string literals; a BEGIN without END is redacted to the end of its key lines, and a
  header with no key material after it (a string naming the format) is kept. Certificates and
  public keys are kept.
* The key lines of other private-key formats: age identities (``AGE-SECRET-KEY-1…``,
  ``AGE-PLUGIN-…-1…``), minisign and signify secret keys (the line under ``untrusted comment: …
  secret key``, or their base64 prefixes), the ``Private-Lines`` of a PuTTY ``.ppk``, Nostr
  ``nsec1…``, BIP-32 ``xprv…``, the private members (``d p q dp dq qi k``) of a JWK (within 2 KB
  of ``"kty"``); WireGuard ``PrivateKey =`` goes through the secret-named-key rule.
* Prefixed tokens of any provider: a short all-lower- or all-upper-case prefix with separators
  (``hf_``, ``dop_v1_``, ``pscale_tkn_``, ``NRAK-``, ``glsa_``, ``sha256~``, ``tskey-auth-``) followed
  by a token-shaped value (:func:`_token_shaped`: machine-generated, not word-like) of 20+
  characters; the prefix is kept. Hash names (``sha512-…`` integrity strings) and UUIDs are not
  tokens. A few provider shapes without a separator (Databricks ``dapi``, ``EZAK``, ``AKCp``,
  ``ATATT3``, ``ABSK``, Terraform ``.atlasv1.``, Azure AD ``…Q~…`` client secrets, MaxMind ``_mmk``).
* URL credentials: a token-shaped user-info without a password (a Sentry DSN key, a token used as
  the clone user) and token-shaped path segments — ``bot<id>:<token>``, a segment after ``key``,
  ``token``, ``hooks``, ``webhook``…, or any 24+ character token-shaped segment that is not
  hexadecimal (commit SHAs), a UUID or a file name — become ``[REDACTED:url-credential]``.
* Provider tokens recognisable by their shape: AWS access key ids (AKIA/ASIA/…), AWS secret keys
  after an ``aws…secret…`` key, GitHub (``ghp_ gho_ ghu_ ghs_ ghr_ github_pat_``), GitLab
  (``glpat- gldt- glrt- glptt-``), Slack (``xox?-``, ``xapp-`` and ``hooks.slack.com`` webhook
  paths), Discord webhook paths, Stripe (``sk_live_ rk_live_ sk_test_ rk_test_ whsec_``),
  Anthropic (``sk-ant-``), OpenAI-style (``sk-…``, ``sk-proj-…``, ``sk-svcacct-…``), Google API
  keys (``AIza…``) and OAuth client secrets (``GOCSPX-``), npm (``npm_``), PyPI (``pypi-AgE…``),
  Twilio API keys (``SK`` + 32 hex), SendGrid (``SG.x.y``), Azure storage connection strings
  (``AccountKey=`` / ``SharedAccessKey=`` / ``SharedAccessSignature=`` values), Heroku UUIDs after a
  ``heroku…`` key, and JWTs (``eyJ….eyJ….sig``).
* Bare tokens (:func:`_redact_bare_tokens`, last): a standalone run of 20+ token characters (letters,
  digits, ``_ - + / . ~``, ``=`` padding) with a letter and a digit that is machine-generated — the
  shape of most providers' keys, which reach tool output with no prefix or key name (a log line, a
  sentence, ``-u TOKEN:``); dotted tokens (``xxx.yyy.zzz``) are taken whole. Kept: hexadecimal (SHAs,
  hashes), UUIDs, ULIDs, paths and dotted names with a word part, identifiers (mixed case that switches
  between upper, lower and digits less often than random text), labels of short parts
  (``aws-us-east-1-…``), agents' ids and hash names, ``0x`` literals, SSH and bech32 public keys,
  certificate and public-key blocks, a JWK's public members. Measured on formats held out while the
  rule was written (TruffleHog's detector tests split by provider family): ``bench/redaction.py
  --trufflehog``.
* Passwords in URLs: ``scheme://user:pass@host`` keeps scheme, user and host.
* HTTP auth: ``Authorization: Bearer/Basic/Token … <credential>`` (scheme kept), a standalone
  ``Bearer <16+ chars>`` or ``Basic <base64 with a digit, + / or =>``, and ``curl -u user:pass`` /
  ``--user user:pass`` (the password part, also with no user: ``-u :s3cr3t``; ``-u 1000:1000`` uid:gid and
  placeholders ``-u user:TOKEN``, ``-u me:<password>`` are kept; a token given as the user, ``-u TOKEN:``,
  goes by its own shape).
* Values of secret-named keys (``KEY=value``, ``export KEY=value``, ``set KEY=value``,
  ``KEY: value``, ``"key": "value"``, ``key = 'value'``, ``--key=value``, ``--key value``,
  ``os.environ["KEY"] = …``, ``process.env.KEY = …``, ``ENV["KEY"] = …``, Windows
  ``setx KEY value``, Dockerfile ``ENV KEY value`` / ``ARG KEY value``, argv lists
  ``["--password", "…"]``, env calls ``setenv("KEY", "…")`` / ``os.getenv("KEY", "…")`` /
  ``os.environ.setdefault("KEY", "…")``). A key is
  secret-named when it contains, case-insensitively, PASSWORD/PASSWD/PASSPHRASE, API_KEY/APIKEY,
  ACCESS_KEY, PRIVATE_KEY, SECRET_KEY, CLIENT_SECRET, CREDENTIAL(S), AUTH_TOKEN/ACCESS_TOKEN/…, or
  has as its head noun (its last word, ignoring ``_prod``/``_v2``-like suffixes) a word SECRET(S),
  TOKEN, AUTH, AUTHORIZATION, PASS, PWD, PW, CREDS (words split on ``_ - .`` and camelCase):
  ``GITHUB_TOKEN`` and ``x-auth-token`` are, ``authInfo``, ``TokenSource`` and ``auth_event`` are
  not. A key whose head noun is KEY, SIG(NATURE), DSN or SESSION(ID) (``routing_key``,
  ``Ocp-Apim-Subscription-Key``, ``sig=`` in a SAS URL, ``sessionid``; not ``public_key``,
  ``cache_key``, ``sort_key``…) loses its value only when the value is token-shaped and not a UUID
  (marker ``[REDACTED:key]``). Keys whose last word says they hold metadata, not the secret
  (``password_length``, ``token_count``, ``secret_name``, ``token_url``, ``api_key_header``,
  ``password_file``, ``auth_type``, …) are left alone. DSNs and database URLs lose their password
  through the URL rule.
* Name/value pairs whose name is a secret-named key: Kubernetes/compose env lists
  (``- name: DB_PASSWORD`` then ``value: …`` on the next line), ``{"name": "DB_PASSWORD",
  "value": "…"}`` (ECS), ``{"key": "api_key", "value": "…"}`` (Postman), CloudFormation
  ``"ParameterKey": …, "ParameterValue": …``, XML attributes ``<add key="ApiKey" value="…"/>`` /
  ``<property name="db.password" value="…"/>``. The ``value`` key must directly follow the name
  (after ``,``, blanks and at most two line breaks); ``valueFrom`` references are not values.
* XML elements whose tag name ends in a secret word (``<password>``, ``<apiKey>``,
  ``<clientSecret>``, ``<authToken>``, ``<secret>``; not ``<PasswordInput>`` or ``<AuthLayout>``)
  lose their text or CDATA content, when the matching closing tag follows it; attributes are
  allowed; empty content, references (``${env.PW}``, ``{{ x }}``), literals and numbers of at most
  6 digits are kept.

The literal-value rule for secret-named keys (so that code is not mangled):

* A quoted value (``"…"``, ``'…'``, JSON-escaped ``\\"…\\"``, with ``f``/``r``/``b`` prefixes,
  unclosed quotes run to the line end) is always redacted, keeping the quotes.
  Kept: empty strings, references and templates (``"${TOKEN}"``, ``f"Bearer {token}"``), a
  lone ``Bearer``/``Basic`` scheme word (only the credential after it goes), one to three
  punctuation characters (``token = " ".join(…)``), and a quoted string that is itself followed
  by ``:``/``=`` (it is the next key).
* An unquoted value is redacted only when it is a word that is not an expression: it is kept if
  it is a call or subscript (see below), starts with ``$`` (``$VAR``, ``${VAR}``,
  ``$(cmd)``), is a template (``{{x}}``, ``{x}``, ``<your-token>``, ``%VAR%``), a keyword, literal
  or type name (``None null true false await new str value data …``), a number of at most 6 digits
  or a hex literal (``0x20``), a mask (``****``, ``xxx``), one or two characters or no letter or
  digit at all (``auth=("user", "pass")``), a digit-free variable name that itself names a secret
  (``password=password``, ``token = auth_token``, ``API_KEY``), a secret-named key of its own
  (``password=token=…``: that key is handled instead), or follows ``==``/``!=``. An identifier
  that is not token-shaped is a reference too when it is an attribute chain (``self.password``,
  ``tk.AccessToken``, ``_t.AuthType``, ``!!_config.withCredentials``), a digit-free PascalCase type
  or class (``auth: AuthType``, ``CancelToken: CancelTokenStatic``), a digit-free name after an
  everyday key outside a shell assignment (``auth=tinfo``), or any name where the text is code: a
  keyword argument (``f(a, password=phrase)``), an assignment to an attribute
  (``sessions.get_netrc_auth = mock_fn``), or a value followed by ``,`` ``;`` ``)`` ``}`` or an
  operator (``withCredentials: defaultToConfig2,``, ``auth = username + ':'``). A quoted value
  that is an UPPER_SNAKE name of a secret (``awsSessionToken = "AWS_SESSION_TOKEN"``), a quote that
  closes a string the key sits in (``assert "Confirm Password: " in out``) and an interpolated
  string whose literal words hold no digits (``f"Repeat {index}"``) are kept.
* A whitespace separator (``--password hunter2``) counts only for command-line flags (keys
  starting with ``-``) and after ``setx`` (any case, where a command starts) or ``ENV``/``ARG``
  (upper case, at a line start or where a command starts), so prose such as "the password is"
  is untouched. A ``,`` separator counts only between a quoted ``--flag`` and a quoted value
  (``["--password", "…"]``; a value starting with ``-`` is the next flag) and for the first
  argument of ``setenv``/``putenv``/``getenv``/``setdefault``/``environ.get``/
  ``SetEnvironmentVariable`` calls; an unquoted value after ``,`` is a variable and is kept.
* Assignment context — ``KEY=value`` with no blank around ``=`` and the key at the start of the
  text or after a blank, a quote, ``;``, ``&``, ``|`` or a JSON escape (so at a line start, after
  ``export``/``set``/``ENV``/``ARG``/``&&``, in ``-e KEY=v`` or ``"KEY=v"``), any ``--flag=value``
  or ``--flag value``, and the ``setx``/``ENV``/``ARG`` space forms: the unquoted value runs to
  the next blank, quote, backtick, JSON escape or ``</``, keeping ``& ; , | ( ) { } [ ]`` inside
  it (``DB_PASSWORD=Tr0ub4dor&3xyz``, ``PASS=abc;def123``). It stops before ``&&``/``||`` and
  before a ``&``/``;``/``,`` that starts the next ``key=`` (``password=x&user=bob``,
  ``Password=x;Database=y``); trailing ``. , ;`` and any ``) ] }`` with no opener inside the
  value are left out (``f(a, password=pw)``, ``(DB_PASSWORD=x).``). It is a call, and kept, only
  when it is an identifier chain directly followed by ``(``/``[`` whose brackets stay open to the
  end of the run (``getpass("…")``, ``f(a, b)``) or close and are followed only by ``.attr``,
  further calls/subscripts or that trailing punctuation (``get_token()``, ``cfg.get(x).strip();``,
  ``arr[0]``): ``ab(cd)ef9876`` goes on with a word after ``)`` and is redacted. The other keep
  rules above apply to the whole value. A Dockerfile ``ENV KEY value`` at a line start redacts
  to the end of the line (that is the value's syntax), elsewhere one word.
* ``key: value`` at the start of a line (YAML, HTTP headers) redacts to the end of the line, so
  multi-word passphrases do not leak; elsewhere (outside assignment context) an unquoted value
  ends at whitespace, one of ``" ' ` , ; & | < > ( ) { } [ ]`` or a JSON escape (``\\n``,
  ``\\"``), and one followed by ``(`` or ``[`` is a call or subscript. A one-word key that is
  also an everyday word (``auth``, ``token``, ``secret``) followed by several words on its line
  is prose (``auth: rotate the token cache``, ``ENV TOKEN is read from …``, a commit subject)
  and is kept; ``path::symbol`` anchors never count as ``key: value``.

Deliberately not caught (too ambiguous, or would destroy ordinary text): bare strings shorter
than 20 characters or that read as identifiers, hexadecimal ones (an API key of 32 hex digits is
caught only after a key name or prefix: a 40-hex git SHA and a UUID in prose must survive, memories
cite commits), a digit-free literal that looks like an identifier (``password: CorrectHorse``, a
PascalCase word; ``auth: hunter``), a literal with digits where the text is code
(``f(password=hunter2)``, ``password: hunter2,``), a JWK private member more than 2 KB from
``"kty"``, ``-p value`` / ``-pSECRET`` short flags (unless the secret is a prefixed or bare token),
``password is hunter2`` in prose, an all-capitals ``-u user:PASSWORD`` (a placeholder), a value
that is a bare everyday variable-like word naming a secret (``PASSWORD=secret``), secrets inside
triple-quoted multi-line strings, tokens glued to letters on either side (``xAKIA…``: not the token
format), DSN/key names on their own (``SENTRY_DSN`` holds a public key; DSNs with a password lose it
through the URL rule), non-string leaves such as
``bytes`` in :func:`redact` (returned unchanged), and:

* an unquoted value in assignment context that has the shape of a call (``PASSWORD=ab(cd)``,
  ``TOKEN=Pass(w0rd)``): indistinguishable from ``TOKEN=get_token()``;
* blanks inside an unquoted ``key=value`` value (``password=correct horse`` in an .ini file: at
  a line start that is also the shape of ``PGPASSWORD=x psql …``, so only the first word goes);
* ``key = value`` with blanks around ``=``, or a lower-case ``key=value`` after ``(``, ``,`` or
  ``?`` (code, keyword arguments and query strings; an UPPER_CASE name after ``( [ {`` is an
  environment assignment and is redacted whole): the short value rule applies there, so an
  unquoted .ini value ``password = ab&cd`` loses only ``ab``;
* name/value pairs in the reverse order (``{"value": "…", "name": "DB_PASSWORD"}``), with other
  keys between them, or with the ``value`` key more than 64 characters after the name;
* two quoted strings whose first is not a ``--flag`` or an env call's first argument
  (``["password", "email"]`` is a list of field names);
* XML elements with a namespace prefix (``<ns:password>``), CDATA content over 4 KB, and fish
  ``set -x KEY value``.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    from collections.abc import Iterable
    from typing import Any, Literal, TypeAlias

    #: (kind, needles, pattern, flags, group, boundary): see _RULES.
    _Rule: TypeAlias = tuple[str, tuple[str, ...], str, int, int | str, Literal["word", "space"] | None]

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
_compiled: dict[tuple[str, int], re.Pattern[str]] = {}


def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
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
# Each rule: (kind, needles, pattern, flags, group, boundary). The pattern is compiled and run
# only when one of the needles occurs in the text (an all-lower-case needle is looked up in a
# case-folded copy, any other in the text itself): a C-speed substring test (~50 µs per 100 KB)
# instead of a regex scan, and no compile cost (~0.2-0.7 ms a pattern) for rules that cannot
# match. Every pattern starts with a literal or a small character class so the regex engine can
# skip ahead; a word boundary before the match is checked in Python ("word": no letter, digit or
# _ before it; "space": start or whitespace before it). Only the named group (or the whole match
# for group 0) is replaced.

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_KEYSEP = r"""[\w.-]{0,30}?["']?[ \t]*[:=]{1,2}[ \t]*["']?"""

_RULES: tuple[_Rule, ...] = (
    # Key lines of private-key formats that are not PEM blocks (PEM: _redact_pem_blocks).
    ("private-key", ("age-",),          # age X25519 identities and plugin identities (bech32)
     r"AGE-(?:SECRET-KEY-|PLUGIN-[A-Z0-9]{1,40}-)1[02-9AC-HJ-NP-Z]{40,}", 0, 0, "word"),
    ("private-key", ("nsec1",), r"nsec1[02-9ac-hj-np-z]{58}(?![A-Za-z0-9])", 0, 0, "word"),   # Nostr (NIP-19)
    ("private-key", ("prv",),           # BIP-32 extended private keys (xprv, tprv, yprv, zprv…)
     r"[xtyzuvYZUV]prv[1-9A-HJ-NP-Za-km-z]{100,112}(?![A-Za-z0-9])", 0, 0, "word"),
    ("private-key", ("RWRTY0Iy", "RWQAAEIy", "RWRCSw"),   # minisign / signify secret keys (base64)
     r"RW(?:RTY0Iy|QAAEIy|RCSw)[A-Za-z0-9+/]{60,}={0,2}", 0, 0, "word"),
    ("private-key", ("untrusted comment",),   # the key line under a "... secret key" comment
     r"untrusted comment:[^\n]{0,200}?secret key[^\n]{0,100}\r?\n(?P<v>[A-Za-z0-9+/]{40,}={0,2})", 0, "v", None),
    ("private-key", ("private-lines",),       # PuTTY .ppk: the Private-Lines block
     r"Private-Lines:[ \t]*\d{1,4}[ \t]*\r?\n"
     r"(?P<v>[A-Za-z0-9+/=]{4,}(?=\r?\n|\Z)(?:\r?\n[A-Za-z0-9+/=]{4,}(?=\r?\n|\Z)){0,199})",
     0, "v", None),
    ("aws-access-key", ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
     r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])", 0, 0, "word"),
    ("aws-secret-key", ("aws",),
     _ci("aws") + r"(?i:[\w.-]{0,30}?secret)" + _KEYSEP + r"(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
     0, "v", "word"),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"g(?:h[pousr]_[A-Za-z0-9]{30,251}(?![A-Za-z0-9_])|ithub_pat_[A-Za-z0-9_]{22,255})", 0, 0, "word"),
    ("gitlab-token", ("glpat-", "gldt-", "glrt-", "glptt-"), r"gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}", 0, 0, "word"),
    ("slack-token", ("xox", "xapp-"), r"x(?:ox[abposre]-[A-Za-z0-9-]{10,}|app-\d-[A-Za-z0-9-]{10,})", 0, 0, "word"),
    ("slack-webhook", ("hooks",),
     r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/-]+)", 0, "v", None),
    ("discord-webhook", ("hooks",),
     r"discord(?:app)?\.com/api/webhooks/(?P<v>[0-9]+/[A-Za-z0-9_-]+)", 0, "v", None),
    ("stripe-key", ("_live_", "_test_"), r"[sr]k_(?:live|test)_[A-Za-z0-9]{10,}", 0, 0, "word"),
    ("stripe-key", ("whsec_",), r"whsec_[A-Za-z0-9+/=]{20,}", 0, 0, "word"),
    ("anthropic-key", ("sk-",), r"sk-ant-[A-Za-z0-9_-]{20,}", 0, 0, "word"),
    ("openai-key", ("sk-",),
     r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20,}(?![A-Za-z0-9_]))", 0, 0, "word"),
    ("google-api-key", ("AIza",), r"AIza[0-9A-Za-z_-]{35}", 0, 0, "word"),
    ("google-oauth-secret", ("GOCSPX-",), r"GOCSPX-[A-Za-z0-9_-]{20,}", 0, 0, "word"),
    ("npm-token", ("npm_",), r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])", 0, 0, "word"),
    ("pypi-token", ("pypi-AgE",), r"pypi-AgE[A-Za-z0-9_-]{20,}", 0, 0, "word"),
    ("twilio-api-key", ("SK",), r"SK[0-9a-f]{32}(?![A-Za-z0-9_])", 0, 0, "word"),
    ("sendgrid-key", ("SG.",), r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}", 0, 0, "word"),
    ("azure-storage-key", ("accountkey=", "sharedaccess"),
     r"(?:AccountKey|SharedAccess(?:Key|Signature))=(?P<v>[^;\s\"'<>]+)", 0, "v", "word"),
    ("heroku-api-key", ("heroku",), _ci("heroku") + _KEYSEP + f"(?P<v>{_UUID})(?![0-9a-fA-F-])",
     0, "v", "word"),
    # Provider tokens whose prefix has no separator (the generic prefixed-token rule needs one):
    # Databricks, EasyPost, Artifactory, Atlassian, Amazon Bedrock (gitleaks' rule definitions).
    ("api-token", ("dapi", "EZAK", "AKCp", "ATATT3", "ABSK"),
     r"(?:dapi[a-f0-9]{32}(?:-\d)?|EZAK[A-Za-z0-9]{54}|AKCp[A-Za-z0-9]{69}|ATATT3[A-Za-z0-9_=-]{150,}"
     r"|ABSK[A-Za-z0-9+/]{100,}={0,2})(?![A-Za-z0-9])", 0, 0, "word"),
    ("api-token", ("atlasv1",), r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", 0, 0, "word"),
    ("maxmind-license-key", ("_mmk",), r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?![A-Za-z0-9_])", 0, 0, "word"),
    ("azure-client-secret", ("Q~",), r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
     0, 0, "word"),
    ("jwt", ("eyJ",), r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*", 0, 0, "word"),
)

# Rules that run after the secret-named-key rule: their values may be keys of an assignment
# (``Authorization: SECRET_KEY = '…'``), which that rule must see first.
_LATE_RULES: tuple[_Rule, ...] = (
    ("url-password", ("://",), r"://[^\s:/?#@'\"<>\[\]]{0,256}:(?P<v>[^\s/?#'\"<>]{1,512})@", 0, "v", None),
    ("authorization", ("authorization",),
     _ci("authorization") + r"\b\\?[\"']?[ \t]*[:=][ \t]*(?:\\?[rRbBuUfF]{0,2}[\"'`])?"
     r"(?P<s>(?i:bearer|basic|token|digest|negotiate|ntlm|bot|apikey|sso-key)[ \t]+)?"
     r"(?P<v>[^\s\"'`<>\\,]+)", 0, "v", "word"),
    ("bearer-token", ("bearer",), r"[Bb]earer[ \t]+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)", 0, "v", "word"),
    ("basic-auth", ("basic",),
     r"[Bb]asic[ \t]+(?P<v>(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])", 0, "v", "word"),
    ("basic-auth", ("-u", "--user"),
     r"-(?:u|-user)(?:[ \t]+|=)[\"']?[^\s:\"'@\[\]]{0,256}:(?P<v>(?!\[REDACTED)[^\s\"']{1,512})", 0, "v", "space"),
)


def _fold(text: str) -> str:
    """ASCII-lower-cased copy of ``text`` with the same length (non-ASCII characters become ``?``),
    so offsets found in it are offsets in ``text``."""
    if text.isascii():
        return text.lower()
    return text.encode("ascii", "replace").decode("ascii").lower()


_REFERENCE = (r"\$|%\w+%$|%\(\w+\)s$|%s$|\{\{|\{[\w.]*(?:![rsa])?(?::[^{}]{0,20})?\}$|"
              r"<[^<>]*>$|\*{3,}$|•+$|[xX]{3,}$|\.\.\.$|"
              + _MARKER + "$")
_PLACEHOLDER = r"\$\{[^{}]*\}|\{[^{}]*\}|\$\w+"
_MORE_ON_LINE = r"[ \t\r]*[^\s]"
_NEXT_KEY = r"[ \t]*(?::(?![:=])|=(?!=))"
_KEYLIKE = r"[A-Za-z_][\w.-]{0,80}(?=[:=])"
_SCHEMES = ("", "bearer", "basic", "token", "digest", "bot")
_SCHEME_PREFIX = r"(?i:bearer|basic|token|digest|bot)[ \t]+(?=\S)"


def _is_reference(value: str) -> bool:
    """A value that points at a secret instead of being one (``$VAR``, ``{{x}}``, ``<token>``…)."""
    return _rx(_REFERENCE).match(value) is not None


def _is_template(value: str) -> bool:
    """An interpolated value whose literal part holds nothing credential-like: ``f"Bearer {token}"``,
    ``"Bearer ${TOKEN}"``, ``f"Repeat {index}"`` (words of letters and punctuation, at most 12
    characters each, or a scheme word)."""
    if "{" not in value and "$" not in value:
        return False
    rest = _rx(_PLACEHOLDER).sub("", value)
    if rest == value:
        return False
    if rest.strip().lower() in _SCHEMES:
        return True
    return all(len(w) <= 12 and not any(c.isdigit() for c in w) for w in rest.split())


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _rule_sub(kind: str, pattern: str, flags: int, group: int | str, boundary: Literal["word", "space"] | None,
              text: str) -> str:
    mark = _marker(kind)

    def repl(m: re.Match[str]) -> str:
        s = m.start()
        if s and boundary:
            before = text[s - 1]
            if (_word_char(before) if boundary == "word" else not before.isspace()):
                return m.group(0)
        if group == 0:
            return mark
        v = m.group(group)
        if _is_reference(v) or (kind == "basic-auth" and (v.replace(":", "").isdigit()
                                                          or _rx(r"<[^<>]*>|[A-Z][A-Z_]{0,39}").fullmatch(
                                                              v.rstrip(".,;)")))):
            return m.group(0)        # -u 1000:1000 (uid:gid), -u user:TOKEN, -u me:<password> (placeholders)
        if kind == "authorization":
            if not m.group("s") and v.isalpha() and len(v) < 20:
                return m.group(0)        # prose: "Authorization: check roles first"
            ref = v.rstrip(",;)]}")
            call = _rx(_CALL_HEAD).match(v)
            if call:
                ref = call.group()       # authorization = typing.cast(…), Authorization: f(x)
            if (not ref or (not ref[0].isalnum() and ref[0] not in "+/")
                    or ref.lower() in _NON_SECRET_WORDS):
                return m.group(0)        # "Authorization": []string{…}, "Authorization: *"
            if (_rx(r"\w+=").fullmatch(ref)
                    or (_rx(_IDENT_REF).fullmatch(ref) and len(ref) <= 64 and not _token_shaped(ref, 16)
                        and ("." in ref or not any(c.isdigit() for c in ref)))):
                return m.group(0)        # {"Authorization": auth_value}, Digest username="…"
        whole = m.group(0)
        return whole[:m.start(group) - s] + mark + whole[m.end(group) - s:]

    return _rx(pattern, flags).sub(repl, text)


# ---------------------------------------------------------------------------------------------
# Secret-named keys.

# Candidate keys are found with substring searches for these hints in the case-folded text; the
# whole key around a hit is then recovered and classified by _secret_key_kind.
_HINTS = ("pass", "pw", "secret", "token", "auth", "cred", "key", "sig", "dsn", "session")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_MAX_KEY = 80
_KEY_REST = r"[\w.-]*"
_KV_TAIL = r"""
    (?P<kq>\\?(?:["'`]\]?)?)                      # closing quote of a quoted key (+ "]")
    (?P<ann>[ \t]*:[ \t]*[A-Za-z_][\w.]*(?:\[[\w.\[\], |]{0,40}\])?    # type annotation
        (?:[ \t]*\|[ \t]*[A-Za-z_][\w.]*(?:\[[\w.\[\], |]{0,40}\])?){0,3}(?=[ \t]*=(?!=)))?
    (?P<sep>[ \t]*(?:=>|:=|==|!=|=|:(?!:))[ \t]*|[ \t]*,\s{0,40}|[ \t]+)
    (?P<val>
        [rRbBuUfF]{0,2}"[^"\\\n]*(?:\\.[^"\\\n]*)*"?
      | [rRbBuUfF]{0,2}'[^'\\\n]*(?:\\.[^'\\\n]*)*'?
      | \\"[^"\\\n]*(?:\\[^"\n][^"\\\n]*)*(?:\\")?
    )?                                             # no quote: the value is an _UNQUOTED run
"""
# An unquoted value: a run of characters up to whitespace, a quote, a shell/code delimiter or an
# escaped ``\n``/quote (JSON-encoded text). Runs are memoised so that many keys inside one long
# run (``password=password=…``) cost linear time.
_UNQ_CHAR = r"[^\s\"'`,;&|<>(){}\[\]\\]"
_UNQ_ESC = r"\\(?:\\|(?![nrt\"']))"
_UNQUOTED = f"(?:{_UNQ_CHAR}|{_UNQ_ESC}){_UNQ_CHAR}*(?:{_UNQ_ESC}{_UNQ_CHAR}*)*"

# Assignment context (``KEY=value`` with no space around ``=``, the key at the start of a line or
# after whitespace, a quote, ``;``, ``&`` or ``|``; a ``--flag``; ``setx``/``ENV``/``ARG`` space
# forms): the unquoted value is a *long* run up to whitespace, a quote, a JSON escape or ``</``.
# ``&``, ``;``, ``,`` and ``|`` stay inside it unless they start a shell operator (``&&``,
# ``||``) or the next ``key=`` (``a=1&b=2``, ``Password=x;Database=y``).
_NEXT_ASSIGN = r"[A-Za-z_][\w.-]{0,80}="
_LONG = (r"(?:[^\s\"'`\\<&;,|]|<(?!/)|&(?!&|" + _NEXT_ASSIGN + r")|\|(?!\|)|[;,](?!" + _NEXT_ASSIGN
         + r")|" + _UNQ_ESC + r")+")
_ASSIGN_AFTER = frozenset(" \t\r\n\"'`;&|\\")
_TRAIL_PUNCT = ";,.)]}"          # closes a sentence, call or statement around the value
_CALL_HEAD = r"[A-Za-z_][\w.]*(?=[(\[])"
_METHOD = r"\.[A-Za-z_]\w*"
# ``setx KEY value`` / Dockerfile ``ENV KEY value`` / ``ARG KEY value`` where a command starts.
_CMD_START = frozenset(" \t\r\n;&|(")
# ``setenv("API_TOKEN", "…")``, ``os.environ.setdefault(…)``, ``os.getenv("SECRET_KEY", "…")``.
_ENV_CALL = (r"(?i:setenv|putenv|getenv|setdefault|environ\.get|setenvironmentvariable)"
             r"\([ \t]*\\?[\"'`]\Z")
# A name/value pair whose name is a secret-named key: ``- name: DB_PASSWORD`` + ``value: …``
# (Kubernetes, compose), ``{"name": "X", "value": "…"}`` (ECS, Postman ``key``), CloudFormation
# ``ParameterKey``/``ParameterValue``, XML attributes ``<add key="ApiKey" value="…"/>``.
_PAIR_NAME = r"(?i:name|key)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?\Z"
_PAIR_VALUE = (r"[ \t]*,?[ \t]*(?:\r?\n|\\[rn]){0,2}[ \t]*\\?[\"']?(?P<k>[vV]alue|VALUE|ParameterValue)"
               r"(?=\\?[\"']?[ \t]*[:=])")
# ``<password>…</password>``: attributes allowed; CDATA or text content up to the closing tag.
_XML_OPEN = r"(?:[ \t\r\n][^<>]{0,200}?)?(?<!/)>"
_CDATA = "<![CDATA["
_XML_TAIL = ("password", "passwd", "passphrase", "pwd", "pass", "secret", "secrets", "token",
             "credential", "credentials", "creds", "apikey", "accesskey", "privatekey", "secretkey",
             "signingkey", "encryptionkey")

_CAMEL = r"([a-z0-9])([A-Z])"
_SPLIT = r"[^a-z0-9]+"
_IDENT_CHAIN = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_VAR_NAME = r"_*(?:[a-z]+(?:_+[a-z]+)*_*|[A-Z]+(?:_+[A-Z]+)*_*|[a-z]+(?:[A-Z][a-z]+)+)"
_STRONG = ("password", "passwd", "passphrase", "apikey", "accesskey", "privatekey", "secretkey",
           "clientsecret", "credential", "authtoken", "accesstoken", "refreshtoken",
           "sessiontoken", "bearertoken", "signingkey", "encryptionkey")
_WEAK = frozenset(("secret", "secrets", "token", "auth", "authorization", "pass", "pwd", "pw",
                   "creds", "cred", "passwd"))
# Words after the head noun that do not change what a key holds (``API_TOKEN_PROD``, ``token_v2``).
_SUFFIX_WORDS = frozenset("""prod production dev development staging stage live local old new ci
    b64 base64 raw enc encoded hex default""".split())
# Keys whose head noun is one of these hold a secret only when the value looks machine-generated
# (``routing_key``, ``DD_APP_KEY``, ``Ocp-Apim-Subscription-Key``, ``sig=`` in a SAS URL,
# ``SENTRY_DSN``, ``sessionid``): ``cache_key = "user:42"`` and ``key: value`` are ordinary.
_KEYISH = frozenset(("key", "keys", "sig", "signature", "dsn", "sessionid", "session"))
_NOT_KEYISH = frozenset(("public", "pub", "publishable", "primary", "foreign", "sort", "partition",
                         "cache", "lookup", "dict", "map", "hash", "idempotency", "dedup", "row", "the"))
_META = frozenset("""count counts type types kind len length limit limits size min max minlength
    maxlength url uri urls endpoint file filename files path paths dir directory name names env
    var variable vars field fields header headers prompt prompts policy mode method methods enabled
    disabled required regex re pattern format strength expiry expires expiration ttl timeout
    lifetime age provider providers user username login email host port scheme scope scopes label
    description help hint placeholder message msg error errors index idx position pos start end
    offset budget usage used cost rate version class cls factory manager service store cache
    validator validation check checker handler callback fn func hook hooks valid invalid exists
    set enable disable flow flows status state level backend backends plugin plugins module
    py js ts tsx jsx go rs java rb md txt json yaml yml toml cfg ini sh getter setter loader reader
    writer input widget dialog form param params arg args option options opt opts flag flags
    hasher hashing encoder decoder strategy event events info seconds secs ms millis minutes hours
    days style source sources supplier suppliers""".split())
_NON_SECRET_WORDS = frozenset("""none null nil undefined true false yes no on off enabled disabled
    required optional await new yield lambda function fn not typeof self this str string bytes
    int integer bool boolean float number any object dict list secretstr char text bearer
    basic digest negotiate ntlm value val values data result args kwargs params options opts obj
    item arg default defaults input config cfg conf settings ctx context range async void func
    function""".split())


def _key_words(key: str) -> list[str]:
    return [w for w in _rx(_SPLIT).split(_rx(_CAMEL).sub(r"\1_\2", key).lower()) if w]


_key_cache: dict[str, tuple[str | None, bool]] = {}


def _key_info(key: str) -> tuple[str | None, bool]:
    """(marker kind or None, is a single everyday word such as ``auth``) for a key; cached.

    A key names a secret when it contains a strong word anywhere (``password``, ``api_key``,
    ``client_secret``: ``DB_PASSWORD_FILE`` is the exception, its last word says it holds
    metadata), or when its head noun — the last word, ignoring ``_prod``/``_v2``-like suffixes — is
    a weak word (``token``, ``auth``, ``secret``): ``GITHUB_TOKEN`` and ``x-auth-token`` do,
    ``authInfo``, ``TokenSource`` and ``Dummy-Auth-Test`` do not. Kind ``"key"`` (a head noun such
    as ``key``, ``sig``, ``dsn``) is a secret only when its value is token-shaped (see
    :func:`_token_shaped`); callers check that.
    """
    info = _key_cache.get(key)
    if info is not None:
        return info
    words = _key_words(key)
    kind = None
    head = len(words)
    while head > 1 and (words[head - 1] in _SUFFIX_WORDS or words[head - 1].isdigit()
                        or _rx(r"v\d+").fullmatch(words[head - 1])):
        head -= 1
    last = words[head - 1] if words else ""
    if words and words[-1] not in _META:
        flat = "".join(words)
        if any(s in flat for s in _STRONG) or last in _WEAK or last.endswith(("secret", "token")):
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
        elif last in _KEYISH and not _NOT_KEYISH.intersection(words):
            kind = "key"
    weak = len(words) == 1 and words[0] in _WEAK and not any(s in words[0] for s in _STRONG)
    info = (kind, weak)
    if len(_key_cache) < 4096 and len(key) <= _MAX_KEY:
        _key_cache[key] = info
    return info


def _secret_key_kind(key: str) -> str | None:
    """The marker kind for a key that names a secret whatever its value (``password``, ``token``,
    ``api-key``…), else None (also for kind ``"key"``, which depends on the value)."""
    kind = _key_info(key)[0]
    return None if kind == "key" else kind


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


_IDENT_REF = r"!{0,2}[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*"
_PASCAL = r"_*[A-Z][a-z]+(?:[A-Z]+[a-z]*)+"
_NUMBER_LITERAL = r"0[xXoObB][0-9a-fA-F_]+[uUlL]*|\d{1,6}(?:\.\d+)?"
# What may follow a value that is code, not a literal: closing punctuation of a call, object or
# statement directly after it, or an operator of an expression (`` + ``, a ternary `` ? ``).
_CODE_AFTER = r"[,;)}]|[ \t]+(?:\+|\?\??|if|or|and)[ \t]"


def _keep_unquoted(value: str | None, sep: str, after: str, flag: bool, weak: bool = False,
                   code: bool = False) -> bool:
    """True when an unquoted value of a secret-named key is code or a reference, not a literal.

    ``value`` is None for a run longer than 256 characters (only the cheap checks apply then);
    ``after`` is the text that follows it (a few characters are looked at); ``weak`` says the key
    is one everyday word (``auth``, ``token``); ``code`` says the key is a keyword argument
    (``f(a, password=pw)``). An identifier — not token-shaped — is a reference and kept when it
    is an attribute chain (``tk.AccessToken``, ``_t.AuthType``), a PascalCase type or class name
    (``AuthType``, ``CancelTokenStatic``), a digit-free name after an everyday key
    (``auth=tinfo``), or any name where the text is code (a keyword argument, or the value is
    followed by ``,`` ``;`` ``)`` ``}`` or an operator: ``withCredentials: defaultToConfig2,``).
    """
    op = sep.strip()
    if not op and not flag:
        return True                      # "the password is", "for token in tokens"
    if op in ("==", "!=", "===", "!=="):
        return True                      # comparison with a variable
    if after[:1] in ("(", "[", "{"):
        return True                      # call, subscript or literal: getpass(), os.environ["X"], T{}
    if value is None:
        return False
    if _is_reference(value) or value.lower() in _NON_SECRET_WORDS:
        return True
    if not any(c.isalnum() for c in value) or len(value) <= 2:
        return True                      # auth=("user", "pass"): the value is elsewhere
    if _rx(_NUMBER_LITERAL).fullmatch(value):
        return True                      # TOKEN_QUERY = 0x8, timeout=30
    if _names_secret(value):
        return True                      # password=password, self.token, process.env.TOKEN
    if not _rx(_IDENT_REF).fullmatch(value) or _token_shaped(value, 16):
        return False
    if "." in value or value.startswith("!") or _rx(_PASCAL).fullmatch(value):
        return True
    code = code or _rx(_CODE_AFTER).match(after) is not None
    if any(c.isdigit() for c in value):
        return code
    return code or weak


def _is_call(value: str) -> bool:
    """``get_token()``, ``getpass(`` (arguments cut off by a quote or space), ``arr[0]``,
    ``f(x).strip();``: an identifier chain directly followed by ``(``/``[`` whose brackets either stay
    open or close and are followed only by more calls, subscripts, ``.attr`` or closing punctuation.
    ``ab(cd)ef9876`` continues with a word after ``)`` and so is a literal, not a call."""
    m = _rx(_CALL_HEAD).match(value)
    if m is None:
        return False
    i, n = m.end(), len(value)
    while True:                         # value[i] opens a bracket
        depth = 0
        while i < n:
            ch = value[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        if i >= n:
            return True                 # still open: the arguments go on past the run
        i += 1
        attr = _rx(_METHOD).match(value, i)
        if attr:
            i = attr.end()
        if i < n and value[i] in "([":
            continue
        return value[i:].strip(_TRAIL_PUNCT) == ""


def _strip_closers(text: str, vs: int, ve: int) -> int:
    """End of the value ``text[vs:ve]`` without the punctuation that closes what surrounds it: a
    trailing ``.`` ``,`` ``;`` and any ``)`` ``]`` ``}`` with no opener inside the value (at most
    256 characters are looked at)."""
    if text[ve - 1] not in _TRAIL_PUNCT:
        return ve
    e = ve
    lo = max(vs, ve - 256)
    opened = {")": text.count("(", lo, ve), "]": text.count("[", lo, ve), "}": text.count("{", lo, ve)}
    closed = {")": text.count(")", lo, ve), "]": text.count("]", lo, ve), "}": text.count("}", lo, ve)}
    while e > lo:
        ch = text[e - 1]
        if ch in ".,;":
            pass
        elif ch in closed and closed[ch] > opened[ch]:
            closed[ch] -= 1
        else:
            break
        e -= 1
    return e


def _space_keyword(text: str, ks: int) -> tuple[bool, bool]:
    """(True, to_line_end) when the key at ``ks`` follows ``setx``/``ENV``/``ARG`` and blanks:
    ``setx API_KEY value`` where a command may start (one word), Dockerfile ``ENV API_TOKEN value``
    (the rest of the line when ``ENV`` starts the line, else one word)."""
    we = ks
    while we > 0 and ks - we <= 8 and text[we - 1] in " \t":
        we -= 1
    ws = we
    while ws > 0 and we - ws <= 4 and text[ws - 1].isalpha():
        ws -= 1
    word = text[ws:we]
    if word not in ("ENV", "ARG") and word.lower() != "setx":
        return False, False
    if ws and text[ws - 1] not in _CMD_START:
        return False, False
    if word.lower() == "setx":
        return True, False
    line = text.rfind("\n", max(0, ws - 64), ws)      # (bounded: linear on one huge line)
    first = (line >= 0 or ws <= 64) and text[line + 1:ws].strip(" \t") == ""
    return True, first


def _name_value_pair(text: str, low: str, ks: int, j: int) -> re.Match[str] | None:
    """The ``value`` key that follows a secret-named key used as the value of a ``name``/``key``
    field (``- name: DB_PASSWORD`` / ``  value: …``, ``{"key": "api_key", "value": "…"}``)."""
    if low.find("value", j, j + 64) < 0:
        return None
    lo = max(0, ks - 24)
    if low.find("name", lo, ks) < 0 and low.find("key", lo, ks) < 0:
        return None
    if _rx(_PAIR_NAME).search(text, lo, ks) is None:
        return None
    return _rx(_PAIR_VALUE).match(text, j)


_xml_cache: dict[str, str | None] = {}


def _xml_secret(text: str, ks: int, key_end: int) -> tuple[str, int, int] | None:
    """(kind, start, end) of the content of ``<password>…</password>``-like elements whose tag
    name ends in a secret word (``apiKey``, ``clientSecret``, ``authToken``; not
    ``PasswordInput`` or ``AuthLayout``), or None."""
    key = text[ks:key_end]
    kind = _xml_cache.get(key, "")
    if kind == "":
        flat = "".join(_key_words(key))
        kind = _key_info(key)[0] if flat.endswith(_XML_TAIL) else None
        if len(_xml_cache) < 1024:
            _xml_cache[key] = kind
    if kind is None:
        return None
    m = _rx(_XML_OPEN).match(text, key_end)
    if m is None:
        return None
    a = m.end()
    if text.startswith(_CDATA, a):      # <password><![CDATA[…]]></password> (≤ 4 KB)
        a += len(_CDATA)
        b = text.find("]]>", a, a + 4096)
        if b < 0:
            return None
        close = b + 3
    else:
        close = b = text.find("<", a)     # text content ends at the next tag (runs never overlap)
        if b < 0:
            return None
    if not text.startswith("</" + key, close):
        return None
    close += 2 + len(key)
    while text[close:close + 1] in (" ", "\t"):
        close += 1
    if text[close:close + 1] != ">":
        return None
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    inner = text[a:b]
    if (not inner or _is_reference(inner) or _only_markers(inner) or _is_template(inner)
            or inner.lower() in _NON_SECRET_WORDS or (inner.isdigit() and len(inner) <= 6)):
        return None
    return kind, a, b


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
    tail_rx = None                    # compiled on the first plausible key
    run_start = run_end = -1          # memoised _UNQUOTED run
    long_start = long_end = -1        # memoised _LONG run
    out: list[str] = []
    done = 0          # text[:done] is already copied to out
    skip_until = 0    # hits before this offset belong to a processed key or value
    kind: str | None  # the marker kind of the current key, if it names a secret
    for hs, he in hits:
        if hs < skip_until:
            continue
        rest = rest_rx.match(text, he)
        key_end = rest.end() if rest else he    # (it always matches: the pattern may match nothing)
        skip_until = key_end                # later hits in this key would find the same tail
        if key_end - hs > _MAX_KEY:
            continue
        ks = hs
        limit = max(hs - _MAX_KEY, done, 0)
        while ks > limit and text[ks - 1] in _KEY_CHARS:
            ks -= 1
        if ks == hs - _MAX_KEY and ks > 0 and text[ks - 1] in _KEY_CHARS:
            continue                        # an 80+ character identifier is not a key
        j = key_end + (text[key_end:key_end + 1] == "\\")
        quoted_key = text[j:j + 1] in ("'", '"', "`")
        j += quoted_key
        if quoted_key and text[j:j + 1] == "]":
            j += 1                          # os.environ["API_KEY"] = …
        k = j
        while text[k:k + 1] in (" ", "\t"):
            k += 1
        c = text[k:k + 1]
        forced = None                       # the kind of a name/value pair's name
        comma = space_kw = to_eol = False
        if c not in (":", "=", "!"):
            # No separator: only a few shapes can still carry a value (cheap tests first).
            dash = text[ks] == "-"
            if k > j and dash:
                pass                        # --password hunter2
            elif c == "," and quoted_key and text[ks - 1:ks] in ("'", '"', "`") and (
                    dash or _rx(_ENV_CALL).search(text, max(0, ks - 48), ks)):
                comma = True                # ["--password", "…"], setenv("API_TOKEN", "…")
            elif k > j and text[ks - 1:ks] in (" ", "\t") and (kw := _space_keyword(text, ks))[0]:
                space_kw, to_eol = kw                   # setx KEY …, ENV KEY …
            elif text[ks - 1:ks] == "<" and (k > j or c in (">", "\r", "\n")):
                found = _xml_secret(text, ks, key_end)
                if found is None:
                    continue                # <password>…</password>
                kind, rs, re_ = found
                out.append(text[done:rs])
                out.append(_marker(kind))
                done = skip_until = re_
                continue
            else:
                pair = _name_value_pair(text, low, ks, j)
                if pair is None:
                    continue                # "- name: DB_PASSWORD" + "value: …"
                forced = _key_info(text[ks:key_end])[0]
                if forced is None:
                    continue
                ks, key_end = pair.span("k")
                skip_until = key_end
        if tail_rx is None:
            tail_rx = _rx(_KV_TAIL, re.VERBOSE)
        tail = tail_rx.match(text, key_end)
        if tail is None:
            continue
        if forced:
            kind, weak = forced, False
        else:
            key = text[ks:key_end].lstrip("-.")
            kind, weak = _key_info(key) if key else (None, False)
        if kind is None:
            continue
        if _rx(_DOC_FIELD).search(text, max(0, ks - 40), ks):
            continue                        # ":param str password: the password to use" (docs)
        flag = text[ks] == "-" or space_kw
        sep = tail.group("sep")
        op = sep.strip()
        if (op == ",") != comma:
            continue
        # A keyword argument, f(a, password=pw): its unquoted value is a variable of the program.
        # So is an assignment to an attribute, obj.auth = value (a .properties line has no blanks).
        kwarg = (op == "=" and not flag and not text[ks:key_end].isupper()
                 and (text[max(0, ks - 64):ks].rstrip(" \t").endswith(("(", ","))
                      or ("." in text[ks:key_end].strip(".") and sep != "=")))
        val = tail.group("val")
        # A value that is kept is still scanned for keys of its own (skip_until stays key_end).
        if val:
            vs, ve = tail.span("val")
            a, b = _unquote(val)
            scheme = _rx(_SCHEME_PREFIX).match(val, a, b)
            if scheme:
                a = scheme.end()                 # "Bearer …": keep the scheme word
            inner = val[a:b]
            if not inner or _is_reference(inner) or _only_markers(inner) or _is_template(inner):
                continue
            if inner.strip().lower() in _SCHEMES:
                continue                    # 'Basic ' + base64: the credential is elsewhere
            if not op and not flag:
                continue
            if len(inner) <= 3 and not any(c.isalnum() for c in inner):
                continue                    # 'token = " ".join(…)'
            if b == len(val) and not any(c.isalnum() for c in inner):
                continue                    # 'input("Password: ")': the key was inside a string
            if _rx(_NEXT_KEY).match(text, ve):
                continue                    # 'x: "api_key": "…"': the string is the next key
            if comma and inner.startswith("-"):
                continue                    # ["--password", "--verbose"]: the next flag
            if not tail.group("kq") and val[a - 1:a] in ("'", '"', "`") and _inside_string(text, ks, val[a - 1]):
                continue                    # 'assert "Confirm Password: " in out': the key is text
            if _rx(_ENV_NAME).fullmatch(inner) and _key_info(inner)[0]:
                continue                    # awsSessionToken = "AWS_SESSION_TOKEN": a variable's name
            rs, re_ = vs + a, vs + b
        elif comma:
            continue                        # ["--token", token]: a variable
        elif flag or (sep == "=" and not tail.group("kq") and not tail.group("ann") and not kwarg
                      and (ks == 0 or text[ks - 1] in _ASSIGN_AFTER
                           # "(DB_PASSWORD=x;y)": an UPPER_CASE environment name in brackets is an
                           # assignment too; a lower-case one is a keyword argument, f(password=pw)
                           or (text[ks - 1] in "([{" and text[ks:key_end].isupper()))):
            # Assignment context: KEY=value, --key=value, --key value, setx/ENV/ARG KEY value.
            vs = tail.end()
            if long_start <= vs < long_end:
                ve = long_end
            else:
                run = _rx(_LONG).match(text, vs)
                if run is None:
                    continue
                long_start, long_end = vs, ve = run.span()
            keylike = _rx(_KEYLIKE).match(text, vs, ve)
            if keylike and _key_info(keylike.group())[0]:
                continue                    # "token=" in "password=token=…" is the next key
            if text.startswith("[REDACTED", vs):
                continue                    # a shape rule has already redacted it
            if ve - vs <= 256 and _is_call(text[vs:ve]):
                continue                    # TOKEN=get_token(), PASSWORD=getpass("…")
            e = _strip_closers(text, vs, ve)   # f(password=hunter2), "(DB_PASSWORD=x)."
            if e == vs:
                continue
            if _keep_unquoted(text[vs:e] if e - vs <= 256 else None, sep, "", True, False, kwarg):
                continue
            if space_kw and weak and _rx(_MORE_ON_LINE).match(text, ve):
                continue                    # prose: "ENV TOKEN is read from the vault"
            rs, re_ = vs, e
            if to_eol:                      # Dockerfile "ENV KEY value with spaces"
                nl = text.find("\n", e)
                re_ = len(text) if nl < 0 else nl
                while re_ > e and text[re_ - 1] in " \t\r":
                    re_ -= 1
        else:
            vs = tail.end()
            if run_start <= vs < run_end:
                ve = run_end
            else:
                run = _rx(_UNQUOTED).match(text, vs)
                if run is None:
                    continue
                run_start, run_end = vs, ve = run.span()
            val = text[vs:ve] if ve - vs <= 256 else None
            if _keep_unquoted(val, sep, text[ve:ve + 8], flag, weak, kwarg):
                continue
            if weak and op == ":" and _rx(_MORE_ON_LINE).match(text, ve):
                continue                    # prose: "auth: rotate the token cache"
            keylike = _rx(_KEYLIKE).match(text, vs, ve)
            if keylike and _key_info(keylike.group())[0]:
                continue                    # "token=" in "password=token=…" is the next key
            rs, re_ = vs, ve
            if op == ":" and not tail.group("kq") and kind != "key":
                head = text[max(0, ks - 12):ks]
                if ks > 12 and "\n" not in head:
                    head = "?"              # not at the start of a line
                if head[head.rfind("\n") + 1:].strip(" \t-#*>") in ("", "export", "set"):
                    nl = text.find("\n", ve)
                    re_ = len(text) if nl < 0 else nl
                    while re_ > ve and text[re_ - 1] in " \t\r":
                        re_ -= 1
        if kind == "key" and (not _token_value(text[rs:re_])
                              or low[max(0, ks - 8):ks].rstrip(" \t-_").endswith(("public", "pub"))):
            continue                        # cache_key = "user:42", "public key: age1…": not secrets
        out.append(text[done:rs])
        out.append(_marker(kind))
        done = skip_until = re_
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


_ENV_NAME = r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
# A documentation field naming a parameter (Sphinx ``:param str password:``, JSDoc ``@param``).
_DOC_FIELD = r"[:@](?:param|parameter|arg|argument|key|keyword|type|ivar|cvar|var|property)\b[^\n:]{0,30}\Z"


def _inside_string(text: str, ks: int, quote: str) -> bool:
    """True when the key at ``ks`` sits inside a ``quote``-delimited string that opened earlier on its
    line (an odd number of unescaped ``quote`` characters before it; at most 512 are looked at)."""
    line = text.rfind("\n", max(0, ks - 512), ks) + 1
    if line == 0 and ks > 512:
        return False
    n = 0
    i = text.find(quote, line, ks)
    while i >= 0:
        if text[i - 1:i] != "\\":
            n += 1
        i = text.find(quote, i + 1, ks)
    return n % 2 == 1


def _token_value(value: str) -> bool:
    """A value after a ``key``-like name that is a credential: token-shaped, not a UUID."""
    v = value.strip("\"'` \t")
    return _token_shaped(v, 16) and not _rx(_UUID).fullmatch(v)


# ---------------------------------------------------------------------------------------------
# Token shape, generic prefixed tokens, URL credentials, PEM blocks

# Chunks of a string that read as words: ``Request``, ``header``, ``HTTP``. Identifiers are made of
# them (``RequestHeaderFieldsTooLarge``: 100 %), random tokens only by chance (base62: ~25 %).
_WORDISH = r"[A-Z][a-z]{2,}|[a-z]{3,}|[A-Z]{4,}"
_HEX = frozenset("0123456789abcdef")


def _token_shaped(value: str, min_len: int = 20, hex_ok: bool = True) -> bool:
    """True when ``value`` looks machine-generated (a key or token), not like a word or identifier.

    Looks at the letters and digits of the first 512 characters, which must be at least
    ``min_len`` and at least 3/4 of them: hexadecimal counts (when ``hex_ok``) from 32 digits
    with both letters and digits making up at least 1/8 (a 40-hex git SHA is token-shaped: callers
    that see SHAs pass ``hex_ok=False`` or require a secret context); mixed-case text counts when
    at most 55 % of it (60 % if it holds digits) is in word-like chunks (``_WORDISH``); single-case
    text counts with at least three separate runs of digits and four letters. Thresholds were set
    on random base62/base64url/base36 strings (≥ 90 % of 26+ characters pass) against every
    identifier of 20+ characters in the benchmark repositories (none pass; bench/redaction.py).
    """
    head = value[:512]
    t = _rx(r"[^A-Za-z0-9]+").sub("", head)
    n = len(t)
    if n < min_len or n * 4 < len(head) * 3:
        return False
    digits = sum(c.isdigit() for c in t)
    lower = sum(c.islower() for c in t)
    upper = n - digits - lower
    if not (lower and upper) and set(t.lower()) <= _HEX:
        return hex_ok and n >= 32 and digits * 8 >= n and (n - digits) * 8 >= n
    digit_runs = len(_rx(r"[0-9]+").findall(t))
    if lower and upper:
        wordy = sum(len(w) for w in _rx(_WORDISH).findall(t))
        if wordy * 100 <= n * (60 if digit_runs else 55):
            return True
        # Random mixed-case letters (hf_…): capitals often follow capitals, which identifiers only
        # do in acronyms (``HTTPBasicAuth`` is all word-like chunks).
        caps = len(_rx(r"(?=[A-Z]{2})").findall(t))
        humps = len(_rx(r"(?=[a-z][A-Z])").findall(t))
        return caps * 10 >= n and humps * 10 >= n and wordy * 100 <= n * 80
    return digit_runs >= 3 and n - digits >= 4


# A token with a short lower- or upper-case prefix and separators (``hf_…``, ``dop_v1_…``,
# ``pscale_tkn_…``, ``NRAK-…``, ``glsa_…``, ``sha256~…``, ``tskey-auth-…``): the prefixed form most
# providers now use (gitleaks lists ~150 of them), recognised by its shape so new providers are
# caught too. The part after the prefix must be token-shaped; hash names (``sha512-…`` integrity
# strings) and UUIDs (``req-<uuid>``) are not tokens.
# (Found from the separator, whose character class lets the regex engine skip ahead; the prefix
# is then read backwards. A digit or capital among the first 20 characters: ``test_some_function``
# is no token.)
_PREFIXED_TAIL = (r"[_.~-](?=[A-Za-z0-9_~+/-]{0,19}[0-9A-Z])"
                  r"(?P<v>[A-Za-z0-9][A-Za-z0-9_~+/-]{15,}(?:\.[A-Za-z0-9_~+/-]+)*={0,3})")
_PREFIX_HEAD = r"(?:[a-z][a-z0-9]{0,11}|[A-Z][A-Z0-9]{0,11})(?:[_.~-][a-z0-9]{1,8}){0,2}[_.~-]\Z"
_GLUED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.~+/-")
_HASH_PREFIXES = frozenset("""sha sha1 sha224 sha256 sha384 sha512 md5 blake2b blake2s blake3 crc32
    h1 git commit rev ref v""".split())
# Identifiers the agents and model APIs give tool calls, messages and sessions (Anthropic ``toolu_…``,
# ``msg_…``; OpenAI ``call_…``, ``fc_…``, ``resp_…``, ``chatcmpl-…``, ``run_…``, ``asst_…``, ``thread_…``,
# ``file-…``; OpenCode ``ses_…``, ``prt_…``; VS Code ``call_…__vscode-…``): token-shaped, never secrets,
# and capture keys records by them (exactly once).
_ID_PREFIXES = frozenset("""call toolu msg ses prt fc resp req run chatcmpl evt conv item thread asst file
    batch ft step srvtoolu""".split())


def _redact_prefixed_tokens(text: str) -> str:
    out: list[str] = []
    done = 0
    head_rx = _rx(_PREFIX_HEAD)
    tail_rx = _rx(_PREFIXED_TAIL)
    for m in tail_rx.finditer(text):
        sep = m.start()
        lo = max(done, sep - 40)
        flag = text[sep] == "-" and (sep == 0 or text[sep - 1] in " \t\n")
        if flag:
            inner = tail_rx.search(text, sep + 2, m.end())    # -p<prefix>_<token>: a short flag
            if inner is None:
                continue
            m, lo, sep = inner, sep + 2, inner.start()
        head = head_rx.search(text, lo, sep + 1)
        if head is None or (head.start() > 0 and text[head.start() - 1] in _GLUED
                            and not (flag and head.start() == lo)):
            continue                      # no prefix, or glued to a longer word
        p, v = head.group(), m.group("v").rstrip(".")
        if "/" in v and not (v.endswith("=") or "+" in v):
            v = v[:v.index("/")]          # a path, not base64: only its first part
        if not p.endswith("~") and not _HASH_PREFIXES.isdisjoint(_rx(r"[_.-]").split((p + v).lower())[:4]):
            continue                      # sha512-…, gss-gex-sha1-…: a hash, not a token
        if _rx(r"[_.~-]").split(p.lower())[0] in _ID_PREFIXES:
            continue                      # call_…, toolu_…, ses_…: an agent's or API's identifier
        if _rx(_UUID).fullmatch(v) or not _token_shaped(v, 20):
            continue
        out.append(text[done:m.start("v")])
        out.append(_marker("token"))
        done = m.start("v") + len(v)
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


# Bare tokens: a run of token characters standing alone (no prefix, key or URL says it is a credential) that
# is machine-generated — most providers' keys are such runs (TruffleHog's ~800 detectors mostly look for a
# provider's name near a 20-64 character random run). Candidates are maximal runs of ``_BARE_CHARS``
# (letters, digits, ``_ - + / = . ~``) of at least ``_BARE_MIN`` characters with a letter and a digit;
# one is a token when ``_token_shaped`` (not word-like; hexadecimal never: SHAs and content hashes are
# everywhere in a repository's text) and none of: a UUID, a ULID (gitmem's memory ids), a path or
# dotted name whose parts are words (``src/app.py``, ``com.example.Foo``), an agent's or API's
# identifier (``_ID_PREFIXES``) or a hash name (``sha512-…``, ``h1:…``). Dotted tokens
# (``xxx.yyy.zzz``: JWT-like, Mapbox, Discord bot tokens) are taken whole when their parts are tokens.
_BARE_MIN = 20
_BARE_RUN = (r"(?<![A-Za-z0-9_+/=.~-])(?=[A-Za-z0-9_+/.~-]{20})[A-Za-z0-9_+/.~-]{20,2048}={0,3}"
             r"(?![A-Za-z0-9_+/=~-]|\.[A-Za-z0-9_+/=~-])")
_ULID = r"[0-9A-HJKMNP-TV-Z]{26}"
#: The least share of a mixed-case bare token's neighbouring characters that switch between upper case, lower
#: case and digits: random base62 switches at 62 % of them (1 - (26² + 26² + 10²) / 62²; 0.45 is two standard
#: deviations below for 32 characters); identifiers and acronym chains (``Ed25519PublicKey``: 36 %,
#: ``PBESv2SHA256AndAES256CBC``: 39 %) switch less.
_BARE_SWITCHES = 0.45
_SWITCH = r"(?<=[a-z])(?=[A-Z0-9])|(?<=[A-Z])(?=[a-z0-9])|(?<=[0-9])(?=[A-Za-z])"
#: The shortest mean length of a bare token's parts between separators (``- _ .``): a random key has long
#: parts; names and labels (``aws-us-east-1-nvidia-l4-x1``) short ones.
_BARE_PART = 8
# A path segment or a dotted part that is a lower-case word (``username/…``, ``src/…``, ``com.example``).
_WORD_PART = r"[a-z]{4,}(?:[-_][a-z]+)*"


def _bare_token(run: str) -> bool:
    """Whether the standalone run ``run`` is a machine-generated token (see ``_BARE_RUN`` above)."""
    if not (any(c.isdigit() for c in run) and any(c.isalpha() for c in run)):
        return False
    if _rx(_UUID).search(run) or _rx(_ULID).fullmatch(run) or _rx(r"0[xX][0-9a-fA-F]+").fullmatch(run):
        return False
    if "/" in run or "." in run:
        if any(_rx(_WORD_PART).fullmatch(p) for p in _rx(r"[/.]").split(run)):
            return False          # a path, a URL's rest, a dotted name
    heads = _rx(r"[_.~+/=-]").split(run.lower())[:4]
    if heads[0] in _ID_PREFIXES or not _HASH_PREFIXES.isdisjoint(heads):
        return False              # call_…, sha512-…, gss-group14-sha1-…: an id or an algorithm's name
    parts = [p for p in _rx(r"[-_.]").split(run) if p]
    if sum(map(len, parts)) < _BARE_PART * len(parts):
        return False
    t = _rx(r"[^A-Za-z0-9]+").sub("", run)
    if t.lower() != t and t.upper() != t:
        if len(_rx(_SWITCH).findall(t)) < _BARE_SWITCHES * (len(t) - 1):
            return False          # mixed case in long runs: an identifier, a type, an acronym chain
    return _token_shaped(run, _BARE_MIN, hex_ok=False)


# Public material is kept: certificate and public-key blocks (PEM, PGP), SSH public keys (their base64 starts
# with the length of the key type name: ``AAAA``), bech32 public keys and addresses (``age1…``, ``npub1…``).
_PUBLIC_BLOCK = (r"-{5}BEGIN [A-Z0-9 ]{0,40}(?:PUBLIC KEY|CERTIFICATE)[A-Z0-9 ]{0,20}-{5}"
                 r"[\s\S]{0,65536}?-{5}END [A-Z0-9 ]{0,40}(?:PUBLIC KEY|CERTIFICATE)[A-Z0-9 ]{0,20}-{5}")
_PUBLIC_RUN = r"AAAA[A-Za-z0-9+/]+={0,3}|[a-z]{1,10}1[02-9ac-hj-np-z]{20,}"
_FINGERPRINT = r"(?i:sha(?:1|224|256|384|512)?|md5|blake2[bs]|h1):\Z"
# A JWK's public members (RFC 7518: ``x y n e``; ``kid``, ``x5t``), looked at when the text has ``"kty"``.
_JWK_PUBLIC = r'\\?"(?:x|y|n|e|kid|x5t(?:#S256)?)\\?"[ \t]*:[ \t]*\\?"\Z'


def _redact_bare_tokens(text: str) -> str:
    out: list[str] = []
    done = 0
    public = [m.span() for m in _rx(_PUBLIC_BLOCK).finditer(text)] if "-----BEGIN" in text else []
    jwk = '"kty' in text
    seen: dict[str, bool] = {}   # a verdict per distinct run: logs and fixtures repeat the same strings
    for m in _rx(_BARE_RUN).finditer(text):
        run = m.group()
        end = m.end()
        start = m.start()
        if start and text[start - 1] == "\\" and run[0] in "nrt":
            run, start = run[1:], start + 1      # JSON- or C-escaped text: "\\n" ends the line before
        if (_rx(_PUBLIC_RUN).fullmatch(run) or any(a <= start < b for a, b in public) or run[0] == "/"
                or text.startswith("@", end) or _rx(_FINGERPRINT).search(text, max(0, start - 8), start)):
            continue              # public; a path; user@host; SHA256:<base64> (a key's public fingerprint)
        if jwk and _rx(_JWK_PUBLIC).search(text, max(0, start - 16), start):
            continue
        while run and run[-1] in ".-_~/":   # a sentence's full stop, a trailing separator
            run, end = run[:-1], end - 1
        if len(run) < _BARE_MIN:
            continue
        token = seen.get(run)
        if token is None:
            token = seen[run] = _bare_token(run)
        if not token:
            continue
        out.append(text[done:start])
        out.append(_marker("token"))
        done = end
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


# JWK private members (RFC 7518 §6.2.2 EC ``d``, §6.3.2 RSA ``d p q dp dq qi``, §6.4.1 ``k``),
# looked for within 2 KB of each ``"kty"`` (a JWK is small; the pattern has no literal prefix).
_JWK_PRIVATE = r'\\?"(?:d|p|q|dp|dq|qi|k)\\?"[ \t]*:[ \t]*\\?"(?P<v>[A-Za-z0-9_-]{16,})\\?"'


def _redact_jwk_private_members(text: str) -> str:
    spans: list[tuple[int, int]] = []
    rx = _rx(_JWK_PRIVATE)
    i = text.find("kty")
    while i >= 0:
        lo = max(i - 2048, spans[-1][1] if spans else 0)
        for m in rx.finditer(text, lo, i + 2048):
            if not spans or m.start("v") >= spans[-1][1]:
                spans.append(m.span("v"))
        i = text.find("kty", i + 3)
    if not spans:
        return text
    out, done = [], 0
    for a, b in spans:
        out += [text[done:a], _marker("private-key")]
        done = b
    out.append(text[done:])
    return "".join(out)


# URLs: credentials in the user-info without a password (``https://<key>@o1.ingest.sentry.io/2``,
# ``https://<token>@git.example.com``) and in path segments (``/bot<id>:<token>/``,
# ``/hooks/<token>``, ``/IncomingWebhook/<hex>/``, a 24+ character token-shaped segment).
_URL_REST = r"[^\s'\"<>`\\()\[\]{}]{1,4096}"
_PATH_SECRET_WORDS = frozenset(("key", "keys", "token", "tokens", "secret", "secrets", "hooks", "hook",
                                "webhook", "webhooks", "incomingwebhook", "apikey", "api_key",
                                "access_token"))
_TELEGRAM = r"(bot)(\d{5,16}:[A-Za-z0-9_-]{30,})"


def _url_secret_segment(seg: str, prev: str) -> tuple[int, int] | None:
    """(start, end) of the credential inside one path segment, or None."""
    if len(seg) < 16 or seg.startswith("["):
        return None
    m = _rx(_TELEGRAM).fullmatch(seg)
    if m:
        return m.span(2)
    if prev.lower() in _PATH_SECRET_WORDS and _token_shaped(seg, 16):
        return 0, len(seg)
    if _rx(r"[^/]*\.[A-Za-z0-9]{1,5}").fullmatch(seg):
        return None                       # a file name (content-hashed assets): not a credential
    if _token_shaped(seg, 24, hex_ok=False) and not _rx(_UUID).fullmatch(seg):
        return 0, len(seg)
    return None


def _redact_urls(text: str) -> str:
    out: list[str] = []
    done = 0
    rest_rx = _rx(_URL_REST)
    i = text.find("://")
    while i >= 0:
        nxt = text.find("://", i + 3)
        # (a URL ends where the next one starts: each character is looked at once)
        m = rest_rx.match(text, i + 3, nxt if nxt >= 0 else len(text))
        i = nxt
        if m is None or m.start() < done:
            continue
        rest_start, rest = m.start(), m.group()
        cut = len(rest)
        for ch in "?#":
            q = rest.find(ch)
            if 0 <= q < cut:
                cut = q
        slash = rest.find("/", 0, cut)
        auth_end = slash if slash >= 0 else cut
        spans: list[tuple[int, int, str]] = []
        at = rest.rfind("@", 0, auth_end)
        if at > 0:
            user = rest[:at]
            if ":" not in user and "[" not in user and _token_value(user):
                spans.append((0, at, "url-credential"))
        if slash >= 0:
            prev = ""
            pos = slash + 1
            for seg in rest[slash + 1:cut].split("/"):
                found = _url_secret_segment(seg, prev)
                if found:
                    spans.append((pos + found[0], pos + found[1], "url-credential"))
                prev = seg
                pos += len(seg) + 1
        for a, b, kind in spans:
            out.append(text[done:rest_start + a])
            out.append(_marker(kind))
            done = rest_start + b
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


# PEM private keys (RSA, EC, DSA, OPENSSH, PGP, ENCRYPTED, SIGSTORE…) and the four-dash SSH2 /
# RFC 4716 framing. The body is what a key block can hold (base64, "Proc-Type:"-style headers,
# blank lines, real or JSON-escaped line breaks); a block without its END line is redacted to the
# end of that body, and a header with no key material after it (a string that only names the
# format, "-----BEGIN RSA PRIVATE KEY-----" in a check) is kept.
_PEM_BEGIN = r"-{4,5} ?BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}"
_PEM_BREAK = r"(?:\r?\n|\\r?\\n|\\\\r?\\\\n)"
_PEM_BODY = (r"(?:" + _PEM_BREAK + r"[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z][A-Za-z-]{1,30}:[^\r\n\\]*)?[ \t]*"
             r"(?=" + _PEM_BREAK + r"|\Z|[\"'`]))*+")
# A key split over concatenated string literals ("…\n" + "…\n") also holds quotes and ``+``; it
# counts only when its END line is found inside it.
_PEM_BODY_SPLIT = r"(?:[A-Za-z0-9+/=:,.\- \t\r\n\"'`]|\\[rn]|\\\\[rn]|\\/)*+"
_PEM_END = r"-{4,5} ?END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}"


def _redact_pem_blocks(text: str) -> str:
    out: list[str] = []
    done = 0
    pos = 0
    split_start = split_end = -1          # memoised _PEM_BODY_SPLIT run (linear on repeated headers)
    end_lo, end_hi = 0, -1                # ... and the END line searched for in it
    end_found: re.Match[str] | None = None
    begin_rx = _rx(_PEM_BEGIN)
    while True:
        m = begin_rx.search(text, pos)
        if m is None:
            break
        body = _rx(_PEM_BODY).match(text, m.end())
        be = body.end() if body else m.end()
        end = _rx(_PEM_END).search(text, m.end(), be + 80)
        if end is None and text[be:be + 1] in ("\"", "'", "`", "\\"):
            if not split_start <= m.end() < split_end:
                run = _rx(_PEM_BODY_SPLIT).match(text, m.end())
                split_start, split_end = m.end(), run.end() if run else m.end()
            if split_end > be:
                if not (end_lo <= m.end() and split_end + 80 <= end_hi
                        and (end_found is None or end_found.start() >= m.end())):
                    end_lo, end_hi = m.end(), split_end + 80
                    end_found = _rx(_PEM_END).search(text, end_lo, end_hi)
                end = end_found
        if end is not None:
            stop = end.end()
        else:
            stop = be
            while stop > m.end() and text[stop - 1] in " \t\r\n\"":
                stop -= 1
            if sum(c.isalnum() for c in text[m.end():stop]) < 16:
                pos = m.end()
                continue                  # a header alone: not a key
        out.append(text[done:m.start()])
        out.append(_marker("private-key"))
        done = pos = stop
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Public API


def redact_text(text: str) -> str:
    """Return ``text`` with private spans and secrets replaced by markers.

    Runs :func:`strip_private` first, then PEM blocks and JWK private members, the shape rules
    (key lines, provider tokens), prefixed tokens, URL user-info and path credentials, then the
    secret-named-key rule, then URL passwords and HTTP auth credentials. Everything that is not a
    secret — surrounding words, keys, quotes, URL scheme/user/host, the auth scheme word — is kept
    byte for byte. Idempotent: redacting already-redacted text changes nothing. Never raises on a
    ``str``; any other value is returned unchanged.
    """
    if not isinstance(text, str) or not text:
        return text
    text = strip_private(text)
    low = _fold(text)
    before = text
    if "PRIVATE KEY" in text:
        text = _redact_pem_blocks(text)
    if "kty" in low:
        text = _redact_jwk_private_members(text)
    text = _apply_rules(_RULES, text, low)
    text = _redact_prefixed_tokens(text)
    if "://" in text:
        text = _redact_urls(text)
    text = _redact_key_values(text, low if text is before else _fold(text))
    text = _apply_rules(_LATE_RULES, text, low)
    return _redact_bare_tokens(text)


def _apply_rules(rules: tuple[_Rule, ...], text: str, low: str) -> str:
    # ``low`` may be stale after a substitution; it only gates rules (a marker never creates a
    # secret, and a needle that a marker happens to contain only costs one extra scan).
    seen: dict[tuple[str, ...], bool] = {}
    for kind, needles, pattern, flags, group, boundary in rules:
        present = seen.get(needles)
        if present is None:
            present = seen[needles] = any(n in (low if n.islower() else text) for n in needles)
        if present:
            text = _rule_sub(kind, pattern, flags, group, boundary, text)
    return text


def _redact_wholesale(value: object, kind: str) -> object:
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


def redact(obj: object) -> Any:
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
        out: dict[object, object] = {}
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

_glob_cache: dict[tuple[str, ...], re.Pattern[str]] = {}


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


def _compile_globs(globs: Iterable[str]) -> re.Pattern[str]:
    key = tuple(globs)
    pat = _glob_cache.get(key)
    if pat is None:
        parts = []
        for g in key:
            g = g.strip()
            if not g:
                continue
            # ``dir/**`` is ``dir`` plus everything below it, which is also what any matching
            # name gets: a matching directory hides its contents.
            body = _glob_part(g.removesuffix("/**").strip("/")) + "(?:/.*)?"
            if g.startswith("/"):
                parts.append(body)                   # anchored to a relative path's start
                parts.append(f"/.*/{body}")          # absolute path: the root is unknown
            else:
                parts.append(f"(?:.*/)?{body}")      # floating: any component, any depth
        pat = re.compile("|".join(f"(?:{p})" for p in parts) or r"(?!)", re.IGNORECASE | re.DOTALL)
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


def is_private_path(path: str, globs: Iterable[str] = DEFAULT_PRIVATE_GLOBS) -> bool:
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


def mentions_private_path(text: str, globs: Iterable[str] = DEFAULT_PRIVATE_GLOBS) -> bool:
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
