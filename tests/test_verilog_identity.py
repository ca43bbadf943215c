"""The network Verilog is byte-identical to what a reference commit generates.

Refactors of the family mechanism (issue 14) must not change the hardware: this test
extracts the reference commit's source with ``git archive``, runs its ``fatnet gen`` and
today's on the same specs, and compares the network files (``<top>.v``) byte for byte.
The reference is the last commit before that refactor; move it forward, with a commit
message saying why, only when a change to the generated hardware is intended.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The last commit before the family interfaces of issue 14.
REFERENCE = "5064dd0"
LAYERS = ("golden", "hdl", "sim", "cli")

#: (kind, options): each family's kinds, modes and concentrators, faults included.
SPECS = [
    ("fat-tree", ["--leaves", "16", "--root-capacity", "8", "--seed", "1"]),
    ("fat-tree", ["--leaves", "16", "--root-capacity", "8", "--mode", "online",
                  "--concentrator", "crossbar"]),
    ("fat-tree", ["--leaves", "8", "--capacities", "5,4,3,2", "--seed", "3"]),
    ("butterfly", ["--inputs", "16"]),
    ("dilated-butterfly", ["--inputs", "16", "--multiplicity", "2"]),
    ("multibutterfly", ["--inputs", "32", "--multiplicity", "2", "--faults", "3",
                        "--seed", "3"]),
]


@pytest.fixture(scope="module")
def reference_tree(tmp_path_factory):
    """A directory whose ``fatnet`` package is the reference commit's source."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("no git checkout: the reference commit cannot be extracted")
    have = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{REFERENCE}^{{commit}}"],
                          capture_output=True)
    if have.returncode != 0:
        pytest.skip(f"commit {REFERENCE} is not in this clone's history (shallow clone?)")
    tmp = tmp_path_factory.mktemp("reference")
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", REFERENCE, *LAYERS],
                             capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
    pkg = tmp / "pkg" / "fatnet"
    pkg.mkdir(parents=True)
    for layer in LAYERS:
        (pkg / layer).symlink_to(tmp / layer)
    return tmp / "pkg"


def _gen(pythonpath, kind, options, out):
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    p = subprocess.run([sys.executable, "-m", "fatnet.cli", "gen", kind, *options,
                        "--no-harness", "-o", str(out)], capture_output=True, text=True,
                       env=env, cwd=out.parent, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    (verilog,) = [f for f in out.glob("*.v")]
    return verilog


@pytest.mark.parametrize("kind, options", SPECS, ids=[f"{k} {' '.join(o)}" for k, o in SPECS])
def test_network_verilog_is_the_reference_commits(reference_tree, tmp_path, kind, options):
    ref = _gen(reference_tree, kind, options, tmp_path / "ref")
    now = _gen(None, kind, options, tmp_path / "now")
    assert ref.name == now.name
    assert now.read_bytes() == ref.read_bytes(), (
        f"{now.name} differs from commit {REFERENCE}'s for {kind} {' '.join(options)}: "
        f"diff {ref} {now}")


def test_the_reference_is_really_the_reference_commits_code(reference_tree):
    # the subprocess must import the extracted tree, not the installed package
    p = subprocess.run([sys.executable, "-c", "import fatnet.hdl.gen as g; print(g.__file__)"],
                       capture_output=True, text=True, env={**os.environ,
                                                           "PYTHONPATH": str(reference_tree)},
                       timeout=120)
    assert Path(p.stdout.strip()).is_relative_to(reference_tree), p.stdout + p.stderr
