"""Seeds and the named random streams drawn from them.

One range for every seed
------------------------
A seed feeds numpy's ``SeedSequence`` (which refuses a negative one), the fat-tree's spec
and manifest, and the self-testing top's 64-bit generators; [0, 2^63 - 1] is the range
every one of them takes unchanged, so no seed is refused by one verb and taken by
another, and none wraps. :func:`check_seed` is the one validator; its error names the
parameter (``seed``, ``bist_seed``, ...), never a command-line flag.

Named streams
-------------
Every random choice draws from a *stream* of a seed: :func:`generator` (a numpy
``Generator``) or :func:`sequence` (its ``SeedSequence``), given the seed, the stream's
name and the stream's integer index (an attempt, a trial, a stage). Adding a draw to one
stream (more traffic, another trial) never moves another (the wiring).

The streams that decide hardware structure reach ``fatnet gen``'s Verilog; their
definitions are frozen (the same options must give byte-identical Verilog) and are the
``SeedSequence`` entropy ``[seed, *salt, *index]``:

``wiring``      ``[seed, attempt]``: attempt ``a`` of a multibutterfly's random splitter
                wiring, and of a modified ("*") network's level -1 matchings.
``faults``      ``[seed, 101]``: the random fault placement of a butterfly-family network
                (every re-placement draws on from the same stream).
``expansion``   ``[seed]``: the sets sampled to measure a splitter's expansion where the
                exact measurement is too large (it decides which wiring attempt is kept).
``cascade``     ``[seed, inputs, outputs, kind code]``: a fat-tree concentrator shape's
                cascade seed (kind code 1 Pippenger, 2 crossbar).
``stage``       ``[cascade seed, stage, attempt]``: the seed of attempt ``a`` at one
                stage of a cascade.
``stage-wiring`` ``[stage seed]``: that stage's random wiring and the search that
                measures its concentration guarantee where no exact check fits.
``intermediates`` ``[seed]``: Valiant's random intermediate nodes, one per message (the
                hypercube's harness carries them).

These keep their first definitions, overlaps included: numpy pads a short entropy with
zeros, so for a seed below 2^32 ``expansion`` draws what ``wiring`` attempt 0 draws, and
``wiring`` attempt 101 (beyond the default 50 attempts; the command line does not raise
it) would be ``faults``. Separating them would change the hardware a seed gives.

Every other stream feeds only traffic, payloads, arbitration or experiments, never the
hardware; it is ``SeedSequence(seed, spawn_key=(code, *index))`` (numpy pads the seed to
four words before the spawn key, so these share no draws with the frozen ones above or
with each other):

``traffic``        (code 1) destinations of a pattern or problem set.
``payloads``       (code 2) message payloads.
``arbitration``    (code 3) random arbitration among contending messages.
``trials``         (code 4) an experiment's draws, indexed by (experiment code, trial,
                   ...): each trial of each experiment its own stream.

The board's self-test seeds its per-terminal generators from ``bist_seed`` (its own
option, independent of the network's seed) by the splitmix hash of
:func:`fatnet.golden.bist.initial_state`, the one the hardware's constants are computed
by.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ParameterError

__all__ = ["MAX_SEED", "SEED_RANGE", "STREAMS", "Stream", "check_seed", "generator",
           "sequence", "derived_seed"]

#: The largest seed accepted anywhere.
MAX_SEED = 2 ** 63 - 1

#: The accepted range, as error lines say it.
SEED_RANGE = "an integer in [0, 2^63-1]"


def check_seed(seed, name: str = "seed") -> int:
    """``seed`` as an int, or one line (ParameterError) naming ``name`` and the range."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ParameterError(f"{name} must be {SEED_RANGE}, got {seed!r}")
    if not 0 <= int(seed) <= MAX_SEED:
        raise ParameterError(f"{name} must be {SEED_RANGE}, got {int(seed)}")
    return int(seed)


@dataclass(frozen=True)
class Stream:
    """One named stream: ``salt`` after the seed in the entropy (``frozen``: the
    hardware's streams, whose draws are fixed) or ``code`` in the spawn key."""

    name: str
    frozen: bool
    salt: tuple[int, ...] = ()
    code: int = 0


#: Every stream, by name (the module docstring defines each).
STREAMS = {s.name: s for s in (
    Stream("wiring", True),
    Stream("faults", True, salt=(101,)),
    Stream("expansion", True),
    Stream("cascade", True),
    Stream("stage", True),
    Stream("stage-wiring", True),
    Stream("intermediates", True),
    Stream("traffic", False, code=1),
    Stream("payloads", False, code=2),
    Stream("arbitration", False, code=3),
    Stream("trials", False, code=4),
)}


def sequence(seed: int, stream: str, *index: int) -> np.random.SeedSequence:
    """The ``SeedSequence`` of ``stream`` (a name of :data:`STREAMS`) of ``seed`` at
    ``index``; ``seed`` is checked by :func:`check_seed`."""
    seed = check_seed(seed)
    s = STREAMS[stream]
    words = [int(i) for i in index]
    if s.frozen:
        return np.random.SeedSequence([seed, *s.salt, *words])
    return np.random.SeedSequence(seed, spawn_key=(s.code, *words))


def generator(seed: int, stream: str, *index: int) -> np.random.Generator:
    """A numpy ``Generator`` drawing from ``stream`` of ``seed`` at ``index``
    (:func:`sequence`)."""
    return np.random.default_rng(sequence(seed, stream, *index))


def derived_seed(seed: int, stream: str, *index: int) -> int:
    """A seed in [0, 2^63 - 1] drawn from ``stream`` of ``seed`` at ``index`` (the first
    64-bit word of its state, halved): the seed of a part built from a seed of its own
    (a fat-tree's cascade; an experiment's trial), never past the range as ``seed + t``
    would be."""
    return int(sequence(seed, stream, *index).generate_state(1, dtype=np.uint64)[0] >> 1)
