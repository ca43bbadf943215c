"""The soak's bulk path packs the batched engine's terminal waves into the checking
harness's words exactly as the per-cycle path packs the plans of the same cycles
(every family with a :class:`~fatnet.cli.family.SoakModel`). Each case is drawn from
one seed; a failure names it and the call that replays it."""

import numpy as np
import pytest

from fatnet import api
from fatnet.cli.family import bench_families
from fatnet.golden.messages import MessageSet
from fatnet.sim import plan as planning

#: (kind, size) of every family with a bulk soak model, at two sizes.
CASES = [(kind, size) for kind, bench in bench_families().items() if bench.soak is not None
         for size in (bench.ladder[0], bench.soak_size)]


def check_bulk_words(kind: str, size: int, seed: int) -> None:
    """A few full-load cycles: bulk words == the plans' packed words, cycle by cycle."""
    bench = bench_families()[kind]
    net = api.network(kind, **bench.workload(size))
    family = api.family_of(net)
    cycles = 1 + seed % 4
    drawn = bench.soak.draw(net, cycles, np.random.default_rng(seed))
    src, dst, payload = drawn[:3]
    # full load: cycle c's terminal s at c * terminals + s; scheduled: each one's cycle
    cycle = drawn[3] if len(drawn) > 3 else np.repeat(np.arange(cycles), len(src) // cycles)
    waves = bench.soak.waves(net, cycle, src, dst, payload)
    words = planning.bulk_words(net, waves, family=family)
    ms = MessageSet(np.asarray(src), np.asarray(dst), [int(p) for p in payload])
    plans = planning.plans(net, ms, [np.flatnonzero(cycle == c) for c in range(cycles)],
                           family=family)
    send, recv = planning.endpoint_layouts(net, family)
    T = net.cycle_length
    where = (f"seed {seed}; replay: python -c 'import sys; sys.path.insert(0, \"tests\"); "
             f"import test_bulk_words as t; t.check_bulk_words(\"{kind}\", {size}, {seed})'")
    for name, layout, which in (("stim", send, "drive"), ("expect_recv", recv, "expect_recv"),
                                ("expect_ack", send, "expect_send_ack")):
        want = np.concatenate([planning.packed_bits(getattr(p, which), layout, T)
                               for p in plans])
        assert np.array_equal(words[name], want), f"{name}: {where}"
    delivered = [m for p in plans for m, o in p.result.outcomes.items()
                 if o.status == "delivered"]
    assert sorted(np.flatnonzero(waves.delivered)) == sorted(delivered), where


@pytest.mark.parametrize("kind,size", CASES)
@pytest.mark.parametrize("seed", range(6))
def test_bulk_words_equal_the_planned_cycles(kind, size, seed):
    check_bulk_words(kind, size, seed)


@pytest.mark.parametrize("seed", range(8))
def test_lost_messages_are_offered_again_at_their_sources(seed):
    """The soak's bulk workload: a carried (lost) message takes its source's next free
    cycle of the next chunk, in order; what does not fit stays carried, none is dropped
    or duplicated."""
    from bench_scripts import bench_script
    soak = bench_script("soak")
    rng = np.random.default_rng(seed)
    terminals, cycles = int(rng.integers(1, 6)), int(rng.integers(1, 5))
    src = np.tile(np.arange(terminals), cycles)
    dst = np.full(src.size, -1, dtype=np.int64)
    payload = np.full(src.size, -1, dtype=np.int64)
    lost = int(rng.integers(0, 3 * terminals * cycles))
    carried = [rng.integers(0, terminals, lost), np.arange(lost), 1000 + np.arange(lost)]
    left = soak._offer_again(src, dst, payload, carried, cycles)
    where = f"seed {seed}"
    placed = dst[dst >= 0]
    assert sorted([*placed.tolist(), *left[1].tolist()]) == list(range(lost)), where
    assert np.array_equal(payload[dst >= 0], 1000 + placed), where
    for s in range(terminals):
        mine = carried[1][carried[0] == s]               # in their order of loss
        here = dst[src == s]                             # the source's cycles in order
        n = min(len(mine), cycles)
        assert np.array_equal(here[:n], mine[:n]) and (here[n:] == -1).all(), where
        assert np.array_equal(left[1][left[0] == s], mine[n:]), where


def test_a_scheduled_message_the_model_does_not_deliver_stops_the_soak(tmp_path, monkeypatch):
    """Scheduled cycles (the off-line fat-tree's) are delivered whole: a message the
    model does not deliver stops the soak before anything is simulated, with the seed
    and the replay."""
    from bench_scripts import bench_script
    import fatnet.cli.fattree as fattree
    from fatnet.cli.family import SoakModel
    soak = bench_script("soak")
    model = fattree.BENCH.soak

    def one_lost(net, cycle, src, dst, payload):
        waves = model.waves(net, cycle, src, dst, payload)
        waves.delivered[-1] = False
        return waves

    monkeypatch.setattr(fattree, "BENCH",
                        fattree.BENCH._replace(soak=SoakModel(model.draw, one_lost)))
    with pytest.raises(RuntimeError, match=r"fat-tree: the model did not deliver message .* "
                       r"of scheduled cycle 2 in chunk 0 \(seed 5; 1 such messages\); replay: "
                       r"python bench/soak.py --networks fat-tree --seed 5 --messages 1 "
                       r"--chunk-cycles 3"):
        soak.soak("fat-tree", 10, 3, seed=5, build_root=tmp_path)


def test_a_wave_on_no_port_is_refused():
    """A terminal wire no port carries must be silent in the model's waves (the
    fat-tree's are as wide as its widest terminal, the external interface's; a leaf has
    fewer wires): one that carries a bit is named in the error, not dropped."""
    from fatnet.golden.errors import FatnetInputError
    bench = bench_families()["fat-tree"]
    net = api.network("fat-tree", **bench.workload(16))
    src, dst, payload, cycle = bench.soak.draw(net, 1, np.random.default_rng(0))
    waves = bench.soak.waves(net, cycle, src, dst, payload)
    wires = waves.recv.shape[3]
    assert net.spec.capacities[-1] < wires      # leaf 2's last wire is no port
    waves.recv[0, 3, 2, wires - 1] = 1
    with pytest.raises(FatnetInputError, match=f"terminal 2 wire {wires - 1} of the "
                                               f"model's expect_recv waves is no port"):
        planning.bulk_words(net, waves, family=api.family_of(net))
