"""Topology, capacities, paths, turn bits and load factors against independent references."""

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest

from fatnet.golden.errors import ParameterError
from fatnet.golden.fattree.topology import DOWN, EXT, UP, FatTree
from fatnet.golden.fattree.spec import FatTreeSpec, universal_capacities

getcontext().prec = 60


def paper_capacity(n, w, k):
    """cap(k) = min(ceil(n / 2^k), ceil(w / 2^(2k/3))) in 60-digit decimal arithmetic."""
    two_thirds = Decimal(2) ** (Decimal(2 * k) / Decimal(3))
    return min(math.ceil(Decimal(n) / Decimal(2) ** k), math.ceil(Decimal(w) / two_thirds))


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])
def test_universal_capacities_match_the_paper(n):
    low = next(w for w in range(1, n + 1) if w ** 3 >= n * n)  # ceil(n^(2/3)), exactly
    for w in range(low, n + 1):
        caps = universal_capacities(n, w)
        assert list(caps) == [paper_capacity(n, w, k) for k in range(n.bit_length())], (n, w)
    with pytest.raises(ParameterError, match="root_capacity"):
        FatTreeSpec.universal(n, low - 1)
    with pytest.raises(ParameterError, match="root_capacity"):
        FatTreeSpec.universal(n, n + 1)


@pytest.mark.parametrize("bad, match", [
    (dict(leaves=12, capacities=(4, 2, 1)), "power of two"),
    (dict(leaves=1, capacities=(1,)), "leaves"),
    (dict(leaves=4, capacities=(4, 2)), "capacities must list 3"),
    (dict(leaves=4, capacities=(4, 0, 1)), r"capacities\[1\]"),
    (dict(leaves=4, capacities=(4, 2, 1), concentrator="magic"), "concentrator"),
    (dict(leaves=4, capacities=(4, 2, 1), mode="sometimes"), "mode"),
])
def test_bad_parameters_are_rejected_with_the_parameter_named(bad, match):
    with pytest.raises(ParameterError, match=match):
        FatTreeSpec(**bad)


class RefTree:
    """An explicit tree of node objects, walked step by step (the brute-force reference)."""

    def __init__(self, n):
        self.n = n
        self.leaves_below = {}  # heap -> set of leaves
        L = n.bit_length() - 1
        for h in range(2 ** (L + 1) - 1):
            k = (h + 1).bit_length() - 1
            p = h - (2 ** k - 1)
            span = n >> k
            self.leaves_below[h] = set(range(p * span, (p + 1) * span))

    def walk(self, src, dst):
        """(turn bits, channels) by climbing until the destination is below, then descending."""
        n = self.n
        L = n.bit_length() - 1
        bits, chans = [], []
        if src == EXT:
            here = 0
            chans.append((0, DOWN))
        else:
            here = 2 ** L - 1 + src
            chans.append((here, UP))
            child, here = here, (here - 1) // 2
            while True:
                if dst != EXT and dst in self.leaves_below[here]:
                    # turn: go to the other child
                    bits.append(0)
                    other = 2 * here + 1 if child == 2 * here + 2 else 2 * here + 2
                    chans.append((other, DOWN))
                    here = other
                    break
                bits.append(1)
                chans.append((here, UP))
                if here == 0:
                    return bits, chans  # to the external interface
                child, here = here, (here - 1) // 2
        while here < 2 ** L - 1:
            go_right = dst in self.leaves_below[2 * here + 2]
            bits.append(int(go_right))
            here = 2 * here + 1 + int(go_right)
            chans.append((here, DOWN))
        return bits, chans


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32])
def test_paths_and_turn_bits_match_a_tree_walk(n):
    tree = FatTree(FatTreeSpec.constant(n, 1))
    ref = RefTree(n)
    L = n.bit_length() - 1
    endpoints = list(range(n)) + [EXT]
    for s in endpoints:
        for d in endpoints:
            if s == d:
                continue
            bits, chans = ref.walk(s, d)
            assert tree.address_bits(s, d) == bits, (s, d)
            assert tree.path_channels(s, d) == chans, (s, d)
            assert len(bits) <= 2 * L, (s, d)
            # the vectorised incidence agrees with the explicit path
            _, dirs, heaps = tree.channel_incidence([s], [d])
            assert sorted(zip(heaps.tolist(), dirs.tolist())) == sorted(chans), (s, d)


def test_local_message_uses_no_channel():
    tree = FatTree(FatTreeSpec.constant(8, 1))
    assert tree.path_channels(3, 3) == []
    assert tree.load([3], [3]).sum() == 0


def test_load_factor_hand_computed():
    # n = 4, every channel capacity 1: three messages into leaf 0 load its DOWN channel 3.
    tree = FatTree(FatTreeSpec.constant(4, 1))
    assert tree.load_factor([1, 2, 3], [0, 0, 0]) == 3.0
    # Universal n = 8, w = 4: caps (4, 3, 2, 1). All eight leaves send through the root
    # (i -> i xor 4): each level-1 UP channel carries 4 over capacity 3.
    spec = FatTreeSpec.universal(8, 4)
    assert spec.capacities == (4, 3, 2, 1)
    tree = FatTree(spec)
    src = np.arange(8)
    assert tree.load_factor(src, src ^ 4) == pytest.approx(4 / 3)
    # Leaves 0, 1, 4, 5 to the external interface: root channel UP carries 4 of 4,
    # level-1 channels 2 of 3, level-2 channels 2 of 2, leaves 1 of 1.
    assert tree.load_factor([0, 1, 4, 5], [EXT] * 4) == pytest.approx(1.0)
    assert tree.is_one_cycle([0, 1, 4, 5], [EXT] * 4)
    # Leaves 0..3 all climb through the level-1 channel above them: 4 over 3.
    assert tree.load_factor([0, 1, 2, 3], [EXT] * 4) == pytest.approx(4 / 3)
    assert not tree.is_one_cycle(src, src ^ 4)
