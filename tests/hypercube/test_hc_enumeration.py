"""Enumeration (Kuszmaul 1990, Definition 4, Theorem 2): the recurrences, corrected and
as printed, against direct counting over every subset at k <= 4, and the bit-serial
pipeline against the recurrences and its stated bit-times."""

from __future__ import annotations

import numpy as np
import pytest

from fatnet.golden.errors import ParameterError
from fatnet.golden.hypercube import enumeration as en


def _subsets(k):
    n = 1 << k
    for bits in range(1 << n):
        yield bits, np.array([(bits >> x) & 1 for x in range(n)], dtype=bool)


def _count(k, s, x, keep, strict):
    """Members y with keep(y) and y < x (strict) or y <= x: plain Python."""
    return sum(1 for y in range(1 << k) if s[y] and keep(y) and (y < x if strict else y <= x))


def _E_def4(k, s, fixed_mask):
    """Definition 4 within each subcube, by listing the members in order."""
    out = [0] * (1 << k)
    for x in range(1 << k):
        if s[x]:
            members = sorted(y for y in range(1 << k) if s[y] and
                             y & fixed_mask == x & fixed_mask)
            out[x] = members.index(x) + 1
    return out


def _all_subsets(k):
    """Every subset of the k-cube's nodes: a bool array (2**(2**k), 2**k)."""
    n = 1 << k
    bits = np.arange(1 << n, dtype=np.int64)
    return ((bits[:, None] >> np.arange(n)) & 1).astype(bool)


def _count_matrix(k, keep, strict):
    """C[x, y] = 1 where y counts for x: keep(x, y) and y < x (strict) or y <= x."""
    n = 1 << k
    return np.array([[int(keep(x, y) and (y < x if strict else y <= x)) for y in range(n)]
                     for x in range(n)], dtype=np.int64)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_corrected_is_E_S_for_every_subset(k):
    subsets = _all_subsets(k)
    want = np.where(subsets, subsets @ _count_matrix(k, lambda x, y: True, False).T, 0)
    got = en.enumerate_set(k, subsets)          # every subset at once (a batch)
    for bits in np.flatnonzero((got != want).any(axis=1))[:1]:
        pytest.fail(f"subset {bits}: {got[bits].tolist()} != {want[bits].tolist()}")
    for bits, s in enumerate(subsets):
        if k <= 2 or bits % 97 == 0:            # one set at a time, and Definition 4 itself
            assert en.enumerate_set(k, s).tolist() == got[bits].tolist(), bits
            assert got[bits].tolist() == _E_def4(k, s, 0), bits


@pytest.mark.parametrize("k", [1, 2, 3])
def test_corrected_within_every_subcube_kind(k):
    for bits, s in _subsets(k):
        for fixed in range(1 << k):
            assert en.enumerate_within(k, s, fixed).tolist() == _E_def4(k, s, fixed), \
                (bits, fixed)


def test_corrected_within_every_mask_k4():
    subsets = _all_subsets(4)
    for fixed in range(16):
        same = _count_matrix(4, lambda x, y: x & fixed == y & fixed, strict=False)
        want = np.where(subsets, subsets @ same.T, 0)
        got = en.enumerate_within(4, subsets, fixed)
        bad = np.flatnonzero((got != want).any(axis=1))
        assert bad.size == 0, (fixed, int(bad[0]) if bad.size else None)
        assert (en.enumerate_direct(4, subsets[12345], fixed) == want[12345]).all()


@pytest.mark.parametrize("k", [2, 3])
def test_corrected_invariants_at_every_rank(k):
    """t[r, i] counts the members agreeing with i in bits r..k-1; o[r, i] those below i."""
    for bits, s in _subsets(k):
        t, o = en.recurrences(k, s)
        assert t.shape == (k + 1, 1 << k)
        for r in range(k + 1):
            for i in range(1 << k):
                group = lambda y: y >> r == i >> r  # noqa: E731
                assert t[r, i] == sum(1 for y in range(1 << k) if s[y] and group(y))
                assert o[r, i] == _count(k, s, i, group, strict=True)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_literal_counts_only_same_parity_and_strictly_below(k):
    """Derived from the printed text: ranks 0..k-1 with rank j combining i xor 2**j never
    combine dimension 0, and o[0, i] = 0 makes o an exclusive count; so the printed
    recurrences give, for a member x, #{y in S: y < x, y = x mod 2}, not E_S(x)."""
    subsets = _all_subsets(k)
    same_parity_below = _count_matrix(k, lambda x, y: (x ^ y) & 1 == 0, strict=True)
    want = np.where(subsets, subsets @ same_parity_below.T, 0)
    lit = en.enumerate_set(k, subsets, reading="literal")
    for bits in np.flatnonzero((lit != want).any(axis=1))[:1]:
        pytest.fail(f"subset {bits}: {lit[bits].tolist()} != {want[bits].tolist()}")
    # the least member is numbered 0, never 1: wrong on every nonempty S
    nonempty = subsets.any(axis=1)
    least = np.argmax(subsets, axis=1)
    assert (lit[nonempty, least[nonempty]] == 0).all()
    assert ((lit != en.enumerate_set(k, subsets)).any(axis=1) == nonempty).all()


def test_literal_has_k_ranks_corrected_k_plus_1():
    s = np.ones(8, dtype=bool)
    assert en.recurrences(3, s, reading="literal")[0].shape == (3, 8)
    assert en.recurrences(3, s)[0].shape == (4, 8)
    # literal t at its last rank: the members agreeing in bit 0 (half the cube), not 8
    assert en.recurrences(3, s, reading="literal")[0][-1].tolist() == [4] * 8


def test_definition5_subcube_is_not_the_recurrences_group():
    """Definition 5's (k-r)-subcube (same in bits 0..k-r-1) is not the group that rank r
    totals: with S = {0} on the 2-cube, node 2's Def. 5 1-subcube {0, 2} holds one member,
    but t[1, 2] totals {2, 3} (same in bit 1), which holds none."""
    s = np.array([1, 0, 0, 0], dtype=bool)
    t, _ = en.recurrences(2, s)
    def5 = sum(s[y] for y in range(4) if y & en.low_bits(1) == 2 & en.low_bits(1))
    assert def5 == 1 and t[1, 2] == 0
    assert t[1, 2] == sum(s[y] for y in range(4)
                          if y & en.high_bits(2, 1) == 2 & en.high_bits(2, 1))


def test_subcube_node_and_offsets_pack_into_the_subcube():
    rng = np.random.default_rng(seed := 15)
    for k in range(1, 9):
        for _ in range(5):
            s = rng.random(1 << k) < 0.5
            fixed = int(rng.integers(0, 1 << k))
            off = en.offsets_within(k, s, fixed)
            tgt = en.subcube_node(k, fixed, np.arange(1 << k), off)[s]
            assert len(set(tgt.tolist())) == int(s.sum()), seed
            assert ((tgt & fixed) == (np.flatnonzero(s) & fixed)).all(), seed
            tot = en.totals_within(k, s, fixed)
            # each subcube's members land on its tot lowest nodes
            for x in np.flatnonzero(s):
                sub = [y for y in range(1 << k) if y & fixed == x & fixed]
                assert en.subcube_node(k, fixed, x, off[x]) in sub[:tot[x]], seed


@pytest.mark.parametrize("k", [1, 2, 3])
def test_bitserial_matches_recurrences_every_subset(k):
    for bits, s in _subsets(k):
        fixed = bits % (1 << k)
        r = en.enumerate_bitserial(k, s, fixed)
        t, o = en.recurrences(k, s, fixed_mask=fixed)
        assert (r["t"] == t).all() and (r["o"] == o).all(), bits
        assert r["E"].tolist() == _E_def4(k, s, fixed), bits


@pytest.mark.parametrize("seed", range(4))
def test_bitserial_random_to_k10(seed):
    rng = np.random.default_rng(seed)
    for k in range(4, 11):
        s = rng.random(1 << k) < rng.random()
        fixed = int(rng.integers(0, 1 << k))
        r = en.enumerate_bitserial(k, s, fixed)
        assert (r["E"] == en.enumerate_within(k, s, fixed)).all(), (seed, k)
        assert (r["t"][-1] == en.totals_within(k, s, fixed)).all(), (seed, k)


@pytest.mark.parametrize("k", [1, 2, 5, 12])
def test_bitserial_bit_times_are_the_stated_ones(k):
    tm = en.enumeration_timing(k)
    assert tm.width == k + 1 and tm.ranks == k + 1
    assert tm.first_result == k and tm.last_result == 2 * k and tm.total == 2 * k + 1
    if k <= 5:
        r = en.enumerate_bitserial(k, np.ones(1 << k, dtype=bool))
        assert r["total"] == 2 * k + 1
        for j in range(k + 1):
            for bit in range(k + 1):
                assert r["bit_times"][j, bit] == j + bit == tm.bit_time(j, bit)
        # all members: t[k] = 2**k needs the (k+1)-th bit
        assert (r["t"][k] == 1 << k).all()


def test_bad_input_is_one_line_naming_the_parameter():
    with pytest.raises(ParameterError, match="members"):
        en.enumerate_set(3, np.ones(7, dtype=bool))
    with pytest.raises(ParameterError, match="fixed_mask"):
        en.enumerate_within(3, np.ones(8, dtype=bool), 8)
    with pytest.raises(ParameterError, match="reading"):
        en.enumerate_set(3, np.ones(8, dtype=bool), reading="printed")
    with pytest.raises(ParameterError, match="dimension"):
        en.enumerate_set(0, np.ones(1, dtype=bool))
    with pytest.raises(ParameterError, match="rank"):
        en.enumeration_timing(3).bit_time(4, 0)
