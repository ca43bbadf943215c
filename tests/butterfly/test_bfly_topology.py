"""Topology invariants of butterflies, dilated butterflies and random splitter networks."""

from __future__ import annotations

import numpy as np
import pytest

from fatnet.golden.butterfly.topology import (
    WIRINGS,
    build_network,
    expansion_report,
    make_network,
)
from fatnet.golden.errors import ParameterError

CASES = [("butterfly", 1, False, "uniform"), ("dilated-butterfly", 2, False, "uniform"),
         ("dilated-butterfly", 3, True, "uniform")] + [
    ("multibutterfly", d, mod, w) for d in (1, 2, 3) for mod in (False, True) for w in WIRINGS]


def _net(kind, d, modified, wiring, n=64, seed=7):
    return make_network(kind, n, d, modified=modified, seed=seed, wiring=wiring)


@pytest.mark.parametrize("kind, d, modified, wiring", CASES)
def test_splitter_edges_stay_in_their_half(kind, d, modified, wiring):
    net = _net(kind, d, modified, wiring)
    n = net.n
    for i, level_kind in enumerate(net.level_kind):
        heads = net.heads[i]
        rows = np.arange(net.inputs)
        if level_kind == "splitter":
            level = net.level_label(i)
            m = 1 << (n - level)
            assert net.block_size[i] == m
            for direction in (0, 1):
                targets = heads[:, direction * d:(direction + 1) * d]
                lo = (rows // m) * m + direction * (m // 2)
                assert ((targets >= lo[:, None]) & (targets < lo[:, None] + m // 2)).all()
                # Each splitter output receives 2d edges, all from its own block.
                assert (np.bincount(targets.ravel(), minlength=net.inputs)[
                    np.unique(targets)] == 2 * d).all()
            assert (heads[:, 2 * d:] == -1).all()
        elif level_kind == "matching":
            for k in range(4):                     # 4 perfect matchings
                assert sorted(heads[:, k]) == list(range(net.inputs))
        else:                                      # complete 4 x 4 to the outputs
            assert (heads[:, :4] == (rows // 4 * 4)[:, None] + np.arange(4)).all()
    # Every message's logical path ends at its output: follow slot 0 of its group.
    for dest in range(0, net.inputs, 5):
        row = (dest * 11) % net.inputs
        for i in range(net.depth):
            g = int(net.group_of(i, dest))
            row = int(net.heads[i, row, net.group_slots(i, g)[0]])
        assert row == dest


def test_butterfly_is_the_papers():
    net = make_network("butterfly", 32)
    for level in range(5):
        for r in range(32):
            flipped = r ^ (1 << (4 - level))       # bit `level`, bit 0 most significant
            assert set(net.heads[level, r, :2]) == {r, flipped}


def test_dilated_has_parallel_copies():
    net = make_network("dilated-butterfly", 16, 3)
    assert (net.heads[:, :, 0:3] == net.heads[:, :, [0]]).all()
    assert (net.heads[:, :, 3:6] == net.heads[:, :, [3]]).all()
    assert net.edges == 4 * 16 * 6


@pytest.mark.parametrize("wiring", WIRINGS)
@pytest.mark.parametrize("d", [2, 3])
def test_random_wiring_has_no_parallel_edges_where_avoidable(wiring, d):
    net = make_network("multibutterfly", 256, d, seed=3, wiring=wiring)
    for i in range(net.depth):
        half = int(net.block_size[i]) // 2
        allowed = -(-d // half)                    # ceil(d / half)
        for direction in (0, 1):
            t = np.sort(net.heads[i, :, direction * d:(direction + 1) * d], axis=1)
            run = np.ones(t.shape, dtype=int)
            for j in range(1, d):
                run[:, j] = np.where(t[:, j] == t[:, j - 1], run[:, j - 1] + 1, 1)
            assert run.max() <= allowed


def test_butterfly_plus_maps_slot_zero_is_the_butterfly():
    net = make_network("multibutterfly", 128, 2, modified=True, seed=1,
                       wiring="butterfly-plus-maps")
    fly = make_network("butterfly", 128, modified=True, seed=1)
    assert (net.heads[0, :, 0] == np.arange(128)).all()          # straight matching
    for i in range(1, net.depth - 1):
        assert (net.heads[i, :, 0] == fly.heads[i, :, 0]).all()
        assert (net.heads[i, :, 2] == fly.heads[i, :, 1]).all()


def test_in_edges_order_and_rank():
    net = make_network("multibutterfly", 32, 2, seed=2)
    rank = net.in_edge_rank()
    for i in range(1, net.depth + 1):
        for row in (0, 5, 31):
            edges = net.in_edges(i, row)
            assert edges == sorted(edges)
            assert len(edges) == 4
            assert [rank[i - 1, s, k] for s, k in edges] == list(range(len(edges)))


def test_reproducible_from_seed():
    a = make_network("multibutterfly", 128, 2, seed=11)
    b = make_network("multibutterfly", 128, 2, seed=11)
    c = make_network("multibutterfly", 128, 2, seed=12)
    assert (a.heads == b.heads).all() and not (a.heads == c.heads).all()


def test_modified_levels():
    net = make_network("multibutterfly", 64, 2, modified=True, seed=0)
    assert net.depth == 6 and net.first_level == -1
    assert net.level_kind[0] == "matching" and net.level_kind[-1] == "complete"
    assert net.interior_switches == 5 * 64


@pytest.mark.parametrize("kwargs, word", [
    (dict(kind="multibutterfly", inputs=12), "inputs"),
    (dict(kind="multibutterfly", inputs=2), "inputs"),
    (dict(kind="multibutterfly", inputs=4, modified=True), "inputs"),
    (dict(kind="multibutterfly", inputs=16, multiplicity=0), "multiplicity"),
    (dict(kind="dilated-butterfly", inputs=16, multiplicity=1), "multiplicity"),
    (dict(kind="butterfly", inputs=16, multiplicity=2), "multiplicity"),
    (dict(kind="benes", inputs=16), "kind"),
    (dict(kind="multibutterfly", inputs=16, wiring="x"), "wiring"),
])
def test_bad_parameters(kwargs, word):
    with pytest.raises(ParameterError, match=word) as info:
        make_network(**kwargs)
    assert "\n" not in str(info.value)


def test_expansion_retry_reaches_requested_and_is_verified():
    net = build_network("multibutterfly", 64, 5, seed=0, expansion=(1 / 32, 3.5))
    assert all(r["beta"] >= 3.5 and r["exact"] for r in net.expansion)
    # The attempt it returns is the first that works: earlier ones fall short.
    for attempt in range(net.attempt):
        other = make_network("multibutterfly", 64, 5, seed=0, attempt=attempt)
        assert min(r["beta"] for r in expansion_report(other, 1 / 32)) < 3.5


def test_expansion_report_of_butterfly():
    # In a butterfly splitter each input has one up output, shared by exactly two
    # inputs: beta = 1 for single inputs and 1/2 once pairs are allowed.
    net = make_network("butterfly", 16)
    report = expansion_report(net, 1 / 8)
    assert report[0]["max_set_size"] == 2 and report[0]["beta"] == 0.5
    assert report[1]["max_set_size"] == 1 and report[1]["beta"] == 1.0


def test_unreachable_expansion_is_a_parameter_error():
    with pytest.raises(ParameterError, match="beta"):
        build_network("multibutterfly", 64, 2, seed=0, expansion=(1 / 8, 3.0), max_attempts=3)
    with pytest.raises(ParameterError, match="beta"):
        build_network("butterfly", 64, expansion=(1 / 8, 1.5))


def test_a_hops_many_distinct_splitters_share_the_search_budget(monkeypatch):
    """Issue 18: `info multibutterfly --inputs 65536` searched each of its thousands of
    distinct half-splitters with a whole search's budget. Each hop now shares
    LEVEL_SEARCH_WORK among its distinct graphs (never below MIN_SEARCH_WORK each), and
    a butterfly's identical ones are measured once, with the whole budget."""
    from fatnet.golden import bipartite
    from fatnet.golden.butterfly import topology
    seen = []
    real = bipartite.measure_expansion

    def spy(adj, outputs, alpha, **kw):
        seen.append((len(adj), kw["work"]))
        return real(adj, outputs, alpha, **kw)

    monkeypatch.setattr(bipartite, "measure_expansion", spy)
    monkeypatch.setattr(topology, "LEVEL_SEARCH_WORK", 1 << 18)
    net = make_network("multibutterfly", 256, 2, seed=0)
    report = expansion_report(net, 1 / 16)
    assert len(report) == 8
    for r in report:   # per hop: one budget, shared evenly by the graphs measured
        works = [work for m, work in seen if m == r["block_inputs"]]
        expected = max(topology.MIN_SEARCH_WORK,
                       min(bipartite.DEFAULT_SEARCH_WORK, (1 << 18) // len(works)))
        assert set(works) == {expected}, (r["block_inputs"], len(works), set(works))
    # random half-splitters of 128 and 64 inputs differ: every one measured, once
    assert sum(1 for m, _ in seen if m == 128) == 4
    assert sum(1 for m, _ in seen if m == 64) == 8
    seen.clear()
    expansion_report(make_network("butterfly", 256), 1 / 16)
    assert len(seen) == 8                                # one graph per hop ...
    assert all(work == 1 << 18 for _, work in seen)      # ... with the hop's whole budget
