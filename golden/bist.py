"""The self-testing top's arithmetic, shared by the hardware (:mod:`fatnet.hdl.bist`) and
the model that predicts its reports (:mod:`fatnet.sim.bist`): the random number
generator, the destinations, the payload's fields, and the UART report line.

Every function here is the specification the hardware is built from, bit for bit:

* **Generator.** Terminal ``s`` keeps a 32-bit xorshift state (Marsaglia's
  ``x ^= x << 13; x ^= x >> 17; x ^= x << 5``), seeded with :func:`initial_state`. A
  terminal with no message waiting draws once per delivery cycle: it offers a new
  message when the draw's low 16 bits are below ``threshold(load)`` (``round(load *
  65536)``, so load 1 offers every cycle).
* **Destinations.** ``random``: ``d = s xor v`` with ``v`` the draw's bits 16 ..
  16 + n - 1, and ``v = 0`` read as 1 (never the terminal itself; ``s xor 1`` is twice
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

__all__ = ["FIXED_PATTERNS", "PATTERNS", "COUNTERS", "xorshift32", "initial_state",
           "threshold", "draw", "payload_fields", "make_payload", "check_bits",
           "report_line", "parse_report_line", "REPORT_FIELDS", "check_payload_bits",
           "StuckWire", "check_stuck_wire", "STUCK_WIRE_FIELDS", "period_clocks",
           "min_payload_bits", "xorshift32_run", "draw_run"]

MASK32 = (1 << 32) - 1

#: The counters of a report, in the line's order: completed delivery cycles, messages
#: offered (new), sent (every attempt), delivered (intact, at the right terminal),
#: acknowledged, lost (sent and not acknowledged: sent again), errors.
COUNTERS = ("cycles", "offered", "sent", "delivered", "acknowledged", "lost", "errors")
#: The one-letter keys of the report line, in :data:`COUNTERS` order.
REPORT_FIELDS = ("C", "O", "S", "D", "A", "L", "E")


def period_clocks(cycle_length: int, start_latency: int = 0) -> int:
    """Clocks of one BIST period: prepare, the start strobe, the start tree's
    ``start_latency`` clocks, then the network's ``cycle_length`` bit-times."""
    return cycle_length + 2 + start_latency


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


def xorshift32(x: int) -> int:
    """One step of Marsaglia's 32-bit xorshift (13, 17, 5)."""
    x ^= (x << 13) & MASK32
    x ^= x >> 17
    x ^= (x << 5) & MASK32
    return x & MASK32


def initial_state(seed: int, terminal: int) -> int:
    """Terminal ``terminal``'s first state: a splitmix-style hash of (seed, terminal),
    never 0 (xorshift's fixed point)."""
    z = (seed * 0x9E3779B97F4A7C15 + (terminal + 1) * 0xBF58476D1CE4E5B9) & ((1 << 64) - 1)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & ((1 << 64) - 1)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & ((1 << 64) - 1)
    z ^= z >> 31
    return (z & MASK32) or 1


def threshold(load: float) -> int:
    """The 17-bit offer threshold of an offered load in [0, 1]."""
    if isinstance(load, bool) or not isinstance(load, (int, float)) or not 0 <= load <= 1:
        raise ParameterError(f"load must be a number in [0, 1], got {load!r}")
    return int(round(load * 65536))


def draw(x: int, s: int, n: int, thr: int, pattern: str) -> tuple[int, bool, int]:
    """One draw of terminal ``s``: (next state, offers a message, destination)."""
    x = xorshift32(x)
    offers = (x & 0xFFFF) < thr
    if pattern == "random":
        v = (x >> 16) & ((1 << n) - 1)
        d = s ^ (v or 1)
    else:
        d = FIXED_PATTERNS[pattern](s, n)
        offers = offers and d != s
    return x, offers, d


def _half_tables(images: np.ndarray) -> np.ndarray:
    """The GF(2)-linear map whose image of bit ``b`` is ``images[b]`` as two tables
    (2, 65536) of uint32: the images of every value of each 16-bit half of a 32-bit
    state."""
    tables = np.zeros((2, 1 << 16), dtype=np.uint32)
    for b in range(32):   # the values with bit b set: those below it, and its image
        half, low = tables[b // 16], 1 << (b % 16)
        half[low:2 * low] = half[:low] ^ np.uint32(images[b])
    return tables


def _jump(tables: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The map of :func:`_half_tables` applied to every 32-bit state of ``x`` (uint32):
    a lookup a half."""
    out = tables[0][x & np.uint32(0xFFFF)]
    out ^= tables[1][x >> np.uint32(16)]
    return out


#: The maps of 1, 2, 4, ... xorshift steps (:func:`_half_tables`), computed once.
_STEPS: list[np.ndarray] = []


def _steps(level: int) -> np.ndarray:
    """The tables of 2^level xorshift steps."""
    while len(_STEPS) <= level:
        if not _STEPS:
            images = np.array([xorshift32(1 << b) for b in range(32)], dtype=np.uint32)
        else:   # twice the steps: the last map applied to its own images
            last = _STEPS[-1]
            images = _jump(last, _jump(last, np.uint32(1) << np.arange(32, dtype=np.uint32)))
        _STEPS.append(_half_tables(images))
    return _STEPS[level]


def xorshift32_run(states, count: int) -> np.ndarray:
    """The next ``count`` states of each generator in ``states``: a (len(states),
    count) uint32 array whose column j is :func:`xorshift32` applied j + 1 times.

    A step is linear over GF(2) (a 32 x 32 bit matrix), so the block of the first m
    states gives the next m by one jump of m steps: the block doubles with a few array
    operations (a jump is a table lookup per 16-bit half of the state), whatever the
    number of generators."""
    x = np.asarray(states, dtype=np.uint32).reshape(-1, 1)
    out = np.empty((x.shape[0], max(count, 1)), dtype=np.uint32)
    out[:, :1] = _jump(_steps(0), x)
    done, level = 1, 0
    while done < count:
        more = min(done, count - done)
        out[:, done:done + more] = _jump(_steps(level), out[:, :more])
        done += more
        level += 1
    return out[:, :count]


def draw_run(states, terminals, n: int, thr: int, pattern: str, count: int):
    """:func:`draw` ``count`` times for each terminal ``terminals[i]`` from state
    ``states[i]``: (states, offers, destinations), each a (len(terminals), count)
    array, column j the (j + 1)-th draw."""
    xs = xorshift32_run(states, count)
    s = np.asarray(terminals, dtype=np.int64).reshape(-1, 1)
    offers = (xs & np.uint32(0xFFFF)) < thr
    if pattern == "random":
        v = (xs >> np.uint32(16)) & np.uint32((1 << n) - 1)
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
