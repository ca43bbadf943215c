"""The static checks `make test` runs: ruff (pyproject.toml's rule set) over the source,
the tests and the benchmarks, and mypy over the installed package, ``fatnet``.

mypy checks ``fatnet`` as it is imported: the layer folders (``golden/``, ``hdl/``, ...)
install as ``fatnet.<layer>`` (setup.py), so the check lays them out so under a temporary
``fatnet/`` folder of links and checks that package, with the settings of
pyproject.toml's ``[tool.mypy]``.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    """The tool beside this interpreter (the dev extra installs both)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip(f"{name} is not installed: pip install -e '.[dev]' (make setup)")
    return found


def _layers() -> list[Path]:
    """The folders that install as ``fatnet.<layer>``: every top-level package folder."""
    return sorted(p.parent for p in ROOT.glob("*/__init__.py")
                  if p.parent.name not in ("tests", "bench"))


def test_ruff_finds_nothing():
    run = subprocess.run([_tool("ruff"), "check", "--no-cache", "--output-format",
                          "concise", "."], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_finds_nothing(tmp_path):
    package = tmp_path / "fatnet"
    package.mkdir()
    layers = _layers()
    assert {"golden", "hdl", "sim", "cli"} <= {p.name for p in layers}
    for layer in layers:
        (package / layer.name).symlink_to(layer, target_is_directory=True)
    env = {**os.environ, "MYPYPATH": str(tmp_path)}
    run = subprocess.run([_tool("mypy"), "--config-file", str(ROOT / "pyproject.toml"),
                          "--cache-dir", str(ROOT / "build" / "mypy_cache"), "-p", "fatnet"],
                         cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
