"""The batched engine equals the scalar one: the same report and, cycle by cycle, the
same outcome of every message and phantom (path with wire, bit-time and offset of
every hop, registers, arrival, acknowledgment, where and why it was lost), on the
catalogue's networks and on random ones (hypothesis), with stuck links, link and start
stages, in both switch-setting modes."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fatnet.golden.fattree.batch import cycle_results, geometry, run_batch
from fatnet.golden.fattree.bitstream import encode
from fatnet.golden.fattree.cyclemodel import simulate_cycle
from fatnet.golden.fattree.network import FatTreeNetwork
from fatnet.golden.fattree.route import run
from fatnet.golden.fattree.spec import DOWN, UP, FatTreeSpec
from fatnet.golden.messages import EXT, MessageSet, make_pattern


def assert_same_run(net, ms, why, **options):
    """Both engines' runs of ``ms``: equal reports, equal results of every cycle."""
    scalar = run(net, ms, keep_results=True, engine="scalar", **options)
    batched = run(net, ms, keep_results=True, engine="batched", **options)
    assert batched.to_dict() == scalar.to_dict(), why
    # without kept results, on-line outcomes come from the lookahead's batches
    assert run(net, ms, engine="batched", **options).to_dict() == scalar.to_dict(), why
    assert len(batched.results) == len(scalar.results), why
    for c, (a, b) in enumerate(zip(scalar.results, batched.results)):
        for m, o in a.outcomes.items():
            assert b.outcomes.get(m) == o, f"{why}; cycle {c}, message {m}"
        assert b.outcomes.keys() == a.outcomes.keys(), f"{why}; cycle {c}"
        assert b.phantoms == a.phantoms, f"{why}; cycle {c}, phantoms"
        assert (b.injections, b.stuck, b.length) == (a.injections, a.stuck, a.length), why
    return scalar


def _why(spec, ms, label=""):
    return (f"{label} spec {spec.to_dict()}; messages {ms.pairs()}; replay: "
            f"assert_same_run(FatTreeNetwork(FatTreeSpec(**spec)), messages) in "
            f"tests/fattree/test_batch_engine.py")


CASES = {
    "universal-16": lambda **kw: FatTreeSpec.universal(16, 8, **kw),
    "explicit-8": lambda **kw: FatTreeSpec.explicit(8, (5, 4, 3, 2), **kw),
    "constant-4": lambda **kw: FatTreeSpec.constant(4, 1, **kw),
    # stuck at 1 on the way up and down (phantoms), stuck at 0, pipelined links
    "faults-16": lambda **kw: FatTreeSpec.universal(
        16, 8, link_stages=2, start_stages=1,
        stuck_links=(((UP, 3, 0), 1), ((DOWN, 5, 1), 0), ((DOWN, 2, 0), 1)), **kw),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("conc", ["pippenger", "crossbar"])
@pytest.mark.parametrize("mode", ["offline", "online"])
def test_batched_equals_scalar_on_patterns(case, conc, mode):
    net = FatTreeNetwork(CASES[case](concentrator=conc, mode=mode, seed=5))
    for pattern in ("random-permutation", "random-destinations", "hot-spot", "to-ext",
                    "from-ext"):
        ms = make_pattern(net.n, pattern, 2, net.spec.payload_bits)
        assert_same_run(net, ms, _why(net.spec, ms, f"{case} {pattern} seed 2:"),
                        max_cycles=20)


def test_faults_lose_and_acknowledge_through_phantoms():
    """The faulty case is not vacuous: phantoms run, messages are lost on stuck wires
    and some lost on a wire stuck at 1 are acknowledged through its phantom."""
    net = FatTreeNetwork(CASES["faults-16"](mode="online"))
    ms = make_pattern(16, "random-destinations", 2, 8)
    report = assert_same_run(net, ms, _why(net.spec, ms), max_cycles=5)
    outcomes = [o for r in report.results for o in r.outcomes.values()]
    stuck = [o for o in outcomes if o.lost_at and "stuck" in o.lost_at[3]]
    assert stuck and any(o.ack_time is not None for o in stuck)
    assert all(r.phantoms for r in report.results)


def test_offline_batches_cut_where_the_batch_limit_says(monkeypatch):
    """A run longer than one batch gives the same report as one batch."""
    import fatnet.golden.fattree.batchrun as batchrun
    net = FatTreeNetwork(FatTreeSpec.constant(4, 1, mode="offline"))
    ms = make_pattern(4, "random-destinations", 1, 8)
    ms = MessageSet.from_pairs(np.tile(ms.src, 20), np.tile(ms.dst, 20), 8, 1)
    whole = run(net, ms).to_dict()
    monkeypatch.setattr(batchrun, "BATCH_MESSAGES", 5)
    assert run(net, ms).to_dict() == whole
    assert_same_run(net, ms, "batches of 5 messages")


def test_online_lookahead_and_memo_limits(monkeypatch):
    """Long on-line runs give the scalar report whatever the lookahead's batch and the
    remembered patterns' limit (forgetting them all on the way)."""
    import fatnet.golden.fattree.batchrun as batchrun
    net = FatTreeNetwork(FatTreeSpec.universal(4, 3, mode="online"))
    rng = np.random.default_rng(7)
    src = rng.integers(EXT, 4, 600)
    dst = np.where(src == EXT, rng.integers(0, 4, 600), rng.integers(EXT, 4, 600))
    ms = MessageSet.from_pairs(src, dst, 8, 7)
    scalar = run(net, ms, engine="scalar", max_cycles=400).to_dict()
    assert scalar["delivered"] > 400 and scalar["retries"] > 0
    for patterns, cycles, memo in ((1, 1, 4), (3, 8, 16), (64, 512, 1 << 16)):
        monkeypatch.setattr(batchrun, "LOOKAHEAD_PATTERNS", patterns)
        monkeypatch.setattr(batchrun, "LOOKAHEAD_CYCLES", cycles)
        monkeypatch.setattr(batchrun, "LOOKAHEAD_STREAMS", 3 * cycles)
        monkeypatch.setattr(batchrun, "ONLINE_MEMO", memo)
        assert run(net, ms, max_cycles=400).to_dict() == scalar, (patterns, cycles, memo)


# ---------------------------------------------------------------------- random cases
@st.composite
def networks(draw):
    """A random spec: 2 to 16 leaves, explicit capacities 1..4, every switch option,
    up to three stuck wires between nodes."""
    levels = draw(st.integers(1, 4))
    n = 1 << levels
    caps = tuple(draw(st.lists(st.integers(1, 4), min_size=levels + 1,
                               max_size=levels + 1)))
    stuck = {}
    if n > 2:
        for _ in range(draw(st.integers(0, 3))):
            heap = draw(st.integers(1, n - 2))
            level = (heap + 1).bit_length() - 1
            key = (draw(st.sampled_from([UP, DOWN])), heap,
                   draw(st.integers(0, caps[level] - 1)))
            stuck[key] = draw(st.integers(0, 1))
    return FatTreeSpec.explicit(
        n, caps, concentrator=draw(st.sampled_from(["pippenger", "crossbar"])),
        mode=draw(st.sampled_from(["offline", "online"])),
        payload_bits=draw(st.integers(1, 6)), seed=draw(st.integers(0, 2 ** 20)),
        link_stages=draw(st.integers(0, 2)), start_stages=draw(st.integers(0, 2)),
        stuck_links=tuple(stuck.items()))


@st.composite
def message_sets(draw, n: int, payload_bits: int):
    k = draw(st.integers(1, 3 * n + 2))
    ends = st.integers(EXT, n - 1)
    pairs = draw(st.lists(st.tuples(ends, ends).filter(lambda p: p != (EXT, EXT)),
                          min_size=k, max_size=k))
    src, dst = zip(*pairs)
    payload = draw(st.lists(st.integers(0, (1 << payload_bits) - 1), min_size=k,
                            max_size=k))
    return MessageSet.from_pairs(src, dst, payload_bits, payload=payload)


@settings(max_examples=60, deadline=None, derandomize=True, print_blob=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_batched_equals_scalar_on_random_networks(data):
    spec = data.draw(networks())
    net = FatTreeNetwork(spec)
    ms = data.draw(message_sets(net.n, spec.payload_bits))
    max_cycles = data.draw(st.integers(1, 12))
    assert_same_run(net, ms, _why(spec, ms, f"max_cycles {max_cycles}:"),
                    max_cycles=max_cycles)


@settings(max_examples=40, deadline=None, derandomize=True, print_blob=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_batched_equals_scalar_on_any_decisions(data):
    """Off-line streams with any decision values (edges that collide, values naming no
    edge), every source's messages on distinct random wires: one cycle, both engines."""
    spec = data.draw(networks())
    net = FatTreeNetwork(FatTreeSpec(**{**_spec_args(spec), "mode": "offline"}))
    ms = data.draw(message_sets(net.n, spec.payload_bits))
    g = geometry(net)
    moving = [m for m in range(len(ms)) if ms.src[m] != ms.dst[m]]
    wires, injections, rows = {}, {}, []
    for m in moving:
        s, d = int(ms.src[m]), int(ms.dst[m])
        width = int(g.caps[0] if s == EXT else g.caps[g.L])
        free = [w for w in range(width) if (s, w) not in wires.values()]
        if not free:
            continue
        wires[m] = (s, data.draw(st.sampled_from(free)))
        decisions = [tuple(data.draw(st.integers(0, (1 << stage.decision_width) - 1))
                           for stage in net.cascades[(h.node, h.out_port)].stages)
                     for h in net.tree.hops(s, d)]
        injections[m] = (wires[m][1], encode(net, s, d, ms.payload[m], decisions))
        row = np.full((g.max_hops, max(1, g.max_stages)), -1, dtype=np.int64)
        for q, dec in enumerate(decisions):
            row[q, :len(dec)] = dec
        rows.append(row)
    local = [m for m in range(len(ms)) if ms.src[m] == ms.dst[m]]
    scalar = simulate_cycle(net, ms, injections, local)
    inj = np.asarray(sorted(injections), dtype=np.int64)   # rows are in this order
    choices = np.zeros((len(rows), g.max_hops, max(1, g.max_stages)), dtype=np.int64)
    if rows:
        choices[:] = rows
    st_ = run_batch(g, 1, np.zeros(len(inj), np.int64), inj, ms.src[inj], ms.dst[inj],
                    np.asarray([injections[m][0] for m in inj.tolist()], np.int64),
                    choices)
    batched = cycle_results(g, st_, 1, ms, [local], [injections])[0]
    why = _why(net.spec, ms, f"injections {injections}:")
    assert batched.outcomes == scalar.outcomes, why
    assert batched.phantoms == scalar.phantoms, why


def _spec_args(spec):
    return {"leaves": spec.leaves, "capacities": spec.capacities,
            "concentrator": spec.concentrator, "payload_bits": spec.payload_bits,
            "seed": spec.seed, "link_stages": spec.link_stages,
            "start_stages": spec.start_stages, "stuck_links": spec.stuck_links}
