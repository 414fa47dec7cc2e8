"""Oracles for documents and definition files, built on parsers that are not tree-sitter.

* **Markdown** (``markdown``) with ``markdown-it-py`` (a CommonMark parser): every ATX / setext heading outside
  lists and block quotes is a section named by its plain text (markup dropped, link text kept; quoted
  ``(v1.2 {beta})`` when it holds a ``.``, a bracket or a trailing ``#N``, as gitmem's ``quote_name_part``
  does), nested under the headings above it (``Deploy.Rollback``; a document title, the first heading and the
  only one of level 1, is left out of the names under it), repeats numbered ``#2``; a section runs
  to the next heading of the same or a higher level, its sub-sections included. Content: the section's
  blocks rendered to HTML by markdown-it (so emphasis written ``*x*`` or ``_x_``, a list bulleted ``-`` or
  ``*``, wrapped paragraphs, a tight or a loose list all render alike) with HTML comments dropped and
  whitespace collapsed (none around tags); the
  heading's level is part of it, its own text is not (that is the name).
* **SQL** (``sql``) with ``sqlglot`` (PostgreSQL dialect): every ``CREATE TABLE / VIEW / MATERIALIZED VIEW /
  FUNCTION / PROCEDURE / INDEX / TRIGGER / TYPE`` statement, and a table's columns (``orders.status``).
  Statements sqlglot parses are rendered by ``sqlglot`` without comments; the ones it keeps as an opaque
  ``Command`` (most PostgreSQL extension DDL: ``LANGUAGE C`` functions, ``CREATE TYPE x (INPUT = ...)``) are
  compared as sqlglot's token stream (comments and whitespace dropped). Overloaded functions are named by
  their argument types (``l2_distance(vector,vector)``); the plain name is given only when it is unique.
* **Dockerfile** (``dockerfile``) with ``dockerfile-parse``: every ``FROM`` starts a stage named by its
  ``AS`` name, else ``stage#N`` (N: the stage's 1-based position among all stages). Content: the stage's
  instructions (``FROM`` included, comments dropped, line continuations joined, whitespace collapsed).
* **HCL / Terraform** (``hcl``, ``terraform``) with ``python-hcl2``: ``resource`` blocks as ``TYPE.NAME``,
  ``data`` as ``data.TYPE.NAME``, ``module.NAME``, ``var.NAME``, ``output.NAME``, ``provider.NAME``, each
  ``locals`` entry as ``local.NAME``. Content: the block's body as python-hcl2 reads it, serialised as JSON
  with keys sorted (comments and layout gone; expressions as python-hcl2 prints them).
* **Make** (``make``): no maintained Python parser of Makefiles exists (PyPI's are abandoned or partial), so
  the oracle is GNU make itself: ``make -p`` prints its rule database after reading the file; each explicit
  target's prerequisites and recipe are its content. The file is read in an empty temporary directory with
  ``-n`` and ``SHELL=/bin/echo`` on the command line, so no recipe runs and a ``$(shell ...)`` only echoes
  its command (non-empty, so ``ifneq (, $(shell docker buildx version))`` takes the branch a developer's
  machine would rather than an ``$(error ...)`` one). A file make refuses is a ``parse-error``.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.oracles import ORACLES

_WS = re.compile(r"\s+")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_TAG_SPACE = re.compile(r"\s*(<[^>]+>)\s*")
#: Free text that needs quoting in a name part (gitmem.textsplit.quote_name_part on i22-formats: a ``.``, a
#: bracket or a trailing ``#<digits>``); quoted as ``(...)`` with its own brackets written as braces.
_MD_SPECIAL = re.compile(r"[.()\[\]<>]|#\d+$")
_MD_BRACKETS = str.maketrans("([<)]>", "{{{}}}")
#: Name of a heading with no text (as gitmem names it).
_UNTITLED = "untitled"


def _collapse(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _md_part(text: str) -> str:
    """A heading's plain text as one part of a section name (quoted as gitmem quotes free text)."""
    text = _collapse(text) or _UNTITLED
    return text if not _MD_SPECIAL.search(text) else "(" + text.translate(_MD_BRACKETS) + ")"


def _plain(inline: Any) -> str:
    """The plain text of a heading's inline token: markup and HTML tags dropped, link and image text kept."""
    parts = []
    for child in inline.children or []:
        if child.type in ("text", "code_inline", "image"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts)


def _numbered(names: list[str]) -> list[str]:
    """Repeated names get ``#2``, ``#3`` ... in source order (the first keeps the plain name)."""
    seen: dict[str, int] = defaultdict(int)
    out = []
    for n in names:
        seen[n] += 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out


class MarkdownOracle:
    name = "markdown-it-py"
    languages = frozenset({"markdown"})

    def available(self) -> str | None:
        try:
            import markdown_it  # noqa: F401
        except ImportError:
            return "markdown-it-py is not installed (pip install -e '.[bench]')"
        return None

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        from markdown_it import MarkdownIt

        md = MarkdownIt("commonmark")
        tokens = md.parse(source.decode("utf-8", "replace"))
        heads: list[tuple[int, int, str]] = []  # (token index, level, text)
        for i, tok in enumerate(tokens):
            if tok.type == "heading_open" and tok.level == 0:  # not in a list item or a block quote
                heads.append((i, int(tok.tag[1:]), _plain(tokens[i + 1])))
        names: list[str] = []
        stack: list[tuple[int, str]] = []
        # a document title (the first heading, the only one of level 1) is not part of the names under it
        title = bool(heads) and heads[0][1] == 1 and sum(1 for h in heads if h[1] == 1) == 1
        for k, (_, level, text) in enumerate(heads):
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, _md_part(text)))
            names.append(".".join(part for j, (_, part) in enumerate(stack) if not (title and k > 0 and j == 0)))
        out: dict[str, str] = {}
        for k, name in enumerate(_numbered(names)):
            start, level, _ = heads[k]
            end = len(tokens)
            for j in range(k + 1, len(heads)):
                if heads[j][1] <= level:
                    end = heads[j][0]
                    break
            body = tokens[start + 3:end]  # heading_open, inline, heading_close
            for tok in body:  # a tight and a loose list (blank lines between items) say the same: no <p> in items
                if tok.type in ("paragraph_open", "paragraph_close") and tok.level > 0:
                    tok.hidden = True
            html = md.renderer.render(body, md.options, {})
            out[name] = f"h{level} " + _TAG_SPACE.sub(r"\1", _collapse(_HTML_COMMENT.sub("", html)))
        return out


_SQL_KINDS = {"TABLE", "VIEW", "FUNCTION", "PROCEDURE", "INDEX", "TRIGGER", "TYPE"}


class SqlOracle:
    name = "sqlglot"
    languages = frozenset({"sql"})

    def available(self) -> str | None:
        try:
            import sqlglot  # noqa: F401
        except ImportError:
            return "sqlglot is not installed (pip install -e '.[bench]')"
        return None

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        import sqlglot
        from sqlglot import exp
        from sqlglot.dialects.postgres import Postgres
        from sqlglot.tokens import TokenType

        logging.getLogger("sqlglot").setLevel(logging.ERROR)  # each Command fallback logs a warning
        # psql meta-commands (``\\echo ... \\quit`` heading an extension script) are not SQL and end at the line
        lines = source.decode("utf-8", "replace").split("\n")
        text = "\n".join("" if ln.lstrip().startswith("\\") else ln for ln in lines)
        tokens = Postgres().tokenize(text)
        statements: list[list[Any]] = [[]]
        for tok in tokens:
            if tok.token_type == TokenType.SEMICOLON:
                statements.append([])
            else:
                statements[-1].append(tok)
        defs: list[tuple[str, str | None, str]] = []  # (base name, argument types or None, content)
        columns: dict[str, str] = {}
        tables: dict[str, int] = defaultdict(int)
        for stmt in statements:
            if not stmt or stmt[0].text.upper() != "CREATE":
                continue
            # PostgreSQL folds unquoted identifiers to lower case (gitmem names them so); quoted ones keep theirs
            # (a keyword token such as VECTOR may be a name too: every unquoted token is folded)
            texts = [t.text if t.token_type in (TokenType.IDENTIFIER, TokenType.STRING) else t.text.lower()
                     for t in stmt[1:]]
            got = _create_def(texts)
            if got is None:
                continue
            defs.append(got)
            tables[got[0]] += 1
            table_name = got[0] if tables[got[0]] == 1 else f"{got[0]}#{tables[got[0]]}"
            if got[1] is None and "table" in texts[:4]:
                sql = " ".join(t.text if t.token_type != TokenType.STRING else "'" + t.text.replace("'", "''") + "'"
                               for t in stmt)
                try:  # tables parse well in sqlglot; its column definitions give the columns
                    tree = sqlglot.parse_one(sql, read="postgres")
                except sqlglot.errors.SqlglotError:
                    continue
                if isinstance(tree, exp.Create) and isinstance(tree.this, exp.Schema):
                    for col in tree.this.expressions:
                        if isinstance(col, exp.ColumnDef):
                            columns[f"{table_name}.{col.name.lower()}"] = col.sql(dialect="postgres", comments=False)
        out: dict[str, str] = {}
        counts: dict[str, int] = defaultdict(int)
        for base, _, _ in defs:
            counts[base] += 1
        seen: dict[str, int] = defaultdict(int)
        for base, args, content in defs:
            seen[base] += 1
            if args is not None:
                out.setdefault(f"{base}({args})", content)
                out.setdefault(f"{base}({args.replace(',', ', ')})", content)
            if counts[base] == 1:
                out[base] = content
            else:  # one name defined several times (a shell type, the type, a cast function): numbered in order
                out.setdefault(base if seen[base] == 1 else f"{base}#{seen[base]}", content)
        for name, content in columns.items():
            out.setdefault(name, content)
        return out


def _create_def(toks: list[str]) -> tuple[str, str | None, str] | None:
    """(name, argument types, token content) of a ``CREATE ...`` statement's tokens (after ``CREATE``)."""
    upper = [t.upper() for t in toks]
    i = 0
    if upper[:2] == ["OR", "REPLACE"]:
        i = 2
    while i < len(upper) and upper[i] in {"UNIQUE", "MATERIALIZED", "TEMP", "TEMPORARY", "UNLOGGED", "CONSTRAINT"}:
        i += 1
    if i >= len(upper) or upper[i] not in _SQL_KINDS:
        return None
    kind = upper[i]
    i += 1
    if upper[i:i + 3] == ["IF", "NOT", "EXISTS"]:
        i += 3
    if upper[i:i + 1] == ["CONCURRENTLY"]:
        i += 1
    if i >= len(toks) or (kind == "INDEX" and upper[i] == "ON"):
        return None
    name = toks[i]
    while i + 2 < len(toks) and toks[i + 1] == ".":  # schema.name: keep the last part
        i += 2
        name = toks[i]
    args = None
    if kind in {"FUNCTION", "PROCEDURE"} and i + 1 < len(toks) and toks[i + 1] == "(":
        depth, j, parts, cur = 0, i + 1, [], []
        while j < len(toks):
            if toks[j] == "(":
                depth += 1
                if depth == 1:
                    j += 1
                    continue
            elif toks[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            if toks[j] == "," and depth == 1:
                parts.append(cur)
                cur = []
            else:
                cur.append(toks[j])
            j += 1
        if cur:
            parts.append(cur)
        args = ",".join(" ".join(p).replace(" [ ]", "[]").replace("[ ]", "[]").lower() for p in parts)
    return name, args, " ".join(toks)


class DockerfileOracle:
    name = "dockerfile-parse"
    languages = frozenset({"dockerfile"})

    def available(self) -> str | None:
        try:
            import dockerfile_parse  # noqa: F401
        except ImportError:
            return "dockerfile-parse is not installed (pip install -e '.[bench]')"
        return None

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        from dockerfile_parse import DockerfileParser

        with tempfile.TemporaryDirectory(prefix="gitmem-oracle-") as tmp:
            parser = DockerfileParser(path=tmp, env_replace=False)
            parser.content = source.decode("utf-8", "replace")
            structure: list[dict[str, Any]] = parser.structure
        stages: list[tuple[str, list[str]]] = []
        for ins in structure:
            kind = str(ins["instruction"]).upper()
            if kind == "COMMENT":
                continue
            value = _collapse(str(ins["value"]))
            if kind == "FROM":
                words = value.split()
                # an alias is compared lower-cased by Docker (and named so by gitmem)
                named = len(words) >= 3 and words[-2].upper() == "AS"
                name = words[-1].lower() if named else f"stage#{len(stages) + 1}"
                stages.append((name, []))
            if stages:
                stages[-1][1].append(f"{kind} {value}")
        out: dict[str, str] = {}
        for name, lines in stages:
            out.setdefault(name, "\n".join(lines))
        return out


class HclOracle:
    name = "python-hcl2"
    languages = frozenset({"hcl", "terraform"})

    def available(self) -> str | None:
        try:
            import hcl2  # noqa: F401
        except ImportError:
            return "python-hcl2 is not installed (pip install -e '.[bench]')"
        return None

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        import hcl2
        from hcl2.utils import SerializationOptions

        options = SerializationOptions(with_comments=False, preserve_heredocs=False)
        raw: dict[str, Any] = hcl2.loads(source.decode("utf-8", "replace"), serialization_options=options)
        doc = _unquote_labels(raw)
        out: dict[str, str] = {}

        seen: dict[str, int] = defaultdict(int)

        def put(name: str, body: Any) -> None:
            seen[name] += 1  # a repeat (a second provider "aws" with an alias) is numbered, as gitmem does
            out[name if seen[name] == 1 else f"{name}#{seen[name]}"] = json.dumps(body, sort_keys=True, default=str)

        for block in doc.get("resource", []):
            for rtype, named in block.items():
                for rname, body in named.items():
                    put(f"{rtype}.{rname}", body)
        for block in doc.get("data", []):
            for rtype, named in block.items():
                for rname, body in named.items():
                    put(f"data.{rtype}.{rname}", body)
        for prefix, key in (("module", "module"), ("var", "variable"), ("output", "output"),
                            ("provider", "provider")):
            for block in doc.get(key, []):
                for bname, body in block.items():
                    put(f"{prefix}.{bname}", body)
        for block in doc.get("terraform", []):  # the settings block (no labels): named ``terraform`` by gitmem
            put("terraform", block)
        for block in doc.get("locals", []):
            for lname, value in block.items():
                put(f"local.{lname}", value)
        return out


def _unquote_labels(value: Any) -> Any:
    """python-hcl2 8 keeps block labels quoted (``"aws_vpc"``): unquote every mapping key."""
    if isinstance(value, dict):
        return {str(k).strip('"'): _unquote_labels(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unquote_labels(v) for v in value]
    return value


_MAKE_RULE = re.compile(r"^([^\s#:=][^:=]*?):(?!=)(.*)$")


class MakeOracle:
    name = "gnu-make"
    languages = frozenset({"make"})

    def available(self) -> str | None:
        return None if shutil.which("make") else "GNU make is not on PATH"

    def symbols(self, source: bytes, path: str) -> dict[str, str]:
        with tempfile.TemporaryDirectory(prefix="gitmem-oracle-") as tmp:
            mk = Path(tmp) / "Makefile"
            mk.write_bytes(source)
            proc = subprocess.run(
                ["make", "-p", "-n", "-r", "-R", "-f", "Makefile", "SHELL=/bin/echo", ".gitmem-oracle-none"],
                cwd=tmp, capture_output=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": tmp})
        text = proc.stdout.decode("utf-8", "replace")
        err = proc.stderr.decode("utf-8", "replace")
        if any("***" in ln and "No rule to make target" not in ln for ln in err.splitlines()):
            # make stopped reading the file ($(error ...) on a missing tool): its database is not the file's
            raise ValueError(f"make stopped: {err.strip()[:200]}")
        if "# Files" not in text:
            raise ValueError(f"make printed no database: {proc.stderr.decode('utf-8', 'replace')[:200]}")
        section = text.split("# Files", 1)[1].split("# files hash-table stats", 1)[0]
        out: dict[str, str] = {}
        for para in section.split("\n\n"):
            lines = para.strip("\n").splitlines()
            if not lines or "# Not a target:" in lines[0]:
                continue
            head = next((i for i, ln in enumerate(lines) if not ln.startswith("#")), None)
            if head is None:
                continue
            m = _MAKE_RULE.match(lines[head])
            if not m or m.group(1).startswith(".") or "%" in m.group(1):
                continue
            # a recipe line of only blanks (a stray tab) runs nothing: formatting
            recipe = [ln for ln in lines[head + 1:] if ln.startswith("\t") and ln.strip()]
            prereqs = _collapse(m.group(2).lstrip(":"))
            for target in m.group(1).split():
                out[_md_part(target)] = prereqs + "\n" + "\n".join(_collapse(r) for r in recipe)
        return out


ORACLES.extend([MarkdownOracle(), SqlOracle(), DockerfileOracle(), HclOracle(), MakeOracle()])
