"""An S3 store that ignores conditional writes, for tests: a loopback HTTP proxy in front of a real gateway that
removes the ``If-None-Match`` and ``If-Match`` request headers and forwards everything else unchanged.

Behind it, RGW sees plain PUTs: a second ``PUT`` with ``If-None-Match: *`` of an existing key overwrites it instead
of failing with 412, which is what a store without conditional writes does (and how LanceDB, whose commits rely on
that 412, silently loses rows on one). ``gitmem``'s probe must refuse such a store.

Signatures. Clients sign their requests with AWS Signature Version 4, and the Rust ``object_store`` crate (Lance's
and obstore's) signs every header it sends, the conditional ones included (``SignedHeaders=…;if-none-match;…``):
removing a signed header alone would turn every conditional PUT into a 403 SignatureDoesNotMatch, a store that
rejects conditional writes rather than one that ignores them. So when a removed header was signed, the proxy signs
the request again without it, with the secret key of the request's access key (``secrets``: the test's key pairs),
the client's own date, region and service, and the client's payload hash; the Host header is forwarded as the
client sent it (the signature covers it). Before re-signing, the proxy checks that it computes the client's own
signature of the original request (``mismatches`` counts when it did not: a canonicalisation bug of the proxy, not
of the client). The algorithm is AWS's, "Create a signed AWS API request" (Signature Version 4):
https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html.

Stdlib only: ``http.server.ThreadingHTTPServer`` in a thread, ``http.client`` to the gateway.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import http.server
import re
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

#: The request headers the proxy removes: S3's conditional-request headers for writes (and reads).
DROPPED = frozenset({"if-none-match", "if-match"})

#: Hop-by-hop headers (RFC 9110 §7.6.1) a proxy does not forward; the body is re-framed with Content-Length.
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer",
                         "upgrade"})

_AUTH = re.compile(r"AWS4-HMAC-SHA256\s+Credential=(?P<key>[^/\s]+)/(?P<scope>[^,\s]+),\s*"
                   r"SignedHeaders=(?P<signed>[^,\s]+),\s*Signature=(?P<sig>[0-9a-f]+)")


@dataclass
class ProxyState:
    """A running proxy: ``endpoint`` (``http://127.0.0.1:PORT``), ``upstream`` (the gateway's endpoint) and
    counters, under ``lock``: ``requests`` forwarded, ``dropped`` (requests that had a conditional header removed),
    ``resigned`` (of those, signed again) and ``mismatches`` (requests whose client signature the proxy could not
    reproduce: it then forwards them as they are, minus the headers)."""

    upstream: str
    secrets: dict[str, str]
    endpoint: str = ""
    requests: int = 0
    dropped: int = 0
    resigned: int = 0
    mismatches: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


def _uri_encode(text: str) -> str:
    return urllib.parse.quote(text, safe="-_.~")


def _canonical_query(query: str) -> str:
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    return "&".join(f"{_uri_encode(k)}={_uri_encode(v)}" for k, v in sorted(pairs))


def signature(secret: str, method: str, target: str, headers: list[tuple[str, str]], signed: list[str],
              scope: str, amz_date: str, payload_hash: str) -> str:
    """The SigV4 signature (hex) of a request: ``target`` is the request line's path and query as sent
    (S3 signs the path as encoded on the wire, once), ``headers`` (name, value) as received, ``signed`` the
    lower-case names to sign, ``scope`` ``DATE/REGION/SERVICE/aws4_request``."""
    path, _, query = target.partition("?")
    values: dict[str, list[str]] = {}
    for name, value in headers:
        values.setdefault(name.lower(), []).append(" ".join(value.split()))
    canonical_headers = "".join(f"{name}:{','.join(values.get(name, []))}\n" for name in signed)
    canonical = "\n".join([method, path or "/", _canonical_query(query), canonical_headers, ";".join(signed),
                           payload_hash])
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + secret).encode()
    for part in scope.split("/"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def _resign(state: ProxyState, method: str, target: str, headers: list[tuple[str, str]],
            body: bytes) -> list[tuple[str, str]] | None:
    """``headers`` without the dropped ones, signed again when they were signed; None when the client's own
    signature could not be reproduced (or its key is unknown)."""
    kept = [(n, v) for n, v in headers if n.lower() not in DROPPED]
    auth = next((v for n, v in headers if n.lower() == "authorization"), "")
    m = _AUTH.match(auth)
    if m is None or not DROPPED & set(m["signed"].split(";")):
        return kept
    secret = state.secrets.get(m["key"])
    if secret is None:
        return None
    signed = m["signed"].split(";")
    lower = {n.lower(): v for n, v in headers}
    amz_date = lower.get("x-amz-date", "")
    payload_hash = lower.get("x-amz-content-sha256") or hashlib.sha256(body).hexdigest()
    if signature(secret, method, target, headers, signed, m["scope"], amz_date, payload_hash) != m["sig"]:
        return None
    signed = [n for n in signed if n not in DROPPED]
    sig = signature(secret, method, target, kept, signed, m["scope"], amz_date, payload_hash)
    new_auth = f"AWS4-HMAC-SHA256 Credential={m['key']}/{m['scope']}, SignedHeaders={';'.join(signed)}, Signature={sig}"
    return [(n, new_auth if n.lower() == "authorization" else v) for n, v in kept]


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _forward(self) -> None:
        state = self.server.state
        body = self._body()
        headers = [(n, v) for n, v in self.headers.items() if n.lower() not in _HOP_BY_HOP]
        had_condition = any(n.lower() in DROPPED for n, _ in headers)
        out = _resign(state, self.command, self.path, headers, body) if had_condition else headers
        with state.lock:
            state.requests += 1
            if had_condition:
                state.dropped += 1
                if out is None:
                    state.mismatches += 1
                elif out != [(n, v) for n, v in headers if n.lower() not in DROPPED]:
                    state.resigned += 1
        if out is None:
            out = [(n, v) for n, v in headers if n.lower() not in DROPPED]
        up = urllib.parse.urlsplit(state.upstream)
        conn = http.client.HTTPConnection(up.hostname or "127.0.0.1", up.port or 80, timeout=300)
        try:
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for name, value in out:
                if name.lower() != "content-length":
                    conn.putheader(name, value)
            if body or self.command in ("PUT", "POST") or "Content-Length" in self.headers:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            resp = conn.getresponse()
            data = resp.read()
            self.send_response_only(resp.status, resp.reason)
            for name, value in resp.getheaders():
                if name.lower() not in _HOP_BY_HOP and name.lower() != "content-length":
                    self.send_header(name, value)
            if self.command == "HEAD":
                length = resp.getheader("Content-Length")
                if length is not None:
                    self.send_header("Content-Length", length)
            else:
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        finally:
            conn.close()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: ProxyState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


@contextmanager
def ignoring_conditions(upstream: str, secrets: dict[str, str]) -> Iterator[ProxyState]:
    """Run the proxy in front of ``upstream`` (``http://HOST:PORT``) on a free loopback port; yields its state
    (``endpoint`` set). ``secrets``: access key → secret key, to sign again the requests whose signed conditional
    headers were removed. Stops the server on exit."""
    state = ProxyState(upstream=upstream, secrets=dict(secrets))
    server = _Server(state)
    state.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="s3proxy", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
