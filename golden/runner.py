"""Run drivers: a message set through a cycle-exact model, delivery cycle after cycle.

Family-agnostic: a family hands over how to run one cycle and how wide each source's
channel is; these drivers do the bookkeeping and the report.

* Off-line: a schedule partitions the set into one-cycle sets; each runs in the model;
  what does not go through is re-scheduled after the planned cycles.
* On-line: every source keeps its messages in order; each cycle it injects as many as
  its channel has wires, oldest first; lost messages stay at the head and are sent again
  in the next cycle (a retry). After ``max_cycles`` cycles, what is left is reported lost.

No message disappears: each ends delivered (through the network or locally) or in the
report's ``lost`` list with the reason.
"""

from __future__ import annotations

import copy
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from .checks import check_int
from .errors import ParameterError

if TYPE_CHECKING:
    from .messages import MessageSet

__all__ = ["RunReport", "ChannelUsage", "ENGINES", "check_engine", "check_max_cycles",
           "drive_offline", "drive_online", "SourceQueues", "account_cycle"]

#: How a family's model runs its cycles (an ``engine`` parameter): ``"batched"``, many
#: messages and cycles as numpy arrays, or ``"scalar"``, one cycle at a time, the
#: specification the batched engine is tested equal to.
ENGINES = ("batched", "scalar")


def check_engine(engine: str) -> None:
    """``engine`` is one of :data:`ENGINES`, else one line naming them."""
    if engine not in ENGINES:
        raise ParameterError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")


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
    masks: list | None = None  # run-time fault mask per cycle (splitter networks), if any

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


class ChannelUsage:
    """Wire-cycles used per channel level.

    Parameters
    ----------
    level_of : callable
        Channel id -> its level.
    wires_per_level : sequence of int
        How many wires all channels of each level have together.
    """

    def __init__(self, level_of: Callable, wires_per_level):
        self.level_of = level_of
        self.wires = np.asarray(wires_per_level, dtype=np.int64)
        self.used = np.zeros(len(self.wires), dtype=np.int64)

    def add(self, result) -> None:
        for o in result.outcomes.values():
            for occ in o.path:
                self.used[self.level_of(occ.channel)] += 1

    def fractions(self, cycles: int) -> list:
        return [round(float(u) / (cycles * w), 4) if cycles else 0.0
                for u, w in zip(self.used, self.wires)]


def account_cycle(report: RunReport, usage: ChannelUsage, result, keep: bool) -> None:
    """One cycle's :class:`~fatnet.golden.cycle.CycleResult` in the report: its wire-cycles,
    losses and deliveries (kept if ``keep``)."""
    usage.add(result)
    report.cycles += 1
    report.losses_per_cycle.append(len(result.lost))
    if keep:
        report.results.append(result)
    report.delivered += len(result.with_status("delivered"))
    report.local += len(result.with_status("local"))


def check_max_cycles(max_cycles) -> int:
    """``max_cycles`` as an int >= 1, or one line (ParameterError): one meaning for every
    family (0 used to be the default on the fat-tree and "everything lost" elsewhere)."""
    return check_int("max_cycles", max_cycles, 1)


def drive_offline(report: RunReport, usage: ChannelUsage, cycles: list,
                  run_cycle: Callable, reschedule: Callable, keep_results: bool,
                  max_cycles: int | None) -> RunReport:
    """Run a schedule; re-schedule what a cycle defers or loses, after the planned cycles.

    Parameters
    ----------
    cycles : list of list of int
        The schedule: message indices per cycle.
    run_cycle : callable
        idx -> (CycleResult, deferred message indices) for one cycle.
    reschedule : callable
        sorted message indices -> a schedule of them (list of index lists).
    """
    report.scheduled_cycles = len(cycles)
    max_cycles = 4 * len(cycles) + 16 if max_cycles is None else check_max_cycles(max_cycles)
    pending = deque(cycles)
    while pending:
        idx = pending.popleft()
        if report.cycles >= max_cycles:
            report.lost += [(m, f"not delivered within {max_cycles} cycles") for m in idx]
            continue
        result, deferred = run_cycle(idx)
        account_cycle(report, usage, result, keep_results)
        retry = deferred + result.lost
        report.retries += len(retry)
        if retry:
            pending.extend(reschedule(sorted(retry)))
    report.utilisation = usage.fractions(report.cycles)
    return report


def drive_online(report: RunReport, usage: ChannelUsage, ms, source_width: Callable,
                 run_cycle: Callable, keep_results: bool, max_cycles: int,
                 local_delivery: bool = True) -> RunReport:
    """On-line injection with retries until everything is delivered or ``max_cycles``.

    Parameters
    ----------
    ms : MessageSet
    source_width : callable
        Source endpoint -> wires of its injection channel.
    run_cycle : callable
        idx -> (CycleResult, deferred message indices) for one cycle.
    local_delivery : bool
        Whether a message to its own source is delivered without the network (a
        fat-tree leaf) and so takes no wire; in a butterfly input r and output r are
        different switches.
    """
    max_cycles = check_max_cycles(max_cycles)
    queues: dict[int, deque] = defaultdict(deque)
    for m in range(len(ms)):
        queues[int(ms.src[m])].append(m)
    sent_before: set = set()
    while any(queues.values()) and report.cycles < max_cycles:
        idx = []
        for s, q in queues.items():
            local = [m for m in q if local_delivery and ms.dst[m] == s]
            idx += local
            idx += [m for m in q if m not in local][:int(source_width(s))]
        result, _ = run_cycle(sorted(idx))
        account_cycle(report, usage, result, keep_results)
        for m in result.delivered:
            queues[int(ms.src[m])].remove(m)
        report.retries += sum(1 for m in idx if m in sent_before)
        sent_before.update(idx)
    for q in queues.values():
        report.lost += [(m, f"not delivered within {max_cycles} cycles") for m in q]
    report.utilisation = usage.fractions(report.cycles)
    return report


class SourceQueues:
    """Every source's messages in index order; the front is the oldest undelivered
    (the batched engines' on-line drivers: :func:`drive_online`'s queues as arrays)."""

    def __init__(self, ms: MessageSet):
        src = np.asarray(ms.src, dtype=np.int64)
        self.src = src
        self.order = np.argsort(src, kind="stable")
        # sources in order of their first message (the scalar driver's dict order)
        sources, first = np.unique(src, return_index=True)
        self.sources = sources[np.argsort(first)]
        counts = np.bincount(src, minlength=int(src.max()) + 1 if src.size else 0)
        self.start = np.r_[0, np.cumsum(counts)[:-1]].astype(np.int64)
        self.end = self.start + counts
        self.next = self.start.copy()

    def any(self) -> bool:
        return bool(np.any(self.next < self.end))

    def copy(self) -> SourceQueues:
        """The queues as they are now, to plan cycles ahead on (the arrays of the
        messages shared, the fronts apart)."""
        other = copy.copy(self)
        other.next = self.next.copy()
        return other

    def fronts(self) -> np.ndarray:
        """The front message of every non-empty queue, sorted."""
        waiting = np.flatnonzero(self.next < self.end)
        return np.sort(self.order[self.next[waiting]])

    def pop(self, delivered: np.ndarray) -> None:
        """Remove delivered fronts."""
        self.next[self.src[delivered]] += 1

    def left(self, max_cycles: int) -> list:
        """What is left, in the scalar driver's order, as ``(message, reason)``."""
        reason = f"not delivered within {max_cycles} cycles"
        out: list = []
        for s in self.sources.tolist():
            out += [(int(m), reason) for m in self.order[self.next[s]:self.end[s]].tolist()]
        return out
