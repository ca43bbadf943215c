"""The seed module: one range, named streams, the hardware's streams frozen.

The frozen streams are checked against their documented ``SeedSequence`` entropy (the
hardware is built from them: the same options must give the same Verilog); the others
against each other (no two streams share draws).
"""

import numpy as np
import pytest

from fatnet.cli.main import main
from fatnet.golden.errors import ParameterError
from fatnet.golden.seeds import MAX_SEED, STREAMS, check_seed, generator, sequence


def _draws(rng, count=8):
    return rng.integers(0, 2 ** 62, count).tolist()


@pytest.mark.parametrize("stream, index, entropy", [
    ("wiring", (3,), [7, 3]),
    ("faults", (), [7, 101]),
    ("expansion", (), [7]),
    ("cascade", (16, 8, 1), [7, 16, 8, 1]),
    ("stage", (2, 0), [7, 2, 0]),
    ("stage-wiring", (), [7]),
    ("intermediates", (), [7]),
])
def test_a_hardware_stream_is_its_documented_entropy(stream, index, entropy):
    assert STREAMS[stream].frozen
    want = np.random.default_rng(np.random.SeedSequence(entropy))
    assert _draws(generator(7, stream, *index)) == _draws(want), stream


def test_the_other_streams_share_no_draws():
    seed = 5
    firsts = {}
    for name, s in STREAMS.items():
        if s.frozen:
            continue
        firsts[name] = _draws(generator(seed, name))
    firsts["wiring attempt 0"] = _draws(generator(seed, "wiring", 0))
    firsts["default_rng(seed)"] = _draws(np.random.default_rng(seed))
    distinct = {tuple(v) for v in firsts.values()}
    # default_rng(seed) is the wiring's attempt 0: numpy pads a short entropy with zeros
    assert len(distinct) == len(firsts) - 1, firsts
    assert sequence(seed, "trials", 1, 2).spawn_key == (STREAMS["trials"].code, 1, 2)


@pytest.mark.parametrize("bad", [-1, MAX_SEED + 1, 2 ** 64, 1.5, True, "3", None])
def test_one_range_for_every_seed(bad):
    with pytest.raises(ParameterError, match=r"bist_seed must be an integer in \[0, 2\^63-1\]"):
        check_seed(bad, "bist_seed")
    with pytest.raises(ParameterError, match=r"^seed must be an integer in \[0, 2\^63-1\]"):
        generator(bad, "traffic")


def test_the_board_takes_its_own_self_test_seed(tmp_path, capsys):
    argv = ["board", "butterfly", "--inputs", "8", "--board", "icebreaker",
            "-o", str(tmp_path / "b")]
    assert main([*argv, "--bist-seed", str(MAX_SEED + 1)]) == 2
    err = capsys.readouterr().err
    assert "argument --bist-seed: bist-seed must be an integer in [0, 2^63-1]" in err, err
    assert not (tmp_path / "b").exists()
    assert main(["board", "butterfly", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--bist-seed S seed of the self-test's traffic generators" in out, out
    assert "(default 0)" in out.split("--bist-seed", 1)[1]


def test_the_self_test_draws_from_its_own_seed_not_the_networks():
    from fatnet.cli.main import build_parser
    from fatnet.api.registry import family_of, get_family
    from fatnet.sim.bist import make_plan

    def plan(net_seed, bist_seed):
        argv = ["board", "multibutterfly", "--inputs", "8", "--payload-bits", "12",
                "--board", "icebreaker", "--seed", str(net_seed),
                "--bist-seed", str(bist_seed)]
        args = build_parser(argv).parse_args(argv)
        net = get_family("multibutterfly").commands.network_from_args("multibutterfly", args)
        return make_plan(net, family_of(net), bist_seed=args.bist_seed, baud_divisor=2)

    a, b, c = plan(1, 5), plan(2, 5), plan(1, 6)
    assert a.states == b.states != c.states
    assert a.bist_seed == b.bist_seed == 5 and c.bist_seed == 6
    wiring = [(net.network.heads != a.net.network.heads).any() for net in (b.net, c.net)]
    assert wiring == [True, False]


@pytest.mark.parametrize("argv", [
    ["experiment", "acceptance", "--inputs", "8", "--trials", "2"],
    ["experiment", "kuszmaul", "--dimensions", "2", "--compare", "2", "--sweep", "2..2",
     "--trials", "2"],
])
def test_the_largest_seed_runs_every_trial(argv, capsys):
    # a trial's seed is derived from the seed, never seed + t past the range
    assert main([*argv, "--seed", str(MAX_SEED)]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("payload_bits", [0, 1, 8, 32, 33, 64, 100])
def test_payloads_are_their_streams_draws_one_message_after_another(payload_bits):
    """A message's payload is its ceil(bits / 32) draws of the ``payloads`` stream in
    [0, 2^32), most significant first, masked; the messages take them in turn (the
    array draw gives what one draw after another gives)."""
    from fatnet.golden.messages import random_payloads
    rng = generator(5, "payloads")
    expected = []
    for _ in range(40):
        v = 0
        for _chunk in range(0, payload_bits, 32):
            v = (v << 32) | int(rng.integers(0, 2 ** 32))
        expected.append(v & ((1 << payload_bits) - 1))
    assert random_payloads(40, payload_bits, 5) == expected
