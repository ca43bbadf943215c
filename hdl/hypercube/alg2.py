"""Algorithm 2's hardware (Kuszmaul 1990, Sec. III): any partial permutation of the k-cube,
as the golden cycle-exact model :func:`fatnet.golden.hypercube.bitserial.run_alg2` runs it,
bit-time for bit-time.

**A global sequencer, broadcast** (:class:`Alg2NetworkHW`). The schedule is fixed: it
depends on k and M only (:func:`~fatnet.golden.hypercube.bitserial.schedule`), so one
counter in the top (the phase and the bit-time in it) broadcast to every node replaces a
sequencer per node: smaller (the nodes keep no step counters) and the same behaviour.
Everything the nodes read is decoded from the next phase and bit-time into registers, so
the broadcast leaves registers and no decode or adder lies before a node's logic. The
phases of one delivery cycle: *inject* (M + 1 bit-times: node x shifts ``1`` and its
message, destination then data, from ``node__<x>__send`` into buffer A), every non-empty
step of every iteration (Steps 1-6), *deliver* (M + 1: every node holding a message drives
``1`` and its M bits on ``recv``; ``send_ack`` is high from the deliver phase's first
bit-time at every node that injected a message: Theorem 3 delivers every message of a
partial permutation, so nothing is retried).

**The node** (:class:`Alg2Node`, one module for every node: its address is an input):
two M-bit message buffers A and B (shift registers, MSB out first); one
:class:`~.router.DimensionRouter` per dimension, chained in dimension order (iteration i
injects at router i + 1, so its passes cross the free dimensions i + 1 .. k - 1 only); one
:class:`~.enumerator.Enumerator` per dimension likewise; the Step-1 wire of every
dimension; the double and hole flags, the rank register, and the relay's flags. The
routers are cleared outside Steps 3, 5 and 6, so Step 6 finds Step 5's circuits held and
runs them backwards on the reverse wires, one register per router.

Which buffer: a single message is wherever it is valid; Step 1 sends from it and receives
into the other (into A when the node has none). A double sends the buffer that arrived in
Step 1 and receives a relayed message into the same one (it empties as it sends: the
message out of the MSB end in bit-times f + 1 .. f + M, the one in at the LSB end in
2f + 1 .. 2f + M, M >= f + 1); any other relay receives into its free buffer (B after A);
a hole receives Step 6's message into A (emptied by then if it relayed from A).
"""

from __future__ import annotations

from types import SimpleNamespace

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..controller import add_cycle_controller
from ..logic import equals as eq
from ..signatures import ChannelSignature, EndpointSignature
from .network import network_signature
from .enumerator import Enumerator
from .router import DimensionRouter

__all__ = ["PHASES", "Alg2Node", "Alg2NetworkHW", "node_signature", "counter_width"]

#: The sequencer's phase kinds (the node's one-hot inputs of the same names).
PHASES = ("inject", "cross", "enum2", "pack3", "enum4", "pack5", "rdv", "deliver")


def counter_width(k: int, t_max: int) -> int:
    """Bits of the sequencer's ``it``, ``f`` and ``t`` and of every sum a node forms from
    them (2f + M, k + f, ...): one width, so that every comparison is between equal
    widths (Verilator's -Wall is clean without width waivers)."""
    return max(t_max, 2 * k).bit_length() + 1


def _pick(bits, idx, offset=0, shift=0):
    """``bits[idx - shift + offset]`` for a W-bit index (an OR of ANDs)."""
    return Cat(bits[j + offset] & eq(idx, j + shift) for j in range(len(bits) - offset)).any()


def node_signature(k: int, t_max: int) -> wiring.Signature:
    """The signature of :class:`Alg2Node` (without building one)."""
    w = counter_width(k, t_max)
    return wiring.Signature({
        **{p: In(1) for p in PHASES},
        "it": In(w), "f": In(w), "t": In(w), "msg": In(w),
        "f_m": In(w), "f_2": In(w), "f2_m": In(w), "it_t": In(w), "t_f": In(w),
        "addr": In(k),
        "port": Out(EndpointSignature(1)),
        "cx_out": Out(k), "cx_in": In(k),
        "en_out": Out(k), "en_in": In(k),
        "xo": Out(ChannelSignature(1)).array(k),
        "xi": In(ChannelSignature(1)).array(k),
    })


class Alg2Node(wiring.Component):
    """One node of Algorithm 2's network (module docstring).

    Parameters
    ----------
    k : int
        The cube's dimension (>= 1).
    message_bits : int
        M (>= k): the destination's k bits, then the data.
    t_max : int
        The longest phase's last bit-time (the width of ``t``).

    Members
    -------
    inject, cross, enum2, pack3, enum4, pack5, rdv, deliver : ``In(1)``
        The sequencer's phase (one-hot).
    it, f : ``In(W)``
        The iteration and its free dimensions ``k - 1 - it`` (``W``:
        :func:`counter_width`).
    t : ``In(W)``
        The bit-time within the phase.
    msg : ``In(W)``
        M, wired as a constant by the top (an input, so that every comparison with it
        is between two W-bit signals).
    f_m, f_2, f2_m, it_t, t_f : ``In(W)``
        f + M, 2f, 2f + M, it + t and t - f (mod 2^W), registered in the sequencer
        beside it, f and t, so that no adder lies between its registers and a node's
        comparisons.
    addr : ``In(k)``
        The node's address.
    port : ``Out(EndpointSignature(1))``
        The node's processor port (``send``, ``send_ack``, ``recv``, ``recv_ack``).
    cx_out, cx_in : ``Out(k)``, ``In(k)``
        Step 1's wire of every dimension, to and from the neighbour across it.
    en_out, en_in : ``Out(k)``, ``In(k)``
        Per dimension, the enumeration's ``t`` to and from the neighbour across it.
    xo, xi : arrays of ``ChannelSignature(1)``
        Per dimension, the router's wires to and from the neighbour's router.
    """

    def __new__(cls, k: int, message_bits: int, t_max: int):
        # refused before the component exists, so Amaranth has no unused one to report
        if not isinstance(k, int) or k < 1 or not isinstance(message_bits, int) \
                or message_bits < k:
            raise ValueError(f"k must be >= 1 and message_bits >= k, got {k!r}, "
                             f"{message_bits!r}")
        return super().__new__(cls, src_loc_at=1)

    def __init__(self, k: int, message_bits: int, t_max: int):
        self._k, self._M, self._t_max = k, message_bits, t_max
        super().__init__(node_signature(k, t_max))
        #: the two message buffers and their valid bits (not ports: testbenches read them)
        self.buf_a = Signal(message_bits, name="buf_a")
        self.buf_b = Signal(message_bits, name="buf_b")
        self.valid_a = Signal(name="valid_a")
        self.valid_b = Signal(name="valid_b")

    def elaborate(self, platform):
        m = Module()
        w = self._registers()
        self._routers(m, w)
        self._buffer_wires(m, w)
        self._phase_logic(m, w)
        self._events(m, w)
        return m

    def _registers(self) -> SimpleNamespace:
        """The node's flags and the sequencer's values it reads (every comparison is
        between two W-bit values, or an equality written as an XOR with a W-bit constant
        and a reduction: Yosys prints a constant operand of an arithmetic or a
        comparison at its own, smaller width, which Verilator's -Wall reports; M comes
        in as the input msg for the same reason)."""
        return SimpleNamespace(
            t_zero=~self.t.any(),
            injected=Signal(name="injected"),
            sending=Signal(name="sending"),        # Step 1: this node's message crosses
            rcv=Signal(name="rcv"),                # Step 1: a message arrives
            arrived_b=Signal(name="arrived_b"),    # Step 1: the arrived message is in B
            double=Signal(name="double"),
            hole=Signal(name="hole"),
            rank=Signal(self._k, name="rank"),     # Steps 2, 4: the offset, LSB first
            got=Signal(name="got"),                # Step 3: this node is a relay
            relay_b=Signal(name="relay_b"),        # the relayed message is in B
            hrx=Signal(name="hrx"))                # Step 6: a message comes back to the hole

    def _routers(self, m, w: SimpleNamespace) -> None:
        """The routers and enumeration cells, dimension d at rank d; iteration it
        injects at rank it + 1 (the first free dimension), ranks above take the rank
        below, ranks at or below it are idle."""
        k, it, addr = self._k, self.it, self.addr
        w.rt = rt = [DimensionRouter(None) for _ in range(k)]
        w.en = en = [Enumerator(None) for _ in range(k)]
        for d in range(k):
            m.submodules[f"rt_{d}"] = rt[d]
            m.submodules[f"en_{d}"] = en[d]
        passing = self.pack3 | self.pack5 | self.rdv
        w.inj = Signal(name="inj")                # the stream this node injects in a pass
        w.rdv_out = Signal(name="rdv_out")        # Step 6: the relay drives it backwards
        t0 = Signal(name="t0")
        flag = Signal(name="flag")
        m.d.comb += [flag.eq(Mux(self.enum2, w.double, w.hole)), t0.eq(w.t_zero & flag)]
        inj_ack = []
        for d in range(k):
            start_here = eq(it, d - 1) if d else Const(0, 1)
            above = Cat(eq(it, j) for j in range(d - 1)).any() if d >= 2 else Const(0, 1)
            m.d.comb += [rt[d].high.eq(addr[d]), rt[d].clear.eq(~passing),
                         en[d].high.eq(addr[d]), en[d].fixed.eq(0)]
            prev_data = rt[d - 1].o.data if d else Const(0, 1)
            m.d.comb += rt[d].i.data.eq(Mux(start_here, w.inj, Mux(above, prev_data, 0)))
            if d:
                m.d.comb += rt[d - 1].o.ack.eq(rt[d].i.ack)
            inj_ack.append(start_here & rt[d].i.ack)
            wiring.connect(m, wiring.flipped(self.xo[d]), rt[d].xo)
            wiring.connect(m, wiring.flipped(self.xi[d]), rt[d].xi)
            self._chain_enumerator(m, w, d, start_here, above, t0)
        m.d.comb += rt[k - 1].o.ack.eq(w.rdv_out)
        w.rx_data = rt[k - 1].o.data
        w.back = Signal(name="back")
        m.d.comb += w.back.eq(Cat(inj_ack).any())

    def _chain_enumerator(self, m, w: SimpleNamespace, d: int, start_here, above,
                          t0) -> None:
        """Dimension d's enumeration cell: this node's inputs where the iteration starts,
        the cell below's above it, 0 at or below it."""
        en = w.en
        if d:
            prev = (en[d - 1].t, en[d - 1].o, en[d - 1].first_out)
        else:
            prev = (Const(0, 1), Const(0, 1), Const(0, 1))
        for port, mine, up in ((en[d].t_in, t0, prev[0]),
                               (en[d].o_in, Const(0, 1), prev[1]),
                               (en[d].first, w.t_zero, prev[2])):
            m.d.comb += port.eq(Mux(start_here, mine, Mux(above, up, 0)))
        m.d.comb += [self.en_out[d].eq(en[d].t_in), en[d].t_across.eq(self.en_in[d])]

    def _buffer_wires(self, m, w: SimpleNamespace) -> None:
        """The buffers' shift enables and inputs (the MSB leaves first), and the bits the
        phases read."""
        k, M, it, addr = self._k, self._M, self.it, self.addr
        A, B, va, vb = self.buf_a, self.buf_b, self.valid_a, self.valid_b
        w.sh_a, w.sh_b = Signal(name="sh_a"), Signal(name="sh_b")
        w.in_a, w.in_b = Signal(name="in_a"), Signal(name="in_b")
        w.src_b = Signal(name="src_b")            # Step 1: the single message is in B
        w.msb_src = Signal(name="msb_src")
        dst_bit = Signal(name="dst_bit")
        w.want = Signal(name="want")
        m.d.comb += [w.src_b.eq(~va & vb), w.msb_src.eq(Mux(w.src_b, B[M - 1], A[M - 1])),
                     dst_bit.eq(_pick(Mux(w.src_b, B, A), it, M - k)),
                     w.want.eq((va | vb) & (dst_bit ^ _pick(addr, it)))]
        w.rx3_b = Signal(name="rx3_b")            # Step 3: the receiving buffer is B
        m.d.comb += w.rx3_b.eq(Mux(w.double, w.arrived_b, va))
        w.msb_send3 = Mux(w.arrived_b, B[M - 1], A[M - 1])
        w.msb_relay = Mux(w.relay_b, B[M - 1], A[M - 1])
        w.cx_val = Signal(name="cx_val")
        w.in1 = Signal(name="in1")
        m.d.comb += w.in1.eq(_pick(self.cx_in, it))
        w.address = Signal(name="address")        # the pass's relative-address bit at t
        # the pass's address bit at bit-time t (1 .. f): node bit it + t xor rank bit t - 1
        m.d.comb += w.address.eq(_pick(addr, self.it_t) ^ _pick(w.rank, self.t, shift=1))
        # Step 5's payload at bit-time t (f + 1 .. 2f): node bit k + f - t, i.e. t - f = k - j
        w.index_bit = Cat(addr[j] & eq(self.t_f, k - j) for j in range(k)).any()

    def _phase_logic(self, m, w: SimpleNamespace) -> None:
        """What each phase drives and shifts (inject, Steps 1, 3, 5, 6, deliver)."""
        t, f, p, t_zero = self.t, self.f, self.port, w.t_zero
        fM, f2, f2M = self.f_m, self.f_2, self.f2_m
        A, B, va = self.buf_a, self.buf_b, self.valid_a
        sh_a, sh_b, in_a, in_b = w.sh_a, w.sh_b, w.in_a, w.in_b
        with m.If(self.inject):
            m.d.comb += [sh_a.eq(~t_zero), in_a.eq(p.send)]
        with m.Elif(self.cross):
            m.d.comb += w.cx_val.eq(Mux(t_zero, w.want, w.sending & w.msb_src))
            with m.If(~t_zero):
                # the source buffer shifts out, the other one (A when none) shifts in
                sending, rcv, src_b = w.sending, w.rcv, w.src_b
                m.d.comb += [sh_a.eq((sending & ~src_b) | (rcv & ~va)),
                             sh_b.eq((sending & src_b) | (rcv & va)),
                             in_a.eq(rcv & ~va & w.in1), in_b.eq(rcv & va & w.in1)]
        with m.Elif(self.pack3):
            sends = w.double & (t > f) & (t <= fM)
            takes = (t > f2) & (t <= f2M)
            m.d.comb += [
                w.inj.eq(w.double & Mux(t_zero, 1, Mux(t <= f, w.address,
                                                       Mux(t <= fM, w.msb_send3, 0)))),
                sh_a.eq((sends & ~w.arrived_b) | (takes & ~w.rx3_b)),
                sh_b.eq((sends & w.arrived_b) | (takes & w.rx3_b)),
                in_a.eq(takes & ~w.rx3_b & w.rx_data), in_b.eq(takes & w.rx3_b & w.rx_data)]
        with m.Elif(self.pack5):
            m.d.comb += w.inj.eq(w.hole & Mux(t_zero, 1, Mux(t <= f, w.address, Mux(
                t <= f2, w.index_bit, 0))))
        with m.Elif(self.rdv):
            out = ~t_zero & (t <= self.msg)
            takes = w.hole & (t > f) & (t <= fM)
            m.d.comb += [w.rdv_out.eq(w.got & Mux(t_zero, 1, Mux(out, w.msb_relay, 0))),
                         sh_a.eq((w.got & out & ~w.relay_b) | takes),
                         sh_b.eq(w.got & out & w.relay_b),
                         in_a.eq(takes & w.hrx & w.back)]
        with m.Elif(self.deliver):
            m.d.comb += [p.recv.eq(Mux(t_zero, va | self.valid_b, w.msb_src)),  # t <= M
                         sh_a.eq(~t_zero & ~w.src_b), sh_b.eq(~t_zero & w.src_b)]
        m.d.comb += [self.cx_out.eq(Cat(self.cross & w.cx_val & eq(self.it, d)
                                        for d in range(self._k))),
                     p.send_ack.eq(self.deliver & w.injected)]
        with m.If(sh_a):
            m.d.sync += A.eq(Cat(in_a, A[:-1]))
        with m.If(sh_b):
            m.d.sync += B.eq(Cat(in_b, B[:-1]))

    def _events(self, m, w: SimpleNamespace) -> None:
        """The flags and valid bits, at the phases' events."""
        t, f, p, t_zero = self.t, self.f, self.port, w.t_zero
        va, vb = self.valid_a, self.valid_b
        double, hole, got, relay_b, hrx = w.double, w.hole, w.got, w.relay_b, w.hrx
        with m.If(self.inject & t_zero):
            m.d.sync += [va.eq(p.send), vb.eq(0), w.injected.eq(p.send), got.eq(0),
                         double.eq(0), hole.eq(0)]
        at_m = ~(t ^ self.msg).any()
        with m.If(self.deliver & at_m):
            m.d.sync += [va.eq(0), vb.eq(0)]   # delivered: the message has left
        with m.If(self.cross):
            self._cross_events(m, w, at_m)
        with m.If((self.enum2 | self.enum4) & (t >= f)):
            for j in range(self._k):
                with m.If(eq(self.t_f, j)):
                    m.d.sync += w.rank[j].eq(w.en[self._k - 1].o)
        with m.If(self.pack3):
            with m.If(t == self.f_2):
                m.d.sync += [got.eq(w.rx_data), relay_b.eq(w.rx3_b)]
            with m.If(t == self.f2_m):
                a_next = va & ~(double & ~w.arrived_b)
                b_next = vb & ~(double & w.arrived_b)
                m.d.sync += [va.eq(a_next | (got & ~w.rx3_b)), vb.eq(b_next | (got & w.rx3_b))]
        with m.If(self.rdv):
            with m.If(t == f):
                m.d.sync += hrx.eq(hole & w.back)
            with m.If(t == self.f_m):
                a_next = va & ~(got & ~relay_b)
                b_next = vb & ~(got & relay_b)
                m.d.sync += [va.eq(a_next | (hole & hrx)), vb.eq(b_next), got.eq(0),
                             hrx.eq(0)]

    def _cross_events(self, m, w: SimpleNamespace, at_m) -> None:
        """Step 1: who sends and receives (its first bit-time), and at its end the double
        and hole flags and where the messages are."""
        va, vb, sending, rcv = self.valid_a, self.valid_b, w.sending, w.rcv
        with m.If(w.t_zero):
            m.d.sync += [sending.eq(w.want), rcv.eq(w.in1)]
        with m.If(at_m):
            stays = (va | vb) & ~sending
            m.d.sync += [w.double.eq(stays & rcv), w.hole.eq(~stays & ~rcv),
                         w.arrived_b.eq(va)]
            # the source empties; the receiving buffer (B if A held the message)
            m.d.sync += [va.eq(Mux(w.src_b, rcv, va & ~sending) | (rcv & ~va)),
                         vb.eq(Mux(w.src_b, ~sending, rcv & va))]


class Alg2NetworkHW(wiring.Component):
    """Algorithm 2's network: 2^k :class:`Alg2Node` s wired as a k-cube, the
    delivery-cycle controller and the global sequencer (module docstring).

    Parameters
    ----------
    net : fatnet.golden.hypercube.circuit.Alg2Circuit
        ``net.phases`` is the sequencer's program.
    library : fatnet.hdl.modules.ModuleLibrary, optional
        For generation: the node is emitted once.

    Members
    -------
    start, bit_time, busy
        The delivery-cycle controller.
    node : array of ``EndpointSignature(1)``
        Node ``x``'s processor port.

    Attributes
    ----------
    nodes : list of Alg2Node
        The nodes (simulation; generation instantiates the one node module), whose
        ``buf_a``, ``buf_b``, ``valid_a``, ``valid_b`` testbenches read.
    """

    def __init__(self, net, *, library=None):
        self._net = net
        self._library = library
        self._t_max = max(length for _, _, length in net.phases) - 1
        super().__init__(network_signature(net))
        self.nodes = [self._node() for _ in range(net.nodes)]

    def _node(self):
        k, M, tm = self._net.k, self._net.M, self._t_max
        if self._library is None:
            return Alg2Node(k, M, tm)
        return self._library.instance(("alg2node", k, M, tm), lambda: Alg2Node(k, M, tm),
                                      "node")

    def elaborate(self, platform):
        m = Module()
        net = self._net
        k, N = net.k, net.nodes
        add_cycle_controller(m, self.start, self.bit_time, self.busy, net.cycle_length)
        phases = net.phases
        W = counter_width(k, self._t_max)
        P = len(phases)
        M = net.M

        def eq(x, v):                  # x == v, written so that Verilator's -Wall is clean
            return ~(x ^ Const(v, len(x))).any()

        # The sequencer: the phase and the bit-time in it, and everything the nodes read
        # decoded from the *next* phase and bit-time into registers beside them, so that
        # the broadcast comes straight from registers. The phase starts idle (P) and the
        # decoded registers at values the first start strobe changes: a simulator that
        # evaluates combinational logic only on a change (Icarus) then evaluates it.
        ph = Signal(range(P + 1), name="phase", init=P)
        t = Signal(W, name="phase_t", init=self._t_max)
        nph = Signal(range(P + 1), name="next_phase")
        nt = Signal(W, name="next_t")
        last = Signal(name="phase_last")
        at = [eq(ph, n) for n in range(P)]
        last_val = Const(0, 1)
        for n, (_, _, length) in enumerate(phases):
            last_val = Mux(at[n], eq(t, length - 1), last_val)
        m.d.comb += [last.eq(last_val), nph.eq(ph), nt.eq(t)]
        with m.If(self.start):
            m.d.comb += [nph.eq(0), nt.eq(0)]
        with m.Elif(~eq(ph, P)):
            with m.If(last):
                m.d.comb += [nph.eq(ph + 1), nt.eq(0)]
            with m.Else():
                m.d.comb += nt.eq(t + 1)
        m.d.sync += [ph.eq(nph), t.eq(nt)]
        nat = [eq(nph, n) for n in range(P)]
        # per phase, its iteration and the constants the nodes compare with (a constant
        # operand of an adder would be printed narrower than W)
        per = {"it": lambda i, fr: i, "f": lambda i, fr: fr, "f_m": lambda i, fr: fr + M,
               "f_2": lambda i, fr: 2 * fr, "f2_m": lambda i, fr: 2 * fr + M}
        nxt = {name: Const(0, W) for name in per}
        for n, (kind, i, length) in enumerate(phases):
            i = max(i, 0)
            for name, fn in per.items():
                nxt[name] = Mux(nat[n], Const(fn(i, k - 1 - i), W), nxt[name])
        it_n, f_n = nxt["it"], nxt["f"]
        kinds = {p: Signal(name=f"is_{p}") for p in PHASES}
        for kind in PHASES:
            m.d.sync += kinds[kind].eq(Cat(nat[n] for n, ph_ in enumerate(phases)
                                           if ph_[0] == kind).any())
        it = Signal(W, name="iteration", init=k)
        f = Signal(W, name="free", init=k)
        f_m = Signal(W, name="free_m", init=k)
        f_2 = Signal(W, name="free_2", init=k)
        f2_m = Signal(W, name="free2_m", init=k)
        it_t = Signal(W, name="iteration_t", init=k)
        t_f = Signal(W, name="t_free", init=k)
        m.d.sync += [it.eq(it_n), f.eq(f_n), f_m.eq(nxt["f_m"]), f_2.eq(nxt["f_2"]),
                     f2_m.eq(nxt["f2_m"]), it_t.eq(it_n + nt), t_f.eq(nt - f_n)]
        nodes = self.nodes
        for x in range(N):
            nd = m.submodules[f"node_{x}"] = nodes[x]
            m.d.comb += [getattr(nd, p).eq(kinds[p]) for p in PHASES]
            m.d.comb += [nd.it.eq(it), nd.f.eq(f), nd.t.eq(t), nd.msg.eq(Const(net.M, W)),
                         nd.f_m.eq(f_m), nd.f_2.eq(f_2), nd.f2_m.eq(f2_m),
                         nd.it_t.eq(it_t), nd.t_f.eq(t_f), nd.addr.eq(x)]
            port = self.node[x]
            m.d.comb += [nd.port.send.eq(port.send), port.send_ack.eq(nd.port.send_ack),
                         port.recv.eq(nd.port.recv), nd.port.recv_ack.eq(port.recv_ack)]
        for x in range(N):
            for d in range(k):
                y = x ^ (1 << d)
                m.d.comb += [nodes[y].cx_in[d].eq(nodes[x].cx_out[d]),
                             nodes[y].en_in[d].eq(nodes[x].en_out[d])]
                wiring.connect(m, nodes[x].xo[d], nodes[y].xi[d])
        return m
