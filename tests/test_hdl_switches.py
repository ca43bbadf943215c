"""Component tests: StageSwitch and Selector on Amaranth's simulator against a small
golden reference of what one stage (one selector) does, over random arrivals.

The references are written from the model's rules (docs/hardware.md "Timing"), not from the RTL:

* a stage input's message starts with its M bit (the first 1 since ``clear``); off-line
  the next ``decision_width`` bits, MSB first, name the edge to take, and the claim is
  made in the bit-time of the last of them (on-line, or with no decision bits, in the
  M bit's own bit-time, on the first edge whose output is free);
* claims in one bit-time are served in input order; a claim on an output already taken
  (or masked, or named by no edge) is lost, and the input never claims again in this
  cycle;
* a granted output carries 1 (the new M bit) in the claim's bit-time and the input's
  bits from then on; the acknowledgment from the output goes back to the input along
  the held connection from the next bit-time on.

A failure names the seed, the case and the bit-time; replay with the printed seed.
"""

from __future__ import annotations

import numpy as np
import pytest
from amaranth.sim import Simulator

from fatnet.golden.fattree.concentrator import build_stage_complete, build_stage_random
from fatnet.hdl.switches import Selector, StageSwitch

SEED = 20240611


# ------------------------------------------------------------------ golden references
class StageReference:
    """What one concentrator stage does, bit-time by bit-time."""

    def __init__(self, stage, online: bool):
        self.adj = [tuple(a) for a in stage.adjacency]
        self.r, self.s = stage.inputs, stage.outputs
        self.w = 0 if online else stage.decision_width
        self.online = online
        self.clear()

    def clear(self):
        self.seen = [False] * self.r
        self.read = [None] * self.r       # decision bits read so far (None: not reading)
        self.holds = [None] * self.r      # output held by each input
        self.holder = [None] * self.s     # input holding each output

    def step(self, data, ack_out, mask=None):
        """One bit-time: input bits, output acknowledgments (and the outputs masked
        from claims) in; returns (output bits, input acknowledgments) of this bit-time."""
        mask = mask if mask is not None else [0] * self.s
        # acknowledgments travel along connections held before this bit-time
        ack_in = [int(self.holds[x] is not None and ack_out[self.holds[x]])
                  for x in range(self.r)]
        out = [int(self.holder[j] is not None and data[self.holder[j]])
               for j in range(self.s)]
        claims = []                        # (input, requested edge or None for on-line)
        for x in range(self.r):
            if not self.seen[x]:
                if data[x]:
                    self.seen[x] = True
                    if self.w == 0:
                        claims.append((x, None if self.online else 0))
                    else:
                        self.read[x] = []
            elif self.read[x] is not None:
                self.read[x].append(data[x])
                if len(self.read[x]) == self.w:
                    value = int("".join(map(str, self.read[x])), 2)
                    self.read[x] = None
                    claims.append((x, value))
        for x, edge in sorted(claims):     # input order
            if edge is None:               # on-line: first free edge
                free = [j for j in self.adj[x] if self.holder[j] is None and not mask[j]]
                j = free[0] if free else None
            else:
                j = self.adj[x][edge] if edge < len(self.adj[x]) else None
                if j is not None and (self.holder[j] is not None or mask[j]):
                    j = None               # taken or masked: lost
            if j is not None:
                self.holder[j], self.holds[x] = x, j
                out[j] = 1                 # the new M bit
        return out, ack_in


class SelectorReference:
    """What one input port's selectors do: M, then the turn bit picks the branch."""

    def __init__(self, width: int):
        self.n = width
        self.clear()

    def clear(self):
        self.state = ["idle"] * self.n     # idle -> turn -> branch 0/1 (or done)
        self.branch = [None] * self.n

    def step(self, data, ack0, ack1):
        b0, b1, ack = [0] * self.n, [0] * self.n, [0] * self.n
        for x in range(self.n):
            if self.branch[x] is not None:
                b = self.branch[x]
                (b0, b1)[b][x] = data[x]
                ack[x] = (ack0, ack1)[b][x]
            elif self.state[x] == "turn":  # this bit is the turn bit: M' on its branch
                b = data[x]
                (b0, b1)[b][x] = 1
                self.branch[x] = b
                self.state[x] = "held"
            elif data[x]:
                self.state[x] = "turn"
        return b0, b1, ack


# ------------------------------------------------------------------ stimulus
def _streams(rng, inputs: int, w: int, T: int, p_arrive: float, max_edge: int):
    """[T, inputs] bits: per input, maybe one message (M, w decision bits naming an
    edge, mostly in range, then random payload bits) from a random bit-time."""
    bits = np.zeros((T, inputs), dtype=np.uint8)
    for x in range(inputs):
        if rng.random() >= p_arrive:
            continue
        t0 = int(rng.integers(0, T // 2))
        bits[t0, x] = 1
        if w:
            value = int(rng.integers(0, max(1, max_edge) if rng.random() < 0.9 else 2 ** w))
            for k in range(w):
                if t0 + 1 + k < T:
                    bits[t0 + 1 + k, x] = (value >> (w - 1 - k)) & 1
        rest = t0 + 1 + w
        if rest < T:
            bits[rest:, x] = rng.integers(0, 2, size=T - rest)
    return bits


def _word(bits) -> int:
    return sum(int(b) << k for k, b in enumerate(bits))


def _bits(value: int, width: int) -> list[int]:
    return [(value >> k) & 1 for k in range(width)]


# ------------------------------------------------------------------ StageSwitch
STAGES = {
    "complete-5-3": lambda: build_stage_complete(5, 3),
    "complete-4-4": lambda: build_stage_complete(4, 4),
    "complete-3-1": lambda: build_stage_complete(3, 1),
    "complete-9-6": lambda: build_stage_complete(9, 6),
    "random-12-8": lambda: build_stage_random(12, 8, seed=1),
    "random-18-12": lambda: build_stage_random(18, 12, seed=2),
    "random-27-18": lambda: build_stage_random(27, 18, seed=3),
}


def run_stage(stage, online: bool, seed: int, cycles: int = 4, T: int = 24,
              masked: bool = False):
    """Simulate ``cycles`` delivery cycles of random arrivals (and, ``masked``, random
    output masks); returns the first difference from the reference as a string, or
    None."""
    rng = np.random.default_rng(seed)
    dut = StageSwitch(stage, online=online, masked=masked)
    ref = StageReference(stage, online)
    w = ref.w
    max_edge = max(len(a) for a in ref.adj)
    problems = []

    async def bench(ctx):
        for c in range(cycles):
            data = _streams(rng, stage.inputs, w, T, float(rng.uniform(0.3, 1.0)), max_edge)
            acks = rng.integers(0, 2, size=(T, stage.outputs))
            masks = (rng.random((T, stage.outputs)) < 0.3).astype(int) if masked \
                else np.zeros((T, stage.outputs), dtype=int)
            ctx.set(dut.clear, 1)
            ctx.set(dut.i.data, 0)
            ctx.set(dut.o.ack, 0)
            await ctx.tick()
            ctx.set(dut.clear, 0)
            ref.clear()
            for t in range(T):
                ctx.set(dut.i.data, _word(data[t]))
                ctx.set(dut.o.ack, _word(acks[t]))
                if masked:
                    ctx.set(dut.mask, _word(masks[t]))
                out, ack_in = ref.step(list(data[t]), list(acks[t]), list(masks[t]))
                got_out = _bits(ctx.get(dut.o.data), stage.outputs)
                got_ack = _bits(ctx.get(dut.i.ack), stage.inputs)
                if got_out != out or got_ack != ack_in:
                    problems.append(f"cycle {c} bit-time {t}: o.data {got_out} expected "
                                    f"{out}, i.ack {got_ack} expected {ack_in}")
                    return
                await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return problems[0] if problems else None


@pytest.mark.parametrize("online", [False, True], ids=["offline", "online"])
@pytest.mark.parametrize("name", sorted(STAGES))
def test_stage_switch_matches_reference(name, online):
    stage = STAGES[name]()
    for k in range(3):
        seed = SEED + 1000 * k + stage.inputs
        problem = run_stage(stage, online, seed)
        assert problem is None, (f"StageSwitch {name} {'online' if online else 'offline'} "
                                 f"seed {seed}: {problem}")


@pytest.mark.parametrize("online", [False, True], ids=["offline", "online"])
@pytest.mark.parametrize("name", ["complete-5-3", "random-12-8"])
def test_masked_outputs_are_never_granted(name, online):
    stage = STAGES[name]()
    seed = SEED + 7 + stage.inputs
    problem = run_stage(stage, online, seed, masked=True)
    assert problem is None, (f"StageSwitch {name} masked {'online' if online else 'offline'}"
                             f" seed {seed}: {problem}")


def test_stage_switch_offline_lowest_input_wins_and_loser_never_retries():
    """Two inputs name the same output in the same bit-time: the lower one gets it, the
    other is lost for the cycle even when that output frees up nothing."""
    stage = build_stage_complete(3, 2)  # one decision bit
    ref = StageReference(stage, online=False)
    # inputs 0 and 1 both send M then decision 1 (output 1); input 2 sends M then 0
    out0, _ = ref.step([1, 1, 1], [0, 0])
    out1, _ = ref.step([1, 1, 0], [0, 0])
    assert out0 == [0, 0] and out1 == [1, 1]
    assert ref.holder == [2, 0] and ref.holds == [1, None, 0]
    assert run_stage(stage, False, SEED) is None


def test_stage_switch_rejects_bad_stages():
    with pytest.raises(ValueError):
        StageSwitch(build_stage_complete(3, 2).__class__(
            inputs=2, outputs=2, adjacency=((0, 1), (0, 5)), kind="complete", guarantee=2,
            seed=None, decision_width=1, achieved_alpha=1.0, alpha_exact=True),
            online=False)


# ------------------------------------------------------------------ Selector
@pytest.mark.parametrize("width", [1, 3, 8])
def test_selector_matches_reference(width):
    T, cycles = 16, 4
    seed = SEED + width
    rng = np.random.default_rng(seed)
    dut = Selector(width)
    ref = SelectorReference(width)
    problems = []

    async def bench(ctx):
        for c in range(cycles):
            data = _streams(rng, width, 0, T, 0.8, 1)  # M, then turn bit and payload
            a0 = rng.integers(0, 2, size=(T, width))
            a1 = rng.integers(0, 2, size=(T, width))
            ctx.set(dut.clear, 1)
            ctx.set(dut.i.data, 0)
            await ctx.tick()
            ctx.set(dut.clear, 0)
            ref.clear()
            for t in range(T):
                ctx.set(dut.i.data, _word(data[t]))
                ctx.set(dut.b0.ack, _word(a0[t]))
                ctx.set(dut.b1.ack, _word(a1[t]))
                b0, b1, ack = ref.step(list(data[t]), list(a0[t]), list(a1[t]))
                got = (_bits(ctx.get(dut.b0.data), width),
                       _bits(ctx.get(dut.b1.data), width),
                       _bits(ctx.get(dut.i.ack), width))
                if got != (b0, b1, ack):
                    problems.append(f"cycle {c} bit-time {t}: (b0, b1, i.ack) {got} "
                                    f"expected {(b0, b1, ack)}")
                    return
                await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert not problems, f"Selector width {width} seed {seed}: {problems[0]}"


def test_selector_rejects_bad_width():
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError):
            Selector(bad)
