"""The self-testing top's UART transmitter: bytes from a stream, 8N1 on one wire."""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .logic import equals, free_init_register

__all__ = ["UartTx", "FRAME_BITS"]

#: Bits of one 8N1 character on the wire: the start bit, 8 data bits (LSB first), the
#: stop bit.
FRAME_BITS = 10


class UartTx(wiring.Component):
    """An 8N1 UART transmitter fed by a stream of bytes.

    The transmitter is ready while the line is idle. A byte taken in clock k goes out
    from clock k + 1: the start bit (0), its 8 bits LSB first and the stop bit (1), each
    ``baud_divisor`` clocks; the clock after the stop bit the line is idle (1) and the
    next byte may be taken, so back to back a character takes ``10 * baud_divisor + 1``
    clocks.

    Parameters
    ----------
    baud_divisor : int
        Clocks per bit (>= 2).

    Attributes
    ----------
    i_stream : stream.Interface
        The bytes to send (``payload``, 8 bits; ``valid``; ``ready``).
    tx : Signal
        The serial line, 1 when idle.
    """

    def __init__(self, baud_divisor: int):
        if isinstance(baud_divisor, bool) or not isinstance(baud_divisor, int) or \
                baud_divisor < 2:
            raise ValueError(f"baud_divisor must be an int >= 2, got {baud_divisor!r}")
        self._baud_divisor = baud_divisor
        super().__init__({"i_stream": In(stream.Signature(8)), "tx": Out(1, init=1)})

    def elaborate(self, platform):
        m = Module()
        div = self._baud_divisor
        # loaded with each byte taken and read only while it goes out (``busy``, which
        # the reset clears): no reset, so that the reset's net does not reach them
        frame = free_init_register(FRAME_BITS, name="frame")    # bit 0 is on the line
        bits_left = free_init_register(range(FRAME_BITS + 1), name="bits_left")
        baud = free_init_register(range(div), name="baud")  # clocks left of the bit, less 1
        # flip-flops, not decodes of the counts, so that the frame's enable is one LUT
        # from registers: a frame is going out (bits_left is not 0), and this is its
        # bit's last clock (baud is 0; div >= 2, so never the clock after a load)
        busy = Signal(name="busy")
        bit_end = Signal(name="bit_end")
        m.d.comb += self.i_stream.ready.eq(~busy)
        with m.If(~busy):
            with m.If(self.i_stream.valid):
                m.d.sync += [frame.eq(Cat(Const(0, 1), self.i_stream.payload, Const(1, 1))),
                             bits_left.eq(FRAME_BITS), baud.eq(div - 1), busy.eq(1)]
        with m.Elif(~bit_end):
            m.d.sync += [baud.eq(baud - 1), bit_end.eq(equals(baud, 1))]
        with m.Else():
            m.d.sync += [frame.eq(Cat(frame[1:], Const(1, 1))),
                         bits_left.eq(bits_left - 1), baud.eq(div - 1), bit_end.eq(0)]
            with m.If(equals(bits_left, 1)):
                m.d.sync += busy.eq(0)
        m.d.comb += self.tx.eq(Mux(busy, frame[0], 1))
        return m
