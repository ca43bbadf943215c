"""Unbounded proofs (k-induction) and covers of the fat-tree's selector
(``tests/fattree/formal_selector.py``; docs/formal.md says what each property is and where
it comes from) for ports of 1 to 4 wires; ``make test`` runs the 2-wire port's proof."""

from __future__ import annotations

import pytest

from formal_harness import prove_property
from formal_selector import SelectorProof

WIDTHS = [pytest.param(2, id="w2")] + [pytest.param(w, marks=pytest.mark.formal, id=f"w{w}")
                                       for w in (1, 3, 4)]


@pytest.mark.parametrize("width", WIDTHS)
def test_selector_is_proved(width, tmp_path):
    proof = SelectorProof(width)
    prove_property(proof, tmp_path, name="selector", mode="prove", depth=3)


@pytest.mark.parametrize("width", [pytest.param(*p.values, marks=pytest.mark.formal, id=p.id)
                                   for p in WIDTHS])
def test_selector_covers_are_reached(width, tmp_path):
    proof = SelectorProof(width, covers=True)
    prove_property(proof, tmp_path, name="selector_cover", mode="cover", depth=5)
