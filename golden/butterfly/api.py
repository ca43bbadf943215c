"""Plain functions behind the command line for the butterfly family.

The command line (options, progress bars, JSON printing, exit statuses) is
:mod:`fatnet.cli.butterfly`; these functions validate everything and raise
:class:`fatnet.golden.errors.ParameterError` (one line naming the parameter and the
accepted range) on bad input, and return plain data (dicts and lists of JSON-ready
values).

* :func:`spec_from_options` -> :class:`ButterflySpec` (validated options);
* :func:`build` -> the network with its fault map; :func:`build_circuit` -> the
  bit-serial network the hardware is built from (:class:`CircuitNetwork`);
* :func:`pattern_messages` -> the message set of a pattern;
* :func:`info` -> levels, switches, edges, expansion per level, fault summary;
  :func:`info_report` adds the bit-serial timing;
* :func:`route` -> store-and-forward and circuit-switched (one cycle) results of a pattern;
  :func:`route_report` runs the cycle-exact circuit model instead of the one cycle;
* :func:`experiment` -> Tables I-III cells (``fatnet.cli.butterfly.format_experiment``
  prints them);
* :func:`acceptance`, :func:`acceptance_table`, :func:`sweep` (``fatnet.cli.plots`` draws
  it) -> acceptance under load, Patel.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ..checks import check_int
from ..errors import ParameterError
from ..messages import MessageSet
from ..seeds import check_seed, derived_seed, generator
from . import faults as fl
from .circuit import load_sweep, one_cycle_acceptance, patel_acceptance
from .cyclemodel import CircuitNetwork, run_circuit
from .experiments import Draw, run_tables
from .patterns import PATTERNS, make_problems
from .store_forward import EDGE_CHOICES, QUEUES, TIES, Rules, route_store_forward
from .upfal import route_upfal, theorem_2_1_bound
from .topology import (
    DEFAULT_MAX_ATTEMPTS,
    KINDS,
    MAX_INPUTS,
    WIRINGS,
    build_network,
    check_expansion,
    check_inputs,
    expansion_report,
)

__all__ = [
    "ButterflySpec",
    "spec_from_options",
    "build",
    "build_circuit",
    "stuck_link_list",
    "pattern_messages",
    "check_problems",
    "MAX_MESSAGES",
    "info",
    "info_report",
    "route",
    "route_report",
    "experiment",
    "acceptance",
    "acceptance_table",
    "sweep",
    "MAX_FAULT_PLACEMENTS",
    "MAX_MULTIPLICITY",
]

#: Sec. IV re-places faults that reach an input; this many tries at most.
MAX_FAULT_PLACEMENTS = 10_000

#: The most edges per direction (d) of a network.
MAX_MULTIPLICITY = 64


@dataclass(frozen=True)
class ButterflySpec:
    """Validated options of one butterfly-family network (see :func:`spec_from_options`)."""

    kind: str
    inputs: int
    multiplicity: int
    modified: bool = False
    seed: int = 0
    wiring: str = "uniform"
    faults: int | None = None
    fault_rate: float | None = None
    fault_rule: str = "all"
    adversary: str | None = None
    replace_faults: bool = True
    alpha: float | None = None
    beta: float | None = None
    max_attempts: int = DEFAULT_MAX_ATTEMPTS

    @property
    def interior_switches(self) -> int:
        """Interior switches: ``(log2 N - 1) * N`` for every kind."""
        return (self.inputs.bit_length() - 2) * self.inputs

    def as_dict(self) -> dict:
        return asdict(self)


def spec_from_options(kind: str, inputs: int = 1024, multiplicity: int | None = None,
                      faults: int | None = None, fault_rate: float | None = None,
                      modified: bool = False, seed: int = 0, wiring: str = "uniform",
                      fault_rule: str = "all", adversary: str | None = None,
                      replace_faults: bool = True, alpha: float | None = None,
                      beta: float | None = None,
                      max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> ButterflySpec:
    """Validate the options of ``fatnet info|route <kind>``.

    Parameters
    ----------
    kind : "butterfly", "dilated-butterfly" or "multibutterfly"
    inputs : int
        A power of two in [4, 65536] ([8, 65536] when ``modified``).
    multiplicity : int, optional
        ``d``; default 1 for the butterfly, 2 otherwise.
    faults, fault_rate : optional
        A count of random interior faults, or a probability per interior switch (not
        both); with ``adversary`` the count is placed by that adversary instead.
    modified : bool
        The "*" network of Sec. IV.
    seed : int
        Wiring, faults and patterns all derive from it.
    wiring : str
        Random wiring of a multibutterfly (``uniform``, ``maps``,
        ``butterfly-plus-maps``).
    fault_rule : "all", "half" or "erase"
        Propagation rule (Sec. IV's, generalised; Sec. III's at-least-half), or Sec.
        III-A's erasure then at-least-half propagation (needs ``alpha`` and ``beta``,
        which the wiring is then required to have).
    adversary : str, optional
        ``one-splitter``, ``propagate`` or ``spread``.
    replace_faults : bool
        Sec. IV: place random faults again while any reaches an input.
    alpha, beta : float, optional
        Require this expansion of every splitter (the wiring is retried up to
        ``max_attempts`` times).
    """
    if kind not in KINDS:
        raise ParameterError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    check_inputs(inputs, modified)
    seed = check_seed(seed)     # numpy refuses a negative one deep inside the wiring
    if multiplicity is None:
        multiplicity = 1 if kind == "butterfly" else 2
    if (not isinstance(multiplicity, (int, np.integer)) or multiplicity < 1
            or multiplicity > MAX_MULTIPLICITY):
        raise ParameterError(f"multiplicity must be an integer in [1, {MAX_MULTIPLICITY}], "
                             f"got {multiplicity}")
    if kind == "butterfly" and multiplicity != 1:
        raise ParameterError(
            f"multiplicity must be 1 for kind butterfly (use dilated-butterfly), "
            f"got {multiplicity}")
    if kind == "dilated-butterfly" and multiplicity < 2:
        raise ParameterError(
            f"multiplicity must be in [2, {MAX_MULTIPLICITY}] for kind dilated-butterfly, got "
            f"{multiplicity}")
    if wiring not in WIRINGS:
        raise ParameterError(f"wiring must be one of {', '.join(WIRINGS)}, got {wiring!r}")
    if fault_rule not in fl.RULES + ("erase",):
        raise ParameterError(
            f"fault rule must be one of {', '.join(fl.RULES + ('erase',))}, got {fault_rule!r}")
    if fault_rule == "erase" and (alpha is None or beta is None):
        raise ParameterError("fault rule erase (Sec. III-A) needs alpha and beta")
    interior = (inputs.bit_length() - 2) * inputs
    if faults is not None and fault_rate is not None:
        raise ParameterError("give at most one of faults and fault_rate")
    if faults is not None and not 0 <= faults <= interior:
        raise ParameterError(
            f"faults must be in [0, {interior}] (the interior switches of a {inputs}-input "
            f"network), got {faults}")
    if fault_rate is not None and not 0.0 <= fault_rate <= 1.0:
        raise ParameterError(f"fault rate must be in [0, 1], got {fault_rate}")
    if adversary is not None:
        if adversary not in fl.ADVERSARIES:
            raise ParameterError(
                f"adversary must be one of {', '.join(fl.ADVERSARIES)}, got {adversary!r}")
        if faults is None:
            raise ParameterError("an adversary needs a fault count (faults)")
    if (alpha is None) != (beta is None):
        raise ParameterError("give both alpha and beta (the expansion to require), or neither")
    # without a requested expansion only max_attempts is checked (placeholders pass)
    check_expansion(0.5 if alpha is None else alpha, 1.0 if beta is None else beta,
                    max_attempts)
    return ButterflySpec(kind=kind, inputs=int(inputs), multiplicity=int(multiplicity),
                         modified=bool(modified), seed=int(seed), wiring=wiring,
                         faults=faults, fault_rate=fault_rate, fault_rule=fault_rule,
                         adversary=adversary, replace_faults=replace_faults, alpha=alpha,
                         beta=beta, max_attempts=int(max_attempts))


def _expansion(spec: ButterflySpec) -> tuple[float, float]:
    """``(alpha, beta)`` of a spec whose wiring, fault rule or bound needs them."""
    if spec.alpha is None or spec.beta is None:
        raise ParameterError("this needs the expansion: give both alpha and beta")
    return spec.alpha, spec.beta


def build(spec: ButterflySpec):
    """The network of ``spec`` with its fault map (``net.faults``; None without faults).

    Returns (network, placements): how many random fault placements were drawn (Sec. IV
    re-places them while one reaches an input, if ``spec.replace_faults``).
    """
    expansion = _expansion(spec) if spec.alpha is not None else None
    net = build_network(spec.kind, spec.inputs, spec.multiplicity, spec.modified, spec.seed,
                        spec.wiring, expansion, spec.max_attempts)
    if spec.faults is None and spec.fault_rate is None:
        return net, 0
    if spec.adversary is not None:
        if spec.faults is None:
            raise ParameterError("an adversary needs a fault count (faults)")
        faulty = fl.adversarial_faults(net, spec.faults, spec.adversary)
    else:
        faulty = None
    if spec.fault_rule == "erase":
        # Sec. III-A: erasure decides what survives; faults are never re-placed.
        if faulty is None:
            faulty = fl.random_faults(net, spec.faults, spec.fault_rate,
                                      rng=generator(spec.seed, "faults"))
        return net.with_faults(fl.erase(net, faulty, *_expansion(spec))), 1
    if faulty is not None:
        return net.with_faults(fl.propagate(net, faulty, spec.fault_rule)), 1
    rng = generator(spec.seed, "faults")
    tries = MAX_FAULT_PLACEMENTS if spec.replace_faults else 1
    for attempt in range(1, tries + 1):
        faulty = fl.random_faults(net, spec.faults, spec.fault_rate, rng=rng)
        fmap = fl.propagate(net, faulty, spec.fault_rule)
        if not fmap.reaches_inputs or not spec.replace_faults:
            return net.with_faults(fmap), attempt
    raise ParameterError(
        f"faults must be fewer: no placement of {spec.faults or spec.fault_rate} faults "
        f"kept every input in {MAX_FAULT_PLACEMENTS} tries (inputs {spec.inputs})")


def build_circuit(spec: ButterflySpec, payload_bits: int = 8,
                  link_stages: int = 0, start_stages: int = 0,
                  stuck_wires=None) -> CircuitNetwork:
    """The bit-serial network of a spec (with its fault map): the one structure the
    hardware is built from; ``link_stages`` registers on every switch-to-switch link,
    ``start_stages`` register stages from the start strobe to the switches,
    ``stuck_wires`` the links stuck at 0 or 1 (``{(level, row, wire): value}``)."""
    net, _ = build(spec)
    return CircuitNetwork(net, payload_bits, spec=spec, link_stages=link_stages,
                          start_stages=start_stages, stuck_wires=stuck_wires)


#: Most messages a pattern may hold in all (problems x inputs): 2^22. Store-and-forward
#: routes every problem at once, so its arrays grow with the messages: `fatnet route`
#: peaks at about 1.5 GiB at this limit (docs/butterfly.md), under the 2 GiB it may use.
MAX_MESSAGES = 1 << 22


def check_problems(problems: int, inputs: int) -> None:
    """Refuse, in one line, a problem count below 1 or past :data:`MAX_MESSAGES`."""
    high = max(1, MAX_MESSAGES // inputs)
    if not 1 <= problems <= high:
        raise ParameterError(f"problems must be in [1, {high}] ({inputs} inputs, at most "
                             f"2^22 messages in all), got {problems}")


def pattern_messages(circuit: CircuitNetwork, pattern: str = "random-destinations",
                     problems: int = 1, hot_fraction: float = 0.1,
                     seed: int = 0) -> MessageSet:
    """The pattern's messages, ``problems`` per input, inputs in order within each (the
    destinations drawn from ``seed``, as :func:`route` draws them)."""
    check_problems(problems, circuit.n_inputs)
    if pattern not in PATTERNS:
        raise ParameterError(f"pattern must be one of {', '.join(PATTERNS)}, "
                             f"got {pattern!r}")
    n = circuit.n_inputs
    rng = generator(seed, "traffic")
    dst = make_problems(pattern, n, problems, rng=rng, hot_fraction=hot_fraction)
    src = np.tile(np.arange(n), problems)
    return MessageSet.from_pairs(src, dst.reshape(-1), circuit.payload_bits, seed)


def _finite(x: float):
    return None if x is None or (isinstance(x, float) and math.isinf(x)) else x


def info(spec: ButterflySpec, alpha: float = 1 / 16, exact_limit: int | None = None) -> dict:
    """Levels, switches, edges, measured expansion per level and the fault summary.

    ``alpha`` is the set-size fraction the expansion is measured at (``spec.alpha`` if
    the spec requires an expansion). ``beta`` is None where every set is vacuous.
    """
    net, placements = build(spec)
    a = spec.alpha if spec.alpha is not None else alpha
    report = net.expansion or expansion_report(net, a, exact_limit, spec.seed)
    out = net.summary()
    out["wiring"] = net.wiring
    out["spec"] = spec.as_dict()
    out["expansion"] = {"alpha": a, "levels": [
        {**r, "beta": _finite(r["beta"])} for r in report]}
    out["faults"] = None if net.faults is None else {
        **net.faults.summary(), "placements": placements}
    if net.faults is not None and spec.fault_rule == "erase":
        out["faults"]["theorem_3_4"] = fl.theorem_3_4_bounds(
            spec.inputs, int(net.faults.faulty.sum()), *_expansion(spec),
            spec.multiplicity)
    return out


def stuck_link_list(circuit) -> list[list[int]]:
    """The stuck links as ``[level, row, wire, value]`` lists, sorted (reports and the
    manifest)."""
    return [[*key, value] for key, value in sorted(circuit.stuck_wires.items())]


def info_report(spec: ButterflySpec, payload_bits: int = 8, link_stages: int = 0,
                start_stages: int = 0, stuck_wires=None) -> dict:
    """:func:`info`, and the bit-serial timing of the network (``bit_serial``: address
    and payload bits, arrival, acknowledgment latency, delivery-cycle length, the stuck
    links)."""
    doc = info(spec)
    circuit = build_circuit(spec, payload_bits, link_stages, start_stages, stuck_wires)
    doc["bit_serial"] = {"header_bits": circuit.header_bits,
                         "payload_bits": circuit.payload_bits,
                         "link_stages": circuit.link_stages,
                         "start_stages": circuit.start_stages,
                         "stuck_links": stuck_link_list(circuit),
                         "arrival": circuit.arrival, "ack_latency": circuit.ack_latency,
                         "cycle_length_bits": circuit.cycle_length}
    return doc


def _rules(queue, edge_choice, tie, threshold) -> Rules:
    for name, value, allowed in (("queue", queue, QUEUES), ("edge choice", edge_choice,
                                                              EDGE_CHOICES),
                                 ("tie", tie, TIES)):
        if value not in allowed:
            raise ParameterError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return Rules(threshold=threshold, queue=queue, edge_choice=edge_choice, tie=tie)


def route(spec: ButterflySpec, pattern: str = "random-destinations", problems: int = 1,
          hot_fraction: float = 0.1, pattern_seed: int | None = None,
          queue: str = "fifo", edge_choice: str = "first", tie: str = "in-edge",
          threshold: int = 4, arbitration: str = "random",
          upfal_waves: int | None = None, net=None, one_cycle: bool = True,
          progress=None) -> dict:
    """Route a pattern: store-and-forward (Sec. IV) and one circuit-switched cycle.

    Messages whose input is faulty, declared faulty or erased, or whose output is
    erased, are reported lost (never injected); every other message is delivered
    exactly once (store-and-forward) or delivered/blocked (one circuit cycle).
    With ``upfal_waves = L`` the problems (permutations, fault-free network) are also
    routed by Upfal's wave algorithm; with ``spec.alpha``/``beta`` its Theorem 2.1 bound
    is reported beside the steps. ``net``: the network of ``spec`` if the caller has
    built it already; ``one_cycle=False`` leaves out the one-cycle circuit result (for
    a caller that runs the cycle-exact model instead); ``progress(done, total, what)``
    is told the messages store-and-forward has delivered.
    """
    if pattern not in PATTERNS:
        raise ParameterError(f"pattern must be one of {', '.join(PATTERNS)}, got {pattern!r}")
    check_problems(problems, spec.inputs)
    rules = _rules(queue, edge_choice, tie, threshold)
    if net is None:
        net, _ = build(spec)
    rng = generator(spec.seed if pattern_seed is None else pattern_seed, "traffic")
    probs = make_problems(pattern, spec.inputs, problems, rng=rng, hot_fraction=hot_fraction)
    offered = int(probs.size)
    unusable = net.blocked()
    cut = unusable[0][None, :] | unusable[-1][probs]     # faulty input or erased output
    lost = int(cut.sum())
    probs = np.where(cut, -1, probs)
    sf = route_store_forward(net, probs, rules, seed=spec.seed, progress=progress)
    delivered = int(sf.delivered[0])
    assert delivered + lost == offered  # conservation: delivered exactly once or lost
    upfal = None
    if upfal_waves is not None:
        res = route_upfal(net, probs, L=upfal_waves)
        upfal = {"L": upfal_waves, "steps": res["steps"], "stages": res["stages"],
                 "delivered": res["delivered"], "colours": res["colours"]}
        if spec.alpha is not None:
            upfal["theorem_2_1"] = theorem_2_1_bound(spec.inputs, spec.multiplicity,
                                                     *_expansion(spec), upfal_waves,
                                                     problems)
    out = {
        "spec": spec.as_dict(), "pattern": pattern, "problems": problems,
        "messages": offered, "lost_at_faults": lost,
        "store_and_forward": {
            "delivered": delivered, "steps": int(sf.steps[0]),
            "never_delayed": int(sf.undelayed[0]),
            "never_delayed_fraction": float(sf.undelayed_fraction[0]),
            "mean_latency": float(sf.delivery_step[sf.delivery_step > 0].mean())
            if delivered else None,
            "waits_by_level": sf.waits_by_level.tolist(),
            "rules": asdict(rules),
        },
        "upfal": upfal,
    }
    if one_cycle:
        circuit = one_cycle_acceptance(net, probs[0], arbitration, seed=spec.seed)
        out["circuit_one_cycle"] = {
            "problem": 0, "offered": int(circuit["offered"][0]),
            "delivered": int(circuit["delivered"][0]),
            "blocked": int(circuit["offered"][0] - circuit["delivered"][0]),
            "acceptance": float(circuit["acceptance"][0]), "arbitration": arbitration,
        }
    return out


def route_report(spec: ButterflySpec, circuit: CircuitNetwork,
                 pattern: str = "random-destinations", problems: int = 1,
                 hot_fraction: float = 0.1, queue: str = "fifo", edge_choice: str = "first",
                 tie: str = "in-edge", max_cycles: int = 1000, progress=None) -> dict:
    """:func:`route` (store-and-forward) on ``circuit``'s network, and the cycle-exact
    circuit-switched run of the same messages until all are delivered (``circuit``: the
    run's report, the first cycle's offered and delivered messages and its acceptance);
    ``progress(done, total, what)`` is told the messages each model has delivered."""
    doc = route(spec, pattern, problems, hot_fraction, queue=queue,
                edge_choice=edge_choice, tie=tie, net=circuit.network, one_cycle=False,
                progress=progress)
    ms = pattern_messages(circuit, pattern, problems, hot_fraction, spec.seed)
    report = run_circuit(circuit, ms, max_cycles=max_cycles, progress=progress)
    # the first cycle sends the first message of every input that has one
    offered = len(np.unique(ms.src)) if report.cycles else 0
    accepted = offered - report.losses_per_cycle[0] if report.cycles else 0
    doc["circuit"] = {**report.to_dict(), "first_cycle_offered": offered,
                      "first_cycle_delivered": accepted,
                      "first_cycle_acceptance": accepted / offered if offered else None}
    return doc


def experiment(table="all", inputs: int = 1024, trials: int | None = None, seed: int = 0,
               progress=None, wiring: str = "butterfly-plus-maps",
               on_input_fault: str = "clear", fault_draws: str = "repeated") -> list[dict]:
    """Tables I-III of Leighton-Maggs (see :func:`experiments.run_tables`).

    ``table``: 1, 2, 3 or "all"; ``progress(done, total, description)``. The defaults
    are the readings that reproduce the paper; ``wiring="uniform"``,
    ``on_input_fault="replace"``, ``fault_draws="distinct"`` are the literal ones.
    """
    if not isinstance(inputs, (int, np.integer)) or inputs < 8 or inputs > MAX_INPUTS \
            or inputs & (inputs - 1):
        raise ParameterError(f"inputs must be a power of two in [8, {MAX_INPUTS}], got {inputs}")
    return run_tables(table, inputs=inputs, trials=trials, seed=seed, progress=progress,
                      wiring=wiring, on_input_fault=on_input_fault, fault_draws=fault_draws)


def _check_load_and_trials(load: float, trials: int) -> None:
    if not 0 < load <= 1:
        raise ParameterError(f"load must be in (0, 1], got {load}")
    if trials < 1:
        raise ParameterError(f"trials must be >= 1, got {trials}")


def acceptance(kind: str, inputs: int = 1024, multiplicity: int | None = None,
               trials: int = 100, seed: int = 0, load: float = 1.0,
               node_capacity: int | None = None, arbitration: str = "random",
               edges_only: bool = False,
               wiring: str = "uniform") -> dict:
    """Acceptance of one circuit-switched cycle at ``load``; the butterfly's Patel value.

    ``node_capacity`` defaults to ``d`` (1 for the butterfly: Patel's delta network);
    ``edges_only`` lifts it: only edges are exclusive, as in the cycle-exact model (an
    output row then absorbs one message per incoming edge).
    """
    spec = spec_from_options(kind, inputs, multiplicity, seed=seed, wiring=wiring)
    _check_load_and_trials(load, trials)
    cap = None if edges_only else (spec.multiplicity if node_capacity is None
                                   else node_capacity)
    rng = generator(seed, "trials", Draw.ACCEPTANCE)
    nets = ([build_network(kind, inputs, spec.multiplicity, wiring=wiring,
                           seed=derived_seed(seed, "trials", Draw.ACCEPTANCE_WIRING, t))
             for t in range(trials)] if kind == "multibutterfly"
            else build_network(kind, inputs, spec.multiplicity))
    dest = make_problems("random-destinations", inputs, trials, rng=rng)
    dest[rng.random(dest.shape) >= load] = -1
    res = one_cycle_acceptance(nets, dest, arbitration, seed=seed, node_capacity=cap)
    n = inputs.bit_length() - 1
    return {"kind": kind, "inputs": inputs, "multiplicity": spec.multiplicity,
            "load": load, "trials": trials, "node_capacity": cap,
            "acceptance_mean": float(res["acceptance"].mean()),
            "acceptance_std": float(res["acceptance"].std(ddof=1)) if trials > 1 else 0.0,
            "patel": patel_acceptance(n, load) if spec.multiplicity == 1 else None}


def acceptance_table(inputs: int = 64, trials: int = 300, seed: int = 0,
                     load: float = 1.0, progress=None) -> list[dict]:
    """One circuit-switched cycle under load, random destinations: the fraction of
    messages delivered, for the three networks, in the cycle-exact model's rules
    (wire-order arbitration; an output row absorbs one message per incoming edge) and,
    for the butterfly, as Patel's delta network of 2 x 2 crossbars (a switch passes one
    message), beside Patel's recursion. One row per network and model (``model``);
    ``progress(done, total, what)``, if given, is called before each row."""
    _check_load_and_trials(load, trials)   # before the first row's progress
    rows: list[dict] = []
    networks = (("butterfly", 1, None), ("butterfly", 1, 1),
                ("dilated-butterfly", 2, None), ("multibutterfly", 2, None))
    for kind, d, cap in networks:
        if progress is not None:
            progress(len(rows), len(networks), kind)
        r = acceptance(kind, inputs, d, trials, seed, load,
                       node_capacity=cap, arbitration="wire", edges_only=cap is None)
        r["model"] = "delta network (Patel)" if cap == 1 else "cycle-exact rules"
        rows.append(r)
    return rows


def sweep(inputs: int = 256, trials: int = 20, seed: int = 0, loads=None,
          multiplicity: int = 2, wiring: str = "butterfly-plus-maps",
          progress=None) -> list[dict]:
    """Throughput/latency against offered load for the three networks (the rows
    :func:`fatnet.cli.plots.plot_sweep` draws); ``progress(done, total, what)`` as in
    :func:`load_sweep`."""
    check_inputs(inputs)
    check_seed(seed)
    check_int("trials", trials, 1)
    loads = loads or [0.1 * k for k in range(1, 11)]
    return load_sweep(inputs=inputs, loads=loads, trials=trials, seed=seed,
                      multiplicity=multiplicity, wiring=wiring, progress=progress)
