"""Build a git history from released versions, each commit's message the release's changelog entry.

For ``retrieval.py`` on a project whose real history cannot be had here: one
commit per release tarball (given in version order), the commit's tree the
release's whole source tree, the commit's message that release's own entry in
the changelog it ships (the maintainers' text about those changes), cleaned of
markup that is no prose (contributor avatars, link targets, HTML entities).

Which entry: the section of ``--changelog`` (first file of that name in the
tarball) under the heading naming the release's version (``### 0.21.1 (…)``,
``## [1.6.1](…) (…)``, ``# [1.7.0](…)``, ``## v1.21.0 — …``), up to the next
heading naming a version. When the release's own changelog has no entry for it
(released before the changelog was updated), the entry is taken from the first
later release's changelog that has one; when none has, the message is
``<name> <version>`` and the release is listed on stderr. Commit dates are
2020-01-01 plus one day per release, author and committer ``bench``, so a
rebuild gives the same SHAs.

    python bench/release_history.py OUT_DIR TARBALL... [--changelog CHANGELOG.md] [--drop dist]

Version: from the tarball's name, ``<name>-<version>.tgz`` / ``.tar.gz``.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

#: A heading that names a version: ``#``s, then optionally ``[`` and ``v``, then the version.
_VERSION_HEADING = re.compile(r"^#{1,4}\s*\[?v?(\d+\.\d+(?:\.\d+)?(?:-[\w.]+)?)\b")
_IMG = re.compile(r"<img\b[^>]*>", re.I)
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_ANGLE_URL = re.compile(r"<https?://[^>]*>")


def version_of(tarball: str) -> tuple[str, str]:
    """(name, version) from ``name-1.2.3.tgz`` / ``Name-1.2.3.tar.gz``."""
    base = os.path.basename(tarball)
    for ext in (".tar.gz", ".tgz"):
        if base.endswith(ext):
            base = base[: -len(ext)]
    name, _, version = base.rpartition("-")
    return name, version


def changelog_entry(text: str, version: str) -> str | None:
    """The cleaned section of ``text`` under the heading naming ``version``; None if absent or empty."""
    lines = text.splitlines()
    start = None
    for i, line in enumerate(lines):
        m = _VERSION_HEADING.match(line)
        if m and m.group(1) == version:
            start = i + 1
            break
    if start is None:
        return None
    body: list[str] = []
    for line in lines[start:]:
        if _VERSION_HEADING.match(line):
            break
        body.append(line)
    return clean(body) or None


def clean(lines: list[str]) -> str:
    """Drop the contributors subsection and markup (avatars, link targets, entities); squeeze blank lines."""
    out: list[str] = []
    skipping = False
    for line in lines:
        if line.startswith("#"):
            skipping = "contributors" in line.lower()
        if skipping:
            continue
        line = _IMG.sub("", line)
        line = _LINK.sub(r"\1", line)
        line = _ANGLE_URL.sub("", line)
        line = html.unescape(line).rstrip()
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    return "\n".join(out).strip()


def read_changelog(tarball: str, filename: str) -> str:
    """The first member named ``filename`` (at any depth) of ``tarball``, as text ("" when none)."""
    with tarfile.open(tarball) as tf:
        members = sorted((m for m in tf.getmembers() if m.isfile() and os.path.basename(m.name) == filename),
                         key=lambda m: m.name.count("/"))
        if not members:
            return ""
        f = tf.extractfile(members[0])
        return f.read().decode("utf-8", "replace") if f else ""


def build(out: Path, tarballs: list[str], changelog: str, drop: list[str]) -> list[str]:
    """Create the repository at ``out`` (replacing it); returns the versions that got no entry."""
    versions = [version_of(t) for t in tarballs]
    texts = [read_changelog(t, changelog) for t in tarballs]
    messages: list[str] = []
    missing: list[str] = []
    for i, (name, version) in enumerate(versions):
        entry = next((e for e in (changelog_entry(texts[j], version) for j in range(i, len(texts))) if e), None)
        if entry is None:
            missing.append(version)
            entry = ""
        messages.append(f"{name} {version}\n\n{entry}".strip() + "\n")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid")

    def git(*args: str, **kw: object) -> None:
        subprocess.run(["git", "-C", str(out), *args], check=True, env=env, **kw)

    git("init", "-q", "-b", "main")
    for i, (tb, msg) in enumerate(zip(tarballs, messages, strict=True), 1):
        for p in out.iterdir():
            if p.name != ".git":
                shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(tb) as tf:
                tf.extractall(tmp, filter="data")
            (top,) = list(Path(tmp).iterdir())
            for p in top.iterdir():
                shutil.move(str(p), out / p.name)
        for d in drop:
            shutil.rmtree(out / d, ignore_errors=True)
        ts = 1577836800 + i * 86400
        git("add", "-A")
        env_c = dict(env, GIT_AUTHOR_DATE=f"@{ts} +0000", GIT_COMMITTER_DATE=f"@{ts} +0000")
        subprocess.run(["git", "-C", str(out), "commit", "-q", "--allow-empty", "-F", "-"],
                       input=msg.encode(), check=True, env=env_c)
    return missing


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("tarballs", nargs="+", help="release tarballs, in version order")
    ap.add_argument("--changelog", default="CHANGELOG.md", help="the changelog's file name in the tarballs")
    ap.add_argument("--drop", action="append", default=[], help="a top-level directory to leave out (repeatable)")
    args = ap.parse_args(argv)
    missing = build(args.out, args.tarballs, args.changelog, args.drop)
    n = len(args.tarballs)
    print(f"{args.out}: {n} commits; {n - len(missing)} with a changelog entry", file=sys.stderr)
    if missing:
        print(f"no entry for: {', '.join(missing)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
