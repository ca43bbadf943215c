"""``fatnet.api``: docs/api.md's examples run, each function does what the command line
does with the same parameters, and bad input is one ParameterError naming it."""

import ast
import inspect
import re
import shutil
from pathlib import Path

import pytest

from fatnet import api
from fatnet.api.params import accepted
from fatnet.cli.demo import options
from fatnet.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "api.md"

#: The kinds ``fatnet demo`` shows: one per family with hardware, with small parameters.
DEMO_KINDS = [k for f in api.families() for k in f.kinds.values() if k.demo is not None]


def python_blocks(text: str) -> list[str]:
    """The fenced ``python`` code blocks of a Markdown text."""
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.M | re.S)


def test_the_doc_has_examples_of_every_function():
    code = "\n".join(python_blocks(DOC.read_text()))
    for name in ("network", "messages", "route", "schedule", "generate", "cosimulate",
                 "board", "experiment"):
        assert f"api.{name}(" in code, name


@pytest.mark.parametrize("index", range(len(python_blocks(DOC.read_text()))))
def test_the_docs_python_blocks_run(index, tmp_path, monkeypatch):
    block = python_blocks(DOC.read_text())[index]
    if "cosimulate" in block and shutil.which("iverilog") is None:
        pytest.skip("iverilog is not installed (apt-get install iverilog): the example "
                    "co-simulates on Icarus")
    monkeypatch.chdir(tmp_path)
    exec(compile(block, f"docs/api.md block {index}", "exec"), {})


def _parsed(verb: str, kind: str, *extra: str):
    argv = [verb, kind, *extra]
    return build_parser(argv).parse_args(argv)


def _same(a, b) -> bool:
    """Equal, a tuple and a list of the same items counting as equal (an option's
    repeated values are a list, a keyword's default a tuple)."""
    seq = (list, tuple)
    return list(a) == list(b) if isinstance(a, seq) and isinstance(b, seq) else a == b


@pytest.mark.parametrize("kind", DEMO_KINDS, ids=lambda k: k.name)
@pytest.mark.parametrize("hook, verb", [("build_network", "gen"),
                                        ("make_messages", "sim"), ("run_network", "sim")])
def test_every_hook_default_is_the_options_default(kind, hook, verb):
    """The API's defaults are the command line's: a parameter left out of a call means
    what the option left out of a command means."""
    fam = api.get_family(kind.name)
    function = getattr(fam.commands, hook)
    traffic = kind.demo.traffic if verb == "sim" else {}
    params = {**kind.demo.network, **traffic}
    args = _parsed(verb, kind.name, *options(params),
                   *(["-o", "unused"] if verb == "gen" else []))
    defaults = {n: p.default for n, p in inspect.signature(function).parameters.items()
                if n in accepted(function) and n not in params and hasattr(args, n)}
    assert defaults, f"{hook} shares no option with {verb}"
    for name, default in defaults.items():
        assert _same(getattr(args, name), default), (name, getattr(args, name), default)


@pytest.mark.parametrize("kind", DEMO_KINDS, ids=lambda k: k.name)
def test_the_api_builds_the_network_and_traffic_the_command_line_does(kind):
    args = _parsed("sim", kind.name, *options(kind.demo.network),
                   *options(kind.demo.traffic))
    fam = api.get_family(kind.name)
    by_cli = fam.commands.network_from_args(kind.name, args)
    net = api.network(kind.name, **kind.demo.network)
    assert net.family == fam.name and net.cycle_length == by_cli.cycle_length
    assert fam.testbench.build_params(net) == fam.testbench.build_params(by_cli)
    ms = api.messages(net, seed=kind.demo.network.get("seed", 0), **kind.demo.traffic)
    cli_ms = fam.commands.messages_from_args(args, by_cli)
    assert ms.pairs(range(len(ms))) == cli_ms.pairs(range(len(cli_ms)))
    assert list(ms.payload) == list(cli_ms.payload)


@pytest.mark.parametrize("kind", DEMO_KINDS, ids=lambda k: k.name)
def test_route_accounts_for_every_message(kind):
    net = api.network(kind.name, **kind.demo.network)
    ms = api.messages(net, **kind.demo.traffic)
    run = api.route(net, ms, max_cycles=50)
    assert run.delivered + run.local + len(run.lost) == len(ms)
    assert len(run.results) == run.cycles >= 1


def test_a_seed_draws_the_traffic_and_the_same_seed_draws_it_again():
    net = api.network("fat-tree", leaves=32, capacity=2)
    first, again, other = (api.messages(net, seed=s) for s in (5, 5, 6))
    assert first.pairs(range(32)) == again.pairs(range(32)) != other.pairs(range(32))
    assert sorted(d for _, d in first.pairs(range(32))) == list(range(32))  # permutation


def test_the_schedule_places_every_message_once_and_keeps_the_bound():
    net = api.network("fat-tree", leaves=16, capacity=1)
    ms = api.messages(net, pattern="hot-spot", hot_fraction=0.5, seed=2)
    plan = api.schedule(net, ms, method="greedy")
    placed = sorted(pair for cycle in plan.cycles for pair in cycle)
    assert placed == sorted(tuple(p) for p in ms.pairs(range(len(ms))))
    assert plan.length >= plan.lower_bound >= 1


def test_a_family_without_an_offline_schedule_is_refused():
    net = api.network("butterfly", inputs=8)
    with pytest.raises(api.ParameterError, match="no off-line schedule.*fattree"):
        api.schedule(net, api.messages(net))


def test_route_takes_a_splitter_networks_fault_mask():
    net = api.network("butterfly", inputs=8)
    ms = api.messages(net, seed=1)
    run = api.route(net, ms, fault_mask="1:0")
    assert run.masks is not None and run.masks[0][0, 0] and run.masks[0].sum() == 1


def test_an_experiment_runs_by_name():
    assert api.experiments()["kuszmaul"] == "hypercube"
    done = api.experiment("acceptance", inputs=8, trials=5, seed=0)
    assert done.family == "butterfly" and done.parameters["trials"] == 5
    assert {row["kind"] for row in done.data} == {"butterfly", "dilated-butterfly",
                                                  "multibutterfly"}


def test_generate_writes_the_files_and_the_manifest(tmp_path):
    net = api.network("butterfly", inputs=4, payload_bits=2)
    made = api.generate(net, tmp_path / "rtl", top="bfly", harness=False)
    assert made.top == "bfly" and made.files == ["bfly.v", "lint.vlt"]
    assert sorted(p.name for p in made.directory.iterdir()) == ["bfly.json", "bfly.v",
                                                               "lint.vlt"]
    assert made.manifest["top"] == "bfly" and made.cycle_length == net.cycle_length


@pytest.mark.parametrize("call, names", [
    (lambda: api.network("ring", nodes=4), "kind must be one of"),
    (lambda: api.network("fat-tree", leaves=16, root_capacity=8, capacity=2),
     "exactly one of root_capacity, capacities, capacity"),
    (lambda: api.network("fat-tree", leaves=16, root_capacity=8, leafs=3),
     "leafs is not a parameter of a fat-tree network: it takes leaves,"),
    (lambda: api.network("hypercube"), "dimension is required"),
    (lambda: api.network("multibutterfly", inputs=12), "inputs must be"),
    (lambda: api.messages(api.network("fat-tree", leaves=4, capacity=1), hot_fraction=2),
     "hot_fraction must be a number in \\[0, 1\\], got 2"),
    (lambda: api.messages(api.network("butterfly", inputs=4), pattern="spiral"),
     "pattern"),
    (lambda: api.route(api.network("fat-tree", leaves=4, capacity=1), None, method="x"),
     "method must be one of"),
    (lambda: api.experiment("tables"), "experiment must be one of"),
    (lambda: api.experiment("kuszmaul", trials=0), "trials must be"),
    (lambda: api.cosimulate(api.network("butterfly", inputs=4), None, sim="modelsim"),
     "sim must be one of icarus, verilator, got 'modelsim'"),
    (lambda: api.board("butterfly", "icebreaker", "unused", inputs=8, load=2.0),
     "load must be a number in \\[0, 1\\]"),
    (lambda: api.board("butterfly", "icebreaker", "unused", inputs=8, baud=9600),
     "baud is not a parameter of a butterfly board build"),
    (lambda: api.board("butterfly", "de10", "unused", inputs=8), "board must be one of"),
])
def test_bad_input_is_one_parameter_error_naming_it(call, names):
    with pytest.raises(api.ParameterError, match=names) as caught:
        call()
    assert "\n" not in str(caught.value)


def test_a_board_build_left_to_the_familys_defaults_takes_them(tmp_path):
    # the hypercube's board defaults choose the pattern (and the message's bits): a
    # call that names neither gets what `fatnet board hypercube --dimension 3` gets
    built = api.board("hypercube", "icebreaker", tmp_path / "b", dimension=3, predict=0)
    assert built.board_defaults["pattern"] in ("random", "complement")
    assert built.manifest["pattern"] == built.board_defaults["pattern"]
    assert (tmp_path / "b" / "board.json").exists()


def test_a_bad_top_writes_nothing(tmp_path):
    net = api.network("butterfly", inputs=4)
    with pytest.raises(api.ParameterError, match="top must be a Verilog identifier"):
        api.generate(net, tmp_path / "rtl", top="2fast")
    assert not (tmp_path / "rtl").exists()


def test_a_given_model_run_takes_no_route_parameters():
    net = api.network("butterfly", inputs=4)
    ms = api.messages(net)
    with pytest.raises(api.ParameterError, match="max_cycles is the model run's"):
        api.cosimulate(net, ms, model=api.route(net, ms), max_cycles=3)


def _module_imports(path: Path) -> list[str]:
    """The modules a file imports at module level, relative ones with their dots."""
    found = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            found.append("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names]
    return found


def test_the_api_imports_no_command_line_and_no_layer_imports_the_api():
    """No import circle: the API's modules import neither the command line nor, at
    module level, the hardware and simulator layers; the registry only golden's errors;
    golden, hdl and sim never import the API."""
    for path in (ROOT / "api").glob("*.py"):
        for name in _module_imports(path):
            assert not re.match(r"\.\.(cli|hdl|sim)\b", name), (path.name, name)
    assert [n for n in _module_imports(ROOT / "api" / "registry.py")
            if n.startswith(".")] == ["..golden.errors"]
    for layer in ("golden", "hdl", "sim"):
        for path in (ROOT / layer).rglob("*.py"):
            assert "api" not in _imported_top_folders(path), path


def _imported_top_folders(path: Path) -> set[str]:
    """The repository's top folders (``golden``, ``api``, ...) a file's relative imports
    reach, at any depth (a function's local import too)."""
    package = path.relative_to(ROOT).parent.parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - (node.level - 1)]
            parts = [*base, *(node.module or "").split(".")]
            found.add(parts[0])
    return found


def test_the_packages_docstring_example_runs():
    import doctest
    assert doctest.testmod(api).failed == 0
