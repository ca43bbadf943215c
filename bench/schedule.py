"""Benchmark of the off-line schedulers: cycles d against the lower bound ceil(lambda).

Run as ``python bench/schedule.py``. For n = 64, 256, 1024 leaves it
builds two universal fat-trees, with root capacity w = ceil(n^(2/3)) (the smallest
universal fat-tree) and w = n/2, plus a constant-capacity tree with 2 lg n wires per
channel (the only one where Corollary 2 applies: it needs every capacity > lg n),
and schedules four traffic patterns with every method:

* ``random-permutation``;
* ``transpose``: leaf i -> i with its lg n address bits rotated by floor(lg n / 2)
  (for even lg n: the high and low halves swapped);
* ``bit-reversal``: leaf i -> i with its address bits reversed;
* ``hot-spot``: a seeded half of the leaves send to leaf 0, the others follow a
  random permutation.

All patterns come from :func:`fatnet.golden.messages.make_pattern`.

Seeds are fixed (printed in the header); everything is deterministic.
"""

from __future__ import annotations

import argparse

import numpy as np

from fatnet.golden.fattree.topology import FatTree
from fatnet.golden.fattree.schedule import lower_bound, measure
from fatnet.golden.messages import make_pattern
from fatnet.golden.fattree.spec import FatTreeSpec, min_universal_root

SIZES = (64, 256, 1024)
# Named patterns of fatnet.golden.messages; hot-spot with half of the leaves sending to 0.
PATTERNS = ("random-permutation", "transpose", "bit-reversal", "hot-spot")
HOT_FRACTION = 0.5
BENCH_METHODS = ("greedy", "theorem1", "corollary2", "best")
SEED = 2024


def trees(n: int):
    """(label, FatTree) of the configurations benchmarked for n leaves."""
    L = n.bit_length() - 1
    for w in (min_universal_root(n), n // 2):
        yield f"universal w={w}", FatTree(FatTreeSpec.universal(n, w))
    yield f"constant c={2 * L}", FatTree(FatTreeSpec.constant(n, 2 * L))


def run(sizes=SIZES, seed: int = SEED) -> list[dict]:
    rows = []
    for n in sizes:
        for label, tree in trees(n):
            for k, pat in enumerate(PATTERNS):
                ms = make_pattern(n, pat, seed + 1000 * k + n, 0, HOT_FRACTION)
                src, dst = ms.src, ms.dst
                lb = lower_bound(tree, src, dst)
                for method in BENCH_METHODS:
                    row = {"n": n, "tree": label, "pattern": pat, "method": method,
                           "lower_bound": lb}
                    if method == "corollary2" and int(tree.cap.min()) <= tree.L:
                        row.update(cycles=None, ratio=None, seconds=None)
                    else:
                        row.update(measure(tree, src, dst, method))
                    rows.append(row)
    return rows


def format_table(rows: list[dict]) -> str:
    """One line per (n, tree, pattern): ceil(lambda), then d, d/ceil(lambda) and
    milliseconds for every method ("-" where a method does not apply)."""
    cases: dict = {}
    for r in rows:
        cases.setdefault((r["n"], r["tree"], r["pattern"]), {})[r["method"]] = r
    head2 = ["n", "tree", "pattern", "ceil(lam)"] + ["d", "ratio", "ms"] * len(BENCH_METHODS)
    body = []
    for (n, tree, pat), by in cases.items():
        cells = [str(n), tree, pat, str(next(iter(by.values()))["lower_bound"])]
        for m in BENCH_METHODS:
            r = by[m]
            if r["cycles"] is None:
                cells += ["-", "-", "-"]
            else:
                cells += [str(r["cycles"]), f"{r['ratio']:.2f}",
                          f"{1000 * r['seconds']:.1f}"]
        body.append(cells)
    ncol = len(head2)
    widths = [max(len(head2[i]), *(len(b[i]) for b in body)) for i in range(ncol)]
    # method names span their three columns
    groups = []
    for k, m in enumerate(BENCH_METHODS):
        i = 4 + 3 * k
        span = widths[i] + widths[i + 1] + widths[i + 2] + 4
        groups.append(m.center(span))
    left = {1, 2}

    def line(cells):
        return "  ".join(c.ljust(w) if i in left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))

    lead = sum(widths[:4]) + 2 * 4
    out = [" " * lead + " | ".join(groups),
           line(head2), line(["-" * w for w in widths])]
    prev = None
    for b in body:
        if prev is not None and b[:2] != prev[:2]:
            out.append("")
        out.append(line(b))
        prev = b
    return "\n".join(out)


def summary(rows: list[dict]) -> str:
    lines = []
    for method in BENCH_METHODS:
        r = [x["ratio"] for x in rows if x["method"] == method and x["ratio"] is not None]
        if r:
            lines.append(f"{method:>10}: {len(r)} runs, d/ceil(lambda) mean {np.mean(r):.3f}, "
                         f"max {np.max(r):.2f}, at the bound in "
                         f"{sum(1 for v in r if v == 1.0)}/{len(r)}")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python bench/schedule.py",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args(argv)
    print(f"fat-tree off-line scheduling benchmark; seed {args.seed} "
          f"(per case: make_pattern seed = seed + 1000 * pattern number + n)")
    print("trees: universal with w = ceil(n^(2/3)) and w = n/2; constant 2 lg n wires "
          "(corollary2 needs every capacity > lg n, n/a otherwise)")
    print("d: delivery cycles; ratio: d / ceil(lambda); ms: scheduling time including "
          "the validity check")
    print()
    rows = run(args.sizes, args.seed)
    print(format_table(rows))
    print()
    print(summary(rows))


if __name__ == "__main__":
    main()
