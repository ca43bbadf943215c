"""The package as a user installs it: a wheel, in a clean virtual environment.

The editable install of ``make setup`` reads the source tree, so a package left out of the
wheel goes unnoticed there. This test builds the wheel, installs it alone (no source tree
on the path) into a new virtual environment and runs ``gen`` and ``sim`` for the demo kind
of every family with hardware. The dependencies (Amaranth, cocotb, numpy, ...) come from
the running environment through a ``.pth`` line, so the test needs no network for them;
fatnet itself can come only from the wheel.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from fatnet.cli.registry import demo_kinds, get_family

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("golden", "hdl", "sim", "cli")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel path, the clean environment's bin/ directory)."""
    tmp = tmp_path_factory.mktemp("wheel")
    # the build happens in a copy, so that it leaves nothing in the source tree
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "__pycache__", ".pytest_cache"))
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                        str(tmp / "dist"), str(src)], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    (wheel,) = (tmp / "dist").glob("fatnet-*.whl")
    env_dir = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True,
                   timeout=300)
    py = env_dir / "bin" / "python"
    purelib = Path(subprocess.run([str(py), "-c", "import sysconfig; "
                                   "print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    # the running environment's packages, for the dependencies only: a path listed in a
    # .pth file is added to sys.path, but .pth files inside it (the editable install's
    # finder) are not run, so fatnet is not importable from there
    (purelib / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    p = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q",
                        "--no-deps", str(wheel)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return wheel, env_dir / "bin"


def _run(bindir, tmp_path, *argv):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([str(bindir / "fatnet"), *argv], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=900)


def test_wheel_holds_every_family_folder(installed):
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    for layer in LAYERS:
        for init in (ROOT / layer).rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            rel = init.relative_to(ROOT).as_posix()
            assert f"fatnet/{rel}" in names, f"{rel} is missing from {wheel.name}"


def test_installed_package_is_the_wheel(installed, tmp_path):
    _, bindir = installed
    p = subprocess.run([str(bindir / "python"), "-c",
                        "import fatnet.hdl, fatnet.golden; print(fatnet.hdl.__file__)"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr
    assert Path(p.stdout.strip()).is_relative_to(bindir.parent), p.stdout


@pytest.mark.parametrize("kind", demo_kinds())
def test_installed_gen_and_sim(installed, tmp_path, kind):
    """Every family with hardware generates and co-simulates from the installed wheel."""
    if shutil.which("iverilog") is None:
        pytest.skip("iverilog is not installed (apt-get install iverilog)")
    _, bindir = installed
    network, traffic = get_family(kind).kinds[kind].demo
    help_ = _run(bindir, tmp_path, "gen", "--help")
    assert kind in help_.stdout, help_.stdout + help_.stderr
    gen = _run(bindir, tmp_path, "gen", kind, *network, "-o", "out")
    assert gen.returncode == 0, gen.stdout + gen.stderr
    assert list((tmp_path / "out").glob("*.v")) and list((tmp_path / "out").glob("*.json"))
    sim = _run(bindir, tmp_path, "sim", kind, *network, *traffic, "--sim", "icarus",
               "--build-dir", "b")
    assert sim.returncode == 0 and "PASS" in sim.stdout, sim.stdout + sim.stderr
