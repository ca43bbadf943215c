"""The store-and-forward baselines in hardware: the e-cube router with small buffers and
Valiant's two phases, as the golden :mod:`fatnet.golden.hypercube.store_forward` specifies
them and :class:`~fatnet.golden.hypercube.circuit.HypercubeCircuit` clocks them.

**The router** (:class:`EcubeRouter`, one module for every node: its address is an
input) has k + 1 inputs and outputs: the k dimensions' links and the node's processor
(``port``). Per outgoing dimension j a link queue of B messages (``buffer``): B word
registers, the head in slot 0, and a thermometer of full slots (``q<j>_full``; the
queue's occupancy is the number of ones). A message is stored as one word: its current
target (Valiant: the intermediate node in phase 1), Valiant's final destination, and the
data, ``Wd`` bits.

**One step** (``S = Wd + 3`` bit-times, the sequencer's broadcast says which):

* ``head``: every queue drives its head's valid bit on its link (``xo[j].data``);
* ``shift`` (``Wd`` bit-times): the head word leaves LSB first (slot 0 rotates, so a head
  that is not admitted is intact at the step's end) and every receiver shifts the bits
  of each incoming link into its staging register ``stage<i>``;
* ``decide``: each arrival is delivered (it reached its target and the target is final),
  or, with its next target (Valiant's intermediate reached: the final destination), it
  wants the queue of the lowest dimension in which the node and that target differ.
  The candidates for one queue are admitted lowest arrival dimension first into its
  free slots (a one-hot insertion pointer moves up one slot per admitted candidate, so
  the room is the slots free at the step's start); the admitted words are written, the
  delivered one is loaded into the delivery register, and each arrival's grant is
  registered on the link's reverse wire (``xi[i].ack``);
* ``pop``: a queue whose head was granted shifts its slots down.

Step 0 is the injection: the processor's stream shifts into ``inj`` during ``head`` and
``shift``, and at ``decide`` the injected word is the one candidate (its queue is empty,
so it is always admitted; a message to its own node is delivered). The top's
``done`` (every node's queues empty at a step's start) raises ``send_ack`` at every node
that injected. No adder or comparison with a constant lies in the router: Verilator's
-Wall is clean.
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...golden.checks import is_integer
from ..controller import add_cycle_controller
from ..logic import equals as eq
from ..signatures import ChannelSignature, EndpointSignature
from .network import network_signature

__all__ = ["SEQUENCER", "EcubeRouter", "EcubeNetworkHW", "router_signature"]

#: The sequencer's broadcast (the router's one-bit inputs of the same names).
SEQUENCER = ("head", "shift", "decide", "pop", "step0", "done")


def router_signature(k: int) -> wiring.Signature:
    """The signature of :class:`EcubeRouter` (without building one)."""
    return wiring.Signature({
        **{name: In(1) for name in SEQUENCER},
        "clear": In(1),
        "addr": In(k),
        "port": Out(EndpointSignature(1)),
        "held": Out(1),
        "xo": Out(ChannelSignature(1)).array(k),
        "xi": In(ChannelSignature(1)).array(k),
    })


class EcubeRouter(wiring.Component):
    """One node's store-and-forward router (module docstring).

    Parameters
    ----------
    k : int
        The cube's dimension (>= 1).
    buffer : int
        B, messages per link queue (>= 1).
    payload_bits : int
        P, data bits of a message (>= 0).
    valiant : bool
        Whether messages carry Valiant's intermediate node before their destination.

    Members
    -------
    head, shift, decide, pop, step0 : ``In(1)``
        The sequencer's position in the step (module docstring); ``step0``: the step is
        the injection.
    done : ``In(1)``
        The network is empty: ``send_ack`` rises at a node that injected.
    clear : ``In(1)``
        The start strobe: every queue, the injection and the delivery are cleared.
    addr : ``In(k)``
        The node's address.
    port : ``Out(EndpointSignature(1))``
        The node's processor port (``send``, ``send_ack``, ``recv``; ``recv_ack`` is
        not used).
    held : ``Out(1)``
        A queue of this node holds a message.
    xo, xi : arrays of ``ChannelSignature(1)``
        Per dimension, the link to the neighbour across it (data: the head's valid bit
        and word; ack: the neighbour's grant) and the link from it.
    """

    def __new__(cls, k: int, buffer: int, payload_bits: int, valiant: bool):
        # refused before the component exists, so Amaranth has no unused one to report
        for name, v, low in (("k", k, 1), ("buffer", buffer, 1),
                             ("payload_bits", payload_bits, 0)):
            if not is_integer(v, numpy=False) or v < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
        return super().__new__(cls, src_loc_at=1)

    def __init__(self, k: int, buffer: int, payload_bits: int, valiant: bool):
        self._k, self._B, self._P, self._valiant = k, buffer, payload_bits, bool(valiant)
        self._W = (2 if valiant else 1) * k + payload_bits
        super().__init__(router_signature(k))
        W = self._W
        #: per dimension j: the queue's word registers (slot 0 is the head) and full bits
        self.slots = [[Signal(W, name=f"q{j}_s{p}") for p in range(buffer)]
                      for j in range(k)]
        self.full = [Signal(buffer, name=f"q{j}_full") for j in range(k)]
        #: per dimension i: the staging register of the link from the neighbour
        self.stage = [Signal(W, name=f"stage{i}") for i in range(k)]
        self.arrived = Signal(k, name="arrived")
        self.inj = Signal(W, name="inj")
        self.injected = Signal(name="injected")
        self.dlv = Signal(1 + k + payload_bits, name="dlv")

    def elaborate(self, platform):
        m = Module()
        self._links(m)
        cands, deliver, words, want = self._candidates(m)
        admitted = self._queues(m, words, want)
        grant = self._grants(m, deliver, admitted)
        self._delivery(m, cands, deliver)
        with m.If(self.clear):
            m.d.sync += [f.eq(0) for f in self.full]
            m.d.sync += [self.injected.eq(0), self.dlv.eq(0), grant.eq(0),
                         self.arrived.eq(0)]
        return m

    def _fields(self, word):
        """A stored word's target (its top k bits) and final destination (Valiant's
        below it; else the target)."""
        k, P = self._k, self._P
        target = word[self._W - k:]
        final = word[P:P + k] if self._valiant else target
        return target, final

    def _links(self, m) -> None:
        """``head`` and ``shift``: the links, the staging registers, the injection."""
        k, p = self._k, self.port
        for j in range(k):
            slot0 = self.slots[j][0]
            m.d.comb += self.xo[j].data.eq(
                ~self.step0 & ((self.head & self.full[j][0]) | (self.shift & slot0[0])))
            with m.If(self.shift & ~self.step0):
                m.d.sync += slot0.eq(Cat(slot0[1:], slot0[0]))
        with m.If(self.head):
            with m.If(self.step0):
                m.d.sync += self.injected.eq(p.send)
            with m.Else():
                m.d.sync += self.arrived.eq(Cat(self.xi[i].data for i in range(k)))
        with m.If(self.shift):
            with m.If(self.step0):
                m.d.sync += self.inj.eq(Cat(p.send, self.inj[:-1]))    # MSB first
            with m.Else():
                for i in range(k):
                    st = self.stage[i]
                    m.d.sync += st.eq(Cat(st[1:], self.xi[i].data))    # LSB first

    def _candidates(self, m):
        """``decide``'s candidates, the k links then the processor (step 0): per
        candidate whether it is delivered, its word with its next target, and the one
        queue it wants (one-hot)."""
        k, W, addr = self._k, self._W, self.addr
        cands = [(self.arrived[i] & ~self.step0, self.stage[i]) for i in range(k)]
        cands.append((self.injected & self.step0, self.inj))
        deliver, words, want = [], [], []
        for c, (valid, word) in enumerate(cands):
            target, final = self._fields(word)
            reached = Signal(name=f"reached{c}")
            m.d.comb += reached.eq(~(target ^ addr).any())
            new_target = Signal(k, name=f"next_target{c}")
            m.d.comb += new_target.eq(Mux(reached, final, target))
            dl = Signal(name=f"deliver{c}")
            m.d.comb += dl.eq(valid & reached & ~(target ^ final).any())
            diff = new_target ^ addr
            wants = Signal(k, name=f"want{c}")
            m.d.comb += wants.eq(Cat(valid & ~dl & diff[j] & ~diff[:j].any() if j else
                                     valid & ~dl & diff[0] for j in range(k)))
            nw = Signal(W, name=f"word{c}")
            m.d.comb += nw.eq(Cat(word[:W - k], new_target))
            deliver.append(dl)
            words.append(nw)
            want.append(wants)
        return cands, deliver, words, want

    def _queues(self, m, words, want) -> list:
        """Every link queue's admissions (``decide``) and pop (``pop``); per candidate,
        whether a queue admitted it."""
        k = self._k
        admitted = [Signal(name=f"admitted{c}") for c in range(k + 1)]
        adm_any = [Const(0, 1)] * (k + 1)
        for j in range(k):
            writes = self._insertions(m, j, words, want, adm_any)
            self._write_slots(m, j, writes)
            full = self.full[j]
            with m.If(self.pop & self.xo[j].ack & full[0]):
                m.d.sync += full.eq(Cat(full[1:], 0))
                for q in range(self._B - 1):
                    m.d.sync += self.slots[j][q].eq(self.slots[j][q + 1])
        m.d.comb += [admitted[c].eq(adm_any[c]) for c in range(k + 1)]
        return admitted

    def _insertions(self, m, j: int, words, want, adm_any: list) -> list:
        """Queue ``j``'s one-hot insertion pointer, the first free slot, moved up one per
        admission (a signal per candidate, so that the Verilog names each step once):
        per candidate (wants it, its pointer, its word); ``adm_any`` gains the
        admissions."""
        B, full = self._B, self.full[j]
        ptr = Signal(B, name=f"q{j}_ptr0")
        m.d.comb += ptr.eq(Cat(~full[q] & (full[q - 1] if q else 1) for q in range(B)))
        writes = []
        for c in range(self._k + 1):
            w = want[c][j]
            writes.append((w, ptr, words[c]))
            adm_any[c] = adm_any[c] | (w & ptr.any())
            nxt = Signal(B, name=f"q{j}_ptr{c + 1}")
            m.d.comb += nxt.eq(Mux(w, Cat(Const(0, 1), ptr[:-1]), ptr))
            ptr = nxt
        return writes

    def _write_slots(self, m, j: int, writes: list) -> None:
        """At ``decide``, each admitted word into the slot its pointer names."""
        with m.If(self.decide):
            for q in range(self._B):
                sel = Signal(self._k + 1, name=f"q{j}_s{q}_sel")
                m.d.comb += sel.eq(Cat(w & pt[q] for w, pt, _ in writes))
                data = Const(0, self._W)
                for c, (_, _, word) in enumerate(writes):
                    data = Mux(sel[c], word, data)
                with m.If(sel.any()):
                    m.d.sync += [self.slots[j][q].eq(data), self.full[j][q].eq(1)]

    def _grants(self, m, deliver, admitted):
        """Each arrival's grant, registered at ``decide`` on its link's reverse wire
        until ``pop``."""
        k = self._k
        grant = Signal(k, name="grant")
        with m.If(self.decide):
            m.d.sync += grant.eq(Cat((deliver[i] | admitted[i]) for i in range(k)))
        with m.Elif(self.pop):
            m.d.sync += grant.eq(0)
        m.d.comb += [self.xi[i].ack.eq(grant[i]) for i in range(k)]
        return grant

    def _delivery(self, m, cands, deliver) -> None:
        """The delivery: 1, the destination, the data, MSB first (one per cycle: a
        partial permutation; were there two, the lowest candidate would win)."""
        k, P, p = self._k, self._P, self.port
        dword = Const(0, 1 + k + P)
        for c in reversed(range(k + 1)):
            _, final = self._fields(cands[c][1])
            dword = Mux(deliver[c], Cat(cands[c][1][:P], final, Const(1, 1)), dword)
        with m.If(self.decide & Cat(deliver).any()):
            m.d.sync += self.dlv.eq(dword)
        with m.Else():
            m.d.sync += self.dlv.eq(Cat(Const(0, 1), self.dlv[:-1]))
        m.d.comb += [p.recv.eq(self.dlv[-1]), p.send_ack.eq(self.injected & self.done),
                     self.held.eq(Cat(self.full[j][0] for j in range(k)).any())]


class EcubeNetworkHW(wiring.Component):
    """The e-cube (or Valiant) network: 2^k :class:`EcubeRouter` s wired as a k-cube,
    the delivery-cycle controller and the step sequencer.

    Parameters
    ----------
    net : fatnet.golden.hypercube.circuit.StoreForwardCircuit
        The e-cube or the Valiant circuit.
    library : fatnet.hdl.modules.ModuleLibrary, optional
        For generation: the router is emitted once.

    Members
    -------
    start, bit_time, busy
        The delivery-cycle controller.
    node : array of ``EndpointSignature(1)``
        Node ``x``'s processor port.

    Attributes
    ----------
    routers : list of EcubeRouter
        The routers (simulation; generation instantiates the one router module).
    """

    def __init__(self, net, *, library=None):
        self._net = net
        self._library = library
        super().__init__(network_signature(net))
        self.routers = [self._router() for _ in range(net.nodes)]

    def _router(self):
        net = self._net
        args = (net.k, net.buffer, net.payload_bits, net.via_intermediate)
        if self._library is None:
            return EcubeRouter(*args)
        return self._library.instance(("ecube", *args), lambda: EcubeRouter(*args),
                                      "router")

    def elaborate(self, platform):
        m = Module()
        net = self._net
        k, N, S, Wd, n = net.k, net.nodes, net.step_length, net.word_bits, net.steps
        add_cycle_controller(m, self.start, self.bit_time, self.busy, net.cycle_length)

        # The sequencer: the step (n + 1: finished) and the bit-time in it; what the
        # routers read is decoded from the next values into registers, so the broadcast
        # leaves registers.
        u = Signal(range(S), name="step_t")
        s = Signal(range(n + 2), name="step", init=n + 1)
        nu = Signal(range(S), name="next_step_t")
        ns = Signal(range(n + 2), name="next_step")
        m.d.comb += [nu.eq(u), ns.eq(s)]
        with m.If(self.start):
            m.d.comb += [nu.eq(0), ns.eq(0)]
        with m.Elif(~eq(s, n + 1)):
            with m.If(eq(u, S - 1)):
                m.d.comb += [nu.eq(0), ns.eq(s + 1)]
            with m.Else():
                m.d.comb += nu.eq(u + 1)
        m.d.sync += [u.eq(nu), s.eq(ns)]
        running = ~eq(ns, n + 1)
        at0, atd, atp = eq(nu, 0), eq(nu, Wd + 1), eq(nu, Wd + 2)
        seq = {name: Signal(name=f"seq_{name}") for name in SEQUENCER if name != "done"}
        m.d.sync += [seq["head"].eq(running & at0),
                     seq["shift"].eq(running & ~at0 & ~atd & ~atp),
                     seq["decide"].eq(running & atd),
                     seq["pop"].eq(running & atp & ~eq(ns, 0)),
                     seq["step0"].eq(eq(ns, 0))]
        # done: at a step's start (after step 0), every queue is empty
        check = Signal(name="seq_check")
        m.d.sync += check.eq(at0 & ~eq(ns, 0) & ~self.start)
        done = Signal(name="done")
        held = Signal(name="held")
        routers = self.routers
        m.d.comb += held.eq(Cat(r.held for r in routers).any())
        with m.If(self.start):
            m.d.sync += done.eq(0)
        with m.Elif(check):
            m.d.sync += done.eq(~held)
        for x in range(N):
            r = m.submodules[f"node_{x}"] = routers[x]
            m.d.comb += [getattr(r, name).eq(sig) for name, sig in seq.items()]
            m.d.comb += [r.done.eq(done), r.clear.eq(self.start), r.addr.eq(x)]
            port = self.node[x]
            m.d.comb += [r.port.send.eq(port.send), port.send_ack.eq(r.port.send_ack),
                         port.recv.eq(r.port.recv), r.port.recv_ack.eq(port.recv_ack)]
        for x in range(N):
            for d in range(k):
                wiring.connect(m, routers[x].xo[d], routers[x ^ (1 << d)].xi[d])
        return m
