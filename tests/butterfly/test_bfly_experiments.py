"""Tables I-III: structure of the cells, paper values, and the butterfly rows."""

from __future__ import annotations

import pytest

from fatnet.golden.butterfly import api as cli
from fatnet.golden.butterfly.experiments import (
    DEFAULT_BATCH,
    DRAWING_RULES_BATCH,
    PAPER_TABLE_2,
    TABLE_1_ROWS,
    TABLE_2_COLUMNS,
    TABLE_2_ROWS,
    fault_count_for,
    run_tables,
)
from fatnet.golden.butterfly.store_forward import Rules
from fatnet.cli.butterfly import format_experiment
from fatnet.golden.errors import ParameterError


def test_every_row_and_column_small_network():
    seen = []
    cells = run_tables("all", inputs=32, trials=2, seed=1,
                       progress=lambda done, total, what: seen.append((done, total)))
    keys = {(c["table"], c["row"], c["column"]) for c in cells}
    assert keys == ({(1, r, "failed") for r in TABLE_1_ROWS}
                    | {(2, r, c) for r in TABLE_2_ROWS for c in TABLE_2_COLUMNS}
                    | {(3, r, c) for r in TABLE_2_ROWS for c in ("I", "IT")})
    assert all(c["paper"] is None and c["inputs"] == 32 and c["trials"] == 2 for c in cells)
    assert seen[-1][0] == seen[-1][1] and seen[0][0] == 0
    for c in cells:
        assert set(c) >= {"table", "row", "column", "inputs", "trials", "mean", "std", "paper"}
        if c["table"] == 2:
            assert c["mean"] >= 5                  # depth of a 32-input network
        else:
            assert 0 <= c["mean"] <= 100
    text = format_experiment(cells)
    assert "Table I" in text and "0 (dil)" in text and "1000*" in text


def test_fault_counts_scale_with_interior_switches():
    assert fault_count_for("1000*", 1024) == 1000
    assert fault_count_for("0*", 256) == 0
    assert fault_count_for("1000*", 256) == round(1000 * 7 * 256 / (9 * 1024))
    assert fault_count_for("1*", 256) == 1


def test_butterfly_rows_at_paper_size():
    cells = run_tables(2, inputs=1024, trials=12, seed=3, rows=["0 (nor)", "0 (dil)"])
    by = {(c["row"], c["column"]): c for c in cells}
    # Deterministic transposes: exactly the paper's.
    for row in ("0 (nor)", "0 (dil)"):
        for col in ("1T", "10T"):
            assert by[(row, col)]["mean"] == PAPER_TABLE_2[row][col][0]
            assert by[(row, col)]["std"] == 0
    # Random problems: the mean of 12 trials within one paper std of the paper.
    for row in ("0 (nor)", "0 (dil)"):
        for col in ("1", "10"):
            mean, std = PAPER_TABLE_2[row][col]
            assert by[(row, col)]["paper"] == mean and by[(row, col)]["paper_std"] == std
            assert abs(by[(row, col)]["mean"] - mean) <= std


def test_reproducible():
    a = run_tables(3, inputs=64, trials=3, seed=5, rows=["0", "10*"])
    b = run_tables(3, inputs=64, trials=3, seed=5, rows=["0", "10*"])
    assert a == b


@pytest.mark.parametrize("kwargs, word", [(dict(tables=4), "table"),
                                          (dict(tables=2, trials=0), "trials"),
                                          (dict(tables=2, inputs=100), "inputs"),
                                          (dict(tables=2, rows=["7*"]), "rows"),
                                          (dict(tables=2, wiring="x"), "wiring")])
def test_bad_experiment_parameters(kwargs, word):
    with pytest.raises(ParameterError, match=word):
        run_tables(**kwargs)


def test_cli_functions():
    spec = cli.spec_from_options("multibutterfly", 64, 2, faults=20, modified=True, seed=2)
    info = cli.info(spec)
    assert info["interior_switches"] == 5 * 64 and info["faults"]["faults"] == 20
    assert not info["faults"]["reaches_inputs"]           # Sec. IV re-placement
    assert len(info["expansion"]["levels"]) == 6
    out = cli.route(spec, "random-permutation", problems=3)
    sf = out["store_and_forward"]
    assert sf["delivered"] + out["lost_at_faults"] == out["messages"] == 192
    assert out["circuit_one_cycle"]["delivered"] <= 64
    acc = cli.acceptance("butterfly", 64, trials=5)
    assert acc["patel"] == pytest.approx(0.3594, abs=1e-4) and acc["node_capacity"] == 1
    cells = cli.experiment(1, inputs=64, trials=2)
    assert len(cells) == 6 and "Table I" in format_experiment(cells)


def test_cli_reports_lost_messages_at_faulty_inputs():
    spec = cli.spec_from_options("dilated-butterfly", 64, 2, faults=2, adversary="propagate")
    out = cli.route(spec)
    assert out["lost_at_faults"] == 64 and out["store_and_forward"]["delivered"] == 0


@pytest.mark.parametrize("kwargs, word", [
    (dict(kind="x"), "kind"), (dict(kind="butterfly", inputs=12), "inputs"),
    (dict(kind="multibutterfly", multiplicity=0), "multiplicity"),
    (dict(kind="multibutterfly", inputs=64, faults=64 * 5 + 1), "faults"),
    (dict(kind="multibutterfly", faults=1, fault_rate=0.1), "fault"),
    (dict(kind="multibutterfly", fault_rate=2.0), "fault rate"),
    (dict(kind="multibutterfly", adversary="x", faults=1), "adversary"),
    (dict(kind="multibutterfly", alpha=0.1), "alpha"),
    (dict(kind="multibutterfly", wiring="x"), "wiring")])
def test_cli_bad_options(kwargs, word):
    with pytest.raises(ParameterError, match=word) as info:
        cli.spec_from_options(**kwargs)
    assert "\n" not in str(info.value)


def test_cli_unknown_pattern_and_unreachable_expansion():
    spec = cli.spec_from_options("butterfly", 16)
    with pytest.raises(ParameterError, match="pattern"):
        cli.route(spec, "shuffle")
    with pytest.raises(ParameterError, match="beta"):
        cli.build(cli.spec_from_options("multibutterfly", 64, 2, alpha=1 / 8, beta=3.0,
                                        max_attempts=2))


def test_fault_readings_run():
    # The two alternative readings of Sec. IV's fault placement (docs/papers.md).
    cells = run_tables([1, 3], inputs=32, trials=4, seed=2, rows=["1000*"],
                       on_input_fault="clear", fault_draws="repeated")
    assert {(c["table"], c["column"]) for c in cells} == {(1, "failed"), (3, "I"), (3, "IT")}
    with pytest.raises(ParameterError, match="on_input_fault"):
        run_tables(2, inputs=32, trials=1, on_input_fault="x")
    with pytest.raises(ParameterError, match="fault_draws"):
        run_tables(2, inputs=32, trials=1, fault_draws="x")


def test_cli_erasure_and_upfal():
    spec = cli.spec_from_options("multibutterfly", 64, 5, faults=6, fault_rule="erase",
                                 alpha=1 / 32, beta=3.5, seed=0)
    out = cli.info(spec)
    bounds = out["faults"]["theorem_3_4"]
    assert out["faults"]["surviving_inputs"] >= bounds["min_inputs"]
    assert out["faults"]["surviving_outputs"] >= bounds["min_outputs"]
    fault_free = cli.spec_from_options("multibutterfly", 64, 5, alpha=1 / 32, beta=3.5)
    routed = cli.route(fault_free, "random-permutation", problems=2, upfal_waves=2)
    assert routed["upfal"]["delivered"] == 128
    assert "theorem_2_1" in routed["upfal"]
    with pytest.raises(ParameterError, match="erase"):
        cli.spec_from_options("multibutterfly", 64, 5, faults=6, fault_rule="erase")


def test_cells_do_not_depend_on_the_batch_or_the_workers():
    """Every trial draws from its own streams: batches of one trial, of three in two
    processes and the default give the same cells (the default rules draw nothing)."""
    kwargs = dict(tables="all", inputs=32, trials=12, seed=4, on_input_fault="replace")
    one_by_one = run_tables(batch=1, workers=1, **kwargs)
    assert run_tables(batch=3, workers=2, **kwargs) == one_by_one
    assert run_tables(workers=1, **kwargs) == one_by_one


def test_rules_that_draw_keep_their_batch():
    """Their arbitration stream is drawn per batch: by default they run in batches of
    DRAWING_RULES_BATCH trials, the same cells as before the default batch shrank."""
    kwargs = dict(tables=2, inputs=16, trials=DEFAULT_BATCH + 4, seed=2, workers=1,
                  rows=["0", "10*"], rules=Rules(queue="random", tie="random"))
    assert run_tables(**kwargs) == run_tables(batch=DRAWING_RULES_BATCH, **kwargs)
