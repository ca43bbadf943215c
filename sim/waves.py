"""GTKWave save files, with groups derived from the design's signatures.

The family's ``wave_groups`` (:mod:`fatnet.sim.fattree.waves`,
:mod:`fatnet.sim.butterfly.waves`) says what is shown: the controller's members of the
network top's signature first, then the family's groups (the fat-tree: one per node, a
group per port; splitter networks: one per level, a group per switch), then the
endpoints (every :class:`~fatnet.hdl.signatures.EndpointSignature` member of the top).

:func:`write_waves` (``fatnet sim --waves``) also merges the decoded message traces of
:mod:`fatnet.sim.wavedecode` into the dump and shows each one under its wire's signal.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["write_gtkw", "wave_groups", "write_waves"]


def _vec(path: str, width: int) -> str:
    return f"{path}[{width - 1}:0]" if width > 1 else path


def wave_groups(net, top: str | None = None, core: str | None = None, *, family):
    """``[(group title, [(path, width) or (subgroup title, [(path, width)])])]`` of
    every signal shown, from the family's hook."""
    core = core or net.family
    return family.testbench.wave_groups(net, top or f"{core}_harness", core)


def write_gtkw(net, dump_file, gtkw_file, top: str | None = None,
               decoded: dict | None = None, *, family) -> Path:
    """Write a .gtkw that opens ``dump_file`` with the controller signals first, then one
    collapsed group per node or level (with a group per port or switch), then the
    endpoints.

    Parameters
    ----------
    net : FatTreeNetwork or CircuitNetwork
    family : SimFamily
        The family's hooks (its ``testbench.wave_groups`` says what is shown).
    dump_file, gtkw_file : path-like
    top : str
        Name of the top module in the dump (default the harness, ``<family>_harness``).
    decoded : dict, optional
        ``{signal path: [decoded trace path per wire]}`` (what
        :func:`fatnet.sim.wavedecode.decode_into_vcd` returns): each signal's decoded
        traces are shown right under it.
    """
    decoded = decoded or {}

    def show(path, width):
        out = ["@28", _vec(path, width)]
        if decoded.get(path):
            out += ["@22"] + decoded[path]
        return out

    dump_file, gtkw_file = Path(dump_file).resolve(), Path(gtkw_file)
    lines = [f'[dumpfile] "{dump_file}"', f'[savefile] "{gtkw_file.resolve()}"',
             "[timestart] 0"]
    for title, items in wave_groups(net, top, family=family):
        if title == "controller":
            for p, w in items:
                lines += show(p, w)
            continue
        lines += ["@800200", f"-{title}"]
        for item in items:
            if isinstance(item[1], list):
                sub, sigs = item
                lines += ["@800200", f"-{sub}"]
                for p, w in sigs:
                    lines += show(p, w)
                lines += ["@1000200", f"-{sub}"]
            else:
                lines += show(*item)
        lines += ["@1000200", f"-{title}"]
    gtkw_file.parent.mkdir(parents=True, exist_ok=True)
    gtkw_file.write_text("\n".join(lines) + "\n")
    return gtkw_file


def write_waves(net, results, dump_file, out_dir, top: str | None = None,
                name: str | None = None, *, family):
    """``fatnet sim --waves``: copy the simulator's dump into ``out_dir``, merge the
    decoded message traces of the model's cycle ``results`` into it (a VCD) and write
    the .gtkw (``<name>.gtkw``, default ``<family>.gtkw``) that shows them under their
    wires. Returns (dump, gtkw, note): ``note`` says why there are no decoded traces
    (None when there are)."""
    import shutil

    from .wavedecode import WaveDecodeError, decode_into_vcd
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    dump = out / Path(dump_file).name
    shutil.copyfile(dump_file, dump)
    decoded, note = {}, None
    if dump.suffix != ".vcd":
        note = f"{dump.name} is not a VCD; no decoded message traces"
    else:
        try:
            decoded = decode_into_vcd(net, results, dump, top=top, family=family)
        except WaveDecodeError as e:
            note = f"no decoded message traces: {e}"
    gtkw = write_gtkw(net, dump, out / f"{name or net.family}.gtkw", top=top,
                      decoded=decoded, family=family)
    return dump, gtkw, note
