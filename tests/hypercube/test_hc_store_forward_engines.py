"""The store-and-forward run's batched engine (link queues and node buffers as linked
lists) against the scalar one (every queued message sorted every step), field by field:
every message's delivery step, final node and hops, every crossing in order (so every
path and every queue's order), the largest queue and node counts, how the run stopped,
and the bit-time costs and summary built from them.

Fixed cases cover every baseline configuration (bounded and unbounded queues, Valiant's
barrier, the intermediate buffer and the deadlocking configuration, ``max_steps``);
random cases are drawn from one seed each (Hypothesis draws the seeds, derandomised so
the regression is repeatable), and a failure names the seed and the call that replays it.
"""

from __future__ import annotations

import numpy as np
import pytest

from fatnet.golden.errors import ParameterError
from fatnet.golden.hypercube.store_forward import route

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

SEEDS = st.integers(0, 2 ** 32 - 1)
PROPERTY = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))
FIELDS = ("delivery_step", "final", "hops", "steps", "steps_run", "max_queue",
          "max_node_buffer", "max_messages_per_node", "stopped", "phase1_steps",
          "intermediate")


def _replay(seed: int) -> str:
    return (f"seed {seed}; replay: python -c 'import sys; sys.path.insert(0, \"tests/hypercube\"); "
            f"import test_hc_store_forward_engines as t; t.check_random_run({seed})'")


def assert_same_runs(k, src, dst, where: str, **options) -> None:
    """Both engines route ``src -> dst`` on the k-cube alike (module docstring)."""
    batched = route(k, src, dst, engine="batched", **options)
    scalar = route(k, src, dst, engine="scalar", **options)
    for name in FIELDS:
        b, s = getattr(batched, name), getattr(scalar, name)
        assert (b is None and s is None) or np.array_equal(b, s), f"{where}: {name}"
    assert batched.crossings.keys() == scalar.crossings.keys(), where
    for key, s in scalar.crossings.items():
        b = batched.crossings[key]
        assert b.dtype == s.dtype and np.array_equal(b, s), f"{where}: crossings {key}"
    for bits, hop_delay in ((1, 1), (8, 3)):
        bb = batched.bit_times(bits, hop_delay=hop_delay)
        bs = scalar.bit_times(bits, hop_delay=hop_delay)
        assert (bb.store_forward, bb.cut_through) == (bs.store_forward, bs.cut_through), where
        assert np.array_equal(bb.per_message_cut_through, bs.per_message_cut_through), where
    assert batched.summary() == scalar.summary(), where


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_every_baseline_on_crowded_cubes(k, hc_baseline, hc_baselines):
    for seed in range(3):
        rng = np.random.default_rng([k, seed])
        size = int(rng.integers(1, 40)) << k
        src, dst = rng.integers(0, 1 << k, size), rng.integers(0, 1 << k, size)
        assert_same_runs(k, src, dst, f"{hc_baseline} k={k} seed {seed}", seed=seed,
                         **hc_baselines[hc_baseline])


@pytest.mark.parametrize("max_steps", [0, 1, 5])
def test_max_steps_stops_both_alike(max_steps, hc_baseline, hc_baselines):
    rng = np.random.default_rng(max_steps)
    src, dst = rng.integers(0, 8, 200), rng.integers(0, 8, 200)
    assert_same_runs(3, src, dst, f"{hc_baseline} max_steps {max_steps}", seed=1,
                     max_steps=max_steps, **hc_baselines[hc_baseline])


def test_deep_buffers_fill_part_of_a_node_buffer():
    """Buffers of 7 and 50 messages, hundreds waiting per link: each refill moves part
    of a node buffer's list into its queue."""
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 8, 3000), rng.integers(0, 8, 3000)
    for buffer in (7, 50):
        for algorithm in ("ecube", "valiant"):
            assert_same_runs(3, src, dst, f"{algorithm} buffer {buffer}", buffer=buffer,
                             algorithm=algorithm, seed=2)


def test_no_messages_and_only_local_ones():
    empty = np.zeros(0, dtype=np.int64)
    assert_same_runs(3, empty, empty, "no messages")
    here = np.arange(8)
    assert_same_runs(3, here, here, "every message at its destination")
    assert_same_runs(3, here, here, "Valiant, local", algorithm="valiant", barrier=True,
                     intermediate=here)


def test_an_unknown_engine_is_one_line():
    with pytest.raises(ParameterError, match="engine must be one of batched, scalar"):
        route(2, [0], [1], engine="fast")


def check_random_run(seed: int) -> None:
    """One random routing, options and all, from ``seed``, on both engines."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 7))
    size = int(rng.integers(0, 6 << k))
    src, dst = rng.integers(0, 1 << k, size), rng.integers(0, 1 << k, size)
    algorithm = ("ecube", "valiant")[int(rng.integers(0, 2))]
    options: dict = {"algorithm": algorithm,
                     "buffer": (None, 1, 2, 3, 8)[int(rng.integers(0, 5))],
                     "max_steps": None if rng.random() < 0.8 else int(rng.integers(0, 20))}
    if algorithm == "valiant":
        options.update(seed=int(rng.integers(0, 1000)), barrier=bool(rng.integers(0, 2)),
                       intermediate_buffer=bool(rng.integers(0, 2)))
    assert_same_runs(k, src, dst, f"k={k}, {size} messages, {options}: {_replay(seed)}",
                     **options)


@PROPERTY
@given(SEEDS)
def test_random_runs_are_equal(seed):
    check_random_run(seed)
