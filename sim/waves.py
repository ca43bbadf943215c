"""GTKWave save files for fat-tree waveforms: signals grouped per node and port."""

from __future__ import annotations

from pathlib import Path

from ..golden.fattree.topology import PORT_L, PORT_NAMES, PORT_R, PORT_U

__all__ = ["write_gtkw"]


def _vec(path: str, width: int) -> str:
    return f"{path}[{width - 1}:0]" if width > 1 else path


def write_gtkw(net, dump_file, gtkw_file, top: str = "fattree_harness") -> Path:
    """Write a .gtkw that opens ``dump_file`` with the controller signals first, then one
    collapsed group per node (heap order, root first) holding a group per port with its
    in/out message wires and acknowledgments, then the leaves' ports.

    Parameters
    ----------
    net : FatTreeNetwork
    dump_file, gtkw_file : path-like
    top : str
        Name of the top module in the dump (the harness by default).
    """
    dump_file, gtkw_file = Path(dump_file).resolve(), Path(gtkw_file)
    core = f"{top}.fattree"
    lines = [f'[dumpfile] "{dump_file}"', f'[savefile] "{gtkw_file.resolve()}"',
             "[timestart] 0", "@28", f"{top}.clk", f"{top}.start", f"{core}.busy", "@24",
             _vec(f"{core}.bit_time", max(1, net.cycle_length.bit_length()))]
    for node in range(2 ** net.L - 1):
        level = (node + 1).bit_length() - 1
        lines += ["@800200", f"-node_{node} (level {level})"]
        for port in (PORT_U, PORT_L, PORT_R):
            name = PORT_NAMES[port].lower()
            width = net.port_width(node, port)
            lines += ["@800200", f"-{PORT_NAMES[port]}", "@28"]
            for sig in ("i", "o", "ack_i", "ack_o"):
                lines.append(_vec(f"{core}.node_{node}.{name}__{sig}", width))
            lines += ["@1000200", f"-{PORT_NAMES[port]}"]
        lines += ["@1000200", f"-node_{node} (level {level})"]
    lines += ["@800200", "-leaves", "@28"]
    for i in range(net.n):
        w = net.spec.capacities[-1]
        for sig in ("send", "send_ack", "recv", "recv_ack"):
            lines.append(_vec(f"{core}.leaf__{i}__{sig}", w))
    for sig in ("send", "send_ack", "recv", "recv_ack"):
        lines.append(_vec(f"{core}.ext__{sig}", net.spec.capacities[0]))
    lines += ["@1000200", "-leaves"]
    gtkw_file.parent.mkdir(parents=True, exist_ok=True)
    gtkw_file.write_text("\n".join(lines) + "\n")
    return gtkw_file
