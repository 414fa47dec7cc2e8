"""``gitmem ui``: the real server process, over plain HTTP and in a real headless Chromium (Playwright).

The browser tests need Debian's ``chromium`` (``apt-get install chromium``; ``.ci/run`` installs it) and are
skipped with the reason when it is missing: nothing here downloads a browser. Screenshots of the map and of
a memory go to ``$GITMEM_UI_SCREENSHOTS`` (default: a temp folder), printed by the test.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

import pytest

from gitmem import memfile
from testing.repos import commit, git, make_repo, write
from tests import test_org_surfaces as org_tests

CSV = "def parse(text):\n    return text.split(',')\n\n\ndef render(items):\n    return ','.join(items)\n"
UTIL = "def helper(x):\n    return x + 1\n"
OLD = "def gone():\n    return 0\n\n\ndef kept():\n    return 1\n"

#: The page's status colours (app.css): what a node's count badge is painted with.
COLOURS = {"fresh": "rgb(46, 133, 64)", "stale": "rgb(217, 130, 43)", "moved": "rgb(47, 111, 222)",
           "deleted": "rgb(194, 48, 48)"}


def chromium_path() -> str | None:
    """Debian's chromium (or ``$GITMEM_CHROMIUM``), None when there is none."""
    return os.environ.get("GITMEM_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


needs_chromium = pytest.mark.skipif(chromium_path() is None,
                                    reason="no chromium on PATH (apt-get install chromium; .ci/run installs it)")


def _gitmem(repo: Path, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "gitmem", *args], cwd=repo, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def remember(repo: Path, text: str, anchor: str, *extra: str) -> str:
    return str(json.loads(_gitmem(repo, "remember", text, "--anchor", anchor, "--json", *extra))["id"])


@dataclass
class Demo:
    """A repository whose memories have every status: ids by name."""

    repo: Path
    ids: dict[str, str]


def make_demo(root: Path) -> Demo:
    """parse: stale (its body changed); render: fresh; helper: moved (util.py renamed); gone: deleted;
    kept: fresh on src/old.py; note: a local memory on README.md."""
    repo = make_repo(root / "demo")
    commit(repo, "init", {"src/app/csvish.py": CSV, "src/lib/util.py": UTIL, "src/old.py": OLD,
                          "README.md": "# demo\n"})
    _gitmem(repo, "init", "--no-hooks")
    ids = {"parse": remember(repo, "parse splits on commas", "src/app/csvish.py::parse", "--type", "decision"),
           "render": remember(repo, "render joins with commas", "src/app/csvish.py::render"),
           "helper": remember(repo, "helper adds one", "src/lib/util.py::helper", "--type", "constraint"),
           "gone": remember(repo, "gone returns zero", "src/old.py::gone"),
           "kept": remember(repo, "kept returns one", "src/old.py::kept"),
           "note": remember(repo, "the README is the demo's", "README.md", "--local")}
    commit(repo, "memories")
    commit(repo, "semicolons", {"src/app/csvish.py": CSV.replace("split(',')", "split(';')")})
    git(repo, "mv", "src/lib/util.py", "src/lib/helpers.py")
    commit(repo, "rename util", {"src/old.py": "def kept():\n    return 1\n"})
    return Demo(repo, ids)


@dataclass
class Server:
    proc: subprocess.Popen[str]
    url: str

    @property
    def origin(self) -> str:
        return self.url.split("/?", 1)[0]

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    @property
    def port(self) -> int:
        return int(self.origin.rsplit(":", 1)[1])

    def stop(self) -> tuple[int, str]:
        """Ctrl-C: (exit code, what it printed after the URL line)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        out, _ = self.proc.communicate(timeout=30)
        return self.proc.returncode, out


def start_server(repo: Path, browser: str | None = None) -> Server:
    """``gitmem ui`` in ``repo``: with ``browser`` (a command, as ``$BROWSER``) it opens it, else ``--no-browser``."""
    argv = [sys.executable, "-m", "gitmem", "ui"] + ([] if browser else ["--no-browser"])
    env = {**os.environ, "BROWSER": browser} if browser else None
    proc = subprocess.Popen(argv, cwd=repo, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("gitmem ui: http://127.0.0.1:"), line + (proc.stdout.read() if proc.poll() else "")
    return Server(proc, line.split()[2])


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return make_demo(tmp_path_factory.mktemp("ui"))


@pytest.fixture
def demo(demo_template: Demo, tmp_path: Path) -> Iterator[tuple[Demo, Server]]:
    """A copy of the demo repository (its catalog too), with ``gitmem ui`` serving it."""
    repo = tmp_path / "demo"
    shutil.copytree(demo_template.repo, repo, symlinks=True)
    d = Demo(repo, dict(demo_template.ids))
    server = start_server(d.repo)
    yield d, server
    server.stop()


def request(server: Server, method: str, path: str, *, cookie: bool = True, headers: dict[str, str] | None = None,
            body: Any = None) -> tuple[int, dict[str, str], bytes]:
    """One plain HTTP request (no redirect followed): (status, headers, body)."""
    con = HTTPConnection("127.0.0.1", server.port, timeout=60)
    h = {**({"Cookie": f"gitmem_ui_{server.port}={server.token}"} if cookie else {}), **(headers or {})}
    data = None if body is None else json.dumps(body).encode()
    if data is not None:
        h.setdefault("Content-Type", "application/json")
    con.request(method, path, body=data, headers=h)
    r = con.getresponse()
    out = r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    con.close()
    return out


# -- plain HTTP: the token, the cookie, the origin ------------------------------------------------


def test_a_request_without_the_token_is_refused(demo: tuple[Demo, Server]) -> None:
    _, server = demo
    for path in ("/", "/api/map", "/static/app.js", "/api/version"):
        status, _, body = request(server, "GET", path, cookie=False)
        assert status == 403, path
        assert b"no valid token" in body
    assert request(server, "GET", "/api/map?token=not-the-token", cookie=False)[0] == 403
    bad_cookie = {"Cookie": f"gitmem_ui_{server.port}=guess"}
    assert request(server, "GET", "/api/map", cookie=False, headers=bad_cookie)[0] == 403
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(server.origin + "/api/map", timeout=30)
    assert e.value.code == 403


def test_the_token_sets_a_strict_http_only_cookie_and_the_api_answers(demo: tuple[Demo, Server]) -> None:
    d, server = demo
    status, headers, _ = request(server, "GET", f"/?token={server.token}", cookie=False)
    assert status == 303 and headers["location"] == "/"
    cookie = headers["set-cookie"]
    assert cookie.startswith(f"gitmem_ui_{server.port}={server.token};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    status, _, body = request(server, "GET", "/api/map")
    assert status == 200
    doc = json.loads(body)
    assert doc["schema_version"] == 1
    by_id = {m["id"]: m for m in doc["memories"]}
    assert {by_id[d.ids[k]]["status"] for k in ("parse", "helper", "gone", "render")} == \
        {"stale", "moved", "deleted", "fresh"}
    assert by_id[d.ids["note"]]["scope"] == "local"


def test_another_host_header_is_refused(demo: tuple[Demo, Server]) -> None:
    _, server = demo  # a DNS-rebinding page reaches the server under its own host name
    assert request(server, "GET", "/api/map", headers={"Host": f"evil.example:{server.port}"})[0] == 403


def test_a_post_from_another_origin_is_refused_and_changes_nothing(demo: tuple[Demo, Server]) -> None:
    d, server = demo
    path = d.repo / ".gitmem" / "memories" / f"{d.ids['parse']}.md"
    before = path.read_bytes()
    for headers in ({"Origin": "http://evil.example"}, {"Origin": f"http://localhost:{server.port}"}, {}):
        status, _, _ = request(server, "POST", f"/api/memory/{d.ids['parse']}/retire", headers=headers,
                               body={"reason": "x"})
        assert status == 403, headers
    assert path.read_bytes() == before
    # the page opened as http://localhost:PORT writes with that origin
    local = f"localhost:{server.port}"
    status, _, body = request(server, "POST", f"/api/memory/{d.ids['parse']}/retire",
                              headers={"Host": local, "Origin": f"http://{local}"}, body={"reason": "semicolons now"})
    assert status == 200, body
    m = memfile.parse_bytes(path.read_bytes(), path)
    assert m.retired and "Retired: semicolons now" in m.facts


def test_edit_supersede_and_share_write_the_memory_files(demo: tuple[Demo, Server]) -> None:
    d, server = demo
    post = {"Origin": server.origin}
    team = d.repo / ".gitmem" / "memories"
    status, _, body = request(server, "POST", f"/api/memory/{d.ids['render']}/edit", headers=post,
                              body={"title": "render joins with commas, in order", "text": "Order is kept.\n"})
    assert status == 200, body
    m = memfile.parse_bytes((team / f"{d.ids['render']}.md").read_bytes(), team / f"{d.ids['render']}.md")
    assert (m.title, m.body.strip()) == ("render joins with commas, in order", "Order is kept.")
    status, _, body = request(server, "POST", f"/api/memory/{d.ids['gone']}/supersede", headers=post,
                              body={"text": "old.py keeps only kept()"})
    assert status == 200, body
    new = json.loads(body)["id"]
    replaced = memfile.parse_bytes((team / f"{d.ids['gone']}.md").read_bytes(), team / f"{d.ids['gone']}.md")
    assert replaced.retired and replaced.superseded_by == [new]
    assert (team / f"{new}.md").is_file()
    assert not (team / f"{d.ids['note']}.md").exists()
    status, _, body = request(server, "POST", f"/api/memory/{d.ids['note']}/share", headers=post, body={})
    assert status == 200 and json.loads(body)["scope"] == "team"
    assert (team / f"{d.ids['note']}.md").is_file()
    status, _, body = request(server, "POST", f"/api/memory/{d.ids['gone']}/retire", headers=post, body={})
    assert status == 400 and "retired" in json.loads(body)["error"]  # the op's own error, said as it is


def test_api_errors_say_why(demo: tuple[Demo, Server]) -> None:
    _, server = demo
    status, _, body = request(server, "GET", "/api/memory/01NOSUCHMEMORY")
    assert status == 404 and "error" in json.loads(body)
    status, _, body = request(server, "POST", "/api/memory/x/explode", headers={"Origin": server.origin}, body={})
    assert status in (400, 404) and json.loads(body)["error"]


def test_the_sessions_api_says_what_each_event_gave(demo: tuple[Demo, Server]) -> None:
    from test_claude_hooks import fixture, hook

    d, server = demo
    read = fixture("PreToolUse.Read", d.repo, tool_input={"file_path": str(d.repo / "src/old.py")})
    prompt = fixture("UserPromptSubmit", d.repo, prompt="why does render join with commas?")
    for event in (read, prompt, read):
        code, _, err = hook(event, d.repo)
        assert code == 0, err
    status, _, body = request(server, "GET", "/api/sessions")
    assert status == 200
    (session,) = json.loads(body)
    assert session["session"] == read["session_id"] and session["agent"] == "claude"
    events = session["events"]
    assert [e["event"] for e in events] == ["BeforeFile", "Prompt"]  # the second read gave nothing new: no line
    assert events[0]["file"] == "src/old.py" and events[0]["kind"] == "read"
    assert sorted(g["title"] for g in events[0]["given"]) == ["gone returns zero", "kept returns one"]
    assert events[1]["prompt"] == "why does render join with commas?"
    assert "render joins with commas" in [g["title"] for g in events[1]["given"] + events[1]["listed"]]
    assert events[0]["time"] <= events[1]["time"]


def test_ctrl_c_stops_the_server_with_exit_0(demo: tuple[Demo, Server]) -> None:
    _, server = demo
    code, out = server.stop()
    assert code == 0
    assert out.strip().splitlines() == ["gitmem ui: stopped"]


# -- in a real headless Chromium ------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium_path()
    if path is None:
        pytest.skip("no chromium on PATH (apt-get install chromium; .ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("GITMEM_UI_SCREENSHOTS") or tmp_path_factory.mktemp("ui-screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\ngitmem ui screenshots: {folder}")
    return folder


def open_page(browser: Any, server: Server) -> Any:
    page = browser.new_page(viewport={"width": 1500, "height": 900})
    page.goto(server.url)
    page.wait_for_selector("body[data-ready='1']")
    return page


def file_nodes(page: Any) -> dict[str, tuple[int, str]]:
    return {e.get_attribute("data-path"): (int(e.get_attribute("data-count")), e.get_attribute("data-status"))
            for e in page.query_selector_all(".node.file")}


@needs_chromium
def test_the_map_lists_the_files_with_their_counts_and_status_colours(demo: tuple[Demo, Server], browser: Any,
                                                                      shots: Path) -> None:
    _, server = demo
    page = open_page(browser, server)
    assert page.url == server.origin + "/"  # the token left the address bar for the cookie
    assert file_nodes(page) == {"src/app/csvish.py": (2, "stale"), "src/lib/util.py": (1, "moved"),
                                "src/old.py": (2, "deleted"), "README.md": (1, "fresh")}
    for path, status in (("src/app/csvish.py", "stale"), ("src/lib/util.py", "moved"), ("src/old.py", "deleted"),
                         ("README.md", "fresh")):
        badge = page.query_selector(f".node[data-path='{path}'] .count")
        assert badge.evaluate("e => getComputedStyle(e).backgroundColor") == COLOURS[status], path
    assert page.query_selector(".node[data-path='src']").get_attribute("data-count") == "5"
    page.screenshot(path=str(shots / "map.png"))
    # filters: only the local memory; then only decisions
    page.select_option("#f-scope", "local")
    assert file_nodes(page) == {"README.md": (1, "fresh")}
    page.select_option("#f-scope", "")
    page.select_option("#f-type", "decision")
    assert file_nodes(page) == {"src/app/csvish.py": (1, "stale")}
    page.close()


@needs_chromium
def test_searching_finds_a_memory(demo: tuple[Demo, Server], browser: Any) -> None:
    d, server = demo
    page = open_page(browser, server)
    page.fill("#search", "which function adds one")
    page.press("#search", "Enter")
    page.wait_for_selector("#list-title:has-text('which function adds one')", timeout=120_000)
    items = page.query_selector_all(".item")
    assert items and items[0].get_attribute("data-id") == d.ids["helper"]
    assert "helper adds one" in items[0].inner_text()
    assert len(items) < 6  # the hits, not every memory
    page.close()


@needs_chromium
def test_a_stale_memory_shows_its_diff_and_the_commit_then_retiring_it_changes_its_file(
        demo: tuple[Demo, Server], browser: Any, shots: Path) -> None:
    d, server = demo
    page = open_page(browser, server)
    page.click(".node[data-path='src/app/csvish.py']")
    page.click(f".item[data-id='{d.ids['parse']}']")
    anchor = page.wait_for_selector(".anchor[data-status='stale']")
    diff = anchor.query_selector(".diff").inner_text()
    assert "-    return text.split(',')" in diff and "+    return text.split(';')" in diff
    assert "semicolons" in anchor.query_selector(".changed-by").inner_text()
    assert "def parse(text):" in anchor.query_selector(".code").inner_text()
    page.wait_for_selector("#history li .sha")
    assert "memory written" in page.inner_text("#history")
    page.screenshot(path=str(shots / "memory.png"))

    path = d.repo / ".gitmem" / "memories" / f"{d.ids['parse']}.md"
    page.click("[data-action='retire']")
    page.fill("#retire-reason", "we split on semicolons now")
    page.click("#retire-confirm")
    page.wait_for_selector("#toast:has-text('retired')")
    m = memfile.parse_bytes(path.read_bytes(), path)
    assert m.retired and "Retired: we split on semicolons now" in m.facts
    assert git(d.repo, "status", "--porcelain", "--", str(path)).startswith(" M")  # git diff shows it
    page.wait_for_selector(".node[data-path='src/app/csvish.py'][data-count='1'][data-status='fresh']")
    page.close()


@needs_chromium
def test_keep_re_anchors_a_moved_memory(demo: tuple[Demo, Server], browser: Any) -> None:
    d, server = demo
    page = open_page(browser, server)
    page.click(".node[data-path='src/lib/util.py']")
    page.click(f".item[data-id='{d.ids['helper']}']")
    page.wait_for_selector(".anchor[data-status='moved']")
    page.click("[data-action='keep']")
    page.wait_for_selector(".node[data-path='src/lib/helpers.py'][data-count='1'][data-status='fresh']")
    path = d.repo / ".gitmem" / "memories" / f"{d.ids['helper']}.md"
    m = memfile.parse_bytes(path.read_bytes(), path)
    assert [a.key for a in m.anchors] == ["src/lib/helpers.py::helper"]
    page.close()


@needs_chromium
def test_a_memory_written_or_made_stale_while_the_page_is_open_appears_without_a_reload(
        demo: tuple[Demo, Server], browser: Any) -> None:
    d, server = demo
    page = open_page(browser, server)
    page.wait_for_selector(".node[data-path='src/app/csvish.py'][data-count='2']")
    new = remember(d.repo, "render must keep the order", "src/app/csvish.py::render")
    page.wait_for_selector(".node[data-path='src/app/csvish.py'][data-count='3']", timeout=30_000)
    page.click(".node[data-path='src/app/csvish.py']")
    page.wait_for_selector(f".item[data-id='{new}'][data-status='fresh']")
    write(d.repo, {"src/app/csvish.py": (d.repo / "src/app/csvish.py").read_text().replace("','.join", "'|'.join")})
    page.wait_for_selector(f".item[data-id='{new}'][data-status='stale']", timeout=30_000)
    page.close()


@needs_chromium
def test_sessions_show_what_the_agent_was_given_and_when(demo: tuple[Demo, Server], browser: Any) -> None:
    from test_claude_hooks import fixture, hook

    d, server = demo
    for name, changes in (("SessionStart", {}),
                          ("PreToolUse.Read", {"tool_input": {"file_path": str(d.repo / "src/old.py")}})):
        code, _, err = hook(fixture(name, d.repo, **changes), d.repo)
        assert code == 0, err
    key = fixture("SessionStart", d.repo)["session_id"]
    from gitmem.git import Repo
    from gitmem.memories import write as write_memories
    from gitmem.store import Store

    store = Store(Repo(d.repo))
    m = store.get(d.ids["render"])
    m.session = key
    write_memories(store, [m])
    page = open_page(browser, server)
    page.click("#tab-sessions")
    page.click(f".session[data-session='{key}']")
    page.wait_for_selector(".event[data-event='BeforeFile']")
    text = page.inner_text("#session-pane")
    assert "before reading src/old.py" in text
    assert "kept returns one" in text  # what the read was given
    assert "session start" in text
    produced = text.lower().split("memories this session produced", 1)[1]
    assert "render joins with commas" in produced
    page.close()


#: A stand-in browser ($BROWSER): records its command line, and the mode and text of a file it was given.
FAKE_BROWSER = """import json, os, stat, sys
from urllib.parse import unquote, urlsplit
arg = sys.argv[1]
seen = {"argv": sys.argv[1:]}
if arg.startswith("file://"):
    path = unquote(urlsplit(arg).path)
    seen.update(path=path, mode=stat.S_IMODE(os.stat(path).st_mode), uid=os.stat(path).st_uid,
                text=open(path, encoding="utf-8").read())
with open(os.environ["FAKE_BROWSER_LOG"], "w") as f:
    json.dump(seen, f)
"""


def test_the_browser_is_opened_on_a_private_file_not_on_the_tokened_url(demo_template: Demo, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Another local user can read a browser's command line (/proc/PID/cmdline), so the token is never on it:
    the browser gets a 0600 file of this user that redirects to the URL (as Jupyter does), deleted at stop."""
    repo = tmp_path / "demo"
    shutil.copytree(demo_template.repo, repo, symlinks=True)
    script = tmp_path / "fake-browser"
    script.write_text(f"#!{sys.executable}\n{FAKE_BROWSER}")
    script.chmod(0o700)
    log = tmp_path / "browser.json"
    monkeypatch.setenv("FAKE_BROWSER_LOG", str(log))
    server = start_server(repo, browser=str(script))
    try:
        deadline = time.monotonic() + 60
        while not log.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        seen = json.loads(log.read_text())
        assert server.token not in json.dumps(seen["argv"])
        assert seen["argv"][0].startswith("file://") and seen["mode"] == 0o600 and seen["uid"] == os.getuid()
        assert server.url in seen["text"] or server.url.replace("&", "&amp;") in seen["text"]
        assert Path(seen["path"]).exists()
    finally:
        code, _ = server.stop()
    assert code == 0 and not Path(seen["path"]).exists()


@needs_chromium
def test_the_private_file_takes_the_browser_to_the_page(demo_template: Demo, tmp_path: Path, browser: Any) -> None:
    """The redirect file (``write_opener``) opened in Chromium lands on the page, authorised (its cookie set)."""
    from gitmem.ui.server import write_opener

    repo = tmp_path / "demo"
    shutil.copytree(demo_template.repo, repo, symlinks=True)
    server = start_server(repo)
    opener = write_opener(server.url)
    try:
        page = browser.new_page()
        page.goto(opener.as_uri())
        page.wait_for_selector("body[data-ready='1']")
        assert page.url == server.origin + "/" and "token" not in page.url
        page.close()
    finally:
        opener.unlink()
        server.stop()


# -- the organisation's memories (issue 21) ---------------------------------------------------------


def test_org_search_without_an_org_says_it_is_not_configured(demo: tuple[Demo, Server]) -> None:
    _, server = demo
    status, _, body = request(server, "GET", "/api/org-search?q=anything")
    assert status == 200
    doc = json.loads(body)
    assert doc["configured"] is False and doc["hits"] == []


@pytest.fixture
def org_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tests/test_org_surfaces.py``'s organisation: the project ``ledger`` and its org index (inject on)."""
    home = org_tests.isolated_home(tmp_path, monkeypatch)
    project = org_tests.make_project(tmp_path)
    org_tests.build_org(project, home, tmp_path)
    return project


@needs_chromium
def test_a_search_shows_the_organisations_memories_labelled_with_their_repository(org_project: Path,
                                                                                  browser: Any) -> None:
    server = start_server(org_project)
    try:
        page = open_page(browser, server)
        page.fill("#search", "ledger retry_after seconds")
        page.press("#search", "Enter")
        page.wait_for_selector("#org:not([hidden]) .item.org", timeout=120_000)
        items = page.query_selector_all(".item.org")
        assert [i.get_attribute("data-repo") for i in items][0] == "billing"
        assert all(i.get_attribute("data-repo") != "ledger" for i in items)  # this repository's own: not here
        first = items[0]
        assert org_tests.BILLING_NOTE in first.inner_text()
        assert first.query_selector(".repo").inner_text() == "billing"
        assert first.query_selector(".badge").inner_text() == "fresh"
        assert page.inner_text("#org-title").startswith("Organisation (")
        # text set as text: a memory's body is never markup
        first.click()
        body = first.query_selector(".body")
        assert body.is_visible() and body.inner_text() == org_tests.BILLING_BODY
        assert first.query_selector(".body script, .body b") is None
        page.close()
    finally:
        server.stop()
