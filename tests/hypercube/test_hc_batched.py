"""The hypercube's batched model engine equals the scalar one, message for message.

:mod:`fatnet.golden.hypercube.cyclebatch` against the scalar claim engine
(``engine="scalar"``, :func:`fatnet.golden.cycle.run_cycle` on the router chain, driven
by :func:`fatnet.golden.runner.drive_online`): the run report, and every cycle's outcomes
(status, path channel by channel with its bit-times and stream offsets, the
acknowledgment, where and why a message was lost), injections and waveforms, forward
and reverse; the bulk waveforms (:func:`~fatnet.golden.hypercube.cyclebatch.
expected_waves`) against the scalar cycles' waveforms. Algorithm 2's, e-cube's and
Valiant's cycles run on their scalar models under either engine: their runs are
compared too (the batched driver's queues and accounting).

The cases: those of the hardware tests (tests/hypercube/test_hc_hardware.py: random
partial permutations with a random order and message length, every pattern on the
4-cube, the collision worked by hand), and random cases drawn from one seed each
(Hypothesis draws the seeds, derandomised so the regression is repeatable); a failure
names the seed and the call that replays it.
"""

from __future__ import annotations

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from fatnet.golden.errors import FatnetInputError, ParameterError  # noqa: E402
from fatnet.golden.hypercube import alg1  # noqa: E402
from fatnet.golden.hypercube.api import circuit  # noqa: E402
from fatnet.golden.hypercube.cyclebatch import (  # noqa: E402
    DELIVERED, MAX_BATCH_MESSAGES, cycle_result, expected_waves, run_cycles,
    run_cycles_streamed)
from fatnet.golden.hypercube.patterns import PATTERNS, make_pattern  # noqa: E402
from fatnet.golden.messages import MessageSet  # noqa: E402
from test_hc_hardware import CASES, _order, messages  # noqa: E402

SEEDS = st.integers(0, 2 ** 32 - 1)
PROPERTY = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


def _replay(name: str, seed: int) -> str:
    return (f"seed {seed}; replay: python -c 'import sys; sys.path.insert(0, \"tests/hypercube\"); "
            f"import test_hc_batched as t; t.{name}({seed})'")


def assert_same_cycle(b, s, where: str) -> None:
    """Two cycle results are equal: outcomes in order, injections, waveforms."""
    assert list(b.outcomes) == list(s.outcomes), where
    for m in s.outcomes:
        assert b.outcomes[m] == s.outcomes[m], f"{where}, message {m}"
    assert b.injections == s.injections and b.length == s.length, where
    assert b.stuck == s.stuck and b.phantoms == s.phantoms, where
    for wb, ws in ((b.waveforms(), s.waveforms()), (b.ack_waveforms(), s.ack_waveforms())):
        assert wb.keys() == ws.keys(), where
        for key in ws:
            assert np.array_equal(wb[key], ws[key]), f"{where}, wire {key}"


def assert_same_run(net, ms, where: str, max_cycles: int = 1000) -> None:
    """Both engines' on-line runs: the same report and the same cycles."""
    batched = net.run(ms, keep_results=True, max_cycles=max_cycles, engine="batched")
    scalar = net.run(ms, keep_results=True, max_cycles=max_cycles, engine="scalar")
    assert batched.to_dict() == scalar.to_dict(), where
    assert (batched.retries, batched.lost) == (scalar.retries, scalar.lost), where
    assert len(batched.results) == len(scalar.results), where
    for c, (b, s) in enumerate(zip(batched.results, scalar.results)):
        assert_same_cycle(b, s, f"{where}, cycle {c}")


# ---------------------------------------------------------------------- the hardware tests' cases


@pytest.mark.parametrize("k,seed", CASES, ids=[f"k{k}-seed{s}" for k, s in CASES])
def test_random_partial_permutations_as_the_hardware_tests_draw_them(k, seed):
    rng = np.random.default_rng(seed)
    net = circuit(k, message_bits=k + 1 + int(rng.integers(0, 2 * k)), order=_order(k, seed))
    src, dst = alg1.random_partial_permutation(k, int(rng.integers(1, (1 << k) + 1)), rng)
    assert_same_run(net, messages(net, src, dst, seed), f"k={k} seed {seed}")


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("algorithm", ["alg1", "alg2", "ecube", "valiant"])
def test_every_pattern_on_the_4_cube(pattern, algorithm):
    """Every pattern, four problems at once (a node sends four messages, one a cycle);
    Algorithm 2 routes partial permutations only: its patterns one problem a cycle."""
    net = circuit(4, algorithm)
    src, dst = make_pattern(4, pattern, 5, problems=4)
    ms = messages(net, src, dst, 5)
    if algorithm == "alg2" and pattern in ("random-destinations", "hot-spot"):
        with pytest.raises(ParameterError) as batched:
            net.run(ms, engine="batched")
        with pytest.raises(ParameterError) as scalar:
            net.run(ms, engine="scalar")
        assert str(batched.value) == str(scalar.value)
        return
    assert_same_run(net, ms, f"{algorithm} {pattern} seed 5")


def test_the_collision_worked_by_hand():
    """2-cube: node 0 -> 1 and node 1 -> 3 tie for node 1's rank-1 register; node 0's
    (bit 0 = 0) keeps it, node 1's is lost at rank 0 and retried alone."""
    net = circuit(2)
    ms = messages(net, [0, 1], [1, 3], 0)
    arrays = run_cycles(net.chain, [0, 0], ms.src, ms.dst)
    assert arrays.status.tolist() == [DELIVERED, 1] and arrays.hops.tolist() == [2, 0]
    assert arrays.ack_time.tolist() == [6, -1]
    assert_same_run(net, ms, "by hand")


def test_max_cycles_leaves_the_rest_lost_in_the_scalar_drivers_order():
    net = circuit(3)
    src, dst = make_pattern(3, "hot-spot", 2, problems=8)
    ms = messages(net, src, dst, 2)
    assert_same_run(net, ms, "hot-spot, 3 cycles", max_cycles=3)
    assert net.run(ms, max_cycles=3).lost


def test_bad_messages_are_refused_as_the_scalar_engine_refuses_them():
    net = circuit(3)
    for src, dst, payload in (([0, 9], [1, 2], [0, 0]), ([0, 1], [1, -1], [0, 0]),
                              ([0, 1], [1, 2], [0, 1 << 40])):
        ms = MessageSet(np.array(src), np.array(dst), payload)
        with pytest.raises(FatnetInputError) as batched:
            net.run(ms, engine="batched")
        with pytest.raises(FatnetInputError) as scalar:
            net.run(ms, engine="scalar")
        assert str(batched.value) == str(scalar.value)
    with pytest.raises(ParameterError, match="engine must be one of batched, scalar"):
        net.run(messages(net, [0], [1], 0), engine="vector")


# ---------------------------------------------------------------------- random cases
def _alg1_case(seed: int):
    """A random Algorithm 1 circuit and messages (any map: sources repeat, so do
    destinations), and a bound on the cycles that sometimes cuts the run short; a
    third of the circuits of k >= 2 with 1 to 3 links stuck at 0 or 1 (and at most 12
    cycles: a message whose route holds a stuck link is lost in every cycle)."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 7))
    options = {"message_bits": k + 1 + int(rng.integers(0, 2 * k + 2)),
               "order": tuple(int(d) for d in rng.permutation(k))}
    m = int(rng.integers(0, 6 * (1 << k) + 1))
    src, dst = rng.integers(0, 1 << k, size=(2, m))
    max_cycles = int(rng.integers(1, 40)) if rng.integers(4) == 0 else 1000
    if k >= 2 and rng.integers(3) == 0:
        options["stuck_links"] = {(int(rng.integers(1, k)), int(rng.integers(1 << k)), 0):
                                  int(rng.integers(2)) for _ in range(rng.integers(1, 4))}
        max_cycles = min(max_cycles, 12)
    net = circuit(k, **options)
    return net, messages(net, src, dst, seed), max_cycles


def _planned_case(seed: int):
    """A random Algorithm 2, e-cube or Valiant circuit (link queues of 1 or 2 messages,
    sometimes fewer steps than a cycle needs) and rounds of partial permutations, a
    quarter of the time one destination twice (e-cube and Valiant make it wait;
    Algorithm 2 refuses a cycle with it)."""
    rng = np.random.default_rng(seed)
    algorithm = ("alg2", "ecube", "valiant")[int(rng.integers(3))]
    k = int(rng.integers(1, 5))
    n = 1 << k
    options = {} if algorithm == "alg2" else {
        "buffer": int(rng.integers(1, 3)),
        "steps": int(rng.integers(1, 3 * k + 1)) if rng.integers(3) == 0 else None}
    net = circuit(k, algorithm, message_bits=k + int(rng.integers(1, 2 * k + 1)), **options)
    count = int(rng.integers(0, 12))     # Algorithm 2: rounds of every node but the last
    rounds = [rng.permutation(n)[:n if algorithm == "alg2" and r < count - 1
                                 else int(rng.integers(1, n + 1))] for r in range(count)]
    src = np.concatenate([np.sort(r) for r in rounds] or [np.zeros(0, dtype=np.int64)])
    dst = np.concatenate([rng.permutation(n)[:r.size] for r in rounds]
                         or [np.zeros(0, dtype=np.int64)])
    if src.size and rng.integers(4) == 0:
        dst[int(rng.integers(src.size))] = dst[0]
    max_cycles = int(rng.integers(1, 30)) if rng.integers(3) == 0 else 200
    return net, messages(net, src, dst, seed), max_cycles


def _same_run_or_error(net, ms, where: str, max_cycles: int) -> None:
    """The same run on both engines, or the same one-line refusal."""
    try:
        net.run(ms, max_cycles=max_cycles, engine="scalar")
    except ParameterError as scalar:
        with pytest.raises(ParameterError) as batched:
            net.run(ms, max_cycles=max_cycles, engine="batched")
        assert str(batched.value) == str(scalar), where
        return
    assert_same_run(net, ms, where, max_cycles)


def check_online_run(seed: int) -> None:
    """One random on-line run on both engines: Algorithm 1 (:func:`_alg1_case`) and
    the others (:func:`_planned_case`)."""
    for case in (_alg1_case, _planned_case):
        net, ms, max_cycles = case(seed)
        _same_run_or_error(net, ms, f"{net!r}: {_replay('check_online_run', seed)}",
                           max_cycles)


@PROPERTY
@given(SEEDS)
def test_random_online_runs_are_equal(seed):
    check_online_run(seed)


def check_independent_cycles(seed: int) -> None:
    """Many independent cycles in one batch (random labels, one message per source and
    cycle): every cycle's result and the bulk waveforms equal the scalar cycles'."""
    net, _, _ = _alg1_case(seed)
    _check_cycles(net, np.random.default_rng(seed),
                  f"{net!r}: {_replay('check_independent_cycles', seed)}")


def _check_cycles(net, rng, why: str) -> None:
    """:func:`check_independent_cycles` on ``net``, the cycles drawn from ``rng``."""
    n = net.nodes
    cycles = int(rng.integers(1, 6))
    labels = rng.choice(1000, size=cycles, replace=False)
    sends = rng.random((cycles, n)) < rng.random()
    cycle = np.repeat(labels, sends.sum(axis=1))
    src = np.nonzero(sends)[1]
    dst = rng.integers(0, n, size=src.size)
    payload = rng.integers(0, 1 << min(net.payload_bits, 62), size=src.size).tolist()
    ms = MessageSet(src.astype(np.int64), dst.astype(np.int64), payload)
    arrays = run_cycles(net.chain, cycle, ms.src, ms.dst)
    forward, ack = expected_waves(net, cycle, ms.src, ms.dst, payload)
    for c, label in enumerate(np.unique(cycle)):   # the labels with a message
        idx = np.flatnonzero(cycle == label)
        scalar = net.simulate_cycle(ms, net.injections(ms, idx))
        assert_same_cycle(cycle_result(net, ms, idx, arrays.hops[idx], arrays.nodes[idx]),
                          scalar, f"{why}, cycle {c}")
        _assert_same_waves(net, forward[c], ack[c], scalar, f"{why}, cycle {c}")


def _assert_same_waves(net, forward, ack, scalar, where: str) -> None:
    """The bulk arrays of one cycle hold the scalar waveforms, zeros elsewhere."""
    for bulk, waves in ((forward, scalar.waveforms()), (ack, scalar.ack_waveforms())):
        want = np.zeros_like(bulk)
        for (_, r, x, _wire), wave in waves.items():
            want[r, x] = wave
        assert np.array_equal(bulk, want), where


@PROPERTY
@given(SEEDS)
def test_random_independent_cycles_are_equal(seed):
    check_independent_cycles(seed)


# ---------------------------------------------------------------------- the batch's rules
def test_a_batch_refuses_two_messages_from_one_node_in_one_cycle():
    net = circuit(3)
    with pytest.raises(ParameterError, match="at most one message in a cycle"):
        run_cycles(net.chain, [4, 4], [2, 2], [0, 1])
    with pytest.raises(ParameterError, match="at most"):
        run_cycles(net.chain, np.zeros(MAX_BATCH_MESSAGES + 1, dtype=np.int64),
                   np.zeros(MAX_BATCH_MESSAGES + 1, dtype=np.int64),
                   np.zeros(MAX_BATCH_MESSAGES + 1, dtype=np.int64))


def test_streamed_batches_equal_one_batch():
    """Cut into batches of a few messages, on cycle boundaries, the arrays are the
    same; a cycle larger than a batch goes alone."""
    net = circuit(4)
    rng = np.random.default_rng(3)
    cycle = np.repeat(np.arange(40), 16)
    src = np.tile(np.arange(16), 40)
    dst = rng.integers(0, 16, size=src.size)
    whole = run_cycles(net.chain, cycle, src, dst)
    for batch in (5, 16, 37, 10 ** 6):
        parts = run_cycles_streamed(net.chain, cycle, src, dst, batch=batch)
        for name in ("status", "hops", "nodes", "ack_time"):
            assert np.array_equal(getattr(parts, name), getattr(whole, name)), (batch, name)
    with pytest.raises(ParameterError, match="cycle must be sorted"):
        run_cycles_streamed(net.chain, cycle[::-1], src, dst)


def test_sparse_cycle_labels_take_the_same_claims():
    """Few messages in many cycles (one flag per register used, not per cycle and
    node): the same outcomes as the cycles one by one."""
    net = circuit(10)
    rng = np.random.default_rng(4)
    cycle = np.repeat(np.arange(3000), 2)
    low = rng.integers(0, 512, size=3000) * 2
    src = np.stack([low, low + 1], axis=1).reshape(-1)
    dst = rng.integers(0, 1024, size=src.size)
    whole = run_cycles(net.chain, cycle, src, dst)
    # neighbours across dimension 0 tie at rank 0 when one crosses and the other stays:
    # half the cycles (1,500 expected, standard deviation 27), one message lost in each
    assert 1300 < np.count_nonzero(whole.status != DELIVERED) < 1700
    for c in range(0, 3000, 97):
        one = run_cycles(net.chain, [0, 0], src[2 * c:2 * c + 2], dst[2 * c:2 * c + 2])
        assert np.array_equal(one.hops, whole.hops[2 * c:2 * c + 2]), c


# ---------------------------------------------------------------------- stuck links
@pytest.mark.parametrize("links", [{(2, 5, 0): 0}, {(1, 6, 0): 1, (2, 4, 0): 1, (3, 9, 0): 0}],
                         ids=["at-0", "at-1"])
def test_stuck_links_on_both_engines(links):
    """A chain with stuck links (the co-simulation's: at 1, node 6's phantom is lost on
    the second link, whose phantom acknowledges it): the batched on-line run and
    independent cycles (their arrays, results and waveforms) are the scalar ones,
    phantoms included; the loss reasons are both kinds."""
    net = circuit(4, stuck_links=links)
    src, dst = make_pattern(4, "random-permutation", 9, problems=3)
    ms = messages(net, src, dst, 9)
    assert_same_run(net, ms, f"stuck links {links}, seed 9", max_cycles=12)
    run = net.run(ms, keep_results=True, max_cycles=12)
    assert run.lost and all(r.stuck == {("rank", *k): v for k, v in links.items()}
                            for r in run.results)
    assert any(r.phantoms for r in run.results) == (1 in links.values())
    reasons = {o.lost_at[3] for r in run.results for o in r.outcomes.values() if o.lost_at}
    assert {w.split(" at ")[0] for w in reasons} >= {"its wire is stuck"}, reasons
    for seed in range(4):
        _check_cycles(net, np.random.default_rng(seed), f"stuck links {links}, seed {seed}")
    # the testbench's batches (the self-test's outcome table) are its cycles one by one
    from fatnet.sim import hypercube as hooks
    from fatnet.sim.family import cycles_one_by_one
    cycle = np.repeat(np.arange(8), 16)
    src = np.tile(np.arange(16), 8)
    dst = (src + np.random.default_rng(5).integers(1, 16, size=src.size)) % 16  # not src
    batch, one = hooks.run_cycles(net, cycle, src, dst), cycles_one_by_one(
        hooks, net, cycle, src, dst)
    for name in ("delivered", "recv_wire", "ack_time"):
        assert np.array_equal(getattr(batch, name), getattr(one, name)), (links, name)


@pytest.mark.parametrize("k,rank,order", [(3, 1, (0, 1, 2)), (4, 2, (2, 0, 3, 1))])
def test_a_phantom_crosses_every_dimension_and_acknowledges_what_it_meets(k, rank, order):
    """docs/hypercube.md, Stuck links: a link at 1 into node x's rank-R router feeds a
    phantom delivered to x xor the bits order[R ..] at 2(k - R), acknowledged at
    3(k - R); a message lost on the link is acknowledged at max(A, 2R) + R; at 0 never."""
    x = 5
    src, dst = x ^ sum(1 << d for d in order[:rank]), x   # at node x from rank R on
    for value in (0, 1):
        net = circuit(k, order=order, stuck_links={(rank, x, 0): value})
        ms = messages(net, np.array([src]), np.array([dst]), 1)
        res = net.simulate_cycle(ms, net.injections(ms, [0]))
        o = res.outcomes[0]
        assert o.status == "lost" and o.path[-1].key == ("rank", rank, x, 0), o.lost_at
        if value == 0:
            assert not res.phantoms and o.ack_time is None
            continue
        (p,) = res.phantoms.values()
        y = x ^ sum(1 << d for d in order[rank:])
        assert p.status == "delivered" and p.path[-1].key == ("rank", k, y, 0)
        assert (p.arrival, p.ack_time) == (2 * (k - rank), 3 * (k - rank))
        assert o.ack_time == max(p.ack_time, 2 * rank) + rank
