"""The figure tables of README.md and docs/figures.md are what ``bench/figures.py``
renders from the recorded results in ``bench/results/`` (so a hand edit of a table
fails here), and every recorded result says what produced it."""

from __future__ import annotations

import datetime
import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load_figures():
    spec = importlib.util.spec_from_file_location("bench_figures", ROOT / "bench" / "figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


figures = _load_figures()


def test_checked_in_tables_equal_the_rendered_ones():
    stale = figures.stale_files(figures.load_results())
    assert not stale, (f"tables differ from bench/results/ in {', '.join(stale)}: "
                       "run `make figures` (and record new values with "
                       "`python bench/figures.py record ...`, not in the table)")


def test_a_hand_edit_of_a_table_is_found(tmp_path):
    """A figure changed in the README copy, not in the results, makes the copy stale."""
    for path, _, _ in figures.TARGETS:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, tmp_path / path)
    readme = tmp_path / "README.md"
    text = readme.read_text(encoding="utf-8")
    cells = figures.entry(figures.load_results(), "boards", "icebreaker-butterfly-8")[
        "values"]["cells"]
    shown = f"{cells:,} of 5,280 LC"
    assert shown in text
    readme.write_text(text.replace(shown, f"{cells - 3:,} of 5,280 LC"), encoding="utf-8")
    assert figures.stale_files(figures.load_results(), tmp_path) == ["README.md"]


@pytest.mark.parametrize("name", sorted(figures.load_results()))
def test_every_recorded_result_names_its_command_date_and_machine(name):
    for key, entry in figures.load_results()[name]["entries"].items():
        where = f"bench/results/{name}.json, entry {key!r}"
        assert entry["figure"].strip(), f"{where}: no figure"
        assert entry["values"], f"{where}: no values"
        assert entry["command"].strip(), f"{where}: no command"
        assert entry["machine"].strip(), f"{where}: no machine note"
        datetime.date.fromisoformat(entry["date"])


def test_a_template_naming_an_unrecorded_value_is_refused():
    results = figures.load_results()
    with pytest.raises(KeyError):
        figures.measured(results, "boards", "icebreaker-butterfly-8", "{no_such_value}")
    with pytest.raises(KeyError, match="no entry 'nowhere'"):
        figures.entry(results, "boards", "nowhere")


def test_record_sets_values_and_dates_the_entry(tmp_path, monkeypatch):
    monkeypatch.setattr(figures, "RESULTS", tmp_path)
    figures.main(["record", "boards", "x", "--value", "cells=12", "--value", "fmax_mhz=40.5",
                  "--value", "note=ok", "--command", "fatnet board ..."])
    entry = figures.load_results(tmp_path)["boards"]["entries"]["x"]
    assert entry["values"] == {"cells": 12, "fmax_mhz": 40.5, "note": "ok"}
    assert entry["command"] == "fatnet board ..."
    assert entry["date"] == datetime.date.today().isoformat()
    assert entry["machine"] == figures.DEFAULT_MACHINE


def test_replace_block_needs_exactly_one_marker_pair():
    with pytest.raises(ValueError, match="figures:t"):
        figures.replace_block("no markers", "t", "body")
    text = "a\n<!-- figures:t -->\nold\n<!-- /figures:t -->\nb"
    assert figures.replace_block(text, "t", "new") == (
        "a\n<!-- figures:t -->\nnew\n<!-- /figures:t -->\nb")
