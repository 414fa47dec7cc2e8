"""Find text that no tree-sitter node carries, so that no fingerprint sees it: per language and node type, the
non-whitespace bytes between a node's children (or between its edges and them) in the files of a repository.

    .venv/bin/python bench/text_gaps.py REPO [REPO ...] [--rev HEAD] [--max-kb 400]

A node type listed with content such as ``'22.04'`` (Dockerfile ``image_tag``) or ``'a:0.1'`` (a Scala
``interpolated_string``) hides a change from gitmem: add it to its ``LanguageSpec.text_gaps`` (or make it
``atomic``). Types already in ``text_gaps`` / ``atomic``, comments, and gaps that are only whitespace are left
out; ``\\`` + newline line continuations and ``;`` separators are formatting and may be listed (read the
samples). The repositories (bare mirrors too) are only read.
"""

from __future__ import annotations

import argparse
import subprocess
from collections import Counter

from gitmem.code import symbols
from gitmem.code.languages import language_for_path
from gitmem.code.specs import SPECS

#: Characters of a sample gap printed.
SAMPLE_CHARS = 60
#: Samples printed per (language, node type).
SAMPLES = 5


def scan(repo: str, rev: str, max_kb: int, found: Counter[tuple[str, str]],
         samples: dict[tuple[str, str], Counter[bytes]]) -> None:
    """Add the gaps of every file of a language in ``SPECS`` at ``rev`` of ``repo`` to ``found`` (count per
    (language, node type)) and ``samples`` (the gaps' first ``SAMPLE_CHARS`` bytes)."""
    names = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", rev], capture_output=True,
                           text=True, check=True).stdout.split("\n")
    for path in names:
        language = language_for_path(path)
        spec = SPECS.get(language or "")
        if spec is None:
            continue
        src = subprocess.run(["git", "-C", repo, "show", f"{rev}:{path}"], capture_output=True).stdout
        if len(src) > max_kb * 1024:
            continue
        src = symbols._normalise(src)
        if spec.prepare is not None:
            src = spec.prepare(src)
        stack = [symbols._parser(spec.name).parse(src).root_node]
        while stack:
            node = stack.pop()
            children = node.children
            if not children or node.type in spec.comment_types or node.type in spec.atomic \
                    or node.type in spec.text_gaps:
                continue
            prev = node.start_byte
            for start, end in [(c.start_byte, c.end_byte) for c in children] + [(node.end_byte, node.end_byte)]:
                gap = src[prev:start]
                if gap.strip():
                    key = (spec.name, node.type)
                    found[key] += 1
                    samples.setdefault(key, Counter())[gap[:SAMPLE_CHARS]] += 1
                prev = max(prev, end)
            stack.extend(children)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+")
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--max-kb", type=int, default=400)
    args = parser.parse_args(argv)
    found: Counter[tuple[str, str]] = Counter()
    samples: dict[tuple[str, str], Counter[bytes]] = {}
    for repo in args.repos:
        scan(repo, args.rev, args.max_kb, found, samples)
    for (language, node_type), count in found.most_common():
        print(f"{language}\t{node_type}\t{count}\t{samples[(language, node_type)].most_common(SAMPLES)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
