"""What the structured-file measurement (bench/structured.py, bench/README.md "Structured files") found, each on a
real git repository: the bounded, same-language search for a missing symbol and its own-file tie-break, Dockerfile
image tags / digests / flags, SQL unnamed indexes, Makefile target lists from a variable, short YAML values.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import anchors
from gitmem.anchors import Resolver
from gitmem.code import symbols as S
from gitmem.code.lang_data import MIN_SHAPE_VALUE_BYTES
from gitmem.code.symbols import extract_symbols, set_cache_dir
from gitmem.git import Repo
from gitmem.model import Status
from gitmem.shellwords import make_goals, make_word_lists, targets
from testing.repos import commit, make_repo


@pytest.fixture(autouse=True)
def _fresh_caches():
    set_cache_dir(None)
    S.clear_memory_cache()
    yield
    set_cache_dir(None)
    S.clear_memory_cache()


def _status(repo: Path, path: str, symbol: str, at: str) -> anchors.AnchorStatus:
    r = Repo(repo)
    anchor = Resolver(r).make(path, symbol, at)
    return Resolver(r).status(anchor, r.resolve("HEAD"))


def _head(repo: Path) -> str:
    return Repo(repo).resolve("HEAD")


# --------------------------------------------------------------------------- the search for a missing symbol

MAKEFILE = "build:\n\tgo build ./...\n\ncross:\n\tGOOS=linux go build ./...\n\tGOOS=darwin go build ./...\n"


def test_a_deleted_make_target_is_not_looked_for_in_go_files(tmp_path: Path, monkeypatch):
    repo = make_repo(tmp_path / "r", {"Makefile": MAKEFILE, "main.go": "package main\n\nfunc main() {}\n"})
    o = _head(repo)
    vendored = {f"vendor/m{i}/x.go": f"package m{i}\n\nfunc F{i}() int {{ return {i} }}\n" for i in range(30)}
    commit(repo, "drop cross, vendor", {"Makefile": "build:\n\tgo build ./...\n", **vendored})
    parsed: list[str] = []
    real = Resolver.table

    def table(self, rev, path):  # type: ignore[no-untyped-def]
        parsed.append(path)
        return real(self, rev, path)

    monkeypatch.setattr(Resolver, "table", table)
    st = _status(repo, "Makefile", "cross", o)
    assert st.status == Status.DELETED
    assert not [p for p in parsed if p.endswith(".go")]


def test_the_search_parses_at_most_max_move_search_files(tmp_path: Path, monkeypatch):
    src = "package a\n\nfunc Keep() int {\n\treturn 1\n}\n\nfunc Gone(x int) int {\n\treturn x * 2 + 7\n}\n"
    repo = make_repo(tmp_path / "r", {"a/a.go": src})
    o = _head(repo)
    many = {f"z{i}/x.go": f"package z{i}\n\nfunc F{i}() int {{ return {i} }}\n" for i in range(12)}
    commit(repo, "drop Gone", {"a/a.go": src[:src.index("func Gone")], **many})
    monkeypatch.setattr(anchors, "MAX_MOVE_SEARCH_FILES", 5)
    parsed: set[str] = set()
    real = Resolver.table

    def table(self, rev, path):  # type: ignore[no-untyped-def]
        parsed.add(path)
        return real(self, rev, path)

    monkeypatch.setattr(Resolver, "table", table)
    assert _status(repo, "a/a.go", "Gone", o).status == Status.DELETED
    assert len({p for p in parsed if p.startswith("z")}) == 5


def test_a_moved_function_in_a_nearby_file_is_still_followed(tmp_path: Path):
    gone = "func Gone(x int) int {\n\ty := x * 2\n\treturn y + 7 - x/3\n}\n"
    repo = make_repo(tmp_path / "r", {"pkg/a.go": "package pkg\n\n" + gone, "pkg/b.go": "package pkg\n"})
    o = _head(repo)
    commit(repo, "move Gone", {"pkg/a.go": "package pkg\n", "pkg/b.go": "package pkg\n\n" + gone,
                               **{f"other{i}.go": "package main\n" for i in range(5)}})
    st = _status(repo, "pkg/a.go", "Gone", o)
    assert (st.status, st.path_now, st.symbol_now) == (Status.MOVED, "pkg/b.go", "Gone")


def _output(name: str) -> str:
    return (f'output "{name}" {{\n  description = "The IPv6 association ID"\n'
            f'  value       = try(aws_vpc.this[0].ipv6_association_id, null)\n}}\n')


def test_renamed_in_its_own_file_wins_when_the_same_body_is_added_elsewhere(tmp_path: Path):
    """terraform-aws-vpc d1adf74: examples/ipv6's output renamed while 9 other files gained the same output."""
    repo = make_repo(tmp_path / "r", {"examples/ipv6/outputs.tf": _output("ipv6_association_id"),
                                      **{f"examples/e{i}/outputs.tf": 'output "x" {\n  value = 1\n}\n'
                                         for i in range(3)}})
    o = _head(repo)
    commit(repo, "rename", {"examples/ipv6/outputs.tf": _output("vpc_ipv6_association_id"),
                            **{f"examples/e{i}/outputs.tf": 'output "x" {\n  value = 1\n}\n'
                               + _output("vpc_ipv6_association_id") for i in range(3)}})
    st = _status(repo, "examples/ipv6/outputs.tf", "output.ipv6_association_id", o)
    assert (st.status, st.path_now, st.symbol_now) == (
        Status.MOVED, "examples/ipv6/outputs.tf", "output.vpc_ipv6_association_id"), st


def test_the_same_body_in_two_other_files_stays_ambiguous(tmp_path: Path):
    keep = 'output "k" {\n  value = 2\n}\n'
    repo = make_repo(tmp_path / "r", {"a/outputs.tf": _output("ipv6_association_id") + keep})
    o = _head(repo)
    commit(repo, "moved out twice", {"a/outputs.tf": keep,
                                     "b/outputs.tf": _output("v6"), "c/outputs.tf": _output("v6")})
    assert _status(repo, "a/outputs.tf", "output.ipv6_association_id", o).status == Status.DELETED


# --------------------------------------------------------------------------- Dockerfile

DOCKERFILE = """\
ARG GO_VERSION=1.13
FROM --platform=$BUILDPLATFORM golang:1.13-alpine AS gobase
RUN apk add --no-cache git

FROM gobase AS vendored
RUN --mount=target=/context \\
    --mount=target=/go/pkg/mod,type=cache \\
    --mount=from=tools,source=/home/go-mod-outdated,target=/usr/bin/go-mod-outdated \\
    go mod vendor

FROM scratch AS out
COPY --from=vendored /out /
"""


@pytest.mark.parametrize("stage, old, new", [
    ("gobase", "golang:1.13-alpine", "golang:1.16-alpine"),
    ("gobase", "golang:1.13-alpine", "golang:1.13-alpine@sha256:0123abcd"),
    ("gobase", "--platform=$BUILDPLATFORM", "--platform=linux/amd64"),
    ("vendored", "source=/home/go-mod-outdated", "source=/usr/bin/go-mod-outdated"),
    ("vendored", "type=cache", "type=bind"),
    ("out", "--from=vendored", "--from=gobase"),
])
def test_dockerfile_tags_digests_and_flags_are_content(tmp_path: Path, stage, old, new):
    repo = make_repo(tmp_path / "r", {"Dockerfile": DOCKERFILE})
    o = _head(repo)
    commit(repo, "reformat", {"Dockerfile": DOCKERFILE.replace("RUN apk", "run  apk")})
    assert _status(repo, "Dockerfile", stage, o).status == Status.FRESH
    sha = commit(repo, "change", {"Dockerfile": DOCKERFILE.replace("RUN apk", "run  apk").replace(old, new)})
    st = _status(repo, "Dockerfile", stage, o)
    assert (st.status, st.commit) == (Status.STALE, sha)


def test_dockerfile_continuations_inside_flags_are_formatting():
    one = extract_symbols(b"FROM a AS b\nRUN --mount=type=cache,target=/x go build\n", "dockerfile")
    two = extract_symbols(b"FROM a AS b\nRUN --mount=type=cache,target=/x \\\n    go build\n", "dockerfile")
    assert one["b"].fingerprint == two["b"].fingerprint


# --------------------------------------------------------------------------- SQL

def test_unnamed_indexes_are_not_symbols(tmp_path: Path):
    sql = ("CREATE TABLE items (id bigserial PRIMARY KEY, val vector(3));\n"
           "CREATE INDEX ON items USING hnsw (val vector_l2_ops) WITH (m = 4);\n"
           "CREATE INDEX CONCURRENTLY ON items (id);\n"
           "CREATE INDEX items_val ON items USING ivfflat (val);\n")
    names = list(extract_symbols(sql.encode(), "sql"))
    assert "on" not in names and not any(n.startswith("on#") for n in names)
    assert "items_val" in names and "items" in names
    plain = extract_symbols(b"CREATE TABLE t (a int);\nCREATE INDEX ON t (a);\n", "sql")
    assert list(plain) == ["t", "t.a"]


# --------------------------------------------------------------------------- Makefile

BAKE = """\
BAKE_TARGETS := binaries lint \\
    validate-vendor
OTHER ?= x

.PHONY: $(BAKE_TARGETS)
$(BAKE_TARGETS):
\t$(BUILDX_CMD) bake $@

$(OTHER):
\techo other

all: lint
"""


def test_a_rule_of_a_word_list_variable_gives_each_target():
    tab = extract_symbols(BAKE.encode(), "make")
    assert {"binaries", "lint", "validate-vendor", "all"} <= set(tab)
    assert "x" not in tab  # ?= depends on the environment
    assert tab["lint"].kind == "target" and tab["lint"].start_line == 6
    assert make_word_lists(BAKE) == {"BAKE_TARGETS": ["binaries", "lint", "validate-vendor"]}
    assert make_word_lists("A := a\nA += b\n$(A):\n") == {}
    assert make_word_lists("A := a $(B)\n") == {}
    assert make_goals(BAKE, ["lint"]) == ["lint"]
    assert make_goals(BAKE, ["all"]) == ["all", "lint"]


def test_targets_moved_into_a_variable_rule_are_found_and_stale(tmp_path: Path):
    """buildx cb94298a → e3c6618d: `lint:` and `validate-vendor:` replaced by `$(BAKE_TARGETS):`."""
    before = "lint:\n\tdocker buildx bake lint\n\nvalidate-vendor:\n\tdocker buildx bake validate-vendor\n"
    repo = make_repo(tmp_path / "r", {"Makefile": before})
    o = _head(repo)
    sha = commit(repo, "bake targets", {"Makefile": BAKE})
    st = _status(repo, "Makefile", "lint", o)
    assert (st.status, st.symbol_now, st.commit) == (Status.STALE, "lint", sha)


def test_make_lint_targets_the_rule_of_a_variable(tmp_path: Path):
    repo = make_repo(tmp_path / "r", {"Makefile": BAKE})
    found = targets("make lint", str(repo))
    assert ("Makefile", "lint") in found and found.scoped == {"Makefile"}, found


# --------------------------------------------------------------------------- YAML keys

def test_a_short_value_does_not_identify_a_key(tmp_path: Path):
    """buildx 876e0036 → 88380652: a step `name: Checkout` deleted in e2e.yml is not moved to build.yml."""
    e2e = "jobs:\n  build:\n    steps:\n      - name: Checkout\n        uses: actions/checkout@v4\n"
    build = "jobs:\n  unit:\n    runs-on: ubuntu-latest\n"
    repo = make_repo(tmp_path / "r", {".github/workflows/e2e.yml": e2e, ".github/workflows/build.yml": build})
    o = _head(repo)
    commit(repo, "rework", {".github/workflows/e2e.yml": "jobs:\n  build:\n    steps: []\n",
                            ".github/workflows/build.yml": build + "  bsd:\n    steps:\n      - name: Checkout\n"
                                                                   "        uses: actions/checkout@v5\n"})
    st = _status(repo, ".github/workflows/e2e.yml", "jobs.build.steps[Checkout].name", o)
    assert st.status == Status.DELETED, st
    assert len(b'"Checkout"') < MIN_SHAPE_VALUE_BYTES


def test_a_long_value_under_another_key_is_still_a_move(tmp_path: Path):
    run = "go test -race -coverprofile=coverage.txt -covermode=atomic ./..."
    assert len(run) > MIN_SHAPE_VALUE_BYTES
    repo = make_repo(tmp_path / "r", {"ci.yml": f"test:\n  run: {run}\nlint:\n  run: golangci-lint\n"})
    o = _head(repo)
    commit(repo, "rename", {"ci.yml": f"unit:\n  cmd: {run}\nlint:\n  run: golangci-lint\n"})
    st = _status(repo, "ci.yml", "test.run", o)
    assert (st.status, st.symbol_now) == (Status.MOVED, "unit.cmd"), st
