"""``fatnet experiment kuszmaul``: the tables of Kuszmaul 1990
that the model supports now, as plain data.

Tables (every entry a dict; :func:`run` returns them under these keys):

``census``
    Algorithm 1 on every partial permutation of the k-cube, ``k <= 3`` (:func:`.alg1.census`):
    Theorem 1 holds when ``semi_contractions_collision_free == semi_contractions``.
``readings``
    Algorithm 2 under each reading of Definition 5 on every permutation of the k-cube,
    ``k <= 3`` (:func:`.alg2.failures`): how many fail.
``alg1_classes``
    Algorithm 1 on ``trials`` random packings, semi-contractions and partial
    permutations per ``k`` (``m`` messages uniform in ``[1, 2**k]``): the fraction routed
    without collision.
``bit_times``
    per ``k``: the pipelined Algorithm 1 at ``M = 2k`` and ``4k`` (``M + k + 1``), the
    enumeration of the k-cube (``2k + 1``), and Algorithm 2 in the cycle-exact model's
    fixed schedule (:func:`.bitserial.schedule`): the total at ``M = 2k`` and ``4k``,
    iteration 0's length, and per step kind the bit-times summed over the iterations
    (``M = 2k``).
``alg2_fit``
    per ``M`` (``2k`` and ``4k``): ``a k^2 + b k + c`` fitted by least squares
    (``numpy.polyfit``) to Algorithm 2's totals over ``dimensions`` (three or more),
    with the largest residual.
``alg2``
    per ``k``: Algorithm 2 on ``trials`` random permutations: how many delivered, the
    dimension steps in sequence (``k + 3k(k - 1)/2``), the most messages and bits in a
    node (``M = 2k``), bits per ``k``; ``cycle_checked``: how many of them the
    cycle-exact model (:func:`.bitserial.run_alg2`, bit by bit) delivered intact, with
    every message at the step-level model's node after every step (run for
    ``k <= CYCLE_CHECK_DIMENSION``, else ``None``).
``batches``
    per ``k``: the second formulation (Sec. IV, :func:`.bitserial.pipelined_batches`),
    ``BATCHES`` random permutations in flight at ``M = 2k``: bit-times per batch in steady
    state (``period``), one batch's latency, the first formulation's bit-times per batch
    (its total) and the ratio, message-buffer bits and dimension wires per node.
``sweep``
    per ``k`` in ``sweep`` (default ``2 .. 14``), permutation pattern and algorithm:
    bit-times at ``M = 2k``: Algorithm 2's schedule total; e-cube's and Valiant's
    store-and-forward and cut-through (:meth:`.store_forward.StoreForwardRun.bit_times`,
    mean over the trials where random). The figure's data.
``overtakes``
    per pattern of the sweep and baseline: the smallest ``k`` from which Algorithm 2 takes
    fewer bit-times than the baseline's cut-through (its faster) on every larger ``k``
    of the sweep, or ``None``.
``compare``
    per ``k`` in ``compare`` (default 6, 8, 10), pattern and algorithm (alg2, ecube,
    valiant, valiant with a barrier): delivered fraction, steps (mean and max over the
    trials), the largest node storage (messages and bits at ``M = 2k``; a baseline's
    message is ``M`` plus its header), and bit-times at ``M = 2k`` where known
    (store-and-forward and cut-through for the baselines). Algorithm 2 takes partial
    permutations only: ``random-destinations`` and ``hot-spot`` are not routed by it
    (``routed: False``).
``wins``
    per ``k`` and pattern, among the algorithms that delivered every message: the
    one(s) with the fewest steps (mean), with the fewest bit-times at ``M = 2k``
    (Algorithm 2's schedule; the baselines' cut-through) and with the smallest node
    storage (bits), ties listed together.

Randomness: trial ``t`` draws its pattern and Valiant's intermediates from its own seed,
:func:`trial_seed` (the ``trials`` stream of :mod:`fatnet.golden.seeds`); Algorithm 1's
classes at dimension ``k`` draw from the ``trials`` stream too. Deterministic algorithms on
deterministic patterns run once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..checks import is_integer
from ..errors import ParameterError
from ..seeds import check_seed, derived_seed, generator
from . import alg1, alg2, bitserial
from . import store_forward as sf
from .api import alg2_steps
from .cube import check_dimension
from .enumeration import enumeration_timing
from .patterns import PATTERNS, make_pattern

__all__ = ["DEFAULT_DIMENSIONS", "DEFAULT_COMPARE", "DEFAULT_SWEEP", "COMPARED",
           "run", "trial_seed"]

DEFAULT_DIMENSIONS = tuple(range(2, 13))
DEFAULT_COMPARE = (6, 8, 10)
DEFAULT_SWEEP = tuple(range(2, 15))
#: The largest k whose random permutations the experiment also runs bit by bit.
CYCLE_CHECK_DIMENSION = 8
#: Batches in flight per k in the second formulation's table.
BATCHES = 4
#: The algorithms of the comparison: name -> (model, options).
COMPARED: dict[str, tuple[str, dict[str, Any]]] = {
    "alg2": ("alg2", {}), "ecube": ("ecube", {}), "valiant": ("valiant", {}),
    "valiant-phased": ("valiant", {"barrier": True})}
_RANDOM_PATTERNS = {"random-permutation", "random-destinations", "hot-spot"}
_PERMUTATIONS = {"random-permutation", "transpose", "bit-reversal", "complement"}
MAX_TRIALS = 10_000
#: The largest k the comparison and Algorithm 2 sweep accept (beyond: minutes per trial).
MAX_EXPERIMENT_DIMENSION = 16


#: This experiment's codes in the ``trials`` stream (the first word of its index).
_ALG1_CLASSES, _TRIAL_SEED = 21, 22


def trial_seed(seed: int, t: int) -> int:
    """The seed of trial ``t`` (its pattern, Valiant's intermediates), in the seeds'
    range whatever ``seed`` and ``t``."""
    return derived_seed(seed, "trials", _TRIAL_SEED, t)


def _check_trials(trials) -> int:
    if not is_integer(trials) or not (
            1 <= trials <= MAX_TRIALS):
        raise ParameterError(f"trials must be an integer in [1, {MAX_TRIALS}], got {trials!r}")
    return int(trials)


def _census(dimensions) -> list:
    return [alg1.census(k) for k in dimensions if k <= 3]


def _readings(dimensions) -> list:
    rows = []
    for k in (k for k in dimensions if 2 <= k <= 3):
        for reading in alg2.READINGS:
            rows.append({"k": k, "reading": reading, **alg2.failures(k, reading)})
    return rows


def _alg1_classes(k, trials, seed) -> dict:
    rng = generator(seed, "trials", _ALG1_CLASSES, k)
    n = 1 << k
    out = {"k": k, "trials": trials}
    for name, draw in (("packing", alg1.random_packing),
                       ("semi_contraction", alg1.random_semi_contraction),
                       ("partial_permutation", alg1.random_partial_permutation)):
        maps = np.full((trials, n), -1, dtype=np.int64)
        for t in range(trials):
            m = int(rng.integers(1, n + 1))
            s, d = draw(k, m, rng)
            maps[t, s] = d
        out[name] = float(alg1.collision_free_batch(k, maps).mean())
    return out


def _bit_times(k) -> dict:
    e = enumeration_timing(k)
    s2, s4 = bitserial.schedule(k, 2 * k), bitserial.schedule(k, 4 * k)
    per_kind: dict[str, int] = {}
    for st in s2.steps:
        per_kind[st.kind] = per_kind.get(st.kind, 0) + st.length
    return {"k": k, "alg1_pipeline_2k": alg1.pipeline_timing(k, 2 * k).total,
            "alg1_pipeline_4k": alg1.pipeline_timing(k, 4 * k).total,
            "enumeration": e.total, "alg2": s2.total, "alg2_4k": s4.total,
            "alg2_iteration0": s2.iteration_lengths()[0],
            "alg2_per_step": per_kind}


def _fit(rows) -> list:
    """``a k^2 + b k + c`` through Algorithm 2's totals, per message length."""
    if len(rows) < 3:
        return []
    ks = np.array([r["k"] for r in rows], dtype=float)
    out = []
    for label, key in (("2k", "alg2"), ("4k", "alg2_4k")):
        y = np.array([r[key] for r in rows], dtype=float)
        a, b, c = np.polyfit(ks, y, 2)
        resid = float(np.abs(np.polyval((a, b, c), ks) - y).max())
        out.append({"message_bits": label, "a": float(a), "b": float(b), "c": float(c),
                    "max_residual": resid})
    return out


def _alg2_sweep(k, trials, seed) -> dict:
    n = 1 << k
    src = np.broadcast_to(np.arange(n, dtype=np.int64), (trials, n))
    dst = np.stack([make_pattern(k, "random-permutation", trial_seed(seed, t))[1]
                    for t in range(trials)])
    res = alg2.route_batch(k, src, dst, message_bits=2 * k)
    checked = None
    if k <= CYCLE_CHECK_DIMENSION:
        checked = 0
        for t in range(trials):
            ref = alg2.route(k, src[t], dst[t], message_bits=2 * k)
            delivered, same = bitserial.cross_check(k, src[t], dst[t], 2 * k, ref)
            checked += int(delivered == n and same)
    return {"k": k, "trials": trials, "delivered": int(res.ok.sum()),
            "cycle_checked": checked,
            "steps": alg2_steps(k), "max_messages": int(res.max_messages.max()),
            "max_bits": int(res.max_bits.max()),
            "bits_per_k": float(res.max_bits.max()) / k}


def _batches(k, seed) -> dict:
    routings = [(np.arange(1 << k),
                 make_pattern(k, "random-permutation", trial_seed(seed, b))[1])
                for b in range(BATCHES)]
    run = bitserial.pipelined_batches(k, routings, message_bits=2 * k,
                                      cycle_exact=k <= CYCLE_CHECK_DIMENSION)
    return {"k": k, "batches": run.batches, "delivered": int(run.delivered.sum()),
            "period": run.period, "latency": run.latency,
            "first_formulation": run.latency, "speedup": run.latency / run.period,
            "buffer_bits": run.buffer_bits, "wires_per_node": run.wires_per_node}


def _sweep(k, trials, seed) -> list:
    rows = []
    M = 2 * k
    for pattern in sorted(_PERMUTATIONS):
        rows.append({"k": k, "pattern": pattern, "algorithm": "alg2",
                     "bit_times": bitserial.schedule(k, M).total,
                     "store_forward_bit_times": None, "cut_through_bit_times": None})
        for name in ("ecube", "valiant"):
            runs = trials if (pattern in _RANDOM_PATTERNS or name == "valiant") else 1
            saf, ct = [], []
            for t in range(runs):
                s, d = make_pattern(k, pattern, trial_seed(seed, t))
                bt = sf.route(k, s, d, algorithm=name, seed=trial_seed(seed, t)).bit_times(M)
                saf.append(bt.store_forward)
                ct.append(bt.cut_through)
            rows.append({"k": k, "pattern": pattern, "algorithm": name,
                         "bit_times": float(np.mean(ct)),
                         "store_forward_bit_times": float(np.mean(saf)),
                         "cut_through_bit_times": float(np.mean(ct))})
    return rows


def _overtakes(rows) -> list:
    table = {(r["k"], r["pattern"], r["algorithm"]): r["bit_times"] for r in rows}
    ks = sorted({r["k"] for r in rows})
    out = []
    for pattern in sorted({r["pattern"] for r in rows}):
        for name in ("ecube", "valiant"):
            since = None
            for k in reversed(ks):
                if table[(k, pattern, "alg2")] < table[(k, pattern, name)]:
                    since = k
                else:
                    break
            out.append({"pattern": pattern, "baseline": name, "alg2_fewer_from_k": since})
    return out


def _compare_cell(k, pattern, name, trials, seed) -> dict:
    model, opts = COMPARED[name]
    M = 2 * k
    row = {"k": k, "pattern": pattern, "algorithm": name, "message_bits": M}
    if model == "alg2" and pattern not in _PERMUTATIONS:
        row.update(routed=False, trials=0)
        return row
    random = pattern in _RANDOM_PATTERNS or model == "valiant"
    runs = trials if random else 1
    steps, delivered, msgs, bits, saf, ct = [], [], [], [], [], []
    for t in range(runs):
        s, d = make_pattern(k, pattern, trial_seed(seed, t))
        if model == "alg2":
            res = alg2.route_batch(k, s[None, :], d[None, :], message_bits=M)
            steps.append(alg2_steps(k))
            ct.append(bitserial.schedule(k, M).total)
            delivered.append(float(res.delivered.mean()))
            msgs.append(int(res.max_messages.max()))
            bits.append(int(res.max_bits.max()))
        else:
            run = sf.route(k, s, d, algorithm=model, seed=trial_seed(seed, t), **opts)
            bt = run.bit_times(M)
            steps.append(run.steps)
            delivered.append(run.delivered / max(run.messages, 1))
            msgs.append(run.max_messages_per_node)
            bits.append(run.max_messages_per_node * bt.wire_bits)
            saf.append(bt.store_forward)
            ct.append(bt.cut_through)
    row.update(routed=True, trials=runs, delivered=float(np.mean(delivered)),
               steps_mean=float(np.mean(steps)), steps_max=int(max(steps)),
               max_messages=int(max(msgs)), max_bits=int(max(bits)),
               store_forward_bit_times=float(np.mean(saf)) if saf else None,
               cut_through_bit_times=float(np.mean(ct)) if saf else None,
               bit_times=float(np.mean(ct)))
    return row


def _wins(rows) -> list:
    out = []
    cells: dict[tuple[int, str], list[dict]] = {}
    for r in rows:
        if r.get("routed"):
            cells.setdefault((r["k"], r["pattern"]), []).append(r)
    for (k, pattern), rs in sorted(cells.items()):
        full = [r for r in rs if r["delivered"] == 1.0] or rs
        fewest = min(r["steps_mean"] for r in full)
        quickest = min(r["bit_times"] for r in full)
        smallest = min(r["max_bits"] for r in full)
        out.append({"k": k, "pattern": pattern,
                    "fewest_steps": ", ".join(r["algorithm"] for r in full
                                              if r["steps_mean"] == fewest),
                    "steps": fewest,
                    "fewest_bit_times": ", ".join(r["algorithm"] for r in full
                                                  if r["bit_times"] == quickest),
                    "bit_times": quickest,
                    "smallest_storage": ", ".join(r["algorithm"] for r in full
                                                  if r["max_bits"] == smallest),
                    "storage_bits": smallest})
    return out


def run(dimensions=DEFAULT_DIMENSIONS, compare=DEFAULT_COMPARE, trials: int = 5,
        seed: int = 0, progress=None, sweep=DEFAULT_SWEEP) -> dict:
    """Every table (module docstring). ``progress(done, total, what)`` is called as the
    work goes (the command line's progress bar)."""
    dimensions = tuple(check_dimension(k) for k in dimensions)
    compare = tuple(check_dimension(k) for k in compare)
    sweep = tuple(check_dimension(k) for k in sweep)
    for what, ks in (("dimensions", dimensions), ("compare", compare), ("sweep", sweep)):
        if not ks or max(ks) > MAX_EXPERIMENT_DIMENSION:
            raise ParameterError(f"{what} must be integers in [1, "
                                 f"{MAX_EXPERIMENT_DIMENSION}], got {list(ks)}")
    trials = _check_trials(trials)
    seed = check_seed(seed)
    jobs = ([("census", None)] + [("alg2", k) for k in dimensions]
            + [("sweep", k) for k in sweep]
            + [("compare", (k, p, a)) for k in compare for p in PATTERNS for a in COMPARED])
    done = 0
    out: dict = {"dimensions": list(dimensions), "compare_dimensions": list(compare),
                 "sweep_dimensions": list(sweep), "trials": trials, "seed": seed,
                 "census": [], "readings": [], "alg1_classes": [], "bit_times": [],
                 "alg2_fit": [], "alg2": [], "batches": [], "sweep": [], "compare": []}

    def tick(what):
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(jobs), what)

    out["census"] = _census(dimensions)
    out["readings"] = _readings(dimensions)
    tick("Algorithm 1 census, Algorithm 2 readings")
    for k in dimensions:
        out["alg1_classes"].append(_alg1_classes(k, trials, seed))
        out["bit_times"].append(_bit_times(k))
        out["alg2"].append(_alg2_sweep(k, trials, seed))
        out["batches"].append(_batches(k, seed))
        tick(f"k = {k}: Algorithm 1 classes, Algorithm 2")
    out["alg2_fit"] = _fit(out["bit_times"])
    for k in sweep:
        out["sweep"].extend(_sweep(k, trials, seed))
        tick(f"k = {k}: bit-times of every algorithm")
    out["overtakes"] = _overtakes(out["sweep"])
    for k in compare:
        for p in PATTERNS:
            for a in COMPARED:
                out["compare"].append(_compare_cell(k, p, a, trials, seed))
                tick(f"k = {k}: {p}, {a}")
    out["wins"] = _wins(out["compare"])
    return out
