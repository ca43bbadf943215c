"""The self-test's batched prediction equals the scalar one, counter for counter.

:func:`fatnet.sim.bist.run_counters` on ``engine="batched"`` (the generators drawn in
blocks, each injection pattern through the model once) against ``engine="scalar"``
(every cycle through the model, the specification): the seven counters after every
cycle, on every network of ``tests/test_bist.py`` (stuck links included) with the stuck
terminal wires its tests use, a flipped payload bit, and on random plans (network,
pattern, load, seed, stuck wire, flipped bit) drawn from one seed each. Hypothesis
draws the seeds, derandomised so the regression is repeatable; a failure names the seed
and the call that replays it. The vectorised generators equal :func:`draw` draw for draw.
"""

from __future__ import annotations

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from fatnet.golden import bist as gb  # noqa: E402
from fatnet.golden.errors import ParameterError  # noqa: E402
from fatnet.sim import bist  # noqa: E402
from fatnet.sim.bist import predict, run_counters, unpredicted  # noqa: E402
from test_bist import NETWORKS, STUCK_LINKS, plan_of, stuck_cases  # noqa: E402

HERE = "tests/test_bist_engines.py"
SEEDS = st.integers(0, 2 ** 32 - 1)
PROPERTY = settings(max_examples=20, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))
#: Cycles compared per plan (a few reports of the plans' shortest period).
CYCLES = 240


def assert_same_counters(plan, cycles: int, where: str) -> None:
    """Both engines' counters are equal after each of the first ``cycles`` cycles."""
    scalar, batched = run_counters(plan, "scalar"), run_counters(plan, "batched")
    for c in range(cycles):
        want, got = dict(next(scalar)), dict(next(batched))
        assert got == want, f"{where}: cycle {c + 1}: batched {got}, scalar {want}"


@pytest.mark.parametrize("name", sorted(NETWORKS) + sorted(STUCK_LINKS))
@pytest.mark.parametrize("load", [1.0, 0.3])
def test_the_batched_prediction_is_the_scalar_one(name, load):
    plan = plan_of(name, load=load, bist_seed=11)
    assert_same_counters(plan, CYCLES, f"{name} load {load} seed 11; replay: python -m "
                                       f"pytest {HERE} -k '{name}-{load}'")


@pytest.mark.parametrize("name,spec", list(stuck_cases()))
def test_the_batched_prediction_of_a_stuck_wire_is_the_scalar_one(name, spec):
    plan = plan_of(name, load=0.7, bist_seed=3, stuck_wire=spec)
    assert_same_counters(plan, CYCLES, f"{name} {spec}; replay: python -m pytest {HERE} "
                                       f"-k '{name}-{spec}'")


@pytest.mark.parametrize("name", ["butterfly", "butterfly-stuck-link", "hypercube-alg2"])
def test_the_batched_prediction_of_a_flipped_bit_is_the_scalar_one(name):
    plan = plan_of(name, load=0.9, bist_seed=4, flip_cycle=9)
    assert_same_counters(plan, CYCLES, f"{name} flip 9; replay: python -m pytest {HERE} "
                                       f"-k 'flipped and {name}'")


@pytest.mark.parametrize("load", [1.0, 0.5, 0.02])
@pytest.mark.parametrize("block", [1, 8])
def test_the_batched_prediction_is_the_scalar_one_across_draw_blocks(load, block,
                                                                     monkeypatch):
    """Blocks of 1 and 8 draws: offers taken across blocks, waits longer than a
    block."""
    monkeypatch.setattr(bist, "DRAW_BLOCK", block)
    plan = plan_of("hypercube-alg1", load=load, bist_seed=21)
    assert_same_counters(plan, CYCLES, f"load {load}, DRAW_BLOCK {block}; replay: python "
                                       f"-m pytest {HERE} -k 'blocks and {block}-{load}'")


@pytest.mark.parametrize("name", ["butterfly", "hypercube-alg2"])
def test_the_batched_prediction_is_the_scalar_one_as_the_memory_fills_and_stops(
        name, monkeypatch):
    """A memory of 8 patterns (it starts again when full), and the trial that stops
    remembering patterns that hardly repeat after every 16 new ones: random traffic
    stops, a fixed pattern keeps remembering."""
    monkeypatch.setattr(bist, "MEMO_PATTERNS", 8)
    monkeypatch.setattr(bist, "MEMO_TRIAL", 16)
    plan = plan_of(name, load=1.0, bist_seed=5)
    assert_same_counters(plan, CYCLES, f"{name}; replay: python -m pytest {HERE} -k "
                                       f"'memory and {name}'")


def random_plan(seed: int):
    """A plan drawn from ``seed``: a network of ``tests/test_bist.py``, a pattern it
    takes, a load, a generator seed, maybe a flipped bit and a predicted stuck wire."""
    rng = np.random.default_rng(seed)
    names = sorted(NETWORKS) + sorted(STUCK_LINKS)
    name = names[int(rng.integers(len(names)))]
    kw = {"load": float(rng.choice([1.0, 0.9, 0.5, 0.2, 0.02, 0.0])),
          "bist_seed": int(rng.integers(2 ** 32)),
          "pattern": str(rng.choice(gb.PATTERNS))}
    if rng.random() < 0.3:
        kw["flip_cycle"] = int(rng.integers(CYCLES))
    try:
        plan = plan_of(name, **kw)
    except ParameterError:   # a network that takes permutations only: its own pattern
        del kw["pattern"]
        plan = plan_of(name, **kw)
    if rng.random() < 0.5:
        kinds = [k for k in STUCK_KINDS if k != "send:data:1"]
        spec = f"{int(rng.integers(plan.terminals))}:{rng.choice(kinds)}"
        stuck = plan_of(name, **dict(kw, pattern=plan.pattern, stuck_wire=spec))
        if unpredicted(stuck) is None:
            plan = stuck
    return name, plan


STUCK_KINDS = [f"{d}:{s}:{v}" for d in ("send", "recv") for s in ("data", "ack")
               for v in (0, 1)]


def check_random_plan(seed: int) -> None:
    name, plan = random_plan(seed)
    assert_same_counters(plan, CYCLES, f"seed {seed} ({name}, {plan.pattern}, load "
                                       f"{plan.load}, stuck {plan.stuck_wire}, flip "
                                       f"{plan.flip_cycle}); replay: python -c 'import "
                                       f"sys; sys.path.insert(0, \"tests\"); import "
                                       f"test_bist_engines as t; "
                                       f"t.check_random_plan({seed})'")


@PROPERTY
@given(SEEDS)
def test_the_batched_prediction_of_random_plans_is_the_scalar_one(seed):
    check_random_plan(seed)


@pytest.mark.parametrize("pattern", gb.PATTERNS)
@pytest.mark.parametrize("load", [1.0, 0.37, 0.0])
def test_the_vectorised_generators_are_draw_for_draw(pattern, load):
    n, count, thr = 3, 3000, gb.threshold(load)
    states = [gb.initial_state(7, s) for s in range(1 << n)]
    xs, offers, dests = gb.draw_run(states, range(1 << n), n, thr, pattern, count)
    assert xs.shape == offers.shape == dests.shape == (1 << n, count)
    for s, x in enumerate(states):
        for j in range(count):
            x, offer, d = gb.draw(x, s, n, thr, pattern)
            assert (x, offer) == (int(xs[s, j]), bool(offers[s, j])), (pattern, load, s, j)
            assert not offer or d == int(dests[s, j]), (pattern, load, s, j)


def test_the_engine_is_checked_in_one_line():
    plan = plan_of("butterfly")
    for call in (lambda: run_counters(plan, "fast"), lambda: predict(plan, 5, engine="fast")):
        with pytest.raises(ParameterError, match="engine must be one of batched, scalar, "
                                                 "got 'fast'"):
            call()
