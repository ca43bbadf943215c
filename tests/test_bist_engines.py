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

import json
import os
import zlib

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from fatnet.golden import bist as gb  # noqa: E402
from fatnet.golden.errors import ParameterError  # noqa: E402
from fatnet.sim import bist, bistrun, bisttable  # noqa: E402
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


# ------------------------------------------------------------------ the outcome table
#: Small networks (4 terminals: tables of 81 or 256 patterns), one per family and kind.
SMALL = {
    "butterfly-4": "butterfly --inputs 4 --payload-bits 8",
    "dilated-4": "dilated-butterfly --inputs 4 --payload-bits 8",
    "multibutterfly-4": "multibutterfly --inputs 4 --payload-bits 8",
    "fat-tree-4": "fat-tree --leaves 4 --root-capacity 3 --mode online --payload-bits 8",
    "hypercube-2": "hypercube --dimension 2 --message-bits 10",
}


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Every test keeps its tables in its own cache directory, not the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def small_plan(name: str, **kw):
    from fatnet.api.registry import family_of, get_family
    from fatnet.cli.board import parse_stuck_wire
    from fatnet.cli.main import build_parser
    argv = ["gen", *SMALL[name].split(), "-o", "unused"]
    net = get_family(argv[1]).commands.network_from_args(
        argv[1], build_parser(argv).parse_args(argv))
    if isinstance(kw.get("stuck_wire"), str):
        kw["stuck_wire"] = parse_stuck_wire(kw["stuck_wire"])
    return bist.make_plan(net, family_of(net), baud_divisor=2, **kw)


def built_table(plan):
    table = bisttable.OutcomeTable(plan, bist._stuck_view(plan), bisttable.pattern_space(plan))
    table.complete()
    return table


#: Every stuck terminal wire the model predicts, at terminal 1.
PREDICTED = [None] + [f"1:{k}" for k in STUCK_KINDS if k != "send:data:1"]


@pytest.mark.parametrize("stuck", PREDICTED)
@pytest.mark.parametrize("load", [1.0, 0.5])
@pytest.mark.parametrize("name", sorted(SMALL))
def test_the_table_computed_in_bulk_is_the_model_pattern_for_pattern(name, load, stuck):
    """Every entry of a table computed on the family's batched model (the hypercube's
    Algorithm 1 too) equals the cycle of its pattern run alone through the model, as the
    prediction counts it."""
    plan = small_plan(name, load=load, stuck_wire=stuck)
    table, view = built_table(plan), bist._stuck_view(plan)
    space = table.space
    assert space.size == (3 if load == 1.0 else 4) ** 4 and table.is_complete
    bits_of = [tuple(s for s in range(4) if m >> s & 1) for m in range(16)]
    for code, dests in enumerate(space.decode(np.arange(space.size)).tolist()):
        assert space.code(dests) == code
        want = bist._pattern_outcome(plan, view, dests, [0] * 4, -1)
        got = bisttable.decode_entry(int(table.entries[code]), bits_of)
        assert got == want, f"{name} load {load} stuck {stuck}: pattern {dests}"


@pytest.mark.parametrize("name", sorted(SMALL))
def test_the_prediction_on_a_table_is_the_scalar_one(name):
    plan = small_plan(name, load=1.0, bist_seed=8)
    scalar = run_counters(plan, "scalar")
    batched = run_counters(plan, "batched", table="fill")
    for c in range(CYCLES):
        want, got = dict(next(scalar)), dict(next(batched))
        assert got == want, f"{name}: cycle {c + 1}: table {got}, scalar {want}; replay: " \
                            f"python -m pytest {HERE} -k 'on_a_table and {name}'"


def random_small_plan(seed: int):
    """A plan of a small network drawn from ``seed``: pattern, load, generator seed, maybe
    a flipped bit and a predicted stuck wire."""
    rng = np.random.default_rng(seed)
    name = sorted(SMALL)[int(rng.integers(len(SMALL)))]
    kw = {"load": float(rng.choice([1.0, 0.9, 0.5, 0.2, 0.0])),
          "bist_seed": int(rng.integers(2 ** 32)), "pattern": str(rng.choice(gb.PATTERNS))}
    if rng.random() < 0.3:
        kw["flip_cycle"] = int(rng.integers(CYCLES))
    if rng.random() < 0.5:
        kw["stuck_wire"] = str(rng.choice(PREDICTED[1:])).replace("1:", f"{rng.integers(4)}:", 1)
    try:
        return name, small_plan(name, **kw)
    except ParameterError:   # a network that takes permutations only: its own pattern
        del kw["pattern"]
        return name, small_plan(name, **kw)


def check_random_small_plan(seed: int) -> None:
    name, plan = random_small_plan(seed)
    assert_same_counters_on_table(plan, f"seed {seed} ({name}, {plan.pattern}, load "
                                        f"{plan.load}, stuck {plan.stuck_wire}, flip "
                                        f"{plan.flip_cycle}); replay: python -c 'import sys; "
                                        f"sys.path.insert(0, \"tests\"); import "
                                        f"test_bist_engines as t; "
                                        f"t.check_random_small_plan({seed})'")


def assert_same_counters_on_table(plan, where: str) -> None:
    scalar = run_counters(plan, "scalar")
    batched = run_counters(plan, "batched", table="fill")
    for c in range(CYCLES):
        want, got = dict(next(scalar)), dict(next(batched))
        assert got == want, f"{where}: cycle {c + 1}: table {got}, scalar {want}"


@PROPERTY
@given(SEEDS)
def test_the_prediction_of_random_small_plans_on_a_table_is_the_scalar_one(seed):
    check_random_small_plan(seed)


def assert_same_counters_at(plan, asks: list, where: str) -> None:
    """:func:`~fatnet.sim.bist.counter_run` (on the table, filled as met) gives the
    scalar engine's counters at each cycle count of ``asks`` (ascending)."""
    scalar, want = run_counters(plan, "scalar"), {0: {name: 0 for name in gb.COUNTERS}}
    for c in range(1, max(asks) + 1):
        want[c] = dict(next(scalar))
    run, shown = bist.counter_run(plan, table="fill"), []
    for c in asks:
        got = run.at(c, shown.append)
        assert got == want[c], f"{where}: at cycle {c}: counter_run {got}, scalar {want[c]}"
    assert all(a < b for a, b in zip(shown, shown[1:])) and shown[-1:] in ([max(asks)], []), \
        f"{where}: progress {shown}"


def short_blocks(monkeypatch, draws: int, cycles: int) -> None:
    """Blocks of draws and of cycles far shorter than the defaults, so that a few
    hundred cycles cross many of them."""
    monkeypatch.setattr(bistrun, "DRAW_BLOCK", draws)
    monkeypatch.setattr(bistrun, "BLOCK_CYCLES", cycles)
    monkeypatch.setattr(bistrun, "FILL_BLOCK_CYCLES", max(1, cycles // 3))


@pytest.mark.parametrize("load", [1.0, 0.5, 0.1])
@pytest.mark.parametrize("name", ["butterfly-4", "hypercube-2"])
def test_the_prediction_on_a_table_is_the_scalar_one_across_blocks(name, load, monkeypatch):
    """The table's run a block of cycles at a time (``sim/bistrun.py``) crosses blocks
    of draws and of cycles, gaps of a light load and draws with no offer at all, with
    the scalar engine's counters after every cycle and at any count."""
    short_blocks(monkeypatch, 3, 7)
    plan = small_plan(name, load=load, bist_seed=13)
    where = f"{name} load {load}; replay: python -m pytest {HERE} -k 'across_blocks and {name}'"
    assert bist._table_run(plan, bist._Patterns(plan, bist._stuck_view(plan), "fill")) \
        is not None, "no table run: the test would not test it"
    assert_same_counters_on_table(plan, where)
    assert_same_counters_at(plan, [0, 1, 7, 7, 8, 50, 51, 199, 240], where)


@pytest.mark.parametrize("name", ["butterfly-4", "fat-tree-4"])
def test_a_fixed_pattern_at_load_1_runs_one_entry_and_is_the_scalar_one(name, monkeypatch):
    """A fixed pattern at load 1 never changes its pattern: the table's run draws
    nothing and repeats one entry, with the scalar engine's counters."""
    short_blocks(monkeypatch, 3, 7)
    plan = small_plan(name, load=1.0, pattern="complement", bist_seed=2)
    run = bist._table_run(plan, bist._Patterns(plan, bist._stuck_view(plan), "fill"))
    assert run is not None and run.streams.static
    where = f"{name} complement; replay: python -m pytest {HERE} -k 'one_entry and {name}'"
    assert_same_counters_on_table(plan, where)
    assert_same_counters_at(plan, [0, 5, 6, 100, 240], where)
    run.at(50)
    assert not any(run.streams.drawn), "a fixed pattern at load 1 drew"


def check_counts_at(seed: int) -> None:
    """A random small plan (:func:`random_small_plan`), random block sizes and random
    cycle counts asked of :func:`~fatnet.sim.bist.counter_run`, from ``seed``."""
    name, plan = random_small_plan(seed)
    rng = np.random.default_rng(seed + 1)
    asks = sorted(rng.integers(0, CYCLES, 6).tolist())
    with pytest.MonkeyPatch.context() as monkeypatch:
        short_blocks(monkeypatch, int(rng.integers(1, 40)), int(rng.integers(1, 60)))
        assert_same_counters_at(plan, asks, f"seed {seed} ({name}, {plan.pattern}, load "
                                            f"{plan.load}, stuck {plan.stuck_wire}, flip "
                                            f"{plan.flip_cycle}, blocks "
                                            f"{bistrun.DRAW_BLOCK}/{bistrun.BLOCK_CYCLES}); "
                                            f"replay: python -c 'import sys; sys.path.insert("
                                            f"0, \"tests\"); import test_bist_engines as t; "
                                            f"t.check_counts_at({seed})'")


@PROPERTY
@given(SEEDS)
def test_the_counters_of_random_small_plans_at_any_count_are_the_scalar_ones(seed):
    check_counts_at(seed)


def test_the_table_is_kept_on_disk_and_read_back_without_the_model(monkeypatch):
    plan = small_plan("butterfly-4", load=0.5)
    first = built_table(plan)
    assert first.path.is_file() and first.path.parent == bisttable.cache_dir()
    assert str(bisttable.cache_dir()).startswith(os.environ["XDG_CACHE_HOME"])

    def no_model(*args):
        raise AssertionError("a kept table ran the model")
    monkeypatch.setattr(bisttable, "pattern_entries", no_model)
    again = bisttable.OutcomeTable(plan, bist._stuck_view(plan), first.space)
    assert again.is_complete and np.array_equal(again.entries, first.entries)
    # the prediction takes a kept table by default
    assert bist._Patterns(plan, bist._stuck_view(plan), "cached").table is not None


def test_everything_that_determines_the_table_keys_it():
    paths = {bisttable.OutcomeTable(p, bist._stuck_view(p), bisttable.pattern_space(p)).path
             for p in (small_plan("butterfly-4"), small_plan("butterfly-4", load=0.5),
                       small_plan("butterfly-4", stuck_wire="2:recv:ack:0"),
                       small_plan("multibutterfly-4"), small_plan("fat-tree-4"))}
    assert len(paths) == 5
    # the generators' seed does not change any pattern's cycle: one table
    assert len({bisttable.cache_key(p, bisttable.pattern_space(p)) for p in (
        small_plan("butterfly-4", bist_seed=1), small_plan("butterfly-4", bist_seed=2))}) == 1


@pytest.mark.parametrize("damage", ["corrupt", "truncated", "stale", "tampered"])
def test_a_corrupt_or_stale_table_is_said_and_computed_again(damage, capsys):
    plan = small_plan("dilated-4")
    table = built_table(plan)
    data = table.path.read_bytes()
    if damage == "corrupt":
        table.path.write_bytes(b"not a table")
    elif damage == "truncated":
        table.path.write_bytes(data[:len(data) // 2])
    else:
        entries = table.entries.copy()
        key = table.key
        if damage == "stale":
            key = key.replace('"version": 1', '"version": 0')
        else:
            entries[5] ^= 1
        meta = json.dumps({"key": key, "crc32": zlib.crc32(table.entries.tobytes())})
        np.savez(table.path, entries=entries, meta=np.array(meta))
    capsys.readouterr()
    again = bisttable.OutcomeTable(plan, bist._stuck_view(plan), table.space)
    said = capsys.readouterr().err
    want = "stale" if damage == "stale" else "corrupt"
    assert f"is {want}" in said and "computing it again" in said and str(table.path) in said
    assert again.filled == 0
    again.complete()
    assert np.array_equal(again.entries, table.entries)


def test_a_miss_computes_the_block_of_its_high_digits(monkeypatch):
    monkeypatch.setattr(bisttable, "BLOCK_ENTRIES", 9)
    plan = small_plan("butterfly-4", load=1.0)
    whole = built_table(plan).entries.copy()
    bisttable.cache_path(bisttable.cache_key(plan, bisttable.pattern_space(plan))).unlink()
    lazy = bisttable.OutcomeTable(plan, bist._stuck_view(plan), bisttable.pattern_space(plan))
    assert lazy.block == 9 and lazy.filled == 0
    assert lazy.entry(40) == whole[40]
    assert np.flatnonzero(lazy.entries).tolist() == list(range(36, 45))
    assert lazy.path.is_file()      # kept: 9 of 81 is more than 1 / SAVE_FRACTION


def test_a_filling_table_is_kept_from_a_fraction_on_then_as_it_doubles(monkeypatch):
    monkeypatch.setattr(bisttable, "BLOCK_ENTRIES", 9)
    monkeypatch.setattr(bisttable, "SAVE_FRACTION", 4)
    plan = small_plan("butterfly-4", load=1.0)
    table = bisttable.OutcomeTable(plan, bist._stuck_view(plan), bisttable.pattern_space(plan))
    kept = []
    monkeypatch.setattr(table, "save", lambda: kept.append(table.filled) or
                        setattr(table, "saved", table.filled))
    for code in range(0, 81, 9):
        table.entry(code)
    assert kept == [27, 54, 81]     # 81 / 4 reached, doubled, complete


def test_no_table_where_it_does_not_serve(monkeypatch):
    """A stuck link, a space above the limit, and ``table="off"``: no table."""
    stuck = plan_of("butterfly-stuck-link", load=1.0)
    assert bist._Patterns(stuck, bist._stuck_view(stuck), "fill").table is None
    plan = small_plan("butterfly-4")
    assert bist._Patterns(plan, bist._stuck_view(plan), "off").table is None
    # the iCEBreaker's 8 terminals: 7^8 patterns at load 1, 8^8 (the limit) below
    assert bisttable.pattern_space(plan_of("butterfly")).size == 7 ** 8
    assert bisttable.pattern_space(plan_of("butterfly", load=0.5)).size == 8 ** 8
    monkeypatch.setattr(bisttable, "MAX_ENTRIES", 80)
    assert bisttable.pattern_space(plan) is None
    assert bist._Patterns(plan, bist._stuck_view(plan), "fill").table is None


@pytest.mark.parametrize("options, pattern, batched", [
    ("hypercube --dimension 2 --message-bits 10", "random", True),
    ("hypercube --dimension 2 --algorithm alg2 --message-bits 10", "complement", False),
    ("fat-tree --leaves 4 --root-capacity 3 --mode online --payload-bits 8", "random", True),
    ("butterfly --inputs 4 --payload-bits 8", "random", True),
])
def test_a_table_fills_in_blocks_only_where_the_model_batches_cycles(options, pattern,
                                                                     batched, monkeypatch):
    """A network whose model runs cycles one at a time (the hypercube's Algorithm 2)
    fills its table a pattern at a time (a block would cost a block of model runs); the
    entries are the model's either way."""
    monkeypatch.setitem(SMALL, "case", options)
    plan = small_plan("case", load=1.0, pattern=pattern)
    table = bisttable.OutcomeTable(plan, bist._stuck_view(plan), bisttable.pattern_space(plan))
    assert table.batched is batched and (table.block > 1) is batched
    bits_of = [tuple(s for s in range(4) if m >> s & 1) for m in range(16)]
    for code in sorted({0, table.space.size // 2, table.space.size - 1}):
        dests = table.space.decode(np.array([code])).tolist()[0]
        want = bist._pattern_outcome(plan, bist._stuck_view(plan), dests, [0] * 4, -1)
        assert bisttable.decode_entry(int(table.entry(code)), bits_of) == want, dests


def test_the_table_mode_is_checked_in_one_line():
    with pytest.raises(ParameterError, match="table must be one of off, cached, fill, "
                                             "got 'always'"):
        run_counters(small_plan("butterfly-4"), table="always")
