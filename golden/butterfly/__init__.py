"""The butterfly family: butterflies, dilated butterflies and randomly-wired splitter
networks (multibutterflies), their faults, routing models and the Leighton-Maggs (1992)
experiments. Pure Python + numpy; docs/butterfly.md has the model's readings and measured results.

:func:`build` makes the bit-serial network the hardware is built from
(:class:`CircuitNetwork`) from a :class:`ButterflySpec` (:func:`spec_from_options`); the
family's command line is :mod:`fatnet.cli.butterfly`."""

from .api import ButterflySpec, spec_from_options
from .api import build_circuit as build
from .cyclemodel import CircuitNetwork, masked_network, run_circuit, run_masked

__all__ = ["ButterflySpec", "CircuitNetwork", "build", "masked_network", "run_circuit",
           "run_masked", "spec_from_options"]
