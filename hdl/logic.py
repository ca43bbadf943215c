"""Width-clean combinational helpers shared by the hardware, and the register whose
power-up value is free.

Yosys prints a constant operand of a comparison or an arithmetic operation at its own,
smaller width, and Verilator's ``-Wall`` then reports the width mismatch; it prints
``value == 0`` as a logical NOT of a vector. The helpers here write such operations so
that every operator in the Verilog sees equal widths.
"""

from __future__ import annotations

from amaranth import Cat, Const, Signal

__all__ = ["equals", "zero_extend", "below", "FREE_INIT", "free_init_register"]

#: The attribute of a register whose value at power-up nothing reads: the board's Yosys
#: script drops such a register's ``init`` (:func:`fatnet.hdl.parts.yosys_overrides`).
#: An ECP5 or Gowin flip-flop powers up at the value of its set or reset, so Yosys
#: gives a register loaded with ones by a synchronous strobe (a set) and powering up at
#: 0 (Amaranth's ``init``) a plain flip-flop and builds the set and the enable from
#: LUTs; with no ``init`` the flip-flop takes both.
FREE_INIT = "fatnet_free_init"


def free_init_register(shape, *, name: str) -> Signal:
    """A reset-less register (:data:`FREE_INIT`) whose value at power-up nothing reads:
    the design loads it before any use (for instance at every clock of the reset, as
    the self-test's period loads its generators and checkers). Amaranth simulates it
    from 0; on a board it powers up at whatever value its flip-flops take.

    Parameters
    ----------
    shape : int or Shape
        Its shape.
    name : str
        Its name.
    """
    return Signal(shape, name=name, reset_less=True, attrs={FREE_INIT: 1})


def equals(value, constant: int):
    """``value == constant`` as an XOR with a constant of ``value``'s width and a
    reduction (one bit).

    Parameters
    ----------
    value : Value
        The value compared.
    constant : int
        The constant, in ``[0, 2^len(value))``.
    """
    return ~(value ^ Const(constant, len(value))).any()


def zero_extend(value, width: int):
    """``value`` zero-extended to ``width`` bits (``value`` itself when it has them)."""
    return value if len(value) == width else Cat(value, Const(0, width - len(value)))


def below(value, constant: int):
    """``value < constant`` for a constant ``constant >= 0``, built from ``value``'s
    bits (one bit): an OR over the constant's one bits of "the bits above agree and
    this bit of ``value`` is 0"."""
    if constant >= 1 << len(value):
        return Const(1, 1)
    terms, above = [], Const(1, 1)
    for i in reversed(range(len(value))):
        if (constant >> i) & 1:
            terms.append(above & ~value[i])
            above = above & value[i]
        else:
            above = above & ~value[i]
    return Cat(terms).any() if terms else Const(0, 1)
