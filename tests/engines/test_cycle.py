"""The cycle engine (fatnet.golden.cycle) on toy fabrics: a crossbar, a line of two
switches and a ring (tests/engines/toyfabric.py), none of them a fat-tree or a
butterfly.

Expected values come from the timing rules in the engine's docstring and README
"Timing", worked out by hand here (M on a channel at t: branch bits at t+1 .. t+k, M'
into the first stage at t+k, a stage of decision width w claims at tau+w and its
registered output is at the next stage or channel at tau+w+1; a branch without stages
still has its output register), and, for random ring traffic, from a separate
time-stepped reference written for the ring alone. Random cases print their seed.
"""

from __future__ import annotations

import numpy as np
import pytest

from fatnet.golden.cycle import Fabric, run_cycle
from toyfabric import (Stage, TableFabric, bits, complete, crossbar, ring, ring_stream,
                       stream)

SEEDS = range(20240700, 20240740)


def occ(o):
    """(channel, wire, time, offset) of every hop of an outcome."""
    return [(p.channel, p.wire, p.time, p.offset) for p in o.path]


def run_crossbar(fab, sends, length=24):
    """sends: message -> (input, stream)."""
    messages = {m: (i, None, ("src", i)) for m, (i, _) in sends.items()}
    injections = {m: (0, s) for m, (_, s) in sends.items()}
    return run_cycle(fab, length, messages, injections)


# ------------------------------------------------------------------ crossbar
def test_crossbar_permutation_timing_payload_and_ack():
    # 3 x 3, k = 2 branch bits, one on-line stage per destination port: M at 0, the two
    # branch bits at 1, 2, the claim at 2, the registered output on the channel at 3.
    fab = crossbar(3)
    perm = [2, 0, 1]
    payloads = [0b10110, 0b00001, 0b11111]
    sends = {m: (m, stream([bits(perm[m], 2)], payloads[m], 5)) for m in range(3)}
    r = run_crossbar(fab, sends)
    assert r.delivered == [0, 1, 2] and r.lost == []
    for m in range(3):
        o = r.outcomes[m]
        assert o.status == "delivered" and o.hops == 1
        assert occ(o) == [(("src", m), 0, 0, 0), (("dst", perm[m]), 0, 3, 2)]
        assert o.arrival == 3
        assert o.hop_registers == [1] and o.ack_time == 4
        assert o.delivered_payload == payloads[m]
        assert o.lost_at is None


def test_same_bit_time_claims_served_in_input_order_not_message_order():
    fab = crossbar(3)
    # message numbers deliberately opposite to input numbers
    sends = {0: (2, stream([bits(1, 2)], 1, 3)),
             1: (0, stream([bits(1, 2)], 2, 3)),
             2: (1, stream([bits(1, 2)], 3, 3))}
    r = run_crossbar(fab, sends)
    assert r.delivered == [1] and r.lost == [0, 2]
    for m in (0, 2):
        o = r.outcomes[m]
        assert o.status == "lost"
        switch, port, stage, reason = o.lost_at
        assert (switch, port, stage) == ("X", "o1", 0)
        assert "taken" in reason
        # its stream went no further than its source channel
        assert [p.channel for p in o.path] == [("src", sends[m][0])]
        assert o.arrival is None and o.ack_time is None and o.delivered_payload is None


def test_earlier_claim_wins_over_lower_input():
    # input 0 reads 3 branch bits (claims at 3), input 2 reads 2 (claims at 2)
    fab = crossbar(3, k=[3, 2, 2])
    sends = {0: (0, stream([bits(1, 3)], 5, 3)), 1: (2, stream([bits(1, 2)], 6, 3))}
    r = run_crossbar(fab, sends)
    assert r.delivered == [1] and r.lost == [0]
    assert r.outcomes[1].arrival == 3
    assert r.outcomes[0].lost_at[:3] == ("X", "o1", 0)


def test_claimed_output_held_until_cycle_end():
    # input 1 claims destination 0 at bit-time 2 and its stream ends right there
    # (no payload); input 0 asks for it at bit-time 6: still taken.
    fab = crossbar(2, k=[6, 2])
    sends = {0: (0, stream([bits(0, 6)], 1, 1)), 1: (1, stream([bits(0, 2)], 0, 0))}
    r = run_crossbar(fab, sends)
    assert r.delivered == [1] and r.lost == [0]
    assert r.outcomes[1].arrival == 3 and r.outcomes[1].delivered_payload == 0
    assert "taken" in r.outcomes[0].lost_at[3]


def test_online_first_free_edge_in_edge_order_and_masks():
    order = (2, 0, 1)
    sends = {m: (m, stream([bits(0, 2)], m, 2)) for m in range(3)}
    fab = crossbar(3, cascade=(complete(3, 3, order=order),), port_outputs=3)
    r = run_crossbar(fab, sends)
    # same bit-time, input order: input 0 gets edge order's first output, and so on
    assert r.delivered == [0, 1, 2]
    assert [r.outcomes[m].path[-1].wire for m in range(3)] == [2, 0, 1]
    # output 2 masked: input 0 skips it, and the last input finds nothing free
    fab = crossbar(3, cascade=(complete(3, 3, order=order),), port_outputs=3,
                   masked={("X", "o0", 0, 2)})
    r = run_crossbar(fab, sends)
    assert r.delivered == [0, 1] and r.lost == [2]
    assert [r.outcomes[m].path[-1].wire for m in (0, 1)] == [0, 1]
    assert r.outcomes[2].lost_at[:3] == ("X", "o0", 0)
    # the mask is asked about the stage's outputs only, never about other ports
    assert {a[:3] for a in fab.asked_usable} == {("X", "o0", 0)}


# ------------------------------------------------------------------ off-line decisions
def offline_switch(masked=()):
    """2 inputs, k = 1 (both branch values go to port "o0"), one stage with decision
    width 1: input 0 has edges (1, 0), input 1 has the single edge (0,)."""
    stage = Stage(((1, 0), (0,)), decision_width=1)
    fab = crossbar(2, online=False, cascade=(stage,), port_outputs=2, k=[1, 1],
                   masked=masked)
    for i in range(2):
        fab.branches[("X", f"i{i}", 1)] = "o0"
    return fab


def test_offline_decision_bits_choose_the_edge():
    fab = offline_switch()
    # input 0 decision 0 -> edge 0 = output 1; input 1 decision 0 -> output 0
    sends = {0: (0, stream([[0], [0]], 0b101, 3)), 1: (1, stream([[0], [0]], 0b010, 3))}
    r = run_crossbar(fab, sends)
    assert r.delivered == [0, 1]
    # M at 0, branch bit at 1, decision bit at 2 = the claim, channel at 3; two bits read
    assert occ(r.outcomes[0])[-1] == (("dst", 0), 1, 3, 2)
    assert occ(r.outcomes[1])[-1] == (("dst", 0), 0, 3, 2)
    assert [r.outcomes[m].delivered_payload for m in (0, 1)] == [0b101, 0b010]


def test_offline_conflict_bad_decision_and_short_streams():
    fab = offline_switch()
    # both name output 0 in the same bit-time: input 0 wins
    r = run_crossbar(fab, {0: (1, stream([[1], [0]], 1, 2)), 1: (0, stream([[1], [1]], 2, 2))})
    assert r.delivered == [1] and r.lost == [0]
    assert r.outcomes[0].lost_at[:3] == ("X", "o0", 0) and "taken" in r.outcomes[0].lost_at[3]
    # decision 1 on input 1, which has one edge
    r = run_crossbar(fab, {0: (1, stream([[0], [1]], 0, 2))})
    assert r.lost == [0] and "no edge" in r.outcomes[0].lost_at[3]
    # stream ends inside the decision bits
    r = run_crossbar(fab, {0: (0, [1, 0])})
    assert r.lost == [0] and r.outcomes[0].lost_at[:3] == ("X", "o0", 0)
    assert "decision" in r.outcomes[0].lost_at[3]
    # stream ends before its branch bit: lost at the input port, before any stage
    r = run_crossbar(fab, {0: (1, [1])})
    o = r.outcomes[0]
    assert r.lost == [0] and o.lost_at[:2] == ("X", "i1") and o.lost_at[2] < 0
    assert "branch" in o.lost_at[3]


def test_offline_claim_on_masked_output_is_lost():
    fab = offline_switch(masked={("X", "o0", 0, 1)})
    r = run_crossbar(fab, {0: (0, stream([[0], [0]], 0, 2)), 1: (1, stream([[0], [0]], 0, 2))})
    assert r.delivered == [1] and r.lost == [0]


# ------------------------------------------------------------------ line of two switches
def line(online: bool):
    """Source ("s",) wire 0 -> switch A (k = 1): branch 1 is cascade "p" of three stages
    (decision widths 1, 0, 2) onto channel ("AB",) (4 wires); branch 0 is "q", no
    stages, onto destination channel ("qa",). Switch B reads k = 0 bits; its one branch
    "out" has no stages: AB wire x -> destination ("dst",) wire x."""
    p = (Stage(((0, 1),), 1), Stage(((1,), (0,)), 0),
         Stage(((0, 1, 2, 3), (3, 2, 1, 0)), 2))
    heads = {(("s",), 0): ("A", "a")}
    heads.update({(("AB",), w): ("B", "b") for w in range(4)})
    outs = {("A", "p", x): (("AB",), x) for x in range(4)}
    outs[("A", "q", 0)] = (("qa",), 0)
    outs.update({("B", "out", x): (("dst",), x) for x in range(4)})
    inputs = {("A", "p", "a", 0): 0, ("A", "q", "a", 0): 0}
    inputs.update({("B", "out", "b", w): w for w in range(4)})
    return TableFabric(online, heads,
                       widths={("A", "a"): 1, ("B", "b"): 0},
                       branches={("A", "a", 1): "p", ("A", "a", 0): "q", ("B", "b", 0): "out"},
                       cascades={("A", "p"): p, ("A", "q"): (), ("B", "out"): ()},
                       inputs=inputs, outs=outs)


def run_line(fab, s, length=20, local=()):
    messages = {0: (0, 1, ("s",))}
    messages.update({m: (5, 5, None) for m in local})
    return run_cycle(fab, length, messages, {0: (0, s)}, local)


def test_line_registered_timing_through_stages_offline():
    # decisions: stage 0 edge 1 -> output 1; stage 1 input 1's one edge -> output 0;
    # stage 2 input 0, decision 3 -> output 3.
    s = stream([[1, 1], [], [1, 1]], 0b1001, 4)
    o = run_line(line(online=False), s).outcomes[0]
    # A: M 0, branch bit 1 (M' into stage 0), stage 0 claims at 2, stage 1 sees M at 3
    # and claims at 3, stage 2 sees it at 4 and claims at 6, AB at 7 (4 bits read).
    # B: no bits, no stages: its output register alone, dst at 8.
    assert occ(o) == [(("s",), 0, 0, 0), (("AB",), 3, 7, 4), (("dst",), 3, 8, 4)]
    assert o.status == "delivered" and o.arrival == 8
    assert o.hop_registers == [3, 1] and o.ack_time == 12
    assert o.delivered_payload == 0b1001


def test_line_online_ignores_decision_widths():
    # on-line: every stage claims in the bit-time M reaches it, first free edge:
    # stage 0 -> 0, stage 1 input 0 -> 1, stage 2 input 1 -> its first edge, 3.
    s = stream([[1], []], 0b0110, 4)
    o = run_line(line(online=True), s).outcomes[0]
    assert occ(o) == [(("s",), 0, 0, 0), (("AB",), 3, 4, 1), (("dst",), 3, 5, 1)]
    assert o.ack_time == 5 + 3 + 1 and o.delivered_payload == 0b0110


def test_branch_without_stages_still_has_its_register():
    s = stream([[0]], 0b11, 2)
    o = run_line(line(online=False), s).outcomes[0]
    assert occ(o) == [(("s",), 0, 0, 0), (("qa",), 0, 2, 1)]
    assert o.hop_registers == [1] and o.ack_time == 3 and o.delivered_payload == 0b11


def test_waveforms_and_acknowledgments_of_a_line():
    s = stream([[1, 1], [], [1, 1]], 0b1001, 4)
    length = 14
    r = run_line(line(online=False), s, length=length)
    wave = r.waveforms()
    assert set(wave) == {("s", 0), ("AB", 3), ("dst", 3)}

    def expect(start, b):
        w = np.zeros(length, dtype=np.uint8)
        w[start:start + len(b)] = b
        return w.tolist()

    assert wave[("s", 0)].tolist() == expect(0, s)
    # A strips its 4 bits: M' and the payload, from bit-time 7; B strips none
    assert wave[("AB", 3)].tolist() == expect(7, [1] + bits(0b1001, 4))
    assert wave[("dst", 3)].tolist() == expect(8, [1] + bits(0b1001, 4))
    # acknowledgment: destination from arrival (8), back through B's one register (9)
    # and A's three (12) to the source
    ack = r.ack_waveforms()
    assert set(ack) == set(wave)
    for key, rise in ((("dst", 3), 8), (("AB", 3), 9), (("s", 0), 12)):
        assert ack[key].tolist() == [0] * rise + [1] * (length - rise), key
    # a cycle too short for the whole stream: the waves are clipped, not extended
    short = run_line(line(online=False), s, length=10).waveforms()
    assert all(len(w) == 10 for w in short.values())
    assert short[("dst", 3)].tolist() == expect(8, [1] + bits(0b1001, 4))[:10]


def test_lost_message_drives_its_source_wire_but_is_never_acknowledged():
    fab = crossbar(2)
    sends = {0: (0, stream([[1]], 1, 2)), 1: (1, stream([[1]], 2, 2))}
    r = run_crossbar(fab, sends, length=8)
    assert r.lost == [1]
    assert ("src", 1, 0) in r.waveforms()
    assert ("src", 1, 0) not in r.ack_waveforms()
    assert ("src", 0, 0) in r.ack_waveforms()


def test_local_messages_and_partition_of_results():
    r = run_line(line(online=False), stream([[0]], 1, 2), local=[3, 7])
    assert r.with_status("local") == [3, 7]
    assert r.delivered == [0, 3, 7] and r.lost == []
    assert all(r.outcomes[m].path == [] for m in (3, 7))
    assert (r.outcomes[3].src, r.outcomes[3].dst) == (5, 5)


def test_optional_fabric_methods_default():
    """A fabric that takes the protocol's field_width reads 1 branch bit; its usable,
    every output may be taken."""
    full = crossbar(2, k=[1, 1])

    class Minimal(Fabric):
        online = True
        head, branch, stages = full.head, full.branch, full.stages
        stage_input, out_wire, registers = full.stage_input, full.out_wire, full.registers
        port_name = staticmethod(full.port_name)

    assert Minimal.usable is Fabric.usable and Minimal.field_width is Fabric.field_width
    sends = {0: (0, stream([[1]], 3, 2)), 1: (1, stream([[0]], 1, 2))}
    r = run_crossbar(Minimal(), sends)
    assert r.delivered == [0, 1]
    assert [r.outcomes[m].path[-1].channel for m in (0, 1)] == [("dst", 1), ("dst", 0)]
    assert [r.outcomes[m].arrival for m in (0, 1)] == [2, 2]


def test_result_keeps_its_injections_and_rerunning_them_reproduces_it():
    fab = crossbar(3)
    sends = {m: (m, stream([bits(1, 2)], m, 3)) for m in range(3)}
    messages = {m: (i, 1, ("src", i)) for m, (i, _) in sends.items()}
    injections = {m: (0, s) for m, (_, s) in sends.items()}
    r = run_cycle(fab, 12, messages, injections)
    assert r.injections == injections and r.injections is not injections
    injections[9] = (0, [1])  # the caller's dict changing later does not change it
    assert 9 not in r.injections
    again = run_cycle(crossbar(3), 12, messages, r.injections)
    assert again.outcomes == r.outcomes
    # the outcome's stream is the injected one, and a copy
    assert r.outcomes[0].stream == sends[0][1] and r.outcomes[0].stream is not sends[0][1]


# ------------------------------------------------------------------ ring vs a reference
def ring_reference(n, wires, eject, msgs):
    """Time-stepped reference of the on-line ring: each node reads 1 branch bit and
    claims in the bit-time after M arrives; a claim takes the lowest free output of the
    (complete) stage, claims of one stage in one bit-time by input index; a won output
    puts M on the next channel one bit-time later. Returns message -> (status, hops as
    (channel, wire, time), (node, port) where lost)."""
    taken = {}
    live = {m: {"node": s, "x": 0, "t": 0, "path": [(("inj", s), 0, 0)]}
            for m, (s, d) in msgs.items()}
    out = {}
    t = 0
    while live:
        t += 1
        groups = {}
        for m, st in live.items():
            if st["t"] + 1 == t:
                port = "ej" if st["node"] == msgs[m][1] else "fwd"
                groups.setdefault((st["node"], port), []).append((st["x"], m))
        for (node, port), claims in groups.items():
            used = taken.setdefault((node, port), set())
            for _, m in sorted(claims):
                st = live.pop(m)
                free = [w for w in range(eject if port == "ej" else wires) if w not in used]
                if not free:
                    out[m] = ("lost", st["path"], (node, port))
                    continue
                used.add(free[0])
                if port == "ej":
                    out[m] = ("delivered", st["path"] + [(("ej", node), free[0], t + 1)],
                              None)
                else:
                    st["path"].append((("ring", node), free[0], t + 1))
                    st.update(node=(node + 1) % n, x=1 + free[0], t=t + 1)
                    live[m] = st
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_ring_random_traffic_matches_reference(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 6))
    wires, eject = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    pb = int(rng.integers(0, 5))
    msgs, messages, injections, payload = {}, {}, {}, {}
    m = 0
    for s in rng.permutation(n).tolist():
        if rng.random() < 0.8:
            d = int(rng.integers(0, n))
            msgs[m] = (s, d)
            payload[m] = int(rng.integers(0, 1 << pb))
            messages[m] = (s, d, ("inj", s))
            injections[m] = (0, ring_stream(n, s, d, payload[m], pb))
            m += 1
    local = [m, m + 1]
    messages.update({q: (0, 0, ("inj", 0)) for q in local})
    length = 2 * n + pb + 4
    r = run_cycle(ring(n, wires, eject), length, messages, injections, local)
    where = f"seed {seed}: n={n} wires={wires} eject={eject} msgs={msgs}"
    ref = ring_reference(n, wires, eject, msgs)

    # conservation: every message accounted for exactly once
    assert sorted(r.outcomes) == sorted(messages), where
    assert sorted(r.delivered + r.lost) == sorted(messages), where
    assert r.with_status("local") == local, where
    # no wire carries two messages in one cycle
    wires_used = [(p.channel, p.wire) for o in r.outcomes.values() for p in o.path]
    assert len(wires_used) == len(set(wires_used)), where
    for q, (status, hops, lost_where) in ref.items():
        o = r.outcomes[q]
        assert o.status == status, f"{where}: message {q}"
        assert [(p.channel, p.wire, p.time) for p in o.path] == hops, f"{where}: {q}"
        assert [p.offset for p in o.path] == list(range(len(hops))), f"{where}: {q}"
        if status == "lost":
            assert o.lost_at[:3] == (*lost_where, 0), f"{where}: {q}"
            assert o.ack_time is None
        else:
            h = (msgs[q][1] - msgs[q][0]) % n
            # h + 1 nodes, two bit-times each (branch bit, register); one ack register each
            assert o.arrival == 2 * (h + 1) and o.ack_time == o.arrival + h + 1, where
            assert o.delivered_payload == payload[q], where
