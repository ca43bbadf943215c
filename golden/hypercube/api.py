"""The hypercube family's command-line data: one routing's report and the k-cube's
costs, as plain dicts (``fatnet route|info hypercube --json`` prints them).

:func:`route_report` runs one of :data:`ALGORITHMS` on a routing and returns the fields
every algorithm shares (``kind``, ``dimension``, ``algorithm``, ``messages``,
``delivered``, ``lost``, ``final``, ``bit_times``, ``steps``, ``max_messages_per_node``,
``collisions``, ``message_bits``) and each algorithm's own:

* ``alg1`` (:mod:`.alg1`): ``collisions``, a list of ``{kind, step, node, dimension,
  messages}``; ``bit_times`` the pipelined router chain's total for an ``M``-bit message
  (``pipeline_timing(k, M).total = M + k``; ``M`` counts the ``k`` address bits);
  ``steps = k``.
* ``alg2`` (:mod:`.alg2`): ``operations`` (cross, enumerate, pack, rendezvous),
  ``reading``, ``violations``, ``max_bits`` and ``per_step`` (storage per step);
  ``steps`` the dimension steps in sequence (``k`` iterations of one crossing and three
  Algorithm 1 passes of ``k`` dimensions: ``k (3k + 1)``; the enumerations are not
  counted); ``bit_times`` is ``null``: the cycle-exact bit-serial model (issue 15,
  section 5) is not built yet.
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
from . import alg1, alg2
from . import store_forward as sf
from .cube import Hypercube, check_dimension, check_routing
from .enumeration import enumeration_timing

__all__ = ["ALGORITHMS", "default_message_bits", "check_message_bits", "route_report",
           "alg2_steps", "info_report", "ALG2_BIT_TIMES_NOTE"]

#: ``--algorithm`` choices.
ALGORITHMS = ("alg1", "alg2", "ecube", "valiant")

#: Why Algorithm 2 has no bit-time figure yet.
ALG2_BIT_TIMES_NOTE = ("Algorithm 2's bit-times come from the cycle-exact bit-serial "
                       "model (issue 15, section 5), not built yet: null")

MAX_MESSAGE_BITS = 1 << 20


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
        raise ParameterError(f"message-bits must be an integer in [{low}, {MAX_MESSAGE_BITS}] "
                             f"for {algorithm}, got {message_bits!r}")
    return int(message_bits)


def alg2_steps(k: int) -> int:
    """Algorithm 2's dimension steps in sequence: ``k`` iterations of one crossing and
    three Algorithm 1 passes (Steps 3, 5, 6) of ``k`` dimensions each."""
    return int(k) * (3 * int(k) + 1)


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
        doc.update(reading=reading, bit_times=None, bit_times_note=ALG2_BIT_TIMES_NOTE,
                   steps=alg2_steps(k), max_messages_per_node=int(res.max_messages),
                   max_bits=int(res.max_bits), collisions=None,
                   operations=dict(res.operations),
                   violations={v: bool(b) for v, b in res.violations.items()},
                   per_step=[{"iteration": s.iteration, "step": s.number, "kind": s.kind,
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
            "link_queues": k,
        },
        "bit_times": {
            "alg1_pipeline": pipe.total,
            "alg1_pipeline_formula": "M + k",
            "enumeration": enum.total,
            "enumeration_formula": "2k + 1",
            "alg2": None,
            "alg2_note": ALG2_BIT_TIMES_NOTE,
            "ecube_lone_message_store_forward": k * (M + k),
            "ecube_lone_message_cut_through": (k - 1) + M + k,
        },
    }
