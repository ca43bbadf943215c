"""The hypercube family's catalogue of specs, shared by its tests.

A test that takes a ``hc_baseline`` argument runs once per store-and-forward
configuration (its name); ``hc_baselines[name]`` is the keyword arguments of
:func:`fatnet.golden.hypercube.store_forward.route` (besides ``k``, ``src``, ``dst``).
"""

import pytest

#: name -> route() keywords: e-cube and Valiant, unbounded and bounded queues, barrier or
#: not, with and without the intermediate node buffer (the one that can deadlock).
BASELINES = {
    "ecube": {"algorithm": "ecube"},
    "ecube-B1": {"algorithm": "ecube", "buffer": 1},
    "ecube-B2": {"algorithm": "ecube", "buffer": 2},
    "valiant": {"algorithm": "valiant"},
    "valiant-barrier": {"algorithm": "valiant", "barrier": True},
    "valiant-B1": {"algorithm": "valiant", "buffer": 1},
    "valiant-barrier-B2": {"algorithm": "valiant", "buffer": 2, "barrier": True},
    "valiant-through-B1": {"algorithm": "valiant", "buffer": 1, "intermediate_buffer": False},
    "valiant-through-B3": {"algorithm": "valiant", "buffer": 3, "intermediate_buffer": False},
}

#: The baselines that cannot deadlock (store_forward's docstring argues it).
DEADLOCK_FREE = tuple(name for name, kw in BASELINES.items()
                      if kw.get("intermediate_buffer", True) or kw.get("barrier")
                      or kw.get("buffer") is None)


def pytest_generate_tests(metafunc):
    if "hc_baseline" in metafunc.fixturenames:
        metafunc.parametrize("hc_baseline", sorted(BASELINES))
    if "hc_safe_baseline" in metafunc.fixturenames:
        metafunc.parametrize("hc_safe_baseline", sorted(DEADLOCK_FREE))


@pytest.fixture(scope="session")
def hc_baselines():
    return BASELINES


@pytest.fixture(scope="session")
def hc_lint_generated(verilator_lint, icarus_clean):
    """``hc_lint_generated(out, doc)``: the generated hypercube's Verilog and its
    harness compile on Icarus with no message, and the Verilog is Verilator -Wall
    clean under its lint.vlt."""
    from simulators import require as require_simulator

    def check(out, doc):
        for top, files in (("hypercube", ["hypercube.v"]),
                           ("hypercube_harness", doc["harness"]["sources"])):
            icarus_clean(top, [out / f for f in files])
        require_simulator("verilator")
        verilator_lint([out / "lint.vlt", out / "hypercube.v"])
    return check
