"""Plain functions behind the command line for the fat-tree family.

The command line (options, printing, exit statuses) is :mod:`fatnet.cli.fattree`; these
functions take plain values, raise :class:`fatnet.golden.errors.ParameterError` on bad
input and return the golden network or plain data (JSON-ready dicts).

* :func:`spec_from_options` -> :class:`FatTreeSpec` (one of the three capacity profiles);
* :func:`build` -> :class:`FatTreeNetwork`, the one structure the hardware is built from;
* :func:`schedule_report` -> the off-line schedule of a message set;
* :func:`info` -> capacities, concentrators and component counts.
"""

from __future__ import annotations

from ..messages import MessageSet
from .network import FatTreeNetwork
from .spec import FatTreeSpec

__all__ = ["spec_from_options", "build", "schedule_report", "info"]


def spec_from_options(leaves: int, root_capacity: int | None = None,
                      capacity: int | None = None, capacities=None, **opts) -> FatTreeSpec:
    """The spec of one capacity profile: universal with root capacity ``root_capacity``,
    else constant ``capacity``, else the explicit per-level ``capacities`` (root first);
    ``opts`` (seed, concentrator, mode, payload_bits) go to :class:`FatTreeSpec`."""
    if root_capacity is not None:
        return FatTreeSpec.universal(leaves, root_capacity, **opts)
    if capacity is not None:
        return FatTreeSpec.constant(leaves, capacity, **opts)
    return FatTreeSpec.explicit(leaves, capacities, **opts)


def build(spec: FatTreeSpec) -> FatTreeNetwork:
    """The golden network of a spec: the one structure the hardware is built from."""
    return FatTreeNetwork(spec)


def schedule_report(spec: FatTreeSpec, ms: MessageSet, method: str = "best") -> dict:
    """The off-line schedule of ``ms`` on the tree of ``spec``: load factor, lower bound
    ceil(lambda) and the messages of every cycle as ``[src, dst]`` pairs."""
    from .schedule import lower_bound, schedule
    from .topology import FatTree
    tree = FatTree(spec)
    cycles = schedule(tree, ms.src, ms.dst, method=method)
    return {
        "leaves": spec.leaves,
        "capacities": list(spec.capacities),
        "load_factor": tree.load_factor(ms.src, ms.dst),
        "lower_bound": lower_bound(tree, ms.src, ms.dst),
        "cycles": [ms.pairs(sorted(int(i) for i in c)) for c in cycles],
    }


def info(spec: FatTreeSpec) -> dict:
    """Capacities (declared and effective per level), delivery-cycle length, every
    concentrator shape's cascade and the component counts of the network of ``spec``."""
    from .concentrator import cascade_summary
    net = FatTreeNetwork(spec)
    return {
        "spec": spec.to_dict(),
        "levels": spec.levels,
        "capacities": list(spec.capacities),
        "effective_capacities": [int(net.effective_cap[:, (1 << k) - 1].min())
                                 for k in range(spec.levels + 1)],
        "cycle_length_bits": net.cycle_length,
        "concentrators": [cascade_summary(c) for _, c in sorted(net.shapes.items())],
        "components": net.component_counts(),
    }
