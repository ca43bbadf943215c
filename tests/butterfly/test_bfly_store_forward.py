"""Store-and-forward greedy routing (Sec. IV) against a plain reference and the paper."""

from __future__ import annotations

import numpy as np
import pytest

from fatnet.golden.butterfly import faults as fl
from fatnet.golden.butterfly.patterns import make_problems
from fatnet.golden.butterfly.store_forward import Rules, route_store_forward
from fatnet.golden.butterfly.topology import make_network
from fatnet.golden.errors import ParameterError


def reference_route(net, problems, threshold=4):
    """The documented default rules, one switch and one message at a time."""
    depth = net.depth
    blocked = net.blocked()
    in_rank = net.in_edge_rank()
    queues = {}
    delivered = {}
    clean = {}
    for p, dests in enumerate(problems):
        for src, dest in enumerate(dests):
            if dest >= 0:
                queues.setdefault((0, src), []).append([int(dest), 0, p, (p, src)])
                clean[(p, src)] = True
    step = 0
    while any(queues.values()):
        step += 1
        counts = {key: len(q) for key, q in queues.items()}
        moves = []
        for (level, row), queue in queues.items():
            by_group = {}
            for msg in sorted(queue, key=lambda m: (m[1], m[2])):
                group = int(net.group_of(level, msg[0]))
                by_group.setdefault(group, []).append(msg)
            for group, msgs in by_group.items():
                avail = []
                for k in net.group_slots(level, group):
                    head = int(net.heads[level, row, k])
                    if blocked[level + 1, head]:
                        continue
                    if level + 1 < depth and counts.get((level + 1, head), 0) > threshold:
                        continue
                    avail.append(k)
                moves.extend((msg, level, row, k) for msg, k in zip(msgs, avail))
        moved = set()
        for msg, level, row, k in moves:
            queues[(level, row)].remove(msg)
            moved.add(msg[3])
            head = int(net.heads[level, row, k])
            msg[1], msg[2] = step, int(in_rank[level, row, k])
            if level + 1 == depth:
                assert head == msg[0]
                assert msg[3] not in delivered
                delivered[msg[3]] = step
            else:
                queues.setdefault((level + 1, head), []).append(msg)
        for queue in queues.values():
            for msg in queue:
                if msg[3] not in moved:
                    clean[msg[3]] = False
    return delivered, clean


@pytest.mark.parametrize("kind, d, modified, faults", [
    ("butterfly", 1, False, 0), ("dilated-butterfly", 2, False, 0),
    ("multibutterfly", 2, False, 0), ("multibutterfly", 2, True, 0),
    ("multibutterfly", 2, True, 12), ("multibutterfly", 3, False, 0),
    ("dilated-butterfly", 64, False, 0)])       # the largest multiplicity: ranks up to 64
@pytest.mark.parametrize("pattern, problems", [("random-destinations", 3), ("transpose", 2),
                                               ("hot-spot", 2)])
def test_matches_reference_and_conserves(kind, d, modified, faults, pattern, problems):
    for seed in range(2):
        net = make_network(kind, 32, d, modified=modified, seed=seed,
                           wiring="butterfly-plus-maps" if seed else "uniform")
        if faults:
            rng = np.random.default_rng(seed)
            while True:   # Sec. IV: re-place faults that reach an input
                fmap = fl.propagate(net, fl.random_faults(net, faults, rng=rng))
                if not fmap.reaches_inputs:
                    break
            net = net.with_faults(fmap)
        probs = make_problems(pattern, 32, problems, seed=seed, hot_fraction=0.3)
        probs[0, 3] = -1                                      # an input with no message
        result = route_store_forward(net, probs)
        delivered, clean = reference_route(net, probs)
        # Every message delivered exactly once, at the reference's step.
        assert result.messages[0] == result.delivered[0] == len(delivered) == probs.size - 1
        for (p, src), step in delivered.items():
            assert result.delivery_step[0, p, src] == step
        assert result.delivery_step[0, 0, 3] == -1
        assert result.undelayed[0] == sum(clean.values())
        assert result.steps[0] == max(delivered.values())


def test_never_delayed_means_arriving_at_depth():
    net = make_network("multibutterfly", 256, 2, seed=1)
    res = route_store_forward(net, make_problems("random-destinations", 256, 1, seed=2))
    assert res.undelayed[0] == (res.delivery_step == net.depth).sum()
    assert res.steps[0] >= net.depth


@pytest.mark.parametrize("kind, problems, steps, undelayed", [
    ("butterfly", 1, 38, 1 / 32), ("butterfly", 10, 272, None),
    ("dilated-butterfly", 1, 17, 1 / 8), ("dilated-butterfly", 10, 160, None)])
def test_papers_deterministic_transposes(kind, problems, steps, undelayed):
    # Table II (38, 272, 17, 160 steps) and Table III (3.1 % and 12.5 %), N = 1024.
    res = route_store_forward(make_network(kind, 1024), make_problems("transpose", 1024, problems))
    assert res.steps[0] == steps
    if undelayed is not None:
        assert res.undelayed_fraction[0] == undelayed


def test_batched_trials_equal_single_runs():
    nets = [make_network("multibutterfly", 64, 2, modified=True, seed=s) for s in range(3)]
    probs = np.stack([make_problems("random-destinations", 64, 2, seed=s) for s in range(3)])
    together = route_store_forward(nets, probs)
    for t in range(3):
        alone = route_store_forward(nets[t], probs[t])
        assert (alone.delivery_step[0] == together.delivery_step[t]).all()


@pytest.mark.parametrize("rules", [Rules(queue="random"), Rules(queue="lifo"),
                                   Rules(edge_choice="random"), Rules(edge_choice="least-loaded"),
                                   Rules(tie="random"), Rules(threshold=0)])
def test_rule_variants_conserve(rules):
    net = make_network("multibutterfly", 128, 2, modified=True, seed=4)
    probs = make_problems("random-destinations", 128, 4, seed=1)
    res = route_store_forward(net, probs, rules, seed=3)
    assert res.delivered[0] == res.messages[0] == probs.size
    assert (res.delivery_step >= net.depth).all()


def test_threshold_matters_for_the_butterfly_transpose():
    net = make_network("butterfly", 1024)
    probs = make_problems("transpose", 1024, 1)
    assert route_store_forward(net, probs, Rules(threshold=3)).steps[0] != 38


@pytest.mark.parametrize("kwargs", [dict(queue="x"), dict(edge_choice="x"), dict(tie="x"),
                                    dict(threshold=-1)])
def test_bad_rules(kwargs):
    with pytest.raises(ParameterError):
        Rules(**kwargs)


def test_bad_destinations():
    net = make_network("butterfly", 16)
    with pytest.raises(ParameterError, match="destinations"):
        route_store_forward(net, np.full(16, 16))
