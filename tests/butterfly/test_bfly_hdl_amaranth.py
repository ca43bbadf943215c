"""Splitter networks on Amaranth's own simulator against the cycle-exact model: the breadth
of issue 10 section 2 (kinds, multiplicities, faults, run-time fault masks, patterns,
full load with retries), every recv and send_ack wire at every bit-time and every
switch's settled status register, through the same planner and comparator as cocotb
(``fatnet.sim.plan``). The cocotb runs (tests/butterfly/test_bfly_cosim.py) cover a
representative set on Icarus and Verilator.

Replay a failure with ``python -m pytest tests/butterfly/test_bfly_hdl_amaranth.py -k <id>``;
the seed is in the test id and in the message.
"""

import numpy as np
import pytest

from fatnet.golden.butterfly.cyclemodel import CircuitNetwork, run_circuit
from fatnet.golden.butterfly.faults import adversarial_faults, apply_faults, random_faults
from fatnet.golden.butterfly.patterns import make_problems
from fatnet.golden.butterfly.topology import make_network
from fatnet.golden.seeds import generator
from fatnet.golden.errors import FatnetInputError
from fatnet.golden.messages import MessageSet
from fatnet.sim.amaranth_bench import run_cycles_amaranth, run_cycles_harness_amaranth
from fatnet.sim.butterfly.ports import masked_circuit, mask_width
from fatnet.sim.plan import compare_cycle, plan_cycle, plans
from fatnet.api.registry import family_of

PATTERNS = ["random-destinations", "random-permutation", "transpose", "bit-reversal",
            "hot-spot"]


def circuit(kind, n, d, faults=None, count=0, seed=0, payload_bits=4, link_stages=0):
    """A golden network: ``faults`` None, "random" or "adversarial" (``count`` of them)."""
    net = make_network(kind, n, d, seed=seed)
    if faults == "random":
        net = apply_faults(net, random_faults(net, count, seed=seed))
    elif faults == "adversarial":
        net = apply_faults(net, adversarial_faults(net, count, "propagate"))
    return CircuitNetwork(net, payload_bits, link_stages=link_stages)


def messages(c, pattern, seed, problems=1):
    n = c.n_inputs
    dst = make_problems(pattern, n, problems, rng=generator(seed, "traffic"),
                        hot_fraction=0.25)
    return MessageSet.from_pairs(np.tile(np.arange(n), problems), dst.reshape(-1),
                                 c.payload_bits, seed)


def random_mask(c, count, seed):
    rng = np.random.default_rng(seed)
    bits = np.zeros(mask_width(c), dtype=bool)
    bits[rng.choice(bits.size, size=count, replace=False)] = True
    return bits


def masked_run(c, ms, masks, max_cycles=4):
    """Full load under each mask in turn (the model's on-line runs with retries, from
    the same messages): (cycle results, one mask per cycle)."""
    results, per_cycle = [], []
    for mk in masks:
        rep = run_circuit(masked_circuit(c, mk), ms, keep_results=True, max_cycles=max_cycles)
        results += rep.results
        per_cycle += [mk] * len(rep.results)
    return results, per_cycle


def check(results, why):
    bad = [f"cycle {i}: {mm}" for i, (_, mms) in enumerate(results) for mm in mms]
    assert not bad, "RTL differs from the model:\n  " + "\n  ".join(bad[:20]) + f"\n{why}"


NETS = [
    ("butterfly", 4, 1), ("butterfly", 16, 1), ("dilated-butterfly", 8, 2),
    ("dilated-butterfly", 8, 3), ("multibutterfly", 8, 2), ("multibutterfly", 8, 3),
]


@pytest.mark.parametrize("faults", [None, "random", "adversarial"])
@pytest.mark.parametrize("kind,n,d", NETS, ids=[f"{k}-n{n}-d{d}" for k, n, d in NETS])
def test_full_load_with_retries_as_the_model_predicts(kind, n, d, faults):
    """Random destinations at full load, two messages per input: the model's own on-line
    run (losses, retries, faults) replayed cycle after cycle."""
    seed = n + d
    c = circuit(kind, n, d, faults, count=max(1, n // 4), seed=seed)
    ms = messages(c, "random-destinations", seed, problems=2)
    rep = run_circuit(c, ms, keep_results=True, max_cycles=6)
    assert rep.results
    check(run_cycles_amaranth(c, ms, rep.results, family=family_of(c)),
          f"{kind} N={n} d={d} faults={faults} seed {seed}")


@pytest.mark.parametrize("link_stages", [1, 2, 3])
@pytest.mark.parametrize("kind,n,d", [("butterfly", 16, 1), ("multibutterfly", 8, 2),
                                      ("dilated-butterfly", 8, 3)])
def test_pipelined_links_keep_the_model_exact(kind, n, d, link_stages):
    """--link-stages: registers on every switch-to-switch link, each way; the model's
    timing follows (later arrival and acknowledgment, a longer cycle), with placed faults
    and a run-time mask changed between cycles (the status registers are not pipelined)."""
    seed = 5 + link_stages
    c = circuit(kind, n, d, "random", count=1, seed=seed, link_stages=link_stages)
    plain = circuit(kind, n, d, "random", count=1, seed=seed)
    links = link_stages * (c.depth - 1)
    assert (c.arrival, c.ack_latency) == (plain.arrival + links, plain.ack_latency + links)
    ms = messages(c, "random-destinations", seed, problems=2)
    results, per_cycle = masked_run(c, ms, [None, random_mask(c, 2, seed)])
    check(run_cycles_amaranth(c, ms, results, masks=per_cycle, family=family_of(c)),
          f"{kind} N={n} d={d} link_stages={link_stages} seed {seed}")


def stuck_on_a_route(c, ms, seed):
    """A link ``(level, row, wire)`` that the model's first cycle of ``ms`` routes a
    message onto (drawn with ``seed`` among them), so that holding it at 0 matters."""
    rep = run_circuit(c, ms, keep_results=True, max_cycles=1)
    used = sorted({(occ.channel[0], occ.channel[1], occ.wire)
                   for o in rep.results[0].outcomes.values() for occ in o.path
                   if 0 < occ.channel[0] < c.depth})
    return used[np.random.default_rng(seed).integers(len(used))]


STUCK_NETS = [("butterfly", 16, 1, 0), ("multibutterfly", 8, 2, 1),
              ("dilated-butterfly", 8, 2, 0), ("butterfly", 16, 1, 2)]


@pytest.mark.parametrize("value", [0, 1])
@pytest.mark.parametrize("kind,n,d,link_stages", STUCK_NETS)
def test_a_stuck_link_loses_what_the_model_loses(kind, n, d, link_stages, value,
                                                 amaranth_runs):
    """--stuck-link: a link held at 0 or 1 inside the network, which no status register
    knows of. The model loses every message routed onto it (and the edge stays taken);
    at 1 the switch it feeds routes a phantom stream of ones, which takes edges, is
    delivered, and whose acknowledgment reaches the source of what was lost on the
    wire. The hardware does exactly that, wire for wire, over cycles of retries. The
    same results driven through the sound network differ, so the check can fail."""
    seed = 21 + d + link_stages
    sound = circuit(kind, n, d, link_stages=link_stages, seed=seed)
    ms = messages(sound, "random-destinations", seed, problems=2)
    link = stuck_on_a_route(sound, ms, seed)
    c = CircuitNetwork(sound.network, sound.payload_bits, link_stages=link_stages,
                       stuck_wires={link: value})
    rep = run_circuit(c, ms, keep_results=True, max_cycles=4)
    reasons = [o.lost_at[3] for res in rep.results for o in res.outcomes.values()
               if o.status == "lost"]
    assert f"its wire is stuck at {value}" in reasons
    if value:
        assert all(res.phantoms[-1].status == "delivered" for res in rep.results)
    why = f"{kind} N={n} d={d} link_stages={link_stages} stuck link {link}:{value} seed {seed}"
    check(run_cycles_amaranth(c, ms, rep.results, family=family_of(c)), why)
    differs = amaranth_runs(sound, ms, rep.results)  # the sound build: both values
    assert any(mms for _, mms in differs), f"the sound network matched the stuck one: {why}"


def test_a_stuck_link_is_refused_outside_the_network():
    c = circuit("butterfly", 8, 1)
    for key, value, words in [((0, 1, 0), 0, "level must be in [1, 2]"),
                              ((3, 1, 0), 0, "level must be in [1, 2]"),
                              ((1, 8, 0), 0, "row must be in [0, 7]"),
                              ((1, 2, 2), 0, "wire must be in [0, 1]"),
                              ((1, 2, 0), 2, "value must be 0 or 1")]:
        with pytest.raises(FatnetInputError, match=words.replace("[", r"\[")):
            CircuitNetwork(c.network, 4, stuck_wires={key: value})


@pytest.mark.parametrize("start_stages", [1, 3])
@pytest.mark.parametrize("kind,n,d,link_stages", [("butterfly", 16, 1, 0),
                                                  ("multibutterfly", 8, 2, 1)])
def test_a_start_tree_delays_the_whole_cycle_and_nothing_else(kind, n, d, link_stages,
                                                              start_stages):
    """--start-stages: the strobe reaches the switches and the controller through
    register stages, so bit-time 0 is the clock start_stages + 1 after it; the model's
    bit-times do not change. Back-to-back cycles under a changing run-time mask, driven
    port by port and through the packed harness (which clears its acknowledgments until
    the switches are cleared: their outputs are the last cycle's until then)."""
    seed = 11 + start_stages
    c = circuit(kind, n, d, "random", count=1, seed=seed, link_stages=link_stages)
    tree = CircuitNetwork(c.network, c.payload_bits, link_stages=link_stages,
                          start_stages=start_stages)
    assert (tree.arrival, tree.ack_latency, tree.cycle_length) == \
        (c.arrival, c.ack_latency, c.cycle_length)
    ms = messages(tree, "random-destinations", seed, problems=2)
    results, per_cycle = masked_run(tree, ms, [None, random_mask(tree, 2, seed)])
    why = f"{kind} N={n} d={d} start_stages={start_stages} seed {seed}"
    check(run_cycles_amaranth(tree, ms, results, masks=per_cycle, family=family_of(tree)),
          why)
    check(run_cycles_harness_amaranth(tree, ms, results, masks=per_cycle,
                                      family=family_of(tree)), why)


def test_a_driver_that_ignores_the_start_tree_sees_other_wires(monkeypatch):
    """The start latency is observable: the same run, driven as if bit-time 0 were the
    clock after the strobe, differs from the model (so the test above can fail)."""
    from fatnet.sim import amaranth_bench
    c = circuit("butterfly", 8, 1, seed=2)
    tree = CircuitNetwork(c.network, c.payload_bits, start_stages=2)
    ms = messages(tree, "random-destinations", 2)
    rep = run_circuit(tree, ms, keep_results=True, max_cycles=3)
    monkeypatch.setattr(amaranth_bench, "start_latency", lambda net: 0)
    results = run_cycles_amaranth(tree, ms, rep.results, family=family_of(tree))
    assert sum(len(mms) for _, mms in results) > 0


@pytest.mark.parametrize("pattern", PATTERNS)  # one after the other: one build
@pytest.mark.parametrize("kind,n,d", [("butterfly", 16, 1), ("multibutterfly", 8, 2),
                                      ("dilated-butterfly", 8, 3)])
def test_patterns(kind, n, d, pattern, amaranth_runs):
    seed = 3
    c = circuit(kind, n, d, "random", count=2, seed=seed)
    ms = messages(c, pattern, seed)
    rep = run_circuit(c, ms, keep_results=True, max_cycles=4)
    check(amaranth_runs(c, ms, rep.results), f"{kind} N={n} {pattern} seed {seed}")


@pytest.mark.parametrize("kind,n,d", [("multibutterfly", 8, 2), ("dilated-butterfly", 8, 3),
                                      ("butterfly", 32, 1)])
def test_fault_masks_changed_between_cycles(kind, n, d):
    """Run-time masks (on top of placed faults), changed between cycles and back to none:
    each cycle runs as the network with (placed | mask) propagated, and every switch's
    settled status register equals that propagation."""
    seed = 11
    c = circuit(kind, n, d, "random", count=1, seed=seed)
    ms = messages(c, "random-permutation", seed)
    w = mask_width(c)
    masks = [None, random_mask(c, 2, seed), random_mask(c, max(2, w // 4), seed + 1),
             np.zeros(w, dtype=bool), random_mask(c, max(2, w // 2), seed + 2)]
    results, per_cycle = masked_run(c, ms, masks)
    out = run_cycles_amaranth(c, ms, results, masks=per_cycle, family=family_of(c))
    check(out, f"{kind} N={n} d={d} masks seed {seed}")
    assert any(p.expect_status.any() for p, _ in out)  # the status check saw faults
    # index cycles under masks give the same plans as the masked model's results
    for res, mk, plan in zip(results, per_cycle,
                             plans(c, ms, results, per_cycle, family=family_of(c))):
        again = plan_cycle(c, ms, sorted(res.outcomes), mk, family=family_of(c))
        assert plan.mask == again.mask
        for a, b in ((plan.drive, again.drive), (plan.expect_recv, again.expect_recv)):
            assert all(np.array_equal(a[p], b[p]) for p in a)


def test_adversarial_mask_blocks_inputs_and_status_says_so():
    """Masks that fill the last interior level propagate to the inputs; the hardware's
    status registers settle to the same declared-faulty switches."""
    c = circuit("multibutterfly", 8, 2)
    ms = messages(c, "random-permutation", 5)
    mk = np.zeros((c.depth - 1, c.n_inputs), dtype=bool)
    mk[-1, :] = True
    out = run_cycles_amaranth(c, ms, [range(8), range(8)], masks=[mk, None], family=family_of(c))
    check(out, "all of the last interior level masked")
    assert out[0][0].expect_status[0].all() and not out[0][0].result.delivered
    assert not out[1][0].expect_status.any() and len(out[1][0].result.delivered) > 0


@pytest.mark.parametrize("kind,n,d", [("multibutterfly", 8, 3), ("butterfly", 8, 1)])
def test_packed_harness_replays_whole_cycles_as_modelled(kind, n, d):
    """The harness the cocotb test drives (separate send and recv packings, fault_mask
    passed through), on Amaranth's simulator."""
    c = circuit(kind, n, d, "adversarial", count=2)
    ms = messages(c, "random-destinations", 1, problems=2)
    masks = [None, random_mask(c, 3, 1)]
    results, per_cycle = masked_run(c, ms, masks, max_cycles=3)
    check(run_cycles_harness_amaranth(c, ms, results, masks=per_cycle, family=family_of(c)),
          f"harness {kind}")


def test_harness_layouts_follow_the_signature(never_elaborated):
    from fatnet.hdl.harness import PackedHarness, packed_layout
    c = circuit("multibutterfly", 8, 2)
    hw = family_of(c).hardware
    h = PackedHarness(c, hw.top(c))
    assert h.layout == packed_layout(c, hardware=hw) == [(f"term__{r}", r, 1) for r in range(8)]
    assert h.recv_layout == packed_layout(c, "recv", hardware=hw) \
        == [(f"term__{r}", 4 * r, 4) for r in range(8)]
    assert h.extra == [("fault_mask", mask_width(c))]
    k, T = h.bit_times_per_row, c.cycle_length
    assert h.recv_cap.shape.width == k * 32 and h.ack_cap.shape.width == h.stim.shape.width \
        == k * 8 and h.rows == -(-T // k)
    with never_elaborated():  # built for the layout only
        del h


def test_a_mismatch_names_switch_wire_bit_time_and_message():
    c = circuit("dilated-butterfly", 8, 2)
    ms = messages(c, "random-permutation", 2)
    plan = plan_cycle(c, ms, range(8), family=family_of(c))
    assert not compare_cycle(plan, plan.expect_recv, plan.expect_send_ack)
    got = {p: a.copy() for p, a in plan.expect_recv.items()}
    m = plan.result.delivered[0]
    dst = int(ms.dst[m])
    wire = plan.result.outcomes[m].path[-1].wire
    t = plan.result.outcomes[m].arrival
    got[f"term__{dst}"][t, wire] ^= 1
    [mm] = compare_cycle(plan, got, plan.expect_send_ack)
    text = str(mm)
    assert f"term__{dst}.recv[{wire}]" in text and f"bit-time {t}" in text
    assert f"message {m}" in text and f"output {dst}" in text
    assert f"switch (level {c.depth - 1}, row" in text
    # a wrong status register is named by its switch
    status = plan.expect_status.astype(np.uint8)
    status[1, 3] ^= 1
    [mm] = compare_cycle(plan, plan.expect_recv, plan.expect_send_ack, status)
    assert "status of switch (level 1, row 3)" in str(mm)


def test_run_time_mask_of_the_wrong_width_is_refused():
    c = circuit("multibutterfly", 8, 2)
    ms = messages(c, "random-permutation", 2)
    w = mask_width(c)
    assert w == 2 * 8
    for bad in (np.zeros(w + 1, dtype=bool), np.zeros(w - 1, dtype=bool), 1 << w):
        with pytest.raises(FatnetInputError, match="fault.mask"):
            plans(c, ms, [range(8)], [bad], family=family_of(c))
        with pytest.raises(FatnetInputError, match="fault.mask"):
            run_cycles_amaranth(c, ms, [range(8)], masks=[bad], family=family_of(c))
    # and the testbench's own check, against the port's width
    from fatnet.sim.amaranth_bench import check_mask_width
    [plan] = plans(c, ms, [range(8)], [np.zeros(w, dtype=bool)], family=family_of(c))
    plan.mask, plan.mask_width = 1, w + 3
    with pytest.raises(FatnetInputError, match="wider than the network"):
        check_mask_width(w, plan)


def test_modified_networks_are_refused_in_hardware():
    c = CircuitNetwork(make_network("multibutterfly", 16, 2, modified=True, seed=0), 4)
    with pytest.raises(ValueError, match="modified"):
        run_cycles_amaranth(c, messages(circuit("butterfly", 16, 1), "transpose", 0),
                            [range(16)], family=family_of(c))


def test_gtkw_groups_by_level_and_switch_and_names_signals_that_exist(tmp_path,
                                                                    gtkw_paths_exist):
    from fatnet.hdl.gen import generate
    from fatnet.sim.waves import write_gtkw
    c = circuit("multibutterfly", 4, 2)
    generate(c, tmp_path, hardware=family_of(c).hardware)
    text = (tmp_path / "butterfly_harness.v").read_text() + (tmp_path / "butterfly.v").read_text()
    gtkw = write_gtkw(c, tmp_path / "dump.fst", tmp_path / "b.gtkw",
                      family=family_of(c)).read_text()
    paths = gtkw_paths_exist(gtkw, "butterfly_harness", text)
    assert len(paths) > 2 * 4 * 7
    assert gtkw.count("-level_") == 2 * c.depth
    assert gtkw.count("-sw_") == 2 * c.depth * 4
