"""Interface signatures shared by the network families: channels, ports and endpoints.

A network is built from bit-serial *channels*: ``width`` wires that carry messages
forward (``data``) and, on a reverse wire per forward wire, acknowledgments back
(``ack``). A switch *port* is a channel in and a channel out. An *endpoint* is a
processor's (or an external interface's) connection to the network, seen from the
network: the top-level Verilog ports ``leaf__3__send``, ``leaf__3__send_ack``,
``leaf__3__recv``, ``leaf__3__recv_ack``, ``ext__send`` ... come from its member names.

The network top's signature is the one port map: the manifest's ports
(:func:`port_rows`), the packed test harness (``fatnet.hdl.harness.endpoint_layout``)
and the waveform groups (:func:`endpoints`) are all derived from it.
"""

from __future__ import annotations

from amaranth import Cat, Const
from amaranth.hdl import Shape
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..golden.checks import is_integer

__all__ = ["ChannelSignature", "PortSignature", "EndpointSignature", "attach",
           "connect_held", "endpoint_name", "endpoints", "port_rows"]


def _check_width(width) -> int:
    if not is_integer(width, numpy=False) or width < 1:
        raise ValueError(f"width must be a positive integer, not {width!r}")
    return width


class _WidthSignature(wiring.Signature):
    """A signature determined by its wire count(s): two are equal when their class and
    widths are (:meth:`_params`)."""

    @property
    def width(self) -> int:
        return self._width

    def _params(self) -> tuple:
        return (self._width,)

    def __eq__(self, other):
        return type(other) is type(self) and other._params() == self._params()

    def __repr__(self):
        return f"{type(self).__name__}({self._width})"


class ChannelSignature(_WidthSignature):
    """A bit-serial channel of ``width`` wires, seen from its sender.

    Parameters
    ----------
    width : int
        Wires in the channel (>= 1).

    Members
    -------
    data : ``Out(width)``
        One bit-serial message stream per wire (M bit, header, payload).
    ack : ``In(width)``
        Acknowledgment of each wire's message, coming back from the receiver.

    Raises
    ------
    ValueError
        If ``width`` is not a positive integer.
    """

    def __init__(self, width: int):
        self._width = _check_width(width)
        super().__init__({"data": Out(width), "ack": In(width)})


class PortSignature(_WidthSignature):
    """A switch port of ``width`` wires: a channel in and a channel out.

    Parameters
    ----------
    width : int
        Wires in each direction (>= 1).

    Members
    -------
    i : ``In(ChannelSignature(width))``
        The incoming channel: ``i.data`` enters the switch, ``i.ack`` acknowledges it.
    o : ``Out(ChannelSignature(width))``
        The outgoing channel: ``o.data`` leaves the switch, ``o.ack`` comes back.

    Two switches are linked by connecting one's ``o`` to the other's ``i`` and back
    (:func:`amaranth.lib.wiring.connect`).

    Raises
    ------
    ValueError
        If ``width`` is not a positive integer.
    """

    def __init__(self, width: int):
        self._width = _check_width(width)
        super().__init__({"i": In(ChannelSignature(width)),
                          "o": Out(ChannelSignature(width))})


class EndpointSignature(_WidthSignature):
    """A processor's (or external interface's) connection, seen from the network.

    Parameters
    ----------
    width : int
        Wires the endpoint sends on (>= 1).
    recv_width : int, optional
        Wires the endpoint receives on (>= 1; default ``width``).

    Members
    -------
    send : ``In(width)``
        The endpoint sends: one bit-serial message per wire, from bit-time 0.
    send_ack : ``Out(width)``
        Acknowledgment of each sent message, A bit-times after its M bit was delivered.
    recv : ``Out(recv_width)``
        Messages delivered to the endpoint: M bit, then the payload.
    recv_ack : ``In(recv_width)``
        The endpoint acknowledges: 1 on a wire from the clock its M bit arrives until
        the cycle ends.

    Raises
    ------
    ValueError
        If ``width`` or ``recv_width`` is not a positive integer.
    """

    #: What each member means, for the manifest (``{who}`` is the endpoint's name).
    MEANING = {
        "send": "{who} sends: one bit-serial message per wire",
        "send_ack": "acknowledgment of {who}'s messages, per wire",
        "recv": "messages delivered to {who}: M bit then payload",
        "recv_ack": "{who} acknowledges: 1 from the clock its M bit arrives to the "
                    "cycle's end",
    }

    def __init__(self, width: int, *, recv_width: int | None = None):
        self._width = _check_width(width)
        self._recv_width = _check_width(width if recv_width is None else recv_width)
        super().__init__({"send": In(width), "send_ack": Out(width),
                          "recv": Out(self._recv_width),
                          "recv_ack": In(self._recv_width)})

    @property
    def recv_width(self) -> int:
        return self._recv_width

    def _params(self) -> tuple:
        return (self._width, self._recv_width)

    def __repr__(self):
        extra = "" if self._recv_width == self._width else f", recv_width={self._recv_width}"
        return f"EndpointSignature({self._width}{extra})"


def attach(m, endpoint, port) -> None:
    """Wire an endpoint (the network's own port, :class:`EndpointSignature`) to a switch
    port (:class:`PortSignature`): ``send`` enters the switch, ``recv`` leaves it."""
    m.d.comb += [port.i.data.eq(endpoint.send), endpoint.send_ack.eq(port.i.ack),
                 endpoint.recv.eq(port.o.data), port.o.ack.eq(endpoint.recv_ack)]


def connect_held(m, out, into, held: dict) -> None:
    """Connect a channel (:class:`ChannelSignature`) from the driver's ``out`` to the
    next switch's ``into``, wire ``w`` in ``held`` held at ``held[w]`` (0 or 1) on the
    way in, whatever ``out`` drives (a stuck link, ``--stuck-link``: the golden
    ``stuck_wires``); the acknowledgments pass back as they are. Nothing held: a plain
    :func:`amaranth.lib.wiring.connect`."""
    if not held:
        wiring.connect(m, out, into)
        return
    m.d.comb += [into.data.eq(Cat(Const(held[w], 1) if w in held else out.data[w]
                                  for w in range(len(out.data)))),
                 out.ack.eq(into.ack)]


def _walk(signature, obj, path=()):
    """(path, member, value-or-interface) of the top-level members, arrays expanded."""
    for name, member in signature.members.items():
        value = getattr(obj, name) if obj is not None else None
        yield from _expand(member, value, path + (name,), member.dimensions)


def _expand(member, value, path, dims):
    if not dims:
        yield path, member, value
        return
    for k in range(dims[0]):
        yield from _expand(member, None if value is None else value[k], path + (k,),
                           dims[1:])


def endpoint_name(member: str, index: int | None = None) -> str:
    """An endpoint's name, as its ports are named in the Verilog (``leaf__3__send``): the
    member's name, and for an element of an array member its index after ``__``
    (``endpoint_name("leaf", 3)`` is ``leaf__3``). The one naming of endpoints: the
    harness, the manifest, the planner, the comparator's reports and the waves use it."""
    return member if index is None else f"{member}__{index}"


def endpoints(obj) -> list[tuple[str, object, int]]:
    """The endpoints of a network top (a component or interface), in signature order:
    ``(name, interface, width)`` with names as in the Verilog (:func:`endpoint_name`:
    ``leaf__3``, ``ext``)."""
    out = []
    for path, member, value in _walk(obj.signature, obj):
        if member.is_signature and isinstance(member.signature, EndpointSignature):
            out.append((endpoint_name(*path), value, member.signature.width))
    return out


def port_rows(signature) -> list[dict]:
    """Every top-level Verilog port of a component with this signature:
    ``{"name", "width", "dir", "path", "endpoint"}`` (``endpoint`` is the enclosing
    endpoint's name, or None for a plain member), in signature order."""
    rows = []
    for path, member, _ in _walk(signature, None):
        prefix = "__".join(map(str, path))
        if member.is_signature:
            sig = member.signature
            for sub, m2 in sig.members.flatten():
                if m2.is_signature:
                    continue
                flow = m2.flow if member.flow == Out else m2.flow.flip()
                rows.append({"name": "__".join([prefix, *map(str, sub)]),
                             "width": Shape.cast(m2.shape).width,
                             "dir": "in" if flow == In else "out", "path": path + sub,
                             "endpoint": prefix if isinstance(sig, EndpointSignature)
                             else None})
        else:
            rows.append({"name": prefix, "width": Shape.cast(member.shape).width,
                         "dir": "in" if member.flow == In else "out", "path": path,
                         "endpoint": None})
    return rows
