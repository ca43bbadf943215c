"""``fatnet experiment kuszmaul``: the tables of Kuszmaul 1990 (issue 15, sections 2-6)
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
    per ``k``: the pipelined Algorithm 1 at ``M = 2k`` and ``4k`` (``M + k``), the
    enumeration (``2k + 1``); Algorithm 2's is ``None`` (the cycle-exact model, section 5,
    is not built yet).
``alg2``
    per ``k``: Algorithm 2 on ``trials`` random permutations: how many delivered, the
    dimension steps in sequence (``k (3k + 1)``), the most messages and bits in a node
    (``M = 2k``), bits per ``k``.
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
    one(s) with the fewest steps (mean) and with the smallest node storage (bits), ties
    listed together.

Randomness: trial ``t`` draws its pattern and Valiant's intermediates from ``seed + t``;
deterministic algorithms on deterministic patterns run once.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from . import alg1, alg2
from . import store_forward as sf
from .api import alg2_steps
from .cube import check_dimension
from .enumeration import enumeration_timing
from .patterns import PATTERNS, check_seed, make_pattern

__all__ = ["DEFAULT_DIMENSIONS", "DEFAULT_COMPARE", "COMPARED", "parse_dimensions", "run",
           "plot"]

DEFAULT_DIMENSIONS = tuple(range(2, 13))
DEFAULT_COMPARE = (6, 8, 10)
#: The algorithms of the comparison: name -> (model, options).
COMPARED = {"alg2": ("alg2", {}), "ecube": ("ecube", {}), "valiant": ("valiant", {}),
            "valiant-phased": ("valiant", {"barrier": True})}
_RANDOM_PATTERNS = {"random-permutation", "random-destinations", "hot-spot"}
_PERMUTATIONS = {"random-permutation", "transpose", "bit-reversal", "complement"}
MAX_TRIALS = 10_000
#: The largest k the comparison and Algorithm 2 sweep accept (beyond: minutes per trial).
MAX_EXPERIMENT_DIMENSION = 16


def parse_dimensions(text, what: str = "dimensions",
                     high: int = MAX_EXPERIMENT_DIMENSION) -> tuple[int, ...]:
    """``"2..12"``, ``"6,8,10"`` or a mix (``"2..4,8"``) as sorted distinct ints in
    ``[1, high]``; anything else one line naming ``what`` and the accepted range."""
    bad = ParameterError(f"{what} must be integers in [1, {high}] as A..B or A,B,C "
                         f"(e.g. 2..12), got {text!r}")
    out = set()
    try:
        for part in str(text).split(","):
            a, sep, b = part.strip().partition("..")
            lo, hi = (int(a), int(b)) if sep else (int(a), int(a))
            if not (1 <= lo <= hi <= high):
                raise bad
            out.update(range(lo, hi + 1))
    except ValueError:
        raise bad from None
    if not out:
        raise bad
    return tuple(sorted(out))


def _check_trials(trials) -> int:
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or not (
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
    rng = np.random.default_rng([seed, k, 1])
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
    return {"k": k, "alg1_pipeline_2k": alg1.pipeline_timing(k, 2 * k).total,
            "alg1_pipeline_4k": alg1.pipeline_timing(k, 4 * k).total,
            "enumeration": e.total, "alg2": None}


def _alg2_sweep(k, trials, seed) -> dict:
    n = 1 << k
    src = np.broadcast_to(np.arange(n, dtype=np.int64), (trials, n))
    dst = np.stack([make_pattern(k, "random-permutation", seed + t)[1]
                    for t in range(trials)])
    res = alg2.route_batch(k, src, dst, message_bits=2 * k)
    return {"k": k, "trials": trials, "delivered": int(res.ok.sum()),
            "steps": alg2_steps(k), "max_messages": int(res.max_messages.max()),
            "max_bits": int(res.max_bits.max()),
            "bits_per_k": float(res.max_bits.max()) / k}


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
        s, d = make_pattern(k, pattern, seed + t)
        if model == "alg2":
            res = alg2.route_batch(k, s[None, :], d[None, :], message_bits=M)
            steps.append(alg2_steps(k))
            delivered.append(float(res.delivered.mean()))
            msgs.append(int(res.max_messages.max()))
            bits.append(int(res.max_bits.max()))
        else:
            run = sf.route(k, s, d, algorithm=model, seed=seed + t, **opts)
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
               cut_through_bit_times=float(np.mean(ct)) if ct else None,
               bit_times=None)
    return row


def _wins(rows) -> list:
    out = []
    cells = {}
    for r in rows:
        if r.get("routed"):
            cells.setdefault((r["k"], r["pattern"]), []).append(r)
    for (k, pattern), rs in sorted(cells.items()):
        full = [r for r in rs if r["delivered"] == 1.0] or rs
        fewest = min(r["steps_mean"] for r in full)
        smallest = min(r["max_bits"] for r in full)
        out.append({"k": k, "pattern": pattern,
                    "fewest_steps": ", ".join(r["algorithm"] for r in full
                                              if r["steps_mean"] == fewest),
                    "steps": fewest,
                    "smallest_storage": ", ".join(r["algorithm"] for r in full
                                                  if r["max_bits"] == smallest),
                    "storage_bits": smallest})
    return out


def run(dimensions=DEFAULT_DIMENSIONS, compare=DEFAULT_COMPARE, trials: int = 5,
        seed: int = 0, progress=None) -> dict:
    """Every table (module docstring). ``progress(done, total, what)`` is called as the
    work goes (the command line's progress bar)."""
    dimensions = tuple(check_dimension(k) for k in dimensions)
    compare = tuple(check_dimension(k) for k in compare)
    for what, ks in (("dimensions", dimensions), ("compare", compare)):
        if not ks or max(ks) > MAX_EXPERIMENT_DIMENSION:
            raise ParameterError(f"{what} must be integers in [1, "
                                 f"{MAX_EXPERIMENT_DIMENSION}], got {list(ks)}")
    trials = _check_trials(trials)
    seed = check_seed(seed)
    jobs = ([("census", None)] + [("sweep", k) for k in dimensions]
            + [("compare", (k, p, a)) for k in compare for p in PATTERNS for a in COMPARED])
    done = 0
    out = {"dimensions": list(dimensions), "compare_dimensions": list(compare),
           "trials": trials, "seed": seed, "census": [], "readings": [],
           "alg1_classes": [], "bit_times": [], "alg2": [], "compare": []}

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
        tick(f"k = {k}: Algorithm 1 classes, Algorithm 2")
    for k in compare:
        for p in PATTERNS:
            for a in COMPARED:
                out["compare"].append(_compare_cell(k, p, a, trials, seed))
                tick(f"k = {k}: {p}, {a}")
    out["wins"] = _wins(out["compare"])
    return out


def plot(doc: dict, path) -> None:
    """Two panels against k, one line per algorithm and pattern of the comparison: steps
    (log scale) and the largest node storage in bits. matplotlib is imported here only."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 5))
    styles = {"alg2": "-", "ecube": "--", "valiant": ":", "valiant-phased": "-."}
    colours = dict(zip(PATTERNS, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    lines = {}
    for r in doc["compare"]:
        if r.get("routed"):
            lines.setdefault((r["algorithm"], r["pattern"]), []).append(r)
    for (alg, pattern), rs in sorted(lines.items()):
        rs = sorted(rs, key=lambda r: r["k"])
        ks = [r["k"] for r in rs]
        kw = {"linestyle": styles[alg], "color": colours[pattern], "marker": "o",
              "label": f"{alg}, {pattern}"}
        ax1.plot(ks, [r["steps_mean"] for r in rs], **kw)
        ax2.plot(ks, [r["max_bits"] for r in rs], **kw)
    ax1.set(xlabel="k (dimension)", ylabel="steps (store-and-forward; alg2: dimension "
            "steps)", yscale="log", title="Steps to deliver every message")
    ax2.set(xlabel="k (dimension)", ylabel="bits", yscale="log",
            title="Largest node storage at M = 2k")
    ks = sorted({r["k"] for r in doc["compare"]})
    for ax in (ax1, ax2):
        ax.set_xticks(ks)
    ax2.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
