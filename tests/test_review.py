"""``gitmem stale`` on a terminal: a scripted review in a real pseudo-terminal (pexpect)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pexpect

from testing.repos import commit, make_repo

CODE = ("def parse(text):\n    return text.split(',')\n\n\ndef render(items):\n    return ','.join(items)\n\n\n"
        "def quote(s):\n    return '\"' + s + '\"'\n")


def test_keep_retire_supersede_then_nothing_is_stale(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE})
    run_cli(repo, "init", "--no-hooks")
    ids = {}
    for name in ("parse", "render", "quote"):
        code, out, _ = run_cli(repo, "remember", f"{name} uses commas", "--anchor", f"csvish.py::{name}", "--json")
        ids[name] = json.loads(out)["id"]
    parse_file = repo / ".gitmem" / "memories" / f"{ids['parse']}.md"  # as a consolidation model wrote it
    parse_file.write_text(re.sub(r"reviewed:\n(  .*\n)+", "", parse_file.read_text()).replace(
        "source: user\n", "source: llm\nmodel: m1\n"))
    assert json.loads(run_cli(repo, "show", ids["parse"], "--json")[1])["trust"]["level"] == "model"
    commit(repo, "memories")
    commit(repo, "semicolons everywhere",
           {"csvish.py": CODE.replace("','", "';'").replace("'\"' + s + '\"'", "repr(s)")})
    assert len(json.loads(run_cli(repo, "stale", "--json")[1])) == 3
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb"}
    child = pexpect.spawn(sys.executable, ["-m", "gitmem", "stale"], cwd=str(repo), env=env, encoding="utf-8",
                          timeout=60, dimensions=(50, 200))
    answers = {ids["parse"]: ["k"], ids["render"]: ["r", "we quote with repr now", "y"],
               ids["quote"]: ["u", "quote uses repr(), which escapes quotes", "y"]}
    seen = []
    for _ in range(3):
        child.expect(r"── (\d)/3 ─+\r\n(\S+)")
        mid = child.match.group(2)
        seen.append(mid)
        child.expect(r"\[k\]eep")
        first, *rest = answers[mid]
        child.sendline(first)
        for text in rest:
            child.expect(r"reason|replacement|retire \S+ .*\?")
            child.sendline(text)
    child.expect(r"kept 1, edited 0, retired 1, superseded 1, skipped 0")
    child.expect(pexpect.EOF)
    assert sorted(seen) == sorted(ids.values())
    assert json.loads(run_cli(repo, "stale", "--json")[1]) == []
    shown = json.loads(run_cli(repo, "show", ids["render"], "--json")[1])
    assert shown["retired"] and "Retired: we quote with repr now" in shown["facts"]
    old = json.loads(run_cli(repo, "show", ids["quote"], "--json")[1])
    (new_id,) = old["superseded_by"]
    assert json.loads(run_cli(repo, "show", new_id, "--json")[1])["title"] == "quote uses repr(), which escapes quotes"
    kept = json.loads(run_cli(repo, "show", ids["parse"], "--json")[1])
    assert kept["status"] == "fresh"
    # keep is a person's review of the text: the model's memory now reads as reviewed
    assert kept["reviewed"]["by"] == "Test User" and kept["trust"] == {"level": "reviewed", "label": "reviewed",
                                                                        "rule": True}


def test_review_shows_the_diff_of_the_anchored_code(tmp_path: Path, run_cli) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE})
    run_cli(repo, "init", "--no-hooks")
    run_cli(repo, "remember", "parse uses commas", "--anchor", "csvish.py::parse")
    sha = commit(repo, "semicolons", {"csvish.py": CODE.replace("text.split(',')", "text.split(';')")})
    child = pexpect.spawn(sys.executable, ["-m", "gitmem", "stale"], cwd=str(repo),
                          env={**os.environ, "NO_COLOR": "1"}, encoding="utf-8", timeout=60, dimensions=(50, 200))
    child.expect(r"stale: csvish.py::parse — [^\r\n]*" + sha[:12])
    child.expect(r"-    return text.split\(','\)")
    child.expect(r"\+    return text.split\(';'\)")
    child.expect(r"\[k\]eep")
    child.sendline("q")
    child.expect(r"skipped 1")
    child.expect(pexpect.EOF)


def test_q_or_an_empty_answer_cancels_supersede_retire_and_edit(tmp_path: Path, run_cli) -> None:
    """At each follow-up prompt, backing out leaves the memory as it was (``q`` never becomes a memory)."""
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE})
    run_cli(repo, "init", "--no-hooks")
    ids = []
    for name in ("parse", "render", "quote"):
        code, out, _ = run_cli(repo, "remember", f"{name} uses commas", "--anchor", f"csvish.py::{name}", "--json")
        ids.append(json.loads(out)["id"])
    commit(repo, "memories")
    commit(repo, "semicolons everywhere",
           {"csvish.py": CODE.replace("','", "';'").replace("'\"' + s + '\"'", "repr(s)")})
    files = {p.name: p.read_bytes() for p in (repo / ".gitmem" / "memories").glob("*.md")}
    assert len(files) == 3
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "EDITOR": "true", "VISUAL": "true"}
    child = pexpect.spawn(sys.executable, ["-m", "gitmem", "stale"], cwd=str(repo), env=env, encoding="utf-8",
                          timeout=60, dimensions=(50, 200))
    # 1: supersede, then q; 2: retire, a reason, then no at the confirmation; 3: retire, q at the reason.
    # Then a second walk: 1: supersede with an empty answer; 2: edit with an editor that changes nothing.
    plans = [["u", "q"], ["r", "old", "n"], ["r", "q"]]
    for plan in plans:
        child.expect(r"── (\d)/3 ─+\r\n(\S+)")
        child.expect(r"\[k\]eep")
        child.sendline(plan[0])
        for text in plan[1:]:
            child.expect(r"reason|replacement|retire \S+ .*\?")
            child.sendline(text)
        child.expect("cancelled: ")
    child.expect(r"kept 0, edited 0, retired 0, superseded 0, skipped 3")
    child.expect(pexpect.EOF)
    child = pexpect.spawn(sys.executable, ["-m", "gitmem", "stale"], cwd=str(repo), env=env, encoding="utf-8",
                          timeout=60, dimensions=(50, 200))
    for plan in (["u", ""], ["e"], ["q"]):
        child.expect(r"\[k\]eep")
        child.sendline(plan[0])
        for text in plan[1:]:
            child.expect(r"replacement")
            child.sendline(text)
        if plan[0] != "q":
            child.expect("cancelled: ")
    child.expect(pexpect.EOF)
    after = {p.name: p.read_bytes() for p in (repo / ".gitmem" / "memories").glob("*.md")}
    assert after == files  # no new memory titled "q", nothing retired, superseded or re-anchored
    assert len(json.loads(run_cli(repo, "stale", "--json")[1])) == 3


def test_s_skips_and_supersede_refuses_a_stray_key_and_asks_before_retiring(tmp_path: Path, run_cli) -> None:
    """A new user's walk: ``s`` (read as skip) skips; at supersede's prompt a one-letter answer is refused, not made
    a memory; a real text is asked to confirm (no keeps the original), and Enter skips."""
    repo = make_repo(tmp_path / "r")
    commit(repo, "init", {"csvish.py": CODE})
    run_cli(repo, "init", "--no-hooks")
    ids = []
    for name in ("parse", "render", "quote"):
        code, out, _ = run_cli(repo, "remember", f"{name} uses commas", "--anchor", f"csvish.py::{name}", "--json")
        ids.append(json.loads(out)["id"])
    commit(repo, "memories")
    commit(repo, "semicolons everywhere",
           {"csvish.py": CODE.replace("','", "';'").replace("'\"' + s + '\"'", "repr(s)")})
    files = {p.name: p.read_bytes() for p in (repo / ".gitmem" / "memories").glob("*.md")}
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb"}
    child = pexpect.spawn(sys.executable, ["-m", "gitmem", "stale"], cwd=str(repo), env=env, encoding="utf-8",
                          timeout=60, dimensions=(50, 200))
    child.expect(r"s\[u\]persede  \[s\]kip \(Enter\)")
    child.sendline("s")  # 1: skip
    child.expect(r"── 2/3")
    child.expect(r"\[k\]eep")
    child.sendline("supersede")  # 2: the full word; stray keys refused, then a text not confirmed
    for stray in ("s", "u", "ok fine"):
        child.expect("replacement memory")
        child.sendline(stray)
        child.expect("refused: ")
    child.expect("replacement memory")
    child.sendline("render joins with semicolons now")
    child.expect(r"retire \S+ .* and record the replacement\? \[y/N\]")
    child.sendline("")
    child.expect("cancelled: .*not confirmed")
    child.expect(r"── 3/3")
    child.expect(r"\[k\]eep")
    child.sendline("")  # 3: Enter skips
    child.expect(r"kept 0, edited 0, retired 0, superseded 0, skipped 3")
    child.expect(pexpect.EOF)
    after = {p.name: p.read_bytes() for p in (repo / ".gitmem" / "memories").glob("*.md")}
    assert after == files  # no memory titled "s", nothing retired
    child = pexpect.spawn(sys.executable, ["-m", "gitmem", "stale"], cwd=str(repo), env=env, encoding="utf-8",
                          timeout=60, dimensions=(50, 200))
    child.expect(r"\[k\]eep")
    child.sendline("u")
    child.expect("replacement memory")
    child.sendline("parse splits on semicolons now")
    child.expect(r"\[y/N\]")
    child.sendline("y")
    child.expect(r"supersedes")
    child.expect(r"\[k\]eep")
    child.sendline("q")
    child.expect(r"superseded 1")
    child.expect(pexpect.EOF)
    titles = [m["title"] for m in json.loads(run_cli(repo, "list", "--json")[1])]
    assert "parse splits on semicolons now" in titles and "s" not in titles


def test_the_stale_help_and_the_walkthrough_name_the_review_keys(run_cli, tmp_path: Path) -> None:
    from gitmem.ops.review import KEYS, PROMPT

    help_text = " ".join(run_cli(tmp_path, "stale", "--help")[1].split())
    walk = (Path(__file__).parents[1] / "docs" / "walkthrough.md").read_text()
    assert PROMPT in walk
    for label in ("[k]eep", "[e]dit", "[r]etire", "s[u]persede", "[s]kip", "[q]uit"):
        assert label in help_text and label in PROMPT
    assert KEYS["s"] == KEYS["skip"] == KEYS["n"] == "n"
    assert KEYS["u"] == KEYS["supersede"] == "u"
