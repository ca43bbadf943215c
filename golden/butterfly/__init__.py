"""The butterfly family: butterflies, dilated butterflies and randomly-wired splitter
networks (multibutterflies), their faults, routing models and the Leighton-Maggs (1992)
experiments. Pure Python + numpy; see NOTES.md for the API and measured results."""

from .commands import (EXPERIMENTS, KINDS, VERBS, add_arguments, build, messages_from_args,
                       network_from_args, run_model, spec_from_args)

__all__ = ["EXPERIMENTS", "KINDS", "VERBS", "add_arguments", "build", "messages_from_args",
           "network_from_args", "run_model", "spec_from_args"]
