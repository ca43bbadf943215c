"""Routing runs: a message set through the cycle-exact model, cycle after cycle.

* Off-line: the scheduler partitions the set into one-cycle sets (against the
  concentrators' guaranteed capacities), the switch setter computes every message's
  decision bits, and each cycle runs in the model. A one-cycle set loses nothing.
* On-line: every source keeps its messages in order; each cycle it injects as many as
  its channel has wires, oldest first; lost messages stay at the head and are sent again
  in the next cycle (a retry). After ``max_cycles`` cycles, what is left is reported lost.

No message disappears: each ends delivered (through the network or locally) or in the
report's ``lost`` list with the reason.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field

import numpy as np

from .bitstream import encode
from .cyclemodel import simulate_cycle
from .topology import EXT
from .schedule import lower_bound, schedule
from .switching import assign_injection_wires, set_switches

__all__ = ["RunReport", "run_offline", "run_online", "run"]


@dataclass
class RunReport:
    mode: str
    messages: int
    delivered: int = 0
    local: int = 0
    lost: list = field(default_factory=list)  # (message, reason)
    cycles: int = 0
    scheduled_cycles: int | None = None
    lower_bound: int = 0
    load_factor: float = 0.0
    retries: int = 0
    cycle_length: int = 0
    losses_per_cycle: list = field(default_factory=list)
    utilisation: list = field(default_factory=list)  # per level, fraction of wire-cycles
    results: list = field(default_factory=list)  # CycleResult per cycle (kept on request)

    def to_dict(self) -> dict:
        return {
            "mode": self.mode, "messages": self.messages, "delivered": self.delivered,
            "delivered_locally": self.local,
            "lost": [{"message": m, "reason": r} for m, r in self.lost],
            "cycles": self.cycles, "scheduled_cycles": self.scheduled_cycles,
            "lower_bound": self.lower_bound, "load_factor": self.load_factor,
            "retries": self.retries, "cycle_length_bits": self.cycle_length,
            "total_bit_times": self.cycles * self.cycle_length,
            "losses_per_cycle": self.losses_per_cycle,
            "utilisation_per_level": self.utilisation,
        }


class _Usage:
    """Wire-cycles used per channel level."""

    def __init__(self, net):
        self.net = net
        self.used = np.zeros(net.L + 1, dtype=np.int64)

    def add(self, result):
        level_of = self.net.tree.level_of
        for o in result.outcomes.values():
            for occ in o.path:
                self.used[level_of[occ.channel[1]]] += 1

    def fractions(self, cycles: int) -> list:
        wires = np.zeros(self.net.L + 1, dtype=np.int64)
        np.add.at(wires, self.net.tree.level_of, self.net.tree.cap.sum(axis=0))
        return [round(float(u) / (cycles * w), 4) if cycles else 0.0
                for u, w in zip(self.used, wires)]


def _run_cycle(net, ms, idx, keep: bool, report: RunReport, usage: _Usage):
    """One off-line or on-line cycle over messages ``idx``; returns (result, deferred)."""
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
    result = simulate_cycle(net, ms, injections, local)
    usage.add(result)
    report.cycles += 1
    report.losses_per_cycle.append(len(result.lost))
    if keep:
        report.results.append(result)
    return result, deferred


def run_offline(net, ms, method: str = "best", keep_results: bool = False,
                max_cycles: int | None = None) -> RunReport:
    """Schedule off-line and run every cycle of the schedule in the model."""
    tree, cap = net.tree, net.effective_cap
    report = RunReport("offline", len(ms), lower_bound=lower_bound(tree, ms.src, ms.dst, cap),
                       load_factor=tree.load_factor(ms.src, ms.dst, cap),
                       cycle_length=net.cycle_length)
    usage = _Usage(net)
    cycles = [list(map(int, c)) for c in schedule(tree, ms.src, ms.dst, cap=cap,
                                                  method=method)]
    report.scheduled_cycles = len(cycles)
    max_cycles = max_cycles or 4 * len(cycles) + 16
    pending = deque(cycles)
    while pending:
        idx = pending.popleft()
        if report.cycles >= max_cycles:
            report.lost += [(m, f"not delivered within {max_cycles} cycles") for m in idx]
            continue
        result, deferred = _run_cycle(net, ms, idx, keep_results, report, usage)
        report.delivered += len(result.with_status("delivered"))
        report.local += len(result.with_status("local"))
        retry = deferred + result.lost
        report.retries += len(retry)
        if retry:
            # Re-schedule what did not go through; it runs after the planned cycles.
            sub = np.asarray(sorted(retry))
            for c in schedule(tree, ms.src[sub], ms.dst[sub], cap=cap, method=method):
                pending.append([int(sub[i]) for i in c])
    report.utilisation = usage.fractions(report.cycles)
    return report


def run_online(net, ms, keep_results: bool = False, max_cycles: int = 1000) -> RunReport:
    """On-line arbitration with retries until everything is delivered or max_cycles."""
    tree = net.tree
    report = RunReport("online", len(ms), lower_bound=lower_bound(tree, ms.src, ms.dst),
                       load_factor=tree.load_factor(ms.src, ms.dst),
                       cycle_length=net.cycle_length)
    usage = _Usage(net)
    queues: dict[int, deque] = defaultdict(deque)
    for m in range(len(ms)):
        queues[int(ms.src[m])].append(m)
    sent_before: set = set()
    while any(queues.values()) and report.cycles < max_cycles:
        idx = []
        for s, q in queues.items():
            width = tree.cap[1, 0] if s == EXT else tree.cap[0, tree.leaf_heap(s)]
            locals_ = [m for m in q if ms.dst[m] == s]
            idx += locals_
            idx += [m for m in q if ms.dst[m] != s][:int(width)]
        result, _ = _run_cycle(net, ms, sorted(idx), keep_results, report, usage)
        for m in result.delivered:
            queues[int(ms.src[m])].remove(m)
        report.retries += sum(1 for m in idx if m in sent_before)
        sent_before.update(idx)
        report.delivered += len(result.with_status("delivered"))
        report.local += len(result.with_status("local"))
    for q in queues.values():
        report.lost += [(m, f"not delivered within {max_cycles} cycles") for m in q]
    report.utilisation = usage.fractions(report.cycles)
    return report


def run(net, ms, method: str = "best", keep_results: bool = False,
        max_cycles: int | None = None) -> RunReport:
    """Run in the network's own mode."""
    if net.spec.mode == "offline":
        return run_offline(net, ms, method, keep_results, max_cycles)
    return run_online(net, ms, keep_results, max_cycles or 1000)
