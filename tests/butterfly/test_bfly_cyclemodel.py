"""The butterfly family's cycle-exact bit-serial model: timing, conservation, faults,
acceptance against the exact recursion for independent uniform destinations."""

from collections import Counter

import numpy as np
import pytest

from fatnet.golden.butterfly.cyclemodel import CircuitNetwork, run_circuit, simulate_cycle
from fatnet.golden.butterfly.topology import make_network
from fatnet.golden.errors import ParameterError
from fatnet.golden.messages import MessageSet



def circuit(entry, seed=3, payload_bits=6):
    kind, n, d, modified = entry
    return CircuitNetwork(make_network(kind, n, d, modified=modified, seed=seed), payload_bits)


def random_set(n, seed, payload_bits=6, count=None):
    rng = np.random.default_rng(seed)
    count = n if count is None else count
    return MessageSet.from_pairs(np.arange(count) % n, rng.integers(0, n, count),
                                 payload_bits, seed)


def test_single_message_zero_load_latency_and_acknowledgment(bfly_network, bfly_catalogue):
    name = bfly_network
    c = circuit(bfly_catalogue[name])
    n = c.n_inputs
    for src, dst in ((0, n - 1), (n - 1, 0), (n // 2, n // 3)):
        ms = MessageSet.from_pairs([src], [dst], c.payload_bits, payload=[0b101101])
        o = simulate_cycle(c, ms, [0]).outcomes[0]
        assert o.status == "delivered" and o.delivered_payload == 0b101101
        assert o.path[-1].channel == (c.depth, dst)
        # one register per level; the header shrinks by the bits each level strips
        assert o.arrival == c.header_bits + c.depth == 2 * c.network.n
        last_payload_bit = o.arrival + c.payload_bits
        message_bits = 1 + c.header_bits + c.payload_bits
        assert last_payload_bit + 1 == c.depth + message_bits
        assert o.ack_time == o.arrival + c.depth
        assert o.ack_time <= c.cycle_length and last_payload_bit < c.cycle_length


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_cycle_uses_each_wire_once_and_delivers_payloads(bfly_network, bfly_catalogue, seed):
    name = bfly_network
    c = circuit(bfly_catalogue[name], seed=seed)
    ms = random_set(c.n_inputs, seed)
    res = simulate_cycle(c, ms, range(len(ms)))
    why = f"{name} seed {seed}"
    owners = Counter((*occ.channel, occ.wire) for o in res.outcomes.values() for occ in o.path)
    assert max(owners.values()) == 1, why
    waves, acks = res.waveforms(), res.ack_waveforms()
    for m, o in res.outcomes.items():
        assert o.status in ("delivered", "lost"), why
        if o.status == "delivered":
            assert o.delivered_payload == ms.payload[m], why
            assert o.path[-1].channel == (c.depth, ms.dst[m]), why
            for occ in o.path:  # the stream is on the wire from its M bit, ack rises back
                key = (*occ.channel, occ.wire)
                assert waves[key][occ.time] == 1 and waves[key][:occ.time].sum() == 0, why
                assert acks[key][-1] == 1, why
        else:
            assert o.lost_at is not None and "taken" in o.lost_at[3], why


def test_runs_with_retries_deliver_every_message_exactly_once(bfly_network, bfly_catalogue):
    name = bfly_network
    c = circuit(bfly_catalogue[name])
    ms = random_set(c.n_inputs, 7, count=3 * c.n_inputs)  # three messages per input
    report = run_circuit(c, ms, keep_results=True)
    delivered = Counter(m for r in report.results for m in r.with_status("delivered"))
    assert sorted(delivered) == list(range(len(ms))) and set(delivered.values()) == {1}
    assert report.delivered == len(ms) and not report.lost
    assert report.retries == sum(len(r.lost) for r in report.results)


def test_unreachable_messages_are_reported_lost_not_dropped():
    c = circuit(("butterfly", 16, 1, False))
    # every input sends to output 0 four times: at most 2 per cycle can arrive
    ms = MessageSet.from_pairs(np.arange(64) % 16, np.zeros(64, dtype=int), c.payload_bits, 0)
    report = run_circuit(c, ms, max_cycles=5)
    assert report.delivered + len(report.lost) == len(ms)
    assert report.delivered == 2 * report.cycles and report.cycles == 5


def test_edges_into_blocked_switches_are_never_taken():
    c = circuit(("multibutterfly", 32, 2, False), seed=5)
    rng = np.random.default_rng(11)
    blocked = np.zeros_like(c.blocked)
    blocked[1:-1] = rng.random(blocked[1:-1].shape) < 0.15
    c.blocked = blocked
    ms = random_set(c.n_inputs, 4)
    res = simulate_cycle(c, ms, range(len(ms)))
    for o in res.outcomes.values():
        for occ in o.path[1:]:
            assert not blocked[occ.channel], (o.message, occ)
    assert res.with_status("delivered"), "some message should still get through"


def _acceptance_recursion(n: int) -> float:
    """Expected fraction delivered, N = 2^n rows of the (row, level) butterfly, one
    message per input to independent uniform outputs: a level-0 switch has one
    message and two edges; every later switch has two input edges, each busy with
    probability q, and an output edge is busy with probability 1 - (1 - q/2)^2; an
    output row absorbs what its two edges bring."""
    q = 0.5
    for _ in range(n - 1):
        q = 1 - (1 - q / 2) ** 2
    return q


@pytest.mark.parametrize("n", [4, 6])
def test_butterfly_acceptance_matches_the_exact_recursion(n):
    N = 1 << n
    c = CircuitNetwork(make_network("butterfly", N, 1), 0)
    fractions = []
    for t in range(200):
        ms = MessageSet.from_pairs(np.arange(N), np.random.default_rng(t).integers(0, N, N), 0, t)
        res = simulate_cycle(c, ms, range(N))
        fractions.append(len(res.with_status("delivered")) / N)
    # N output rows x 2 edges, each busy with probability q: 2 q N of the N messages
    expected = 2 * _acceptance_recursion(n)
    mean, err = np.mean(fractions), np.std(fractions) / np.sqrt(len(fractions))
    assert abs(mean - expected) < 4 * err + 1e-3, (mean, expected, err)


def test_two_messages_from_one_input_in_one_cycle_are_refused():
    c = circuit(("butterfly", 16, 1, False))
    ms = MessageSet.from_pairs([3, 3], [1, 2], c.payload_bits, 0)
    with pytest.raises(ParameterError, match="input 3 already sends"):
        simulate_cycle(c, ms, [0, 1])


def test_bad_payload_width_is_one_clear_error():
    with pytest.raises(ParameterError, match=r"payload_bits must be an integer in \[0, 1024\]"):
        CircuitNetwork(make_network("butterfly", 8, 1), -1)


@pytest.mark.parametrize("seed", [0, 1])
def test_vectorised_one_cycle_model_agrees_with_the_cycle_exact_one(bfly_network, bfly_catalogue,
                                                                    seed):
    """circuit.one_cycle_acceptance with wire-order arbitration (the experiments' fast
    model) delivers exactly the messages the bit-serial model delivers, faults included
    (inputs the faults cut off send nothing: the fast model leaves them out)."""
    from fatnet.golden.butterfly import faults as fl
    from fatnet.golden.butterfly.circuit import one_cycle_acceptance
    name = bfly_network
    kind, n, d, modified = bfly_catalogue[name]
    net = make_network(kind, n, d, modified=modified, seed=seed)
    net = fl.apply_faults(net, fl.random_faults(net, n // 4, rng=np.random.default_rng(seed)))
    c = CircuitNetwork(net, 2)
    dst = np.random.default_rng(100 + seed).integers(0, n, n)
    live = np.flatnonzero(~net.blocked()[0])
    ms = MessageSet.from_pairs(np.arange(n), dst, 2, seed)
    exact = simulate_cycle(c, ms, live)
    fast = one_cycle_acceptance(net, np.where(net.blocked()[0], -1, dst), arbitration="wire")
    assert sorted(np.flatnonzero(fast["delivered_mask"][0])) == exact.with_status("delivered"), \
        f"{name} seed {seed}"
