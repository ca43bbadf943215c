"""The Leighton-Maggs experiments (Sec. IV, Tables I-III), reproduced.

Every table is a list of *cells*::

    {"table": 2, "row": "0 (nor)", "column": "1", "inputs": 1024, "trials": 500,
     "mean": 14.07, "std": 0.44, "paper": 14.1, "paper_std": 0.6, "faults": 0}

``paper``/``paper_std`` are None where the paper has no value (other ``inputs``; the
deterministic transposes have no paper std). ``faults`` is the number of faults actually
placed (for other sizes the paper's counts are scaled by the number of interior switches,
so that the fault density is the paper's; the row label stays the paper's).

How a trial is made (our choices, docs/papers.md)
-------------------------------------------
* Rows "0" and "k*": every trial has its own random network (seed derived from
  ``(seed, trial)``); the rows "0*" ... "1000*" share trial ``t``'s network and differ
  only by their faults (common random numbers: the differences between rows are less
  noisy). Wiring ``"butterfly-plus-maps"`` by default (see topology.py; ``"uniform"`` is
  the literal reading of Sec. I-C and is selectable).
* Faults (rows "k*"): ``k`` uniform draws over the interior switches (repeats count
  once), propagated with the Sec. IV rule. Table I counts the trials in which they
  reached an input. In Tables II/III such a trial runs without faults (Sec. IV says the
  faults were "removed, and a new set of random faults was placed"; running without
  them is what reproduces the paper's 750*/1000* rows, docs/papers.md); the literal readings
  are ``on_input_fault="replace"`` and ``fault_draws="distinct"``.
* Columns "1" and "10": 1 or 10 random-destination problems (each input draws its
  destination uniformly); "1T"/"10T": 1 or 10 transposes. Table III's "I"/"IT" are the
  percentage of never-delayed messages in the "1"/"1T" runs (the paper: "we ran the same
  algorithm but instead measured the percentage of messages that reached their
  destinations without ever being delayed"); when both tables are asked for, the same
  runs give both.
* The butterfly and dilated butterfly are deterministic networks, so their transpose
  cells are computed once (every trial would give the same number; std 0).
"""

from __future__ import annotations

import os
import time
from enum import IntEnum
from typing import Callable, Iterable

import numpy as np

from ..errors import ParameterError
from ..seeds import generator
from . import faults as fl
from .patterns import make_problems
from .store_forward import Rules, prepare_networks, route_store_forward
from .topology import check_inputs, make_network, WIRINGS


class Draw(IntEnum):
    """The experiments' draws, each its own ``trials`` stream of the seed
    (:mod:`fatnet.golden.seeds`), indexed by the code, the trial and, where given, the
    fault or problem count: no experiment's draws shift another's."""

    MODIFIED_WIRING = 1     #: Tables I-III: a trial's modified multibutterfly
    FAULT_PLACEMENT = 2     #: Table I: a trial's fault placement
    PROBLEMS = 3            #: Tables II-III: a trial's problems
    WIRING = 4              #: Tables II-III: a trial's fault-free multibutterfly
    FAULTS = 5              #: Tables II-III: a trial's faults
    SWEEP_TRAFFIC = 6       #: the load sweep: destinations and idle inputs at a load
    SWEEP_WIRING = 7        #: the load sweep: a trial's multibutterfly
    ACCEPTANCE = 8          #: one-cycle acceptance: destinations and idle inputs
    ACCEPTANCE_WIRING = 9   #: one-cycle acceptance: a trial's multibutterfly's seed

__all__ = [
    "PAPER_TABLE_1",
    "PAPER_TABLE_2",
    "PAPER_TABLE_3",
    "TABLE_1_ROWS",
    "TABLE_2_ROWS",
    "TABLE_2_COLUMNS",
    "TABLE_3_COLUMNS",
    "DEFAULT_TRIALS",
    "run_tables",
    "fault_count_for",
]

TABLE_1_ROWS = ("10*", "100*", "250*", "500*", "750*", "1000*")
TABLE_2_ROWS = ("0 (nor)", "0 (dil)", "0", "0*", "1*", "10*", "100*", "250*", "500*",
                "750*", "1000*")
TABLE_2_COLUMNS = ("1", "10", "1T", "10T")
TABLE_3_COLUMNS = ("I", "IT")
DEFAULT_TRIALS = {1: 2000, 2: 500, 3: 500}
PAPER_INPUTS = 1024

#: Table I: percentage of trials in which a fault reached an input (2000 trials).
PAPER_TABLE_1 = {"10*": 0.0, "100*": 0.0, "250*": 0.3, "500*": 1.3, "750*": 9.1,
                 "1000*": 27.8}

#: Table II: (mean, std) of the completion time in steps; transposes of the butterflies
#: are deterministic (no std).
PAPER_TABLE_2 = {
    "0 (nor)": {"1": (14.1, 0.6), "10": (26.0, 1.0), "1T": (38, None), "10T": (272, None)},
    "0 (dil)": {"1": (11.8, 0.4), "10": (18.7, 0.7), "1T": (17, None), "10T": (160, None)},
    "0": {"1": (11.1, 0.2), "10": (16.4, 0.5), "1T": (11.8, 0.4), "10T": (19.8, 0.5)},
    "0*": {"1": (12.0, 0.3), "10": (18.0, 0.6), "1T": (11.8, 0.4), "10T": (17.2, 0.4)},
    "1*": {"1": (12.0, 0.3), "10": (18.0, 0.6), "1T": (11.8, 0.4), "10T": (17.4, 0.6)},
    "10*": {"1": (12.0, 0.3), "10": (18.3, 0.7), "1T": (12.0, 0.5), "10T": (18.4, 0.8)},
    "100*": {"1": (12.2, 0.4), "10": (20.1, 1.3), "1T": (12.7, 0.6), "10T": (20.6, 1.3)},
    "250*": {"1": (12.4, 0.5), "10": (21.8, 1.6), "1T": (13.3, 0.7), "10T": (22.7, 1.4)},
    "500*": {"1": (12.9, 0.6), "10": (24.7, 3.0), "1T": (14.0, 0.8), "10T": (25.7, 2.2)},
    "750*": {"1": (13.1, 0.7), "10": (26.6, 4.0), "1T": (14.5, 1.3), "10T": (28.2, 4.7)},
    "1000*": {"1": (13.1, 1.0), "10": (26.5, 7.7), "1T": (14.0, 1.9), "10T": (27.5, 8.8)},
}

#: Table III: (mean, std) percentage of messages never delayed.
PAPER_TABLE_3 = {
    "0 (nor)": {"I": (44.8, 1.1), "IT": (3.1, None)},
    "0 (dil)": {"I": (87.0, 1.0), "IT": (12.5, None)},
    "0": {"I": (94.1, 0.7), "IT": (89.9, 0.8)},
    "0*": {"I": (88.5, 0.9), "IT": (89.9, 0.9)},
    "1*": {"I": (88.5, 0.9), "IT": (89.8, 0.9)},
    "10*": {"I": (88.4, 0.9), "IT": (89.6, 0.9)},
    "100*": {"I": (86.5, 1.0), "IT": (86.9, 1.0)},
    "250*": {"I": (83.4, 1.1), "IT": (82.5, 1.2)},
    "500*": {"I": (77.9, 1.5), "IT": (75.9, 2.2)},
    "750*": {"I": (73.7, 5.1), "IT": (71.4, 6.5)},
    "1000*": {"I": (74.3, 11.2), "IT": (73.4, 13.4)},
}

_COLUMN_PROBLEM = {"1": ("random-destinations", 1), "10": ("random-destinations", 10),
                   "1T": ("transpose", 1), "10T": ("transpose", 10)}
#: Trials routed at once by default. Small batches are faster: a step's array passes
#: then gather from the arrays of a few networks (a few MiB), which stay in the cache
#: from pass to pass; 10 trials ran Tables II and III at N = 1024 about a fifth faster
#: than 40 or 50.
DEFAULT_BATCH = 10
#: ... but rules that draw (a ``"random"`` queue, tie or edge choice) draw one stream
#: per batch, so their results depend on the batch: their default stays the batch
#: their results have always been drawn with.
DRAWING_RULES_BATCH = 50
#: Faulty placements tried per trial before giving up (Sec. IV re-places faults that
#: reach an input; at the paper's densities a few tries suffice).
MAX_FAULT_PLACEMENTS = 10_000

ProgressFn = Callable[[int, int, str], None]


def _row_faults(row: str) -> int | None:
    """Fault count of a "k*" row label (None for unmodified rows)."""
    return int(row[:-1]) if row.endswith("*") else None


def fault_count_for(row: str, inputs: int) -> int:
    """Faults placed for a "k*" row at ``inputs``: the paper's ``k`` at N = 1024, scaled
    by the number of interior switches elsewhere (the same fault density), at least 1."""
    k = _row_faults(row) or 0
    if inputs == PAPER_INPUTS:
        return k
    n = check_inputs(inputs, True)
    interior = (n - 1) * inputs
    scaled = int(round(k * interior / ((PAPER_INPUTS.bit_length() - 2) * PAPER_INPUTS)))
    return max(scaled, 1) if k else 0          # a faulty row keeps at least one fault


def _paper(table: int, row: str, column: str, inputs: int):
    if inputs != PAPER_INPUTS:
        return None, None
    if table == 1:
        return PAPER_TABLE_1.get(row), None
    source: dict = PAPER_TABLE_2 if table == 2 else PAPER_TABLE_3
    return source[row][column]


def _cell(table, row, column, inputs, values, paper_key, faults=0, trials=None):
    values = np.asarray(values, dtype=float)
    paper, paper_std = _paper(table, row, paper_key, inputs)
    return {
        "table": table, "row": row, "column": column, "inputs": inputs,
        "trials": int(trials if trials is not None else values.size),
        "mean": round(float(values.mean()), 4),
        "std": round(float(values.std(ddof=1)) if values.size > 1 else 0.0, 4),
        "paper": paper, "paper_std": paper_std, "faults": int(faults),
    }


def _faulted_network(net, count: int, rng: np.random.Generator, on_input_fault="replace",
                     with_replacement: bool = False):
    """Sec. IV: place ``count`` random faults, re-placing them while any reaches an input.

    With ``on_input_fault="clear"`` a placement that reaches an input is removed and the
    trial runs without faults (see docs/papers.md: this reproduces the paper's 750*/1000*
    rows). Returns (network with fault map, placements tried)."""
    for attempt in range(1, MAX_FAULT_PLACEMENTS + 1):
        fmap = fl.propagate(net, fl.random_faults(net, count, rng=rng,
                                                  with_replacement=with_replacement))
        if not fmap.reaches_inputs:
            return net.with_faults(fmap), attempt
        if on_input_fault == "clear":
            return net, attempt
    raise ParameterError(
        f"faults must be few enough that a placement avoids the inputs within "
        f"{MAX_FAULT_PLACEMENTS} tries; {count} faults on {net.inputs} inputs is too many")


def _check_tables(tables) -> tuple[int, ...]:
    if isinstance(tables, (int, str)):
        tables = [tables]
    out = []
    for t in tables:
        if t == "all":
            out.extend([1, 2, 3])
            continue
        try:
            t = int(t)
        except (TypeError, ValueError):
            t = -1
        if t not in (1, 2, 3):
            raise ParameterError(f"table must be 1, 2, 3 or all, got {t}")
        out.append(t)
    return tuple(sorted(set(out)))


def run_tables(tables: Iterable | int | str = "all", inputs: int = PAPER_INPUTS,
               trials: int | None = None, seed: int = 0,
               progress: ProgressFn | None = None, wiring: str = "butterfly-plus-maps",
               rules: Rules | None = None, batch: int | None = None,
               rows: Iterable[str] | None = None,
               on_input_fault: str = "clear",
               fault_draws: str = "repeated", workers: int | None = None) -> list[dict]:
    """Reproduce Tables I-III; returns the list of cells (module docstring).

    Parameters
    ----------
    tables : 1, 2, 3, "all" or a sequence of them
    inputs : int
        ``N`` (the paper: 1024; any power of two in [8, 65536]).
    trials : int, optional
        Trials per cell; default the paper's (2000 for Table I, 500 for II and III).
    seed : int
        Everything (networks, faults, problems) derives from it.
    progress : callable(done, total, description), optional
        Called as work advances (units: trials of one row and column).
    wiring : str
        Random wiring of the multibutterflies (:data:`topology.WIRINGS`).
    rules : Rules
        Open rules of the router; default :class:`Rules()`.
    batch : int, optional
        Trials simulated at once (:data:`DEFAULT_BATCH`, or :data:`DRAWING_RULES_BATCH`
        under rules that draw). A speed and memory trade-off only: the results do not
        depend on it, except under rules that draw (one arbitration stream per batch).
    rows : sequence of str, optional
        Only these row labels (default: all of the paper's).
    on_input_fault : "clear" or "replace"
        What a trial of Tables II/III does when its faults reach an input: run without
        faults (default: this is what reproduces the paper's 750* and 1000* rows, means
        and standard deviations) or place a new set (the literal reading of Sec. IV's
        text). docs/papers.md has both measured.
    fault_draws : "repeated" or "distinct"
        ``k`` faults are ``k`` independent uniform draws (default; a switch drawn twice
        counts once, which reproduces Table I best) or ``k`` distinct switches.
    workers : int, optional
        Processes the batches of trials run in (default: one per core); the results
        do not depend on it (every trial draws from its own streams).
    """
    tables = _check_tables(tables)
    rules = rules or Rules()
    if batch is None:
        batch = DRAWING_RULES_BATCH if rules.draws else DEFAULT_BATCH
    wanted_rows = _check_run_options(inputs, trials, wiring, batch, fault_draws,
                                     on_input_fault, rows)
    repeated = fault_draws == "repeated"
    workers = _workers(workers)

    def keep(row):
        return wanted_rows is None or row in wanted_rows

    cells: list[dict] = []
    t1_rows = [r for r in TABLE_1_ROWS if keep(r)] if 1 in tables else []
    t23_rows = [r for r in TABLE_2_ROWS if keep(r)] if {2, 3} & set(tables) else []
    columns = []
    if 2 in tables:
        columns = list(TABLE_2_COLUMNS)
    elif 3 in tables:
        columns = ["1", "1T"]
    trials1 = trials or DEFAULT_TRIALS[1]
    trials23 = trials or DEFAULT_TRIALS[2]
    total = len(t1_rows) * trials1 + len(t23_rows) * len(columns) * trials23
    done = 0

    def tick(units, what):
        nonlocal done
        done += units
        if progress is not None:
            progress(done, total, what)

    if progress is not None:
        progress(0, total, "starting")
    if t1_rows:
        cells.extend(_table_1(t1_rows, inputs, trials1, seed, wiring, batch, tick, repeated,
                              workers))
    if t23_rows:
        results = _table_2_rows(t23_rows, columns, inputs, trials23, seed, wiring, rules,
                                batch, tick, on_input_fault, repeated, workers)
        cells.extend(_table_2_3_cells(tables, results, inputs, trials23))
    order = {1: 0, 2: 1, 3: 2}
    cells.sort(key=lambda c: order[c["table"]])
    return cells


def _workers(workers: int | None) -> int:
    """The processes to run batches in: ``workers``, or one per core."""
    if workers is None:
        return os.cpu_count() or 1
    if not isinstance(workers, int) or workers < 1:
        raise ParameterError(f"workers must be an integer >= 1, got {workers!r}")
    return workers


def _check_run_options(inputs, trials, wiring, batch, fault_draws, on_input_fault,
                       rows) -> set | None:
    """:func:`run_tables`' options checked (one-line ParameterErrors); the rows wanted
    as a set, or None for all of them."""
    check_inputs(inputs, True)
    if trials is not None and trials < 1:
        raise ParameterError(f"trials must be >= 1, got {trials}")
    if wiring not in WIRINGS:
        raise ParameterError(f"wiring must be one of {', '.join(WIRINGS)}, got {wiring!r}")
    if batch < 1:
        raise ParameterError(f"batch must be >= 1, got {batch}")
    if fault_draws not in ("distinct", "repeated"):
        raise ParameterError(f"fault_draws must be distinct or repeated, got {fault_draws!r}")
    if on_input_fault not in ("replace", "clear"):
        raise ParameterError(f"on_input_fault must be replace or clear, got {on_input_fault!r}")
    wanted_rows = set(rows) if rows is not None else None
    if wanted_rows is not None:
        unknown = wanted_rows - set(TABLE_2_ROWS)
        if unknown:
            raise ParameterError(
                f"rows must be among {', '.join(TABLE_2_ROWS)}, got {sorted(unknown)}")
    return wanted_rows


def _table_2_3_cells(tables, results: dict, inputs: int, trials: int) -> list[dict]:
    """The cells of Tables II and III (those asked for) from each row's results
    ``(steps, undelayed, faults)``: Table II the steps of every column, Table III the
    percentage never delayed of columns 1 and 1T."""
    cells = []
    for row, (steps, undelayed, faults) in results.items():
        if 2 in tables:
            for col in TABLE_2_COLUMNS:
                cells.append(_cell(2, row, col, inputs, steps[col], col, faults, trials))
        if 3 in tables:
            for col, src in (("I", "1"), ("IT", "1T")):
                cells.append(_cell(3, row, col, inputs, 100.0 * undelayed[src], col,
                                   faults, trials))
    return cells


def _modified_network(inputs, seed, trial, wiring):
    return make_network("multibutterfly", inputs, 2, modified=True,
                        rng=generator(seed, "trials", Draw.MODIFIED_WIRING, trial), seed=seed,
                        wiring=wiring)


def _table_1(rows, inputs, trials, seed, wiring, batch, tick, repeated=False, workers=1):
    """Table I: percentage of trials whose (first) fault placement reaches an input;
    the batches of trials (:func:`_table_1_batch`) run in ``workers`` processes."""
    failures = {row: np.zeros(trials, dtype=bool) for row in rows}
    spans = [(start, min(trials, start + batch)) for start in range(0, trials, batch)]
    jobs = [(rows, inputs, seed, wiring, repeated, start, stop) for start, stop in spans]
    for (start, stop), failed in zip(spans, _map(_table_1_batch, jobs, workers)):
        for row in rows:
            failures[row][start:stop] = failed[row]
        tick((stop - start) * len(rows), "Table I")
    return [_cell(1, row, "failed", inputs, 100.0 * failures[row], "failed",
                  fault_count_for(row, inputs)) for row in rows]


def _table_1_batch(rows, inputs, seed, wiring, repeated, start, stop) -> dict:
    """Trials ``start .. stop - 1`` of Table I: per row, whether each trial's faults
    reach an input."""
    nets = [_modified_network(inputs, seed, t, wiring) for t in range(start, stop)]
    heads = np.stack([net.heads for net in nets])
    epg = nets[0].edges_per_group
    out = {}
    for row in rows:
        count = fault_count_for(row, inputs)
        faulty = np.stack([fl.random_faults(net, count,
                                            rng=generator(seed, "trials",
                                                          Draw.FAULT_PLACEMENT, t, count),
                                            with_replacement=repeated)
                           for t, net in zip(range(start, stop), nets)])
        declared = fl.propagate_arrays(heads, epg, faulty, "all")
        out[row] = (declared[:, 0, :] | faulty[:, 0, :]).any(1)
    return out


def _table_2_rows(rows, columns, inputs, trials, seed, wiring, rules, batch, tick,
                  on_input_fault="replace", repeated=False, workers=1) -> dict:
    """Completion steps and never-delayed fractions of every row, per column (row ->
    ``(steps, undelayed, faults)``): the batches of trials (:func:`_rows_batch`, every
    row of a batch's trials together) run in ``workers`` processes."""
    steps = {row: {c: np.zeros(trials) for c in columns} for row in rows}
    undelayed = {row: {c: np.zeros(trials) for c in columns} for row in rows}
    random_columns = {row: list(columns) for row in rows}
    for row in [r for r in rows if r in _FIXED_ROWS]:
        # A deterministic network and problem: one run stands for every trial.
        net = _FIXED_ROWS[row](inputs)
        for col in [c for c in columns if _COLUMN_PROBLEM[c][0] == "transpose"]:
            res = route_store_forward(net, make_problems("transpose", inputs,
                                                         _COLUMN_PROBLEM[col][1]),
                                      rules, seed=seed)
            steps[row][col][:] = res.steps[0]
            undelayed[row][col][:] = res.undelayed_fraction[0]
            random_columns[row].remove(col)
            tick(trials, f"Table II {row} {col}")
    spans = [(start, min(trials, start + batch)) for start in range(0, trials, batch)]
    jobs = [(random_columns, inputs, seed, wiring, rules, on_input_fault, repeated,
             start, stop) for start, stop in spans]
    for (start, stop), done in zip(spans, _map(_rows_batch, jobs, workers)):
        for row, cols in random_columns.items():
            for col in cols:
                steps[row][col][start:stop], undelayed[row][col][start:stop] = done[row][col]
        tick((stop - start) * sum(map(len, random_columns.values())), "Table II")
    return {row: (steps[row], undelayed[row],
                  fault_count_for(row, inputs) if _row_faults(row) is not None else 0)
            for row in rows}


#: The rows whose network is fixed (no wiring drawn, no faults): row -> its network.
_FIXED_ROWS = {"0 (nor)": lambda inputs: make_network("butterfly", inputs),
               "0 (dil)": lambda inputs: make_network("dilated-butterfly", inputs)}


def _map(fn, jobs: list, workers: int):
    """``fn(*job)`` of every job, in order: in this process (``workers`` 1 or a single
    job) or in a pool of ``workers`` processes (each job's result depends on the job
    alone: every trial draws from its own streams)."""
    if workers <= 1 or len(jobs) <= 1:
        return (fn(*job) for job in jobs)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    # fork where there is one: the workers need no import of the caller's main module
    # (a script without a main guard), and they run only numpy on their job
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    pool = ProcessPoolExecutor(min(workers, len(jobs)),
                               mp_context=multiprocessing.get_context(method))
    return _drain(pool, pool.map(_call, [(fn, job) for job in jobs]))


def _drain(pool, results):
    with pool:
        yield from results


def _call(fn_job):
    fn, job = fn_job
    return fn(*job)


def _rows_batch(columns, inputs, seed, wiring, rules, on_input_fault, repeated,
                start, stop) -> dict:
    """Trials ``start .. stop - 1`` of every row of ``columns`` (row -> its columns):
    row -> column -> ``(steps, undelayed fraction)`` arrays of the trials. The rows
    "k*" of a trial share its modified network (one wiring stream per trial), each
    with its own faults."""
    out: dict = {}
    modified: list = []
    for row, cols in columns.items():
        if row in _FIXED_ROWS:        # one network for every trial
            nets = [_FIXED_ROWS[row](inputs)]
        elif _row_faults(row) is None:
            nets = [make_network("multibutterfly", inputs, 2, seed=seed, wiring=wiring,
                                 rng=generator(seed, "trials", Draw.WIRING, t))
                    for t in range(start, stop)]
        else:
            modified = modified or [_modified_network(inputs, seed, t, wiring)
                                    for t in range(start, stop)]
            nets = [_with_row_faults(net, row, inputs, seed, t, on_input_fault, repeated)
                    for t, net in zip(range(start, stop), modified)]
        out[row] = {}
        fabric = prepare_networks(nets, stop - start)   # stacked once for every column
        for col in cols:
            pattern, problems = _COLUMN_PROBLEM[col]
            res = route_store_forward(fabric, _trial_problems(pattern, inputs, problems,
                                                              seed, start, stop),
                                      rules, seed=seed)
            out[row][col] = (res.steps, res.undelayed_fraction)
    return out


def _trial_problems(pattern, inputs, problems, seed, start, stop) -> np.ndarray:
    """The problems of trials ``start .. stop - 1``, each from its own stream."""
    return np.stack([make_problems(pattern, inputs, problems,
                                   rng=generator(seed, "trials", Draw.PROBLEMS, t, problems))
                     for t in range(start, stop)])


def _with_row_faults(net, row, inputs, seed, trial, on_input_fault, repeated):
    """A trial's modified network with the faults of a "k*" row (none for "0*")."""
    faults = fault_count_for(row, inputs)
    if not faults:
        return net
    faulted, _ = _faulted_network(net, faults,
                                  generator(seed, "trials", Draw.FAULTS, trial, faults),
                                  on_input_fault, repeated)
    return faulted


def timed_run(**kwargs) -> tuple[list[dict], float]:
    """:func:`run_tables` and its wall-clock time in seconds."""
    start = time.perf_counter()
    cells = run_tables(**kwargs)
    return cells, time.perf_counter() - start
