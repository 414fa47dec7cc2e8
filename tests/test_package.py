"""The package as built and installed: the wheel's metadata, entry points and data, and which install runs.

The wheel is built once per run from a copy of the source (``pip wheel --no-deps --no-build-isolation
--no-index``: this environment's setuptools, no network, nothing written into the checkout). It is then
installed (``--no-deps``) into a fresh venv whose dependencies come from the test run's own site-packages
(``testing.venvs``' ``.pth`` way), and run: ``gitmem --version`` and ``gitmem doctor --json`` must say it is that
wheel, and the data the code reads at run time (the hook shim template, the stop words, the MCP front's
recorded answers, the OpenCode plugin, the ui's static files) must load from it. ``testing/wheel_smoke.sh``
does the full install with uv from the package index, in CI.
"""

from __future__ import annotations

import email.parser
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

import gitmem
from gitmem import dist
from testing.repos import make_repo

ROOT = Path(__file__).resolve().parent.parent
#: What the built wheel is made from: the project's metadata files and the package, nothing else.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "gitmem")


def _git_files(under: str) -> list[str]:
    """The files git tracks under ``under`` (POSIX paths relative to the checkout); [] outside a git checkout."""
    proc = subprocess.run(["git", "ls-files", "-z", "--", under], cwd=ROOT, capture_output=True)
    return [p for p in proc.stdout.decode().split("\0") if p] if proc.returncode == 0 else []


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of this checkout's sources."""
    pytest.importorskip("setuptools", reason="the test extra has setuptools (the build backend)")
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    out = tmp / "dist"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "--quiet", "--wheel-dir", str(out), str(src)], capture_output=True, text=True,
                          env={**os.environ, "PIP_FIND_LINKS": "", "PIP_EXTRA_INDEX_URL": ""})
    assert proc.returncode == 0, proc.stderr[-3000:]
    built = sorted(out.glob("gitmem_cli-*.whl"))
    assert [p.name for p in built] == [f"gitmem_cli-{gitmem.__version__}-py3-none-any.whl"], list(out.iterdir())
    return built[0]


def _dist_info(zf: zipfile.ZipFile) -> str:
    names = {n.split("/", 1)[0] for n in zf.namelist() if n.split("/", 1)[0].endswith(".dist-info")}
    assert names == {f"gitmem_cli-{gitmem.__version__}.dist-info"}
    return names.pop()


def test_the_wheel_metadata_names_gitmem_cli_at_the_code_version(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        info = _dist_info(zf)
        meta = email.parser.Parser().parsestr(zf.read(f"{info}/METADATA").decode())
        entry_points = zf.read(f"{info}/entry_points.txt").decode()
        names = zf.namelist()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["Name"] == dist.DIST_NAME == project["name"]
    assert meta["Version"] == gitmem.__version__  # the one owner: the literal in gitmem/__init__.py
    assert meta["Requires-Python"] == project["requires-python"]
    assert meta["License-Expression"] == "MIT" and f"{info}/licenses/LICENSE" in names
    assert meta["Summary"] and "memory" in meta["Summary"]
    assert meta["Description-Content-Type"] == "text/markdown" and "gitmem" in meta.get_payload()  # the README
    assert "Programming Language :: Python :: 3.11" in meta.get_all("Classifier")
    # every console script of pyproject, each pointing at a module that is in the wheel
    scripts = dict(line.split(" = ", 1) for line in entry_points.split("[console_scripts]\n", 1)[1].splitlines()
                   if " = " in line)
    assert scripts == project["scripts"]
    assert scripts["gitmem"] == "gitmem.__main__:main" and scripts["gitmem-hook"].endswith("claude:main")
    for target in scripts.values():
        module = target.split(":", 1)[0]
        assert f"{module.replace('.', '/')}.py" in names, target


def test_the_wheel_holds_every_file_of_the_package_and_nothing_else(wheel: Path) -> None:
    """Every file git tracks under gitmem/ (modules and the data read at run time: resources/, ui/static/) is in
    the wheel; no test, bench or fixture file is."""
    tracked = _git_files("gitmem")
    if not tracked:
        pytest.skip("not a git checkout: the tracked files are unknown")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    missing = [p for p in tracked if p not in names]
    assert missing == []
    data = [p for p in tracked if not p.endswith(".py")]
    assert {"gitmem/resources/hook-tmpl", "gitmem/resources/stopwords.json", "gitmem/resources/mcp-answers.json",
            "gitmem/resources/opencode-plugin.js", "gitmem/ui/static/index.html"} <= set(data)
    extra = sorted(n for n in names if not n.startswith(("gitmem/", "gitmem_cli-")))
    assert extra == []
    # the same files: nothing stale from an earlier build, no __pycache__
    assert sorted(n for n in names if n.startswith("gitmem/")) == sorted(tracked)


@pytest.fixture(scope="module")
def wheel_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed (``--no-deps``; its dependencies from this run's site-packages, put
    after its own by a ``.pth`` file); returns its ``bin`` folder."""
    folder = tmp_path_factory.mktemp("venv") / "wheel venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True)
    bin_dir = folder / "bin"
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "--quiet",
                           "--no-deps", "--no-index", str(wheel)], capture_output=True, text=True,
                          env={**os.environ, "PIP_FIND_LINKS": "", "PIP_EXTRA_INDEX_URL": ""})
    assert proc.returncode == 0, proc.stderr[-3000:]
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = subprocess.run([str(bin_dir / "python"), "-c", where], check=True, capture_output=True,
                             text=True).stdout.strip()
    # the dependencies (click, tree-sitter …): this run's site-packages, after the venv's own (so its gitmem wins);
    # a plain path, not site.addsitedir: the run's own editable install of gitmem (a .pth finder) stays out
    (Path(purelib) / "zz-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return bin_dir


def _clean_env(bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["GITMEM_NO_DAEMON"] = "1"
    return env


def test_the_installed_wheel_says_what_it_is_and_reads_its_data(wheel: Path, wheel_venv: Path,
                                                                  tmp_path: Path) -> None:
    env = _clean_env(wheel_venv)
    proc = subprocess.run([str(wheel_venv / "gitmem"), "--version"], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first, where = proc.stdout.splitlines()[:2]
    assert first == f"gitmem-cli {gitmem.__version__}"
    assert where.startswith(f"wheel from {wheel}, in the venv {wheel_venv.parent} ")
    # the package data, read as the code reads it, from the installed wheel (not this checkout)
    probe = ("import json, gitmem, gitmem.stopwords as s, gitmem.integrations.mcp_front as m, "
             "gitmem.integrations.git_hooks as h, gitmem.ui.server as u\n"
             "from importlib import resources\n"
             "print(json.dumps({'package': gitmem.__file__, 'stop': len(s.content_terms('the parser of config')),\n"
             " 'answers': m.load_answers(gitmem.__version__) is not None,\n"
             " 'shim': len(h.render_shim('post-commit', '/usr/bin/python3')),\n"
             " 'static': len((resources.files('gitmem.ui') / 'static' / 'index.html').read_bytes())}))\n")
    proc = subprocess.run([str(wheel_venv / "python"), "-c", probe], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    assert Path(got["package"]).is_relative_to(wheel_venv.parent)
    assert got["stop"] >= 2 and got["answers"] is True and got["shim"] > 1000 and got["static"] > 100
    # git hooks from the wheel: `gitmem init` writes the shim from resources/hook-tmpl, naming the venv's Python
    repo = make_repo(tmp_path / "repo")
    proc = subprocess.run([str(wheel_venv / "gitmem"), "init"], capture_output=True, text=True, env=env, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    shim = (repo / ".git" / "hooks" / "post-commit").read_text()
    assert "# gitmem-hook: v" in shim and f"INSTALL_PYTHON='{wheel_venv}/python" in shim
    proc = subprocess.run([str(wheel_venv / "gitmem"), "doctor", "--json"], capture_output=True, text=True,
                          env=env, cwd=repo)
    install = json.loads(proc.stdout)["install"]
    assert (install["mode"], install["environment"], install["source"]) == ("wheel", "venv", str(wheel))
    assert install["metadata_version"] == install["version"] == gitmem.__version__
    assert install["on_path_is_this"] is True and install["problems"] == []


def _editable() -> str | None:
    """This run's clone when gitmem is installed editable from it (the development install), else None."""
    for d in metadata.distributions(name=dist.DIST_NAME):
        try:
            direct = json.loads(d.read_text("direct_url.json") or "{}")
        except ValueError:
            continue
        if direct.get("dir_info", {}).get("editable"):
            return str(direct.get("url", "")).removeprefix("file://")
    return None


def test_doctor_reports_the_editable_install_of_this_clone(tmp_path: Path) -> None:
    clone = _editable()
    if clone is None or not Path(clone, "gitmem").samefile(Path(gitmem.__file__).parent):
        pytest.skip("gitmem is not installed editable from this checkout (pip install -e .)")
    repo = make_repo(tmp_path / "repo")
    gitmem_cmd = Path(sys.executable).parent / "gitmem"
    env = {**os.environ, "GITMEM_NO_DAEMON": "1"}
    subprocess.run([str(gitmem_cmd), "init"], check=True, capture_output=True, env=env, cwd=repo)
    proc = subprocess.run([str(gitmem_cmd), "doctor", "--json"], capture_output=True, text=True, env=env, cwd=repo)
    doc = json.loads(proc.stdout)
    install = doc["install"]
    assert install["distribution"] == "gitmem-cli"
    assert (install["mode"], install["source"]) == ("editable", clone)
    assert install["version"] == install["metadata_version"] == gitmem.__version__
    assert install["package"] == str(Path(clone) / "gitmem")
    assert install["environment"] in ("venv", "system") and install["scripts"] == str(gitmem_cmd.parent)
    line = next(c for c in doc["checks"] if c["name"] == "install")
    assert line["level"] == "ok" and f"editable install of the clone {clone}" in line["message"]
    text = subprocess.run([str(gitmem_cmd), "doctor"], capture_output=True, text=True, env=env, cwd=repo).stdout
    assert f"ok    gitmem-cli {gitmem.__version__}: editable install of the clone {clone}" in text
    version = subprocess.run([str(gitmem_cmd), "--version"], capture_output=True, text=True, env=env).stdout
    assert version.splitlines()[:2] == [f"gitmem-cli {gitmem.__version__}", dist.describe(dist.detect())]


def test_a_checkout_on_pythonpath_is_a_source_tree_not_the_installed_one(tmp_path: Path) -> None:
    """A copy of the package run through PYTHONPATH: --version says it is a source tree, and that the installed
    gitmem-cli (when there is one) is another."""
    copy = tmp_path / "checkout"
    shutil.copytree(ROOT / "gitmem", copy / "gitmem", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(copy), "GITMEM_NO_DAEMON": "1"}
    proc = subprocess.run([sys.executable, "-m", "gitmem", "--version"], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"gitmem-cli {gitmem.__version__}"
    assert lines[1].startswith(f"source tree {copy}, not an installed gitmem-cli")
    if _editable() is not None:
        assert any(ln.startswith("warning: gitmem-cli ") and "is installed" in ln for ln in lines[2:]), lines
