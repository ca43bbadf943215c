"""Faults: placement, Sec. IV propagation, Sec. III-A erasure against Lemmas 3.1-3.3."""

from __future__ import annotations

import numpy as np
import pytest

from fatnet.golden.butterfly import faults as fl
from fatnet.golden.butterfly.topology import build_network, make_network
from fatnet.golden.errors import ParameterError


def brute_force_declared(net, faulty, rule, erased=None):
    """The rule read literally, one switch at a time, from the last level backward."""
    levels, n = faulty.shape
    erased = np.zeros_like(faulty) if erased is None else erased
    declared = np.zeros_like(faulty)
    for i in range(levels - 2, -1, -1):
        for row in range(n):
            if faulty[i, row] or erased[i, row]:
                continue
            for group, targets in net.out_edges(i, row).items():
                bad = [(faulty[i + 1, t] or declared[i + 1, t]) and not erased[i + 1, t]
                       for t in targets]
                if (rule == "all" and all(bad)) or (rule == "half" and 2 * sum(bad) >= len(bad)):
                    declared[i, row] = True
    return declared


@pytest.mark.parametrize("kind, d, modified", [("butterfly", 1, False),
                                               ("dilated-butterfly", 2, False),
                                               ("multibutterfly", 2, False),
                                               ("multibutterfly", 2, True),
                                               ("multibutterfly", 3, False)])
@pytest.mark.parametrize("rule", fl.RULES)
def test_propagation_matches_brute_force(kind, d, modified, rule):
    for seed in range(4):
        net = make_network(kind, 32, d, modified=modified, seed=seed)
        rng = np.random.default_rng(seed)
        faulty = fl.random_faults(net, rate=0.15 + 0.1 * seed, rng=rng)
        fmap = fl.propagate(net, faulty, rule)
        assert (fmap.declared == brute_force_declared(net, faulty, rule)).all()
        assert not (fmap.declared & fmap.faulty).any()


def test_random_faults_are_interior_and_counted():
    net = make_network("multibutterfly", 64, 2, modified=True, seed=0)
    faulty = fl.random_faults(net, 100, seed=4)
    assert faulty.sum() == 100 and not faulty[0].any() and not faulty[-1].any()
    assert (faulty == fl.random_faults(net, 100, seed=4)).all()
    assert fl.random_faults(net, net.interior_switches, seed=0)[1:-1].all()


@pytest.mark.parametrize("kwargs", [dict(count=5 * 64 + 1), dict(count=-1), dict(rate=1.5),
                                    dict(), dict(count=1, rate=0.1)])
def test_bad_fault_parameters(kwargs):
    net = make_network("multibutterfly", 64, 2, modified=True, seed=0)
    with pytest.raises(ParameterError) as info:
        fl.random_faults(net, **kwargs)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("kind, d", [("butterfly", 1), ("dilated-butterfly", 2),
                                     ("multibutterfly", 2), ("multibutterfly", 3)])
def test_two_adversarial_faults_isolate_every_input_without_erasure(kind, d):
    # Faulting both upper outputs of a 4-input splitter declares its inputs; they are a
    # whole half of the next larger splitter, and so on back to level 0.
    net = make_network(kind, 64, d, seed=1)
    fmap = fl.propagate(net, fl.adversarial_faults(net, 2, "propagate"), "all")
    assert fmap.unusable()[0].all()


def test_single_fault_in_butterfly_blocks_two_to_the_l_switches_back():
    # Sec. I-C: "a single fault can block 2^l switches l levels back".
    net = make_network("butterfly", 64)
    faulty = np.zeros((7, 64), dtype=bool)
    faulty[5, 9] = True
    fmap = fl.propagate(net, faulty, "all")
    for back in range(1, 6):
        assert fmap.declared[5 - back].sum() == 2 ** back


@pytest.fixture(scope="module")
def expander():
    # d = 5, (1/32, 3.5)-expansion verified exactly on every splitter: beta' = 1.5.
    return build_network("multibutterfly", 64, 5, seed=0, expansion=(1 / 32, 3.5))


def _placements(net):
    for count in (1, 2, 3, 6, 12, 24, 48):
        for mode in fl.ADVERSARIES:
            if mode == "one-splitter":
                for level in (1, 2, 4):
                    if count <= net.block_size[level]:
                        yield count, fl.adversarial_faults(net, count, mode, level)
            else:
                yield count, fl.adversarial_faults(net, count, mode)
        for seed in range(3):
            yield count, fl.random_faults(net, count, seed=seed)


def test_erasure_respects_lemmas_3_1_to_3_3_and_theorem_3_4(expander):
    alpha, beta = 1 / 32, 3.5
    net = expander
    checked = 0
    for count, faulty in _placements(net):
        fmap = fl.erase(net, faulty, alpha, beta)
        bounds = fl.theorem_3_4_bounds(net.inputs, count, alpha, beta, net.multiplicity)
        erased_outputs = int(fmap.erased[-1].sum())
        assert erased_outputs <= bounds["max_erased_outputs"] + 1e-9          # Lemma 3.1
        per_level = int(faulty.sum(1).max())
        assert fmap.declared.sum(1).max() <= per_level / (bounds["beta_prime"] - 1) + 1e-9
        for i in range(net.depth):                                           # Lemma 3.2
            m = int(net.block_size[i])
            per_block = fmap.declared[i].reshape(-1, m).sum(1)
            assert (per_block <= 2 * alpha * m + 1e-9).all()
        assert fmap.surviving_inputs.size >= bounds["min_inputs"] - 1e-9      # Thm 3.4
        assert fmap.surviving_outputs.size >= bounds["min_outputs"] - 1e-9
        checked += 1
    assert checked > 40


def test_erasure_removes_splitters_over_epsilon(expander):
    net = expander
    eps = 2 * (1 / 32) * (3.5 - 2 - 1)
    # Two faults in one 32-input splitter of level 1: 2 > eps * 32 = 1, so it goes,
    # with its 32 outputs; one fault (not more than eps * 32) does not.
    two = fl.erase(net, fl.adversarial_faults(net, 2, "one-splitter", 1), 1 / 32, 3.5)
    assert two.epsilon == pytest.approx(eps)
    assert two.erased[1:, :32].all() and not two.erased[:, 32:].any()
    one = fl.erase(net, fl.adversarial_faults(net, 1, "one-splitter", 1), 1 / 32, 3.5)
    assert not one.erased[:2].any()


def test_erasure_needs_enough_expansion(expander):
    with pytest.raises(ParameterError, match="beta"):
        fl.erase(expander, np.zeros((7, 64), dtype=bool), 1 / 32, 3.0)


def test_fault_map_travels_with_the_network():
    net = make_network("multibutterfly", 64, 2, modified=True, seed=0)
    faulted = fl.apply_faults(net, fl.random_faults(net, 20, seed=1))
    assert faulted.faults.faulty.sum() == 20
    assert (faulted.blocked() == (faulted.faults.faulty | faulted.faults.declared)).all()
    assert net.faults is None
    summary = faulted.faults.summary()
    assert summary["faults"] == 20 and sum(summary["faulty_per_level"]) == 20


def test_repeated_draws_give_at_most_count_faults():
    net = make_network("multibutterfly", 16, 2, seed=0)      # 48 interior switches
    faulty = fl.random_faults(net, 40, seed=1, with_replacement=True)
    assert 0 < faulty.sum() < 40 and not faulty[0].any() and not faulty[-1].any()
