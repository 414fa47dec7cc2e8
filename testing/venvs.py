"""A second, real virtual environment running this checkout's gitmem: another teammate's install path.

``second_venv(folder)`` makes ``folder`` a venv (``python -m venv --without-pip``) whose site-packages has a
``.pth`` line that adds the test run's own site-packages (``site.addsitedir``, so its editable install of
gitmem is found), and writes gitmem's console scripts (``gitmem``, ``gitmem-hook`` …, from the installed
distribution's entry points) into its ``bin/``, each running the new venv's Python. Seconds, no network.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from importlib.metadata import distribution
from pathlib import Path

from gitmem.dist import DIST_NAME


def second_venv(folder: Path) -> Path:
    """Create the venv in ``folder`` (see the module docstring); returns its ``bin`` folder.

    Raises:
        subprocess.CalledProcessError: ``python -m venv`` failed.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True)
    bin_dir = folder / "bin"
    python = bin_dir / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "gitmem-under-test.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    for ep in distribution(DIST_NAME).entry_points:
        if ep.group != "console_scripts":
            continue
        module, _, func = ep.value.partition(":")
        script = bin_dir / ep.name
        script.write_text(f"#!{python}\nimport sys\nfrom {module} import {func}\nsys.exit({func}())\n")
        script.chmod(0o755)
    return bin_dir
