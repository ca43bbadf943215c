"""Algorithm 2's hardware (hdl/hypercube/alg2.py) generated and co-simulated: cocotb on
Icarus against the model (:meth:`HypercubeCircuit.simulate_cycle`, which is
:func:`fatnet.golden.hypercube.bitserial.run_alg2` between the injection and the
delivery), every ``recv`` and ``send_ack`` wire at every bit-time; the Verilog
lint-clean (Verilator, Icarus); the manifest's phases the model's schedule; bad input
refused in one line.
Every step's buffers are checked on Amaranth's simulator (test_hc_hardware.py).

One build per design, each design's whole workload in one simulation: random
permutations, random partial permutations and the permutation patterns, one delivery
cycle each.
"""

import json

import numpy as np
import pytest

from fatnet.cli.main import main
from fatnet.api.registry import family_of
from fatnet.golden.hypercube import alg1, bitserial
from fatnet.golden.hypercube.api import circuit
from fatnet.golden.hypercube.patterns import make_pattern
from fatnet.golden.messages import MessageSet
from fatnet.hdl.hypercube import network_signature
from fatnet.hdl.signatures import port_rows
from fatnet.sim import cocotb_runner
from simulators import SIMS, require as require_simulator

HERE = "tests/hypercube/test_hc_alg2_hw.py"
PERMUTATION_PATTERNS = ("transpose", "bit-reversal", "complement", "random-permutation")

# name -> (k, M or None for 2k, simulators); each design on Icarus: a Verilator build of
# Algorithm 2's node takes about a minute, and the hypercube's testbench runs on
# Verilator with the other algorithms (tests/hypercube/test_hc_cosim.py,
# test_hc_ecube_hw.py); the designs' Verilog is Verilator-linted below
DESIGNS = {
    "k2-m2": (2, 2, ["icarus"]),          # M = k: no data bits
    "k3": (3, None, ["icarus"]),
    "k4-m5": (4, 5, ["icarus"]),
}


def _cases():
    for name, (*_, sims) in DESIGNS.items():
        for sim in sims:
            if sim in SIMS:
                yield pytest.param(sim, name, id=f"{sim}-{name}")


def _workload(net, seed):
    """(messages, one index list per delivery cycle): 3 random permutations, 3 random
    partial permutations, the permutation patterns."""
    rng = np.random.default_rng([seed, net.k])
    n = net.nodes
    pairs = [(np.arange(n), rng.permutation(n)) for _ in range(3)]
    pairs += [alg1.random_partial_permutation(net.k, int(rng.integers(1, n + 1)), rng)
              for _ in range(3)]
    pairs += [make_pattern(net.k, p, seed) for p in PERMUTATION_PATTERNS]
    ms = MessageSet.from_pairs(np.concatenate([s for s, _ in pairs]),
                               np.concatenate([d for _, d in pairs]), net.payload_bits, seed)
    cycles, at = [], 0
    for s, _ in pairs:
        cycles.append(list(range(at, at + len(s))))
        at += len(s)
    return ms, cycles


@pytest.mark.parametrize("sim,name", list(_cases()))
def test_permutations_partial_permutations_and_patterns_as_the_model_predicts(sim, name):
    require_simulator(sim)
    k, M, _ = DESIGNS[name]
    net = circuit(k, algorithm="alg2", message_bits=M)
    seed = 7 + k
    ms, cycles = _workload(net, seed)
    results = [net.simulate_cycle(ms, net.injections(ms, idx)) for idx in cycles]
    for idx, r in zip(cycles, results):      # Theorem 3: every message, in its one cycle
        assert sorted(r.delivered) == idx, (name, seed)
        for m in idx:
            o = r.outcomes[m]
            assert o.path[-1].channel == ("rank", k, int(ms.dst[m])) and o.arrival == (
                net.M + 1 + bitserial.schedule(k, net.M).total), (name, m)
    res = cocotb_runner.run(net, ms, results, family=family_of(net), sim=sim, seed=seed,
                            replay=f"SIM={sim} python -m pytest {HERE} -k '{sim}-{name}' "
                                   f"(seed {seed})")
    assert res.passed, "\n".join(res.failures)[:4000]
    assert res.cycles == len(cycles)


@pytest.fixture(scope="module", params=[(1, None), (3, 3), (4, None)],
                ids=lambda p: f"k{p[0]}" + (f"-M{p[1]}" if p[1] else ""))
def generated(request, tmp_path_factory):
    k, M = request.param
    out = tmp_path_factory.mktemp("alg2")
    argv = ["gen", "hypercube", "--dimension", str(k), "--algorithm", "alg2", "-o", str(out)]
    assert main(argv + (["--message-bits", str(M)] if M else [])) == 0
    return out, circuit(k, algorithm="alg2", message_bits=M), json.loads(
        (out / "hypercube.json").read_text())


def test_verilog_is_lint_clean_and_icarus_clean(generated, hc_lint_generated):
    out, _, doc = generated
    hc_lint_generated(out, doc)


def test_manifest_ports_phases_and_one_node_module(generated):
    out, net, doc = generated
    rows = port_rows(network_signature(net))
    assert [(p["name"], p["width"], p["dir"]) for p in doc["ports"][2:]] == \
        [(r["name"], r["width"], r["dir"]) for r in rows]
    sched = bitserial.schedule(net.k, net.M)
    steps = [[kind, i, length] for kind, i, length in doc["phases"][1:-1]]
    assert steps == [[k_, st.iteration, st.length] for st, k_ in
                     ((st, {1: "cross", 2: "enum2", 3: "pack3", 4: "enum4", 5: "pack5",
                            6: "rdv"}[st.number]) for st in sched.steps) if st.length]
    assert doc["phases"][0] == ["inject", -1, net.M + 1]
    assert doc["phases"][-1] == ["deliver", -1, net.M + 1]
    assert doc["cycle_length_bits"] == 2 * (net.M + 1) + sched.total
    assert doc["arrival_bit_time"] == net.M + 1 + sched.total
    assert len(doc["node_modules"]) == 1
    text = (out / "hypercube.v").read_text()
    node = doc["node_modules"][0]["module"]
    assert text.count(f"  {node} node_") == net.nodes


@pytest.mark.parametrize("argv, param", [
    (["--pattern", "hot-spot"], "routing must be a partial permutation"),
    (["--pattern", "random-destinations"], "routing must be a partial permutation"),
    (["--pattern", "transpose", "--order", "1,0,2"], "order must be left out for alg2"),
    (["--pattern", "transpose", "--message-bits", "2"], "message-bits must be an integer in [3, "),
])
def test_bad_input_to_sim_is_one_line_exit_2(argv, param, capsys, tmp_path):
    build = tmp_path / "build"
    status = main(["sim", "hypercube", "--dimension", "3", "--algorithm", "alg2", *argv,
                   "--build-dir", str(build)])
    cap = capsys.readouterr()
    assert status == 2 and cap.out == "" and cap.err.count("\n") == 1 and param in cap.err, \
        cap.err
    assert not build.exists()
