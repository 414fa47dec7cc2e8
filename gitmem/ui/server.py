"""``gitmem ui``'s web server: the page, its assets and a small JSON API on 127.0.0.1, behind a per-launch token.

Why the standard library's ``http.server`` (``ThreadingHTTPServer``): the page needs a dozen JSON routes,
its static files and a cheap change check, nothing a framework adds value to; it has no dependency and
imports in milliseconds. Starlette and uvicorn (installed with the ``mcp`` SDK) would bring routing and
server-sent events, at the cost of an event loop, uvicorn's own signal handling (Ctrl-C) and about 0.3 s
of imports; live updates are served by polling ``/api/version`` instead (a few indexed queries, every
``POLL_S`` seconds), which also survives a laptop's sleep without a reconnect.

Security (a page on localhost is reachable by every local user and, through the browser, by every web page):

* the server binds 127.0.0.1 only, on a free port by default;
* every request needs the launch's secret token (``secrets.token_urlsafe``): the URL printed at start
  carries it as ``?token=`` (for the terminal's user; the browser is opened on a 0600 file that redirects
  to it, ``write_opener``, so the token is never on a command line other local users can read); that
  request sets it as an ``HttpOnly; SameSite=Strict`` cookie (named by port: cookies are not scoped by port)
  and redirects to the same URL without it; any request with neither a valid token nor the cookie gets 403;
* the ``Host`` header must be the server's own (``127.0.0.1:PORT`` or ``localhost:PORT``): a DNS-rebinding
  page cannot borrow the cookie's origin;
* writes (POST) also need ``Origin`` equal to the server's origin (403 otherwise), and a JSON body.

Data comes from ``gitmem.ui.data`` (the existing ops), one call at a time under a lock (GitPython's
handles are not thread-safe). A background thread (``Refresher``, with its own store) keeps the catalog's
rows and statuses current (``catalog.sync.sync_hook_index``, quick), so a memory written or made stale by
another process shows on the page without a reload.

Ctrl-C stops the server (exit 0, one line).
"""

from __future__ import annotations

import hmac
import html
import json
import secrets
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from .. import shapes
from ..errors import GitmemError, MemoryNotFound
from ..shapes import JSONObject
from ..store import Store
from . import data

#: Seconds between two catalog refreshes of the background thread (and the page's polls of ``/api/version``).
POLL_S = 2.0

#: Seconds a background refresh may spend checking statuses (the rest waits for the next round).
REFRESH_CHECK_BUDGET_S = 1.0

#: Seconds spent checking statuses before the URL is printed (the rest is checked in the background).
STARTUP_CHECK_BUDGET_S = 3.0

#: The largest request body accepted (an edited memory is well under it: ``[memory] max_chars``).
MAX_BODY_BYTES = 1_000_000

#: The page's files, shipped in the package (``pyproject.toml`` package-data).
STATIC = {"index.html": "text/html; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
          "app.css": "text/css; charset=utf-8"}

#: A strict policy: the page loads only its own files, never a script from elsewhere or inline.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


class Refresher(threading.Thread):
    """Keeps the catalog current for the page: every ``POLL_S`` seconds, ``data.refresh``.

    It works on a ``Store`` of its own (its own git processes), so requests never wait for it: the catalog is
    SQLite in WAL mode and its syncs take their own lock, as between gitmem's processes. It starts with one
    search (``data.warm``), so the page's first search does not pay for loading the search index and the
    embedding model.
    """

    def __init__(self, root: Path) -> None:
        super().__init__(name="gitmem-ui-refresh", daemon=True)
        self.root = root
        self.stop = threading.Event()

    def run(self) -> None:
        from ..git import Repo

        store = Store(Repo(self.root))
        store.enable_symbol_cache()
        try:
            data.warm(store)
        except Exception:  # noqa: BLE001 - only a head start: the first search loads what it needs itself
            pass
        while not self.stop.wait(POLL_S):
            try:
                data.refresh(store, check_budget_s=REFRESH_CHECK_BUDGET_S)
            except Exception:  # noqa: BLE001 - a cache refresh; the next round tries again, requests report errors
                pass


class UIServer(ThreadingHTTPServer):
    """The server: its store, token, lock and the origin it answers as."""

    daemon_threads = True

    def __init__(self, store: Store, port: int = 0, token: str | None = None) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.store = store
        self.token = token or secrets.token_urlsafe(32)
        self.lock = threading.Lock()
        self.port = int(self.server_address[1])
        self.origin = f"http://127.0.0.1:{self.port}"
        self.cookie = f"gitmem_ui_{self.port}"
        self.refresher = Refresher(store.repo.root)
        self.map_cache: tuple[str, bytes] | None = None  # (version, the map's JSON): see Handler._map

    @property
    def url(self) -> str:
        """The URL to open: the origin with the token."""
        return f"{self.origin}/?token={self.token}"

    def serve(self) -> None:
        """Serve until ``shutdown`` (or Ctrl-C in the calling thread), with the background refresh running."""
        self.refresher.start()
        try:
            self.serve_forever(poll_interval=0.25)
        finally:
            self.refresher.stop.set()
            self.server_close()


class Handler(BaseHTTPRequestHandler):
    """One request: check host, token (or cookie) and, for writes, the origin; then route."""

    server: UIServer
    protocol_version = "HTTP/1.1"
    server_version = "gitmem-ui"

    def log_message(self, format: str, *args: Any) -> None:
        return  # the terminal shows the one URL line, not a line per request

    # -- checks ---------------------------------------------------------------------------------

    def _host_ok(self) -> bool:
        host = self.headers.get("Host", "")
        return host in (f"127.0.0.1:{self.server.port}", f"localhost:{self.server.port}")

    def _cookie_token(self) -> str | None:
        from http.cookies import CookieError, SimpleCookie

        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(self.headers.get("Cookie", ""))
        except CookieError:
            return None
        morsel = jar.get(self.server.cookie)
        return morsel.value if morsel else None

    def _valid(self, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(str(token).encode(), self.server.token.encode())

    # -- answers --------------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy", CSP)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    @staticmethod
    def _encode(obj: JSONObject | list[JSONObject]) -> bytes:
        from ..memfile import without_surrogates

        return without_surrogates(json.dumps(shapes.document(obj), ensure_ascii=False)).encode("utf-8")

    def _json(self, status: int, obj: JSONObject | list[JSONObject] | bytes) -> None:
        body = obj if isinstance(obj, bytes) else self._encode(obj)
        self._send(status, body, "application/json; charset=utf-8")

    def _error(self, status: int, message: str, hint: str = "") -> None:
        self._json(status, shapes.error_json(message, hint))

    def _refuse(self, why: str) -> None:
        self._send(HTTPStatus.FORBIDDEN, f"403 forbidden: {why}\n".encode(), "text/plain; charset=utf-8")

    # -- routing --------------------------------------------------------------------------------

    def _authorised(self, query: dict[str, list[str]]) -> bool | None:
        """True: the cookie is valid; None: a valid ``?token=`` (answered with the cookie and a redirect);
        False: refused (answered 403)."""
        if not self._host_ok():
            self._refuse("this server answers to 127.0.0.1 only")
            return False
        if self._valid(self._cookie_token()):
            return True
        if self._valid(next(iter(query.get("token", [])), None)):
            path = urlsplit(self.path).path or "/"
            cookie = f"{self.server.cookie}={self.server.token}; HttpOnly; SameSite=Strict; Path=/"
            if self.headers.get("Sec-Fetch-Site", "none") in ("none", "same-origin"):
                self._send(HTTPStatus.SEE_OTHER, b"", "text/plain", {"Location": path, "Set-Cookie": cookie})
            else:
                # Arrived from another site (the 0600 opener file is file://): a redirect would stay in that
                # cross-site navigation, which a SameSite=Strict cookie is not sent with; a page of this
                # origin that refreshes to the path starts a same-site one, which it is.
                hop = f'<!DOCTYPE html><meta http-equiv="refresh" content="0;url={html.escape(path)}">\n'
                self._send(HTTPStatus.OK, hop.encode(), "text/html; charset=utf-8", {"Set-Cookie": cookie})
            return None
        self._refuse("no valid token: open the URL `gitmem ui` printed")
        return False

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query: dict[str, list[str]] = parse_qs(url.query)
        if self._authorised(query) is not True:
            return
        path = url.path
        if path == "/favicon.ico":
            return self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        if path in ("/", "/index.html"):
            return self._static("index.html")
        if path.startswith("/static/"):
            name = path.removeprefix("/static/")
            if name == "highlight.css":
                return self._send(HTTPStatus.OK, data.highlight_css().encode(), "text/css; charset=utf-8")
            return self._static(name)
        store = self.server.store
        routes: dict[str, Callable[[], Any]] = {
            "/api/version": lambda: {"version": data.version(store)},
            "/api/map": self._map,
            "/api/search": lambda: data.search(store, (query.get("q") or [""])[0]),
            "/api/org-search": lambda: data.org_search(store, (query.get("q") or [""])[0]),
            "/api/sessions": lambda: data.sessions(store),
        }
        if path in routes:
            return self._call(routes[path])
        parts = [unquote(p) for p in path.split("/")]
        if len(parts) == 4 and parts[:3] == ["", "api", "memory"]:
            return self._call(lambda: data.memory(store, parts[3]))
        if len(parts) == 5 and parts[:3] == ["", "api", "memory"] and parts[4] == "log":
            return self._call(lambda: data.memory_log(store, parts[3]))
        self._error(HTTPStatus.NOT_FOUND, f"no such page: {path}", "")

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        if self._authorised({}) is not True:  # a write never takes the token from its URL
            return
        # the page's own origin, by either name the server answers to (``_host_ok``), and the one this request
        # was sent to: a page opened at localhost:PORT writes with Origin http://localhost:PORT
        if self.headers.get("Origin") != f"http://{self.headers.get('Host', '')}":
            return self._refuse(f"a write must come from the page itself ({self.server.origin})")
        parts = [unquote(p) for p in url.path.split("/")]
        if not (len(parts) == 5 and parts[:3] == ["", "api", "memory"]):
            return self._error(HTTPStatus.NOT_FOUND, f"no such action: {url.path}", "")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY_BYTES:
            return self._error(HTTPStatus.BAD_REQUEST, "missing or too large body", "send a JSON object")
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return self._error(HTTPStatus.BAD_REQUEST, "the body is not a JSON object", "send a JSON object")
        store = self.server.store
        self._call(lambda: data.act(store, parts[3], parts[4], body))

    def _call(self, fn: Callable[[], Any]) -> None:
        try:
            with self.server.lock:
                result = fn()
        except MemoryNotFound as e:
            return self._error(HTTPStatus.NOT_FOUND, e.message, e.hint)
        except GitmemError as e:
            return self._error(HTTPStatus.BAD_REQUEST, e.message, e.hint)
        except Exception as e:  # noqa: BLE001 - the page shows the error; the server keeps serving
            from .. import __version__, infra

            log = infra.bug_report(self.server.store.log_dir, e, version=__version__)
            return self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"unexpected error: {type(e).__name__}: {e}",
                               f"a report was written to {log}" if log else "")
        self._json(HTTPStatus.OK, result)

    def _map(self) -> bytes:
        """The map as JSON, built once per ``data.version`` (a new page, a second tab: the same bytes)."""
        cached = self.server.map_cache
        if cached is not None and cached[0] == data.current_version(self.server.store):
            return cached[1]
        doc = data.memory_map(self.server.store)
        body = self._encode(doc)
        self.server.map_cache = (doc["version"], body)
        return body

    def _static(self, name: str) -> None:
        if name not in STATIC:
            return self._error(HTTPStatus.NOT_FOUND, f"no such file: {name}", "")
        body = (resources.files(__package__) / "static" / name).read_bytes()
        self._send(HTTPStatus.OK, body, STATIC[name])


def run(store: Store, *, port: int = 0, open_browser: bool = True, echo: Callable[[str], None] = print) -> None:
    """Serve ``gitmem ui`` for ``store`` until Ctrl-C: prints the URL (with the token), opens the browser.

    Raises:
        OSError: the port cannot be bound (in use, not allowed).
    """
    try:  # the first map shows statuses as they are now, as far as STARTUP_CHECK_BUDGET_S allows
        data.refresh(store, check_budget_s=STARTUP_CHECK_BUDGET_S, lock_timeout_s=STARTUP_CHECK_BUDGET_S)
    except Exception:  # noqa: BLE001 - the background refresh tries again; the page says what is unchecked
        pass
    server = UIServer(store, port)
    opener: Path | None = None
    try:
        echo(f"gitmem ui: {server.url}  (Ctrl-C stops it)")
        if open_browser:
            import webbrowser

            opener = write_opener(server.url)
            threading.Thread(target=webbrowser.open, args=(opener.as_uri(),), daemon=True).start()
        server.serve()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if opener is not None:
            opener.unlink(missing_ok=True)
    echo("gitmem ui: stopped")


def write_opener(url: str) -> Path:
    """A new HTML file that only this user can read (mode 0600), redirecting at once to ``url``; its path.

    The browser is opened on this file, not on ``url``: a browser's command line is readable by every
    local user (``/proc/<pid>/cmdline``, ``ps``), and ``url`` carries the launch's token. Jupyter does the
    same (``jupyter_server``'s ``browser_open_file``). ``tempfile.mkstemp`` creates the file with
    ``O_EXCL`` and mode 0600 in the temporary folder; ``run`` deletes it when the server stops.

    Raises:
        OSError: the temporary folder is not writable.
    """
    import os
    import tempfile

    fd, name = tempfile.mkstemp(prefix="gitmem-ui-", suffix=".html")
    link = html.escape(url, quote=True)
    page = (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={link}">'
            f'<title>gitmem ui</title></head>\n<body><p>Opening <a href="{link}">gitmem ui</a>…</p></body></html>\n')
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(page)
    return Path(name)
