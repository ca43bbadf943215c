"""Routing problems of the butterfly family."""

from __future__ import annotations

import numpy as np
import pytest

from fatnet.golden.butterfly import patterns as pt
from fatnet.golden.errors import ParameterError


def test_transpose_rotates_by_half_the_bits():
    dest = pt.transpose(1024)
    for src in (0, 1, 0b1111100000, 0b1010011001, 1023):
        high, low = src >> 5, src & 31
        assert dest[src] == (low << 5) | high


def test_fixed_patterns_are_permutations():
    for f in (pt.transpose, pt.bit_reversal, pt.bit_complement):
        for n in (4, 32, 256):
            assert sorted(f(n)) == list(range(n))


def test_bit_reversal_and_complement_are_involutions():
    rev, comp = pt.bit_reversal(64), pt.bit_complement(64)
    assert (rev[rev] == np.arange(64)).all() and (comp[comp] == np.arange(64)).all()
    assert pt.bit_reversal(8)[1] == 4


def test_make_problems_shapes_and_reproducibility():
    a = pt.make_problems("random-destinations", 64, 10, seed=3)
    b = pt.make_problems("random-destinations", 64, 10, seed=3)
    assert a.shape == (10, 64) and (a == b).all()
    assert not (a[0] == a[1]).all()
    perms = pt.make_problems("random-permutation", 64, 3, seed=1)
    assert all(sorted(p) == list(range(64)) for p in perms)
    t = pt.make_problems("transpose", 64, 10)
    assert (t == pt.transpose(64)).all()


def test_hot_spot_concentrates():
    dest = pt.make_problems("hot-spot", 1024, 1, seed=0, hot_fraction=0.5)[0]
    assert (dest == 0).mean() > 0.4


@pytest.mark.parametrize("pattern, inputs, problems", [("nope", 64, 1),
                                                       ("transpose", 12, 1),
                                                       ("transpose", 64, 0)])
def test_bad_input(pattern, inputs, problems):
    with pytest.raises(ParameterError):
        pt.make_problems(pattern, inputs, problems)
