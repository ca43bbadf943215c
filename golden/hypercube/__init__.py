"""The hypercube family (Kuszmaul 1990; e-cube and Valiant from Felperin et al. 1991):
the k-cube and its conventions (:mod:`.cube`), and the routing models built on it. Pure
Python + numpy."""

from .cube import MAX_DIMENSION, MIN_DIMENSION, check_dimension, check_routing

__all__ = ["MIN_DIMENSION", "MAX_DIMENSION", "check_dimension", "check_routing"]
