"""GTKWave save files for fat-tree waveforms, with groups derived from the signatures.

The controller's members of the network top's signature come first, then one group per
node (heap order, root first) holding a group per port (``U``, ``L``, ``R``: the members
of the node's signature, ``i.data``, ``i.ack``, ``o.data``, ``o.ack``), then the
endpoints (every :class:`~fatnet.hdl.signatures.EndpointSignature` member of the top).
"""

from __future__ import annotations

from pathlib import Path

from ..golden.fattree.topology import PORT_L, PORT_NAMES, PORT_R, PORT_U
from ..hdl.fattree.network import NodeSignature, network_signature
from ..hdl.signatures import port_rows

__all__ = ["write_gtkw", "wave_groups"]


def _vec(path: str, width: int) -> str:
    return f"{path}[{width - 1}:0]" if width > 1 else path


def wave_groups(net, top: str = "fattree_harness", core: str = "fattree"):
    """``[(group title, [(path, width) or (subgroup title, [(path, width)])])]`` of
    every signal shown, from the signatures of the network top and of its nodes."""
    root = f"{top}.{core}"
    top_rows = port_rows(network_signature(net))
    controller = [(f"{top}.clk", 1)] + [(f"{root}.{r['name']}", r["width"])
                                       for r in top_rows if r["endpoint"] is None]
    groups = [("controller", controller)]
    for node in range(net.n - 1):
        level = (node + 1).bit_length() - 1
        sig = NodeSignature(net.port_width(node, p) for p in (PORT_U, PORT_L, PORT_R))
        rows = port_rows(sig)
        ports = []
        for p in (PORT_U, PORT_L, PORT_R):
            member = "ulr"[p]
            ports.append((PORT_NAMES[p], [(f"{root}.node_{node}.{r['name']}", r["width"])
                                          for r in rows if r["path"][0] == member]))
        groups.append((f"node_{node} (level {level})", ports))
    groups.append(("endpoints", [(f"{root}.{r['name']}", r["width"])
                                 for r in top_rows if r["endpoint"] is not None]))
    return groups


def write_gtkw(net, dump_file, gtkw_file, top: str = "fattree_harness") -> Path:
    """Write a .gtkw that opens ``dump_file`` with the controller signals first, then one
    collapsed group per node (heap order, root first) holding a group per port with its
    in/out message wires and acknowledgments, then the endpoints (leaves, ``ext``).

    Parameters
    ----------
    net : FatTreeNetwork
    dump_file, gtkw_file : path-like
    top : str
        Name of the top module in the dump (the harness by default).
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
