"""GTKWave save files, with groups derived from the design's signatures.

The family's ``wave_groups`` (:mod:`fatnet.sim.fattree.waves`,
:mod:`fatnet.sim.butterfly.waves`, :mod:`fatnet.sim.hypercube`) says what is shown: the
``controller`` group (the controller's members of the network top's signature), the
``terminals`` group (one group per terminal, :func:`terminal_group`) and the family's
groups of the network's inside (the fat-tree: one per node, a group per port; splitter
networks: one per level, a group per switch; the hypercube: one per node).

:func:`write_gtkw` lays them out for a full-size window: the controller's signals first,
ungrouped; then the terminals group, open, listing one closed group per terminal; then
the inside's groups, closed (and every group in them closed). The view spans the whole
run: the zoom is computed from the dump's end time so that it fills the wave pane.

:func:`write_waves` (``fatnet sim --waves``) also merges the decoded message traces of
:mod:`fatnet.sim.wavedecode` into the dump and shows each one under its wire's signal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .family import SimFamily

__all__ = ["write_gtkw", "wave_groups", "write_waves", "controller_group",
           "terminal_group", "WaveSignal", "WaveGroup", "CONTROLLER", "TERMINALS", "WINDOW",
           "SIGNALS_WIDTH", "fit_zoom"]

CONTROLLER, TERMINALS = "controller", "terminals"
#: The window the save file asks for (pixels): a full-HD screen.
WINDOW = (1920, 1080)
#: The signal-name pane's width (pixels): wide enough for a decoded message label's
#: trace name; the rest of the window, less the borders, is the wave pane the zoom fits.
SIGNALS_WIDTH = 420
_WAVE_PANE = WINDOW[0] - SIGNALS_WIDTH - 110  # less the folded tree, borders, a margin
#: GTKWave draws 2 ** -zoom time units per this many pixels (its ``pixelsperframe``).
_PIXELS_PER_FRAME = 200

# GTKWave 3.3's trace flags (analyzer.h), written in hex after "@".
_HEX, _DEC, _BIN, _RJUSTIFY, _BLANK = 0x2, 0x4, 0x8, 0x20, 0x200
_COLLAPSED, _CLOSED, _GRP_BEGIN, _GRP_END = 0x1000, 0x400000, 0x800000, 0x1000000
_BIT, _VECTOR, _TEXT = _BIN | _RJUSTIFY, _DEC | _RJUSTIFY, _HEX | _RJUSTIFY


@dataclass(frozen=True)
class WaveSignal:
    """A signal shown: its hierarchical path in the dump and its width in bits."""

    path: str
    width: int


@dataclass(frozen=True)
class WaveGroup:
    """A group of the save file: its title, its signals, then its subgroups."""

    title: str
    signals: tuple[WaveSignal, ...] = ()
    groups: tuple[WaveGroup, ...] = ()

    @classmethod
    def of(cls, title: str, signals=(), groups=()) -> WaveGroup:
        """A group from ``(path, width)`` pairs and groups."""
        return cls(title, tuple(WaveSignal(p, w) for p, w in signals), tuple(groups))


def _vec(path: str, width: int) -> str:
    return f"{path}[{width - 1}:0]" if width > 1 else path


def controller_group(rows, top: str, root: str, extra=()) -> WaveGroup:
    """The ``controller`` group: the harness's clock, the members of the network top's
    signature that are no terminal's (``rows``: its
    :func:`~fatnet.hdl.signatures.port_rows`) and ``extra`` ((path, width) of the
    family's sequencer registers)."""
    return WaveGroup.of(CONTROLLER, [(f"{top}.clk", 1)]
                        + [(f"{root}.{r['name']}", r["width"])
                           for r in rows if r["endpoint"] is None] + list(extra))


def terminal_group(rows, root: str) -> WaveGroup:
    """The ``terminals`` group: per terminal (in signature order) a group of its members
    (``send``, ``send_ack``, ``recv``, ``recv_ack``)."""
    per: dict[str, list] = {}
    for r in rows:
        if r["endpoint"] is not None:
            per.setdefault(r["endpoint"], []).append((f"{root}.{r['name']}", r["width"]))
    return WaveGroup.of(TERMINALS, groups=[WaveGroup.of(t, sigs) for t, sigs in per.items()])


def wave_groups(net, top: str | None = None, core: str | None = None, *,
                family: SimFamily) -> list[WaveGroup]:
    """Every group shown, from the family's :class:`~fatnet.sim.family.Waves` hook, the
    controller and the terminals first (none for a family without waves)."""
    from .family import waves_of
    hooks = waves_of(family)
    if hooks is None:
        return []
    core = core or net.family
    groups = hooks.wave_groups(net, top or f"{core}_harness", core)
    first = [g for t in (CONTROLLER, TERMINALS) for g in groups if g.title == t]
    return first + [g for g in groups if g.title not in (CONTROLLER, TERMINALS)]


def fit_zoom(end_time: float) -> float:
    """GTKWave's zoom (2 ** -zoom time units per 200 pixels) at which ``end_time`` (in
    the dump's time units) fills the wave pane of a :data:`WINDOW` window."""
    return -math.log2(max(end_time, 1) * _PIXELS_PER_FRAME / _WAVE_PANE)


def _layout(groups: list[WaveGroup], decoded: dict) -> list[str]:
    """The save file's trace lines: the controller flat, the terminals' group open and
    every other group closed; a signal's decoded traces right under it. A flag line
    (``@<hex>``) is written where the flags change, as GTKWave writes them."""
    lines: list[str] = []
    flags: list[int | None] = [None]

    def put(flag, *names):
        if flag != flags[0]:
            lines.append(f"@{flag:x}")
            flags[0] = flag
        lines.extend(names)

    def show(path, width, hidden):
        fold = _COLLAPSED if hidden else 0
        put((_BIT if width == 1 else _VECTOR) | fold, _vec(path, width))
        if decoded.get(path):
            put(_TEXT | fold, *decoded[path])

    def group(g: WaveGroup, closed: bool, hidden: bool):
        """A group; ``hidden``: it sits inside a closed group (GTKWave marks every
        trace a closed group hides, its end marker included, collapsed)."""
        shut = _CLOSED if closed else 0
        put(_GRP_BEGIN | _BLANK | shut | (_COLLAPSED if hidden else 0), f"-{g.title}")
        for sig in g.signals:
            show(sig.path, sig.width, hidden=hidden or closed)
        for sub in g.groups:
            group(sub, closed=True, hidden=hidden or closed)
        put(_GRP_END | _BLANK | shut | (_COLLAPSED if hidden or closed else 0),
            f"-{g.title}")

    for g in groups:
        if g.title == CONTROLLER:
            for sig in g.signals:
                show(sig.path, sig.width, hidden=False)
        else:
            group(g, closed=g.title != TERMINALS, hidden=False)
    return lines


def write_gtkw(net, dump_file, gtkw_file, top: str | None = None,
               decoded: dict | None = None, end_time: float | None = None, *,
               family: SimFamily) -> Path:
    """Write a .gtkw that opens ``dump_file`` in a :data:`WINDOW` window on the whole
    run: the controller signals first, then the terminals (one closed group each), then
    one closed group per node or level (with a closed group per port or switch).

    Parameters
    ----------
    net : FatTreeNetwork or CircuitNetwork or HypercubeCircuit
    family : SimFamily
        The family's hooks (its :class:`~fatnet.sim.family.Waves` say what is shown).
    dump_file, gtkw_file : path-like
    top : str
        Name of the top module in the dump (default the harness, ``<family>_harness``).
    decoded : dict, optional
        ``{signal path: [decoded trace paths]}`` (what
        :func:`fatnet.sim.wavedecode.decode_into_vcd` returns): each signal's decoded
        traces are shown right under it.
    end_time : float, optional
        The dump's last time (in GTKWave's time units,
        :func:`fatnet.sim.wavedecode.dump_end`): the zoom fits it in the window. Without
        it GTKWave's own zoom applies.
    """
    dump_file, gtkw_file = Path(dump_file).resolve(), Path(gtkw_file)
    lines = [f'[dumpfile] "{dump_file}"', f'[savefile] "{gtkw_file.resolve()}"',
             "[timestart] 0", f"[size] {WINDOW[0]} {WINDOW[1]}", "[pos] -1 -1"]
    if end_time is not None:
        # the zoom, the marker and GTKWave's 26 named markers (none set)
        lines.append(f"*{fit_zoom(end_time):.6f}" + " -1" * 27)
    lines += ["[sst_expanded] 0", f"[signals_width] {SIGNALS_WIDTH}"]
    lines += _layout(wave_groups(net, top, family=family), decoded or {})
    gtkw_file.parent.mkdir(parents=True, exist_ok=True)
    gtkw_file.write_text("\n".join(lines) + "\n")
    return gtkw_file


def write_waves(net, results, dump_file, out_dir, top: str | None = None,
                name: str | None = None, *, family: SimFamily):
    """``fatnet sim --waves``: copy the simulator's dump into ``out_dir``, merge the
    decoded message traces of the model's cycle ``results`` into it (a VCD) and write
    the .gtkw (``<name>.gtkw``, default ``<family>.gtkw``) that shows them under their
    wires. Returns (dump, gtkw, note): ``note`` says why there are no decoded traces
    (None when there are); a family without :class:`~fatnet.sim.family.Waves` gets the
    dump alone (gtkw None)."""
    import shutil

    from .family import waves_of
    from .wavedecode import WaveDecodeError, decode_into_vcd, dump_end
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    dump = out / Path(dump_file).name
    shutil.copyfile(dump_file, dump)
    decoded: dict = {}
    note = None
    if waves_of(family) is None:
        return dump, None, (f"the {net.family} family has no wave groups: no .gtkw and "
                            "no decoded message traces")
    if dump.suffix != ".vcd":
        note = f"{dump.name} is not a VCD; no decoded message traces"
    else:
        try:
            decoded = decode_into_vcd(net, results, dump, top=top, family=family)
        except WaveDecodeError as e:
            note = f"no decoded message traces: {e}"
    end = dump_end(dump) if dump.suffix == ".vcd" else None
    gtkw = write_gtkw(net, dump, out / f"{name or net.family}.gtkw", top=top,
                      decoded=decoded, end_time=end, family=family)
    return dump, gtkw, note
