"""The self-test's headers computed in hardware (each family's ``bist_header`` hook)
against the model's: for every source and destination of several networks of every
family, the hook's expression, simulated (Amaranth's simulator), is the header the
model's stream of that message carries, bit for bit, its length included.

The networks: small ones of every family, kind and algorithm the self-test takes, and
random ones drawn from one seed each (Hypothesis draws the seeds, derandomised so the
regression is repeatable); a failure names the network, the source and destination, and
the command that replays it.
"""

from __future__ import annotations

import numpy as np
import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator

from fatnet.api.registry import family_of, get_family
from fatnet.cli.main import build_parser
from fatnet.golden.errors import ParameterError
from fatnet.sim.bist import make_plan, model_header, terminal_count

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

HERE = "tests/test_bist_header.py"
SEEDS = st.integers(0, 2 ** 32 - 1)
PROPERTY = settings(max_examples=8, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))

#: Networks of every family, kind and algorithm the self-test takes, as `fatnet gen`
#: options: several sizes each.
NETWORKS = [
    "butterfly --inputs 4", "butterfly --inputs 16 --link-stages 1",
    "dilated-butterfly --inputs 8", "multibutterfly --inputs 16 --seed 3",
    "fat-tree --leaves 4 --root-capacity 4 --mode online",
    "fat-tree --leaves 8 --root-capacity 4 --mode online",
    "fat-tree --leaves 32 --root-capacity 16 --mode online --concentrator crossbar",
    "hypercube --dimension 1", "hypercube --dimension 3 --order 2,0,1",
    "hypercube --dimension 4", "hypercube --dimension 3 --algorithm alg2",
    "hypercube --dimension 4 --algorithm ecube --steps 64",
]


def network(options: str):
    """The network `fatnet gen <options>` builds."""
    argv = ["gen", *options.split(), "-o", "unused"]
    args = build_parser(argv).parse_args(argv)
    return get_family(argv[1]).commands.network_from_args(argv[1], args)


def hook_headers(net) -> dict:
    """``(s, d) -> (header, below)`` of every source and destination, from the hook's
    expressions in Amaranth's simulator: the header (a list of bits, the top ``length``
    bits) and the bits below it (an int)."""
    fam = family_of(net)
    N = terminal_count(net, fam)
    n = (N - 1).bit_length()
    m, dst = Module(), Signal(n)
    outs = []
    for s in range(N):
        bits, length = fam.hardware.bist_header(net, s, dst)
        b, ln = Signal(len(bits), name=f"bits_{s}"), Signal(len(length), name=f"len_{s}")
        m.d.comb += [b.eq(bits), ln.eq(length)]
        outs.append((b, ln))
    got = {}

    async def bench(ctx):
        for d in range(N):
            ctx.set(dst, d)
            for s, (b, ln) in enumerate(outs):
                value, k = ctx.get(b), ctx.get(ln)
                got[s, d] = ([value >> (len(b) - 1 - i) & 1 for i in range(k)],
                             value & ((1 << (len(b) - k)) - 1))
    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
    return got


def assert_headers_are_the_models(options: str, replay: str) -> None:
    """The hook's header of every (s, d), d != s, is the model's, and nothing but zeros
    follows it in the hook's bits."""
    net = network(options)
    fam = family_of(net)
    got = hook_headers(net)
    for (s, d), (bits, below) in got.items():
        if s == d:
            continue
        want, _ = model_header(net, fam, s, d)
        where = f"{options}: source {s}, destination {d}; replay: {replay}"
        assert bits == want, f"{where}: hook {bits}, model {want}"
        assert below == 0, f"{where}: the bits after the header are {below:b}, not 0"


@pytest.mark.parametrize("options", NETWORKS)
def test_the_hooks_header_is_the_models_for_every_source_and_destination(options):
    assert_headers_are_the_models(options, f"python -m pytest '{HERE}::test_the_hooks_header_"
                                           f"is_the_models_for_every_source_and_destination"
                                           f"[{options}]'")


def drawn_network(seed: int) -> str:
    """A small network of any family, kind and algorithm the self-test takes, drawn
    from ``seed``: its `fatnet gen` options."""
    rng = np.random.default_rng(seed)
    kind = ["butterfly", "dilated-butterfly", "multibutterfly", "fat-tree",
            "hypercube"][int(rng.integers(0, 5))]
    if kind == "fat-tree":
        L = int(rng.integers(2, 6))
        return (f"fat-tree --leaves {1 << L} --root-capacity {1 << L} --mode online "
                f"--concentrator {['pippenger', 'crossbar'][int(rng.integers(0, 2))]} "
                f"--start-stages {int(rng.integers(0, 3))}")
    if kind == "hypercube":
        k = int(rng.integers(1, 6))
        algorithm = ["alg1", "alg2", "ecube"][int(rng.integers(0, 3))]
        order = ",".join(str(int(d)) for d in rng.permutation(k))
        return (f"hypercube --dimension {k} --algorithm {algorithm}"
                + (f" --order {order}" if algorithm == "alg1" else ""))
    return (f"{kind} --inputs {1 << int(rng.integers(2, 6))} --seed {int(rng.integers(0, 9))}"
            f" --link-stages {int(rng.integers(0, 2))}")


@PROPERTY
@given(SEEDS)
def test_drawn_networks_headers_are_the_models(seed):
    replay = (f"python -c 'import sys; sys.path.insert(0, \"tests\"); import "
              f"test_bist_header as t; t.assert_headers_are_the_models("
              f"t.drawn_network({seed}), \"seed {seed}\")'")
    assert_headers_are_the_models(drawn_network(seed), f"seed {seed}, {replay}")


@pytest.mark.parametrize("options, refusal", [
    ("fat-tree --leaves 8 --root-capacity 4 --mode offline",
     "mode must be online for the self-testing top, got offline"),
    ("hypercube --dimension 3 --algorithm valiant",
     "algorithm valiant cannot be self-tested"),
])
def test_a_network_whose_headers_no_rule_gives_is_refused_in_one_line(options, refusal):
    """By the hook, and by the plan before the model runs (a fixed pattern, which the
    model alone might take)."""
    net = network(options)
    for refuse in (lambda: family_of(net).hardware.bist_header(net, 0, Signal(3)),
                   lambda: make_plan(net, family_of(net), pattern="shift")):
        with pytest.raises(ParameterError, match=refusal) as e:
            refuse()
        assert "\n" not in str(e.value)
