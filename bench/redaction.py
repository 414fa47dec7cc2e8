"""Redaction benchmark: recall on secret formats beyond the test corpus, false positives on real source.

Three figures, for one or more implementations of ``gitmem/capture/redact.py`` side by side (``--impl
LABEL=CHECKOUT``, e.g. ``before=/work/main after=.``; the module imports only the standard library, so
it is loaded straight from the checkout's file):

1. **Recall** on ``tests/fixtures/secret_formats.json`` (formats the unit-test corpus does not have,
   each with its format and public source): an entry is caught when its ``secret`` no longer occurs
   in ``redact_text(example)``. Reported overall and per class (``prefixed-token``, ``url-credential``,
   ``private-key-line``, ``named-high-entropy``); the missed kinds are listed.
2. **False positives per file** on the source files (``.py .js .mjs .cjs .ts .tsx .jsx .go``) of the
   repositories given with ``--repo``: a file is *changed* when ``redact_text(text) != text``. Every
   changed span is classified with Pygments' lexer for the file: *literal* when every character it
   replaced lies in a string, number or comment (where a real credential in source can live, e.g.
   ``password="pygmalion"`` in a test), *code* otherwise (``auth: [REDACTED:authorization]`` for a
   type annotation: a mangled program, always a false positive). ``--show`` prints each span.
3. **Speed**: ``redact_text`` on ~1 MB of the repositories' source (best of 5, after one warm-up),
   and on the largest single source file.

4. **Held-out recall** (``--trufflehog CLONE``): formats nobody looked at while writing the rules —
   TruffleHog's detector tests split by provider family (``bench/heldout_secrets.py`` says how), each
   secret in eight contexts (env export, Authorization header, X-API-Key header, ``curl -u``, JSON, YAML,
   prose naming the provider, a bare log line). The development families are reported too, and only
   the held-out families' aggregate (never a listing of their misses).
5. **False positives on prose** (``--prose REPO``): redaction markers added to a repository's own text —
   its Markdown files, every commit message and the patches of its last 200 commits (real text with no
   credential in it; a test fixture's fake secrets are in ``tests/``, left out of the patches).
6. **Cost on the hot path**: a fresh interpreter importing the module, against ``python -c pass``
   (median of 7), and one ``redact_text`` of a typical shell tool event (median of 200 calls).

``--detect-secrets-python PYTHON`` adds Yelp's detect-secrets (installed for that interpreter, not for gitmem)
as a column for 4-6 (``bench/detect_secrets_probe.py``): a text's secret is caught when the values it
reports cover it.

    python bench/redaction.py --impl before=/work/main --impl after=. --repo /tmp/redact-repos/requests \
        [--repo …] [--corpus tests/fixtures/secret_formats.json] [--show] [--json] \
        [--trufflehog /tmp/trufflehog] [--prose .] [--detect-secrets-python /tmp/ds-venv/bin/python]

The repositories are only read (``git ls-files`` picks the files; nothing is written).
"""

from __future__ import annotations

import argparse
import bisect
import importlib.util
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE.parent / "tests" / "fixtures" / "secret_formats.json"
SOURCE_EXTS = (".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".go")
CLASSES = ("prefixed-token", "url-credential", "private-key-line", "named-high-entropy")


def load_impl(checkout: Path, label: str) -> ModuleType:
    """The ``redact`` module of a gitmem checkout, loaded from its file under a private name."""
    path = checkout / "gitmem" / "capture" / "redact.py"
    spec = importlib.util.spec_from_file_location(f"_redact_{label}", path)
    assert spec and spec.loader, path
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def recall(redact: Callable[[str], str], corpus: list[dict]) -> dict:
    """{"caught", "total", "per_class": {class: [caught, total]}, "missed": [kind, …]}."""
    per: dict[str, list[int]] = {c: [0, 0] for c in CLASSES}
    missed = []
    for e in corpus:
        ok = e["secret"] not in redact(e["example"])
        per.setdefault(e["class"], [0, 0])
        per[e["class"]][0] += ok
        per[e["class"]][1] += 1
        if not ok:
            missed.append(e["kind"])
    return {"caught": sum(v[0] for v in per.values()), "total": len(corpus), "per_class": per, "missed": missed}


def source_files(repo: Path) -> list[Path]:
    """Tracked files of ``repo`` with a source extension, sorted; built bundles (a ``dist/`` folder,
    ``*.min.*``) are left out: they are generated, not written."""
    out = subprocess.run(["git", "-C", str(repo), "ls-files", "-z"], capture_output=True, check=True).stdout
    return sorted(repo / p for p in out.decode().split("\0")
                  if p.endswith(SOURCE_EXTS) and ".min." not in p and not p.startswith("dist/") and "/dist/" not in p)


def literal_mask(path: Path, text: str) -> tuple[list[int], list[bool]]:
    """(token start offsets, is-string-or-comment per token) from Pygments' lexer for ``path``."""
    from pygments.lexers import get_lexer_for_filename
    from pygments.token import Comment, Number, String

    lexer = get_lexer_for_filename(path.name, stripnl=False, ensurenl=False, stripall=False)
    starts, lit = [], []
    for i, tok, _ in lexer.get_tokens_unprocessed(text):
        starts.append(i)
        lit.append(tok in String or tok in Comment or tok in Number)
    return starts, lit


MARKER = re.compile(r"(\[(?:REDACTED(?::[a-z0-9-]+)?|PRIVATE)\])")


def replaced_spans(text: str, out: str) -> list[tuple[int, int, str]]:
    """(start, end, marker) in ``text`` for each marker in ``out``.

    Redaction only replaces spans with markers and keeps everything else byte for byte, so the
    pieces of ``out`` between markers are found in ``text`` in order (each at its first
    occurrence after the previous one; the last piece is the suffix); adjacent markers are one span.
    """
    parts = MARKER.split(out)
    pos = len(parts[0])
    spans = []
    i = 1
    while i < len(parts):
        marker = parts[i]
        piece = parts[i + 1]
        while not piece and i + 2 < len(parts):      # two markers in a row: one span
            i += 2
            marker += parts[i]
            piece = parts[i + 1]
        if i + 2 >= len(parts):
            end = len(text) - len(piece)
        else:
            end = text.find(piece, pos + 1)
            if end < 0:
                end = len(text) - len(piece)
        spans.append((pos, max(pos, end), marker))
        pos = max(pos, end) + len(piece)
        i += 2
    return spans


def classify(path: Path, text: str, spans: list[tuple[int, int, str]]) -> list[str]:
    """"literal" or "code" for each span (see the module docstring)."""
    starts, lit = literal_mask(path, text)
    kinds = []
    for s, e, _ in spans:
        if e == s:                       # an insertion: judge the token it lands in
            e = s + 1
        k = max(0, bisect.bisect_right(starts, s) - 1)
        ok = True
        while k < len(starts) and starts[k] < e:
            if not lit[k]:
                ok = False
                break
            k += 1
        kinds.append("literal" if ok else "code")
    return kinds


def false_positives(redact: Callable[[str], str], repos: list[Path], show: bool, label: str) -> dict:
    """Per repository: files, changed files, files with a code change, and span counts."""
    result = {}
    for repo in repos:
        files = source_files(repo)
        changed = code_files = lit_spans = code_spans = 0
        for f in files:
            text = f.read_text(encoding="utf-8", errors="replace")
            out = redact(text)
            if out == text:
                continue
            changed += 1
            spans = replaced_spans(text, out)
            kinds = classify(f, text, spans)
            code_files += "code" in kinds
            code_spans += kinds.count("code")
            lit_spans += kinds.count("literal")
            if show:
                for (s, e, new), k in zip(spans, kinds, strict=True):
                    line = text.count("\n", 0, s) + 1
                    old = (text[max(0, s - 40):s] + "⟦" + text[s:e][:80] + "⟧" + text[e:e + 15]).replace("\n", "⏎")
                    print(f"[{label}] {k:7} {repo.name}/{f.relative_to(repo)}:{line}: {old!r} -> {new}")
        result[repo.name] = {"files": len(files), "changed": changed, "code_files": code_files,
                             "literal_spans": lit_spans, "code_spans": code_spans}
    return result


def speed(redact: Callable[[str], str], repos: list[Path]) -> dict:
    """Seconds for ``redact`` on ~1 MB of source and on the largest source file (best of 5)."""
    texts = [f.read_text(encoding="utf-8", errors="replace") for r in repos for f in source_files(r)]
    if not texts:
        return {}
    big = "".join(texts)
    big = (big * (1 + 1_000_000 // max(1, len(big))))[:1_000_000]
    largest = max(texts, key=len)

    def best(t: str) -> float:
        redact(t)
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            redact(t)
            times.append(time.perf_counter() - t0)
        return min(times)

    return {"mb_s": best(big), "largest_chars": len(largest), "largest_s": best(largest)}


#: A typical shell tool event as the PostToolUse hook redacts it (command, output), ~1.5 KB.
EVENT = ("$ pytest -q tests/test_api.py -x\n" + "".join(
    f"tests/test_api.py::test_case_{i} PASSED [{i * 3}%] in 0.0{i}s (src/api/handlers.py:{i * 17})\n"
    for i in range(20)) + "export API_BASE=https://api.example.com/v1 && curl -s $API_BASE/health\n")


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def hot_path_cost(checkout: Path) -> dict:
    """{"import_ms": a fresh interpreter importing ``redact.py`` minus ``python -c pass`` (median of 7),
    "call_us": one ``redact_text(EVENT)``, median of 200, after one warm-up}."""
    path = checkout / "gitmem" / "capture" / "redact.py"
    load = (f"import importlib.util as u; s = u.spec_from_file_location('r', {str(path)!r}); "
            "m = u.module_from_spec(s); s.loader.exec_module(m)")
    base, imp = [], []
    for _ in range(7):
        for argv, out in ((["-c", "pass"], base), (["-c", load], imp)):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, *argv], check=True)
            out.append(time.perf_counter() - t0)
    mod = load_impl(checkout, f"cost_{abs(hash(str(checkout)))}")
    mod.redact_text(EVENT)
    calls = []
    for _ in range(200):
        t0 = time.perf_counter()
        mod.redact_text(EVENT)
        calls.append(time.perf_counter() - t0)
    return {"import_ms": (_median(imp) - _median(base)) * 1000, "call_us": _median(calls) * 1e6}


def prose_texts(repo: Path) -> list[str]:
    """A repository's own prose: Markdown files, every commit message, the last 200 commits' patches
    (``tests/``, ``bench/`` and the redactor itself left out: they hold fake secrets on purpose)."""
    def git(*a: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *a], capture_output=True, text=True, check=True).stdout

    texts = [(repo / f).read_text(encoding="utf-8", errors="replace") for f in git("ls-files", "*.md").split()]
    texts.append(git("log", "--format=%B"))
    texts.append(git("log", "-p", "-n", "200", "--", ".", ":(exclude)tests", ":(exclude)bench",
                     ":(exclude)gitmem/capture/redact.py"))
    return texts


_MARKERS = re.compile(r"\[(?:REDACTED(?::[a-z0-9-]+)?|PRIVATE)\]")


def detect_secrets_run(python: str, texts: list[str]) -> dict:
    """``bench/detect_secrets_probe.py`` under ``python`` on ``texts``: its JSON answer."""
    proc = subprocess.run([python, str(HERE / "detect_secrets_probe.py")], input=json.dumps(texts),
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def _covering(found: list[str]) -> Callable[[str], str]:
    """A redactor that removes the values detect-secrets reported (longest first)."""
    def redact(text: str) -> str:
        for v in sorted(found, key=len, reverse=True):
            text = text.replace(v, "[REDACTED]")
        return text
    return redact


def heldout_report(redactors: dict[str, Callable[[str], str]], clone: Path, ds_python: str | None) -> dict:
    """{label: {"dev": [caught, total], "held_out": [caught, total], "held_out_per_context": {…}}}."""
    import heldout_secrets as h

    fams = h.families(clone)
    split = {"dev": {f: v for f, v in fams.items() if not h.held_out(f)},
             "held_out": {f: v for f, v in fams.items() if h.held_out(f)}}
    out: dict = {"_families": {k: [len(v), sum(map(len, v.values()))] for k, v in split.items()}}
    for label, redact in redactors.items():
        row: dict = {}
        for part, fs in split.items():
            r = h.score(redact, fs)
            row[part] = [r["caught"], r["total"]]
            if part == "held_out":
                row["held_out_per_context"] = r["per_context"]
        out[label] = row
    if ds_python:
        row = {}
        for part, fs in split.items():
            texts = [(t.format(s=s, f=f, F=f.upper()), s) for f, ss in sorted(fs.items()) for s in ss
                     for _, t in h.CONTEXTS]
            found = detect_secrets_run(ds_python, [t for t, _ in texts])["found"]
            caught = sum(not h.leaked(s, _covering(fv)(t)) for (t, s), fv in zip(texts, found, strict=True))
            row[part] = [caught, len(texts)]
            if part == "held_out":
                per: dict[str, list[int]] = {name: [0, 0] for name, _ in h.CONTEXTS}
                for i, ((t, s), fv) in enumerate(zip(texts, found, strict=True)):
                    name = h.CONTEXTS[i % len(h.CONTEXTS)][0]
                    per[name][1] += 1
                    per[name][0] += not h.leaked(s, _covering(fv)(t))
                row["held_out_per_context"] = per
        out["detect-secrets"] = row
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--impl", action="append", default=[], metavar="LABEL=CHECKOUT",
                    help="a gitmem checkout whose redact.py to measure (repeatable; default: this one)")
    ap.add_argument("--repo", action="append", default=[], type=Path, help="a git repository (repeatable)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--show", action="store_true", help="print every changed span")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--trufflehog", type=Path, help="a TruffleHog clone: recall on held-out provider families")
    ap.add_argument("--prose", type=Path, action="append", default=[],
                    help="a repository whose own prose (Markdown, commit messages, patches) counts false positives")
    ap.add_argument("--detect-secrets-python", dest="ds", metavar="PYTHON",
                    help="an interpreter with detect-secrets installed: measured as a column too")
    args = ap.parse_args(argv)
    impls = [tuple(s.split("=", 1)) for s in args.impl] or [("this", str(HERE.parent))]
    corpus = json.loads(args.corpus.read_text(encoding="utf-8"))
    sys.path.insert(0, str(HERE))
    report = {}
    for label, checkout in impls:
        mod = load_impl(Path(checkout).resolve(), label)
        report[label] = {"recall": recall(mod.redact_text, corpus),
                         "false_positives": false_positives(mod.redact_text, args.repo, args.show, label),
                         "speed": speed(mod.redact_text, args.repo)}
    mods = {label: load_impl(Path(checkout).resolve(), f"{label}_x") for label, checkout in impls}
    extra: dict = {"cost": {label: hot_path_cost(Path(checkout).resolve()) for label, checkout in impls}}
    prose = [t for repo in args.prose for t in prose_texts(repo)]
    if prose:
        extra["prose"] = {label: sum(len(_MARKERS.findall(m.redact_text(t))) - len(_MARKERS.findall(t)) for t in prose)
                          for label, m in mods.items()}
        extra["prose_chars"] = sum(map(len, prose))
    if args.trufflehog:
        extra["heldout"] = heldout_report({label: m.redact_text for label, m in mods.items()}, args.trufflehog,
                                          args.ds)
    if args.ds:
        ds_event = detect_secrets_run(args.ds, [EVENT] * 200)
        extra["cost"]["detect-secrets"] = {"import_ms": ds_event["import_s"] * 1000,
                                           "call_us": ds_event["texts_s"] / 200 * 1e6}
        if prose:
            extra["prose"]["detect-secrets"] = sum(map(len, detect_secrets_run(args.ds, prose)["found"]))
    if args.json:
        print(json.dumps({**report, "_extra": extra}, indent=1))
        return 0
    labels = list(report)
    col = max(14, *(len(x) + 2 for x in labels))

    def row(name: str, cells: list[str]) -> None:
        print(f"{name:34}" + "".join(f"{c:>{col}}" for c in cells))

    row("", labels)
    row("recall (new formats)", [f"{r['recall']['caught']}/{r['recall']['total']}" for r in report.values()])
    for c in CLASSES:
        row(f"  {c}", [f"{r['recall']['per_class'].get(c, [0, 0])[0]}/{r['recall']['per_class'].get(c, [0, 0])[1]}"
                       for r in report.values()])
    for repo in args.repo:
        n = repo.name
        row(f"{n}: files changed / code-mangled",
            [f"{r['false_positives'][n]['changed']}/{r['false_positives'][n]['code_files']}" for r in report.values()])
    if args.repo:
        tot = [(sum(v["changed"] for v in r["false_positives"].values()),
                sum(v["code_files"] for v in r["false_positives"].values()),
                sum(v["files"] for v in r["false_positives"].values())) for r in report.values()]
        row("all: changed / code-mangled / files", [f"{a}/{b}/{c}" for a, b, c in tot])
        row("all: spans literal / code", [
            f"{sum(v['literal_spans'] for v in r['false_positives'].values())}/"
            f"{sum(v['code_spans'] for v in r['false_positives'].values())}" for r in report.values()])
        row("speed: 1 MB of source (ms)", [f"{r['speed']['mb_s'] * 1000:.1f}" for r in report.values()])
        row("speed: largest file (ms)", [f"{r['speed']['largest_s'] * 1000:.1f}" for r in report.values()])
    cols = labels + (["detect-secrets"] if args.ds else [])
    print()
    row("", cols)
    row("import, fresh process (ms)", [f"{extra['cost'][c]['import_ms']:.1f}" for c in cols])
    row("one shell event (µs)", [f"{extra['cost'][c]['call_us']:.0f}" for c in cols])
    if prose:
        row(f"prose markers ({extra['prose_chars'] // 1000} K chars)", [str(extra["prose"][c]) for c in cols])
    if args.trufflehog:
        ho = extra["heldout"]
        print(f"TruffleHog families: development {ho['_families']['dev'][0]} ({ho['_families']['dev'][1]} secrets), "
              f"held out {ho['_families']['held_out'][0]} ({ho['_families']['held_out'][1]} secrets)")
        row("recall, development families", [f"{ho[c]['dev'][0]}/{ho[c]['dev'][1]}" for c in cols])
        row("recall, HELD-OUT families", [f"{ho[c]['held_out'][0]}/{ho[c]['held_out'][1]}" for c in cols])
        for name in ho[cols[0]]["held_out_per_context"]:
            row(f"  held out: {name}", [f"{ho[c]['held_out_per_context'][name][0]}/"
                                        f"{ho[c]['held_out_per_context'][name][1]}" for c in cols])
    for label, r in report.items():
        if r["recall"]["missed"]:
            print(f"missed [{label}]: {' '.join(r['recall']['missed'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
