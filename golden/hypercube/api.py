"""The hypercube family's command-line data: one routing's report and the k-cube's
costs, as plain dicts (``fatnet route|info hypercube --json`` prints them).

Each algorithm is a class (:class:`Alg1`, :class:`Alg2`, :class:`Ecube`,
:class:`Valiant`): a frozen spec of the options ``route`` runs it with, checked when made,
that routes and reports (:meth:`Algorithm.report`) and names the hardware built for it
(:attr:`Algorithm.circuit`). :data:`ALGORITHMS` maps ``--algorithm``'s names to them, for
every verb: :func:`algorithm` makes one from the options of ``route``, :func:`circuit` the
hardware from those of ``gen``, ``sim`` and ``board``.

:func:`route_report` runs one of :data:`ALGORITHMS` on a routing and returns the fields
every algorithm shares (``kind``, ``dimension``, ``algorithm``, ``messages``,
``delivered``, ``lost``, ``final``, ``bit_times``, ``steps``, ``max_messages_per_node``,
``collisions``, ``message_bits``) and each algorithm's own:

* ``alg1`` (:mod:`.alg1`): ``collisions``, a list of ``{kind, step, node, dimension,
  messages}``; ``bit_times`` the pipelined router chain's total for an ``M``-bit message
  (``pipeline_timing(k, M).total = M + k + 1``; ``M`` counts the ``k`` address bits, the
  stream adds its M bit); ``steps = k``.
* ``alg2`` (:mod:`.alg2`): ``operations`` (cross, enumerate, pack, rendezvous: the
  steps the cycle-exact schedule runs; the last iteration only crosses),
  ``reading``, ``violations``, ``max_bits`` and ``per_step`` (storage per step, and each
  step's ``start`` and ``bit_times`` in the cycle-exact model's fixed schedule);
  ``steps`` the dimension steps in sequence (iteration ``i``: one crossing and three
  Algorithm 1 passes over its ``k - 1 - i`` free dimensions: ``k + 3k(k - 1)/2``; the
  enumerations are not counted); ``bit_times`` the cycle-exact model's total
  (:func:`.bitserial.schedule`: ``5k^2 + (3M + 1)k - 2M - 5``, the same for every
  routing), with ``bit_times_per_iteration``. The schedule is the corrected reading's;
  the paper's readings fail, and their ``bit_times`` is ``null``. ``cycle_model``: for
  ``k <= CYCLE_CHECK_DIMENSION`` the routing run bit by bit too (``delivered``: how many
  arrived intact; ``same_positions``: every message at the step-level model's node after
  every step), else ``null``.
* ``ecube``, ``valiant`` (:mod:`.store_forward`): ``bit_times`` ``null`` (no bit-serial
  model); ``store_forward_bit_times`` and ``cut_through_bit_times`` at ``M`` message bits
  plus the header (``k`` bits e-cube, ``2k`` Valiant), ``max_queue``, ``latency``,
  ``buffer``, ``phased``, ``stopped``.

:func:`info_report` is ``info``'s: the cube's size, per-node hardware and bit-time
costs, and with a store-and-forward ``algorithm`` its configuration's deadlock check
(:func:`deadlock_report`, :mod:`.deadlock`).

``lost`` lists the messages not delivered (alg1: every message in a collision, although
the model carries it on to its destination; ``final`` says where each message ended).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..checks import is_integer
from ..errors import ParameterError
from . import alg1, alg2, bitserial
from . import store_forward as sf
from .circuit import (Alg1Circuit, Alg2Circuit, EcubeCircuit, HypercubeCircuit,
                      ValiantCircuit)
from .cube import Hypercube, check_dimension, check_routing
from .deadlock import check_deadlock
from .enumeration import enumeration_timing
from ..seeds import check_seed

__all__ = ["ALGORITHMS", "HARDWARE_ALGORITHMS", "Algorithm", "Alg1", "Alg2", "Ecube",
           "Valiant", "algorithm", "algorithm_class", "circuit", "default_message_bits",
           "check_message_bits", "route_report", "alg2_steps", "info_report",
           "deadlock_report",
           "ALG2_BIT_TIMES_FORMULA"]

#: Algorithm 2's bit-times in the cycle-exact model's fixed schedule.
ALG2_BIT_TIMES_FORMULA = "5k^2 + (3M + 1)k - 2M - 5"

MAX_MESSAGE_BITS = 1 << 20
#: ``route`` also runs Algorithm 2 bit by bit (:func:`.bitserial.run_alg2`) up to this k
#: (about 0.5 s at k = 10; beyond, the step-level model alone).
CYCLE_CHECK_DIMENSION = 10


def default_message_bits(k: int) -> int:
    """``M = 2k`` (the issue's comparison point)."""
    return 2 * int(k)


def alg2_steps(k: int) -> int:
    """Algorithm 2's dimension steps in sequence: per iteration ``i`` one crossing and
    three Algorithm 1 passes (Steps 3, 5, 6) over its ``k - 1 - i`` free dimensions."""
    k = int(k)
    return k + 3 * k * (k - 1) // 2


def _operations(sched) -> dict:
    """The operations the cycle-exact schedule runs (steps of non-zero length): the last
    iteration has no free dimension and only crosses."""
    kinds = {"cross": "cross", "enumerate doubles": "enumerate", "pack": "pack",
             "enumerate holes": "enumerate", "pack hole addresses": "pack",
             "rendezvous": "rendezvous"}
    ops = dict.fromkeys(("cross", "enumerate", "pack", "rendezvous"), 0)
    for st in sched.steps:
        ops[kinds[st.kind]] += st.length > 0
    return ops


def _final(src, final) -> list:
    return [[int(s), int(x)] for s, x in zip(src, final)]


#: Why ``route`` refuses an option the algorithm does not take: option -> (the value
#: that leaves it out, the algorithms that take it).
_OWNERS = {
    "order": (None, "an alg1 option"),
    "reading": ("corrected", "an alg2 option"),
    "buffer": (None, "a store-and-forward option: ecube, valiant"),
    "phased": (False, "a Valiant option"),
}


@dataclass(frozen=True)
class Algorithm:
    """One routing algorithm on the k-cube with the options ``route`` runs it with,
    checked when made.

    Parameters
    ----------
    k : int
        The dimension, ``[1, 20]``.
    message_bits : int
        M, ``[least_message_bits(k), 2^20]``.
    """

    k: int
    message_bits: int
    #: The name ``--algorithm`` gives it.
    name: ClassVar[str]
    #: Its hardware (``gen``, ``sim``, ``board``).
    circuit: ClassVar[type[HypercubeCircuit]]
    #: The options of ``route`` beside k and M it takes (:data:`_OWNERS` names the rest).
    options: ClassVar[tuple[str, ...]] = ()
    #: Whether it routes partial permutations only (a destination at most once).
    injective: ClassVar[bool] = False

    def __post_init__(self):
        check_message_bits(self.k, self.name, self.message_bits)

    @classmethod
    def least_message_bits(cls, k: int) -> int:
        """The shortest message the model takes (the baselines: 1, their header is
        counted apart)."""
        return 1

    @classmethod
    def from_options(cls, k, message_bits=None, **options):
        """The algorithm with ``route``'s options as a caller gives them (an option
        left out: its default), or one line naming an option it does not take."""
        k = check_dimension(k)
        M = default_message_bits(k) if message_bits is None else message_bits
        for name, value in options.items():
            if name not in cls.options and name in _OWNERS and value != _OWNERS[name][0]:
                raise ParameterError(f"{name} must be left out for {cls.name} "
                                     f"({_OWNERS[name][1]})")
        return cls(k, M, **{n: v for n, v in options.items() if n in cls.options})

    def report(self, src, dst) -> dict:
        """Route ``src[m] -> dst[m]`` and report it (module docstring)."""
        k, M = self.k, self.message_bits
        src, dst = check_routing(k, src, dst, injective=self.injective)
        doc = {"kind": "hypercube", "dimension": k, "nodes": 1 << k,
               "algorithm": self.name, "message_bits": M, "messages": int(src.size)}
        delivered = self._route(src, dst, doc)
        doc["delivered"] = int(np.count_nonzero(delivered))
        doc["lost"] = np.flatnonzero(~np.asarray(delivered, dtype=bool)).tolist()
        return doc

    def _route(self, src, dst, doc: dict) -> np.ndarray:
        """Route, add the algorithm's own fields to ``doc``; which messages arrived."""
        raise NotImplementedError


@dataclass(frozen=True)
class Alg1(Algorithm):
    """Kuszmaul's Algorithm 1 (:mod:`.alg1`) in ``order`` (None: ``0 .. k - 1``)."""

    order: tuple[int, ...] | None = None
    name = "alg1"
    circuit = Alg1Circuit
    options = ("order",)
    injective = True

    def __post_init__(self):
        super().__post_init__()
        if self.order is not None and alg1.check_order(self.k, self.order) != self.order:
            raise ParameterError(f"order must be a tuple of the dimensions 0..{self.k - 1} "
                                 f"or None, got {self.order!r}")

    @classmethod
    def from_options(cls, k, message_bits=None, **options):
        if options.get("order") is not None:
            options["order"] = alg1.check_order(k, options["order"])
        return super().from_options(k, message_bits, **options)

    @classmethod
    def least_message_bits(cls, k: int) -> int:
        return k + 1

    def _route(self, src, dst, doc: dict) -> np.ndarray:
        k = self.k
        res = alg1.route(k, src, dst, order=self.order)
        timing = alg1.pipeline_timing(k, self.message_bits)
        doc.update(order=list(res.order), bit_times=timing.total, steps=res.steps,
                   max_messages_per_node=int(res.max_messages_per_node),
                   collisions=[{"kind": c.kind, "step": c.step, "node": c.node,
                                "dimension": c.dimension, "messages": list(c.messages)}
                               for c in res.collisions],
                   final=_final(src, res.final),
                   register_bits_per_node=timing.register_bits_per_node)
        return res.delivered


@dataclass(frozen=True)
class Alg2(Algorithm):
    """Kuszmaul's Algorithm 2 (:mod:`.alg2`) under ``reading`` of Definition 5."""

    reading: str = "corrected"
    name = "alg2"
    circuit = Alg2Circuit
    options = ("reading",)
    injective = True

    @classmethod
    def least_message_bits(cls, k: int) -> int:
        return k

    def _route(self, src, dst, doc: dict) -> np.ndarray:
        k, M, reading = self.k, self.message_bits, self.reading
        res = alg2.route(k, src, dst, reading=reading, message_bits=M)
        sched = bitserial.schedule(k, M)
        timed = reading == "corrected"
        cycle = None
        if timed and k <= CYCLE_CHECK_DIMENSION:
            intact, same = bitserial.cross_check(k, src, dst, M, res)
            cycle = {"delivered": intact, "same_positions": same}
        doc.update(reading=reading, bit_times=sched.total if timed else None,
                   cycle_model=cycle,
                   bit_times_formula=ALG2_BIT_TIMES_FORMULA,
                   bit_times_per_iteration=sched.iteration_lengths() if timed else None,
                   steps=alg2_steps(k), max_messages_per_node=int(res.max_messages),
                   max_bits=int(res.max_bits), collisions=None,
                   operations=_operations(sched) if timed else dict(res.operations),
                   violations={v: bool(b) for v, b in res.violations.items()},
                   per_step=[_alg2_step(s, sched, timed) for s in res.steps],
                   final=_final(src, res.final))
        return res.delivered


def _alg2_step(s, sched, timed: bool) -> dict:
    """One step of Algorithm 2's report: its storage, and its start and bit-times in the
    cycle-exact schedule (the corrected reading's only)."""
    at = sched.step(s.iteration, s.number)
    return {"iteration": s.iteration, "step": s.number, "kind": s.kind,
            "start": at.start if timed else None, "bit_times": at.length if timed else None,
            "max_messages": s.max_messages, "max_bits": s.max_bits,
            "held_after": s.held_after, "crossings": s.crossings}


@dataclass(frozen=True)
class Ecube(Algorithm):
    """e-cube store-and-forward (:mod:`.store_forward`), link queues bounded to
    ``buffer`` messages (None: unbounded)."""

    buffer: int | None = None
    name = "ecube"
    circuit: ClassVar[type[HypercubeCircuit]] = EcubeCircuit
    options: ClassVar[tuple[str, ...]] = ("buffer",)

    def __post_init__(self):
        super().__post_init__()
        if self.buffer is not None:
            sf.check_buffer(self.buffer)

    def _route(self, src, dst, doc: dict) -> np.ndarray:
        run = sf.route(self.k, src, dst, algorithm=self.name, buffer=self.buffer,
                       **self._model_options())
        bt = run.bit_times(self.message_bits)
        doc.update(buffer=run.buffer, phased=run.barrier, stopped=run.stopped,
                   bit_times=None, header_bits=bt.header_bits,
                   store_forward_bit_times=bt.store_forward,
                   cut_through_bit_times=bt.cut_through, steps=run.steps,
                   max_messages_per_node=run.max_messages_per_node,
                   max_queue=run.max_queue, latency=run.latency_summary(),
                   collisions=None, final=_final(src, run.final))
        return run.delivery_step >= 0

    def _model_options(self) -> dict:
        return {}


@dataclass(frozen=True)
class Valiant(Ecube):
    """Valiant's two phases through intermediate nodes drawn from ``seed``, with a
    barrier between them if ``phased``."""

    phased: bool = False
    seed: int = 0
    name = "valiant"
    circuit = ValiantCircuit
    options = ("buffer", "phased", "seed")

    def __post_init__(self):
        super().__post_init__()
        check_seed(self.seed)

    def _model_options(self) -> dict:
        return {"barrier": self.phased, "seed": self.seed}


#: ``--algorithm`` of every verb: the name -> its class.
ALGORITHMS: dict[str, type[Algorithm]] = {cls.name: cls for cls in (Alg1, Alg2, Ecube,
                                                                      Valiant)}
#: The algorithms built in hardware (``fatnet gen|sim|board hypercube --algorithm``).
HARDWARE_ALGORITHMS = tuple(name for name, cls in ALGORITHMS.items() if cls.circuit)


def algorithm_class(name: str, hardware: bool = False) -> type[Algorithm]:
    """The class of algorithm ``name``, or one line naming the accepted names (those
    built in hardware if ``hardware``)."""
    names = HARDWARE_ALGORITHMS if hardware else tuple(ALGORITHMS)
    if name not in names:
        raise ParameterError(f"algorithm must be one of {', '.join(names)}"
                             + (" for gen and sim" if hardware else "") + f", got {name!r}")
    return ALGORITHMS[name]


def algorithm(k, name: str = "alg2", **options) -> Algorithm:
    """Algorithm ``name`` on the k-cube with ``route``'s options (``message_bits``,
    ``order``, ``reading``, ``buffer``, ``phased``, ``seed``), checked here, once."""
    return algorithm_class(name).from_options(k, **options)


def circuit(k, algorithm: str = "alg1", **options) -> HypercubeCircuit:
    """The hardware of ``algorithm`` on the k-cube, from the options of ``gen``,
    ``sim`` and ``board`` (``message_bits``, ``order``, ``buffer``, ``steps``, ``seed``,
    alg1's ``stuck_links``; None: left out), checked here, once
    (:meth:`.circuit.CircuitSpec.from_options`)."""
    return algorithm_class(algorithm, hardware=True).circuit.from_options(k, **options)


def check_message_bits(k: int, name: str, message_bits) -> int:
    """``M`` (None: ``2k``), checked against what algorithm ``name``'s model accepts: alg1
    ``[k + 1, 2**20]`` (``k`` address bits and a payload), alg2 ``[k, 2**20]``, the
    baselines ``[1, 2**20]``."""
    k = check_dimension(k)
    if message_bits is None:
        return default_message_bits(k)
    low = algorithm_class(name).least_message_bits(k)
    if not is_integer(message_bits) \
            or not (low <= int(message_bits) <= MAX_MESSAGE_BITS):
        raise ParameterError(f"message_bits must be an integer in [{low}, {MAX_MESSAGE_BITS}] "
                             f"for {name}, got {message_bits!r}")
    return int(message_bits)


def route_report(k, src, dst, algorithm: str = "alg2", *, message_bits=None, buffer=None,
                 phased: bool = False, seed=0, reading: str = "corrected",
                 order=None) -> dict:
    """Route ``src[m] -> dst[m]`` on the k-cube by ``algorithm`` and report it (module
    docstring). Bad input (dimension, nodes, a map that is not a partial permutation for
    alg1/alg2, an option the algorithm does not take) is a one-line ParameterError."""
    made = algorithm_class(algorithm).from_options(
        k, message_bits, buffer=buffer, phased=phased, seed=seed, reading=reading,
        order=order)
    return made.report(src, dst)


def deadlock_report(k, algorithm: str, *, buffer=None, phased: bool = False,
                    straight_on: bool = False) -> dict:
    """The deadlock check of a store-and-forward configuration as plain data, with its
    one-line ``verdict`` (:mod:`.deadlock`: the channel-dependence graph, acyclic or a
    cycle): ``algorithm`` ``ecube`` or ``valiant``, link queues of ``buffer`` messages
    (None: unbounded), Valiant with a barrier (``phased``) or ``straight_on`` from its
    intermediate node into its phase-2 queue, as the hardware's router (the model's
    ``intermediate_buffer=False``)."""
    for name, value in (("phased", phased), ("straight_on", straight_on)):
        if value and algorithm != "valiant":
            raise ParameterError(f"{name} must be left out for {algorithm} (a Valiant "
                                 f"option)")
    if phased and straight_on:
        raise ParameterError("straight_on must be left out with phased (the barrier "
                             "holds every message at its intermediate node)")
    return check_deadlock(k, algorithm, buffer=buffer, barrier=phased,
                          intermediate_buffer=not straight_on).summary()


def info_report(k, message_bits=None, *, algorithm=None, buffer=None, phased: bool = False,
                straight_on: bool = False) -> dict:
    """The k-cube's size, the per-node hardware the models imply and the bit-time costs
    known at ``M`` message bits (default ``2k``); with a store-and-forward ``algorithm``
    (``ecube``, ``valiant``), ``deadlock``: the deadlock check of its configuration
    (:func:`deadlock_report`; None without one)."""
    net = Hypercube(k)
    k = net.k
    M = check_message_bits(k, "alg1", message_bits)
    if algorithm is None:
        given = [(name, needs) for name, value, needs in (
            ("buffer", buffer is not None, "ecube or valiant"),
            ("phased", phased, "valiant"), ("straight_on", straight_on, "valiant"))
            if value]
        if given:
            raise ParameterError(f"{given[0][0]} needs algorithm {given[0][1]} (the "
                                 f"deadlock check of a store-and-forward configuration)")
        deadlock = None
    else:
        deadlock = deadlock_report(k, algorithm, buffer=buffer, phased=phased,
                                   straight_on=straight_on)
    pipe = alg1.pipeline_timing(k, M)
    enum = enumeration_timing(k)
    sched = bitserial.schedule(k, M)
    return {
        "kind": "hypercube", "dimension": k, "nodes": net.nodes, "links": net.links,
        "directed_links": net.directed_links, "message_bits": M, "deadlock": deadlock,
        "per_node": {
            "dimension_routers": k,
            "router_register_bits": pipe.register_bits_per_node,
            "enumeration_serial_adders": enum.serial_adders_per_node,
            "enumeration_carry_flip_flops": enum.serial_adders_per_node,
            "alg1_buffer_messages": 1,
            "alg2_buffer_messages": 2,
            # Algorithm 2's storage accounting (alg2.Step.max_bits): at most two resident
            # messages and one k-bit address packet with its k-bit header (Step 5)
            "alg2_buffer_bits": 2 * M + 2 * k,
            # the cycle-exact model's registers: two M-bit message buffers and the hole
            # address a relay receives in Step 5 (at most k - 1 free bits)
            "alg2_message_buffer_bits": 2 * M,
            "alg2_hole_address_bits": k - 1,
            "link_queues": k,
        },
        "bit_times": {
            "alg1_pipeline": pipe.total,
            "alg1_pipeline_formula": "M + k + 1",
            "enumeration": enum.total,
            "enumeration_formula": "2k + 1",
            "alg2": sched.total,
            "alg2_formula": ALG2_BIT_TIMES_FORMULA,
            "alg2_per_iteration": sched.iteration_lengths(),
            # Sec. IV: a stage per iteration, a batch every iteration-0 length
            "alg2_batches_period": max(sched.iteration_lengths()),
            "alg2_batches_buffer_bits": 2 * M * k,
            "ecube_lone_message_store_forward": k * (M + k),
            "ecube_lone_message_cut_through": (k - 1) + M + k,
        },
    }
