"""The self-testing top's components, each alone on Amaranth's simulator against the
arithmetic of :mod:`fatnet.golden.bist`: the UART transmitter (bytes in, the 8N1 line
out, clock for clock, with back-pressure), the report formatter (a report's words of
random counters in, :func:`~fatnet.golden.bist.report_line` and CR LF out, whatever the
consumer's pace), the counters (random outcome flags, counted in stages, their report
words clock for clock), the traffic
generator (its draws, streams and outcome flags against :func:`~fatnet.golden.bist.draw`
and :func:`~fatnet.golden.bist.make_payload`) and the checker (payloads that pass and fail
:func:`~fatnet.golden.bist.payload_ok`); and their refusals of bad parameters.

Every random choice comes from the test's seed; replay a failure with
``python -m pytest tests/test_bist_parts.py -k '<test name> and <seed>'``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from amaranth import Const, Elaboratable, Module, Mux, ResetInserter, Signal
from amaranth.lib import wiring
from amaranth.sim import Simulator

from fatnet.golden import bist as gb
from fatnet.golden.bitstream import bits_to_int, int_to_bits
from fatnet.hdl.bist import BistCore
from fatnet.hdl import bist_config
from fatnet.hdl.bist_config import BistConfig
from fatnet.hdl.bist_counters import (SOURCE_OUTCOMES, WIRE_OUTCOMES, BistCounters,
                                      collisions_undefined)
from fatnet.hdl.bist_report import ReportFormatter
from fatnet.hdl.bist_draws import DrawEngine, draw_const
from fatnet.hdl.bist_traffic import SEND_LEAD, PayloadChecker, TrafficGenerator, shift_counter
from fatnet.hdl.bist_uart import FRAME_BITS, UartTx
from fatnet.sim.bist import decode_uart, fixed_arrival

HERE = "tests/test_bist_parts.py"
#: The simulated clock's period (s).
CLOCK = 1e-6


def simulate(dut, bench) -> None:
    """Run ``bench(ctx)`` as the testbench of ``dut`` on one clock."""
    sim = Simulator(dut)
    sim.add_clock(CLOCK)
    sim.add_testbench(bench)
    sim.run()


def replay(test: str, seed: int) -> str:
    return f"seed {seed}: python -m pytest {HERE} -k '{test} and {seed}'"


# ------------------------------------------------------------------ the UART
def uart_line(transfers, div: int, clocks: int) -> list[int]:
    """The line, clock by clock, of bytes taken at the given clocks: each frame from the
    clock after its transfer, every bit ``div`` clocks; 1 elsewhere."""
    line = [1] * clocks
    for clock, byte in transfers:
        frame = [0] + int_to_bits(byte, 8)[::-1] + [1]     # LSB first
        for j, bit in enumerate(frame):
            start = clock + 1 + j * div
            line[start:start + div] = [bit] * div
    return line


@pytest.mark.parametrize("seed", range(4))
def test_the_uart_sends_each_byte_8n1_and_holds_the_next_back(seed):
    rng = np.random.default_rng(seed)
    div = int(rng.integers(2, 6))
    data = [int(b) for b in rng.integers(0, 256, 10)]
    clocks = len(data) * (FRAME_BITS * div + 1) * 3
    dut = UartTx(div)
    transfers, line, readies = [], [], []

    async def bench(ctx):
        offered, i = None, 0
        for clock in range(clocks):
            # a byte once offered stays offered until taken (the stream's rule)
            if offered is None and i < len(data) and rng.random() < 0.5:
                offered, i = data[i], i + 1
            ctx.set(dut.i_stream.valid, offered is not None)
            ctx.set(dut.i_stream.payload, offered or 0)
            ready = ctx.get(dut.i_stream.ready)
            readies.append(ready)
            line.append(ctx.get(dut.tx))
            if ready and offered is not None:
                transfers.append((clock, offered))
                offered = None
            await ctx.tick()
    simulate(dut, bench)
    where = replay("uart_sends", seed)
    assert [b for _, b in transfers] == data, where
    assert line == uart_line(transfers, div, clocks), where
    busy = [any(k < c <= k + FRAME_BITS * div for k, _ in transfers) for c in range(clocks)]
    assert readies == [not b for b in busy], where
    assert decode_uart(line, div) == "".join(map(chr, data)), where


# ------------------------------------------------------------------ the report
def random_counts(rng) -> dict:
    """Seven counters, the extremes among them."""
    counts = {name: int(v) for name, v in zip(gb.COUNTERS, rng.integers(0, 1 << 32, 7))}
    counts[gb.COUNTERS[int(rng.integers(7))]] = 0
    counts[gb.COUNTERS[int(rng.integers(7))]] = (1 << 32) - 1
    return counts


async def send_report(ctx, stream, counts: dict, rng):
    """A report's words on ``stream`` (:data:`~fatnet.hdl.bist_counters.REPORT_WORD`), in
    a random order with random gaps, the cycles' last and marked so (async)."""
    order = [int(k) for k in rng.permutation(range(1, 7))] + [0]
    for k in order:
        for _ in range(int(rng.integers(0, 3))):
            await ctx.tick()
        ctx.set(stream.valid, 1)
        ctx.set(stream.payload, {"index": k, "value": counts[gb.COUNTERS[k]],
                                 "last": k == 0})
        await ctx.tick()
        ctx.set(stream.valid, 0)


@pytest.mark.parametrize("seed", range(4))
def test_the_formatter_sends_its_snapshots_report_line_at_any_pace(seed):
    rng = np.random.default_rng(seed)
    dut = ReportFormatter()
    snaps = [random_counts(rng) for _ in range(3)]
    lines: list[str] = []
    ready_rate = float(rng.uniform(0.2, 1.0))

    async def bench(ctx):
        for counts in snaps:
            await send_report(ctx, dut.i_report, counts, rng)
            text, held, after = "", None, 0
            # until 20 clocks after the line's end (nothing more is offered), at most
            # 5,000 clocks
            for _ in range(5000):
                after += text.endswith("\r\n")
                if after == 20:
                    break
                ready = bool(rng.random() < ready_rate)
                ctx.set(dut.o_stream.ready, ready)
                valid, char = ctx.get(dut.o_stream.valid), ctx.get(dut.o_stream.payload)
                if held is not None:     # an offered character stays until taken
                    assert (valid, char) == (1, held), (replay("formatter", seed), text)
                held = char if valid and not ready else None
                if valid and ready:
                    text += chr(char)
                await ctx.tick()
            lines.append(text)
    simulate(dut, bench)
    assert lines == [gb.report_line(c) + "\r\n" for c in snaps], replay("formatter", seed)


# ------------------------------------------------------------------ the counters
def counter_flags(rng, N: int, wires: int) -> dict:
    """Random outcome flags of a cycle: each acknowledged message one that was sent."""
    flags = {key: int(rng.integers(0, 1 << N)) for key in SOURCE_OUTCOMES}
    flags["acknowledged"] &= flags["sent"]
    flags.update({key: int(rng.integers(0, 1 << wires)) for key in WIRE_OUTCOMES})
    return flags


def count_cycle(want: dict, flags: dict) -> None:
    """Add a cycle's flags to the counters as the model counts them."""
    ones = {key: bin(v).count("1") for key, v in flags.items()}
    want["cycles"] += 1
    for key in ("offered", "sent", "delivered", "acknowledged"):
        want[key] += ones[key]
    want["lost"] += ones["sent"] - ones["acknowledged"]
    want["errors"] += ones["bad"] + abs(ones["acknowledged"] - ones["delivered"])


@pytest.mark.parametrize("seed", range(4))
def test_the_counters_count_each_cycles_flags_and_report_every_r_cycles(seed):
    rng = np.random.default_rng(seed)
    # terminals and recv wires: the terminals or the wires the wider, an odd count,
    # trees of one, two and three clocks
    N, wires = [(3, 1), (8, 5), (8, 16), (3, 32)][seed]
    R = int(rng.integers(1, 4))
    dut = BistCounters(N, wires, R)
    # latch, a clock per two levels of the adder tree over the most flags, five kinds a
    # clock each, the last sum taken, the errors, the first read, the word read and its
    # increment registered, their sum's low half registered, its high half
    latency = 11 + max(1, math.ceil(math.ceil(math.log2(max(N, wires))) / 2))
    assert dut.latency == latency, replay("counters_count_each", seed)
    # the shortest period, 8 clocks, and longer ones
    period = int(rng.integers(8, 12))
    want = dict.fromkeys(gb.COUNTERS, 0)
    words: dict[int, tuple] = {}     # clock -> the report word written then
    errors: dict[int, int] = {}      # clock -> the error flag from then on
    got = []

    async def bench(ctx):
        for clock in range(period * 24):
            prepare = clock % period == 0
            flags = counter_flags(rng, N, wires)
            ctx.set(dut.prepare, prepare)
            ctx.set(dut.ran, clock > 0)
            for key, v in flags.items():       # noise between prepares: not counted
                ctx.set(getattr(dut.flags, key), v)
            if prepare and clock > 0:
                count_cycle(want, flags)
                errors[clock + latency + 1] = int(want["errors"] > 0)
                if want["cycles"] % R == 0:     # errors (word 6) first, cycles last
                    words.update({clock + latency + 6 - k: (k, want[name], int(k == 0))
                                  for k, name in enumerate(gb.COUNTERS)})
            word = ctx.get(dut.o_report.payload)
            got.append((ctx.get(dut.o_report.valid),
                        (word.index, word.value, word.last), ctx.get(dut.error)))
            await ctx.tick()
    simulate(dut, bench)
    error = 0
    for clock, (valid, word, flag) in enumerate(got):
        error = errors.get(clock, error)
        where = (replay("counters_count_each", seed), clock)
        assert valid == (clock in words) and flag == error, where
        if valid:
            assert word == words[clock], where
    assert want["cycles"] >= 20 and want["errors"] > 0 and len(words) >= 7 * 6


def test_the_counters_count_from_zero_after_a_reset():
    """The memory keeps its words through a reset; the first sweep after it adds to 0."""
    rng = np.random.default_rng(7)
    N, wires, period = 4, 8, 11
    rst = Signal()
    counters = BistCounters(N, wires, 1)
    dut = ResetInserter(rst)(counters)
    # each half of 8 periods: prepares at clocks 1, 12, .., 78; the 7th (67) is written
    # back before the reset at clock 88, the 8th is not
    assert 6 * period + 1 + counters.latency + 6 < 8 * period <= 7 * period + 1 + \
        counters.latency
    reports: list[dict] = []
    want: list[dict] = []

    async def bench(ctx):
        word: dict = {}
        for clock in range(period * 16):
            t = clock % (period * 8)      # a reset at clock 0 and half-way
            ctx.set(rst, t == 0)
            ctx.set(counters.prepare, t % period == 1)
            ctx.set(counters.ran, t > 1)
            flags = counter_flags(rng, N, wires)
            for key, v in flags.items():
                ctx.set(getattr(counters.flags, key), v)
            if t == 0:
                counts = dict.fromkeys(gb.COUNTERS, 0)
            elif t % period == 1 and t > 1:
                count_cycle(counts, flags)
                want.append(dict(counts))
            if ctx.get(counters.o_report.valid):
                payload = ctx.get(counters.o_report.payload)
                word[gb.COUNTERS[payload.index]] = payload.value
                if payload.last:
                    reports.append(dict(word))
            await ctx.tick()
    simulate(dut, bench)
    # each half's last cycle is cut short by the reset before its sweep
    assert reports == want[:6] + want[7:13] and reports[6]["cycles"] == 1


class ReportChain(Elaboratable):
    """The counters, the report formatter and the UART joined as the self-testing top
    joins them."""

    def __init__(self, N, wires, div):
        self.counting, self.report, self.uart = BistCounters(N, wires, 1), ReportFormatter(), \
            UartTx(div)

    def elaborate(self, platform):
        m = Module()
        m.submodules += [self.counting, self.report, self.uart]
        wiring.connect(m, self.counting.o_report, self.report.i_report)
        wiring.connect(m, self.report.o_stream, self.uart.i_stream)
        return m


@pytest.mark.parametrize("N,wires", [(4, 8), (8, 32)])
def test_a_reports_start_bit_is_on_the_wire_at_clock_l_plus_24(N, wires):
    div = 2
    dut = ReportChain(N, wires, div)
    L = max(1, math.ceil(math.ceil(math.log2(max(N, wires))) / 2))
    line: list[int] = []

    async def bench(ctx):
        ctx.set(dut.counting.ran, 1)
        ctx.set(dut.counting.prepare, 1)      # the prepare at clock 0
        await ctx.tick()
        ctx.set(dut.counting.prepare, 0)
        for _ in range(1, L + 24 + 90 * (10 * div + 1)):
            line.append(ctx.get(dut.uart.tx))
            await ctx.tick()
    simulate(dut, bench)
    assert line.index(0) + 1 == L + 24, (N, wires, line.index(0) + 1)
    assert decode_uart(line, div) == gb.report_line(
        {**dict.fromkeys(gb.COUNTERS, 0), "cycles": 1}) + "\r\n"


def test_only_the_read_ports_of_a_memory_marked_no_rw_check_read_undefined_on_collision():
    text = "\n".join([
        "module \\a", "  attribute \\no_rw_check 1", "  memory width 32 size 8 \\mem",
        "  memory width 4 size 2 \\other",
        "  cell $memrd_v2 $1", '    parameter \\MEMID "\\\\mem"',
        "    parameter \\COLLISION_X_MASK 2'00", "  end",
        "  cell $memrd_v2 $2", '    parameter \\MEMID "\\\\other"',
        "    parameter \\COLLISION_X_MASK 1'0", "  end", "end",
        "module \\b", "  memory width 32 size 8 \\mem",
        "  cell $memrd_v2 $1", '    parameter \\MEMID "\\\\mem"',
        "    parameter \\COLLISION_X_MASK 1'0", "  end", "end"])
    got = collisions_undefined(text).split("\n")
    assert [line.strip() for line in got if "COLLISION" in line] == [
        "parameter \\COLLISION_X_MASK 2'11", "parameter \\COLLISION_X_MASK 1'0",
        "parameter \\COLLISION_X_MASK 1'0"]
    assert len(got) == len(text.split("\n"))


# ------------------------------------------------------------------ the traffic
def table_header(headers, H: int):
    """A header rule made from per-terminal tables (random headers follow no family's
    rule): ``(bits, length)`` for a destination value, a comparison per table entry,
    the bits left-aligned in H bits."""
    def header(s, dst):
        bits, length = Const(0, max(H, 1)), Const(0, 4)
        for d, h in headers[s].items():
            value = (bits_to_int(h) << (H - len(h))) if h else 0
            bits = Mux(dst == d, Const(value, max(H, 1)), bits)
            length = Mux(dst == d, Const(len(h), 4), length)
        return bits, length
    return header


def small_config(rng, pattern="random", prefix=0, P=12, N=8,
                 destination=False) -> BistConfig:
    """A config of N terminals with random headers (0 to 4 bits per destination), or
    with the destination's bits as the header (``destination``)."""
    n = (N - 1).bit_length()
    headers = []
    for s in range(N):
        dests = [d for d in range(N) if d != s] if pattern == "random" else \
            [d for d in [gb.FIXED_PATTERNS[pattern](s, n)] if d != s]
        headers.append({d: int_to_bits(d, n) if destination else
                        [int(b) for b in rng.integers(0, 2, int(rng.integers(0, 5)))]
                        for d in dests})
    H = max(len(h) for hs in headers for h in hs.values())
    return BistConfig(cycle_length=1 + H + prefix + P + int(rng.integers(0, 3)),
                      start_latency=0, pattern=pattern, payload_bits=P, prefix=prefix,
                      headers=tuple(headers), header=table_header(headers, H),
                      states=tuple(gb.initial_state(int(rng.integers(1 << 30)), s)
                                   for s in range(N)),
                      offer_threshold=gb.threshold(float(rng.choice([1.0, 0.6]))),
                      report_cycles=1, baud_divisor=2)


def period_clock(k: int, config: BistConfig) -> tuple[bool, bool, bool]:
    """(prepare, live, ran) at clock k of a run of the config's periods (start latency
    0): prepare at 0, the start strobe at 1, the T bit-times from 2 on."""
    t = k % config.period
    return t == 0, 2 <= t < config.cycle_length + 2, k > 0


class GeneratorModel:
    """What terminal s's generator does, from :mod:`fatnet.golden.bist`: a period at a
    time, its outcome flags and its stream."""

    def __init__(self, config: BistConfig, s: int):
        self.c, self.s = config, s
        self.x, self.active, self.drew, self.dst, self.seq = config.states[s], False, False, 0, 0

    def prepare(self, ran: bool, acked: bool, flip: bool):
        """The flags of the cycle that ended (offered, sent, acknowledged, lost), then
        the next cycle's stream (T bits)."""
        c, s, n = self.c, self.s, self.c.n
        flags = (ran and self.drew, ran and self.active, ran and self.active and acked,
                 ran and self.active and not acked)
        acked = flags[2]
        self.seq += acked
        self.took = not (self.active and not acked)
        if self.took:
            self.x, offers, d = gb.draw(self.x, s, n, c.offer_threshold, c.pattern)
            self.active = self.drew = bool(offers)
            self.dst = d if offers else self.dst
        else:
            self.drew = False
        stream = []
        if self.active:
            pay = gb.make_payload(s, self.dst, self.seq, c.payload_bits, n) ^ flip
            stream = [1] + c.headers[s][self.dst] + int_to_bits(pay, c.payload_bits)
        return tuple(map(int, flags)), stream + [0] * (c.cycle_length - len(stream))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("pattern", ["random", "shift"])
def test_the_generator_draws_and_sends_as_the_model(pattern, seed):
    rng = np.random.default_rng([seed, len(pattern)])
    # seed 3: two terminals, whose period can be the generator's steps (m + 1 = 10
    # clocks) rather than the cycle's (T + 2 >= 9); seeds 4, 5: the header is the
    # destination and the sequence number n bits (the generator keeps the destination)
    config = small_config(rng, pattern, **({"N": 2, "P": 6} if seed == 3 else
                                           {"N": 16, "destination": True} if seed >= 4
                                           else {}))
    config = BistConfig(**{**vars(config), "flip_cycle": 0})    # the flip's logic built
    s = int(rng.integers(config.terminals))
    T, periods = config.cycle_length, 24
    period = config.period
    dut = TrafficGenerator(config, s)
    assert dut.keeps_destination == (seed >= 4)
    model = GeneratorModel(config, s)
    flip_at = int(rng.integers(periods))
    where = replay(f"generator_draws and {pattern}", seed)

    async def bench(ctx):
        acked, stream, ack_at = False, [], -1
        for k in range(period * periods):
            prepare, live, ran = period_clock(k, config)
            p, t = divmod(k, period)
            ctx.set(dut.prepare, prepare)
            ctx.set(dut.live, live)
            ctx.set(dut.ran, ran)
            # the draw engine: at clock 2, the draw of the state the model moved on to
            # if the terminal took its draw, else of the state after that (not taken)
            if t == 2:
                assert ctx.get(dut.took) == model.took, (where, "period", p)
                x = model.x if model.took else gb.draw(model.x, s, config.n, 0, "random")[0]
                ctx.set(dut.draw, draw_const(config, x))
            ctx.set(dut.draw_ready, t == 2)
            # the kept stream's bit-times (a terminal whose headers have one length),
            # each strobe SEND_LEAD clocks before its bit-time
            for name, times in dut.strobes.items():
                ctx.set(getattr(dut, name), t - 2 + SEND_LEAD in times)
            ctx.set(dut.flip, prepare and p == flip_at)
            # the acknowledgment at one bit-time of a cycle, or none; noise outside
            ctx.set(dut.send_ack, t - 2 == ack_at or (not live and rng.random() < 0.5))
            if prepare:
                flags, stream = model.prepare(ran, acked, p == flip_at)
                have = tuple(ctx.get(getattr(dut, key)) for key in ("offered", "sent",
                                                                  "acknowledged", "lost"))
                assert have == flags or not ran, (where, "period", p)   # counted if ran
                ack_at = int(rng.integers(T)) if rng.random() < 0.6 else -1
                acked = ack_at >= 0
            bit = stream[t - 2] if live else 0
            assert ctx.get(dut.send) == bit, (where, "period", p, "clock", t)
            await ctx.tick()
    simulate(dut, bench)


@pytest.mark.parametrize("seed", range(3))
def test_the_draw_engine_moves_a_state_on_by_a_draw_where_its_terminal_took_it(seed):
    """Every pass of the engine after a prepare offers each terminal that took its draw
    the draw of its state moved on by :func:`~fatnet.golden.bist.draw` (one word of
    terminals a clock, before the next prepare), from the first states after a reset
    (one of a clock in the middle of a period); a terminal that did not take its draw
    keeps its state."""
    rng = np.random.default_rng([seed, 11])
    config = small_config(rng, N=[8, 16, 32][seed], P=14)
    config = BistConfig(**{**vars(config), "offer_threshold": gb.threshold(0.6)})
    engine = DrawEngine(config)
    rst = Signal(name="rst")
    dut = ResetInserter(rst)(engine)
    N, n, k = config.terminals, config.n, engine.lanes
    assert engine.words * k == N and engine.words + 1 + 2 <= config.period - 1
    took: list = []
    want: dict = {}
    where = replay("draw_engine", seed)
    reset_at = int(rng.integers(3, 8)) * config.period + int(rng.integers(config.period))

    async def bench(ctx):
        nonlocal took, want
        states, seen, t, p, ran = list(config.states), None, 0, 0, False
        for clock in range(config.period * 12):
            ctx.set(rst, clock == reset_at)   # a reset of one clock, mid-period
            ctx.set(engine.prepare, t == 0)
            ctx.set(engine.ran, ran)
            if t == 0:
                assert seen in (None, set(range(engine.words))), (where, "period", p)
                took = [True] * N if not ran else [bool(b) for b in rng.integers(0, 2, N)]
                states = list(config.states) if not ran else states
                for i in range(N):
                    if took[i]:
                        states[i] = gb.draw(states[i], i, n, 0, "random")[0]
                want, seen = {i: draw_const(config, states[i]) for i in range(N)}, set()
                # took: no message, or a new one; else a message kept
                sent = [not took[i] or bool(rng.integers(2)) for i in range(N)]
                ctx.set(engine.sent, sum(1 << i for i in range(N) if sent[i]))
                ctx.set(engine.offered, sum(1 << i for i in range(N)
                                            if took[i] and sent[i]))
            ready = ctx.get(engine.ready)
            for w in range(engine.words):
                if ready >> w & 1:
                    seen.add(w)
                    for j in range(k):
                        i = w * k + j
                        assert not took[i] or ctx.get(engine.draws[j]) == want[i], \
                            (where, "period", p, "terminal", i)
            await ctx.tick()
            # as the top's period: a reset restarts it (prepare next, no cycle run)
            t, ran = (0, False) if clock == reset_at else ((t + 1) % config.period, True)
            p, seen = p + (t == 0), None if clock == reset_at else seen
    simulate(dut, bench)


@pytest.mark.parametrize("seed", range(4))
def test_the_checker_passes_a_sound_payload_and_fails_any_other(seed):
    rng = np.random.default_rng(seed)
    # q = P - 6 sequence bits among 8 terminals: every alignment of the source's
    # chunk to the others' (q mod n = 0, 1, 2)
    config = small_config(rng, prefix=int(rng.integers(0, 4)), P=12 + seed % 3)
    n, P, T, pre = config.n, config.payload_bits, config.cycle_length, config.prefix
    s = int(rng.integers(config.terminals))
    dut = PayloadChecker(config, s)
    where = replay("checker_passes", seed)
    kinds = ["none", "sound", "flipped", "elsewhere", "late"]

    def message(kind):
        """(the cycle's recv bits, whether the payload is complete and passes)."""
        src, seq = (int(v) for v in rng.integers(0, 1 << 10, 2))
        src %= config.terminals
        dst = s if kind != "elsewhere" else (s + 1 + int(rng.integers(config.terminals - 1))) \
            % config.terminals
        pay = gb.make_payload(src, dst, seq, P, n)
        if kind == "flipped":
            pay ^= 1 << int(rng.integers(P))
        junk = [int(b) for b in rng.integers(0, 2, pre)]
        body = [1] + junk + int_to_bits(pay, P)
        at = T - len(body) + 1 if kind == "late" else int(rng.integers(T - len(body) + 1))
        bits = ([0] * at + body + [0] * T)[:T] if kind != "none" else [0] * T
        done = kind not in ("none", "late")
        return bits, at, (done and gb.payload_ok(pay, s, P, n), done and not
                          gb.payload_ok(pay, s, P, n))

    async def bench(ctx):
        want, bits, at = (0, 0), [0] * T, T
        for k in range(config.period * 30):
            prepare, live, ran = period_clock(k, config)
            p, t = divmod(k, config.period)
            ctx.set(dut.prepare, prepare)
            ctx.set(dut.live, live)
            ctx.set(dut.ran, ran)
            if prepare:
                have = (ctx.get(dut.delivered), ctx.get(dut.bad))
                assert have == tuple(map(int, want)) or not ran, (where, "period", p)
                bits, at, want = message(kinds[int(rng.integers(len(kinds)))])
            # noise outside the bit-times
            ctx.set(dut.recv, bits[t - 2] if live else int(rng.integers(2)))
            assert ctx.get(dut.recv_ack) == (live and t - 2 >= at and any(bits)), (where, p, t)
            await ctx.tick()
    simulate(dut, bench)


def test_the_payloads_bit_times_are_fixed_only_where_every_message_arrives_at_one():
    # T = 19, no prefix, P = 12: a message arriving at bit-time 6 ends the cycle
    assert fixed_arrival({6}, 19, 0, 12) == 6
    assert fixed_arrival({6, None}, 19, 0, 12) == 6     # one lost on a stuck link
    assert fixed_arrival({2, 6}, 19, 0, 12) is None     # the fat-tree's paths
    assert fixed_arrival({5}, 19, 0, 12) is None        # a later message could end
    assert fixed_arrival({3}, 19, 3, 12) == 3
    assert fixed_arrival({None}, 19, 0, 12) is None


@pytest.mark.parametrize("seed", range(4))
def test_a_checker_on_the_payloads_strobes_flags_as_the_counting_one(seed):
    """Where every message arrives at one bit-time a and its payload ends the cycle, the
    checker that takes the payload's bit-times from the period's strobes raises the
    same acknowledgment and flags as the one that counts them, for a message at a,
    none, one later (never complete) and a stream of ones from a bit-time up to a
    (a wire stuck at 1); and the flags are the check's."""
    rng = np.random.default_rng([seed, 7])
    counted = small_config(rng, prefix=int(rng.integers(0, 3)), P=12 + seed % 3)
    n, P, pre = counted.n, counted.payload_bits, counted.prefix
    a = int(rng.integers(0, 4))
    T = a + 1 + pre + P
    counted = BistConfig(**{**vars(counted), "cycle_length": T})
    windowed = BistConfig(**{**vars(counted), "arrival": a})
    s = int(rng.integers(counted.terminals))
    top = Module()
    top.submodules.counted = counting = PayloadChecker(counted, s)
    top.submodules.windowed = dut = PayloadChecker(windowed, s)
    assert dut.windowed and not counting.windowed
    where = replay("payloads_strobes", seed)
    kinds = ["none", "sound", "flipped", "elsewhere", "late", "ones"]

    def message(kind):
        """(the cycle's recv bits, the flags the checker must raise)."""
        dst = s if kind != "elsewhere" else (s + 1) % counted.terminals
        pay = gb.make_payload(int(rng.integers(counted.terminals)), dst,
                              int(rng.integers(1 << 10)), P, n)
        pay ^= (1 << int(rng.integers(P))) if kind == "flipped" else 0
        body = [1] + [int(b) for b in rng.integers(0, 2, pre)] + int_to_bits(pay, P)
        if kind == "none":
            return [0] * T, (0, 0)
        if kind == "ones":
            return [0] * int(rng.integers(a + 1)) + [1] * T, \
                (gb.payload_ok((1 << P) - 1, s, P, n), not gb.payload_ok((1 << P) - 1, s, P, n))
        at = a if kind != "late" else a + 1 + int(rng.integers(T - a - 1))
        ok = gb.payload_ok(pay, s, P, n)
        return [0] * at + body, (0, 0) if kind == "late" else (ok, not ok)

    async def bench(ctx):
        want, bits = (0, 0), [0] * T
        for k in range(windowed.period * 40):
            prepare, live, ran = period_clock(k, windowed)
            p, b = divmod(k, windowed.period)
            b -= 2    # the bit-time
            for chk in (counting, dut):
                ctx.set(chk.prepare, prepare)
                ctx.set(chk.live, live)
                ctx.set(chk.ran, ran)
            ctx.set(dut.arrived, live and b == a)
            ctx.set(dut.in_payload, live and b > a + pre)
            ctx.set(dut.in_source, live and a + pre < b <= a + pre + n)
            if prepare:
                for chk in (counting, dut):
                    have = (ctx.get(chk.delivered), ctx.get(chk.bad))
                    assert have == tuple(map(int, want)) or not ran, (where, "period", p)
                bits, want = message(kinds[int(rng.integers(len(kinds)))])
                bits = (bits + [0] * T)[:T]
            bit = bits[b] if live else int(rng.integers(2))    # noise outside
            for chk in (counting, dut):
                ctx.set(chk.recv, bit)
            assert ctx.get(dut.recv_ack) == ctx.get(counting.recv_ack), (where, p, b)
            await ctx.tick()
    simulate(top, bench)


@pytest.mark.parametrize("length", [1, 2, 5, 14, 15, 16, 40, 127, 200])
def test_the_shift_counter_steps_through_distinct_states(length):
    width, tap, states = shift_counter(length)
    mask = (1 << width) - 1
    assert len(states) == length + 1 == len(set(states)) and states[0] == mask
    for a, b in zip(states, states[1:]):      # shifted up, bit 0 the top's XOR the tap's
        assert b == ((a << 1) & mask) | ((a >> (width - 1) ^ a >> tap) & 1)
    assert width <= length.bit_length() + 1   # at most a bit wider than a binary count


# ------------------------------------------------------------------ bad parameters
def test_a_component_refuses_bad_parameters_in_one_line(never_elaborated):
    rng = np.random.default_rng(0)
    config = small_config(rng)
    cases = [
        (lambda: UartTx(1), "baud_divisor must be an int >= 2, got 1"),
        (lambda: UartTx(True), "baud_divisor must be an int >= 2, got True"),
        (lambda: BistCounters(8, 0, 1), "wires must be an int >= 1, got 0"),
        (lambda: BistCounters(8, 8, 0), "report_cycles must be an int >= 1, got 0"),
        (lambda: TrafficGenerator(config, 8), r"terminal must be in \[0, 7\], got 8"),
        (lambda: PayloadChecker(config, -1), r"terminal must be in \[0, 7\], got -1"),
        (lambda: BistCore(None, [], config), r"ports must be one per terminal of the "
                                             r"config \(8\), got 0"),
        (lambda: BistConfig(**{**vars(config), "states": config.states[:3]}),
         "the terminals .states. must be a power of two >= 2, got 3"),
        (lambda: BistConfig(**{**vars(config), "baud_divisor": 1}),
         "baud_divisor must be >= 2, got 1"),
        (lambda: BistConfig(**{**vars(config), "payload_bits": 9}),
         "payload_bits must be >= 2n . 4 = 10, got 9"),
        (lambda: BistConfig(**{**vars(config), "states": (1,) * (1 << 17),
                               "headers": ({},) * (1 << 17)}),
         r"the terminals must be at most 2\^16 \(the generator's address bits\), got 2\^17"),
        (lambda: BistConfig(**{**vars(config), "arrival": config.cycle_length}),
         f"arrival . 1 . prefix . payload_bits must be cycle_length "
         f"{config.cycle_length}, got arrival {config.cycle_length}"),
        (lambda: DrawEngine(None), "config must be a BistConfig, got None")]
    with never_elaborated():   # each refused in its constructor, never elaborated
        for make, words in cases:
            with pytest.raises(ValueError, match=words):
                make()


def test_a_period_shorter_than_the_count_is_refused_in_one_line(monkeypatch,
                                                                never_elaborated):
    # A period is at least the generator's m + 1 = 12 clocks among 8 terminals, above
    # the count's shortest (MIN_PERIOD, 8): a count that needed longer shows the refusal.
    config = BistConfig(**{**vars(small_config(np.random.default_rng(0))), "cycle_length": 10})
    assert config.period == gb.draw_steps(3) + 1 == 12
    monkeypatch.setattr(bist_config, "MIN_PERIOD", 13)
    with never_elaborated():
        with pytest.raises(ValueError, match="the BIST period must be >= 13 clocks, the "
                                             r"count's \(each kind's sum held until the "
                                             r"counters' sweep takes it\); "
                                             "cycle_length 10 gives 12"):
            BistConfig(**vars(config))
