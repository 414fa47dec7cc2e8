"""Configuration files: YAML, TOML and JSON keys as symbols, CI jobs, package.json scripts, on real git repositories.

Real tree-sitter parses (tree-sitter-language-pack's ``yaml``, ``toml`` and ``json`` grammars), real
repositories (``testing/repos.py``), the real CLI (``remember --anchor``, ``stale``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.anchors import Resolver
from gitmem.code import lang_data
from gitmem.code import symbols as S
from gitmem.code.languages import language_for_path
from gitmem.code.symbols import file_fingerprint, set_cache_dir, symbol_table
from gitmem.errors import AnchorError
from gitmem.git import Repo
from gitmem.model import Status
from gitmem.textsplit import name_base, name_leaf, name_parts
from testing.repos import commit, make_repo


@pytest.fixture(autouse=True)
def _fresh_caches():
    set_cache_dir(None)
    S.clear_memory_cache()
    yield
    set_cache_dir(None)
    S.clear_memory_cache()


def kinds(path: str, text: str) -> dict[str, str]:
    return {n: s.kind for n, s in symbol_table(text.encode(), path).items()}


WORKFLOW = """\
name: CI
on:
  push:
    branches: [main]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Run tests
        run: pytest -q
  deploy:
    needs: test
    runs-on: ubuntu-latest
"""

GITLAB = """\
stages: [build, test]
variables:
  GIT_DEPTH: 10
default:
  image: python:3.12
.cache_template:
  cache: {paths: [.venv]}
build:
  stage: build
  script: [make]
unit tests:
  stage: test
  extends: .cache_template
  script:
    - pytest
"""

PACKAGE = """\
{
  "name": "shop",
  "scripts": {"test": "jest", "test:unit": "jest unit", "build": "tsc -p ."},
  "exports": {".": "./index.js", "./package.json": "./package.json"},
  "dependencies": {"@babel/core": "^7.0.0"}
}
"""


def test_extensions_and_dialects():
    assert [language_for_path(p) for p in ("a.yml", "b.YAML", "pyproject.toml", "package.json", "tsconfig.jsonc",
                                           "x.json5")] == ["yaml", "yaml", "toml", "json", "json", None]
    assert lang_data.dialect(".github/workflows/ci.yml") == "yaml+github-actions"
    assert lang_data.dialect("sub/.github/workflows/ci.yaml") == "yaml+github-actions"
    assert lang_data.dialect(".github/ci.yml") is None
    assert lang_data.dialect(".gitlab-ci.yml") == "yaml+gitlab-ci"
    assert lang_data.dialect("web/package.json") == "json+package"


def test_github_actions_jobs_are_jobs():
    got = kinds(".github/workflows/ci.yml", WORKFLOW)
    assert got["jobs.test"] == got["jobs.deploy"] == "job"
    assert got["jobs"] == got["jobs.test.steps"] == got["on.push.branches"] == "key"
    assert got["jobs.test.steps[Run tests]"] == "key" and "jobs.test.steps[Run tests].run" in got
    # the same text elsewhere is plain keys: the path decides
    assert kinds("config/ci.yml", WORKFLOW)["jobs.test"] == "key"


def test_gitlab_ci_jobs_are_top_level_keys_that_are_not_keywords():
    got = kinds(".gitlab-ci.yml", GITLAB)
    assert got["build"] == got['"unit tests"'] == "job"
    assert got["stages"] == got["variables"] == got["default"] == got['".cache_template"'] == "key"
    assert got["build.script"] == "key"


def test_package_json_scripts_are_scripts():
    got = kinds("package.json", PACKAGE)
    assert got["scripts.test"] == got["scripts.test:unit"] == got["scripts.build"] == "script"
    assert got["scripts"] == got["name"] == got["dependencies.@babel/core"] == "key"
    assert got['exports."./package.json"'] == got['exports."."'] == "key"
    assert kinds("composer.json", PACKAGE)["scripts.test"] == "key"


def test_toml_tables_keys_and_arrays_of_tables():
    text = ('[project]\nname = "x"\ndependencies = ["a"]\n\n[tool.ruff]\nline-length = 100\n\n'
            '[tool.ruff.lint]\nselect = ["E"]\n\n[[bin]]\nname = "cli"\npath = "src/cli.rs"\n\n'
            '[[bin]]\nname = "srv"\n')
    tab = symbol_table(text.encode(), "Cargo.toml")
    assert {n: s.kind for n, s in tab.items()} == {
        "project": "table", "project.name": "key", "project.dependencies": "key",
        "tool": "table", "tool.ruff": "table", "tool.ruff.line-length": "key",
        "tool.ruff.lint": "table", "tool.ruff.lint.select": "key",
        "bin": "table", "bin[cli]": "table", "bin[cli].name": "key", "bin[cli].path": "key",
        "bin[srv]": "table", "bin[srv].name": "key",
    }
    assert (tab["tool.ruff"].start_line, tab["tool.ruff"].end_line) == (5, 9)
    assert (tab["tool.ruff.line-length"].start_line, tab["tool.ruff.line-length"].end_line) == (6, 6)
    assert (tab["bin[cli]"].start_line, tab["bin[cli]"].end_line) == (11, 13)


def test_spans_run_from_the_key_to_the_end_of_its_value():
    tab = symbol_table(WORKFLOW.encode(), ".github/workflows/ci.yml")
    assert (tab["jobs.test"].start_line, tab["jobs.test"].end_line) == (6, 11)
    assert (tab["jobs.test.steps[Run tests]"].start_line, tab["jobs.test.steps[Run tests]"].end_line) == (10, 11)
    pkg = symbol_table(PACKAGE.encode(), "package.json")
    assert (pkg["scripts"].start_line, pkg["scripts"].end_line) == (3, 3)


@pytest.mark.parametrize("path, a, b", [
    ("c.yml", "db:\n  pool: 5\n  host: 'x'\n  opts: {a: 1, b: [1, 2]}\nother: 1\n",
     "other: 1  # why\ndb:\n    opts:\n        b:\n            - 1\n            - 2\n        a: 1\n"
     "    host: \"x\"\n    pool: 5\n"),
    ("c.json", '{"db": {"pool": 5, "host": "x", "opts": {"a": 1, "b": [1, 2]}}, "other": 1}',
     '{\n  "other": 1,\n  "db": {\n    "opts": {"b": [1,\n 2], "a": 1.0e0},\n    "host": "\\u0078",\n'
     '    "pool": 5\n  }\n}\n'),
    ("c.toml", "other = 1\n[db]\npool = 5\nhost = 'x'\nopts = {a = 1, b = [1, 2]}\n",
     "# c\n[db.opts]\nb = [\n  1,\n  2,\n]\na = 1\n\n[db]\nhost = \"x\"  # why\npool = 5\n[other]\n"),
], ids=["yaml", "json", "toml"])
def test_reformatting_and_reordering_changes_no_fingerprint(path: str, a: str, b: str):
    if path.endswith(".toml"):  # the other side of a reordered TOML document
        b = "other = 1\n" + b.replace("[other]\n", "")
    if path.endswith(".json"):
        b = b.replace("1.0e0", "1")
    ta, tb = symbol_table(a.encode(), path), symbol_table(b.encode(), path)
    for name in ("db", "db.pool", "db.host", "db.opts", "db.opts.b", "other"):
        assert ta[name].fingerprint == tb[name].fingerprint, name
    assert file_fingerprint(a.encode(), path) == file_fingerprint(b.encode(), path)
    changed = a.replace("pool: 5", "pool: 6").replace('"pool": 5', '"pool": 6').replace("pool = 5", "pool = 6")
    tc = symbol_table(changed.encode(), path)
    assert tc["db.pool"].fingerprint != ta["db.pool"].fingerprint and tc["db"].body_fp != ta["db"].body_fp
    assert tc["db.host"].fingerprint == ta["db.host"].fingerprint
    assert file_fingerprint(changed.encode(), path) != file_fingerprint(a.encode(), path)


def test_scalars_keep_their_type_and_yaml_styles_are_one_value():
    def fp(text: str, name: str = "x") -> str:
        return symbol_table(text.encode(), "a.yml")[name].body_fp

    assert fp("x: 5\n") != fp("x: '5'\n")  # an integer is not a string
    assert fp("x: abc\n") == fp("x: 'abc'\n") == fp('x: "abc"\n')
    assert fp("x: |\n  one\n  two\n") == fp('x: "one\\ntwo\\n"\n')
    assert fp("x: >-\n  one\n  two\n") == fp("x: one two\n")
    assert fp("x: [a, {b: 1}]\n") == fp("x:\n  - a\n  - b: 1\n")
    assert fp("x: yes\n") == fp("x: 'yes'\n")  # YAML 1.2: yes is a string
    assert fp("x: 0x1F\n") == fp("x: 31\n")
    assert fp("x: !Ref a\n") != fp("x: a\n")


def test_yaml_aliases_and_merge_keys():
    text = "base: &b\n  adapter: pg\n  pool: 5\nprod:\n  <<: *b\n  pool: 10\ncopy: *b\n"
    tab = symbol_table(text.encode(), "database.yml")
    assert "prod.<<" not in tab and "prod.pool" in tab and "prod.adapter" not in tab
    expanded = symbol_table(b"base: {adapter: pg, pool: 5}\nprod: {adapter: pg, pool: 10}\n"
                            b"copy: {adapter: pg, pool: 5}\n", "database.yml")
    assert tab["prod"].body_fp == expanded["prod"].body_fp and tab["copy"].body_fp == expanded["copy"].body_fp
    changed = symbol_table(text.replace("adapter: pg", "adapter: mysql").encode(), "database.yml")
    assert changed["prod"].fingerprint != tab["prod"].fingerprint  # what it merges changed
    assert changed["prod.pool"].fingerprint == tab["prod.pool"].fingerprint


def test_yaml_documents_after_the_first_are_numbered():
    text = "kind: Deployment\nspec:\n  replicas: 2\n---\nkind: Service\nspec:\n  port: 80\n"
    tab = symbol_table(text.encode(), "k8s/app.yaml")
    assert list(tab) == ["kind", "spec", "spec.replicas", "#2.kind", "#2.spec", "#2.spec.port"]
    assert name_base("#2.spec.port") == "#2.spec.port" and name_leaf("#2.spec.port") == "port"


def test_awkward_keys_are_quoted_and_survive_name_helpers(tmp_path: Path):
    text = ('{"exports": {"./package.json": "./package.json"}, "a b": {"c": 1}, "x[1]": 2, "f(x)": 3,\n'
            ' "issue#2": 4, "a::b": 5, "": 6, "say \\"hi\\"": 7}\n')
    tab = symbol_table(text.encode(), "conf.json")
    names = {'exports."./package.json"', '"a b".c', '"x[1]"', '"f(x)"', '"issue#2"', '"a::b"', '""',
             '"say \\"hi\\""'}
    assert names <= set(tab)
    for name in names:
        assert name_base(name) == name  # nothing is mistaken for an overload key or a #N
        assert name_parts(name)[-1] == name_leaf(name)
    assert name_parts('exports."./package.json"') == ["exports", '"./package.json"']
    assert name_base("jobs.test.steps[Run tests]#2") == "jobs.test.steps"
    root = make_repo(tmp_path / "r", {"conf.json": text, "package.json": PACKAGE})
    resolver = Resolver(Repo(root))
    assert resolver.make("conf.json", 'exports."./package.json"').symbol == 'exports."./package.json"'
    assert resolver.make("conf.json", '"exports"."./package.json"').symbol == 'exports."./package.json"'
    assert resolver.make("package.json", "/scripts/test:unit").symbol == "scripts.test:unit"  # a JSON Pointer
    assert resolver.make("package.json", "/exports/.~1package.json").symbol == 'exports."./package.json"'
    with pytest.raises(AnchorError) as err:
        resolver.make("package.json", "scripts.tst")
    assert "scripts.test" in err.value.candidates


def test_sequence_items_named_by_name_or_id_and_repeats_numbered():
    text = ("steps:\n  - name: Build\n    run: make\n  - id: lint\n    run: ruff\n  - run: plain\n"
            "  - name: Build\n    run: again\n  - just a string\n")
    tab = symbol_table(text.encode(), "a.yml")
    assert [n for n in tab if n.startswith("steps[")] == [
        "steps[Build]", "steps[Build].name", "steps[Build].run", "steps[lint]", "steps[lint].id",
        "steps[lint].run", "steps[Build]#2", "steps[Build]#2.name", "steps[Build]#2.run"]
    assert name_base("steps[Build]#2") == "steps"


def test_a_huge_file_is_bounded_and_stays_anchorable(tmp_path: Path):
    deps = {f"node_modules/pkg{i}": {"version": f"1.{i}.0", "resolved": f"https://r/{i}.tgz",
                                     "integrity": f"sha512-{i}", "dev": i % 2 == 0} for i in range(5000)}
    lock = {"name": "app", "lockfileVersion": 3, "packages": deps}
    data = json.dumps(lock, indent=2).encode()
    tab = symbol_table(data, "package-lock.json")
    assert len(tab) <= lang_data.MAX_SYMBOLS
    assert {"name", "lockfileVersion", "packages"} <= set(tab)
    assert file_fingerprint(data, "package-lock.json") == file_fingerprint(
        json.dumps(lock, separators=(",", ":")).encode(), "package-lock.json")
    deep = b"a:\n" + b"".join(b"  " * (i + 1) + b"k%d:\n" % i for i in range(40)) + b"  " * 41 + b"v: 1\n"
    assert max(len(name_parts(n)) for n in symbol_table(deep, "deep.yml")) == lang_data.MAX_DEPTH
    laughs = b"a: &a [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
        b"%s: &%s [%s]\n" % (bytes([98 + i]), bytes([98 + i]), b", ".join([b"*" + bytes([97 + i])] * 10))
        for i in range(9))
    assert "j" in symbol_table(laughs, "laughs.yml")  # aliases do not expand without bound

    root = make_repo(tmp_path / "r", {"package-lock.json": data.decode()})
    a = Resolver(Repo(root)).make("package-lock.json", None)
    lock["packages"]["node_modules/pkg7"]["version"] = "9.9.9"
    c = commit(root, "bump", {"package-lock.json": json.dumps(lock, indent=2)})
    assert Resolver(Repo(root)).status(a, c).status == Status.STALE


@pytest.mark.parametrize("text", [
    "a: [1, 2\nb: {c: \n  - x\n", "key: \"unterminated\n", "\x00\x01", "[[[[", "",
    '{"a": 1, "b": }', "a = [1,\n[t\nb = 2\n",
])
@pytest.mark.parametrize("path", ["x.yml", "x.json", "x.toml", "package.json", ".gitlab-ci.yml"])
def test_malformed_files_never_raise(path: str, text: str):
    tab = lang_data.analyze_yaml(text.encode()) if path.endswith(".yml") else (
        lang_data.analyze_json(text.encode()) if path.endswith(".json") else lang_data.analyze_toml(text.encode()))
    assert isinstance(tab[0], dict) and tab[1].startswith("kv1:")
    symbol_table(text.encode(), path)


def test_what_parses_of_a_malformed_file_is_returned():
    tab = symbol_table(b"good:\n  pool: 5\nbad: [1, 2\n", "x.yml")
    assert "good.pool" in tab
    tab = symbol_table(b'{"compilerOptions": {"strict": true, /* c */ "target": "es2022",},}', "tsconfig.json")
    assert {"compilerOptions.strict", "compilerOptions.target"} <= set(tab)


# --------------------------------------------------------------------------- on real repositories

CASES = [
    # path, text, anchored name, its new value, another key's change, the key moved under another parent
    ("config/database.yml",
     "default:\n  adapter: postgresql\n  timeout: 5000\nproduction:\n  database: shop\n  pool: 5\n",
     "production.pool", ("pool: 5", "pool: 20"), ("timeout: 5000", "timeout: 9000"),
     ("production:\n  database: shop\n  pool: 5\n", "production:\n  database: shop\nprimary:\n  pool: 5\n"),
     "primary.pool"),
    ("pyproject.toml",
     '[project]\nname = "shop"\n\n[tool.ruff]\nline-length = 100\ntarget-version = "py311"\n',
     "tool.ruff.line-length", ("line-length = 100", "line-length = 120"),
     ('target-version = "py311"', 'target-version = "py312"'),
     ("[tool.ruff]\nline-length = 100\n", "[tool.black]\nline-length = 100\n[tool.ruff]\n"),
     "tool.black.line-length"),
    ("package.json",
     '{\n  "name": "shop",\n  "scripts": {\n    "test": "jest --ci",\n    "build": "tsc"\n  },\n'
     '  "config": {}\n}\n',
     "scripts.test", ('"jest --ci"', '"vitest run"'), ('"tsc"', '"tsc -b"'),
     ('"test": "jest --ci",\n', ""),
     "config.test"),
]


def _moved_text(text: str, move: tuple[str, str], name: str) -> str:
    out = text.replace(*move)
    if name == "config.test":
        out = out.replace('"config": {}', '"config": {"test": "jest --ci"}')
    return out


@pytest.mark.parametrize("path, text, name, value, other, move, moved_to", CASES, ids=["yaml", "toml", "json"])
def test_staleness_of_a_key_on_a_real_repository(tmp_path: Path, path, text, name, value, other, move, moved_to):
    root = make_repo(tmp_path / "r", {path: text})
    repo = Repo(root)
    a = Resolver(repo).make(path, name)
    assert a.kind == ("script" if path == "package.json" else "key")

    c1 = commit(root, "another key", {path: text.replace(*other)})
    assert Resolver(repo).status(a, c1).status == Status.FRESH

    c2 = commit(root, "the anchored value", {path: text.replace(*other).replace(*value)})
    st = Resolver(repo).status(a, c2)
    assert st.status == Status.STALE and st.commit == c2 and st.symbol_now == name

    commit(root, "back", {path: text})
    moved = _moved_text(text, move, moved_to)
    assert moved_to in symbol_table(moved.encode(), path)
    c4 = commit(root, "move the key", {path: moved})
    st = Resolver(repo).status(a, c4)
    assert st.status == Status.MOVED and st.symbol_now == moved_to and st.commit == c4, st.reason


@pytest.mark.parametrize("path, before, after, name, renamed", [
    ("config/app.yml", "cache:\n  ttl: 300\n  backend: redis\nlog: info\n",
     "cache:\n  expiry: 300\n  backend: redis\nlog: info\n", "cache.ttl", "cache.expiry"),
    ("config/app.yml", "cache:\n  ttl: 300\n  backend: redis\nlog: info\n",
     "store:\n  ttl: 300\n  backend: redis\nlog: info\n", "cache", "store"),
    ("Cargo.toml", '[features]\ndefault = ["std", "serde"]\nstd = []\n',
     '[features]\nfull = ["std", "serde"]\nstd = []\n', "features.default", "features.full"),
    ("tsconfig.json", '{"compilerOptions": {"strict": true, "paths": {"@/*": ["src/*"]}}}',
     '{"compilerOptions": {"strict": true, "aliases": {"@/*": ["src/*"]}}}', "compilerOptions.paths",
     "compilerOptions.aliases"),
    (".github/workflows/ci.yml", WORKFLOW, WORKFLOW.replace("  test:\n", "  unit:\n"), "jobs.test", "jobs.unit"),
    ("package.json", PACKAGE, PACKAGE.replace('"build": "tsc -p ."', '"compile": "tsc -p ."'), "scripts.build",
     "scripts.compile"),
], ids=["yaml-key", "yaml-parent", "toml", "json", "github-job", "script"])
def test_a_renamed_key_with_the_same_value_is_moved(tmp_path: Path, path, before, after, name, renamed):
    root = make_repo(tmp_path / "r", {path: before})
    repo = Repo(root)
    a = Resolver(repo).make(path, name)
    c = commit(root, "rename", {path: after})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.MOVED and st.symbol_now == renamed and st.commit == c, st.reason


def test_a_deleted_key_is_not_moved_to_a_sibling_with_the_same_value(tmp_path: Path):
    root = make_repo(tmp_path / "r", {"f.yml": "a:\n  enabled: true\nb:\n  enabled: true\nc: true\n"})
    repo = Repo(root)
    a = Resolver(repo).make("f.yml", "a.enabled")
    c = commit(root, "drop", {"f.yml": "a: {}\nb:\n  enabled: true\nc: true\n"})
    assert Resolver(repo).status(a, c).status == Status.DELETED


def test_a_key_moved_to_another_file_is_followed(tmp_path: Path):
    root = make_repo(tmp_path / "r", {"config/base.yml": "db:\n  pool: 5\n  host: x\n",
                                      "config/prod.yml": "web:\n  port: 80\n"})
    repo = Repo(root)
    a = Resolver(repo).make("config/base.yml", "db")
    c = commit(root, "move", {"config/base.yml": "other: 1\n",
                              "config/prod.yml": "web:\n  port: 80\ndb:\n  host: x\n  pool: 5\n"})
    st = Resolver(repo).status(a, c)
    assert st.status == Status.MOVED and st.path_now == "config/prod.yml" and st.symbol_now == "db"


def test_remember_and_stale_through_the_cli(tmp_path: Path, run_cli, run_json):
    root = make_repo(tmp_path / "r", {".github/workflows/ci.yml": WORKFLOW, "package.json": PACKAGE,
                                      ".gitlab-ci.yml": GITLAB})
    code, _, err = run_cli(root, "init", "--no-hooks")
    assert code == 0, err
    job = run_json(root, "remember", "deploy must run after test", "--anchor", ".github/workflows/ci.yml::jobs.deploy")
    script = run_json(root, "remember", "npm test runs jest in CI mode", "--anchor", "package.json::scripts.test")
    gl = run_json(root, "remember", "build only runs make", "--anchor", ".gitlab-ci.yml::build")
    assert [a["kind"] for a in job["anchors"] + script["anchors"] + gl["anchors"]] == ["job", "script", "job"]
    commit(root, "memories")
    assert run_json(root, "stale") == []

    # reformatted and reordered: nothing is stale
    wf = WORKFLOW.replace("  deploy:\n    needs: test\n    runs-on: ubuntu-latest\n",
                          "  deploy: {runs-on: 'ubuntu-latest', needs: \"test\"}\n")
    pkg = json.dumps(dict(reversed(list(json.loads(PACKAGE).items()))), indent=4)
    commit(root, "reformat", {".github/workflows/ci.yml": wf, "package.json": pkg,
                              ".gitlab-ci.yml": GITLAB.replace("script: [make]", "script:\n    - make")})
    assert run_json(root, "stale") == []

    c = commit(root, "deploy after build", {".github/workflows/ci.yml": wf.replace('"test"', "[test, lint]"),
                                            "package.json": pkg.replace('"jest"', '"jest --ci"')})
    stale = {m["id"]: m for m in run_json(root, "stale")}
    assert set(stale) == {job["id"], script["id"]}
    st = stale[job["id"]]["anchors"][0]
    assert st["status"] == "stale" and st["commit"] == c and st["symbol_now"] == "jobs.deploy"
    assert stale[script["id"]]["anchors"][0]["commit"] == c


def test_the_symbol_cache_is_keyed_by_dialect(tmp_path: Path):
    set_cache_dir(tmp_path / "cache")
    assert symbol_table(WORKFLOW.encode(), ".github/workflows/ci.yml")["jobs.test"].kind == "job"
    S.clear_memory_cache()
    assert symbol_table(WORKFLOW.encode(), "docs/ci-example.yml")["jobs.test"].kind == "key"
    S.clear_memory_cache()
    assert symbol_table(WORKFLOW.encode(), ".github/workflows/ci.yml")["jobs.test"].kind == "job"  # from disk
