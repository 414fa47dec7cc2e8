"""``gitmem tidy``'s measures on a planted set built from a real history: duplicates and contradictions.

The planted set comes from a repository's history (gitmem's own by default), read in a scratch clone:

* **Constant memories.** Every module-level ``NAME = value`` line of a Python file preceded by a ``#:``
  comment (gitmem's way of documenting a named constant) is a ``decision`` memory, at each commit where
  the pair (value, comment) differs from before: title = the comment's first sentence, body = the
  comment and ``NAME = value``, anchored to the file (``path``). Across the history this gives
  - *real paraphrases*: the same NAME and value whose comment was reworded → **duplicate** pairs;
  - *real value changes*: the same NAME given another value (``SCHEMA_VERSION = "9"`` → ``"10"``)
    → **contradiction** pairs (they must never be merged: a merge would lose one value);
  - *different constants of one file*: **compatible** pairs (neither).
* **Commit memories.** Each commit message is a ``discovery`` memory anchored to the symbols it changed
  (``bench.retrieval.diff_symbols``); two commits that changed one symbol make a **compatible** pair
  (different statements about the same code), drawn at random (``--pairs``).
* **Planted paraphrases** (synthetic, reported apart): each constant memory re-observed the way an
  agent's consolidation writes it again: sentences reordered and a fact added (``reorder``), common
  words swapped for synonyms (``synonyms``), or the title alone with the value (``short``) →
  **duplicate** pairs.
* **Planted negations** (synthetic): a constant comment holding a negation (``never``, ``not`` …) as a
  ``constraint``, against the same sentence with the negation removed → **contradiction** pairs.

Measures, each on every pair (all pairs share code):

* duplicates: token-set Jaccard (``gitmem.compare.similarity``) at thresholds 0.3 … 0.9, and the cosine
  of WordLlama embeddings (``search.embed``, the index's default model) at 0.80 … 0.98. A pair counts as
  merged by tidy when the measure is at or over the threshold and ``compare.contradiction`` (types ignored)
  does not fire (tidy never merges a contradicting pair). Reported: precision and recall of the
  duplicate pairs, **false merges** (compatible or contradicting pairs merged) and **missed** duplicates
  apart.
* contradictions: ``compare.contradiction`` (the rules) on every pair, types as planted: precision, recall,
  false flags per kind of pair (paraphrases flagged, compatible pairs flagged).

Run it
------
    .venv/bin/python bench/tidy.py [REPO_PATH] [--pairs 1500] [--seed 1] [--json] [--show N]

REPO_PATH (default ``/work/main``) is only read (a ``git clone --no-hardlinks`` into a temporary folder).
``--show N`` prints up to N examples of each kind of error.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.retrieval import diff_symbols, read_history
from gitmem.anchors import Resolver
from gitmem.compare import contradiction, similarity
from gitmem.git import Repo
from gitmem.model import KIND_FILE, Anchor, Memory

JACCARD_THRESHOLDS = (0.3, 0.4, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9)
COSINE_THRESHOLDS = (0.80, 0.85, 0.90, 0.93, 0.95, 0.97, 0.98)
_CONST = re.compile(r"^#:\s?(.*)$")
_ASSIGN = re.compile(r"^([A-Z][A-Z0-9_]*)(?:\s*:\s*[^=]+)?\s*=\s*(.+?)\s*$")
_NEGATION = re.compile(r"\b(never|not|no longer|don't|do not|must not|cannot)\s+", re.I)
_SYNONYMS = {"memory": "note", "memories": "notes", "file": "document", "files": "documents", "is": "gets",
             "when": "whenever", "the": "this", "a": "one", "every": "each", "cut": "trimmed", "more": "over",
             "than": "beyond", "read": "loaded", "written": "saved", "hook": "git hook", "hooks": "git hooks"}


@dataclass
class Pair:
    a: Memory
    b: Memory
    kind: str          # real-paraphrase, planted-paraphrase-<how>, value-change, planted-negation, compatible-*
    duplicate: bool
    contradicts: bool


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True).stdout.decode(
        "utf-8", "replace")


def constants_at(text: str) -> dict[str, tuple[str, str]]:
    """NAME → (value, comment) of the ``#:``-documented module-level constants of one Python source."""
    out: dict[str, tuple[str, str]] = {}
    comment: list[str] = []
    for line in text.splitlines():
        c = _CONST.match(line)
        if c:
            comment.append(c.group(1).strip())
            continue
        a = _ASSIGN.match(line)
        if a and comment and not a.group(2).endswith(("(", "[", "{", "\\")):
            out[a.group(1)] = (a.group(2), " ".join(comment))
        comment = []
    return out


def constant_memory(path: str, name: str, value: str, comment: str, n: int, mtype: str = "decision") -> Memory:
    first = re.split(r"(?<=[.:])\s", comment, maxsplit=1)[0].rstrip(".:")
    return Memory(id=f"c{n:05d}", type=mtype, title=first[:120], body=f"{comment} ({name} = {value})",
                  anchors=[Anchor(path=path, kind=KIND_FILE)])


def history_constants(clone: Path) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(path, NAME) → its distinct (value, comment) versions, oldest first, over the first-parent history."""
    shas = _git(clone, "rev-list", "--first-parent", "--reverse", "HEAD").split()
    versions: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for sha in shas:
        changed = [p for p in _git(clone, "diff-tree", "--no-commit-id", "-r", "--name-only", "--root", sha).split()
                   if p.endswith(".py") and not p.startswith("tests/")]
        for path in changed:
            try:
                text = _git(clone, "show", f"{sha}:{path}")
            except subprocess.CalledProcessError:
                continue
            for name, vc in constants_at(text).items():
                seen = versions.setdefault((path, name), [])
                if not seen or seen[-1] != vc:
                    if vc not in seen:
                        seen.append(vc)
    return versions


def paraphrases(m: Memory, rnd: random.Random) -> list[tuple[str, Memory]]:
    """Planted re-observations of ``m``: reorder (+ a fact), synonyms, short."""
    body_sents = re.split(r"(?<=[.!?])\s+", m.body)
    reorder = replace(m, id=m.id + "r", title=body_sents[-1][:120], body=" ".join(reversed(body_sents)),
                      facts=["Seen again in a later session"])
    cut = m.body.rfind(" (")
    syn = " ".join(_SYNONYMS.get(w.lower(), w) for w in m.body[:cut].split()) + m.body[cut:]  # the value kept
    synonyms = replace(m, id=m.id + "s", title=" ".join(_SYNONYMS.get(w.lower(), w) for w in m.title.split()),
                       body=syn)
    value = m.body[cut + 1:]
    short = replace(m, id=m.id + "t", body=value)
    return [("reorder", reorder), ("synonyms", synonyms), ("short", short)]


def build(repo_path: str, n_pairs: int, seed: int) -> list[Pair]:
    rnd = random.Random(seed)
    pairs: list[Pair] = []
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", repo_path, str(clone)], check=True)
        versions = history_constants(clone)
        n = 0
        latest: dict[str, list[Memory]] = {}
        for (path, name), vs in sorted(versions.items()):
            mems = []
            for value, comment in vs:
                n += 1
                mems.append((value, comment, constant_memory(path, name, value, comment, n)))
            for i in range(len(mems)):
                for j in range(i + 1, len(mems)):
                    (v1, c1, m1), (v2, c2, m2) = mems[i], mems[j]
                    if v1 == v2 and c1 != c2:
                        pairs.append(Pair(m1, m2, "real-paraphrase", True, False))
                    elif v1 != v2:
                        pairs.append(Pair(m1, m2, "value-change", False, True))
            last = mems[-1][2]
            latest.setdefault(path, []).append(last)
            for how, p in paraphrases(last, rnd):
                pairs.append(Pair(last, p, f"planted-paraphrase-{how}", True, False))
            neg = _NEGATION.search(mems[-1][1])
            if neg:
                value, comment, _ = mems[-1]
                n += 1
                c1 = constant_memory(path, name, value, comment, n, "constraint")
                n += 1
                plain = comment[:neg.start()] + comment[neg.end():]
                c2 = constant_memory(path, name, value, plain, n, "constraint")
                pairs.append(Pair(c1, c2, "planted-negation", False, True))
        for mems in latest.values():
            for i in range(len(mems)):
                for j in range(i + 1, len(mems)):
                    pairs.append(Pair(mems[i], mems[j], "compatible-constants", False, False))
        # commit memories on one symbol
        repo = Repo(clone)
        resolver = Resolver(repo)
        by_symbol: dict[tuple[str, str], list[Memory]] = {}
        for c in read_history(repo):
            if len(c.parents) != 1 or not c.message.strip():
                continue
            diff_symbols(resolver, c)
            lines = c.message.strip().splitlines()
            m = Memory(id="k" + c.sha[:10], type="decision", title=lines[0][:120],
                       body="\n".join(lines[1:]).strip(),
                       anchors=[Anchor(path=p, symbol=s, kind="function") for p, s in c.changed[:20]])
            for key in c.changed:
                by_symbol.setdefault(key, []).append(m)
        compat = [(x, y) for ms in by_symbol.values() for i, x in enumerate(ms) for y in ms[i + 1:]]
        compat = list({(x.id, y.id): (x, y) for x, y in compat}.values())
        rnd.shuffle(compat)
        for x, y in compat[:n_pairs]:
            pairs.append(Pair(x, y, "compatible-commits", False, False))
    return pairs


def cosines(pairs: list[Pair]) -> list[float]:
    """WordLlama cosine of each pair's texts (``Memory.text``), as the index embeds memories."""
    from gitmem.search.embed import WordLlamaEmbedder

    emb = WordLlamaEmbedder()
    texts = sorted({p.a.text for p in pairs} | {p.b.text for p in pairs})
    vec = dict(zip(texts, emb.embed(texts), strict=True))
    return [float(vec[p.a.text] @ vec[p.b.text]) for p in pairs]


def _clash(p: Pair) -> bool:
    """Whether tidy would refuse to merge the pair: a rule fires, whatever the types."""
    return contradiction(p.a, p.b, any_type=True) is not None


def dup_row(pairs: list[Pair], scores: list[float], clash: list[bool], t: float) -> dict[str, Any]:
    merged = [s >= t and not c for s, c in zip(scores, clash, strict=True)]
    tp = sum(1 for p, m in zip(pairs, merged, strict=True) if m and p.duplicate)
    false_merges = [p for p, m in zip(pairs, merged, strict=True) if m and not p.duplicate]
    missed = [p for p, m in zip(pairs, merged, strict=True) if not m and p.duplicate]
    dups = sum(1 for p in pairs if p.duplicate)
    by_kind: dict[str, int] = {}
    for p in false_merges:
        by_kind[p.kind] = by_kind.get(p.kind, 0) + 1
    missed_kind: dict[str, int] = {}
    for p in missed:
        missed_kind[p.kind] = missed_kind.get(p.kind, 0) + 1
    guarded = sum(1 for p, s, c in zip(pairs, scores, clash, strict=True) if s >= t and c and not p.duplicate)
    return {"threshold": t, "kept_apart_by_rules": guarded,
            "precision": tp / (tp + len(false_merges)) if tp + len(false_merges) else 1.0,
            "recall": tp / dups if dups else 0.0, "merged": tp, "false_merges": len(false_merges),
            "false_merges_by_kind": by_kind, "missed": len(missed), "missed_by_kind": missed_kind}


def run(repo_path: str, n_pairs: int, seed: int, show: int) -> dict[str, Any]:
    pairs = build(repo_path, n_pairs, seed)
    kinds: dict[str, int] = {}
    for p in pairs:
        kinds[p.kind] = kinds.get(p.kind, 0) + 1
    jac = [similarity(p.a, p.b) for p in pairs]
    cos = cosines(pairs)
    clash = [_clash(p) for p in pairs]
    compat = [i for i, p in enumerate(pairs) if not p.duplicate and not p.contradicts]
    out: dict[str, Any] = {"pairs": len(pairs), "kinds": kinds,
                           "highest_compatible": {"jaccard": sorted(jac[i] for i in compat)[-3:],
                                                     "cosine": sorted(cos[i] for i in compat)[-3:]},
                           "jaccard": [dup_row(pairs, jac, clash, t) for t in JACCARD_THRESHOLDS],
                           "cosine": [dup_row(pairs, cos, clash, t) for t in COSINE_THRESHOLDS]}
    flags = [contradiction(p.a, p.b) for p in pairs]
    tp = sum(1 for p, f in zip(pairs, flags, strict=True) if f and p.contradicts)
    false = [(p, f) for p, f in zip(pairs, flags, strict=True) if f and not p.contradicts]
    missed = [p for p, f in zip(pairs, flags, strict=True) if not f and p.contradicts]
    n_true = sum(1 for p in pairs if p.contradicts)
    fk: dict[str, int] = {}
    for p, _ in false:
        fk[p.kind] = fk.get(p.kind, 0) + 1
    mk: dict[str, int] = {}
    for p in missed:
        mk[p.kind] = mk.get(p.kind, 0) + 1
    rule_counts: dict[str, int] = {}
    for f in flags:
        if f:
            rule_counts[f.rule] = rule_counts.get(f.rule, 0) + 1
    out["contradictions"] = {"precision": tp / (tp + len(false)) if tp + len(false) else 1.0,
                             "recall": tp / n_true if n_true else 0.0, "flagged": tp, "false_flags": len(false),
                             "false_flags_by_kind": fk, "missed": len(missed), "missed_by_kind": mk,
                             "by_rule": rule_counts}
    if show:
        false.sort(key=lambda x: (not x[0].kind.startswith("compatible"), x[0].kind))
        ex: dict[str, list[str]] = {"false_flags": [f"[{p.kind}] {f.rule}: {f.reason}" for p, f in false[:show]],
                                    "missed_contradictions": [f"[{p.kind}] {p.a.title!r} / {p.b.title!r}"
                                                              for p in missed[:show]]}
        t = 0.6
        fm = [p for p, s, c in zip(pairs, jac, clash, strict=True) if s >= t and not c and not p.duplicate]
        ex["false_merges_at_0.6"] = [f"[{p.kind}] {p.a.text[:100]!r} / {p.b.text[:100]!r}" for p in fm[:show]]
        ms = [(p, s) for p, s, c in zip(pairs, jac, clash, strict=True) if (s < t or c) and p.duplicate]
        ex["missed_duplicates_at_0.6"] = [f"[{p.kind}] {s:.2f} {p.a.text[:80]!r} / {p.b.text[:80]!r}"
                                          for p, s in ms[:show]]
        out["examples"] = ex
    return out


def table(r: dict[str, Any]) -> str:
    lines = [f"{r['pairs']} pairs: " + ", ".join(f"{k} {v}" for k, v in sorted(r["kinds"].items())), ""]
    for measure in ("jaccard", "cosine"):
        top = ", ".join(f"{x:.2f}" for x in r["highest_compatible"][measure])
        lines.append(f"highest {measure} of a compatible pair (neither duplicate nor contradiction): {top}")
        lines.append(f"duplicates by {measure}: threshold  precision  recall  merged  false merges  missed  "
                     "(contradicting pairs over the threshold kept apart by the rules)")
        for row in r[measure]:
            fm = ", ".join(f"{k} {v}" for k, v in sorted(row["false_merges_by_kind"].items()))
            lines.append(f"  {row['threshold']:>5}  {row['precision']:.3f}  {row['recall']:.3f}  {row['merged']:>4}  "
                         f"{row['false_merges']:>4}{' (' + fm + ')' if fm else ''}  {row['missed']:>4}  "
                         f"({row['kept_apart_by_rules']})")
        lines.append("")
    c = r["contradictions"]
    lines.append(f"contradictions (rules): precision {c['precision']:.3f}, recall {c['recall']:.3f}, flagged "
                 f"{c['flagged']}, false flags {c['false_flags']} {c['false_flags_by_kind']}, missed {c['missed']} "
                 f"{c['missed_by_kind']}, by rule {c['by_rule']}")
    for k, v in r.get("examples", {}).items():
        lines += ["", f"{k}:"] + [f"  {x}" for x in v]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Precision and recall of gitmem tidy's duplicate and contradiction "
                                             "checks on a planted set from a real history.")
    ap.add_argument("repo", nargs="?", default="/work/main", help="the repository (only read)")
    ap.add_argument("--pairs", type=int, default=1500, help="compatible commit pairs drawn (default 1500)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=0, help="print up to N examples of each error")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    r = run(args.repo, args.pairs, args.seed, args.show)
    print(json.dumps(r, indent=2) if args.json else table(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
