"""Unbounded proofs (k-induction) and covers of Algorithm 1's dimension router
(``tests/hypercube/formal_router.py``; docs/formal.md says what each property is and
where it comes from), for each priority: a node whose bit of the dimension is 0, one
whose bit is 1, and the priority as an input (one module for every node). Each task
takes a few seconds."""

from __future__ import annotations

import pytest

from formal_harness import prove_property
from formal_router import RouterProof

#: make test proves the router whose priority is an input (every node's module, both
#: priorities at once); make formal the two fixed ones too, and every cover.
HIGHS = [pytest.param(None, id="input"),
         pytest.param(False, marks=pytest.mark.formal, id="bit0"),
         pytest.param(True, marks=pytest.mark.formal, id="bit1")]


@pytest.mark.parametrize("high", HIGHS)
def test_dimension_router_is_proved(high, tmp_path):
    proof = RouterProof(high)
    prove_property(proof, tmp_path, name="router", mode="prove", depth=3)


@pytest.mark.parametrize("high", [pytest.param(*p.values, marks=pytest.mark.formal, id=p.id)
                                  for p in HIGHS])
def test_dimension_router_covers_are_reached(high, tmp_path):
    proof = RouterProof(high, covers=True)
    prove_property(proof, tmp_path, name="router_cover", mode="cover", depth=6)
