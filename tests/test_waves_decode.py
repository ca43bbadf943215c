"""Decoded message traces in what ``fatnet sim --waves`` writes (Icarus): they exist, the
.gtkw shows them under their wires, and they name the right message (one label for its
whole life on a wire), field and timing, checked against the model's plan and the dumped
wires themselves."""

import itertools
import re
import shutil
from types import SimpleNamespace

import pytest

from fatnet.cli.main import build_parser, main
from fatnet import api
from fatnet.api.registry import family_of, get_family
from fatnet.hdl.signatures import port_rows
from fatnet.sim.cocotb_runner import PERIOD_NS
from fatnet.sim.plan import plans
from fatnet.sim.wavedecode import IDLE, read_vcd

CASES = {
    "fat-tree": ["--leaves", "8", "--root-capacity", "4", "--pattern",
                 "random-permutation", "--seed", "1"],
    "butterfly": ["--inputs", "8", "--pattern", "random-destinations", "--seed", "3"],
}
LABEL = re.compile(r"^m(\d+):(\S+?)->(\S+?)(\(lost\))?$")


@pytest.fixture(scope="module", params=sorted(CASES))
def run(request, tmp_path_factory):
    if shutil.which("iverilog") is None:
        pytest.skip("iverilog is not installed (apt-get install iverilog)")
    kind = request.param
    tmp = tmp_path_factory.mktemp(kind.replace("-", ""))
    argv = ["sim", kind, *CASES[kind], "--sim", "icarus", "--waves", str(tmp / "waves"),
            "--build-dir", str(tmp / "build")]
    assert main(argv) == 0
    # The model's run, independently of the command: the same arguments, the same plans.
    args = build_parser(argv).parse_args(argv)
    fam = get_family(kind)
    net = fam.commands.network_from_args(kind, args)
    ms = fam.commands.messages_from_args(args, net)
    report = fam.commands.run_model(net, ms, args)
    (vcd,) = (tmp / "waves").glob("*.vcd")
    (gtkw,) = (tmp / "waves").glob("*.gtkw")
    dump = read_vcd(vcd)
    root = f"{net.family}_harness.{net.family}"
    signals = {(r["endpoint"], r["path"][-1]): r["name"]
               for r in port_rows(fam.hardware.network_signature(net)) if r["endpoint"]}
    return SimpleNamespace(net=net, ms=ms, plans=plans(net, ms, report.results, family=fam),
                           dump=dump,
                           gtkw=gtkw.read_text(), root=root, signals=signals,
                           windows=_windows(dump, root, net.cycle_length))


def _windows(dump, root, T):
    """Per delivery cycle, the middle of every bit-time: the controller's ``busy``
    rises at a cycle's bit-time 0 and every bit-time is one clock period of the
    testbench; the controller's ``bit_time`` must count them."""
    period = round(PERIOD_NS * 1e-9 / dump.timescale)
    rises, level = [], "0"
    for t, v in dump.changes[f"{root}.busy"]:
        if v == "1" and level != "1":
            rises.append(t)
        level = v
    out = [[r + t * period + period // 2 for t in range(T)] for r in rises]
    for cycle in out:
        for t, when in enumerate(cycle):
            assert int(dump.value_at(f"{root}.bit_time", when), 2) == t
    return out


def _trace(run, port, kind, wire, trace="msg"):
    return f"{run.root}.{run.signals[(port, kind)]}__{trace}_w{wire}"


def _labels(run, port, kind, wire, when):
    """The message and the phase a wire's decoded traces name at the times ``when``."""
    return ([run.dump.value_at(_trace(run, port, kind, wire), t) for t in when],
            [run.dump.value_at(_trace(run, port, kind, wire, "phase"), t) for t in when])


def _wire(run, port, kind, wire, when):
    return int(run.dump.bit_at(f"{run.root}.{run.signals[(port, kind)]}", wire, when))


def test_every_endpoint_wire_has_a_decoded_trace_shown_under_it(run):
    assert len(run.windows) == len(run.plans) >= 1
    lines = run.gtkw.splitlines()
    shown = [ln for ln in lines if "__msg_w" in ln or "__phase_w" in ln]
    assert shown
    for path in shown:
        assert run.dump.vars[path][2] == "string", path
    for (port, kind), name in run.signals.items():
        width = run.dump.vars[f"{run.root}.{name}"][1]
        at = next(i for i, ln in enumerate(lines)
                  if re.sub(r"\[\d+:0\]$", "", ln) == f"{run.root}.{name}")
        below = list(itertools.takewhile(
            lambda ln: "__msg_w" in ln or "__phase_w" in ln,
            (ln for ln in lines[at + 1:] if not ln.startswith("@"))))
        assert below == [_trace(run, port, kind, w, trace) for w in range(width)
                         for trace in ("msg", "phase")], name


def test_source_wires_name_their_message_and_fields(run):
    fam = family_of(run.net).testbench
    for c, plan in enumerate(run.plans):
        when = run.windows[c]
        owned = {(p, w): m for (p, kind, w), m in plan.owner.items() if kind == "send"}
        for port, drive in plan.drive.items():
            for w in range(drive.shape[1]):
                labels, fields = _labels(run, port, "send", w, when)
                m = owned.get((port, w))
                if m is None:
                    assert set(labels) == set(fields) == {IDLE}, (port, w)
                    continue
                stream = plan.result.injections[m][1]
                # one label for the message's whole life on the wire, then idle
                first = LABEL.match(labels[0])
                assert first, labels[0]
                assert first.groups()[:3] == (str(m), port,
                                              fam.port_name(run.net, run.ms.dst[m]))
                assert set(labels[:len(stream)]) == {labels[0]}
                assert set(labels[len(stream):]) <= {IDLE}
                # and its phase bit-time by bit-time
                fields, rest = fields[:len(stream)], fields[len(stream):]
                assert fields[0] == "M" and set(rest) <= {IDLE}
                pay = [f for f in fields if f.startswith("pay")]
                header = fields[1:len(fields) - len(pay)]
                assert all(f.startswith(("addr@", "dec@")) for f in header), fields
                # what the decoded trace describes is what the wire carries
                assert [_wire(run, port, "send", w, t) for t in when] == list(drive[:, w])


def test_delivery_wires_name_their_message_and_payload(run):
    seen = 0
    for c, plan in enumerate(run.plans):
        when = run.windows[c]
        for (port, kind, w), m in plan.owner.items():
            if kind != "recv":
                continue
            seen += 1
            arrival = int(plan.expect_recv[port][:, w].argmax())
            labels, phases = _labels(run, port, "recv", w, when)
            assert LABEL.match(labels[arrival]).group(1) == str(m)
            assert phases[arrival] == "M"
            rest = [p for p in phases[arrival + 1:] if p != IDLE]
            assert rest == [f"pay{i}" for i in reversed(range(len(rest)))]
            life = labels[arrival:arrival + 1 + len(rest)]
            assert set(life) == {labels[arrival]}
            assert set(labels[arrival + 1 + len(rest):]) <= {IDLE}
            bits = [_wire(run, port, "recv", w, when[arrival + 1 + i])
                    for i in range(len(rest))]
            assert int("".join(map(str, bits)) or "0", 2) == int(run.ms.payload[m])
        # the sources' acknowledgment wires: named exactly where the model raises them
        for port, ack in plan.expect_send_ack.items():
            for w in range(ack.shape[1]):
                labels, phases = _labels(run, port, "send_ack", w, when)
                m = plan.owner.get((port, "send", w))
                for t, (s, phase) in enumerate(zip(labels, phases)):
                    if ack[t, w]:
                        assert LABEL.match(s).group(1) == str(m) and phase == "ack", s
                    else:
                        assert s == phase == IDLE, (port, w, t, s)
    assert seen


def test_every_decoded_trace_agrees_with_its_wire(run):
    """Wherever a phase trace says M, its wire is 1; where it is idle, a data wire is 0;
    an acknowledgment's phase trace says ack exactly where its wire is 1; the message
    trace beside it is idle exactly where the phase trace is. Interior wires (node ports,
    switch edges) carry messages too."""
    interior = 0
    traces = [p for p, v in run.dump.vars.items() if v[2] == "string" and "__phase_w" in p]
    endpoints = {f"{run.root}.{s}" for s in run.signals.values()}
    for path in traces:
        signal, _, wire = path.rpartition("__phase_w")
        for cycle in run.windows:
            for when in cycle:
                s = run.dump.value_at(path, when)
                label = run.dump.value_at(f"{signal}__msg_w{wire}", when)
                assert (s == IDLE) == (label == IDLE), (path, when, s, label)
                bit = run.dump.bit_at(signal, int(wire), when)
                if signal.endswith("ack"):
                    assert (bit == "1") == (s == "ack"), (path, when, s, bit)
                elif s == IDLE:
                    assert bit == "0", (path, when)
                elif s == "M":
                    assert bit == "1", (path, when, s)
                if s != IDLE and signal not in endpoints:
                    interior += 1
    assert interior


def test_shown_message_traces_hold_one_label_per_message_life(run):
    """One label per message life on every message trace the .gtkw shows: every value
    change goes from idle to a message or back (never from one bit's label to the
    next), and a message's label appears once per cycle on a wire."""
    shown = [ln for ln in run.gtkw.splitlines() if "__msg_w" in ln]
    assert any(v != IDLE for path in shown for _, v in run.dump.changes[path])
    for path in shown:
        changes = run.dump.changes[path]
        values = [v for _, v in changes]
        for before, after in zip(values, values[1:]):
            assert IDLE in (before, after), (path, before, after)
        for cycle in run.windows:  # from the start of its first bit-time to its end
            half = (cycle[1] - cycle[0]) // 2
            seen = [v for t, v in changes
                    if cycle[0] - half <= t <= cycle[-1] + half and v != IDLE]
            assert len(seen) == len(set(seen)), (path, seen)


# ------------------------------------------------------------------ the .gtkw
# GTKWave 3.3's trace flags (its analyzer.h): a closed group's begin line has CLOSED;
# every trace a closed group hides (its end line included) has COLLAPSED.
COLLAPSED, CLOSED, GRP_BEGIN, GRP_END = 0x1000, 0x400000, 0x800000, 0x1000000


def _gtkw_tree(text):
    """A save file's settings ({key: value}, ``zoom``) and its traces as a tree:
    [(name, flags, children)] (children None for a signal)."""
    settings, top, stack, flags = {}, [], [], 0
    cur = top
    for ln in text.splitlines():
        if ln.startswith("["):
            key, _, value = ln[1:].partition("] ")
            settings[key] = value
        elif ln.startswith("*"):
            settings["zoom"] = float(ln[1:].split()[0])
        elif ln.startswith("@"):
            flags = int(ln[1:], 16)
        elif ln.startswith("-") and flags & GRP_BEGIN:
            cur.append((ln[1:], flags, []))
            stack.append(cur)
            cur = cur[-1][2]
        elif ln.startswith("-") and flags & GRP_END:
            cur = stack.pop()
            name, begin, _ = cur[-1]
            assert ln[1:] == name and (flags & CLOSED) == (begin & CLOSED), (ln, name)
            assert flags & COLLAPSED or not begin & CLOSED, ln  # a closed group's end hides
        else:
            cur.append((ln, flags, None))
    assert not stack, "a group without its end"
    return settings, top


def _all_collapsed(children):
    for name, flags, sub in children:
        assert flags & COLLAPSED, name
        if sub is not None:
            assert flags & CLOSED, name
            _all_collapsed(sub)


def _signals(children):
    for name, _, sub in children:
        yield from ([name] if sub is None else _signals(sub))


def _check_layout(text, net, fam):
    """Controller signals first, then the terminals' group (open: one closed group per
    terminal holding its signals), then only closed groups with every trace hidden."""
    root = f"{net.family}_harness.{net.family}"
    rows = port_rows(fam.hardware.network_signature(net))
    settings, top = _gtkw_tree(text)
    first_group = next(i for i, item in enumerate(top) if item[2] is not None)
    controller = [re.sub(r"\[\d+:0\]$", "", n) for n, _, _ in top[:first_group]]
    assert controller[0] == f"{net.family}_harness.clk"
    assert {f"{root}.{r['name']}" for r in rows if r["endpoint"] is None} <= set(controller)
    name, flags, terminals = top[first_group]
    assert name == "terminals" and not flags & (CLOSED | COLLAPSED)
    ends = list(dict.fromkeys(r["endpoint"] for r in rows if r["endpoint"] is not None))
    assert [t[0] for t in terminals] == ends
    for end, flags, sub in terminals:
        assert sub is not None and flags & CLOSED and not flags & COLLAPSED, end
        _all_collapsed(sub)
        shown = {re.sub(r"\[\d+:0\]$", "", n) for n in _signals(sub)}
        assert {f"{root}.{r['name']}" for r in rows if r["endpoint"] == end} <= shown
    for name, flags, sub in top[first_group + 1:]:
        assert sub is not None and flags & CLOSED and not flags & COLLAPSED, name
        _all_collapsed(sub)
    return settings


def test_gtkw_opens_full_size_on_the_whole_run_with_groups_collapsed(run):
    """A 1920x1080 window whose wave pane (the window less the signal names) holds the
    whole dump at the saved zoom (GTKWave shows 2 ** -zoom time units per 200 pixels),
    filling at least three quarters of it."""
    fam = family_of(run.net)
    settings = _check_layout(run.gtkw, run.net, fam)
    assert settings["size"] == "1920 1080"
    assert run.dump.timescale == 1e-12  # Icarus: GTKWave counts the dump's ticks (ps)
    end = max(t for changes in run.dump.changes.values() for t, _ in changes)
    run_px = end * 200 / 2 ** -settings["zoom"]
    pane = 1920 - int(settings["signals_width"])
    assert 0.75 * pane <= run_px <= pane, (run_px, pane)


@pytest.mark.parametrize("kind, params", [
    ("fat-tree", {"leaves": 8, "root_capacity": 4, "mode": "offline"}),
    ("multibutterfly", {"inputs": 8}),
    ("hypercube", {"dimension": 3, "algorithm": "alg1"}),
    ("hypercube", {"dimension": 3, "algorithm": "alg2"}),
    ("hypercube", {"dimension": 3, "algorithm": "ecube"}),
], ids=["fat-tree", "multibutterfly", "hypercube-alg1", "hypercube-alg2", "hypercube-ecube"])
def test_gtkw_layout_of_every_family(kind, params, tmp_path):
    """Every family's save file: the controller and the terminals first, every group of
    the network's inside closed."""
    from fatnet.sim.waves import write_gtkw
    net = api.network(kind, **params)
    fam = api.family_of(net)
    gtkw = write_gtkw(net, tmp_path / "dump.vcd", tmp_path / "x.gtkw", end_time=10**6,
                      family=fam)
    settings = _check_layout(gtkw.read_text(), net, fam)
    assert 2 ** -settings["zoom"] * (1920 - int(settings["signals_width"])) / 200 >= 10**6
