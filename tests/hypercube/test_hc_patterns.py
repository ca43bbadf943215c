"""Traffic patterns on the k-cube against independent formulas (address strings)."""

from __future__ import annotations

import numpy as np
import pytest

from fatnet.golden.errors import ParameterError
from fatnet.golden.hypercube.patterns import PATTERNS, make_pattern

PERMUTATIONS = ("random-permutation", "transpose", "bit-reversal", "complement")


def bits(x: int, k: int) -> str:
    """Address of ``x`` as a string, most significant bit first."""
    return format(x, f"0{k}b") if k else ""


def string_transpose(x: int, k: int) -> int:
    """The top k // 2 characters and the bottom k // 2 swap places; a middle one stays."""
    s, h = bits(x, k), k // 2
    top, mid, bot = s[:h], s[h:k - h], s[k - h:]
    return int(bot + mid + top, 2)


@pytest.mark.parametrize("k", range(1, 10))
@pytest.mark.parametrize("name", PATTERNS)
def test_one_message_per_source(k, name):
    src, dst = make_pattern(k, name, seed=k)
    assert src.dtype == dst.dtype == np.int64
    assert src.tolist() == list(range(2 ** k))
    assert ((0 <= dst) & (dst < 2 ** k)).all()


@pytest.mark.parametrize("k", range(1, 12))
@pytest.mark.parametrize("name", PERMUTATIONS)
def test_permutations_are_permutations(k, name):
    seed = 100 + k
    print("seed", seed)
    _, dst = make_pattern(k, name, seed=seed)
    assert sorted(dst.tolist()) == list(range(2 ** k))


@pytest.mark.parametrize("k", range(1, 11))
def test_fixed_patterns_against_string_formulas(k):
    n = 2 ** k
    for name, formula in (
            ("transpose", lambda x: string_transpose(x, k)),
            ("bit-reversal", lambda x: int(bits(x, k)[::-1], 2)),
            ("complement", lambda x: int("".join("1" if c == "0" else "0"
                                                 for c in bits(x, k)), 2))):
        _, dst = make_pattern(k, name)
        assert dst.tolist() == [formula(x) for x in range(n)], name


def test_transpose_examples_and_involution():
    # k = 4: address abcd -> cdab; k = 5: abcde -> decab (the middle bit c stays).
    _, d4 = make_pattern(4, "transpose")
    assert d4[0b0001] == 0b0100 and d4[0b1100] == 0b0011 and d4[0b1001] == 0b0110
    _, d5 = make_pattern(5, "transpose")
    assert d5[0b00001] == 0b01000 and d5[0b00100] == 0b00100 and d5[0b11000] == 0b00011
    _, d1 = make_pattern(1, "transpose")
    assert d1.tolist() == [0, 1]
    for k in range(1, 10):
        _, d = make_pattern(k, "transpose")
        assert (d[d] == np.arange(2 ** k)).all()


@pytest.mark.parametrize("name", ("random-permutation", "random-destinations", "hot-spot"))
def test_random_patterns_follow_the_seed(name):
    for seed in range(5):
        print("seed", seed)
        a = make_pattern(8, name, seed=seed)
        b = make_pattern(8, name, seed=seed)
        c = make_pattern(8, name, seed=seed + 1)
        assert (a[1] == b[1]).all()
        assert not (a[1] == c[1]).all()


def test_random_destinations_is_a_map_with_repeats():
    # 1024 independent uniform choices: some node is chosen twice (birthday bound).
    _, dst = make_pattern(10, "random-destinations", seed=7)
    assert np.unique(dst).size < dst.size


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.25, 0.5, 1.0])
def test_hot_spot_sends_the_fraction_to_the_node(fraction):
    k, node = 8, 37
    for seed in range(4):
        print("seed", seed)
        _, dst = make_pattern(k, "hot-spot", seed=seed, fraction=fraction, node=node)
        hot = int((dst == node).sum())
        assert hot >= round(fraction * 2 ** k)
        if fraction == 1.0:
            assert hot == 2 ** k
        # The others are uniform: they hit the hot node about once (at most a few times).
        assert hot - round(fraction * 2 ** k) <= 8


def test_several_problems():
    k = 5
    n = 2 ** k
    for name in PATTERNS:
        seed = 11
        src, dst = make_pattern(k, name, seed=seed, problems=3)
        assert src.tolist() == list(range(n)) * 3
        one = make_pattern(k, name, seed=seed)[1]
        assert (dst[:n] == one).all()             # problem 0 is the single problem
        if name in PERMUTATIONS:
            for p in range(3):
                assert sorted(dst[p * n:(p + 1) * n].tolist()) == list(range(n))
        if name in ("transpose", "bit-reversal", "complement"):
            assert (dst[n:2 * n] == one).all() and (dst[2 * n:] == one).all()
        else:
            assert not (dst[n:2 * n] == one).all()   # independent problems


@pytest.mark.parametrize("call, word", [
    (lambda: make_pattern(4, "shuffle"), "pattern"),
    (lambda: make_pattern(0, "transpose"), "dimension"),
    (lambda: make_pattern(21, "transpose"), "dimension"),
    (lambda: make_pattern(4, "transpose", fraction=0.2), "fraction"),
    (lambda: make_pattern(4, "hot-spot", hotness=0.2), "hotness"),
    (lambda: make_pattern(4, "hot-spot", fraction=1.5), "fraction"),
    (lambda: make_pattern(4, "hot-spot", fraction=-0.1), "fraction"),
    (lambda: make_pattern(4, "hot-spot", node=16), "node"),
    (lambda: make_pattern(4, "hot-spot", node=-1), "node"),
    (lambda: make_pattern(4, "complement", problems=0), "problems"),
    (lambda: make_pattern(4, "complement", problems=2.5), "problems"),
    (lambda: make_pattern(4, "random-permutation", seed=-1), "seed"),
    (lambda: make_pattern(4, "random-permutation", seed="x"), "seed"),
])
def test_bad_input_is_one_line(call, word):
    with pytest.raises(ParameterError) as err:
        call()
    text = str(err.value)
    assert "\n" not in text and word in text
