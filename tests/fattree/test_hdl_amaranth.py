"""The Amaranth fat-tree against the golden model on Amaranth's simulator (small cases).

Every output and acknowledgment wire of every leaf and of the external channel must
carry exactly the bits the cycle-exact model predicts, bit-time for bit-time.
"""

import numpy as np
import pytest

from fatnet.golden.messages import MessageSet, make_pattern
from fatnet.golden.fattree.network import FatTreeNetwork
from fatnet.golden.fattree.schedule import schedule
from fatnet.golden.fattree.spec import FatTreeSpec
from fatnet.sim.amaranth_bench import run_cycles_amaranth, run_cycles_harness_amaranth
from fatnet.api.registry import family_of


def expected_layout(net):
    """The fat-tree's packing from its spec alone (an independent reference): ``leaf__0``
    .. ``leaf__{n-1}``, each the leaves' capacity wide, then ``ext``, the root's."""
    caps = net.spec.capacities
    leaves = [(f"leaf__{i}", i * caps[-1], caps[-1]) for i in range(net.n)]
    return leaves + [("ext", net.n * caps[-1], caps[0])]


CASES = {
    "n2-universal": lambda **kw: FatTreeSpec.universal(2, 2, **kw),
    "n4-constant1": lambda **kw: FatTreeSpec.constant(4, 1, **kw),
    "n8-universal": lambda **kw: FatTreeSpec.universal(8, 4, **kw),
    "n8-explicit": lambda **kw: FatTreeSpec.explicit(8, (6, 4, 3, 2), **kw),
}


def _check(results, why):
    for i, (plan, mismatches) in enumerate(results):
        assert not mismatches, (f"cycle {i}: {len(mismatches)} wires differ, first: "
                                f"{mismatches[0]}; {why}")


def one_run(mode, net, ms):
    """The cycles of ``ms``: the off-line schedule, or every message in one on-line
    cycle."""
    if mode == "offline":
        return schedule(net.tree, ms.src, ms.dst, cap=net.effective_cap)
    return [range(len(ms))]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("conc", ["pippenger", "crossbar"])
def test_offline_schedule_runs_exactly_as_modelled(case, conc, amaranth_runs):
    net = FatTreeNetwork(CASES[case](concentrator=conc, mode="offline", payload_bits=4))
    for seed in range(2):
        rng = np.random.default_rng(seed)
        k = 2 * net.n
        src = rng.integers(-1, net.n, size=k)
        dst = rng.integers(0, net.n, size=k)
        ms = MessageSet.from_pairs(src, dst, 4, seed)
        cycles = schedule(net.tree, ms.src, ms.dst, cap=net.effective_cap)
        results = amaranth_runs(net, ms, cycles)
        _check(results, f"{case} {conc} offline seed {seed}")
        assert sum(len(p.result.lost) for p, _ in results) == 0


@pytest.mark.parametrize("pattern", ["random-destinations", "hot-spot", "to-ext",
                                     "bit-complement"])  # one after the other: one build
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("conc", ["pippenger", "crossbar"])
def test_online_arbitration_and_losses_as_modelled(case, conc, pattern, amaranth_runs):
    net = FatTreeNetwork(CASES[case](concentrator=conc, mode="online", payload_bits=3))
    ms = make_pattern(net.n, pattern, 5, 3, hot_fraction=0.5)
    results = amaranth_runs(net, ms, [range(len(ms))])
    _check(results, f"{case} {conc} online {pattern} seed 5")


@pytest.mark.parametrize("link_stages", [1, 2])
@pytest.mark.parametrize("mode", ["offline", "online"])
def test_pipelined_links_keep_the_model_exact(mode, link_stages, amaranth_runs):
    """--link-stages: registers on every node-to-node link, each way (not on the leaves'
    or the external channel's); the model's arrival, acknowledgment and cycle length
    follow, wire for wire, over paths of every length (to ext and across the root)."""
    kw = dict(concentrator="pippenger", mode=mode, payload_bits=3)
    net = FatTreeNetwork(FatTreeSpec.universal(16, 8, link_stages=link_stages, **kw))
    plain = FatTreeNetwork(FatTreeSpec.universal(16, 8, **kw))
    for s, d, hops in ((0, 15, 7), (0, -1, 4), (-1, 3, 4), (0, 1, 1)):
        links = link_stages * (hops - 1)
        assert net.path_timing(s, d)[2] == plain.path_timing(s, d)[2] + links
        assert net.ack_latency(s, d) == plain.ack_latency(s, d) + links
    seed = 20 + link_stages
    ms = make_pattern(net.n, "random-destinations", seed, 3)
    cycles = one_run(mode, net, ms)
    _check(amaranth_runs(net, ms, cycles), f"{mode} link_stages={link_stages} seed {seed}")


@pytest.mark.parametrize("value", [0, 1])
@pytest.mark.parametrize("mode,link_stages", [("offline", 0), ("online", 1), ("online", 0)])
def test_a_stuck_link_loses_what_the_model_loses(mode, link_stages, value, amaranth_runs):
    """--stuck-link: a wire between two nodes held at 0 or 1, which no node knows of. A
    wire the sound run uses (drawn with the seed) is stuck; the model loses the messages
    routed onto it (at 1 the node it feeds routes a phantom stream of ones), and the
    hardware does exactly what the model says, wire for wire."""
    kw = dict(concentrator="pippenger", mode=mode, payload_bits=3, link_stages=link_stages)
    sound = FatTreeNetwork(FatTreeSpec.universal(8, 4, **kw))
    seed = 40 + link_stages
    ms = make_pattern(sound.n, "random-destinations", seed, 3)
    cycles = one_run(mode, sound, ms)
    why = f"{mode} link_stages={link_stages} seed {seed}"
    runs = amaranth_runs(sound, ms, cycles)  # the sound network's build: both values
    _check(runs, why)
    used = sorted({(*occ.channel, occ.wire) for plan, _ in runs
                   for o in plan.result.outcomes.values() for occ in o.path
                   if 0 < occ.channel[1] < sound.n - 1})
    link = used[np.random.default_rng(seed).integers(len(used))]
    net = FatTreeNetwork(FatTreeSpec.universal(8, 4, stuck_links=((link, value),), **kw))
    runs = run_cycles_amaranth(net, ms, cycles, family=family_of(net))
    _check(runs, f"{why} stuck link {link}:{value}")
    reasons = [o.lost_at[3] for plan, _ in runs for o in plan.result.outcomes.values()
               if o.status == "lost"]
    assert f"its wire is stuck at {value}" in reasons, (why, link, reasons)


def test_a_stuck_link_outside_the_tree_is_refused():
    from fatnet.golden.errors import ParameterError
    # capacities (8, 6, 4, 2, 1): heap 1's channel has 6 wires
    for links, words in [(((0, 0, 0), 0), r"heap must be in \[1, 14\]"),
                         (((1, 15, 0), 0), r"heap must be in \[1, 14\]"),
                         (((0, 1, 6), 0), r"wire must be in \[0, 5\]"),
                         (((2, 1, 0), 0), "direction must be up or down"),
                         (((0, 1, 0), 2), "value must be 0 or 1")]:
        with pytest.raises(ParameterError, match=words):
            FatTreeSpec.universal(16, 8, stuck_links=(links,))


@pytest.mark.parametrize("start_stages", [1, 2])
@pytest.mark.parametrize("mode", ["offline", "online"])
def test_a_start_tree_delays_the_whole_cycle_and_nothing_else(mode, start_stages):
    """--start-stages: bit-time 0 is the clock start_stages + 1 after the strobe, the
    model's bit-times do not change; several cycles back to back (the nodes hold the
    last cycle's connections until the delayed strobe clears them), port by port and
    through the packed harness, with pipelined links."""
    kw = dict(concentrator="pippenger", mode=mode, payload_bits=3, link_stages=1)
    net = FatTreeNetwork(FatTreeSpec.universal(8, 4, start_stages=start_stages, **kw))
    plain = FatTreeNetwork(FatTreeSpec.universal(8, 4, **kw))
    assert net.cycle_length == plain.cycle_length
    seed = 30 + start_stages
    ms = make_pattern(net.n, "random-destinations", seed, 3)
    if mode == "offline":
        cycles = schedule(net.tree, ms.src, ms.dst, cap=net.effective_cap)
    else:
        half = len(ms) // 2
        cycles = [range(half), range(half, len(ms)), range(len(ms))]
    why = f"{mode} start_stages={start_stages} seed {seed}"
    _check(run_cycles_amaranth(net, ms, cycles, family=family_of(net)), why)
    _check(run_cycles_harness_amaranth(net, ms, cycles, family=family_of(net)), why)


@pytest.mark.parametrize("caps", [(1, 1), (2, 1), (3, 2), (4, 3), (6, 4), (9, 6), (12, 8)])
@pytest.mark.parametrize("conc", ["pippenger", "crossbar"])
@pytest.mark.parametrize("mode", ["offline", "online"])
def test_single_node_all_ports(caps, conc, mode, amaranth_runs):
    """A 2-leaf network is one node: U is the external channel, L and R the leaves.
    Traffic in all six directions, over capacity, so that concentrators and
    arbitration are exercised at several concentration ratios."""
    net = FatTreeNetwork(FatTreeSpec.explicit(2, caps, concentrator=conc, mode=mode,
                                              payload_bits=3))
    for seed in range(3):
        rng = np.random.default_rng(seed)
        k = 3 * sum(caps)
        src = rng.integers(-1, 2, size=k)
        dst = rng.integers(-1, 2, size=k)
        dst[(src == -1) & (dst == -1)] = 0
        ms = MessageSet.from_pairs(src, dst, 3, seed)
        if mode == "offline":
            cycles = schedule(net.tree, ms.src, ms.dst, cap=net.effective_cap)
        else:
            from fatnet.golden.fattree.route import run_online
            cycles = [sorted(r.outcomes) for r in
                      run_online(net, ms, keep_results=True, max_cycles=40).results]
        _check(amaranth_runs(net, ms, cycles), f"caps {caps} {conc} {mode} seed {seed}")


def test_compare_cycle_names_wire_node_message_and_bit_time():
    from fatnet.sim.plan import compare_cycle, plan_cycle
    net = FatTreeNetwork(FatTreeSpec.universal(4, 3, payload_bits=4))
    ms = MessageSet.from_pairs(np.array([1]), np.array([2]), 4, 0)
    plan = plan_cycle(net, ms, [0], family=family_of(net))
    assert not compare_cycle(plan, plan.expect_recv, plan.expect_send_ack)
    got = {p: a.copy() for p, a in plan.expect_recv.items()}
    t = int(np.argmax(got["leaf__2"][:, 0]))  # the M bit's arrival at leaf 2
    got["leaf__2"][t, 0] = 0
    [mismatch] = compare_cycle(plan, got, plan.expect_send_ack)
    # leaf 2 is heap 5 in a 4-leaf tree: the left child of node 2
    assert str(mismatch) == (f"leaf__2.recv[0] (node 2 port L; message 0, leaf__1 -> leaf__2) "
                             f"at bit-time {t}: expected 1, got 0")


@pytest.mark.parametrize("case", sorted(CASES))
def test_harness_packing_is_the_network_tops_signature(case, never_elaborated):
    """One port map: the harness packs by the network top's signature (leaf[0..n-1],
    then ext), named as the Verilog names them, each leaf the leaves' capacity wide and
    ext the root's."""
    from fatnet.hdl.harness import PackedHarness, endpoint_layout, packed_layout
    from fatnet.hdl.fattree import FatTreeNetworkHW
    net = FatTreeNetwork(CASES[case]())
    core = FatTreeNetworkHW(net)
    h = PackedHarness(net, core=core)
    assert h.layout == endpoint_layout(core) \
        == packed_layout(net, hardware=family_of(net).hardware) == expected_layout(net)
    W = sum(w for _, _, w in h.layout)
    # three memories of ceil(T / k) rows of k whole words: every bit-time's word, once
    T, k = net.cycle_length, h.bit_times_per_row
    for mem in (h.stim, h.recv_cap, h.ack_cap):
        assert mem.shape.width == k * W and mem.depth == h.rows == -(-T // k)
    with never_elaborated():  # built for the layout only
        del core, h


@pytest.mark.parametrize("mode", ["offline", "online"])
def test_packed_harness_replays_whole_cycles_as_modelled(mode):
    """The harness the cocotb test drives (whole-cycle stimulus in, capture registers
    out, auto-acknowledge), on Amaranth's simulator, against the model's own results."""
    from fatnet.golden.fattree.route import run
    from fatnet.sim.plan import pack_words, plan_cycle, unpack_words
    net = FatTreeNetwork(FatTreeSpec.universal(8, 4, mode=mode, payload_bits=4))
    ms = make_pattern(net.n, "hot-spot", 2, 4, hot_fraction=0.5)
    report = run(net, ms, keep_results=True, max_cycles=8)
    assert report.results
    _check(run_cycles_harness_amaranth(net, ms, report.results, family=family_of(net)),
           f"harness {mode} seed 2")
    # and packing is lossless
    plan = plan_cycle(net, ms, sorted(report.results[0].outcomes), family=family_of(net))
    layout = expected_layout(net)
    for arrays in (plan.drive, plan.expect_recv, plan.expect_send_ack):
        back = unpack_words(pack_words(arrays, layout, plan.length), layout, plan.length)
        assert all((back[p] == a).all() for p, a in arrays.items())


@pytest.mark.parametrize("mode", ["offline", "online"])
def test_plans_from_the_models_results_equal_plans_from_message_indices(mode):
    """One planner: a plan made from a result the model already produced (what `fatnet
    sim` hands over) is the plan of the same messages run again from their indices."""
    from fatnet.golden.fattree.route import run
    from fatnet.sim.plan import plan_cycle, plans
    net = FatTreeNetwork(FatTreeSpec.universal(8, 4, mode=mode, payload_bits=4))
    ms = make_pattern(net.n, "random-destinations", 4, 4)
    report = run(net, ms, keep_results=True, max_cycles=8)
    for res, plan in zip(report.results, plans(net, ms, report.results, family=family_of(net))):
        assert res.injections and plan.result is res
        again = plan_cycle(net, ms, sorted(res.outcomes), family=family_of(net))
        for a, b in ((plan.drive, again.drive), (plan.expect_recv, again.expect_recv),
                     (plan.expect_send_ack, again.expect_send_ack)):
            assert sorted(a) == sorted(b) and all((a[p] == b[p]).all() for p in a)
        assert plan.owner == again.owner and plan.label == again.label
