"""Faults: placement, propagation (Sec. IV) and erasure (Sec. III-A).

Placement
---------
Faults go to *interior* switches only (not inputs, not outputs). :func:`random_faults`
places a given count uniformly without repetition, or faults each interior switch
independently with a probability. :func:`adversarial_faults` places them on purpose:

* ``"one-splitter"``: all faults among the inputs of one splitter (the first rows of
  block 0 at the chosen level, default the middle level);
* ``"propagate"``: the upper outputs of the 4-input splitters of the last interior level,
  block after block. Two faults declare a whole 4-input splitter faulty, and then the
  declaration climbs to the inputs under the plain propagation rule: the placement that
  propagates farthest per fault;
* ``"spread"``: one fault per block of the last interior level, block after block.

Propagation (``rule="all"``, the paper's Sec. IV generalised)
--------------------------------------------------------------
Working backward from the last interior level to the inputs, a switch that is not
faulty is *declared faulty* when, for some direction (group), **all** the edges of that
direction lead to faulty or declared-faulty switches. For ``d = 2`` that is the paper's
"both of its up edges or both of its down edges". Edges into outputs never count
(outputs are never faulty). A message can always leave a switch that is not declared
faulty, so greedy routing never gets stuck.

Erasure (``rule="half"``, Sec. III-A)
------------------------------------
Every splitter (block) with more than an ``epsilon`` fraction of *placed* faults among
its inputs is erased with all its descendants (the same rows at every later level,
outputs included), ``epsilon = 2 alpha (beta' - 1)``, ``beta' = beta - floor(d / 2)``.
Then, backward from the outputs, a switch is declared faulty when **at least half** of
its edges of some direction lead to faulty or declared-faulty switches that were not
erased. What remains: inputs neither faulty, declared nor erased, and outputs not
erased; Theorem 3.4 bounds them by ``N - f / (beta' - 1)`` and
``N - f / (2 alpha (beta' - 1))``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from ..seeds import generator
from .topology import SplitterNetwork

__all__ = [
    "RULES",
    "ADVERSARIES",
    "FaultMap",
    "random_faults",
    "adversarial_faults",
    "propagate",
    "propagate_arrays",
    "erase",
    "theorem_3_4_bounds",
    "apply_faults",
]

RULES = ("all", "half")
ADVERSARIES = ("one-splitter", "propagate", "spread")


@dataclass
class FaultMap:
    """Which switches are faulty, declared faulty or erased, per internal level.

    Attributes
    ----------
    faulty : (levels, N) bool
        Placed faults (interior switches only).
    declared : (levels, N) bool
        Switches declared faulty by propagation (never also in ``faulty``).
    erased : (levels, N) bool
        Switches erased by Sec. III-A's procedure (all False under ``rule="all"``).
    rule : str
        ``"all"`` or ``"half"`` (module docstring).
    """

    faulty: np.ndarray
    declared: np.ndarray
    erased: np.ndarray
    rule: str = "all"
    epsilon: float | None = None

    def unusable(self) -> np.ndarray:
        """Switches no message may enter."""
        return self.faulty | self.declared | self.erased

    @property
    def reaches_inputs(self) -> bool:
        """Some input is faulty, declared faulty or erased (Table I's failure)."""
        return bool(self.unusable()[0].any())

    @property
    def surviving_inputs(self) -> np.ndarray:
        """Rows of the inputs that remain usable."""
        return np.flatnonzero(~self.unusable()[0])

    @property
    def surviving_outputs(self) -> np.ndarray:
        """Rows of the outputs that remain (not erased)."""
        return np.flatnonzero(~self.erased[-1])

    def summary(self) -> dict:
        """Counts per level and what survives, as plain data."""
        return {
            "rule": self.rule,
            "faults": int(self.faulty.sum()),
            "faulty_per_level": self.faulty.sum(1).tolist(),
            "declared_per_level": self.declared.sum(1).tolist(),
            "erased_per_level": self.erased.sum(1).tolist(),
            "surviving_inputs": int(self.surviving_inputs.size),
            "surviving_outputs": int(self.surviving_outputs.size),
            "reaches_inputs": self.reaches_inputs,
        }


def _interior_mask(net: SplitterNetwork) -> np.ndarray:
    mask = np.zeros((net.num_levels, net.inputs), dtype=bool)
    mask[1:-1] = True
    return mask


def random_faults(net: SplitterNetwork, count: int | None = None, rate: float | None = None,
                  rng: np.random.Generator | None = None, seed: int = 0,
                  with_replacement: bool = False) -> np.ndarray:
    """Random faulty interior switches: ``count`` of them uniformly, or each with ``rate``.

    With ``with_replacement`` the ``count`` faults are ``count`` independent uniform draws
    (a switch drawn twice is one fault, so fewer than ``count`` may result).
    Returns a ``(levels, N)`` bool array (placed faults only).
    """
    if (count is None) == (rate is None):
        raise ParameterError("give exactly one of faults (a count) and fault_rate")
    rng = rng if rng is not None else generator(seed, "faults")
    interior = net.interior_switches
    faulty = np.zeros((net.num_levels, net.inputs), dtype=bool)
    if count is not None:
        if not 0 <= count <= interior:
            raise ParameterError(
                f"faults must be in [0, {interior}] (the interior switches), got {count}")
        chosen = (rng.integers(0, interior, size=count) if with_replacement
                  else rng.choice(interior, size=count, replace=False))
        inner = faulty[1:-1].reshape(-1)          # a view: the slice is contiguous
        inner[chosen] = True
    else:
        assert rate is not None   # the check above: exactly one of count and rate
        if not 0.0 <= rate <= 1.0:
            raise ParameterError(f"fault_rate must be in [0, 1], got {rate}")
        faulty[1:-1] = rng.random((net.depth - 1, net.inputs)) < rate
    return faulty


def adversarial_faults(net: SplitterNetwork, count: int, mode: str = "propagate",
                       level: int | None = None) -> np.ndarray:
    """Faults placed by an adversary (module docstring); deterministic.

    ``level`` (paper label) is used by ``"one-splitter"``.
    """
    if mode not in ADVERSARIES:
        raise ParameterError(f"adversary must be one of {', '.join(ADVERSARIES)}, got {mode!r}")
    if not 0 <= count <= net.interior_switches:
        raise ParameterError(
            f"faults must be in [0, {net.interior_switches}] (the interior switches), "
            f"got {count}")
    faulty = np.zeros((net.num_levels, net.inputs), dtype=bool)
    last = net.depth - 1                               # last interior internal level
    if mode == "one-splitter":
        i = net.depth // 2 if level is None else net.level_index(level)
        if not 1 <= i <= last:
            raise ParameterError(
                f"level must be interior, in [{net.level_label(1)}, {net.level_label(last)}],"
                f" got {net.level_label(i)}")
        m = int(net.block_size[i])
        if count > m:
            raise ParameterError(
                f"faults must be in [0, {m}] for one splitter at level {net.level_label(i)},"
                f" got {count}")
        faulty[i, :count] = True
        return faulty
    if mode == "spread":
        # One fault per 4-row block of the last interior level, then the next row of each.
        order = (np.arange(net.inputs).reshape(-1, 4).T).ravel()
        rows = order[:count] if count <= net.inputs else None
        if rows is None:
            return _fill_levels(faulty, count, last)
        faulty[last, rows] = True
        return faulty
    # "propagate": the two upper rows of every 4-row block of the last interior level
    # (the upper outputs of a 4-input splitter), block after block, then the lower rows.
    blocks = np.arange(net.inputs).reshape(-1, 4)
    order = np.concatenate([blocks[:, :2].ravel(), blocks[:, 2:].ravel()])
    if count <= net.inputs:
        faulty[last, order[:count]] = True
        return faulty
    return _fill_levels(faulty, count, last)


def _fill_levels(faulty: np.ndarray, count: int, last: int) -> np.ndarray:
    """Fill whole levels from the last interior one backward (for very large counts)."""
    inputs = faulty.shape[1]
    for i in range(last, 0, -1):
        take = min(count, inputs)
        faulty[i, :take] = True
        count -= take
        if count == 0:
            break
    return faulty


def propagate_arrays(heads: np.ndarray, edges_per_group: np.ndarray, faulty: np.ndarray,
                     rule: str = "all", erased: np.ndarray | None = None) -> np.ndarray:
    """Backward propagation on stacked arrays (vectorised over leading trial axes).

    Parameters
    ----------
    heads : (..., L, N, K) int
        Edge heads (``-1`` padding), as :attr:`SplitterNetwork.heads`.
    edges_per_group : (L,) int
    faulty : (..., L + 1, N) bool
        Placed faults.
    rule : "all" or "half"
    erased : (..., L + 1, N) bool, optional
        Erased switches: they never count as faulty heads and are never declared.

    Returns
    -------
    declared : (..., L + 1, N) bool
    """
    if rule not in RULES:
        raise ParameterError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
    depth = heads.shape[-3]
    declared = np.zeros(faulty.shape, dtype=bool)
    if erased is None:
        erased = np.zeros(faulty.shape, dtype=bool)
    for i in range(depth - 1, -1, -1):
        bad_next = (faulty[..., i + 1, :] | declared[..., i + 1, :]) & ~erased[..., i + 1, :]
        h = heads[..., i, :, :]
        valid = h >= 0
        hit = np.take_along_axis(bad_next[..., None, :],
                                 np.where(valid, h, 0).reshape(h.shape[:-2] + (1, -1)),
                                 axis=-1).reshape(h.shape) & valid
        d = int(edges_per_group[i])
        # Every row of a level has the same number of real slots (the rest is padding).
        groups = int(valid.reshape(-1, h.shape[-1])[0].sum()) // d
        per_group = hit[..., :groups * d].reshape(h.shape[:-1] + (groups, d)).sum(-1)
        if rule == "all":
            trip = (per_group == d).any(-1)
        else:
            trip = (2 * per_group >= d).any(-1)
        declared[..., i, :] = trip & ~faulty[..., i, :] & ~erased[..., i, :]
    return declared


def propagate(net: SplitterNetwork, faulty: np.ndarray, rule: str = "all") -> FaultMap:
    """Sec. IV propagation (``rule="all"``) or the "at least half" rule without erasure."""
    faulty = np.asarray(faulty, dtype=bool)
    if faulty.shape != (net.num_levels, net.inputs):
        raise ParameterError(
            f"faulty must have shape {(net.num_levels, net.inputs)}, got {faulty.shape}")
    if faulty[0].any() or faulty[-1].any():
        raise ParameterError("faults must be at interior switches (not inputs or outputs)")
    declared = propagate_arrays(net.heads, net.edges_per_group, faulty, rule)
    return FaultMap(faulty=faulty.copy(), declared=declared,
                    erased=np.zeros_like(faulty), rule=rule)


def apply_faults(net: SplitterNetwork, faulty: np.ndarray, rule: str = "all") -> SplitterNetwork:
    """The network carrying the propagated fault map of ``faulty``."""
    return net.with_faults(propagate(net, faulty, rule))


def epsilon_of(alpha: float, beta: float, d: int) -> tuple[float, float]:
    """``(epsilon, beta')`` of Sec. III-A; ``beta`` must exceed ``floor(d / 2) + 1``."""
    beta_prime = beta - d // 2
    if not 0 < alpha <= 1:
        raise ParameterError(f"alpha must be in (0, 1], got {alpha}")
    if beta_prime <= 1:
        raise ParameterError(
            f"beta must be > floor(d/2) + 1 = {d // 2 + 1} for multiplicity {d}, got {beta}")
    return 2 * alpha * (beta_prime - 1), beta_prime


def erase(net: SplitterNetwork, faulty: np.ndarray, alpha: float, beta: float,
          epsilon: float | None = None) -> FaultMap:
    """Sec. III-A: erase splitters with too many faulty inputs, then propagate ("half").

    ``epsilon`` defaults to ``2 alpha (beta' - 1)``; the network's splitters should have
    ``(alpha, beta)`` expansion for Theorem 3.4's bounds to apply.
    """
    faulty = np.asarray(faulty, dtype=bool)
    eps, _ = epsilon_of(alpha, beta, net.multiplicity)
    if epsilon is not None:
        eps = epsilon
    erased = np.zeros_like(faulty)
    for i in range(net.depth):
        m = int(net.block_size[i])
        per_block = faulty[i].reshape(-1, m).sum(1)
        for b in np.flatnonzero(per_block > eps * m):
            erased[i:, b * m:(b + 1) * m] = True
    declared = propagate_arrays(net.heads, net.edges_per_group, faulty, "half", erased)
    return FaultMap(faulty=faulty.copy(), declared=declared, erased=erased, rule="half",
                    epsilon=eps)


def theorem_3_4_bounds(inputs: int, faults: int, alpha: float, beta: float, d: int) -> dict:
    """Theorem 3.4's and Lemma 3.1/3.3's bounds for ``faults`` adversarial faults."""
    eps, beta_prime = epsilon_of(alpha, beta, d)
    return {
        "epsilon": eps, "beta_prime": beta_prime,
        "min_inputs": inputs - faults / (beta_prime - 1),
        "min_outputs": inputs - faults / eps,
        "max_erased_outputs": faults / eps,                     # Lemma 3.1
        "max_propagated_per_level": faults / (beta_prime - 1),  # Lemma 3.3
    }
