"""The deadlock check of the store-and-forward configurations
(golden/hypercube/deadlock.py): the channel-dependence graph built from the simulator's
own crossing rule, acyclic for e-cube and for Valiant through a buffer or a barrier, with
a cycle for Valiant straight on in shared queues; the cycle found deadlocks the
simulator, the hardware's model and the RTL when its queues are filled; a graph made
cyclic by one wrong dependence is caught."""

import numpy as np
import pytest

from fatnet.api.registry import family_of
from fatnet.golden.errors import ParameterError
from fatnet.golden.hypercube import store_forward as sf
from fatnet.golden.hypercube.api import circuit
from fatnet.golden.hypercube.deadlock import (MAX_DEADLOCK_DIMENSION, LinkQueue,
                                              StoreForwardConfig, check_deadlock,
                                              dependence_graph, find_cycle)
from fatnet.golden.messages import MessageSet

STRAIGHT_ON = {"algorithm": "valiant", "intermediate_buffer": False}


def _edges(k, **config):
    return set(dependence_graph(StoreForwardConfig(k, **config)).edges)


def _cycle_run(verdict, copies, engine="batched"):
    """The simulator on ``copies`` messages per dependence of the verdict's cycle: each
    from its queue's node, bound for the witness's target (Valiant: its intermediate
    node) and destination, so that it starts in that queue, its head waiting for the
    next queue."""
    deps = verdict.cycle.dependences
    src = np.repeat([d.queue.node for d in deps], copies)
    inter = np.repeat([d.target for d in deps], copies)
    dst = np.repeat([d.destination for d in deps], copies)
    run = sf.route(verdict.config.k, src, dst, intermediate=inter, engine=engine,
                   **verdict.config.route_options())
    return src, run


# ------------------------------------------------------------------ acyclic
@pytest.mark.parametrize("k", range(2, 7))
def test_ecube_is_acyclic_every_dependence_up_a_dimension(k):
    v = check_deadlock(k, "ecube", buffer=1)
    assert v.acyclic and v.deadlock_free and v.cycle is None
    assert v.queues == k << k
    edges = _edges(k, algorithm="ecube", buffer=1)
    # a head in (x, i) crosses to x ^ 2^i and wants a higher dimension there (the
    # store_forward docstring's argument), every higher one for some destination
    assert all(b.node == a.node ^ (1 << a.dimension) and b.dimension > a.dimension
               for a, b in edges)
    assert len(edges) == v.dependences == (1 << k) * k * (k - 1) // 2
    assert v.line() == (f"deadlock: free (channel-dependence graph acyclic, {k << k} "
                        f"queues, {v.dependences} dependences)")


@pytest.mark.parametrize("k", range(1, 6))
@pytest.mark.parametrize("config", [{"barrier": True}, {"intermediate_buffer": True}],
                         ids=["barrier", "intermediate-buffer"])
def test_valiant_through_a_buffer_or_a_barrier_has_ecubes_graph(k, config):
    """Reaching the intermediate node a message waits in an unbounded buffer or hold,
    which no head waits for: what is left are e-cube's dependences."""
    v = check_deadlock(k, "valiant", buffer=2, **config)
    assert v.acyclic and v.deadlock_free
    assert _edges(k, algorithm="valiant", buffer=2, **config) == _edges(k, buffer=2)


# ------------------------------------------------------------------ the cycle
@pytest.mark.parametrize("k", range(1, 6))
def test_valiant_straight_on_in_shared_queues_has_a_cycle(k):
    v = check_deadlock(k, buffer=1, **STRAIGHT_ON)
    assert not v.acyclic and not v.deadlock_free
    # at its intermediate node y = x ^ 2^i a head goes on across any dimension
    assert v.dependences == k * k << k
    queues = v.cycle.queues
    assert len(set(queues)) == len(queues) >= 2
    for d, after in zip(v.cycle.dependences, v.cycle.dependences[1:] + v.cycle.dependences[:1]):
        assert d.waits_for == after.queue
        # the witness, through the simulator's rule: in d.queue, in transit to waits_for
        link = d.queue.node * k + d.queue.dimension
        assert sf.queue_of(k, np.array([d.queue.node]), np.array([d.target]))[0] == link
        hop = sf.next_queues(k, [link], [d.target], [d.destination],
                             intermediate_buffer=False)
        assert hop.transit[0] and divmod(int(hop.next_q[0]), k) == d.waits_for
    assert v.line().startswith(f"deadlock: possible: cycle {queues[0]} -> ")
    assert v.line().count(" -> ") == len(queues)


@pytest.mark.parametrize("engine", ["batched", "scalar"])
@pytest.mark.parametrize("k", range(2, 6))
@pytest.mark.parametrize("B", [1, 2, 3])
def test_the_cycle_filled_deadlocks_the_simulator(k, B, engine):
    v = check_deadlock(k, buffer=B, **STRAIGHT_ON)
    src, run = _cycle_run(v, B, engine)
    assert run.deadlock and run.stopped == "deadlock"
    assert run.delivered == 0 and run.steps_run == 0         # nothing ever moved
    assert (run.final == src).all()


@pytest.mark.parametrize("k", range(2, 6))
@pytest.mark.parametrize("B", [2, 3])
def test_the_cycle_one_message_short_of_full_drains(k, B):
    """The deadlock needs the cycle's queues full: one place free in each, the heads
    move together (a queue's room is counted at the step's start)."""
    v = check_deadlock(k, buffer=B, **STRAIGHT_ON)
    _, run = _cycle_run(v, B - 1)
    assert run.stopped == "delivered" and run.delivered == run.messages


@pytest.mark.parametrize("k", [2, 4])
def test_unbounded_queues_are_free_though_the_graph_has_the_cycle(k):
    v = check_deadlock(k, **STRAIGHT_ON)
    assert v.deadlock_free and not v.acyclic
    assert v.line().startswith("deadlock: free (unbounded link queues")
    _, run = _cycle_run(v, 5)
    assert run.stopped == "delivered" and run.delivered == run.messages


def test_the_baselines_the_docstring_argues_free_are_acyclic(hc_safe_baseline,
                                                             hc_baselines):
    assert check_deadlock(4, **hc_baselines[hc_safe_baseline]).deadlock_free


def test_every_baseline_is_free_or_its_cycle_deadlocks(hc_baseline, hc_baselines):
    kw = hc_baselines[hc_baseline]
    v = check_deadlock(3, **kw)
    if not v.deadlock_free:
        _, run = _cycle_run(v, kw["buffer"])
        assert run.deadlock, hc_baseline


# ------------------------------------------------------------------ the hardware
def test_the_hardwares_valiant_deadlocks_on_the_cycle_and_ecube_is_free():
    """The configuration of the RTL deadlock test (test_hc_ecube_hw.py,
    test_valiant_deadlocks_where_the_model_does: Valiant, k = 4, B = 1, straight on):
    the cycle's messages lose every message in a deadlock in the hardware's model, and
    the RTL does the same on every wire."""
    from fatnet.sim.amaranth_bench import run_cycles_amaranth

    assert circuit(4, "ecube", buffer=1).deadlock().deadlock_free
    net = circuit(4, "valiant", buffer=1)
    v = net.deadlock()
    assert v.config == StoreForwardConfig(4, "valiant", 1, intermediate_buffer=False)
    assert not v.deadlock_free
    deps = v.cycle.dependences
    ms = MessageSet.from_pairs(np.array([d.queue.node for d in deps]),
                               np.array([d.destination for d in deps]), net.payload_bits, 3)
    inject = {m: (0, net.encode_valiant(d.target, d.destination, int(ms.payload[m])))
              for m, d in enumerate(deps)}
    res = net.simulate_cycle(ms, inject)
    assert not res.delivered and sorted(res.lost) == list(range(len(deps)))
    assert all("deadlock" in o.lost_at[3] for o in res.outcomes.values())
    got = run_cycles_amaranth(net, ms, [res], family=family_of(net))
    assert [mm for _, mms in got for mm in mms] == []


# ------------------------------------------------------------------ the check can fail
def test_one_wrong_dependence_makes_the_graph_cyclic_and_is_in_the_cycle():
    """A crossing rule broken for one head state (its next queue an earlier one) adds
    one dependence; that alone closes a cycle, and the cycle found goes through it."""
    k = 3
    good = dependence_graph(StoreForwardConfig(k, "ecube", 1))
    a, b = next((a, b) for a, b in sorted(good.edges) if good.out_degree(b))
    changed = []

    def broken(k, links, target, dst, **kw):
        hop = sf.next_queues(k, links, target, dst, **kw)
        j = np.flatnonzero(hop.transit & (links == b.node * k + b.dimension))[:1]
        hop.next_q[j] = a.node * k + a.dimension
        changed.extend(j.tolist())
        return hop

    bad = dependence_graph(StoreForwardConfig(k, "ecube", 1), broken)
    assert len(changed) == 1 and set(bad.edges) - set(good.edges) == {(b, a)}
    v = check_deadlock(k, "ecube", buffer=1, next_queues=broken)
    assert not v.deadlock_free and set(v.cycle.queues) == {a, b}
    assert any(d.queue == b and d.waits_for == a for d in v.cycle.dependences)
    bad.remove_edge(b, a)
    assert find_cycle(bad) is None


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("kw, words", [
    ({"k": MAX_DEADLOCK_DIMENSION + 1}, f"dimension must be an integer in [1, "
                                        f"{MAX_DEADLOCK_DIMENSION}] for the deadlock check"),
    ({"k": 0}, "dimension must be an integer in [1, "),
    ({"k": 3, "algorithm": "alg1"}, "algorithm must be one of ecube, valiant"),
    ({"k": 3, "buffer": 0}, "buffer must be an integer in [1, "),
    ({"k": 3, "barrier": True}, "barrier must be left out for ecube (a Valiant option)"),
    ({"k": 3, "intermediate_buffer": False},
     "intermediate_buffer must be left out for ecube"),
    ({"k": 3, "algorithm": "valiant", "barrier": 1}, "barrier must be True or False"),
])
def test_bad_configurations_are_one_line(kw, words):
    with pytest.raises(ParameterError) as e:
        check_deadlock(**kw)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_the_queue_record():
    assert str(LinkQueue(5, 2)) == "q(5,2)"
