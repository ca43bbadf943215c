"""The network Verilog is byte-identical to what a reference commit generates.

Refactors must not change the hardware: this test extracts the reference commit's source
with ``git archive``, runs its ``fatnet gen`` and today's on the same specs, and compares
the network files (``<top>.v``) byte for byte, for every kind of every family with
hardware (:func:`test_the_specs_cover_every_kind_with_hardware`). Move the reference
forward, with a commit message saying why, only when a change to the generated hardware
is intended. The test needs the repository's history: from a shallow clone or an
unpacked archive it is skipped, saying so.
"""

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cli_parsers import option_choices
from fatnet.api.registry import families, get_family

ROOT = Path(__file__).resolve().parents[1]
#: Its fixtures generate every spec twice (the reference, today), in two processes.
pytestmark = pytest.mark.long
#: The reference: main before the architecture's split by concern. Its network Verilog
#: for the fat-tree and butterfly specs is 5064dd0's (the last commit before the family
#: interfaces), which this test compared with until the hypercube had hardware.
REFERENCE = "e9a8949"
LAYERS = ("golden", "hdl", "sim", "cli")

#: (kind, options): each family's kinds, modes and concentrators, faults included; each
#: hypercube algorithm, with a message length, an order, a buffer and steps other than
#: the defaults.
SPECS = [
    ("fat-tree", ["--leaves", "16", "--root-capacity", "8", "--seed", "1"]),
    ("fat-tree", ["--leaves", "16", "--root-capacity", "8", "--mode", "online",
                  "--concentrator", "crossbar"]),
    ("fat-tree", ["--leaves", "8", "--capacities", "5,4,3,2", "--seed", "3"]),
    ("butterfly", ["--inputs", "16"]),
    ("dilated-butterfly", ["--inputs", "16", "--multiplicity", "2"]),
    ("multibutterfly", ["--inputs", "32", "--multiplicity", "2", "--faults", "3",
                        "--seed", "3"]),
    ("hypercube", ["--dimension", "4", "--algorithm", "alg1", "--message-bits", "9",
                   "--order", "2,0,3,1"]),
    ("hypercube", ["--dimension", "3", "--algorithm", "alg2", "--message-bits", "7"]),
    ("hypercube", ["--dimension", "3", "--algorithm", "ecube", "--message-bits", "8",
                   "--buffer", "2"]),
    ("hypercube", ["--dimension", "3", "--algorithm", "valiant", "--message-bits", "6",
                   "--buffer", "3", "--steps", "40", "--seed", "5"]),
]


def test_the_specs_cover_every_kind_with_hardware():
    """Every kind of every registered family with hardware has a spec, and so has every
    choice of a kind's ``--algorithm`` (a family added, or an algorithm, without one
    fails here)."""
    with_hardware = {k for f in families() if f.has_hardware for k in f.kinds}
    assert with_hardware - {kind for kind, _ in SPECS} == set()
    for kind in with_hardware:
        algorithms = {o[o.index("--algorithm") + 1] for k, o in SPECS
                      if k == kind and "--algorithm" in o}
        assert set(option_choices("gen", kind, "--algorithm")) <= algorithms, kind
    assert {get_family(kind).has_hardware for kind, _ in SPECS} == {True}


def _git(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, **kwargs)


def _reference_dist_info(pkg: Path) -> None:
    """Metadata of a distribution named fatnet beside the reference's package, with the
    reference's own entry points: on PYTHONPATH it comes before the installed fatnet's,
    so the reference registers its families as its own code names them."""
    project = tomllib.loads(_git("show", f"{REFERENCE}:pyproject.toml", check=True,
                                 text=True).stdout)["project"]
    info = pkg / "fatnet-0+reference.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fatnet\n"
                                   "Version: 0+reference\n")
    groups = project.get("entry-points", {})
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in points.items())
        for group, points in groups.items()))


@pytest.fixture(scope="module")
def reference_tree(tmp_path_factory):
    """A directory whose ``fatnet`` package is the reference commit's source."""
    if shutil.which("git") is None or _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip(f"not a git checkout: the reference commit {REFERENCE} cannot be "
                    "extracted (run the test from a clone of the repository)")
    if _git("cat-file", "-e", f"{REFERENCE}^{{commit}}").returncode != 0:
        pytest.skip(f"commit {REFERENCE} is not in this clone's history: a shallow clone "
                    "lacks it (git fetch --unshallow fetches it)")
    tmp = tmp_path_factory.mktemp("reference")
    archive = _git("archive", REFERENCE, *LAYERS, check=True)
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
    pkg = tmp / "pkg" / "fatnet"
    pkg.mkdir(parents=True)
    for layer in LAYERS:
        (pkg / layer).symlink_to(tmp / layer)
    _reference_dist_info(tmp / "pkg")
    return tmp / "pkg"


#: Runs ``fatnet gen`` for each spec in one process (one start-up of Python and
#: Amaranth for all specs): argv[1] is a JSON list of (kind, options, output directory);
#: prints a JSON list of (exit status, output).
_GEN_ALL = """
import contextlib, io, json, sys
from fatnet.cli.main import main
done = []
for kind, options, out in json.loads(sys.argv[1]):
    text = io.StringIO()
    with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
        try:
            status = main(["gen", kind, *options, "--no-harness", "-o", out])
        except SystemExit as e:
            status = e.code
    done.append((status, text.getvalue()))
print(json.dumps(done))
"""


def _gen_all(pythonpath, out: Path) -> list[tuple[int, str, list[Path]]]:
    """(exit status, output, the Verilog files written) of every spec, generated by the code
    on ``pythonpath`` (None: today's, the installed package)."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    dirs = [out / str(i) for i in range(len(SPECS))]
    jobs = [(kind, options, str(d)) for (kind, options), d in zip(SPECS, dirs)]
    out.mkdir()
    p = subprocess.run([sys.executable, "-c", _GEN_ALL, json.dumps(jobs)],
                       capture_output=True, text=True, env=env, cwd=out, timeout=1800)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return [(status, text, sorted(d.glob("*.v")))
            for (status, text), d in zip(json.loads(p.stdout.splitlines()[-1]), dirs)]


@pytest.fixture(scope="module")
def generated(reference_tree, tmp_path_factory):
    """Every spec's network Verilog, by the reference commit and by today's code."""
    tmp = tmp_path_factory.mktemp("generated")
    return _gen_all(reference_tree, tmp / "ref"), _gen_all(None, tmp / "now")


@pytest.mark.parametrize("at", range(len(SPECS)),
                         ids=[f"{k} {' '.join(o)}" for k, o in SPECS])
def test_network_verilog_is_the_reference_commits(generated, at):
    kind, options = SPECS[at]
    (ref_status, ref_text, refs), (status, text, nows) = (side[at] for side in generated)
    assert ref_status == 0, f"the reference failed: {ref_text}"
    assert status == 0, text
    (ref,), (now,) = refs, nows       # the network alone (--no-harness)
    assert ref.name == now.name
    assert now.read_bytes() == ref.read_bytes(), (
        f"{now.name} differs from commit {REFERENCE}'s for {kind} {' '.join(options)}: "
        f"diff {ref} {now}")


def test_the_reference_is_really_the_reference_commits_code(reference_tree):
    # the subprocess must import the extracted tree and read its metadata, not the
    # installed package's
    p = subprocess.run([sys.executable, "-c", "import fatnet.hdl.gen as g; print(g.__file__); "
                        "from importlib.metadata import version; print(version('fatnet'))"],
                       capture_output=True, text=True, env={**os.environ,
                                                           "PYTHONPATH": str(reference_tree)},
                       cwd=reference_tree, timeout=120)
    module, version = p.stdout.split()
    assert Path(module).is_relative_to(reference_tree), p.stdout + p.stderr
    assert version == "0+reference", p.stdout + p.stderr
