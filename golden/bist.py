"""The self-testing top's arithmetic, shared by the hardware (:mod:`fatnet.hdl.bist`) and
the model that predicts its reports (:mod:`fatnet.sim.bist`): the random number
generator, the destinations, the payload's fields, and the UART report line.

Every function here is the specification the hardware is built from, bit for bit:

* **Generator.** Terminal ``s`` keeps a 24-bit Fibonacci LFSR state ``x`` (polynomial
  x^24 + x^23 + x^22 + x^17 + 1, maximal length: period 2^24 - 1), seeded with
  :func:`initial_state`. A step (:func:`lfsr_step`) is ``x = ((x << 1) | (x[23] ^ x[22]
  ^ x[21] ^ x[16])) & (2^24 - 1)``. A terminal with no message waiting takes a draw
  once per delivery cycle; a draw takes ``m = 8 + n`` fresh bits (:func:`draw_steps`,
  2^n terminals): draw k reads the state after k m steps (draw 0 the first state). It
  offers a new message when the state's bits 0 .. 7 (the newest) are below
  ``threshold(load)`` (``round(load * 256)``, so load 1 offers at every draw).
* **Destinations.** ``random``: ``d = s xor v`` with ``v`` the state's bits 8 ..
  8 + n - 1, and ``v = 0`` read as 1 (never the terminal itself; ``s xor 1`` is twice
  as likely as each other terminal). The fixed patterns map ``s`` to one destination
  (:data:`FIXED_PATTERNS`); a terminal the pattern maps to itself never sends.
* **Payload** (P bits, MSB first on the wire): the source (n bits), a sequence number
  (``q = P - 2n`` bits, counting the source's acknowledged messages mod 2^q), and a
  check (n bits): the XOR of the n-bit chunks of ``source xor destination xor
  sequence``. The destination recomputes the check with its own address, so a message
  at the wrong terminal or with a flipped bit fails it.
* **Report.** One text line (:func:`report_line`) of the seven counters in hexadecimal;
  :func:`parse_report_line` reads one back.
* **Stuck wire** (fault injection, :class:`StuckWire`): one wire between the top and a
  terminal's port of the network held at 0 or 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .bitstream import bits_to_int, int_to_bits
from .errors import ParameterError

__all__ = ["FIXED_PATTERNS", "PATTERNS", "COUNTERS", "lfsr_step", "initial_state",
           "threshold", "draw", "payload_fields", "make_payload", "check_bits",
           "report_line", "parse_report_line", "REPORT_FIELDS", "check_payload_bits",
           "StuckWire", "check_stuck_wire", "STUCK_WIRE_FIELDS", "period_clocks",
           "min_payload_bits", "lfsr_run", "draw_run", "draw_steps", "check_address_bits",
           "LFSR_BITS", "LFSR_TAPS", "OFFER_BITS", "ALWAYS_OFFERS", "MAX_ADDRESS_BITS",
           "jump_images"]

MASK32 = (1 << 32) - 1

#: The counters of a report, in the line's order: completed delivery cycles, messages
#: offered (new), sent (every attempt), delivered (intact, at the right terminal),
#: acknowledged, lost (sent and not acknowledged: sent again), errors.
COUNTERS = ("cycles", "offered", "sent", "delivered", "acknowledged", "lost", "errors")
#: The one-letter keys of the report line, in :data:`COUNTERS` order.
REPORT_FIELDS = ("C", "O", "S", "D", "A", "L", "E")


def period_clocks(cycle_length: int, start_latency: int, n: int) -> int:
    """Clocks of one BIST period among 2^n terminals: prepare, the start strobe, the
    start tree's ``start_latency`` clocks, then the network's ``cycle_length``
    bit-times; at least prepare and the :func:`draw_steps` clocks in which the
    generators step after it."""
    return max(cycle_length + 2 + start_latency, draw_steps(n) + 1)


def _bit_reverse(s: int, n: int) -> int:
    return bits_to_int(int_to_bits(s, n)[::-1])


#: Fixed patterns: name -> (s, n) -> destination of terminal s among 2^n.
FIXED_PATTERNS = {
    "complement": lambda s, n: s ^ ((1 << n) - 1),
    "bit-reversal": _bit_reverse,
    "shift": lambda s, n: (s + 1) % (1 << n),
}
#: Every pattern the self-testing top draws by.
PATTERNS = ("random",) + tuple(FIXED_PATTERNS)


#: The generator's state bits: a Fibonacci LFSR of 24 bits.
LFSR_BITS = 24
LFSR_MASK = (1 << LFSR_BITS) - 1
#: The state bits XORed into the new bit 0 at a step: the taps 24, 23, 22, 17 of the
#: maximal-length polynomial x^24 + x^23 + x^22 + x^17 + 1 (period 2^24 - 1).
LFSR_TAPS = (23, 22, 21, 16)
#: The bits of a draw that decide whether it offers: the state's bits 0 .. 7 (the newest).
OFFER_BITS = 8
#: The threshold at which every draw offers (load 1).
ALWAYS_OFFERS = 1 << OFFER_BITS
#: The most address bits a draw gives: the state's bits above the offer's.
MAX_ADDRESS_BITS = LFSR_BITS - OFFER_BITS
_TAP_A, _TAP_B, _TAP_C, _TAP_D = LFSR_TAPS


def lfsr_step(x: int) -> int:
    """One step of the generator: the state shifted up by one, its new bit 0 the XOR of
    the taps (:data:`LFSR_TAPS`) of the state before."""
    new = (x >> _TAP_A) ^ (x >> _TAP_B) ^ (x >> _TAP_C) ^ (x >> _TAP_D)
    return ((x << 1) | (new & 1)) & LFSR_MASK


def draw_steps(n: int) -> int:
    """m, the generator's steps a draw takes among 2^n terminals: a fresh bit for each
    bit the draw reads, :data:`OFFER_BITS` + n."""
    return OFFER_BITS + n


def initial_state(seed: int, terminal: int) -> int:
    """Terminal ``terminal``'s first state: a splitmix-style hash of (seed, terminal),
    masked to :data:`LFSR_BITS` bits, never 0 (the LFSR's fixed point)."""
    z = (seed * 0x9E3779B97F4A7C15 + (terminal + 1) * 0xBF58476D1CE4E5B9) & ((1 << 64) - 1)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & ((1 << 64) - 1)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & ((1 << 64) - 1)
    z ^= z >> 31
    return (z & LFSR_MASK) or 1


def threshold(load: float) -> int:
    """The offer threshold of an offered load in [0, 1]: ``round(load * 256)``, from 0
    (never offers) to :data:`ALWAYS_OFFERS`."""
    if isinstance(load, bool) or not isinstance(load, (int, float)) or not 0 <= load <= 1:
        raise ParameterError(f"load must be a number in [0, 1], got {load!r}")
    return int(round(load * ALWAYS_OFFERS))


def check_address_bits(n: int) -> None:
    """Refuse more terminals than a draw's address bits can reach."""
    if n > MAX_ADDRESS_BITS:
        raise ParameterError(f"the self-testing top takes at most 2^{MAX_ADDRESS_BITS} "
                             f"terminals (the address bits of its generator's "
                             f"{LFSR_BITS}-bit draw), this network has 2^{n}")


def draw(x: int, s: int, n: int, thr: int, pattern: str) -> tuple[int, bool, int]:
    """One draw of terminal ``s`` from its state ``x``: (the state :func:`draw_steps`
    steps on, which the next draw reads; offers a message; destination)."""
    offers = (x & (ALWAYS_OFFERS - 1)) < thr
    if pattern == "random":
        v = (x >> OFFER_BITS) & ((1 << n) - 1)
        d = s ^ (v or 1)
    else:
        d = FIXED_PATTERNS[pattern](s, n)
        offers = offers and d != s
    return _lfsr_steps(x, draw_steps(n)), offers, d


def _lfsr_steps(x: int, count: int) -> int:
    """The state ``count`` steps after ``x``."""
    for _ in range(count):
        x = lfsr_step(x)
    return x


def jump_images(count: int) -> list[int]:
    """The map of ``count`` steps, linear over GF(2): the state ``count`` steps after
    each state of one bit, bit b's at index b (a state's image is the XOR of its
    bits' images)."""
    return [_lfsr_steps(1 << b, count) for b in range(LFSR_BITS)]


#: The bits of a state's part in a jump table (:func:`_jump_tables`): two parts.
_PART_BITS = LFSR_BITS // 2


def _jump_tables(images: np.ndarray) -> np.ndarray:
    """The GF(2)-linear map of states whose image of bit ``b`` is ``images[b]`` as two
    tables (2, 2^12) of uint32: the images of every value of each 12-bit half of a
    state."""
    tables = np.zeros((2, 1 << _PART_BITS), dtype=np.uint32)
    for b in range(LFSR_BITS):   # the values with bit b set: those below it, and its image
        half, low = tables[b // _PART_BITS], 1 << (b % _PART_BITS)
        half[low:2 * low] = half[:low] ^ np.uint32(images[b])
    return tables


def _jump(tables: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The map of :func:`_jump_tables` applied to every state of ``x`` (uint32): a
    lookup a half."""
    out = tables[0][x & np.uint32((1 << _PART_BITS) - 1)]
    out ^= tables[1][x >> np.uint32(_PART_BITS)]
    return out


#: Per m, the maps of m, 2m, 4m, ... steps (:func:`_jump_tables`), computed once.
_JUMPS: dict[int, list[np.ndarray]] = {}


def _jumps(m: int, level: int) -> np.ndarray:
    """The tables of m * 2^level steps."""
    jumps = _JUMPS.setdefault(m, [])
    while len(jumps) <= level:
        if not jumps:
            images = np.array(jump_images(m), dtype=np.uint32)
        else:   # twice the steps: the last map applied to its own images
            last = jumps[-1]
            images = _jump(last, _jump(last, np.uint32(1) << np.arange(LFSR_BITS,
                                                                        dtype=np.uint32)))
        jumps.append(_jump_tables(images))
    return jumps[level]


def lfsr_run(states, count: int, m: int) -> np.ndarray:
    """The states of each generator in ``states`` every ``m`` steps: a (len(states),
    count) uint32 array whose column j is :func:`lfsr_step` applied (j + 1) m times.

    A step is linear over GF(2) (a 24 x 24 bit matrix), so the block of the first k
    states gives the next k by one jump of k m steps: the block doubles with a few array
    operations (a jump is a table lookup per 12-bit half of the state), whatever the
    number of generators."""
    x = np.asarray(states, dtype=np.uint32).reshape(-1, 1)
    out = np.empty((x.shape[0], max(count, 1)), dtype=np.uint32)
    out[:, :1] = _jump(_jumps(m, 0), x)
    done, level = 1, 0
    while done < count:
        more = min(done, count - done)
        out[:, done:done + more] = _jump(_jumps(m, level), out[:, :more])
        done += more
        level += 1
    return out[:, :count]


def draw_run(states, terminals, n: int, thr: int, pattern: str, count: int):
    """:func:`draw` ``count`` times for each terminal ``terminals[i]`` from state
    ``states[i]``: (states, offers, destinations), each a (len(terminals), count)
    array, column j the (j + 1)-th draw (its states the ones :func:`draw` returns)."""
    xs = lfsr_run(states, count, draw_steps(n))
    read = np.concatenate([np.asarray(states, dtype=np.uint32).reshape(-1, 1),
                           xs[:, :-1]], axis=1)      # the state each draw reads
    s = np.asarray(terminals, dtype=np.int64).reshape(-1, 1)
    offers = (read & np.uint32(ALWAYS_OFFERS - 1)) < thr
    if pattern == "random":
        v = (read >> np.uint32(OFFER_BITS)) & np.uint32((1 << n) - 1)
        v |= v == 0                      # a draw of 0 goes to the neighbour s ^ 1
        d = (v ^ s.astype(np.uint32)).astype(np.int64)
    else:
        fixed = np.array([FIXED_PATTERNS[pattern](int(t), n) for t in s[:, 0]],
                         dtype=np.int64).reshape(-1, 1)
        d = np.broadcast_to(fixed, xs.shape)
        offers &= d != s
    return xs, offers, d


def payload_fields(P: int, n: int) -> tuple[int, int, int]:
    """(source bits, sequence bits, check bits) of a P-bit payload among 2^n terminals."""
    return n, P - 2 * n, n


def min_payload_bits(n: int) -> int:
    """The shortest payload among 2^n terminals: the source, a 4-bit sequence and the
    check, 2n + 4 bits."""
    return 2 * n + 4


def check_payload_bits(P: int, n: int) -> None:
    """Refuse a payload too short for the source, a 4-bit sequence and the check."""
    need = min_payload_bits(n)
    if P < need:
        raise ParameterError(f"payload_bits must be >= 2n + 4 = {need} for the self-testing "
                             f"top (source, sequence and check fields among 2^{n} "
                             f"terminals), got {P}")


def check_bits(src: int, dst: int, seq: int, n: int) -> int:
    """The check field: the XOR of the n-bit chunks of ``src ^ dst ^ seq``."""
    v, out = src ^ dst ^ seq, 0
    if n == 0:
        return 0
    while v:
        out ^= v & ((1 << n) - 1)
        v >>= n
    return out


def make_payload(src: int, dst: int, seq: int, P: int, n: int) -> int:
    """The payload terminal ``src`` sends to ``dst`` with sequence number ``seq``."""
    _, q, _ = payload_fields(P, n)
    seq &= (1 << q) - 1
    return (src << (q + n)) | (seq << n) | check_bits(src, dst, seq, n)


def payload_ok(payload: int, dst: int, P: int, n: int) -> bool:
    """Whether a payload received at ``dst`` passes its check."""
    _, q, _ = payload_fields(P, n)
    src = payload >> (q + n)
    seq = (payload >> n) & ((1 << q) - 1)
    return (payload & ((1 << n) - 1)) == check_bits(src, dst, seq, n)


def report_line(counts: dict) -> str:
    """The UART line of one report (without its CR LF): ``fatnet C=0000012c O=...``."""
    return "fatnet " + " ".join(f"{key}={counts[name] & MASK32:08x}"
                                for key, name in zip(REPORT_FIELDS, COUNTERS))


#: The report line, as :func:`report_line` writes it (lowercase hex, 8 digits a field).
_REPORT_RE = re.compile("fatnet " + " ".join(f"{key}=([0-9a-f]{{8}})"
                                               for key in REPORT_FIELDS))


def parse_report_line(line: str) -> dict | None:
    """The counters of one report line (:func:`report_line`'s inverse), or None for a
    line that is not exactly one (surrounding white space and CR LF are ignored)."""
    match = _REPORT_RE.fullmatch(line.strip())
    if match is None:
        return None
    return {name: int(v, 16) for name, v in zip(COUNTERS, match.groups())}


@dataclass(frozen=True)
class StuckWire:
    """One wire between the self-testing top and terminal ``terminal``'s port of the
    network, held at ``value`` at every clock.

    ``direction`` ``send`` is the terminal's sending side (``data``: the ``send`` wire
    the top drives into the network; ``ack``: the ``send_ack`` wire the network drives
    back), ``recv`` its receiving side (``data``: the ``recv`` wire the network drives;
    ``ack``: the ``recv_ack`` wire the top drives back). Always wire 0 of the bundle:
    the wire a terminal sends on, and the first of a dilated network's recv wires.
    """

    terminal: int
    direction: str
    signal: str
    value: int

    def __str__(self) -> str:
        return f"{self.terminal}:{self.direction}:{self.signal}:{self.value}"


#: The fields a :class:`StuckWire` takes besides its terminal, and their values.
STUCK_WIRE_FIELDS = {"direction": ("send", "recv"), "signal": ("data", "ack"),
                     "value": (0, 1)}


def check_stuck_wire(wire: StuckWire, terminals: int) -> StuckWire:
    """``wire``, checked against the network's ``terminals``; one-line
    :class:`~fatnet.golden.errors.ParameterError` naming the field otherwise."""
    if not isinstance(wire, StuckWire):
        raise ParameterError(f"stuck_wire must be a StuckWire, got {wire!r}")
    t = wire.terminal
    if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < terminals:
        raise ParameterError(f"stuck_wire terminal must be in [0, {terminals - 1}] (the "
                             f"network's terminals), got {t!r}")
    for name, accepted in STUCK_WIRE_FIELDS.items():
        if getattr(wire, name) not in accepted:
            raise ParameterError(f"stuck_wire {name} must be one of "
                                 f"{', '.join(map(str, accepted))}, got "
                                 f"{getattr(wire, name)!r}")
    return wire
