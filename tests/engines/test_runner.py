"""The run drivers (fatnet.golden.runner) on toy fabrics: a 3 x 3 crossbar and a ring
(tests/engines/toyfabric.py) run through the cycle engine.

Expected cycles, retries, losses and utilisation are worked out by hand from the
drivers' documented rules (on-line: each source sends its oldest undelivered messages,
as many as it has wires, lost ones stay at the head; off-line: the schedule's cycles
in order, what a cycle loses or defers re-scheduled after them; after ``max_cycles``
what is left is reported lost) and the crossbar's arbitration (lowest input wins).
"""

from __future__ import annotations

import numpy as np
import pytest

from fatnet.golden.cycle import run_cycle
from fatnet.golden.runner import ChannelUsage, RunReport, drive_offline, drive_online
from toyfabric import bits, crossbar, ring, ring_stream, stream

PB = 3  # payload bits


class MS:
    """What the drivers read of a message set: src, dst, payload, len()."""

    def __init__(self, pairs, seed=0):
        rng = np.random.default_rng(seed)
        self.src = np.array([s for s, _ in pairs], dtype=np.int64)
        self.dst = np.array([d for _, d in pairs], dtype=np.int64)
        self.payload = [int(rng.integers(0, 1 << PB)) for _ in pairs]

    def __len__(self):
        return len(self.src)


def crossbar_runner(ms, n=3, masked=(), local_delivery=True, defer=None, log=None):
    """idx -> (CycleResult, deferred) on an n x n on-line crossbar; messages to their
    own source are local when ``local_delivery``; ``defer`` (a set) holds messages to
    defer the first time they come, as a switch setter that cannot route them would."""
    fab = crossbar(n, masked=masked)
    k = max(1, (n - 1).bit_length())

    def run(idx):
        if log is not None:
            log.append(list(idx))
        local = [m for m in idx if local_delivery and ms.src[m] == ms.dst[m]]
        deferred = [m for m in idx if defer and m in defer]
        if defer:
            defer.difference_update(deferred)
        sent = [m for m in idx if m not in local and m not in deferred]
        messages = {m: (int(ms.src[m]), int(ms.dst[m]), ("src", int(ms.src[m])))
                    for m in list(sent) + local}
        injections = {m: (0, stream([bits(int(ms.dst[m]), k)], ms.payload[m], PB))
                      for m in sent}
        return run_cycle(fab, 4 + PB, messages, injections, local), deferred
    return run


def crossbar_usage(n=3):
    return ChannelUsage(lambda ch: 0 if ch[0] == "src" else 1, [n, n])


def check_report(r, ms):
    """Conservation and consistency of every report."""
    assert r.delivered + r.local + len(r.lost) == r.messages == len(ms)
    assert len(r.losses_per_cycle) == r.cycles
    d = r.to_dict()
    assert d["total_bit_times"] == r.cycles * r.cycle_length
    assert d["delivered"] + d["delivered_locally"] + len(d["lost"]) == d["messages"]
    assert [x["message"] for x in d["lost"]] == [m for m, _ in r.lost]
    assert d["utilisation_per_level"] == r.utilisation
    if r.results:  # kept: each message delivered at most once over all cycles
        got = [m for res in r.results for m in res.delivered]
        assert len(got) == len(set(got)) == r.delivered + r.local
        assert not set(got) & {m for m, _ in r.lost}
        assert sum(len(res.lost) for res in r.results) == sum(r.losses_per_cycle)


# ------------------------------------------------------------------ on-line
def test_online_contention_retries_and_utilisation():
    # three sources, one message each, all to destination 0: input 0 wins, then 1, then 2
    ms = MS([(2, 0), (0, 0), (1, 0)])
    r = drive_online(RunReport("online", 3, cycle_length=7), crossbar_usage(), ms,
                     lambda s: 1, crossbar_runner(ms, local_delivery=False), True, 50)
    check_report(r, ms)
    assert r.cycles == 3 and r.delivered == 3 and r.lost == []
    assert r.losses_per_cycle == [2, 1, 0]
    assert r.retries == 2 + 1
    assert [res.delivered for res in r.results] == [[1], [2], [0]]
    # source wires: 3 + 2 + 1 of 3 x 3 wire-cycles; destination wires: 3 of 9
    assert r.utilisation == [round(6 / 9, 4), round(3 / 9, 4)]


def test_online_oldest_first_and_lost_stays_at_the_head():
    # source 0: a1, a2; source 1: b1, b2; all to destination 2
    ms = MS([(0, 2), (0, 2), (1, 2), (1, 2)])
    log = []
    r = drive_online(RunReport("online", 4), crossbar_usage(), ms, lambda s: 1,
                     crossbar_runner(ms, log=log), True, 50)
    check_report(r, ms)
    # a1 beats b1; a2 beats the retried b1; then b1 alone; then b2
    assert log == [[0, 2], [1, 2], [2], [3]]
    assert [res.delivered for res in r.results] == [[0], [1], [2], [3]]
    assert r.retries == 2 and r.losses_per_cycle == [1, 1, 0, 0]


def test_online_source_width_limits_injections():
    # a source with two wires sends two messages a cycle (to different destinations)
    ms = MS([(0, 1), (0, 2), (0, 0), (1, 1)])

    def width(s):
        return 2 if s == 0 else 1

    log = []
    # the crossbar has one wire per source, so this one only logs the driver's choice
    # and delivers everything
    drive_online(RunReport("online", 4), crossbar_usage(), ms, width,
                 lambda idx: (log.append(list(idx)) or _deliver_all(idx), []),
                 False, 10, local_delivery=False)
    assert log[0] == [0, 1, 3] and log[1] == [2]


def _deliver_all(idx):
    from fatnet.golden.cycle import CycleResult, Outcome
    return CycleResult(1, {m: Outcome(m, 0, 0, "delivered") for m in idx})


def test_online_local_delivery():
    # message 0 is to its own source: with local delivery it takes no wire and goes in
    # the first cycle beside source 0's network message
    ms = MS([(0, 0), (0, 1)])
    r = drive_online(RunReport("online", 2), crossbar_usage(), ms, lambda s: 1,
                     crossbar_runner(ms), True, 10)
    check_report(r, ms)
    assert r.cycles == 1 and r.local == 1 and r.delivered == 1
    assert r.results[0].with_status("local") == [0]
    # without it, it goes through the crossbar on source 0's one wire, then the other
    r = drive_online(RunReport("online", 2), crossbar_usage(), ms, lambda s: 1,
                     crossbar_runner(ms, local_delivery=False), True, 10,
                     local_delivery=False)
    check_report(r, ms)
    assert r.cycles == 2 and r.local == 0 and r.delivered == 2


def test_online_gives_up_after_max_cycles_and_reports_the_rest():
    # destination 1's only output is masked: messages to it are lost every cycle
    ms = MS([(0, 1), (1, 0), (2, 1), (2, 2)])
    r = drive_online(RunReport("online", 4), crossbar_usage(), ms, lambda s: 1,
                     crossbar_runner(ms, masked={("X", "o1", 0, 0)}), True, 3)
    check_report(r, ms)
    assert r.cycles == 3
    assert sorted(m for m, _ in r.lost) == [0, 2]
    assert all("3 cycles" in why for _, why in r.lost)
    # message 3 is behind source 2's doomed message, but local messages take no wire
    # and go in the first cycle
    assert r.results[0].with_status("local") == [3]
    assert r.local == 1 and r.delivered == 1


@pytest.mark.parametrize("seed", range(20240800, 20240815))
def test_online_ring_conservation(seed):
    rng = np.random.default_rng(seed)
    n, wires, eject = 4, int(rng.integers(1, 3)), int(rng.integers(1, 3))
    pairs = [(int(rng.integers(0, n)), int(rng.integers(0, n)))
             for _ in range(int(rng.integers(1, 12)))]
    ms = MS(pairs, seed)
    fab = ring(n, wires, eject)

    def run(idx):
        local = [m for m in idx if ms.src[m] == ms.dst[m]]
        sent = [m for m in idx if m not in local]
        messages = {m: (int(ms.src[m]), int(ms.dst[m]), ("inj", int(ms.src[m])))
                    for m in idx}
        injections = {m: (0, ring_stream(n, int(ms.src[m]), int(ms.dst[m]),
                                         ms.payload[m], PB)) for m in sent}
        return run_cycle(fab, 2 * n + PB + 2, messages, injections, local), []

    max_cycles = int(rng.integers(1, 6))
    usage = ChannelUsage(lambda ch: {"inj": 0, "ring": 1, "ej": 2}[ch[0]],
                         [n, n * wires, n * eject])
    r = drive_online(RunReport("online", len(ms)), usage, ms, lambda s: 1, run, True,
                     max_cycles)
    where = f"seed {seed}: pairs={pairs} wires={wires} eject={eject}"
    check_report(r, ms)
    assert r.cycles <= max_cycles, where
    # every message reported lost is one never delivered, and the payloads arrive
    for res in r.results:
        for m in res.with_status("delivered"):
            assert res.outcomes[m].delivered_payload == ms.payload[m], where
    assert all(0.0 <= u <= 1.0 for u in r.utilisation), where


# ------------------------------------------------------------------ off-line
def test_offline_reschedules_losses_after_the_planned_cycles():
    # the schedule puts two messages for destination 2 in one cycle: message 1 (input
    # 1) loses to message 0 (input 0) and is re-scheduled after the planned cycles
    ms = MS([(0, 2), (1, 2), (2, 0)])
    calls = []

    def reschedule(retry):
        calls.append(list(retry))
        return [[m] for m in retry]

    r = drive_offline(RunReport("offline", 3, cycle_length=7), crossbar_usage(),
                      [[0, 1], [2]], crossbar_runner(ms), reschedule, True, None)
    check_report(r, ms)
    assert r.scheduled_cycles == 2 and r.cycles == 3
    assert calls == [[1]]
    assert [res.delivered for res in r.results] == [[0], [2], [1]]
    assert r.retries == 1 and r.losses_per_cycle == [1, 0, 0]
    assert r.utilisation == [round(4 / 9, 4), round(3 / 9, 4)]


def test_offline_deferred_messages_are_retried():
    ms = MS([(0, 1), (1, 2)])
    calls = []

    def reschedule(retry):
        calls.append(list(retry))
        return [list(retry)]

    r = drive_offline(RunReport("offline", 2), crossbar_usage(), [[0, 1]],
                      crossbar_runner(ms, defer={1}), reschedule, True, None)
    check_report(r, ms)
    assert calls == [[1]] and r.retries == 1 and r.cycles == 2
    assert r.losses_per_cycle == [0, 0]  # deferred is not lost
    assert [res.delivered for res in r.results] == [[0], [1]]


def test_offline_gives_up_after_max_cycles():
    # message 1's destination output is masked: lost every time
    ms = MS([(0, 0), (1, 1), (2, 2)])
    r = drive_offline(RunReport("offline", 3), crossbar_usage(), [[0], [1, 2]],
                      crossbar_runner(ms, masked={("X", "o1", 0, 0)},
                                      local_delivery=False),
                      lambda retry: [list(retry)], True, 4)
    check_report(r, ms)
    assert r.cycles == 4 and r.scheduled_cycles == 2
    assert r.lost == [(1, "not delivered within 4 cycles")]
    assert r.delivered == 2 and r.retries == 3  # tried in cycles 2, 3, 4
    assert r.losses_per_cycle == [0, 1, 1, 1]
