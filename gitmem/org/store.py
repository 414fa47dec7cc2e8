"""The organisation index's object store: where its LanceDB tables live, how to reach it, whether it is safe.

Owns: the LanceDB storage options of ``[org]`` (``storage_options``), opening the database (``connect``), and the
probe of conditional writes (``probe_conditional_writes``) that every ``gitmem org index`` runs before its first
write.

Why the probe: LanceDB commits a table version with a conditional PUT (``If-None-Match: *``: "create this object
only if it does not exist"); two writers racing for the same version number are told apart by that condition
alone. A store that ignores the header lets both succeed and one commit silently replaces the other: rows are
lost with no error (75 of 200 in a concurrency test on such a store, ``/work/shared/reference/s3-object-storage.md``).
The probe writes a probe object twice with ``mode="create"`` through ``obstore`` (the same Rust ``object_store``
crate Lance commits with, so the same requests): the second write must fail with "already exists".

Credentials and endpoint come from ``[org]`` and the standard AWS environment variables (``AWS_ENDPOINT_URL`` /
``AWS_ENDPOINT_URL_S3``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``);
a local folder (a path or ``file://`` URI) needs none. Reading (``connect`` then a query) never writes, so
read-only credentials suffice for ``gitmem recall --org``.

Imports lancedb and obstore inside the functions that use them (never on a hook's path).
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ..errors import OrgStoreError
from ..infra import atomic_write
from ..layout import org_probe_file
from .settings import OrgSettings

__all__ = ["OrgStoreError", "PROBE_TTL_S", "connect", "db_uri", "endpoint", "explain", "is_refused",
           "probe_conditional_writes", "storage_options", "store_error"]

os.environ.setdefault("LANCEDB_LOG", "error")  # before lancedb loads: keeps Rust WARN lines off stderr

#: How long a store found to honour conditional writes is trusted before it is probed again (seconds): a day.
#: A store does not change its semantics between two CI jobs; a probe costs 3 requests and a few hundred ms.
PROBE_TTL_S = 24 * 3600
#: Where the probe object is written, under the index's prefix (deleted right after).
PROBE_DIR = "_gitmem_probe"


def endpoint(settings: OrgSettings, env: Mapping[str, str] | None = None) -> str:
    """The S3 endpoint URL used: ``[org] endpoint``, else ``AWS_ENDPOINT_URL_S3``, else ``AWS_ENDPOINT_URL``, else
    "" (AWS's own, chosen by the region)."""
    e = os.environ if env is None else env
    return settings.endpoint or e.get("AWS_ENDPOINT_URL_S3", "") or e.get("AWS_ENDPOINT_URL", "")


def db_uri(settings: OrgSettings, root: Path | None = None) -> str:
    """The URI LanceDB opens: ``s3://BUCKET/PREFIX`` as configured; a ``file://`` URI or a path as an absolute
    path (a relative one is relative to ``root``, the repository holding the config, else the current folder).

    Raises:
        OrgStoreError: no ``[org] uri`` is configured, or a scheme other than s3 or file.
    """
    uri = settings.uri
    if not uri:
        raise OrgStoreError("no organisation index is configured ([org] uri is empty)",
                            'set [org] uri = "s3://BUCKET/PREFIX" (or a folder) in .gitmem/config.toml or '
                            "~/.config/gitmem/config.toml")
    if settings.is_s3:
        return uri
    if uri.startswith("file://"):
        return unquote(urlparse(uri).path)
    if "://" in uri:
        raise OrgStoreError(f"[org] uri = {uri!r}: only s3:// URIs and local folders are supported",
                            'use "s3://BUCKET/PREFIX" (any S3-compatible store) or a folder path')
    p = Path(os.path.expanduser(uri))
    return os.path.normpath(p if p.is_absolute() else (root or Path.cwd()) / p)


def storage_options(settings: OrgSettings, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """LanceDB's ``storage_options`` for ``settings`` (the ``object_store`` crate's keys): {} for a local folder;
    for ``s3://``: the region, the endpoint when one is set (``allow_http`` "true" when it is ``http://``), and the
    keys and session token when the environment has them (else Lance's own credential chain: instance profile,
    web identity, ``~/.aws``)."""
    if not settings.is_s3:
        return {}
    e = os.environ if env is None else env
    opts = {"region": settings.region}
    ep = endpoint(settings, e)
    if ep:
        opts["endpoint"] = ep
        if ep.startswith("http://"):
            opts["allow_http"] = "true"
    # fail in seconds when the endpoint cannot be reached (object_store's client options; Lance's retry options)
    opts["connect_timeout"] = f"{CONNECT_TIMEOUT_S}s"
    opts["client_max_retries"] = str(CLIENT_MAX_RETRIES)
    opts["client_retry_timeout"] = str(CLIENT_RETRY_TIMEOUT_S)
    for env_key, opt in (("AWS_ACCESS_KEY_ID", "aws_access_key_id"), ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"),
                         ("AWS_SESSION_TOKEN", "aws_session_token")):
        if e.get(env_key):
            opts[opt] = e[env_key]
    return opts


def connect(settings: OrgSettings, root: Path | None = None) -> Any:
    """The LanceDB database at ``[org] uri`` (a ``lancedb.DBConnection``), reading every commit as soon as it
    is made (``read_consistency_interval=0``: another indexer's rows are seen by the next query). Opening it
    reads nothing and writes nothing.

    Raises:
        OrgStoreError: no uri configured, or an unsupported one; or LanceDB refused the options.
    """
    uri = db_uri(settings, root)
    import lancedb

    try:
        return lancedb.connect(uri, storage_options=storage_options(settings) or None,
                               read_consistency_interval=timedelta(0))
    except Exception as e:  # lancedb raises many types: one line for the person
        raise store_error(e, settings, "open the organisation index") from e


#: Seconds to wait for a TCP connection to the store before the attempt fails (object_store's default is none
#: beyond the OS's, about two minutes): a store on the network answers a connect in well under a second.
CONNECT_TIMEOUT_S = 5
#: Retries of one request that failed in a way object_store retries (a connection refused or reset, a 5xx), and
#: the time they may take in all: object_store's defaults (10 retries, 180 s) make an unreachable endpoint
#: fail after minutes; three retries with backoff ride out a store's restart without that.
CLIENT_MAX_RETRIES = 3
CLIENT_RETRY_TIMEOUT_S = 20

#: (marker in the error's text, lower-cased; cause; what to do) of the errors of Lance / object_store / obstore,
#: first match wins: S3 error codes (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html) and the
#: object_store crate's own wording. ``{where}`` is the store, ``{write}`` " to write" when writing.
_CAUSES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("signaturedoesnotmatch",), "the secret key does not match the access key (SignatureDoesNotMatch)",
     "check AWS_SECRET_ACCESS_KEY (it belongs to AWS_ACCESS_KEY_ID)"),
    (("invalidaccesskeyid",), "the store does not know the access key (InvalidAccessKeyId)",
     "check AWS_ACCESS_KEY_ID (and [org] endpoint: the key may be another store's)"),
    (("expiredtoken", "tokenrefreshrequired"), "the session token has expired (ExpiredToken)",
     "renew the credentials (AWS_SESSION_TOKEN)"),
    (("nosuchbucket",), "the bucket does not exist (NoSuchBucket)",
     "create the bucket, or check [org] uri and [org] endpoint"),
    (("failed to get aws credentials", "providererror", "credentialsnotloaded", "no providers in chain",
      "no credentials", "missing credentials", "169.254.169.254"),  # the last: the instance-metadata fallback
     "no S3 credentials were found",
     "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or an AWS profile or instance role)"),
    (("accessdenied", "403 forbidden", "lacked the necessary privileges", "permission denied"),
     "", ""),  # AccessDenied: worded by ``explain`` (reading or writing)
    (("connection refused", "error sending request", "dns error", "failed to lookup address", "timed out",
      "connection reset", "tcp connect error", "connect error"),
     "the endpoint cannot be reached", "check [org] endpoint (or AWS_ENDPOINT_URL) and the network"),
)


def _where(settings: OrgSettings) -> str:
    ep = endpoint(settings)
    return settings.uri + (f" ({ep})" if ep and settings.is_s3 else "")


def explain(exc: BaseException, settings: OrgSettings, *, writing: bool = False) -> tuple[str, str] | None:
    """(cause, what to do) of an error Lance, LanceDB or obstore raised on the store at ``[org] uri``, each one
    line; None when it is none of the known causes (an unexpected error: the caller words it itself).

    Known causes: SignatureDoesNotMatch, InvalidAccessKeyId, ExpiredToken, NoSuchBucket, no credentials found,
    AccessDenied (``writing``: "the credentials cannot write to …": ``gitmem org index`` needs the write key),
    the endpoint unreachable (refused, unresolvable, timed out). The whole chain of causes is searched (Lance's
    text is Rust debug output cut anywhere)."""
    texts: list[str] = []
    e: BaseException | None = exc
    while e is not None and len(texts) < 8:
        texts.append(str(e))
        e = e.__cause__ or e.__context__
    text = "\n".join(texts).lower()
    where = _where(settings)
    for markers, cause, hint in _CAUSES:
        if not any(m in text for m in markers):
            continue
        if not cause:  # AccessDenied
            if writing:
                return (f"the credentials cannot write to {where} (AccessDenied)",
                        "`gitmem org index` needs the write key (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY of a key "
                        "that may write the bucket); searching needs only the read-only one")
            return (f"the credentials may not read {where} (AccessDenied)",
                    "check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY: the key needs read access to the bucket")
        return f"{where}: {cause}", hint
    code = re.search(r"<code>(\w+)</code>", text)
    if code:  # another S3 error code (the XML body of the reply)
        original = re.search(rf"<code>({re.escape(code.group(1))})</code>", "\n".join(texts), re.IGNORECASE)
        return (f"{where}: the store refused the request ({original.group(1) if original else code.group(1)})",
                _hint(settings))
    status = re.search(r"status(?: code)?:? (\d{3})", text)
    if status:  # an HTTP status with no S3 error code: often not an S3 endpoint at all, or no such bucket
        return (f"{where}: the endpoint answered HTTP {status.group(1)} with no S3 error",
                "check [org] endpoint (an S3 API endpoint, not a web console) and the bucket of [org] uri")
    return None


def store_error(exc: BaseException, settings: OrgSettings, doing: str, *, writing: bool = False) -> OrgStoreError:
    """The ``OrgStoreError`` to raise for ``exc`` (raised by Lance / LanceDB / obstore while ``doing``, e.g. "search
    the organisation index"): its cause and what to do in one line each (``explain``), else "cannot DOING at
    URI: <the error's first line>" with the generic hint. Every place the org code catches a store error uses it."""
    known = explain(exc, settings, writing=writing)
    if known is not None:
        return OrgStoreError(*known)
    return OrgStoreError(f"cannot {doing} at {_where(settings)}: {_one_line(exc)}", _hint(settings))


def is_refused(exc: BaseException, settings: OrgSettings) -> bool:
    """Whether ``exc`` is a store error that every further request would meet as well (credentials refused or
    missing, no bucket, endpoint unreachable): an indexing run stops at it rather than failing each repository."""
    return explain(exc, settings) is not None


def _hint(settings: OrgSettings) -> str:
    if settings.is_s3:
        return ("check [org] uri, the endpoint (AWS_ENDPOINT_URL or [org] endpoint) and the credentials "
                "(AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)")
    return "check that the folder exists and is writable"


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    line = lines[0] if lines else type(exc).__name__
    return line if len(line) <= 200 else line[:197] + "..."


def _probe_key(settings: OrgSettings) -> str:
    return f"{settings.uri}\x1f{endpoint(settings)}"


def _probed_recently(settings: OrgSettings, now: float) -> bool:
    try:
        seen = json.loads(org_probe_file().read_text(encoding="utf-8"))
        t = seen.get(_probe_key(settings)) if isinstance(seen, dict) else None
        return isinstance(t, (int, float)) and 0 <= now - t < PROBE_TTL_S
    except (OSError, ValueError):
        return False


def _remember_probe(settings: OrgSettings, now: float) -> None:
    path = org_probe_file()
    try:
        seen = json.loads(path.read_text(encoding="utf-8"))
        seen = seen if isinstance(seen, dict) else {}
    except (OSError, ValueError):
        seen = {}
    seen = {k: v for k, v in seen.items() if isinstance(v, (int, float)) and now - v < PROBE_TTL_S}
    seen[_probe_key(settings)] = now
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(seen, indent=1, sort_keys=True).encode(), fsync=False)
    except OSError:
        pass  # a cache: the next run probes again


def probe_conditional_writes(settings: OrgSettings, *, use_cache: bool = True) -> None:
    """Check that the store at ``[org] uri`` honours conditional writes, or refuse it.

    Writes ``_gitmem_probe/<uuid>`` under the uri's prefix twice with ``put(mode="create")`` (``If-None-Match:
    *``); the second write must fail with "already exists"; then deletes it. A local folder is not probed (Lance
    commits there by an atomic rename, not a conditional PUT). A store found good is remembered in the user's
    cache (``layout.org_probe_file``, per uri and endpoint) for ``PROBE_TTL_S`` (a day): within it, no request is
    made (``use_cache`` False probes anyway).

    Raises:
        OrgStoreError: the store ignores conditional writes (the second write succeeded), refuses them, or cannot
            be reached or written with these credentials; the message names the store, the hint what to do.
    """
    if not settings.is_s3:
        return
    now = time.time()
    if use_cache and _probed_recently(settings, now):
        return
    import obstore
    from obstore.exceptions import AlreadyExistsError
    from obstore.store import S3Store

    opts = storage_options(settings)
    config: dict[str, Any] = {"region": opts["region"]}
    if "endpoint" in opts:
        config["endpoint"] = opts["endpoint"]
    for k in ("aws_access_key_id", "aws_secret_access_key", "aws_session_token"):
        if k in opts:
            config[k.removeprefix("aws_")] = opts[k]
    where = settings.uri + (f" ({opts['endpoint']})" if "endpoint" in opts else "")
    try:
        store = S3Store.from_url(settings.uri, config=config,  # type: ignore[arg-type]
                                 client_options={"allow_http": opts.get("allow_http") == "true",
                                                 "connect_timeout": f"{CONNECT_TIMEOUT_S}s"},
                                 retry_config={"max_retries": CLIENT_MAX_RETRIES,
                                               "retry_timeout": timedelta(seconds=CLIENT_RETRY_TIMEOUT_S)})
    except Exception as e:  # obstore's configuration errors are of several types
        raise store_error(e, settings, "open the store") from e
    key = f"{PROBE_DIR}/{uuid.uuid4().hex}"
    try:
        obstore.put(store, key, b"1", mode="create")
    except Exception as e:  # unreachable, denied, or conditional PUT rejected
        known = explain(e, settings, writing=True)
        if known is not None:
            raise OrgStoreError(*known) from e
        raise OrgStoreError(f"cannot write to the store at {where}: {_one_line(e)}",
                            _hint(settings) + "; indexing needs write credentials, a store that honours "
                            "conditional writes (If-None-Match) and the bucket to exist") from e
    try:
        obstore.put(store, key, b"2", mode="create")
        ignored = True
    except AlreadyExistsError:
        ignored = False
    except Exception as e:  # the store rejected the conditional write in another way
        _delete(store, key)
        raise OrgStoreError(f"the store at {where} refuses conditional writes (If-None-Match): {_one_line(e)}",
                            "LanceDB commits with them; use a store that honours them (AWS S3, Ceph RGW, …)") from e
    _delete(store, key)
    if ignored:
        raise OrgStoreError(f"the store at {where} ignores conditional writes (If-None-Match): LanceDB would lose "
                            "rows; use a store that honours them (AWS S3, Ceph RGW, …)",
                            "a proxy in front of the store may drop the header: point [org] endpoint at the store "
                            "itself")
    _remember_probe(settings, now)


def _delete(store: Any, key: str) -> None:
    import obstore

    try:
        obstore.delete(store, key)
    except Exception:  # noqa: BLE001 - a probe object left behind is harmless (a few bytes)
        pass
