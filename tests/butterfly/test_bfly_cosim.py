"""cocotb co-simulation of splitter networks (butterflies, dilated butterflies,
multibutterflies) against the cycle-exact model, on Icarus and on Verilator, through the
generic runner (:func:`fatnet.sim.cocotb_runner.run`): every output and acknowledgment
wire at every bit-time, and the settled status registers after every fault-mask change.

A representative set (the breadth is on Amaranth's simulator,
tests/butterfly/test_bfly_hdl_amaranth.py); one build per design and simulator, each
design's whole workload in one simulation: full load with losses and retries from the
model's own on-line run, fault masks changed between cycles, and the traffic patterns.
``SIM=icarus`` or ``SIM=verilator`` runs one simulator; by default both run.
"""


import numpy as np
import pytest

from fatnet.golden.butterfly.cyclemodel import CircuitNetwork, run_circuit

from test_bfly_hdl_amaranth import PATTERNS, circuit, masked_run, messages, random_mask
from fatnet.api.registry import family_of
from fatnet.sim import cocotb_runner
from fatnet.sim.family import Hooks
from simulators import SIMS, expected_bit_flipped, require as require_simulator


# name -> (kind, N, d, faults, link stages, simulators; "-startD" in the name: a start
# tree of D stages, "-stuck": input wire 1 of switch (1, 2) stuck at 1, --stuck-link);
# the 32-input network on Verilator only (bench/cosim.py co-simulates the 64-input one)
DESIGNS = {
    "multibutterfly-n8-d2-random": ("multibutterfly", 8, 2, "random", 0, SIMS),
    "dilated-n16-d3-adversarial": ("dilated-butterfly", 16, 3, "adversarial", 0, ["icarus"]),
    "multibutterfly-n16-d2-links2-start2": ("multibutterfly", 16, 2, "random", 2, ["icarus"]),
    "butterfly-n32-random": ("butterfly", 32, 1, "random", 0, ["verilator"]),
    "multibutterfly-n8-d2-stuck": ("multibutterfly", 8, 2, None, 1, ["icarus"]),
}
STUCK_LINK = {(1, 2, 1): 1}
_circuits = {}


def _circuit(name):
    if name not in _circuits:
        kind, n, d, faults, links, _ = DESIGNS[name]
        c = circuit(kind, n, d, faults, count=max(1, n // 8), seed=n + d, link_stages=links)
        # a start tree where the name says so: bit-time 0 later, nothing else
        start = int(name.split("-start")[1]) if "-start" in name else 0
        _circuits[name] = CircuitNetwork(c.network, c.payload_bits, link_stages=links,
                                         start_stages=start,
                                         stuck_wires=STUCK_LINK if "-stuck" in name else {})
    return _circuits[name]


def _replay(name, sim, seed):
    return (f"SIM={sim} python -m pytest tests/butterfly/test_bfly_cosim.py -k '{sim}-{name}'"
            f" (seed {seed})")


def _cases():
    for name, (*_, sims) in DESIGNS.items():
        for sim in sims:
            if sim in SIMS:
                yield pytest.param(sim, name, id=f"{sim}-{name}")


def _workload(c, seed):
    """Full load with retries (the model's run), masks changed between cycles (masked
    runs, each ending with the status compared), then one cycle of every pattern."""
    ms = messages(c, "random-destinations", seed, problems=2)
    cycles = list(run_circuit(c, ms, keep_results=True, max_cycles=4).results)
    per_cycle = [None] * len(cycles)
    masks = [random_mask(c, 2, seed), random_mask(c, max(2, c.depth * c.n_inputs // 8), seed + 1),
             None]
    res, mk = masked_run(c, ms, masks, max_cycles=3)
    cycles += res
    per_cycle += mk
    return ms, cycles, per_cycle


@pytest.mark.parametrize("sim,name", list(_cases()))
def test_full_load_masks_and_patterns_as_the_model_predicts(sim, name, tmp_path):
    require_simulator(sim)
    c = _circuit(name)
    seed = c.n_inputs
    ms, cycles, per_cycle = _workload(c, seed)
    result = cocotb_runner.run(c, ms, cycles, masks=per_cycle, sim=sim, seed=seed,
                               replay=_replay(name, sim, seed), family=family_of(c))
    assert result.passed, "\n".join(result.failures)[:4000]
    assert result.cycles == len(cycles)
    # the traffic patterns, one cycle each (messages from every input), same build
    for pattern in PATTERNS:
        pm = messages(c, pattern, seed)
        rep = run_circuit(c, pm, keep_results=True, max_cycles=2)
        result = cocotb_runner.run(c, pm, rep.results, sim=sim, seed=seed,
                                   replay=_replay(name, sim, seed) + f" {pattern}",
                                   family=family_of(c))
        assert result.passed, "\n".join(result.failures)[:4000] + f"\n{pattern}"
        if sim == "icarus" or c.n_inputs > 8:
            break  # the full pattern set once, on the small network on Verilator


@pytest.mark.parametrize("sim", SIMS)
def test_a_wrong_expectation_names_switch_wire_bit_time_and_message(sim):
    require_simulator(sim)
    name = "multibutterfly-n8-d2-random"
    c = _circuit(name)
    ms = messages(c, "random-permutation", 1)
    [res] = run_circuit(c, ms, keep_results=True, max_cycles=1).results or [None]
    m = res.delivered[0]
    o = res.outcomes[m]
    port = f"term__{int(ms.dst[m])}"
    with expected_bit_flipped(0, "recv", o.arrival, port, o.path[-1].wire):
        result = cocotb_runner.run(c, ms, [res], sim=sim, seed=1, replay="REPLAY-ME",
                                   family=family_of(c))
    assert not result.passed
    text = "\n".join(result.failures)
    assert f"term__{int(ms.dst[m])}.recv[{o.path[-1].wire}]" in text
    assert f"bit-time {o.arrival}" in text and f"message {m}" in text
    assert f"switch (level {c.depth - 1}, row" in text and "REPLAY-ME" in text


class _MaskOfWidth:
    """The splitter networks' testbench hooks, but for a run-time fault mask of
    ``width`` bits, planned without the model's refusal (the model runs unmasked), so
    that the testbench in the simulator meets a mask the network's port does not fit."""

    def __init__(self, real, width: int):
        self._real, self._width = real, width

    def __getattr__(self, name):
        return getattr(self._real, name)

    def mask_width(self, net) -> int:
        return self._width

    def mask_int(self, net, mask) -> int:
        return sum(1 << int(b) for b in np.flatnonzero(np.asarray(mask, dtype=bool)))

    def prepare(self, net, ms, idx, mask=None):
        return self._real.prepare(net, ms, idx)

    def expected_status(self, net, mask):
        return self._real.expected_status(net, None)


@pytest.mark.parametrize("sim", SIMS)
def test_the_testbench_refuses_a_mask_wider_or_narrower_than_the_network(sim):
    require_simulator(sim)
    c = _circuit("multibutterfly-n8-d2-random")
    ms = messages(c, "random-permutation", 1)
    w = (c.depth - 1) * c.n_inputs
    for width, word in ((w + 4, "wider"), (w - 1, "narrower")):
        bad = np.zeros(width, dtype=bool)
        bad[0] = True
        fam = family_of(c)
        wrong = Hooks(fam.hardware, _MaskOfWidth(fam.testbench, width))
        result = cocotb_runner.run(c, ms, [range(8)], masks=[bad], sim=sim, family=wrong)
        assert not result.passed
        text = "\n".join(result.failures)
        assert f"fault mask of {width} bits refused" in text and word in text, text[:2000]
