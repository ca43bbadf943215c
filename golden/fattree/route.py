"""Routing runs: a message set through the cycle-exact model, cycle after cycle.

* Off-line: the scheduler partitions the set into one-cycle sets (against the
  concentrators' guaranteed capacities), the switch setter computes every message's
  decision bits, and each cycle runs in the model. A one-cycle set loses nothing.
* On-line: every source keeps its messages in order; each cycle it injects as many as
  its channel has wires, oldest first; lost messages stay at the head and are sent again
  in the next cycle (a retry). After ``max_cycles`` cycles, what is left is reported lost.

No message disappears: each ends delivered (through the network or locally) or in the
report's ``lost`` list with the reason.

Two engines run the cycles: ``engine="batched"`` (the default,
:mod:`fatnet.golden.fattree.batchrun`: many messages and cycles as numpy arrays) and
``engine="scalar"`` (:func:`fatnet.golden.fattree.cyclemodel.simulate_cycle` one cycle
at a time, the specification the batched engine is tested equal to).
"""

from __future__ import annotations

import numpy as np

from ..runner import (ENGINES, ChannelUsage, RunReport, check_engine, drive_offline,
                      drive_online)
from .batchrun import drive_offline_batched, drive_online_batched
from .bitstream import encode
from .cyclemodel import simulate_cycle
from .schedule import lower_bound, schedule
from .switching import assign_injection_wires, set_switches
from .topology import EXT

__all__ = ["RunReport", "ENGINES", "run_offline", "run_online", "run"]



def _usage(net) -> ChannelUsage:
    """Wire-cycles per level; channels are (direction, heap)."""
    tree = net.tree
    wires = np.zeros(net.L + 1, dtype=np.int64)
    np.add.at(wires, tree.level_of, tree.cap.sum(axis=0))
    return ChannelUsage(lambda channel: tree.level_of[channel[1]], wires)


def _cycle_runner(net, ms):
    """idx -> (result, deferred): one off-line or on-line cycle over messages ``idx``."""
    def run_cycle(idx):
        local = [m for m in idx if ms.src[m] == ms.dst[m]]
        if net.spec.mode == "offline":
            settings = set_switches(net, ms, idx)
            injections = {m: (settings.wire[m],
                              encode(net, int(ms.src[m]), int(ms.dst[m]), ms.payload[m],
                                     settings.decisions[m]))
                          for m in settings.routed}
            deferred = [m for m, _ in settings.unroutable]
        else:
            wires, overflow = assign_injection_wires(net, ms, idx)
            injections = {m: (w, encode(net, int(ms.src[m]), int(ms.dst[m]), ms.payload[m]))
                          for m, w in wires.items()}
            deferred = [m for m, _ in overflow]
        return simulate_cycle(net, ms, injections, local), deferred
    return run_cycle


def run_offline(net, ms, method: str = "best", keep_results: bool = False,
                max_cycles: int | None = None, engine: str = "batched") -> RunReport:
    """Schedule off-line and run every cycle of the schedule in the model."""
    check_engine(engine)
    tree, cap = net.tree, net.effective_cap
    report = RunReport("offline", len(ms), lower_bound=lower_bound(tree, ms.src, ms.dst, cap),
                       load_factor=tree.load_factor(ms.src, ms.dst, cap),
                       cycle_length=net.cycle_length)
    cycles = [list(map(int, c)) for c in schedule(tree, ms.src, ms.dst, cap=cap,
                                                  method=method)]

    def reschedule(retry):
        sub = np.asarray(retry)
        return [[int(sub[i]) for i in c]
                for c in schedule(tree, ms.src[sub], ms.dst[sub], cap=cap, method=method)]

    if engine == "batched":
        return drive_offline_batched(net, ms, report, _usage(net), cycles, reschedule,
                                     keep_results, max_cycles)
    return drive_offline(report, _usage(net), cycles, _cycle_runner(net, ms), reschedule,
                         keep_results, max_cycles)


def run_online(net, ms, keep_results: bool = False, max_cycles: int = 1000,
               engine: str = "batched") -> RunReport:
    """On-line arbitration with retries until everything is delivered or max_cycles."""
    check_engine(engine)
    tree = net.tree
    report = RunReport("online", len(ms), lower_bound=lower_bound(tree, ms.src, ms.dst),
                       load_factor=tree.load_factor(ms.src, ms.dst),
                       cycle_length=net.cycle_length)

    def source_width(s):
        return tree.cap[1, 0] if s == EXT else tree.cap[0, tree.leaf_heap(s)]

    if engine == "batched":
        return drive_online_batched(net, ms, report, _usage(net), keep_results,
                                    max_cycles)
    return drive_online(report, _usage(net), ms, source_width, _cycle_runner(net, ms),
                        keep_results, max_cycles)


def run(net, ms, method: str = "best", keep_results: bool = False,
        max_cycles: int | None = None, engine: str = "batched") -> RunReport:
    """Run in the network's own mode on ``engine``."""
    if net.spec.mode == "offline":
        return run_offline(net, ms, method, keep_results, max_cycles, engine)
    return run_online(net, ms, keep_results, 1000 if max_cycles is None else max_cycles,
                      engine)
