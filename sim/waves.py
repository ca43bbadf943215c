"""GTKWave save files, with groups derived from the design's signatures.

The family's ``wave_groups`` (:mod:`fatnet.sim.fattree.waves`,
:mod:`fatnet.sim.butterfly.waves`) says what is shown: the controller's members of the
network top's signature first, then the family's groups (the fat-tree: one per node, a
group per port; splitter networks: one per level, a group per switch), then the
endpoints (every :class:`~fatnet.hdl.signatures.EndpointSignature` member of the top).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["write_gtkw", "wave_groups"]


def _vec(path: str, width: int) -> str:
    return f"{path}[{width - 1}:0]" if width > 1 else path


def wave_groups(net, top: str | None = None, core: str | None = None):
    """``[(group title, [(path, width) or (subgroup title, [(path, width)])])]`` of
    every signal shown, from the family's hook."""
    from .plan import family
    core = core or net.family
    return family(net).wave_groups(net, top or f"{core}_harness", core)


def write_gtkw(net, dump_file, gtkw_file, top: str | None = None) -> Path:
    """Write a .gtkw that opens ``dump_file`` with the controller signals first, then one
    collapsed group per node or level (with a group per port or switch), then the
    endpoints.

    Parameters
    ----------
    net : FatTreeNetwork or CircuitNetwork
    dump_file, gtkw_file : path-like
    top : str
        Name of the top module in the dump (default the harness, ``<family>_harness``).
    """
    dump_file, gtkw_file = Path(dump_file).resolve(), Path(gtkw_file)
    lines = [f'[dumpfile] "{dump_file}"', f'[savefile] "{gtkw_file.resolve()}"',
             "[timestart] 0"]
    for title, items in wave_groups(net, top):
        if title == "controller":
            lines.append("@28")
            lines += [_vec(p, w) for p, w in items]
            continue
        lines += ["@800200", f"-{title}"]
        for item in items:
            if isinstance(item[1], list):
                sub, sigs = item
                lines += ["@800200", f"-{sub}", "@28"]
                lines += [_vec(p, w) for p, w in sigs]
                lines += ["@1000200", f"-{sub}"]
            else:
                lines += ["@28", _vec(*item)]
        lines += ["@1000200", f"-{title}"]
    gtkw_file.parent.mkdir(parents=True, exist_ok=True)
    gtkw_file.write_text("\n".join(lines) + "\n")
    return gtkw_file
