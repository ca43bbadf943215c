"""The k-cube's hardware: Algorithm 1's router chain at every node, wired as a k-cube,
built from the golden :class:`~fatnet.golden.hypercube.circuit.HypercubeCircuit`.

Node ``x`` has ``k`` :class:`~.router.DimensionRouter` s chained in the order
``order[0], order[1], ...``: its ``send`` wire feeds router 0, router ``r``'s register
feeds router ``r + 1``, and router ``k - 1``'s register is the node's ``recv`` wire.
Router ``r`` of ``x`` and router ``r`` of ``x ^ 2**order[r]`` are joined by their ``xo`` and
``xi`` channels (the wires of dimension ``order[r]``). The golden model decides nothing
here that the circuit does not: the order and the cycle length come from it, and the
behaviour is its :class:`~fatnet.golden.hypercube.bitserial.RouterChain`, bit-time for
bit-time.

A stuck link (``--stuck-link RANK:NODE:WIRE:0|1``, the golden ``stuck_wires``) holds
rank ``RANK``'s input at node ``NODE`` at its value whatever rank ``RANK - 1``'s register
drives; its acknowledgment passes back as it is.

A collision makes the router's ``lost`` rise; the top keeps, per router, a status
register ``collision_<r>_<x>`` (not a port) that is set by it and cleared by the start
strobe, so a testbench can read where messages were lost.
"""

from __future__ import annotations

from amaranth import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from ...golden.errors import ParameterError
from ...golden.hypercube.circuit import Alg1Circuit, check_buildable
from ..controller import add_cycle_controller, controller_members
from ..signatures import EndpointSignature, connect_held
from .router import DimensionRouter

__all__ = ["HypercubeNetworkHW", "network_signature", "router_key"]


def network_signature(net) -> wiring.Signature:
    """The top's signature: the controller, then ``node``, one
    :class:`~fatnet.hdl.signatures.EndpointSignature` per node (one wire each way)."""
    return wiring.Signature({
        **controller_members(net.cycle_length),
        "node": Out(EndpointSignature(1)).array(net.nodes),
    })


def router_key(net, rank: int, node: int) -> tuple:
    """What makes two routers identical: the node's bit of the rank's dimension."""
    return ("router", bool((node >> net.order[rank]) & 1))


class HypercubeNetworkHW(wiring.Component):
    """Algorithm 1's router chains of every node of the k-cube, and the delivery-cycle
    controller.

    Parameters
    ----------
    net : fatnet.golden.hypercube.circuit.Alg1Circuit
        Algorithm 1's circuit (else :class:`~fatnet.golden.errors.ParameterError`, a
        ``ValueError``).
    library : fatnet.hdl.modules.ModuleLibrary, optional
        For generation: the two distinct routers are emitted once each.

    Members
    -------
    start : ``In(1)``
        Strobe: the next clock cycle is bit-time 0 of a new delivery cycle.
    bit_time : ``Out(range(T + 1))``
        Bit-time within the delivery cycle (saturates at the cycle length T).
    busy : ``Out(1)``
        High from bit-time 0 until the cycle length has passed.
    node : array of ``EndpointSignature(1)``
        Node ``x``: ``send`` enters its router 0, ``recv`` is its router ``k - 1``'s
        register.

    Attributes
    ----------
    collision : list of list of Signal
        ``collision[r][x]``: node ``x``'s rank-``r`` router lost a claim this cycle
        (``collision_<r>_<x>`` in the Verilog; not a port).
    """

    def __new__(cls, net, *, library=None):
        check_buildable(net)  # refused before the component exists
        if not isinstance(net, Alg1Circuit):
            raise ParameterError(f"algorithm must be alg1 for Algorithm 1's router chains "
                                 f"(the top() hook picks the network of {net.algorithm!r})")
        return super().__new__(cls, src_loc_at=1)

    def __init__(self, net, *, library=None):
        self._net = net
        self._library = library
        super().__init__(network_signature(net))
        self.collision = [[Signal(name=f"collision_{r}_{x}") for x in range(net.nodes)]
                          for r in range(net.k)]

    def _router(self, rank: int, node: int):
        key = router_key(self._net, rank, node)
        if self._library is None:
            return DimensionRouter(key[1])
        return self._library.instance(key, lambda: DimensionRouter(key[1]), "router")

    def elaborate(self, platform):
        m = Module()
        net = self._net
        k, N = net.k, net.nodes
        add_cycle_controller(m, self.start, self.bit_time, self.busy, net.cycle_length)
        rt = {}
        for r in range(k):
            for x in range(N):
                rt[r, x] = m.submodules[f"rt_{r}_{x}"] = self._router(r, x)
        m.d.comb += Cat(rt[key].clear for key in rt).eq(self.start.replicate(len(rt)))
        held: dict = {}          # (rank, node) -> {wire: value} of its stuck input link
        for (_, rank, node, w), v in net.stuck_wires.items():
            held.setdefault((rank, node), {})[w] = v
        for x in range(N):
            node = self.node[x]
            m.d.comb += [rt[0, x].i.data.eq(node.send), node.send_ack.eq(rt[0, x].i.ack),
                         node.recv.eq(rt[k - 1, x].o.data),
                         rt[k - 1, x].o.ack.eq(node.recv_ack)]
            for r in range(1, k):   # a stuck link (--stuck-link) holds what rank r sees
                connect_held(m, rt[r - 1, x].o, rt[r, x].i, held.get((r, x), {}))
        for r in range(k):
            for x in range(N):
                wiring.connect(m, rt[r, x].xo, rt[r, x ^ (1 << net.order[r])].xi)
        flags = [self.collision[r][x] for r in range(k) for x in range(N)]
        lost = [rt[r, x].lost for r in range(k) for x in range(N)]
        with m.If(self.start):
            m.d.sync += Cat(flags).eq(0)
        with m.Else():
            m.d.sync += Cat(flags).eq(Cat(flags) | Cat(lost))
        return m
