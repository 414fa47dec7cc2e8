"""Markdown sections, SQL definitions, Dockerfile stages, Terraform/HCL blocks and Makefile targets:
names, kinds, spans, fingerprints that ignore formatting, and staleness through the CLI on real git repositories.

Real tree-sitter grammars (tree-sitter-language-pack's markdown, sql, dockerfile, terraform, hcl, make).
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from gitmem.anchors import Resolver
from gitmem.code import symbols as S
from gitmem.code.languages import language_for_path
from gitmem.code.specs import written_symbol
from gitmem.code.symbols import extract_symbols, file_fingerprint, set_cache_dir
from gitmem.git import Repo
from gitmem.model import Status, Symbol
from gitmem.textsplit import name_base, name_leaf, name_parts, quote_name_part
from testing.repos import commit, git, make_repo


@pytest.fixture(autouse=True)
def _fresh_caches():
    set_cache_dir(None)
    S.clear_memory_cache()
    yield
    set_cache_dir(None)
    S.clear_memory_cache()


def table(src: str, language: str) -> dict[str, Symbol]:
    return extract_symbols(textwrap.dedent(src).encode(), language)


def spans(tab: dict[str, Symbol]) -> dict[str, tuple[str, int, int]]:
    return {n: (s.kind, s.start_line, s.end_line) for n, s in tab.items()}


@pytest.mark.parametrize("path, language", [
    ("README.md", "markdown"), ("docs/a.markdown", "markdown"), ("db/001_init.sql", "sql"),
    ("Dockerfile", "dockerfile"), ("containerfile", "dockerfile"), ("Dockerfile.dev", "dockerfile"),
    ("build/app.dockerfile", "dockerfile"), ("Dockerfile.md", "markdown"),
    ("main.tf", "terraform"), ("prod.tfvars", "terraform"), ("build.pkr.hcl", "hcl"), ("job.hcl", "hcl"),
    ("Makefile", "make"), ("GNUmakefile", "make"), ("makefile", "make"), ("rules.mk", "make"),
    ("Makefile.am", None), ("dockerfile-notes.txt", None),
])
def test_file_names(path, language):
    assert language_for_path(path) == language


@pytest.mark.parametrize("text, quoted", [
    ("Rollback", "Rollback"), ("Getting started", "Getting started"), ("v1.2 (beta)", "(v1.2 {beta})"),
    ("%.o", "(%.o)"), ("Issue #12", "(Issue #12)"), ("a -> b", "(a -} b)"), ("[x] y", "({x} y)"),
    ("C# notes", "C# notes"),
])
def test_quoted_name_parts_survive_name_base_and_leaf(text, quoted):
    assert quote_name_part(text) == quoted
    for name in (quoted, f"Deploy.{quoted}", f"Deploy#2.{quoted}"):
        assert name_parts(name)[-1] == quoted
        assert name_base(name) == name and name_leaf(name) == quoted
        assert name_base(name + "#3") == name


# --------------------------------------------------------------------------- Markdown

MD = """\
---
title: front matter
---
Intro before any heading.

# Deploy

Run the *deploy* job.

## Rollback ##

1. Revert the release.
2. Run `make deploy`.

### Checks

- dashboards
- alerts

Notes
-----

Setext heading, level 2.

## v1.2 (beta) **notes**

Text.

## Rollback

Second rollback section.

# [Links](http://x) and `code`

The end.
"""


def test_markdown_sections_names_kinds_spans():
    assert spans(table(MD, "markdown")) == {
        "Deploy": ("section", 6, 31),
        "Deploy.Rollback": ("section", 10, 18),
        "Deploy.Rollback.Checks": ("section", 15, 18),
        "Deploy.Notes": ("section", 20, 23),
        "Deploy.(v1.2 {beta} notes)": ("section", 25, 27),
        "Deploy.Rollback#2": ("section", 29, 31),
        "Links and code": ("section", 33, 35),
    }


def test_markdown_document_title_is_not_part_of_the_names_under_it():
    src = "# Runbook\n\nIntro.\n\n## Deploy\n\nText.\n\n### Rollback\n\nSteps.\n\n## Deploy\n\nAgain.\n"
    assert spans(table(src, "markdown")) == {
        "Runbook": ("section", 1, 15), "Deploy": ("section", 5, 11), "Deploy.Rollback": ("section", 9, 11),
        "Deploy#2": ("section", 13, 15)}
    setext = "Runbook\n=======\n\n## Deploy\n\nText.\n"
    assert list(table(setext, "markdown")) == ["Runbook", "Deploy"]
    second_h1 = src + "\n# Appendix\n\nMore.\n"
    assert list(table(second_h1, "markdown")) == ["Runbook", "Runbook.Deploy", "Runbook.Deploy.Rollback",
                                                  "Runbook.Deploy#2", "Appendix"]
    starts_lower = "## Deploy\n\nText.\n\n# Runbook\n\n## Deploy\n"
    assert list(table(starts_lower, "markdown")) == ["Deploy", "Runbook", "Runbook.Deploy"]


def test_markdown_fingerprint_is_the_words():
    base = table(MD, "markdown")
    reflowed = MD.replace("Run the *deploy* job.", "Run   the _deploy_\njob.").replace("- dashboards", "* dashboards")
    reflowed = reflowed.replace("1. Revert", "1) Revert").replace("Rollback ##", "Rollback")
    reflowed = reflowed.replace("Text.", "Text. <!-- todo -->\n\n<!-- a comment\nblock -->")
    same = table(reflowed, "markdown")
    assert {n: s.fingerprint for n, s in same.items()} == {n: s.fingerprint for n, s in base.items()}
    atx = MD.replace("Notes\n-----\n", "## Notes\n")
    assert table(atx, "markdown")["Deploy.Notes"].fingerprint == base["Deploy.Notes"].fingerprint
    changed = table(MD.replace("- alerts", "- alerts and pages"), "markdown")
    assert changed["Deploy.Rollback.Checks"].fingerprint != base["Deploy.Rollback.Checks"].fingerprint
    # a sub-section is part of its parent: the parent changes with it
    assert changed["Deploy.Rollback"].fingerprint != base["Deploy.Rollback"].fingerprint
    assert changed["Deploy"].fingerprint != base["Deploy"].fingerprint
    assert changed["Deploy.Notes"].fingerprint == base["Deploy.Notes"].fingerprint
    code = table(MD.replace("`make deploy`", "`make deploy-all`"), "markdown")
    assert code["Deploy.Rollback"].fingerprint != base["Deploy.Rollback"].fingerprint
    level = table(MD.replace("### Checks", "#### Checks"), "markdown")
    assert level["Deploy.Rollback.Checks"].signature_fp != base["Deploy.Rollback.Checks"].signature_fp


def test_markdown_renamed_heading_keeps_its_body():
    base = table(MD, "markdown")
    renamed = table(MD.replace("## Rollback ##", "## Roll back"), "markdown")
    assert renamed["Deploy.Roll back"].body_fp == base["Deploy.Rollback"].body_fp
    assert renamed["Deploy.Roll back"].shape_fp == base["Deploy.Rollback"].shape_fp != ""
    assert renamed["Deploy.Roll back"].fingerprint != base["Deploy.Rollback"].fingerprint


def test_markdown_headings_in_code_lists_and_quotes_are_not_sections():
    src = "# A\n\n```sh\n# not a heading\n```\n\n> # quoted\n\n- # in a list\n\n#\n\ntext\n"
    assert list(table(src, "markdown")) == ["A", "untitled"]


# --------------------------------------------------------------------------- SQL

SQL = """\
-- schema
CREATE TABLE public.orders (
  id bigint PRIMARY KEY,
  status text NOT NULL DEFAULT 'new' /* read by reporting */
);

create view open_orders as select id from orders where status = 'open';

CREATE OR REPLACE FUNCTION area(r int) RETURNS int AS $$ select r * r $$ LANGUAGE sql;
CREATE FUNCTION area(w int, h int) RETURNS int AS $$ select w * h $$ LANGUAGE sql;

CREATE INDEX orders_status_idx ON orders (status);
CREATE TYPE mood AS ENUM ('sad', 'ok');
CREATE TRIGGER orders_audit BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION audit();
ALTER TABLE orders ADD COLUMN total numeric;
CREATE TABLE "Quoted" ("Mixed" int);
CREATE PROCEDURE refresh() LANGUAGE sql AS $$ select 1 $$;
"""


def test_sql_definitions_names_kinds_spans():
    assert spans(table(SQL, "sql")) == {
        "orders": ("table", 2, 5),
        "orders.id": ("column", 3, 3),
        "orders.status": ("column", 4, 4),
        "open_orders": ("view", 7, 7),
        "area(int)": ("function", 9, 9),
        "area(int,int)": ("function", 10, 10),
        "orders_status_idx": ("index", 12, 12),
        "mood": ("type", 13, 13),
        "orders_audit": ("trigger", 14, 14),
        "orders.total": ("column", 15, 15),
        "Quoted": ("table", 16, 16),
        "Quoted.Mixed": ("column", 16, 16),
        "refresh": ("procedure", 17, 17),
    }


def test_sql_fingerprints_ignore_case_comments_and_whitespace():
    base = table(SQL, "sql")
    same = table(SQL.replace("CREATE TABLE public.orders (", "create table PUBLIC.Orders(  -- the orders\n")
                 .replace("bigint PRIMARY KEY", "BIGINT primary key").replace("/* read by reporting */", ""),
                 "sql")
    for name in ("orders", "orders.id", "orders.status"):
        assert same[name].fingerprint == base[name].fingerprint, name
    changed = table(SQL.replace("DEFAULT 'new'", "DEFAULT 'open'"), "sql")
    assert changed["orders.status"].fingerprint != base["orders.status"].fingerprint
    assert changed["orders"].fingerprint != base["orders"].fingerprint
    assert changed["orders.id"].fingerprint == base["orders.id"].fingerprint
    assert changed["open_orders"].fingerprint == base["open_orders"].fingerprint


PG_EXTENSION = """\
\\echo Use "CREATE EXTENSION vector" to load this file. \\quit

CREATE FUNCTION l2_distance(vector, vector) RETURNS float8
\tAS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE avg(vector) (
\tSFUNC = vector_accum,
\tSTYPE = double precision[]
);

CREATE CAST (vector AS real[])
\tWITH FUNCTION vector_to_float4(vector, integer, boolean) AS IMPLICIT;

-- halfvec functions

CREATE FUNCTION l2_distance(halfvec, halfvec) RETURNS float8
\tAS 'MODULE_PATHNAME', 'halfvec_l2_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TABLE items (id bigserial PRIMARY KEY, note text);
CREATE TABLE docs (
  id bigint, -- key
  embedding vector(3),
  PRIMARY KEY (id)
);
"""


def test_sql_statements_after_one_the_grammar_cannot_parse_are_found():
    tab = table(PG_EXTENSION, "sql")
    assert spans(tab) == {
        "l2_distance(vector,vector)": ("function", 3, 4),
        "l2_distance(halfvec,halfvec)": ("function", 16, 17),
        "items": ("table", 19, 19),
        "items.id": ("column", 19, 19),
        "items.note": ("column", 19, 19),
        "docs": ("table", 20, 24),
        "docs.id": ("column", 21, 21),
        "docs.embedding": ("column", 22, 22),
    }
    same = table(PG_EXTENSION.replace("-- halfvec functions", "").replace("LANGUAGE C", "language c"), "sql")
    assert {n: s.fingerprint for n, s in same.items()} == {n: s.fingerprint for n, s in tab.items()}
    changed = table(PG_EXTENSION.replace("'halfvec_l2_distance'", "'halfvec_l2_dist'"), "sql")
    assert changed["l2_distance(halfvec,halfvec)"].fingerprint != tab["l2_distance(halfvec,halfvec)"].fingerprint
    assert changed["l2_distance(vector,vector)"].fingerprint == tab["l2_distance(vector,vector)"].fingerprint
    changed = table(PG_EXTENSION.replace("vector(3)", "vector(1536)"), "sql")
    assert changed["docs.embedding"].fingerprint != tab["docs.embedding"].fingerprint
    assert changed["docs.id"].fingerprint == tab["docs.id"].fingerprint
    fp = file_fingerprint(PG_EXTENSION.encode(), "vector.sql")
    assert file_fingerprint(PG_EXTENSION.replace("AS IMPLICIT", "AS ASSIGNMENT").encode(), "vector.sql") != fp
    assert file_fingerprint(PG_EXTENSION.replace("STYPE =", "stype  =").encode(), "vector.sql") == fp


# --------------------------------------------------------------------------- Dockerfile

DOCKERFILE = """\
# syntax=docker/dockerfile:1
ARG GO_VERSION=1.22
FROM golang:${GO_VERSION} AS Build
WORKDIR /src
RUN apt-get update && \\
    apt-get install -y git
COPY . .

FROM alpine:3.20
COPY --from=build /out /bin

from scratch as final
copy --from=1 /bin /bin
"""


def test_dockerfile_stages_names_kinds_spans():
    assert spans(table(DOCKERFILE, "dockerfile")) == {
        "build": ("stage", 3, 7),
        "stage#2": ("stage", 9, 10),
        "final": ("stage", 12, 13),
    }


def test_dockerfile_fingerprints_ignore_keyword_case_and_continuations():
    base = table(DOCKERFILE, "dockerfile")
    same = table(DOCKERFILE.replace("RUN apt-get update && \\\n    apt-get", "run apt-get update &&   apt-get")
                 .replace("WORKDIR", "workdir").replace("# syntax=docker/dockerfile:1", ""), "dockerfile")
    assert {n: s.fingerprint for n, s in same.items()} == {n: s.fingerprint for n, s in base.items()}
    changed = table(DOCKERFILE.replace("install -y git", "install -y git curl"), "dockerfile")
    assert changed["build"].fingerprint != base["build"].fingerprint
    assert changed["final"].fingerprint == base["final"].fingerprint


# --------------------------------------------------------------------------- Terraform / HCL

TF = """\
locals {
  name = "vpc" # comment
  tags = { Team = "core", Env = "prod" }
}

resource "aws_vpc" "this" {
  cidr_block = var.cidr
  tags       = local.tags
  lifecycle {
    create_before_destroy = true
  }
}

data "aws_ami" "ubuntu" {
  most_recent = true
}

module "vpc" {
  source = "./modules/vpc"
}

variable "region" {
  default = "eu-west-1"
}

output "vpc_id" {
  value = aws_vpc.this.id
}

provider "aws" {
  region = var.region
}

terraform {
  required_version = ">= 1.5"
}
"""


def test_terraform_addresses_names_kinds_spans():
    assert spans(table(TF, "terraform")) == {
        "local.name": ("locals", 2, 2),
        "local.tags": ("locals", 3, 3),
        "aws_vpc.this": ("resource", 6, 12),
        "data.aws_ami.ubuntu": ("data", 14, 16),
        "module.vpc": ("module", 18, 20),
        "var.region": ("variable", 22, 24),
        "output.vpc_id": ("output", 26, 28),
        "provider.aws": ("provider", 30, 32),
        "terraform": ("block", 34, 36),
    }
    assert spans(table('region = "eu-west-1"\nazs = ["a", "b"]\n', "terraform")) == {
        "var.region": ("variable", 1, 1), "var.azs": ("variable", 2, 2)}
    assert written_symbol("main.tf", "resource.aws_vpc.this") == "aws_vpc.this"
    assert written_symbol("main.tf", "variable.region") == "var.region"


def test_terraform_attribute_order_is_not_significant():
    base = table(TF, "terraform")
    same = table(TF.replace("  cidr_block = var.cidr\n  tags       = local.tags\n",
                            "  tags = local.tags\n\n  # the block\n  cidr_block = var.cidr\n")
                 .replace('{ Team = "core", Env = "prod" }', '{\n    Env  = "prod"\n    Team = "core"\n  }'),
                 "terraform")
    assert {n: s.fingerprint for n, s in same.items()} == {n: s.fingerprint for n, s in base.items()}
    changed = table(TF.replace("create_before_destroy = true", "create_before_destroy = false"), "terraform")
    assert changed["aws_vpc.this"].fingerprint != base["aws_vpc.this"].fingerprint
    assert changed["module.vpc"].fingerprint == base["module.vpc"].fingerprint
    renamed = table(TF.replace('"aws_vpc" "this"', '"aws_vpc" "main"'), "terraform")
    assert renamed["aws_vpc.main"].body_fp == base["aws_vpc.this"].body_fp


def test_plain_hcl_blocks_nest_by_type_and_labels():
    src = """\
    job "docs" {
      group "web" {
        task "server" {
          driver = "docker"
        }
      }
    }
    source "amazon-ebs" "ubuntu.22" {
      region = "x"
    }
    """
    assert spans(table(src, "hcl")) == {
        "job.docs": ("block", 1, 7),
        "job.docs.group.web": ("block", 2, 6),
        "job.docs.group.web.task.server": ("block", 3, 5),
        "source.amazon-ebs.(ubuntu.22)": ("block", 8, 10),
    }


# --------------------------------------------------------------------------- Make

MAKEFILE = """\
VERSION ?= 1.0
.PHONY: build test

build: deps ## build it
\tgo build \\
\t  -o bin/app ./...

%.o: %.c
\t$(CC) -c $< -o $@

test lint: build
\tgo test ./...

build:
\t@echo again
"""


def test_make_targets_names_kinds_spans():
    assert spans(table(MAKEFILE, "make")) == {
        "build": ("target", 4, 6),
        "(%.o)": ("target", 8, 9),
        "test": ("target", 11, 12),
        "lint": ("target", 11, 12),
        "build#2": ("target", 14, 15),
    }


def test_make_recipe_whitespace_is_formatting():
    base = table(MAKEFILE, "make")
    same = table(MAKEFILE.replace("go build \\\n\t  -o bin/app ./...", "go build   -o bin/app ./...")
                 .replace("## build it", ""), "make")
    assert {n: s.fingerprint for n, s in same.items()} == {n: s.fingerprint for n, s in base.items()}
    changed = table(MAKEFILE.replace("go test ./...", "go test -race ./..."), "make")
    assert changed["test"].fingerprint != base["test"].fingerprint
    assert changed["build"].fingerprint == base["build"].fingerprint


def test_file_fingerprints_of_formats_ignore_formatting():
    assert file_fingerprint(MAKEFILE.encode(), "Makefile") == file_fingerprint(
        MAKEFILE.replace("## build it", "").encode(), "Makefile")
    assert file_fingerprint(TF.encode(), "main.tf").startswith("hcl1:")
    front = file_fingerprint(MD.replace("title: front matter", "title: other").encode(), "README.md")
    assert front != file_fingerprint(MD.encode(), "README.md")
    assert file_fingerprint(MD.encode(), "README.md") == file_fingerprint(
        MD.replace("Run the *deploy* job.", "Run the\n_deploy_ job.").encode(), "README.md")


# --------------------------------------------------------------------------- staleness through the CLI

def _status(run_json, repo: Path) -> list[dict]:
    return [a for m in run_json(repo, "stale") for a in m["anchors"]]


MD_ONE_ROLLBACK = MD.replace("## Rollback\n\nSecond", "## Later\n\nSecond")

CASES = [
    # path, source, symbol, reformat, other edit, edit, move (new path or None, replacement files)
    ("docs/runbook.md", MD_ONE_ROLLBACK, "Deploy.Rollback",
     ("Run `make deploy`.", "Run\n   `make deploy`."), ("Setext heading, level 2.", "Setext heading."),
     ("Revert the release.", "Revert the last release."),
     ("docs/runbook.md", lambda s: s.replace("## Rollback ##", "## Roll back"), "Deploy.Roll back")),
    ("docs/runbook.md", MD_ONE_ROLLBACK, "Deploy.Rollback",
     ("Run `make deploy`.", "Run\n   `make deploy`."), ("Setext heading, level 2.", "Setext heading."),
     ("Revert the release.", "Revert the last release."),
     ("docs/rollback.md", lambda s: s[:s.index("## Rollback ##")] + s[s.index("Notes\n-----"):], "Rollback")),
    ("db/schema.sql", SQL, "orders.status",
     ("status text NOT NULL", "STATUS TEXT not null"), ("select id from orders", "select id, status from orders"),
     ("DEFAULT 'new'", "DEFAULT 'pending'"), None),
    ("db/schema.sql", SQL, "open_orders",
     ("create view open_orders as", "CREATE VIEW open_orders AS\n  "), ("DEFAULT 'new'", "DEFAULT 'pending'"),
     ("status = 'open'", "status = 'opened'"),
     ("db/views.sql", lambda s: re.sub(r"(?is)create view open_orders.*?;\n", "", s), "open_orders")),
    ("Dockerfile", DOCKERFILE, "build",
     ("RUN apt-get update && \\\n    apt-get", "run apt-get update && apt-get"), ("/out /bin", "/out /usr/bin"),
     ("install -y git", "install -y git make"), ("build/Dockerfile", None, "build")),
    ("infra/main.tf", TF, "aws_vpc.this",
     ("  cidr_block = var.cidr\n  tags       = local.tags\n", "  tags = local.tags\n  cidr_block = var.cidr\n"),
     ('default = "eu-west-1"', 'default = "us-east-1"'), ("create_before_destroy = true", "prevent_destroy = true"),
     ("infra/vpc.tf", None, "aws_vpc.this")),
    ("Makefile", MAKEFILE, "test",
     ("go test ./...", "go  test   ./..."), ("$(CC) -c", "$(CC) -O2 -c"), ("test lint: build", "test lint: build vet"),
     ("build.mk", None, "test")),
]


@pytest.mark.parametrize("path, src, symbol, reformat, other, edit, move", CASES,
                         ids=["markdown", "markdown-file", "sql-column", "sql-view", "dockerfile", "terraform", "make"])
def test_staleness_through_the_cli(tmp_path: Path, run_cli, run_json, path, src, symbol, reformat, other, edit,
                                   move):
    repo = make_repo(tmp_path / "r", {path: src})
    assert run_cli(repo, "init")[0] == 0
    code, _, err = run_cli(repo, "remember", "the anchored part matters", "--anchor", f"{path}::{symbol}")
    assert code == 0, err
    commit(repo, "memory")
    anchor = Resolver(Repo(repo)).make(path, symbol)
    assert reformat[0] in src and other[0] in src and edit[0] in src

    text = src.replace(*reformat)
    commit(repo, "reformat", {path: text})
    assert _status(run_json, repo) == []
    text = text.replace(*other)
    commit(repo, "edit something else", {path: text})
    assert _status(run_json, repo) == []

    where, name = path, symbol
    if move is not None:
        new_path, rewrite, new_name = move
        if rewrite is None:  # the whole file moves
            (repo / new_path).parent.mkdir(parents=True, exist_ok=True)
            git(repo, "mv", path, new_path)
            commit(repo, "move")
        else:  # the definition moves into another file, or the heading is renamed in place
            rest = rewrite(text)
            files = {path: rest}
            if new_path != path:
                files[new_path] = _only(text, rest)
            commit(repo, "move", files)
            text = rest if new_path == path else files[new_path]
        st = Resolver(Repo(repo)).status(anchor, git(repo, "rev-parse", "HEAD").strip())
        assert st.status == Status.MOVED and (st.path_now, st.symbol_now) == (new_path, new_name), st
        # the commit hooks followed it: the memory's anchor now names the new place, and it is fresh
        [mem] = run_json(repo, "stale", "--all")
        assert [(a["anchor"], a["status"]) for a in mem["anchors"]] == [(f"{new_path}::{new_name}", "fresh")]
        where, name = new_path, new_name
        text = (repo / where).read_text()

    assert edit[0] in text
    sha = commit(repo, "the change", {where: text.replace(*edit)})
    [st] = _status(run_json, repo)
    assert st["status"] == "stale" and st["commit"] == sha, st
    assert st["symbol_now"] == name


def _only(before: str, after: str) -> str:
    """The lines of ``before`` that ``after`` no longer has (the definition moved out)."""
    kept = set(after.splitlines())
    return "\n".join(line for line in before.splitlines() if line not in kept) + "\n"


@pytest.mark.parametrize("language", ["markdown", "sql", "dockerfile", "terraform", "hcl", "make"])
def test_empty_broken_and_crlf_sources(language):
    assert extract_symbols(b"", language) == {}
    assert extract_symbols(b"  \n\n", language) == {}
    for junk in (b"{{{ ((( ``` $$ ;; \\\n", b"\xff\xfe garbage \x80", b"# (\n  = \"\n"):
        extract_symbols(junk, language)  # whatever parses; never raises
    src = {"markdown": MD, "sql": SQL, "dockerfile": DOCKERFILE, "terraform": TF, "hcl": TF, "make": MAKEFILE}[language]
    lf = extract_symbols(src.encode(), language)
    assert lf and extract_symbols(src.replace("\n", "\r\n").encode(), language) == lf


def test_sql_overloads_are_named_by_argument_types_on_both_paths():
    src = ("CREATE FUNCTION f(IN a int, b double precision DEFAULT 1) RETURNS int AS $$ select a $$ LANGUAGE sql;\n"
           "CREATE FUNCTION f(int) RETURNS int AS $$ select 1 $$ LANGUAGE sql;\n")
    assert list(table(src, "sql")) == ["f(int,double precision)", "f(int)"]
    broken = "CREATE CAST (a AS b) WITH INOUT;\n" + src.replace("sql;\nCREATE", "sql STRICT ???;\nCREATE")
    assert list(table(broken, "sql")) == ["f(int,double precision)", "f(int)"]


def test_makefile_includes_and_terraform_module_sources_are_imports():
    from gitmem.code.imports import extract_imports, resolve_imports

    mk = b"include common.mk\n-include $(DEPS) build/rules.mk\nall:\n\techo include nothing.mk\n"
    assert extract_imports("Makefile", mk) == ["common.mk", "build/rules.mk"]
    tf = (b'module "vpc" {\n  source = "./modules/vpc"\n}\n'
          b'module "eks" {\n  source = "terraform-aws-modules/eks/aws"\n}\n'
          b'resource "x" "y" {\n  source = "./not-a-module"\n}\n')
    assert extract_imports("infra/main.tf", tf) == ["./modules/vpc", "terraform-aws-modules/eks/aws"]
    files = {"Makefile", "common.mk", "build/rules.mk", "infra/main.tf", "infra/modules/vpc/main.tf",
             "infra/modules/vpc/outputs.tf", "infra/modules/vpc/nested/x.tf", "infra/not-a-module/a.tf"}
    assert resolve_imports("Makefile", ["common.mk", "build/rules.mk", "missing.mk"], files) == {
        "common.mk", "build/rules.mk"}
    assert resolve_imports("infra/main.tf", extract_imports("infra/main.tf", tf), files) == {
        "infra/modules/vpc/main.tf", "infra/modules/vpc/outputs.tf"}
