"""Speed of the hypercube model (benchmark figures, not timed tests).

Run as ``python bench/hypercube_model.py`` (``make bench`` does). It times, each
the best of ``--repeat`` runs (default 3) on one random permutation (seed ``--seed``,
default 0):

* Algorithm 2 (:func:`fatnet.golden.hypercube.alg2.route`, traces kept) on the 12-cube
  (goal 0.3 s) and on the 16-cube (goal 10 s);
* e-cube store-and-forward (:func:`fatnet.golden.hypercube.store_forward.route`) on the
  16-cube (goal 5 s);
* the exhaustive check of Algorithm 2 on every one of the 40,320 permutations of the
  3-cube (:func:`fatnet.golden.hypercube.alg2.failures`, corrected reading);
* the cycle-exact bit-serial model of Algorithm 2
  (:func:`fatnet.golden.hypercube.bitserial.run_alg2`, pure Python on the shared cycle
  engine) on the 8-, 10- and 12-cube (no goal).

Every run is also checked (every message delivered, no permutation failed).
"""

from __future__ import annotations

import argparse
import time

from fatnet.golden.hypercube import alg2, bitserial
from fatnet.golden.hypercube import store_forward as sf
from fatnet.golden.hypercube.patterns import make_pattern

__all__ = ["main"]


def _best(fn, repeat):
    best, out = None, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best, out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python bench/hypercube_model.py",
                                description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3, help="runs per figure, best kept")
    p.add_argument("--seed", type=int, default=0, help="the permutations' seed")
    args = p.parse_args(argv)
    print(f"hypercube model speed: best of {args.repeat}, random permutation seed "
          f"{args.seed}")
    ok = True
    for k, goal in ((12, 0.3), (16, 10.0)):
        src, dst = make_pattern(k, "random-permutation", args.seed)
        dt, res = _best(lambda: alg2.route(k, src, dst), args.repeat)
        ok &= res.ok
        print(f"  Algorithm 2, {1 << k:6d}-node {k}-cube: {dt:7.3f} s (goal {goal} s), "
              f"{'all delivered' if res.ok else 'FAILED'}")
    k = 16
    src, dst = make_pattern(k, "random-permutation", args.seed)
    dt, run = _best(lambda: sf.route(k, src, dst, algorithm="ecube"), args.repeat)
    good = run.delivered == run.messages
    ok &= good
    print(f"  e-cube,      {1 << k:6d}-node {k}-cube: {dt:7.3f} s (goal 5.0 s), "
          f"{run.steps} steps, {'all delivered' if good else 'FAILED'}")
    dt, f = _best(lambda: alg2.failures(3, "corrected"), args.repeat)
    ok &= f["failed"] == 0
    print(f"  Algorithm 2 on every permutation of the 3-cube ({f['permutations']:,}): "
          f"{dt:7.3f} s, {f['failed']} failed")
    for k in (8, 10, 12):
        src, dst = make_pattern(k, "random-permutation", args.seed)
        dt, res = _best(lambda: bitserial.run_alg2(k, src, dst), args.repeat)
        ok &= res.ok
        print(f"  Algorithm 2 bit by bit, {1 << k:5d}-node {k}-cube: {dt:7.3f} s, "
              f"{res.bit_times} bit-times, {'all delivered' if res.ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
