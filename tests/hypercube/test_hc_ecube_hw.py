"""The store-and-forward hardware (hdl/hypercube/ecube.py): the e-cube router with link
queues of B messages, and Valiant's two phases on the same router, against the model
(:meth:`HypercubeCircuit.simulate_cycle`, which is
:func:`fatnet.golden.hypercube.store_forward.route` on the hardware's clock): every
``recv`` and ``send_ack`` wire at every bit-time, on Amaranth's simulator for breadth and
cocotb on Icarus and Verilator; the Verilog lint-clean; the manifest's timing the model's;
bad input refused in one line.

Replay a failure with ``python -m pytest tests/hypercube/test_hc_ecube_hw.py -k <id>``;
the seed is in the test id and the message.
"""

import json

import numpy as np
import pytest

from fatnet.cli.main import main
from fatnet.api.registry import family_of
from fatnet.golden.hypercube import alg1
from fatnet.golden.hypercube.api import circuit
from fatnet.golden.hypercube.circuit import run_blocks
from fatnet.golden.hypercube.patterns import PATTERNS, make_pattern
from fatnet.golden.hypercube.store_forward import route
from fatnet.golden.messages import MessageSet
from fatnet.hdl.hypercube import network_signature
from fatnet.hdl.signatures import port_rows
from fatnet.sim.amaranth_bench import run_cycles_amaranth
from fatnet.sim import cocotb_runner
from simulators import SIMS, require as require_simulator

HERE = "tests/hypercube/test_hc_ecube_hw.py"


def online(net, blocks):
    """(messages, the model's cycles): each block of (src, dst) pairs on-line on its own
    (:func:`run_blocks`). A cycle that delivers nothing must be Valiant's deadlock."""
    ms = MessageSet.from_pairs(np.concatenate([np.asarray(s) for s, _ in blocks]),
                               np.concatenate([np.asarray(d) for _, d in blocks]),
                               net.payload_bits, 5)
    bounds = np.cumsum([0] + [len(s) for s, _ in blocks])
    per_block = run_blocks(net, ms, [range(bounds[j], bounds[j + 1])
                                     for j in range(len(blocks))])
    for cycles in per_block:
        if not cycles[-1].delivered or cycles[-1].lost:
            assert net.algorithm == "valiant" and all(
                "deadlock" in o.lost_at[3] for o in cycles[-1].outcomes.values()
                if o.status == "lost"), cycles[-1].outcomes
    return ms, [r for cycles in per_block for r in cycles]


def check(net, ms, results, why):
    got = run_cycles_amaranth(net, ms, results, family=family_of(net))
    bad = [f"cycle {i}: {mm}" for i, (_, mms) in enumerate(got) for mm in mms]
    assert not bad, "RTL differs from the model:\n  " + "\n  ".join(bad[:20]) + f"\n{why}"


def _blocks(k, seed, patterns=PATTERNS):
    rng = np.random.default_rng([seed, k])
    n = 1 << k
    blocks = [(np.arange(n), rng.permutation(n)),
              alg1.random_partial_permutation(k, int(rng.integers(1, n + 1)), rng)]
    return blocks + [make_pattern(k, p, seed) for p in patterns]


# ------------------------------------------------------------------ the model's clock
@pytest.mark.parametrize("algorithm", ["ecube", "valiant"])
def test_the_cycle_is_store_forward_route_on_the_hardware_clock(algorithm):
    """Deliveries at s*S + Wd + 2 for the step route() delivers in, send_ack at
    (c + 1)*S + 1 for the last step c, the intermediates the stream carries."""
    k, B = 4, 2
    net = circuit(k, algorithm, buffer=B)
    src, dst = make_pattern(k, "transpose", 0)
    ms = MessageSet.from_pairs(src, dst, net.payload_bits, 0)
    res = net.simulate_cycle(ms, net.injections(ms, range(len(ms))))
    kw = {"intermediate": net.intermediates(ms), "intermediate_buffer": False} \
        if algorithm == "valiant" else {}
    run = route(k, src, dst, algorithm=algorithm, buffer=B, **kw)
    S, Wd = net.step_length, net.word_bits
    assert S == Wd + 3 and Wd == (2 if algorithm == "valiant" else 1) * k + net.payload_bits
    assert run.stopped == "delivered" and sorted(res.delivered) == list(range(len(ms)))
    for m, o in res.outcomes.items():
        assert o.arrival == run.delivery_step[m] * S + Wd + 2
        assert o.ack_time == (run.steps + 1) * S + 1
        assert o.delivered_payload is None or o.stream[-net.payload_bits:] == \
            [int(b) for b in format(int(ms.payload[m]), f"0{net.payload_bits}b")]


# ------------------------------------------------------------------ Amaranth, breadth
CASES = [(alg, k, B) for alg in ("ecube", "valiant") for k in (1, 2, 3) for B in (1, 2, 4)]


@pytest.mark.parametrize("algorithm,k,B", CASES,
                         ids=[f"{a}-k{k}-B{B}" for a, k, B in CASES])
def test_every_pattern_random_and_partial_permutations(algorithm, k, B):
    seed = 11 * k + B
    net = circuit(k, algorithm, buffer=B, seed=seed if algorithm == "valiant"
                           else None)
    ms, results = online(net, _blocks(k, seed))
    check(net, ms, results, f"{algorithm} k={k} B={B} seed {seed}")


@pytest.mark.parametrize("algorithm", ["ecube", "valiant"])
def test_the_4_cube_with_bounded_queues(algorithm):
    seed = 4
    net = circuit(4, algorithm, buffer=1, seed=seed if algorithm == "valiant"
                           else None)
    ms, results = online(net, _blocks(4, seed, ("transpose", "bit-reversal")))
    check(net, ms, results, f"{algorithm} k=4 B=1 seed {seed}")


def test_a_cycle_too_short_acknowledges_none_and_its_messages_go_again():
    """steps = k = 4 on transpose (every message alone is delivered in k steps, but
    the queues hold some back): the undelivered are lost (no send_ack anywhere) and
    sent again; the RTL agrees on every wire of every cycle."""
    net = circuit(4, "ecube", buffer=1, steps=4)
    ms, results = online(net, [make_pattern(4, "transpose", 0)])
    assert len(results) > 1 and results[0].lost and results[0].delivered
    assert all(o.ack_time is None for o in results[0].outcomes.values())
    check(net, ms, results, "ecube k=3 B=1 steps=2 transpose")


def _deadlocking_permutation(k, B, tries=200):
    """A permutation of the k-cube whose Valiant run (straight on, bounded queues) the
    model reports deadlocked, and its seed."""
    for seed in range(tries):
        net = circuit(k, "valiant", buffer=B, seed=seed)
        dst = np.random.default_rng(seed).permutation(1 << k)
        ms = MessageSet.from_pairs(np.arange(1 << k), dst, net.payload_bits, seed)
        run = route(k, ms.src, ms.dst, algorithm="valiant", buffer=B,
                    intermediate=net.intermediates(ms), intermediate_buffer=False)
        if run.deadlock:
            return net, ms, seed
    pytest.fail(f"no deadlock among {tries} seeds: the search must find the example")


def test_valiant_deadlocks_where_the_model_does():
    net, ms, seed = _deadlocking_permutation(4, 1)
    first = net.simulate_cycle(ms, net.injections(ms, range(len(ms))))
    assert first.lost and all(o.ack_time is None for o in first.outcomes.values())
    rep = net.run(ms, keep_results=True)
    assert rep.delivered == len(ms)       # the rest go again, with fewer messages
    check(net, ms, rep.results, f"valiant k=4 B=1 deadlock, seed {seed}")


# ------------------------------------------------------------------ cocotb
# name -> (algorithm, k, B, simulators); one build per design and simulator. The 4-cube
# once on Verilator, through Valiant's two phases (the e-cube router's module with its
# intermediate node); the e-cube 4-cube's RTL is compared with the model cycle by cycle
# in Amaranth's simulator (test_the_4_cube_with_bounded_queues).
DESIGNS = {
    "ecube-k3-B1": ("ecube", 3, 1, ["icarus"]),
    "ecube-k3-B2": ("ecube", 3, 2, ["icarus"]),
    "ecube-k3-B4": ("ecube", 3, 4, ["icarus"]),
    "valiant-k3-B1": ("valiant", 3, 1, ["icarus"]),
    "valiant-k3-B2": ("valiant", 3, 2, ["icarus"]),
    "valiant-k3-B4": ("valiant", 3, 4, ["icarus"]),
    "valiant-k4-B2": ("valiant", 4, 2, ["verilator"]),
}


def _cases():
    for name, (*_, sims) in DESIGNS.items():
        for sim in sims:
            if sim in SIMS:
                yield pytest.param(sim, name, id=f"{sim}-{name}")


@pytest.mark.parametrize("sim,name", list(_cases()))
def test_every_pattern_on_the_simulators(sim, name):
    require_simulator(sim)
    algorithm, k, B, _ = DESIGNS[name]
    seed = 3 + k + B
    net = circuit(k, algorithm, buffer=B, seed=seed if algorithm == "valiant"
                           else None)
    ms, results = online(net, _blocks(k, seed))
    res = cocotb_runner.run(net, ms, results, family=family_of(net), sim=sim, seed=seed,
                            replay=f"SIM={sim} python -m pytest {HERE} -k '{sim}-{name}' "
                                   f"(seed {seed})")
    assert res.passed, "\n".join(res.failures)[:4000]
    assert res.cycles == len(results)


# ------------------------------------------------------------------ generation
@pytest.fixture(scope="module", params=[("ecube", 1, 1), ("ecube", 3, 2), ("valiant", 3, 4)],
                ids=lambda p: f"{p[0]}-k{p[1]}-B{p[2]}")
def generated(request, tmp_path_factory):
    algorithm, k, B = request.param
    out = tmp_path_factory.mktemp(algorithm)
    assert main(["gen", "hypercube", "--dimension", str(k), "--algorithm", algorithm,
                 "--buffer", str(B), "-o", str(out)]) == 0
    return out, circuit(k, algorithm, buffer=B), json.loads(
        (out / "hypercube.json").read_text())


def test_verilog_is_lint_clean_and_icarus_clean(generated, hc_lint_generated):
    out, _, doc = generated
    hc_lint_generated(out, doc)


def test_manifest_ports_timing_and_one_router_module(generated):
    out, net, doc = generated
    rows = port_rows(network_signature(net))
    assert [(p["name"], p["width"], p["dir"]) for p in doc["ports"][2:]] == \
        [(r["name"], r["width"], r["dir"]) for r in rows]
    h = (2 if net.algorithm == "valiant" else 1) * net.k
    S = h + net.payload_bits + 3
    assert doc["step_bit_times"] == S and doc["steps"] == net.steps == \
        (2 if net.algorithm == "valiant" else 1) * net.k * net.nodes
    assert doc["cycle_length_bits"] == net.steps * S + S + max(net.M, 2)
    assert doc["arrival_bit_time"] == S - 1
    assert doc["spec"]["buffer"] == net.buffer
    assert len(doc["node_modules"]) == 1
    text = (out / "hypercube.v").read_text()
    assert text.count(f"  {doc['node_modules'][0]['module']} node_") == net.nodes


@pytest.mark.parametrize("argv, param", [
    (["--algorithm", "ecube", "--buffer", "0"], "buffer must be an integer in [1, 16]"),
    (["--algorithm", "valiant", "--buffer", "17"], "buffer must be an integer in [1, 16]"),
    (["--algorithm", "ecube", "--steps", "0"], "steps must be an integer in [1, 65536]"),
    (["--algorithm", "ecube", "--order", "1,0,2"], "order must be left out for ecube"),
    (["--algorithm", "alg2", "--buffer", "2"], "buffer must be left out for alg2"),
    (["--algorithm", "alg1", "--steps", "9"], "steps must be left out for alg1"),
    (["--algorithm", "ecube", "--message-bits", "2"], "message-bits must be an integer in [3, "),
])
def test_bad_input_to_gen_and_sim_is_one_line_exit_2(argv, param, capsys, tmp_path):
    for verb, extra in (("gen", ["-o", str(tmp_path / "out")]),
                        ("sim", ["--pattern", "transpose", "--build-dir",
                                 str(tmp_path / "build")])):
        status = main([verb, "hypercube", "--dimension", "3", *argv, *extra])
        cap = capsys.readouterr()
        assert status == 2 and cap.out == "" and cap.err.count("\n") == 1 and \
            param in cap.err, (verb, cap.err)
    assert not (tmp_path / "out").exists() and not (tmp_path / "build").exists()


# ------------------------------------------------------------------ fatnet sim --waves
@pytest.mark.parametrize("algorithm", ["ecube", "valiant"])
def test_fatnet_sim_with_payloads_and_waves(algorithm, tmp_path, capsys):
    """A message file with payloads through ``fatnet sim --waves`` on Icarus: PASS; every
    signal the .gtkw shows is in the dump, and each destination's recv carries the
    file's payload after its destination bits, from the arrival the model gives."""
    require_simulator("icarus")
    from test_waves_decode import _windows
    from fatnet.sim.wavedecode import read_vcd
    k, B, seed = 3, 1, 9
    rng = np.random.default_rng(seed)
    dst = rng.permutation(1 << k)
    net = circuit(k, algorithm, buffer=B, steps=12,
                           seed=seed if algorithm == "valiant" else None)
    P = net.payload_bits
    payload = [int(p) for p in rng.integers(0, 1 << P, size=dst.size)]
    f = tmp_path / "messages.json"
    f.write_text(json.dumps({"messages": [[x, int(d), p] for x, (d, p) in
                                          enumerate(zip(dst, payload))]}))
    ms = MessageSet.from_pairs(np.arange(1 << k), dst, P, payload=payload)
    rep = net.run(ms, keep_results=True)
    waves = tmp_path / "waves"
    assert main(["sim", "hypercube", "--dimension", str(k), "--algorithm", algorithm,
                 "--buffer", str(B), "--steps", "12", "--seed", str(seed), "--messages",
                 str(f), "--sim", "icarus", "--waves", str(waves), "--build-dir",
                 str(tmp_path / "build")]) == 0
    out = capsys.readouterr().out
    assert "icarus: PASS" in out, out
    (vcd,) = waves.glob("*.vcd")
    (gtkw,) = waves.glob("*.gtkw")
    root = "hypercube_harness.hypercube"
    dump = read_vcd(vcd)
    shown = [ln for ln in gtkw.read_text().splitlines() if ln.startswith(root)]
    assert f"{root}.node_0.q0_full" in {p.split("[")[0] for p in shown}
    for path in shown:
        assert path.split("[")[0] in dump.vars, path
    windows = _windows(dump, root, net.cycle_length)
    assert len(windows) == rep.cycles
    for r, when in zip(rep.results, windows):
        for m in r.delivered:
            o = r.outcomes[m]
            wire = f"{root}.node__{int(ms.dst[m])}__recv"
            got = [int(dump.value_at(wire, when[o.arrival + 1 + k + j])) for j in range(P)]
            assert got == [(payload[m] >> (P - 1 - j)) & 1 for j in range(P)], (m, seed)
