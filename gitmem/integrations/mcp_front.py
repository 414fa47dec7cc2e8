"""The MCP server's front (``gitmem mcp``): answers the opening requests at once, hands the rest to the SDK.

Why a front. An agent waits for its MCP servers before its first model request (Claude Code 2.1 sends
``server/discover`` and, once answered, ``tools/list``; it falls back to the ``initialize`` handshake
when the answer takes over 3 s). The SDK server (``mcp_server``, on the ``mcp`` package's
``MCPServer``) cannot answer soon: importing it takes 0.9-1.5 s on a quiet 2-core machine (``python -X
importtime -m gitmem mcp``: ``mcp_types`` alone, the protocol's pydantic models, 0.38 s; the low-level
``mcp.server.lowlevel`` 0.23 s more and needs the same models; ``mcp.server.mcpserver`` pulls the HTTP
transports, 1.1 s in all), before gitmem's library (GitPython, 0.1 s) and LanceDB (1.3 s, first
search). So no part of the SDK meets the 0.3 s target (``bench/mcp.py``: 0.6-1.0 s to the first
answer before this front, measured in real sessions and by the benchmark).

What it does. This module imports only the standard library (``tests/test_mcp_front.py`` checks the
server process's ``sys.modules`` when it answers). It reads the client's JSON-RPC lines itself and answers
the requests whose answers never change for a given SDK and gitmem version — ``server/discover``,
``initialize``, ``tools/list``, ``prompts/list``, ``resources/list``, ``ping`` — from
``resources/mcp-answers.json``, which ``record`` captures from the SDK server itself (the test compares
it with a live capture, so the tool names, schemas, annotations and instructions have one owner:
``mcp_server``). Every client line, answered or not, goes on to the SDK server (loaded in a
background thread as the process starts, on a pipe in place of stdin: ``mcp_server.serve``), so its
state (the protocol era, the handshake) is exactly what it would be without the front; the SDK's own
answers to the requests the front answered are dropped (their ids are rewritten on the way in, so
no reply can be mistaken for another). Tool calls are answered by the SDK once it is loaded; it then
warms the search path (``mcp_server.GitmemTools.warm``) so the first ``search`` does not pay for it.

When the recorded answers may not fit — another ``mcp`` or ``mcp_types`` version than the one they
were recorded with, another gitmem version, ``GITMEM_MCP_FRONT=0``, a request with parameters
beyond the envelope (a cursor), a request in an order the SDK might refuse (``tools/list`` before
the handshake, ``initialize`` after ``server/discover``) — the front answers nothing and the SDK
answers everything, as before.

Must not import: anything outside the standard library at module level or before the first answer;
``mcp_server`` (the SDK, gitmem's library) only in the loader thread.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~4 ms to import; annotations are strings here
    import argparse
    from collections.abc import Iterator
    from typing import Any, BinaryIO

#: The recorded answers (``record`` writes them; ``tests/test_mcp_front.py`` compares them with the SDK's).
ANSWERS_FILE = Path(__file__).resolve().parent.parent / "resources" / "mcp-answers.json"
#: ``GITMEM_MCP_FRONT=0``: answer nothing from the recording; every request goes to the SDK.
FRONT_ENV = "GITMEM_MCP_FRONT"
#: ``GITMEM_MCP_DEBUG_MODULES=PATH``: when the front first answers, write the process's imported module
#: names there (one per line), for tests that check what the first answer needed; the SDK then starts
#: loading only after that answer (else it races the answer and the list shows what it raced to).
DEBUG_MODULES_ENV = "GITMEM_MCP_DEBUG_MODULES"
#: The 2026-07-28 per-request envelope's key naming the protocol version (``_meta``).
PROTOCOL_META_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"
#: Requests the front answers from the recording, per protocol era (they take no arguments; 2026-07-28 has
#: no ``ping``). In the 2026-07-28 era it also acknowledges ``subscriptions/listen`` (Claude Code waits for
#: the acknowledgement before it asks for the tools).
MODERN_METHODS = ("server/discover", "tools/list", "prompts/list", "resources/list")
HANDSHAKE_METHODS = ("tools/list", "prompts/list", "resources/list", "ping")
#: The notification that acknowledges a ``subscriptions/listen``, and its ``_meta`` key naming the subscription.
ACK_METHOD = "notifications/subscriptions/acknowledged"
SUBSCRIPTION_META_KEY = "io.modelcontextprotocol/subscriptionId"
#: The change notifications Claude Code listens for (``record`` records the acknowledgement of this request).
LISTEN_NOTIFICATIONS = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}
#: Ids of the requests the front answered, as the SDK sees them (a client never uses this prefix).
PRIVATE_ID = "gitmem-front-"
#: The SDK packages the recording depends on (their versions are recorded with it).
SDK_PACKAGES = ("mcp", "mcp_types")
#: The longest client line read (bytes, newline excluded): a tool call with a memory of ``[memory] max_chars``
#: (4,000 characters by default, at most 4 bytes each in UTF-8, escaped) is a few tens of KB. A longer line is
#: read to its end in pieces of this size, never held whole, and answered with -32600.
MAX_LINE_BYTES = 4 * 1024 * 1024
#: The deepest nesting of objects and arrays accepted in a client message: MCP's messages nest a few levels
#: (``params.arguments.anchors[0]``); Python's parser raises ``RecursionError`` near 1,000 levels and the
#: SDK's validators recurse too, so anything deeper is answered with -32600 without being parsed.
MAX_DEPTH = 64
#: JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object).
PARSE_ERROR, INVALID_REQUEST, INTERNAL_ERROR = -32700, -32600, -32603


def direct_args(argv: list[str]) -> argparse.Namespace | None:
    """``gitmem mcp``'s arguments (``argv`` after ``mcp``) when the front can start without the CLI, else None.

    None for anything but ``[--repo DIR]`` with an existing folder, or when the ``mcp`` package is
    missing: ``gitmem.cli``'s ``mcp`` command (the owner of the options, the help and the error
    messages) then handles the command line.
    """
    import argparse
    import importlib.util

    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    parser.add_argument("--repo")
    try:
        args, rest = parser.parse_known_args(argv)
    except argparse.ArgumentError:
        return None
    if rest or (args.repo is not None and not os.path.isdir(args.repo)) or importlib.util.find_spec("mcp") is None:
        return None
    return args


def installed_version(package: str) -> str | None:
    """The version of ``package`` from its ``<name>-<version>.dist-info`` folder beside it, or None.

    Cheaper than ``importlib.metadata`` (~20-60 ms to import): one ``find_spec`` and one folder listing.
    """
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    site = Path(next(iter(spec.submodule_search_locations))).parent
    prefix = package.replace("-", "_") + "-"
    try:
        names = [n for n in os.listdir(site) if n.startswith(prefix) and n.endswith(".dist-info")]
    except OSError:
        return None
    return names[0][len(prefix):-len(".dist-info")] if len(names) == 1 else None


def load_answers(version: str) -> dict[str, Any] | None:
    """The recorded answers if they fit this process (gitmem ``version``, the installed SDK), else None."""
    if os.environ.get(FRONT_ENV, "") == "0":
        return None
    try:
        answers: dict[str, Any] = json.loads(ANSWERS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if answers.get("gitmem") != version:
        return None
    if any(installed_version(p) != answers.get("sdk", {}).get(p) for p in SDK_PACKAGES):
        return None
    return answers


class Front:
    """Decides, per client message, whether the recording answers it; mirrors the SDK's protocol era.

    ``answers``: ``load_answers``'s document, or None (answer nothing). ``answer`` is called by the wire
    reader, one message at a time; ``drop`` by the SDK's forwarder (``acked`` is a set: its single
    ``add`` and ``discard`` calls are atomic).
    """

    def __init__(self, answers: dict[str, Any] | None) -> None:
        self.answers = answers
        self.era: str | None = None        # "modern" or "handshake", fixed by the first request (as the SDK does)
        self.version: str | None = None    # the handshake's negotiated version, once the front answered it
        self.initialized = False           # notifications/initialized seen after the front's initialize
        self.next_private = 0
        self.acked: set[str] = set()       # JSON of the listen ids whose acknowledgement the front sent

    def answer(self, msg: Any) -> tuple[dict[str, Any], bool] | None:
        """What the front sends for client message ``msg`` from the recording, or None (the SDK answers it).

        Returns (message, reply): ``reply`` True for a request's answer (the SDK's own is dropped: pass
        the request on under ``private_id``), False for a ``subscriptions/listen`` acknowledgement (the
        request goes on under its id, as its later notifications and answer are the SDK's; the SDK's
        acknowledgement is dropped: ``drop``).
        """
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method"), str):
            return None
        method: str = msg["method"]
        params: Any = msg.get("params")
        if "id" not in msg:
            if method == "notifications/initialized" and self.version is not None:
                self.initialized = True
            return None
        meta = params.get("_meta") if isinstance(params, dict) else None
        modern = isinstance(meta, dict) and PROTOCOL_META_KEY in meta
        if self.era is None:  # the SDK's rule (runner.serve_dual_era_loop): the first request decides
            self.era = "modern" if method != "initialize" and modern else "handshake"
            if self.era == "handshake":
                return self._initialize(msg["id"], params) if method == "initialize" else None
        if self.answers is None:
            return None
        if self.era == "modern":
            recorded = self.answers["modern"].get(meta.get(PROTOCOL_META_KEY)) if modern and meta else None
            if recorded is None or not _envelope_ok(meta):
                return None
            if method == "subscriptions/listen":
                listen = recorded["subscriptions/listen"]
                if set(params) != {"_meta", "notifications"} or params["notifications"] != listen["notifications"]:
                    return None
                self.acked.add(json.dumps(msg["id"]))
                ack = {**listen["ack"], "_meta": {**listen["ack"]["_meta"], SUBSCRIPTION_META_KEY: msg["id"]}}
                return {"jsonrpc": "2.0", "method": ACK_METHOD, "params": ack}, False
            if set(params) == {"_meta"} and method in MODERN_METHODS:
                return _reply(msg["id"], recorded[method]), True
            return None
        if (self.version is None or modern or params not in (None, {}) or method not in HANDSHAKE_METHODS
                or (method != "ping" and not self.initialized)):
            return None
        return _reply(msg["id"], self.answers["handshake"][self.version][method]), True

    def _initialize(self, rid: Any, params: Any) -> tuple[dict[str, Any], bool] | None:
        if self.answers is None or not isinstance(params, dict):
            return None
        version = params.get("protocolVersion")
        recorded = self.answers["handshake"].get(version) if isinstance(version, str) else None
        if (recorded is None or set(params) - {"protocolVersion", "capabilities", "clientInfo"}
                or not isinstance(params.get("capabilities"), dict) or not _client_info_ok(params.get("clientInfo"))):
            return None
        self.version = version
        return _reply(rid, recorded["initialize"]), True

    def private_id(self) -> str:
        """A new id for a request the front answered, as the SDK will see it."""
        self.next_private += 1
        return f"{PRIVATE_ID}{self.next_private}"

    def drop(self, msg: Any) -> bool:
        """Whether the SDK's message ``msg`` is already sent by the front (an answer to a private id, or the
        acknowledgement of a listen the front acknowledged)."""
        if not isinstance(msg, dict):
            return False
        rid = msg.get("id")
        if "method" not in msg and isinstance(rid, str) and rid.startswith(PRIVATE_ID):
            if "error" in msg:  # the recording said otherwise: say so (tests/test_mcp_front.py compares them)
                sys.stderr.write(f"gitmem mcp: the SDK refused a request the front answered: {json.dumps(msg)[:500]}\n")
            return True
        if msg.get("method") == ACK_METHOD:
            meta = (msg.get("params") or {}).get("_meta") or {}
            key = json.dumps(meta.get(SUBSCRIPTION_META_KEY))
            if key in self.acked:
                self.acked.discard(key)
                return True
        return False


def _client_info_ok(info: Any) -> bool:
    return isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)


def _envelope_ok(meta: Any) -> bool:
    """Whether a 2026-07-28 ``_meta`` envelope has what the SDK requires (``mcp.shared.inbound``): client
    capabilities (an object), and client info if any (an object with a name and a version)."""
    return (isinstance(meta.get(CAPABILITIES_META_KEY), dict)
            and (CLIENT_INFO_META_KEY not in meta or _client_info_ok(meta[CLIENT_INFO_META_KEY])))


# A JSON string (escapes included) or one bracket: enough to measure the nesting of a line without parsing it.
_JSON_TOKEN = None  # compiled on first use (``re`` is already imported by ``json``)
_ID_VALUE = r'\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*"|null)'


def _depth_and_id(line: bytes) -> tuple[int, Any]:
    """(the deepest nesting of ``[``/``{`` in the JSON text ``line``, outside strings, or -1 when its brackets
    do not balance (not JSON); the value of a top-level ``"id"`` member, or None): one regular-expression
    pass, no parsing, no recursion."""
    import re

    global _JSON_TOKEN
    if _JSON_TOKEN is None:
        _JSON_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
    depth = deepest = 0
    rid: Any = None
    for m in _JSON_TOKEN.finditer(line):
        tok = m.group()
        if tok in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        elif tok in (b"]", b"}"):
            depth -= 1
            if depth < 0:
                return -1, None
        elif depth == 1 and tok == b'"id"' and rid is None:
            value = re.match(_ID_VALUE.encode(), line[m.end():])
            if value is not None:
                try:
                    rid = json.loads(value.group(1))
                except ValueError:
                    rid = None
    return (deepest if depth == 0 else -1), rid


def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def _valid_id(rid: Any) -> bool:
    """JSON-RPC 2.0: an id is a string, a number or null (a bool is not a number)."""
    return rid is None or isinstance(rid, str) or (isinstance(rid, (int, float)) and not isinstance(rid, bool))


def screen(line: bytes) -> tuple[Any, dict[str, Any] | None]:
    """(the client message of ``line``, None) when it is a JSON-RPC 2.0 message the SDK may be given, else
    (None, the error to send back): the front answers every client line that is not a valid message, so the
    SDK (which drops some silently) never sees one, and nothing in it can raise.

    * not JSON (or not UTF-8, or brackets that do not balance, however deep): -32700 Parse error, id null;
    * longer than ``MAX_LINE_BYTES``, or well-formed but nested deeper than ``MAX_DEPTH``: -32600 Invalid
      Request, with the line's top-level id when one can be read without parsing (else null);
    * a batch (an array: MCP has none since 2025-06-18), not an object, ``jsonrpc`` not ``"2.0"``, an id that
      is not a string, number or null (a request's: not a string or integer, MCP's rule), a ``method`` that is
      not a string, ``params`` that are not an object (MCP's rule; null is taken as none), or a message with
      neither a method nor exactly one of ``result``/``error`` (a response):
      -32600 with the message's id when it has a valid one, else null.

    A notification (a method, no id) that is valid gets no answer, as JSON-RPC says.
    """
    line = line.rstrip(b"\r\n")
    if len(line) > MAX_LINE_BYTES:
        rid = _depth_and_id(line[:65536])[1]
        return None, _error(rid if _valid_id(rid) else None, INVALID_REQUEST,
                            f"Invalid Request: a message longer than {MAX_LINE_BYTES} bytes")
    depth, rid = _depth_and_id(line)
    if depth < 0:
        return None, _error(None, PARSE_ERROR, "Parse error: not a JSON text (unbalanced brackets)")
    if depth > MAX_DEPTH:
        return None, _error(rid if _valid_id(rid) else None, INVALID_REQUEST,
                            f"Invalid Request: nested deeper than {MAX_DEPTH} levels")
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None, _error(None, PARSE_ERROR, "Parse error: not a JSON text")
    if not isinstance(msg, dict):
        what = "a batch (MCP has no batches)" if isinstance(msg, list) else "not a JSON object"
        return None, _error(None, INVALID_REQUEST, f"Invalid Request: {what}")
    rid = msg.get("id")
    if not _valid_id(rid):
        return None, _error(None, INVALID_REQUEST, "Invalid Request: an id must be a string, a number or null")
    why = None
    if msg.get("jsonrpc") != "2.0":
        why = 'jsonrpc must be "2.0"'
    elif "method" in msg:
        if not isinstance(msg["method"], str):
            why = "method must be a string"
        elif "params" in msg and not isinstance(msg["params"], dict) and msg["params"] is not None:
            why = "params must be an object (MCP names every parameter)"
        elif "result" in msg or "error" in msg:
            why = "a request has no result or error"
        elif "id" in msg and not (isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))):
            why = "a request's id is a string or an integer in MCP (never null)"
    elif "id" not in msg or ("result" in msg) == ("error" in msg):
        why = "no method, and not a response (an id and exactly one of result, error)"
    elif "error" in msg and not (isinstance(msg["error"], dict) and isinstance(msg["error"].get("code"), int)
                                 and isinstance(msg["error"].get("message"), str)):
        why = "an error must be an object with an integer code and a string message"
    if why is not None:
        return None, _error(rid, INVALID_REQUEST, f"Invalid Request: {why}")
    return msg, None


def _reply(rid: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def _dumps(msg: Any) -> bytes:
    """One wire line, as the SDK writes it (compact JSON, UTF-8, newline)."""
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


class _Wire:
    """The client's end: lines written whole under a lock (the front and the SDK's forwarder both write)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self.lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view):]


def _forward_sdk(sdk_out: BinaryIO, wire: _Wire, front: Front) -> None:
    """Copy the SDK's lines to the client, but for what the front sent already (``Front.drop``)."""
    for line in sdk_out:
        if not line.lstrip().startswith(b"{"):  # stray output of a library on stdout: keep it off the wire
            sys.stderr.buffer.write(line)
            sys.stderr.flush()
            continue
        if PRIVATE_ID.encode() in line or ACK_METHOD.encode() in line:
            try:
                msg = json.loads(line)
            except ValueError:
                msg = None
            if front.drop(msg):
                continue
        wire.write(line if line.endswith(b"\n") else line + b"\n")


def _feed_sdk(inbox: list[bytes], cond: threading.Condition, fd: int) -> None:
    """Write the client's lines to the SDK's stdin pipe, in order; close it after the end-of-input marker."""
    while True:
        with cond:
            while not inbox:
                cond.wait()
            line = inbox.pop(0)
        if not line:
            os.close(fd)
            return
        view = memoryview(line)
        try:
            while view:
                view = view[os.write(fd, view):]
        except BrokenPipeError:
            return


def _lines(stream: BinaryIO) -> Iterator[bytes]:
    """The client's lines (newline included), each at most ``MAX_LINE_BYTES + 1`` bytes: a longer line is read
    to its end in pieces and given as its first ``MAX_LINE_BYTES + 1`` bytes, no newline (``screen`` refuses
    it by its length), so one endless line never fills the memory."""
    while True:
        line = stream.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if not line.endswith(b"\n") and len(line) > MAX_LINE_BYTES:
            rest = line
            while rest and not rest.endswith(b"\n"):
                rest = stream.readline(65536)
        yield line


def _dump_modules(path: str) -> None:
    """Write the names of the imported modules to ``path`` (``DEBUG_MODULES_ENV``)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(sorted(sys.modules)) + "\n")


def serve(repo: str | None = None) -> int:
    """Run ``gitmem mcp`` on this process's stdin and stdout until the client closes stdin; the exit code.

    The SDK server (``mcp_server.serve``) runs in a background thread on a pair of pipes dup-ed onto
    fds 0 and 1 (so it claims them as it would the real stdio); the client's stdin and stdout are kept
    on private descriptors the front owns. Without the ``mcp`` package (gitmem's ``all`` extra): one line on
    stderr and exit 2 (``extras``), before reading anything.
    """
    from .. import __version__, extras
    from ..errors import MissingExtra

    if extras.missing(("mcp",)):  # a lean install: one line and exit 2 before answering anything
        sys.stderr.write(f"error: {extras.error('gitmem mcp', 'mcp').message}\n")
        sys.stderr.flush()
        return MissingExtra.exit_code
    front = Front(load_answers(__version__))
    wire_in = os.fdopen(os.dup(0), "rb")
    wire = _Wire(os.dup(1))
    sdk_in_r, sdk_in_w = os.pipe()
    sdk_out_r, sdk_out_w = os.pipe()
    os.dup2(sdk_in_r, 0)
    os.dup2(sdk_out_w, 1)
    os.close(sdk_in_r)
    os.close(sdk_out_w)
    for fd in (sdk_in_w, sdk_out_r, wire.fd, wire_in.fileno()):
        os.set_inheritable(fd, False)
    failed: list[BaseException] = []
    debug_modules = os.environ.get(DEBUG_MODULES_ENV)
    answered = threading.Event()  # set once the first client message is handled

    loaded = threading.Event()  # set once the SDK server is imported (it then reads its stdin pipe)

    def load() -> None:
        if debug_modules:  # the module list must show what the answer needed, not what the loader raced to import
            answered.wait()
        try:
            from . import mcp_server

            loaded.set()
            mcp_server.serve(repo, warm=True)
        except BaseException as e:  # noqa: BLE001 - reported on stderr and by the exit code
            failed.append(e)
            sys.stderr.write(f"gitmem mcp: the server stopped: {type(e).__name__}: {e}\n")
            sys.stderr.flush()
            os._exit(1)  # the wire reader is blocked on stdin: nothing else ends the process

    inbox: list[bytes] = []
    cond = threading.Condition()
    threading.Thread(target=_forward_sdk, args=(os.fdopen(sdk_out_r, "rb"), wire, front), daemon=True,
                     name="gitmem-mcp-out").start()
    threading.Thread(target=_feed_sdk, args=(inbox, cond, sdk_in_w), daemon=True, name="gitmem-mcp-in").start()
    loader = threading.Thread(target=load, daemon=True, name="gitmem-mcp-sdk")
    loader.start()
    for line in _lines(wire_in):
        if not line.strip():
            continue  # a blank line is no message (the SDK skips it too)
        msg, refused = screen(line)
        if refused is not None:
            wire.write(_dumps(refused))
            answered.set()
            continue
        try:
            sent = front.answer(msg)
        except Exception as e:  # noqa: BLE001 - the front never dies on a message: the SDK answers it instead
            sys.stderr.write(f"gitmem mcp: the front could not read a message: {type(e).__name__}: {e}\n")
            sent = None
        if sent is not None:
            wire.write(_dumps(sent[0]))
            if debug_modules and not answered.is_set():
                _dump_modules(debug_modules)
            if sent[1]:
                line = _dumps({**msg, "id": front.private_id()})
        answered.set()  # the first message is handled (answered here, or passed on)
        with cond:
            inbox.append(line if line.endswith(b"\n") else line + b"\n")
            cond.notify()
    answered.set()
    if not loaded.is_set():
        # The client left before the SDK server was loaded: nothing it was sent has run (and at end of input it
        # drops what is pending anyway), so end now rather than after the imports (seconds on a busy machine).
        sys.stderr.flush()
        os._exit(0)
    with cond:
        inbox.append(b"")  # end of input: the SDK server sees EOF, finishes what runs, and returns
        cond.notify()
    loader.join()
    return 1 if failed else 0


def record(argv: list[str] | None = None, *, front: bool = False) -> dict[str, Any]:
    """Capture the SDK server's answers to the requests the front answers, for every protocol version.

    Runs ``argv`` (default: this Python's ``-m gitmem mcp``) once per protocol version with
    ``GITMEM_MCP_FRONT=0``, so that the SDK answers everything (with ``front``: as a client meets it,
    the front answering), sends those requests at once and returns the document
    ``resources/mcp-answers.json`` holds: ``{"gitmem", "sdk": {package: version}, "modern": {version:
    {method: result, "subscriptions/listen": {"notifications", "ack"}}}, "handshake": {version:
    {"initialize" | method: result}}}``.

    Raises:
        RuntimeError: the server exited early or answered one of the requests with an error.
    """
    import subprocess

    from .. import __version__

    argv = argv or [sys.executable, "-m", "gitmem", "mcp"]
    env = {**os.environ, FRONT_ENV: "1" if front else "0"}
    client = {"name": "gitmem-record", "version": "1"}

    def converse(msgs: list[dict[str, Any]]) -> dict[Any, Any]:
        """Send ``msgs`` at once; results by request id, listen acknowledgements by ``("ack", id)``.

        stdin stays open until everything is answered (the SDK drops what is pending at end of input)."""
        wanted = {("ack", m["id"]) if m["method"] == "subscriptions/listen" else m["id"] for m in msgs if "id" in m}
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                cwd=os.path.expanduser("~"))
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(b"".join(_dumps(m) for m in msgs))
            proc.stdin.flush()
            got: dict[Any, Any] = {}
            while wanted - set(got):
                line = proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"the server exited before answering {sorted(map(str, wanted - set(got)))}")
                msg = json.loads(line)
                if msg.get("method") == ACK_METHOD:
                    got["ack", msg["params"]["_meta"][SUBSCRIPTION_META_KEY]] = msg["params"]
                elif "id" in msg and "method" not in msg:
                    if "result" not in msg:
                        raise RuntimeError(f"the SDK server answered {msg}")
                    got[msg["id"]] = msg["result"]
            return got
        finally:
            proc.stdin.close()
            proc.wait(60)
            proc.stdout.close()

    import mcp_types.version as sdk_versions

    doc: dict[str, Any] = {"gitmem": __version__, "sdk": {p: installed_version(p) for p in SDK_PACKAGES},
                           "modern": {}, "handshake": {}}
    for version in sdk_versions.MODERN_PROTOCOL_VERSIONS:
        meta = {PROTOCOL_META_KEY: version, CLIENT_INFO_META_KEY: client, CAPABILITIES_META_KEY: {}}
        msgs = [{"jsonrpc": "2.0", "id": i, "method": m, "params": {"_meta": meta}}
                for i, m in enumerate(MODERN_METHODS)]
        msgs.append({"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
                     "params": {"_meta": meta, "notifications": LISTEN_NOTIFICATIONS}})
        got = converse(msgs)
        ack = got["ack", "listen"]
        ack["_meta"][SUBSCRIPTION_META_KEY] = None  # the listen request's id, filled in per request
        doc["modern"][version] = {**{m: got[i] for i, m in enumerate(MODERN_METHODS)},
                                  "subscriptions/listen": {"notifications": LISTEN_NOTIFICATIONS, "ack": ack}}
    for version in sdk_versions.HANDSHAKE_PROTOCOL_VERSIONS:
        msgs = [{"jsonrpc": "2.0", "id": "init", "method": "initialize",
                 "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": client}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"}]
        msgs += [{"jsonrpc": "2.0", "id": i, "method": m} for i, m in enumerate(HANDSHAKE_METHODS)]
        got = converse(msgs)
        doc["handshake"][version] = {"initialize": got["init"], **{m: got[i] for i, m in enumerate(HANDSHAKE_METHODS)}}
    return doc


if __name__ == "__main__":  # python -m gitmem.integrations.mcp_front record: rewrite the recording
    if sys.argv[1:] != ["record"]:
        sys.exit("usage: python -m gitmem.integrations.mcp_front record")
    ANSWERS_FILE.write_text(json.dumps(record(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
