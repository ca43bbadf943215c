"""The batched model engines equal their references, message for message.

* The cycle-exact circuit model: :mod:`fatnet.golden.butterfly.cyclebatch` against the
  scalar claim engine (``engine="scalar"``): the run report, and every cycle's outcomes
  (status, path wire by wire with its bit-times and stream offsets, acknowledgment,
  where and why a message was lost), injections, stuck wires, phantoms and waveforms.
* Store-and-forward: streaming the messages that wait at the inputs against routing
  every message in every step (``stream_inputs=False``).

Each random case is drawn from one seed (Hypothesis draws the seeds, derandomised so
the regression is repeatable); a failure names the seed and the call that replays it.
"""

from __future__ import annotations

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from fatnet.golden.butterfly import api as bf  # noqa: E402
from fatnet.golden.butterfly import faults as fl  # noqa: E402
from fatnet.golden.butterfly.cyclebatch import (  # noqa: E402
    BatchedCircuit, cycle_result, run_cycles_streamed, terminal_waves)
from fatnet.golden.butterfly.cyclemodel import run_circuit, run_masked, simulate_cycle  # noqa: E402
from fatnet.golden.butterfly.patterns import PATTERNS, make_problems  # noqa: E402
from fatnet.golden.butterfly.store_forward import (  # noqa: E402
    EDGE_CHOICES, QUEUES, TIES, Rules, route_store_forward)
from fatnet.golden.butterfly.topology import make_network  # noqa: E402
from fatnet.golden.errors import ParameterError  # noqa: E402
from fatnet.golden.seeds import generator  # noqa: E402

SEEDS = st.integers(0, 2 ** 32 - 1)
PROPERTY = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


def _replay(name: str, seed: int) -> str:
    return (f"seed {seed}; replay: python -c 'import sys; sys.path.insert(0, \"tests/butterfly\"); "
            f"import test_bfly_batched as t; t.{name}({seed})'")


def assert_same_report(batched, scalar, where: str) -> None:
    """Both run reports and every cycle's results are equal, waveforms included."""
    assert batched.to_dict() == scalar.to_dict(), where
    assert batched.masks == scalar.masks, where
    assert len(batched.results) == len(scalar.results), where
    for c, (b, s) in enumerate(zip(batched.results, scalar.results)):
        assert_same_cycle(b, s, f"{where}, cycle {c}")


def assert_same_cycle(b, s, where: str) -> None:
    assert list(b.outcomes) == list(s.outcomes), where
    for m in s.outcomes:
        assert b.outcomes[m] == s.outcomes[m], f"{where}, message {m}"
    assert b.injections == s.injections, where
    assert b.stuck == s.stuck and b.phantoms == s.phantoms, where
    for wb, ws in ((b.waveforms(), s.waveforms()), (b.ack_waveforms(), s.ack_waveforms())):
        assert wb.keys() == ws.keys(), where
        for key in ws:
            assert np.array_equal(wb[key], ws[key]), f"{where}, wire {key}"


# ---------------------------------------------------------------------- cases
def _spec(rng) -> bf.ButterflySpec:
    """A random network spec, with faults in one placement (which may reach inputs:
    their messages are routed all the same) half of the time from 8 inputs on."""
    kind = ["butterfly", "dilated-butterfly", "multibutterfly"][rng.integers(3)]
    inputs = int(2 ** rng.integers(2, 6))
    modified = kind == "multibutterfly" and inputs >= 8 and bool(rng.integers(2))
    d = 1 if kind == "butterfly" else int(rng.integers(2, 4))
    seed = int(rng.integers(1000))
    if inputs >= 8 and rng.integers(2):
        return bf.spec_from_options(kind, inputs, d, faults=int(rng.integers(1, 4)),
                                    modified=modified, seed=seed, replace_faults=False,
                                    fault_rule="all" if modified else "half")
    return bf.spec_from_options(kind, inputs, d, modified=modified, seed=seed)


def _stuck(rng, circuit) -> dict:
    """Up to three random stuck links (levels 1 .. depth - 1)."""
    out: dict = {}
    for _ in range(int(rng.integers(0, 4)) if circuit.depth > 1 else 0):
        level = int(rng.integers(1, circuit.depth))
        row = int(rng.integers(circuit.n_inputs))
        degree = int(circuit.in_degree[level, row])
        if degree:
            out[(level, row, int(rng.integers(degree)))] = int(rng.integers(2))
    return out


def _circuit(rng):
    spec = _spec(rng)
    bare = bf.build_circuit(spec)
    return bf.build_circuit(spec, payload_bits=int(rng.integers(0, 10)),
                            link_stages=int(rng.integers(0, 3)), stuck_wires=_stuck(rng, bare))


def check_online(seed: int) -> None:
    """One random network, pattern and cycle budget: batched == scalar."""
    rng = np.random.default_rng(seed)
    circuit = _circuit(rng)
    pattern = PATTERNS[rng.integers(len(PATTERNS))]
    ms = bf.pattern_messages(circuit, pattern, int(rng.integers(1, 5)),
                             seed=int(rng.integers(1000)))
    max_cycles = int(rng.integers(1, 40))
    where = _replay("check_online", seed)
    assert_same_report(run_circuit(circuit, ms, True, max_cycles),
                       run_circuit(circuit, ms, True, max_cycles, engine="scalar"), where)


def check_masked(seed: int) -> None:
    """Run-time fault masks, one per cycle then the last: batched == scalar."""
    rng = np.random.default_rng(seed)
    circuit = _circuit(rng)
    if circuit.depth < 2:
        circuit = bf.build_circuit(bf.spec_from_options("butterfly", 8))
    shape = (circuit.depth - 1, circuit.n_inputs)
    masks = [None if rng.integers(3) == 0 else rng.random(shape) < 0.15
             for _ in range(int(rng.integers(1, 4)))]
    ms = bf.pattern_messages(circuit, "random-destinations", int(rng.integers(1, 4)),
                             seed=int(rng.integers(1000)))
    where = _replay("check_masked", seed)
    assert_same_report(run_masked(circuit, ms, masks, 30),
                       run_masked(circuit, ms, masks, 30, engine="scalar"), where)


def _independent_cycles(rng) -> tuple:
    """A random network and a few full-load cycles of random destinations, some inputs
    idle in some cycles: (circuit, cycles, messages, the indices of those sent)."""
    circuit = _circuit(rng)
    cycles = int(rng.integers(1, 6))
    ms = bf.pattern_messages(circuit, "random-destinations", cycles,
                             seed=int(rng.integers(1000)))
    return circuit, cycles, ms, np.flatnonzero(rng.random(len(ms)) < 0.8)


def check_independent_cycles(seed: int) -> None:
    """Many independent cycles in batches of a few messages: each cycle equals the
    scalar engine's run of it alone."""
    rng = np.random.default_rng(seed)
    circuit, cycles, ms, idx = _independent_cycles(rng)
    label = idx // circuit.n_inputs
    bc = BatchedCircuit(circuit)
    arrays = run_cycles_streamed(bc, label, ms.src[idx], ms.dst[idx],
                                 batch=int(rng.integers(1, 2 * circuit.n_inputs)))
    where = _replay("check_independent_cycles", seed)
    for c in range(cycles):
        at = np.flatnonzero(label == c)
        assert_same_cycle(cycle_result(bc, ms, idx[at], arrays, at),
                          simulate_cycle(circuit, ms, idx[at]), f"{where}, cycle {c}")


def assert_same_terminal_waves(waves, results, ms, idx, where: str) -> None:
    """Bulk terminal waves (cycle ``c`` of ``waves``; messages ``idx`` in order) == the
    scalar ``results[c]``'s injections and waveforms at every terminal wire (zeros where
    it has no key) and deliveries."""
    assert waves.drive.shape[0] == len(results), where
    delivered = [m for res in results for m in sorted(res.outcomes)
                 if res.outcomes[m].status == "delivered"]
    assert sorted(idx[waves.delivered]) == sorted(delivered), where
    for c, res in enumerate(results):
        drive = np.zeros(waves.drive.shape[1:], dtype=np.uint8)
        for m, (w, bits) in res.injections.items():
            drive[:len(bits), int(ms.src[m]), w] = bits[:drive.shape[0]]
        assert np.array_equal(waves.drive[c], drive), f"{where}, cycle {c}, drive"
        for name, got, channel, scalar in (
                ("recv", waves.recv[c], waves.recv_channel, res.waveforms()),
                ("send_ack", waves.send_ack[c], waves.send_channel, res.ack_waveforms())):
            for x in range(got.shape[1]):
                for w in range(got.shape[2]):
                    want = scalar.get((*channel, x, w), np.zeros(got.shape[0], np.uint8))
                    assert np.array_equal(got[:, x, w], want), \
                        f"{where}, cycle {c}, {name} of terminal {x} wire {w}"


def check_terminal_waves(seed: int) -> None:
    """Independent cycles (some inputs idle, stuck wires, link stages) in bulk: every
    terminal wire of every cycle equals the scalar engine's run of that cycle alone."""
    circuit, _, ms, idx = _independent_cycles(np.random.default_rng(seed))
    label = idx // circuit.n_inputs * 3 + 1     # any labels, in order
    waves = terminal_waves(BatchedCircuit(circuit), label, ms.src[idx], ms.dst[idx],
                           [ms.payload[i] for i in idx.tolist()])
    results = [simulate_cycle(circuit, ms, idx[label == c]) for c in np.unique(label)]
    assert_same_terminal_waves(waves, results, ms, idx, _replay("check_terminal_waves", seed))


def check_store_forward(seed: int) -> None:
    """Random network, faults, problems (some inputs idle) and rules: streaming the
    inputs' queues == routing every message every step."""
    rng = np.random.default_rng(seed)
    kind = ["butterfly", "dilated-butterfly", "multibutterfly"][rng.integers(3)]
    inputs = int(2 ** rng.integers(3, 6))
    modified = kind == "multibutterfly" and bool(rng.integers(2))
    net = make_network(kind, inputs, modified=modified, seed=int(rng.integers(1000)))
    if modified:
        fmap = fl.propagate(net, fl.random_faults(net, int(rng.integers(0, 4)),
                                                  rng=generator(seed, "faults")))
        net = net if fmap.reaches_inputs else net.with_faults(fmap)
    problems = make_problems("random-destinations", inputs, int(rng.integers(1, 30)),
                             seed=int(rng.integers(1000)))
    blocked = net.blocked()
    idle = (rng.random(problems.shape) < 0.2) | blocked[0][None, :] | blocked[-1][problems]
    problems = np.where(idle, -1, problems)
    rules = Rules(threshold=int(rng.integers(0, 6)), queue=QUEUES[rng.integers(len(QUEUES))],
                  edge_choice=EDGE_CHOICES[rng.integers(len(EDGE_CHOICES))],
                  tie=TIES[rng.integers(len(TIES))])
    streamed = route_store_forward(net, problems, rules, seed=seed % 1000)
    every = route_store_forward(net, problems, rules, seed=seed % 1000, stream_inputs=False)
    where = _replay("check_store_forward", seed)
    for name in ("steps", "messages", "delivered", "undelayed", "delivery_step",
                 "waits_by_level"):
        assert np.array_equal(getattr(streamed, name), getattr(every, name)), \
            f"{name}: {where}"


# ---------------------------------------------------------------------- tests
@pytest.mark.parametrize("link_stages", [0, 2])
def test_catalogue_networks_run_alike(bfly_network, bfly_catalogue, link_stages):
    kind, inputs, d, modified = bfly_catalogue[bfly_network]
    circuit = bf.build_circuit(bf.spec_from_options(kind, inputs, d, modified=modified),
                               payload_bits=4, link_stages=link_stages,
                               stuck_wires={(1, 2, 0): 1, (2, 5, 0): 0})
    for pattern in ("random-permutation", "hot-spot", "transpose"):
        ms = bf.pattern_messages(circuit, pattern, 2, seed=7)
        assert_same_report(run_circuit(circuit, ms, True, max_cycles=6),
                           run_circuit(circuit, ms, True, 6, engine="scalar"),
                           f"{bfly_network}, {pattern}")


def test_faults_and_losses_run_alike():
    """A faulty network whose budget runs out: retries, losses, the lost list."""
    spec = bf.spec_from_options("multibutterfly", 32, 2, faults=6, modified=True, seed=3)
    circuit = bf.build_circuit(spec, payload_bits=3, stuck_wires={(2, 4, 1): 1})
    ms = bf.pattern_messages(circuit, "hot-spot", 4, seed=1)
    batched = run_circuit(circuit, ms, True, max_cycles=5)
    assert batched.lost and batched.retries      # the case exercises both
    assert_same_report(batched, run_circuit(circuit, ms, True, 5, engine="scalar"), "faulty")


def test_messages_outside_the_network_are_refused_alike():
    circuit = bf.build_circuit(bf.spec_from_options("butterfly", 8))
    ms = bf.pattern_messages(circuit, "random-permutation", 1)
    ms.dst[3] = 8
    for engine in ("batched", "scalar"):
        with pytest.raises(ParameterError, match="destination must be an output"):
            run_circuit(circuit, ms, engine=engine)


def test_two_messages_of_one_input_in_one_cycle_are_refused():
    bc = BatchedCircuit(bf.build_circuit(bf.spec_from_options("butterfly", 8)))
    with pytest.raises(ParameterError, match="at most one message in a cycle"):
        run_cycles_streamed(bc, [0, 0, 1], [3, 3, 3], [1, 2, 4])


def test_unknown_engine_is_refused():
    circuit = bf.build_circuit(bf.spec_from_options("butterfly", 8))
    ms = bf.pattern_messages(circuit, "random-permutation", 1)
    with pytest.raises(ParameterError, match="engine must be one of batched, scalar"):
        run_circuit(circuit, ms, engine="fast")


@PROPERTY
@given(SEEDS)
def test_online_runs_alike(seed):
    check_online(seed)


@PROPERTY
@given(SEEDS)
def test_masked_runs_alike(seed):
    check_masked(seed)


@PROPERTY
@given(SEEDS)
def test_independent_cycles_run_alike(seed):
    check_independent_cycles(seed)


@PROPERTY
@given(SEEDS)
def test_terminal_waves_equal_the_scalar_cycles(seed):
    check_terminal_waves(seed)


@PROPERTY
@given(SEEDS)
def test_store_forward_streams_alike(seed):
    check_store_forward(seed)
