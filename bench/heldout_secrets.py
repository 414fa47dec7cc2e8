"""Secret formats held out from redaction's development: TruffleHog's detector tests, split by provider family.

TruffleHog (https://github.com/trufflesecurity/trufflehog, AGPL-3.0; nothing of it is committed here: give
a clone with ``--trufflehog``) has one detector per provider under ``pkg/detectors/<family>/``, each with a
``<family>_test.go`` whose ``var``/``const`` block names sample credentials (``validPattern``,
``validKey``, ``validSecret``…). This module reads them from the clone (``git show``, no work tree needed):

* a **secret** is a Go string literal bound to a name starting with ``valid`` (not ``invalid``) that does
  not name a non-secret part (an id, user, email, URL, host, domain, region…: ``NOT_SECRET``), on one line,
  without blanks, 16-400 characters, with a letter and a digit, and not a UUID (most UUID-shaped samples are
  ids; gitmem keeps UUIDs unless a secret-named key holds them);
* the **families** are the detector folders; ``split`` puts a family in the held-out set when the first byte
  of the SHA-256 of its name is below ``HELD_OUT_FRACTION`` × 256: a fixed, content-blind split, chosen
  before any rule was written. Rules were developed looking at the development families only; the
  held-out families are scored (an aggregate, never a listing) to measure how far the rules generalise.

Each secret is scored in the ``CONTEXTS`` below — the ways a credential reaches an agent's tool output
(a shell export, an HTTP header, ``curl -u``, a JSON config, a sentence naming the provider, a bare token in
a log line) — and counts as caught in a context when no ``LEAK_WINDOW`` characters of it in a row survive.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

#: The share of families held out (by the SHA-256 of the family name).
HELD_OUT_FRACTION = 1 / 3
#: A secret counts as leaked when this many of its characters in a row survive redaction (a kept provider
#: prefix such as ``sk_live_`` is shorter).
LEAK_WINDOW = 12
#: Words in a sample's name that say it is not the secret part of a credential.
NOT_SECRET = re.compile(r"(?i)(?<!secret)(?:id|ids|user|username|login|email|mail|url|uri|host|hostname|domain|region|"
                        r"endpoint|org|organization|account|name|project|tenant|workspace|instance|server|base|"
                        r"subdomain|zone|app|application|team|env|environment|version|number|phone|sid|"
                        r"address|site|cluster|location|port|bucket|container|database|db)(?:pattern)?$")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_BINDING = re.compile(r'^\s*(valid\w*)\s*(?:string\s*)?=\s*(?:"((?:[^"\\\n]|\\.)*)"|`([^`]*)`)', re.M)

#: (name, template): ``{s}`` the secret, ``{f}`` the family (provider) name, ``{F}`` in upper case.
CONTEXTS = (
    ("env-export", "export {F}_API_KEY={s}"),
    ("auth-header", 'curl -sS -H "Authorization: Bearer {s}" https://api.{f}.example/v1/me'),
    ("api-key-header", "curl -H 'X-API-Key: {s}' https://api.{f}.example/v1"),
    ("curl-user", "curl -u deploy:{s} https://api.{f}.example/v1"),
    ("json-config", '{{"{f}": {{"apiKey": "{s}", "timeout": 30}}}}'),
    ("yaml-config", "{f}:\n  token: {s}\n  retries: 3"),
    ("prose", "the {f} key is {s} for the staging account"),
    ("bare", "2026-12-04 10:11:12 INFO connecting with {s}"),
)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def _decode(literal: str) -> str:
    return literal.encode("utf-8").decode("unicode_escape") if "\\" in literal else literal


def is_secret(name: str, value: str) -> bool:
    """Whether the sample ``value`` bound to ``name`` is a credential's secret part (see the module docstring)."""
    if name.lower().startswith("invalid") or NOT_SECRET.search(name.removeprefix("valid")):
        return False
    return (16 <= len(value) <= 400 and not re.search(r"\s", value) and re.search(r"[A-Za-z]", value) is not None
            and re.search(r"\d", value) is not None and not _UUID.fullmatch(value) and "%" not in value
            and "://" not in value)


def families(repo: Path) -> dict[str, list[str]]:
    """{family: [secret, …]} from the detector tests of a TruffleHog clone (a work tree or a bare git dir)."""
    files = [p for p in _git(repo, "ls-tree", "-r", "--name-only", "HEAD", "pkg/detectors").splitlines()
             if p.endswith("_test.go") and not p.endswith("_integration_test.go")]
    out: dict[str, list[str]] = {}
    for path in files:
        family = path.split("/")[2]
        text = _git(repo, "show", f"HEAD:{path}")
        for m in _BINDING.finditer(text):
            name, value = m.group(1), _decode(m.group(2)) if m.group(2) is not None else m.group(3)
            if is_secret(name, value) and value not in out.get(family, []):
                out.setdefault(family, []).append(value)
    return out


def held_out(family: str) -> bool:
    """Whether ``family`` is in the held-out set (a fixed split by the SHA-256 of its name)."""
    return hashlib.sha256(family.encode()).digest()[0] < HELD_OUT_FRACTION * 256


def leaked(secret: str, out: str) -> bool:
    """Whether ``LEAK_WINDOW`` characters of ``secret`` in a row (all of it, when shorter) survive in ``out``."""
    w = min(LEAK_WINDOW, len(secret))
    return any(secret[i:i + w] in out for i in range(len(secret) - w + 1))


def score(redact: object, fams: dict[str, list[str]]) -> dict[str, object]:
    """Recall of ``redact`` (``str -> str``) over ``fams``: {"caught", "total", "per_context": {name: [caught,
    total]}, "families": [caught families (all their secrets caught in every context)], "missed": [(family,
    context, secret)]}."""
    per = {name: [0, 0] for name, _ in CONTEXTS}
    missed: list[tuple[str, str, str]] = []
    for family, secrets in sorted(fams.items()):
        for s in secrets:
            for name, template in CONTEXTS:
                text = template.format(s=s, f=family, F=family.upper())
                per[name][1] += 1
                if leaked(s, redact(text)):  # type: ignore[operator]
                    missed.append((family, name, s))
                else:
                    per[name][0] += 1
    caught = sum(c for c, _ in per.values())
    return {"caught": caught, "total": sum(t for _, t in per.values()), "per_context": per, "missed": missed}
