"""The toy family: one n x n crossbar, a whole family in a few dozen lines per layer.

The worked example of docs/layout.md, "Adding a family": golden.py (model),
hardware.py, testbench.py, commands.py (command line and the Family), test_toy.py.
"""
