"""The fat-tree's terminal wires in bulk (:mod:`fatnet.golden.fattree.batchwaves`)
equal the scalar engine's: the vectorised encoder equals
:func:`~fatnet.golden.fattree.bitstream.encode` bit for bit, and every terminal wire of
many independent cycles equals the scalar runner's run of each cycle alone (its
injections, waveforms and acknowledgments), on the hardware tests' networks and on
random ones (hypothesis: stuck wires and their phantoms, link and start stages, both
switch-setting modes). The soak's one-cycle sets are one-cycle sets. Each case is drawn
from one seed; a failure prints the call that replays it."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fatnet.golden.fattree.batch import geometry
from fatnet.golden.fattree.batchwaves import encode_streams, one_cycle_sets, terminal_waves
from fatnet.golden.fattree.bitstream import encode
from fatnet.golden.fattree.network import FatTreeNetwork
from fatnet.golden.fattree.route import _cycle_runner
from fatnet.golden.fattree.schedule import validate_schedule
from fatnet.golden.messages import EXT, MessageSet
from test_batch_engine import networks
from test_cocotb import SPECS

SEEDS = st.integers(0, 2 ** 32 - 1)
PROPERTY = settings(max_examples=40, deadline=None, derandomize=True, print_blob=True,
                    suppress_health_check=list(HealthCheck))


def _replay(call: str) -> str:
    return (f"replay: python -c 'import sys; sys.path.insert(0, \"tests/fattree\"); "
            f"sys.path.insert(0, \"tests\"); import test_batch_waves as t; t.{call}'")


def assert_same_terminal_waves(net, waves, results, ms, idx, where: str) -> None:
    """Bulk waves (cycle ``c``; messages ``idx`` in order) == the scalar ``results[c]``
    at every terminal wire (zeros where it has no key) and in what is delivered."""
    assert waves.drive.shape[0] == len(results), where
    delivered = sorted(m for res in results for m in res.delivered)
    assert sorted(idx[waves.delivered].tolist()) == delivered, f"{where}, delivered"
    terminals, wires = waves.drive.shape[2:]
    for c, res in enumerate(results):
        drive = np.zeros(waves.drive.shape[1:], dtype=np.uint8)
        for m, (w, bits) in res.injections.items():
            x = net.n if ms.src[m] == EXT else int(ms.src[m])
            drive[:len(bits), x, w] = bits[:drive.shape[0]]
        assert np.array_equal(waves.drive[c], drive), f"{where}, cycle {c}, drive"
        for name, got, key, scalar in (
                ("recv", waves.recv[c], waves.recv_key, res.waveforms()),
                ("send_ack", waves.send_ack[c], waves.send_key, res.ack_waveforms())):
            for x in range(terminals):
                for w in range(wires):
                    want = scalar.get(key(x, w), np.zeros(got.shape[0], np.uint8))
                    assert np.array_equal(got[:, x, w], want), \
                        f"{where}, cycle {c}, {name} of terminal {x} wire {w}"


def check_cycles(net, ms, label, where: str) -> None:
    """Messages ``ms`` in cycles ``label`` (one per message): bulk == scalar, each
    cycle run alone by the scalar runner (switch setter, encoder, engine)."""
    idx = np.arange(len(ms))
    waves = terminal_waves(net, label, ms.src, ms.dst, list(ms.payload))
    run_cycle = _cycle_runner(net, ms)
    results = [run_cycle(idx[label == c].tolist())[0] for c in np.unique(label)]
    assert_same_terminal_waves(net, waves, results, ms, idx, where)


def _random_messages(net, rng, count: int) -> MessageSet:
    """``count`` random messages (leaves and the external interface, some local)."""
    src = rng.integers(EXT, net.n, count)
    dst = rng.integers(EXT, net.n, count)
    dst = np.where((src == EXT) & (dst == EXT), 0, dst)
    pb = net.spec.payload_bits
    payload = [int(v) for v in rng.integers(0, 1 << min(pb, 62), count)]
    return MessageSet.from_pairs(src, dst, pb, payload=payload)


def check_hardware_case(name: str, seed: int) -> None:
    """The hardware tests' network ``name``: a few random cycles (messages lost, past
    their source's wires, local) and a few one-cycle sets, bulk == scalar."""
    net = FatTreeNetwork(SPECS[name][0]())
    rng = np.random.default_rng(seed)
    cycles = int(rng.integers(1, 4))
    ms = _random_messages(net, rng, cycles * (net.n + 1))
    label = np.sort(rng.integers(0, cycles, len(ms))) * 2 + 3       # any labels, in order
    check_cycles(net, ms, label, f"{name} seed {seed}; "
                 + _replay(f"check_hardware_case({name!r}, {seed})"))
    label, src, dst = one_cycle_sets(net, cycles, rng)
    ms = MessageSet.from_pairs(src, dst, net.spec.payload_bits, seed)
    check_cycles(net, ms, label, f"{name} one-cycle sets, seed {seed}; "
                 + _replay(f"check_hardware_case({name!r}, {seed})"))


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("seed", range(2))
def test_terminal_waves_equal_the_scalar_cycles_on_the_hardware_cases(name, seed):
    check_hardware_case(name, seed)


@PROPERTY
@given(data=st.data(), seed=SEEDS)
def test_terminal_waves_equal_the_scalar_cycles_on_random_networks(data, seed):
    net = FatTreeNetwork(data.draw(networks()))
    check_random_network(net, seed)


def check_random_network(net, seed: int) -> None:
    """Random messages in up to four cycles of ``net``: bulk == scalar."""
    rng = np.random.default_rng(seed)
    ms = _random_messages(net, rng, int(rng.integers(1, 4 * (net.n + 2))))
    label = np.sort(rng.integers(0, 4, len(ms)))
    check_cycles(net, ms, label, f"spec {net.spec.to_dict()}, seed {seed}; replay: "
                 f"check_random_network(FatTreeNetwork(FatTreeSpec(**spec)), seed) in "
                 f"tests/fattree/test_batch_waves.py")


@PROPERTY
@given(data=st.data(), seed=SEEDS)
def test_encoded_streams_equal_the_encoder(data, seed):
    """Every pair of endpoints, random decision values (off-line) and payloads."""
    net = FatTreeNetwork(data.draw(networks()))
    check_encoder(net, seed)


def check_encoder(net, seed: int) -> None:
    """``encode_streams`` == ``encode`` message by message on every pair of
    endpoints of ``net``."""
    g = geometry(net)
    rng = np.random.default_rng(seed)
    ends = np.arange(EXT, net.n)
    src, dst = (a.reshape(-1) for a in np.meshgrid(ends, ends))
    keep = src != dst
    src, dst = src[keep], dst[keep]
    pb = net.spec.payload_bits
    payload = rng.integers(0, 1 << min(pb, 62), src.size)
    choices = np.full((src.size, g.max_hops, max(1, g.max_stages)), -1, dtype=np.int64)
    want = []
    for i, (s, d) in enumerate(zip(src.tolist(), dst.tolist())):
        decisions = [tuple(int(rng.integers(0, 1 << st_.decision_width))
                           for st_ in net.cascades[(h.node, h.out_port)].stages)
                     for h in net.tree.hops(s, d)]
        for q, dec in enumerate(decisions):
            choices[i, q, :len(dec)] = dec
        want.append(encode(net, s, d, int(payload[i]),
                           decisions if net.spec.mode == "offline" else None))
    streams, lengths = encode_streams(net, src, dst, payload, choices)
    where = (f"spec {net.spec.to_dict()}, seed {seed}; replay: check_encoder("
             f"FatTreeNetwork(FatTreeSpec(**spec)), seed) in tests/fattree/test_batch_waves.py")
    for i, bits in enumerate(want):
        assert lengths[i] == len(bits), f"{where}; message {i}"
        assert streams[i, :len(bits)].tolist() == bits, f"{where}; message {i}"
        assert not streams[i, len(bits):].any(), f"{where}; message {i}"


@pytest.mark.parametrize("seed", range(4))
def test_one_cycle_sets_fit_every_channel(seed):
    """The soak's cycles: every channel's load within its effective capacity, fuller
    than one message a terminal would need to be, the endpoints spread over every
    terminal, nothing local."""
    net = FatTreeNetwork(SPECS["n16-explicit-xbar-off"][0]())
    rng = np.random.default_rng(seed)
    label, src, dst = one_cycle_sets(net, 50, rng)
    where = f"seed {seed}"
    cycles = [np.flatnonzero(label == c) for c in range(50)]
    assert validate_schedule(net.tree, src, dst, cycles, net.effective_cap) == [], where
    assert (src != dst).all() and set(src.tolist()) == set(range(EXT, net.n)), where
    assert set(dst.tolist()) == set(range(EXT, net.n)), where
    assert np.diff(label).min() >= 0, where


@pytest.mark.parametrize("limit", [1, 5, 40])
def test_terminal_waves_cut_into_batches_equal_one_batch(monkeypatch, limit):
    """The engine's batches (at most BATCH_MESSAGES messages of whole cycles, a larger
    cycle alone) change nothing: the same waves as one batch."""
    import fatnet.golden.fattree.batchwaves as batchwaves
    net = FatTreeNetwork(SPECS["n16-universal-links2-pip-off"][0]())
    label, src, dst = one_cycle_sets(net, 12, np.random.default_rng(limit))
    payload = np.random.default_rng(0).integers(0, 1 << net.spec.payload_bits, src.size)
    whole = terminal_waves(net, label, src, dst, payload)
    monkeypatch.setattr(batchwaves, "BATCH_MESSAGES", limit)
    cut = terminal_waves(net, label, src, dst, payload)
    for name in ("drive", "recv", "send_ack", "delivered"):
        assert np.array_equal(getattr(cut, name), getattr(whole, name)), (limit, name)
    assert whole.delivered.all()


def test_offline_streams_need_their_decisions():
    """As the encoder, the bulk encoder refuses off-line streams without decisions
    (a ValueError; the bulk one's is a :class:`ParameterError`)."""
    from fatnet.golden.errors import ParameterError
    net = FatTreeNetwork(SPECS["n8-universal-pip-off"][0]())
    with pytest.raises(ValueError, match="off-line mode needs the decision bits"):
        encode(net, 0, 5, 0)
    with pytest.raises(ParameterError, match="off-line mode needs the decision bits"):
        encode_streams(net, [0], [5], [0])
