"""Relevance of what the prompt hook injects unasked: prompts that concern nothing in the store get nothing.

The store: a repository's own history as memories, exactly as ``bench/retrieval.py`` builds them
(``commit_memory``: each commit's message anchored to the symbols it changed), in a scratch clone
(REPO is only read): the non-merge commits before the last ``--held-out`` ones, plus
``retrieval.PARAPHRASES``' 20 memories (the prompts that paraphrase them are the vectors' test).

Four sets of prompts, each through the prompt hook's own code, in-process (``core.prompt_candidates``,
``core.prompt_hybrid``, ``fusion.prompt_ranking``, ``core.pack_prompt``), without the warm process
("hook") and with its hybrid hits computed in-process ("hook+vectors": ``search.lexical.hybrid_hits``, what the
warm process's ``search`` answers):

* **foreign**: the commit subjects of other repositories (``--foreign PATH``, read at run time with
  ``git log``; ``--per-repo`` of each, drawn with ``--seed``): they concern nothing in the store.
  Target: 0 memories injected.
* **generic**: requests that name no subject, in several languages ("explain the code", "explique le
  code", "解释一下这段代码", ``GENERIC``): target 0.
* **own**: the held-out commits' messages; relevant memories are those anchored to a symbol the commit
  changed (``retrieval``'s definition). Per prompt: recall@5, recall@10, nDCG@10 of the hook's ranking and
  recall of what it injects.
* **paraphrases**: ``retrieval.PARAPHRASES``' prompts (no word shared with their memory): is the memory
  injected ("hook+vectors")?

"before" is the hook as it was (every query term, FTS5 BM25 relative to its best hit, the warm process's
hits after ``search.hybrid.relevant`` only); "after" is the hook now (content terms, ``[relevance]``
floors); ``--sweep`` prints the same figures for a grid of floors: the calibration (bench/README.md).

Run it (the foreign repositories are git folders fetched beforehand; nothing of them is kept)::

    .venv/bin/python bench/relevance.py . --foreign /path/to/flask.git --foreign /path/to/requests.git \\
        [--per-repo 100] [--held-out 40] [--seed 1] [--sweep] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import retrieval  # bench/retrieval.py (the script's folder is on sys.path): the store is built the same way

from gitmem import config, stopwords
from gitmem.anchors import Resolver
from gitmem.catalog import db as catalog_db
from gitmem.git import Repo
from gitmem.integrations.agents import core
from gitmem.memories import write
from gitmem.model import Memory
from gitmem.rank import fusion, relevance
from gitmem.search.lexical import hybrid_hits
from gitmem.store import Store, init_layout

#: Requests that name no subject of any code base, in the languages prompts come in.
GENERIC = (
    "explain the code", "what does this do?", "can you help me with this?", "hello there", "thanks, that works",
    "please continue", "and then?", "what is it", "is this right?", "do it again",
    "explique le code", "qu'est-ce que ça fait ?", "peux-tu m'aider avec ça ?", "merci, c'est bon",
    "erkläre mir den Code", "was macht das hier?", "kannst du mir helfen?", "danke, das war es",
    "explica el código", "¿qué hace esto?", "¿puedes ayudarme con esto?", "gracias, eso es todo",
    "spiega il codice", "cosa fa questo?", "explique o código", "o que isso faz?",
    "解释一下这段代码", "这个是做什么的？", "コードを説明して", "これは何をしますか？", "объясни этот код",
    "xyzzy plugh frobnicate", "qwertyuiop asdfghjkl", "lorem ipsum dolor sit amet",
)
#: Floors swept with ``--sweep`` (``[relevance] min_bm25`` × ``min_coverage`` at the default ``min_similarity``,
#: then ``min_similarity`` at the default text floors).
SWEEP_BM25 = (0.0, 4.0, 6.0, 8.0, 10.0, 12.0)
SWEEP_COVERAGE = (0.0, 0.3, 0.5, 0.6, 0.7)
SWEEP_SIMILARITY = (0.15, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55)


def progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def foreign_subjects(paths: list[str], per_repo: int, seed: int) -> list[tuple[str, str]]:
    """(repository name, commit subject) for ``per_repo`` distinct non-merge subjects of each git folder in
    ``paths`` (a bare repository or a work tree), drawn with ``random.Random(seed)``."""
    out: list[tuple[str, str]] = []
    for p in paths:
        text = subprocess.run(["git", f"--git-dir={p}" if p.endswith(".git") or Path(p, "HEAD").is_file()
                               else f"--git-dir={Path(p) / '.git'}", "log", "--no-merges", "--format=%s"],
                              check=True, capture_output=True).stdout.decode("utf-8", "replace")
        subjects = sorted({s.strip() for s in text.splitlines() if s.strip()})
        rng = random.Random(seed)
        name = Path(p).resolve().name if Path(p).name != "repo" else Path(p).resolve().parent.name
        out += [(name, s) for s in rng.sample(subjects, min(per_repo, len(subjects)))]
    return out


# --------------------------------------------------------------------------- the hook, before and after


class Candidates:
    """What the hook sees for one prompt, once: named ids, the old and new text hits, the hybrid hits."""

    def __init__(self, store: Store, con: Any, prompt: str) -> None:
        self.prompt = prompt
        self.con = con
        self.path_ids, self.symbol_ids, _ = core.prompt_candidates(con, prompt, (0.0, 0.0))
        self.old_bm25 = catalog_db.search(con, prompt, core.PROMPT_SEARCH_HITS)  # every query term (before)
        terms = stopwords.content_terms(prompt)
        self.new_bm25 = catalog_db.search_terms(con, terms, core.PROMPT_SEARCH_HITS) if terms else []
        texts = catalog_db.fts_texts(con, [m for m, _ in self.new_bm25])
        docs = catalog_db.term_docs(con, sorted({relevance.fold(t) for t in terms}))
        n = catalog_db.count(con)
        self.self_score = relevance.self_score(terms, docs, n)
        self.scores = {m: relevance.match_score(terms, x, docs, n) for m, x in texts.items()}
        hits = hybrid_hits(store, prompt, core.PROMPT_SEARCH_HITS)
        self.hybrid = [{"id": h.id, "score": h.score, "fts_rank": h.fts_rank, "vector_rank": h.vector_rank,
                        "similarity": h.similarity} for h in hits]

    def ranking(self, floors: tuple[float, float, float] | None, vectors: bool) -> list[str]:
        """The hook's ranking: ``floors`` None = before (no floors, every term), else (min_bm25, min_coverage,
        min_similarity) as ``config.relevance_floors`` gives them."""
        if floors is None:
            return [m for m, _ in fusion.prompt_ranking(self.path_ids, self.symbol_ids, self.old_bm25,
                                                        self.hybrid if vectors else None)]
        need = relevance.text_floor(self.self_score, floors[0], floors[1])
        text = relevance.lexical_floor(self.new_bm25, self.scores, need)
        hybrid = (core.prompt_hybrid(self.prompt, self.hybrid, text, floors[2], self.con, (floors[0], floors[1]))
                  if vectors else None)
        return [m for m, _ in fusion.prompt_ranking(self.path_ids, self.symbol_ids, text, hybrid)]


def injected(con: Any, ranking: list[str]) -> list[str]:
    """The ids the hook injects for ``ranking`` (in full and listed; the default ``prompt_budget``)."""
    packed = core.pack_prompt(con, ranking, config.DEFAULT_BUDGETS["prompt_budget"])
    return [] if packed is None else packed.detailed + packed.indexed


VARIANTS = ("before", "after")


def evaluate(cands: list[Candidates], con: Any, floors: tuple[float, float, float] | None, kind: str,
             relevant_ids: list[set[str]] | None = None) -> dict[str, Any]:
    """Per method (hook, hook+vectors): mean memories injected per prompt and the share of prompts given any;
    for ``own`` prompts (``relevant_ids``) recall@5, recall@10, nDCG@10 and recall in what is injected; for the
    paraphrases (``relevant_ids``: one id each) the share whose memory is injected."""
    out: dict[str, Any] = {}
    for method, vectors in (("hook", False), ("hook+vectors", True)):
        rows = []
        for i, c in enumerate(cands):
            ranked = c.ranking(floors, vectors)
            inj = injected(con, ranked)
            row: dict[str, float] = {"injected": len(inj), "any": 1.0 if inj else 0.0}
            if relevant_ids is not None:
                rel = relevant_ids[i]
                row.update({"recall@5": retrieval.recall_at(ranked, rel, 5),
                            "recall@10": retrieval.recall_at(ranked, rel, 10),
                            "ndcg@10": retrieval.ndcg_at(ranked, rel, 10),
                            "in_injection": len(rel & set(inj)) / len(rel)})
            rows.append(row)
        out[method] = {k: statistics.fmean(r[k] for r in rows) if rows else math.nan for k in rows[0]} if rows else {}
    return out


# --------------------------------------------------------------------------- the run


def build_store(repo_path: str, held_out: int, tmp: Path) -> tuple[Path, Store, list[tuple[retrieval.Commit, set[str]]],
                                                                    list[Memory]]:
    """The scratch clone and its store: memories of the non-merge commits before the last ``held_out`` ones
    and the paraphrases; returns (clone, store, [(held-out commit, relevant memory ids)], paraphrase memories)."""
    from ulid import ULID

    clone = tmp / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", repo_path, str(clone)], check=True)
    with open(clone / ".git" / "info" / "exclude", "a", encoding="utf-8") as f:
        f.write("\n/.gitmem/\n")
    repo = Repo(clone)
    init_layout(repo)
    store = Store(repo)
    store.enable_symbol_cache()
    resolver = Resolver(repo)
    history = [c for c in retrieval.read_history(repo) if len(c.parents) == 1]
    for i, c in enumerate(history, 1):
        retrieval.diff_symbols(resolver, c)
        if i % 50 == 0:
            progress(f"diffed {i}/{len(history)} commits")
    held, kept = history[-held_out:], history[:-held_out]
    mems = {c.sha: retrieval.commit_memory(store, resolver, c) for c in kept}
    paraphrases = []
    for i, (title, body, _) in enumerate(retrieval.PARAPHRASES):
        ms = 1_900_000_000_000 + i
        paraphrases.append(Memory(id=str(ULID.from_bytes(ms.to_bytes(6, "big") + bytes(10))), type="gotcha",
                                  title=title, body=body, author="bench", source="user",
                                  created="2030-03-17T17:46:40Z", updated="2030-03-17T17:46:40Z"))
    write(store, [*mems.values(), *paraphrases])
    own = []
    for c in held:
        targets = set(c.changed) | set(c.removed)
        rel = {mems[k.sha].id for k in kept if {(p, n) for p, n in k.changed} & targets}
        if rel:
            own.append((c, rel))
    return clone, store, own, paraphrases


def run(repo_path: str, foreign: list[str], per_repo: int, held_out: int, seed: int, sweep: bool) -> dict[str, Any]:
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gitmem-relevance-") as tmp:
        clone, store, own, paraphrases = build_store(repo_path, held_out, Path(tmp))
        store = Store(Repo(clone))
        hybrid_hits(store, "warm up", 1)  # the catalog and its search vectors, once
        con = catalog_db.connect(clone)
        if con is None:
            raise SystemExit(f"{clone}: no catalog")
        floors = config.relevance_floors(config.read_cached(core.state(clone)))
        sets: dict[str, tuple[list[Candidates], list[set[str]] | None, list[str]]] = {}
        subjects = foreign_subjects(foreign, per_repo, seed)
        progress(f"{catalog_db.count(con)} memories; {len(subjects)} foreign prompts, {len(GENERIC)} generic, "
                 f"{len(own)} own, {len(paraphrases)} paraphrases")
        try:
            for name, prompts, rel in (
                    ("foreign", [s for _, s in subjects], None),
                    ("generic", list(GENERIC), None),
                    ("own", [c.message for c, _ in own], [r for _, r in own]),
                    ("paraphrases", [p for _, _, p in retrieval.PARAPHRASES], [{m.id} for m in paraphrases])):
                cands = []
                for i, p in enumerate(prompts, 1):
                    cands.append(Candidates(store, con, p))
                    if i % 50 == 0:
                        progress(f"{name}: {i}/{len(prompts)}")
                sets[name] = (cands, rel, prompts)
            result: dict[str, Any] = {"repo": repo_path, "memories": catalog_db.count(con),
                                      "foreign_repos": sorted({r for r, _ in subjects}), "floors": floors,
                                      "prompts": {k: len(v[0]) for k, v in sets.items()}}
            for variant, fl in (("before", None), ("after", floors)):
                result[variant] = {name: evaluate(c, con, fl, name, rel) for name, (c, rel, _) in sets.items()}
            # the foreign prompts that still get something, for reading
            fc, _, fp = sets["foreign"]
            result["still_injected"] = [
                {"prompt": p, "ids": inj, "titles": [r["title"] for r in catalog_db.rows(con, inj)],
                 "scores": {m: round(c.scores.get(m, 0.0), 2) for m in inj}}
                for c, p in zip(fc, fp, strict=True) if (inj := injected(con, c.ranking(floors, True)))][:20]
            if sweep:
                grid = []
                points = [(b, c, floors[2]) for b in SWEEP_BM25 for c in SWEEP_COVERAGE]
                points += [(floors[0], floors[1], v) for v in SWEEP_SIMILARITY]
                for b, c, v in points:
                    row: dict[str, Any] = {"min_bm25": b, "min_coverage": c, "min_similarity": v}
                    for name, (cs, rel, _) in sets.items():
                        row[name] = evaluate(cs, con, (b, c, v), name, rel)
                    grid.append(row)
                result["sweep"] = grid
        finally:
            con.close()
    result["seconds"] = round(time.perf_counter() - t0, 1)
    return result


# --------------------------------------------------------------------------- report


def table(res: dict[str, Any]) -> str:
    lines = [f"{res['memories']} memories of {res['repo']}; prompts {res['prompts']}; foreign repositories "
             f"{', '.join(res['foreign_repos'])}; floors (min_bm25, min_coverage, min_similarity) = "
             f"{tuple(res['floors'])}; "
             f"{res['seconds']} s", "",
             "| prompts | method | injected per prompt before | after | prompts given any before | after |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name in ("foreign", "generic", "own", "paraphrases"):
        for m in ("hook", "hook+vectors"):
            b, a = res["before"][name][m], res["after"][name][m]
            lines.append(f"| {name} | {m} | {b['injected']:.2f} | {a['injected']:.2f} | {b['any']:.2f} | "
                         f"{a['any']:.2f} |")
    lines += ["", "| own prompts | method | recall@5 before | after | recall@10 before | after | nDCG@10 before | "
                  "after | recall injected before | after |", "| --- " * 10 + "|"]
    for m in ("hook", "hook+vectors"):
        b, a = res["before"]["own"][m], res["after"]["own"][m]
        lines.append(f"| own | {m} | " + " | ".join(f"{b[k]:.3f} | {a[k]:.3f}" for k in
                                                      ("recall@5", "recall@10", "ndcg@10", "in_injection")) + " |")
    b, a = res["before"]["paraphrases"]["hook+vectors"], res["after"]["paraphrases"]["hook+vectors"]
    lines.append(f"\nparaphrases injected (hook+vectors): before {b['in_injection']:.2f}, "
                 f"after {a['in_injection']:.2f}")
    if res.get("sweep"):
        lines += ["", "sweep (hook+vectors unless said): foreign injected/prompt, generic injected/prompt, own "
                      "recall@10 (hook), own recall@10, own recall injected, paraphrases injected",
                  "| min_bm25 | min_coverage | min_similarity | foreign (hook) | foreign | generic | own R@10 (hook) | "
                  "own R@10 | own injected | paraphrases |", "| --- " * 10 + "|"]
        for row in res["sweep"]:
            lines.append(f"| {row['min_bm25']} | {row['min_coverage']} | {row['min_similarity']} | "
                         f"{row['foreign']['hook']['injected']:.2f} | "
                         f"{row['foreign']['hook+vectors']['injected']:.2f} | "
                         f"{row['generic']['hook+vectors']['injected']:.2f} | {row['own']['hook']['recall@10']:.3f} | "
                         f"{row['own']['hook+vectors']['recall@10']:.3f} | "
                         f"{row['own']['hook+vectors']['in_injection']:.3f} | "
                         f"{row['paraphrases']['hook+vectors']['in_injection']:.2f} |")
    if res.get("still_injected"):
        lines += ["", "foreign prompts still given something (hook+vectors, first 20):"]
        for x in res["still_injected"]:
            lines.append(f"- {x['prompt']!r} → {x['titles']} (text scores {list(x['scores'].values())})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Memories the prompt hook injects for prompts that concern nothing "
                                             "in the store (target 0), before and after the relevance floors.")
    ap.add_argument("repo", help="the repository whose history is the store (only read)")
    ap.add_argument("--foreign", action="append", default=[], metavar="GIT_DIR",
                    help="another repository (git folder or work tree) whose commit subjects are the prompts")
    ap.add_argument("--per-repo", type=int, default=100, help="subjects drawn per foreign repository (default 100)")
    ap.add_argument("--held-out", type=int, default=40, help="last commits kept out of the store as own prompts")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sweep", action="store_true", help="also the figures for a grid of floors (calibration)")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of the tables")
    args = ap.parse_args(argv)
    res = run(args.repo, args.foreign, args.per_repo, args.held_out, args.seed, args.sweep)
    print(json.dumps(res, ensure_ascii=False, indent=2) if args.json else table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
