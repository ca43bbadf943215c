"""One-cycle circuit switching (Patel), Upfal's waves and the edge colouring."""

from __future__ import annotations

import numpy as np
import pytest

from fatnet.golden.butterfly.circuit import (
    load_sweep,
    one_cycle_acceptance,
    patel_acceptance,
)
from fatnet.cli.plots import plot_sweep
from fatnet.golden.butterfly.patterns import make_problems
from fatnet.golden.butterfly.topology import make_network
from fatnet.golden.butterfly.upfal import edge_colouring, route_upfal, theorem_2_1_bound
from fatnet.golden.errors import ParameterError


def test_patel_recursion_values():
    # The figures: 0.359 at N = 64, 0.259 at N = 1024.
    assert round(patel_acceptance(6), 3) == 0.359
    assert round(patel_acceptance(10), 3) == 0.259
    assert patel_acceptance(0) == 1.0
    assert patel_acceptance(1) == 0.75


@pytest.mark.parametrize("inputs", [64, 1024])
def test_unbuffered_butterfly_meets_patel(inputs):
    net = make_network("butterfly", inputs)
    trials = 200 if inputs == 64 else 40
    dest = make_problems("random-destinations", inputs, trials, seed=9)
    res = one_cycle_acceptance(net, dest, node_capacity=1, seed=1)
    stage_count = inputs.bit_length() - 1
    mean, err = res["acceptance"].mean(), res["acceptance"].std() / np.sqrt(trials)
    assert abs(mean - patel_acceptance(stage_count)) < 4 * err + 1e-3


@pytest.mark.parametrize("kind, d, modified", [("butterfly", 1, False),
                                               ("dilated-butterfly", 2, False),
                                               ("multibutterfly", 2, True)])
@pytest.mark.parametrize("arbitration", ["random", "wire"])
def test_circuit_conservation_and_edge_exclusivity(kind, d, modified, arbitration):
    net = make_network(kind, 64, d, modified=modified, seed=2)
    dest = make_problems("random-destinations", 64, 5, seed=3)
    dest[:, ::7] = -1
    res = one_cycle_acceptance(net, dest, arbitration, seed=4)
    offered = (dest >= 0).sum(1)
    assert (res["offered"] == offered).all()
    assert (res["delivered"] <= offered).all()
    assert not (res["delivered_mask"] & (dest < 0)).any()
    # Edges are exclusive: an output cannot receive more messages than it has in-edges.
    for t in range(dest.shape[0]):
        got = np.bincount(dest[t][res["delivered_mask"][t]], minlength=64)
        assert got.max() <= int((net.heads[-1] >= 0).sum() // 64)


def test_node_capacity_one_delivers_at_most_one_message_per_output():
    net = make_network("multibutterfly", 128, 2, seed=0)
    dest = make_problems("random-destinations", 128, 20, seed=1)
    free = one_cycle_acceptance(net, dest, "wire")
    capped = one_cycle_acceptance(net, dest, "wire", node_capacity=1)
    for t in range(20):
        got = dest[t][capped["delivered_mask"][t]]
        assert got.size == np.unique(got).size
    # Without the cap some output takes several (4 in-edges each) in some trial.
    assert any(np.unique(dest[t][free["delivered_mask"][t]]).size
               < free["delivered"][t] for t in range(20))


def test_sweep_and_plot(tmp_path):
    rows = load_sweep(inputs=32, loads=(0.25, 1.0), trials=3, seed=1)
    assert {r["kind"] for r in rows} == {"butterfly", "dilated-butterfly", "multibutterfly"}
    for r in rows:
        assert 0 <= r["throughput"] <= r["load"] + 0.5 and r["latency"] >= 5
    path = plot_sweep(rows, str(tmp_path / "sweep.png"))
    assert (tmp_path / "sweep.png").stat().st_size > 1000 and path.endswith("sweep.png")


@pytest.mark.parametrize("kind, d, modified", [("butterfly", 1, False),
                                               ("dilated-butterfly", 2, False),
                                               ("multibutterfly", 2, False),
                                               ("multibutterfly", 3, False),
                                               ("multibutterfly", 2, True)])
def test_edge_colouring_is_proper(kind, d, modified):
    net = make_network(kind, 64, d, modified=modified, seed=5)
    colours = edge_colouring(net)
    for i in range(net.depth):
        k = int((net.heads[i, 0] >= 0).sum())
        c = colours[i, :, :k]
        # Each switch: every colour exactly once on its out-edges ...
        assert (np.sort(c, axis=1) == np.arange(k)).all()
        # ... and exactly once on its in-edges.
        for colour in range(k):
            heads = net.heads[i, :, :k][c == colour]
            assert sorted(heads) == list(range(net.inputs))


@pytest.mark.parametrize("kind, d, modified", [("butterfly", 1, False),
                                               ("multibutterfly", 3, False),
                                               ("multibutterfly", 2, True)])
@pytest.mark.parametrize("problems, L", [(1, 1), (3, 4)])
def test_wave_algorithm_delivers_every_packet_once(kind, d, modified, problems, L):
    net = make_network(kind, 64, d, modified=modified, seed=1)
    perms = make_problems("random-permutation", 64, problems, seed=2)
    res = route_upfal(net, perms, L=L)
    assert res["delivered"] == res["packets"] == 64 * problems
    assert (res["delivery_step"] > 0).all()
    assert res["steps"] >= net.depth + problems - 1


def test_wave_algorithm_rejects_non_permutations():
    net = make_network("multibutterfly", 16, 2, seed=0)
    with pytest.raises(ParameterError, match="permutation"):
        route_upfal(net, make_problems("random-destinations", 16, 1, seed=1))
    with pytest.raises(ParameterError, match="L"):
        route_upfal(net, np.arange(16), L=3)


def test_theorem_2_1_bound():
    # The paper's example: d = 11, alpha = 1/32, beta = 4, L = 16, nu = 1/2 gives
    # sigma = 2/3, w = 1/sqrt(2), rho = 8/9.
    b = theorem_2_1_bound(1024, 11, 1 / 32, 4, 16, problems=10, nu=0.5)
    assert b["valid"]
    assert b["sigma"] == pytest.approx(2 / 3) and b["rho"] == pytest.approx(8 / 9)
    assert b["w"] == pytest.approx(2 ** -0.5)
    # Corollary 2.3 (P = log N): 4d (log(2/w) + L log(1/nu)) / log(1/rho) per log N.
    per_log_n = 44 * (1.5 + 16) / np.log2(9 / 8)
    constant = 44 * np.log2(0.5 / (16 * 0.5 * (1 - 0.5 ** 16 * 2 ** 0.5))) / np.log2(9 / 8)
    assert b["steps"] == pytest.approx(per_log_n * 10 + constant)
    assert not theorem_2_1_bound(1024, 2, 1 / 32, 0.9, 16)["valid"]
