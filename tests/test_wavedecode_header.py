"""The wave decoder's VCD header parser reads the header in one pass and understands it
exactly as the earlier parser did (which rescanned its growing token list on every line):
the same items, the same declarations, the same rewritten file, on generated VCDs with
items split over lines, several items on one line, nested scopes and every value kind."""

import io
import random

import pytest

from fatnet.sim.wavedecode import (WaveDecodeError, _declarations, _header_items,
                                   _rewrite, read_vcd)


# The earlier parser's reading of the header, kept verbatim as the reference the new one
# must agree with: the tokens of every line up to $enddefinitions, then each item cut
# at the next $end (the interpretation of an item is the module's _item_kind).
def _reference_header(lines):
    tokens = []
    for line in lines:
        tokens += line.split()
        if "$enddefinitions" in tokens:
            break
    return tokens


def _reference_items(tokens):
    i, items = 0, []
    while i < len(tokens):
        j = tokens.index("$end", i) if tokens[i] != "$end" else i
        items.append(tokens[i:j + 1])
        i = j + 1
    return items


def _generated_vcd(rng: random.Random) -> tuple[str, list]:
    """A VCD whose header items are laid out over lines at random; its variables' ids."""
    items = [["$date", "Fri", "Nov", "27", "2026", "$end"],
             ["$version", "a", "generator", "1.0", "$end"],
             ["$timescale", *rng.choice([["1ps"], ["1", "ps"], ["10ns"], ["100", "fs"]]),
              "$end"]]
    ids, depth = [], 0
    for n in range(rng.randrange(40, 120)):
        r = rng.random()
        if r < 0.15 or depth == 0:
            items.append(["$scope", "module", f"s{n}", "$end"])
            depth += 1
        elif r < 0.25:
            items.append(["$upscope", "$end"])
            depth -= 1
        elif r < 0.3:
            items.append(["$comment", *(f"w{k}" for k in range(rng.randrange(5))), "$end"])
        else:
            kind, width = rng.choice([("wire", 1), ("reg", rng.randrange(1, 9)),
                                      ("string", 1), ("real", 64)])
            ids.append((f"!{n}", kind, width))
            items.append(["$var", kind, str(width), f"!{n}", f"v{n}", "$end"])
    items += [["$upscope", "$end"]] * depth
    lines, line = [], []
    for token in (t for item in items for t in item):  # break lines anywhere
        line.append(token)
        if rng.random() < 0.3:
            lines.append(" ".join(line))
            line = []
    lines += [" ".join(line), "$enddefinitions $end"]  # as simulators write it
    body = []
    for t in range(0, 50, 5):
        body.append(f"#{t}")
        for ident, kind, width in rng.sample(ids, min(len(ids), 4)):
            if kind == "string":
                body.append(f"s{rng.choice('abc')} {ident}")
            elif kind == "real":
                body.append(f"r{rng.random():.3f} {ident}")
            elif width > 1:
                body.append(f"b{rng.getrandbits(width):b} {ident}")
            else:
                body.append(f"{rng.choice('01xz')}{ident}")
    return "\n".join(lines + body) + "\n", ids


SEEDS = range(8)


@pytest.mark.parametrize("seed", SEEDS)
def test_header_items_are_the_reference_parsers(seed):
    text, _ = _generated_vcd(random.Random(seed))
    new = _header_items(io.StringIO(text))
    assert new == _reference_items(_reference_header(io.StringIO(text)))
    assert _declarations(new)[0]


@pytest.mark.parametrize("seed", SEEDS)
def test_rewritten_file_is_byte_identical_to_the_reference_parsers(seed, tmp_path):
    """The same decoded variables and value changes merged into the same dump give the
    same bytes whichever parser read its header."""
    rng = random.Random(seed)
    text, ids = _generated_vcd(rng)
    written = []
    for parse in (lambda f: _header_items(f),
                  lambda f: _reference_items(_reference_header(f))):
        path = tmp_path / f"dump{len(written)}.vcd"
        path.write_text(text)
        with open(path) as f:
            items = parse(f)
        vars_, _ = _declarations(items)
        scopes = sorted({p.rpartition(".")[0] for p in vars_})
        new_vars = {s: [(f"~{k}", f"dec{k}")] for k, s in enumerate(scopes)}
        events = iter([(0, [f"s- ~{k}" for k in range(len(scopes))]),
                       (7, ["sm1 ~0"]), (15, ["s- ~0"]), (60, ["sm2 ~0"])])
        _rewrite(path, items, new_vars, events)
        written.append(path.read_bytes())
    assert written[0] == written[1]
    merged = read_vcd(tmp_path / "dump0.vcd")
    assert merged.changes[f"{scopes[0]}.dec0"] == [(0, "-"), (7, "m1"), (15, "-"),
                                                     (60, "m2")]


def test_a_header_item_without_end_is_refused():
    with pytest.raises(WaveDecodeError, match=r"without \$end"):
        _header_items(io.StringIO("$scope module top $end\n$var wire 1 ! a\n"))


def test_a_name_with_a_colon_is_written_escaped(tmp_path):
    """Verilator dumps Yosys's ``$auto$...cc:2355:...`` wires unescaped; GTKWave cannot
    read a name with a colon, so the rewritten dump escapes it as Icarus does."""
    path = tmp_path / "dump.vcd"
    path.write_text("$timescale 1ps $end\n$scope module top $end\n"
                    "$var wire 1 ! $auto$verilog_backend.cc:2355:dump_module$1 $end\n"
                    "$var wire 4 \" plain [3:0] $end\n$upscope $end\n"
                    "$enddefinitions $end\n#0\n0!\nb0 \"\n")
    with open(path) as f:
        items = _header_items(f)
    _rewrite(path, items, {}, iter(()))
    text = path.read_text()
    assert "$var wire 1 ! \\$auto$verilog_backend.cc:2355:dump_module$1 $end" in text
    assert "$var wire 4 \" plain [3:0] $end" in text
    assert set(read_vcd(path).vars) == {"top.\\$auto$verilog_backend.cc:2355:dump_module$1",
                                        "top.plain"}
