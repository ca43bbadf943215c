"""The hypercube family's command-line data: one routing's report and the k-cube's
costs, as plain dicts (``fatnet route|info hypercube --json`` prints them).

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

``lost`` lists the messages not delivered (alg1: every message in a collision, although
the model carries it on to its destination; ``final`` says where each message ended).
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from . import alg1, alg2, bitserial
from . import store_forward as sf
from .cube import Hypercube, check_dimension, check_routing
from .enumeration import enumeration_timing

__all__ = ["ALGORITHMS", "default_message_bits", "check_message_bits", "route_report",
           "alg2_steps", "info_report", "ALG2_BIT_TIMES_FORMULA"]

#: ``--algorithm`` choices.
ALGORITHMS = ("alg1", "alg2", "ecube", "valiant")

#: Algorithm 2's bit-times in the cycle-exact model's fixed schedule.
ALG2_BIT_TIMES_FORMULA = "5k^2 + (3M + 1)k - 2M - 5"

MAX_MESSAGE_BITS = 1 << 20
#: ``route`` also runs Algorithm 2 bit by bit (:func:`.bitserial.run_alg2`) up to this k
#: (about 0.5 s at k = 10; beyond, the step-level model alone).
CYCLE_CHECK_DIMENSION = 10


def default_message_bits(k: int) -> int:
    """``M = 2k`` (the issue's comparison point)."""
    return 2 * int(k)


def check_message_bits(k: int, algorithm: str, message_bits) -> int:
    """``M`` (None: ``2k``), checked against what ``algorithm``'s model accepts: alg1
    ``[k + 1, 2**20]`` (``k`` address bits and a payload), alg2 ``[k, 2**20]``, the
    baselines ``[1, 2**20]``."""
    k = check_dimension(k)
    if message_bits is None:
        return default_message_bits(k)
    low = {"alg1": k + 1, "alg2": k}.get(algorithm, 1)
    if isinstance(message_bits, bool) or not isinstance(message_bits, (int, np.integer)) \
            or not (low <= int(message_bits) <= MAX_MESSAGE_BITS):
        raise ParameterError(f"message_bits must be an integer in [{low}, {MAX_MESSAGE_BITS}] "
                             f"for {algorithm}, got {message_bits!r}")
    return int(message_bits)


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


def route_report(k, src, dst, algorithm: str = "alg2", *, message_bits=None, buffer=None,
                 phased: bool = False, seed=0, reading: str = "corrected",
                 order=None) -> dict:
    """Route ``src[m] -> dst[m]`` on the k-cube by ``algorithm`` and report it (module
    docstring). Bad input (dimension, nodes, a map that is not a partial permutation for
    alg1/alg2, an option the algorithm does not take) is a one-line ParameterError."""
    k = check_dimension(k)
    if algorithm not in ALGORITHMS:
        raise ParameterError(f"algorithm must be one of {', '.join(ALGORITHMS)}, "
                             f"got {algorithm!r}")
    M = check_message_bits(k, algorithm, message_bits)
    kernel = algorithm in ("alg1", "alg2")
    if kernel and buffer is not None:
        raise ParameterError(f"buffer must be left out for {algorithm} (a store-and-forward "
                             f"option: ecube, valiant)")
    if phased and algorithm != "valiant":
        raise ParameterError(f"phased must be left out for {algorithm} (a Valiant option)")
    src, dst = check_routing(k, src, dst, injective=kernel)
    doc = {"kind": "hypercube", "dimension": k, "nodes": 1 << k, "algorithm": algorithm,
           "message_bits": M, "messages": int(src.size)}
    if algorithm == "alg1":
        res = alg1.route(k, src, dst, order=order)
        timing = alg1.pipeline_timing(k, M)
        delivered = res.delivered
        doc.update(order=list(res.order), bit_times=timing.total, steps=res.steps,
                   max_messages_per_node=int(res.max_messages_per_node),
                   collisions=[{"kind": c.kind, "step": c.step, "node": c.node,
                                "dimension": c.dimension, "messages": list(c.messages)}
                               for c in res.collisions],
                   final=_final(src, res.final),
                   register_bits_per_node=timing.register_bits_per_node)
    elif algorithm == "alg2":
        res = alg2.route(k, src, dst, reading=reading, message_bits=M)
        delivered = res.delivered
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
                   per_step=[{"iteration": s.iteration, "step": s.number, "kind": s.kind,
                              "start": sched.step(s.iteration, s.number).start
                              if timed else None,
                              "bit_times": sched.step(s.iteration, s.number).length
                              if timed else None,
                              "max_messages": s.max_messages, "max_bits": s.max_bits,
                              "held_after": s.held_after, "crossings": s.crossings}
                             for s in res.steps],
                   final=_final(src, res.final))
    else:
        run = sf.route(k, src, dst, algorithm=algorithm, buffer=buffer, barrier=phased,
                       seed=seed)
        bt = run.bit_times(M)
        delivered = run.delivery_step >= 0
        doc.update(buffer=run.buffer, phased=run.barrier, stopped=run.stopped,
                   bit_times=None, header_bits=bt.header_bits,
                   store_forward_bit_times=bt.store_forward,
                   cut_through_bit_times=bt.cut_through, steps=run.steps,
                   max_messages_per_node=run.max_messages_per_node,
                   max_queue=run.max_queue, latency=run.latency_summary(),
                   collisions=None, final=_final(src, run.final))
    doc["delivered"] = int(np.count_nonzero(delivered))
    doc["lost"] = np.flatnonzero(~np.asarray(delivered, dtype=bool)).tolist()
    return doc


def info_report(k, message_bits=None) -> dict:
    """The k-cube's size, the per-node hardware the models imply and the bit-time costs
    known at ``M`` message bits (default ``2k``)."""
    net = Hypercube(k)
    k = net.k
    M = check_message_bits(k, "alg1", message_bits)
    pipe = alg1.pipeline_timing(k, M)
    enum = enumeration_timing(k)
    sched = bitserial.schedule(k, M)
    return {
        "kind": "hypercube", "dimension": k, "nodes": net.nodes, "links": net.links,
        "directed_links": net.directed_links, "message_bits": M,
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
