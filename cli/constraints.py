"""``python -m fatnet.cli.constraints --constraints DIR``: the boards' constraint files
for the self-testing top (``constraints/`` in the repository), written from the
amaranth-boards platforms exactly as ``fatnet board`` writes them, and a README of the
pins."""

from __future__ import annotations

from pathlib import Path

__all__ = ["constraint_files", "write_constraints"]


def _pin_role(board: str, port: str) -> str:
    """What a top-level pin of the self-testing top is for (its resource's name)."""
    from ..hdl.board import BOARDS
    b = BOARDS[board]
    res = port[:-len("__io")]
    leds = {f"{b.led_heartbeat[0]}_{b.led_heartbeat[1]}": "the heartbeat LED (blinks)",
            f"{b.led_error[0]}_{b.led_error[1]}": "the error LED (lights when the error "
                                                   "counter is not 0)"}
    if res in leds:
        return leds[res]
    if res == f"{b.reset[0]}_{b.reset[1]}":
        return "the reset button (held: the design stays in reset)"
    if res.endswith("__tx"):
        return "UART transmit: the report lines, 115200 baud 8N1, to the USB serial adapter"
    if "__" in res:
        return "UART receive/control from the USB serial adapter: an input, not read"
    return "the board's oscillator: the clock of the whole design"


def constraint_files(board: str) -> dict:
    """The constraint file the board build writes for the self-testing top (its pins do
    not depend on the network), and a README line per pin: {file name: text}."""
    from ..api import family_of, network
    from ..hdl.board import BOARDS, BoardTop, baud_divisor, board_platform
    from ..sim.bist import build_core, make_plan
    net = network("butterfly", inputs=4, payload_bits=8)
    plan = make_plan(net, family_of(net), baud_divisor=baud_divisor(BOARDS[board].clock_mhz),
                     report_cycles=100000)
    platform = board_platform(board)
    files = platform.prepare(BoardTop(build_core(plan), board), name="bist_top").files
    ext = BOARDS[board].constraints
    return {f"bist_top.{ext}": files[f"bist_top.{ext}"]}


def write_constraints(root: Path) -> list[Path]:
    """``root/<board>/bist_top.<pcf|lpf|xdc|cst>`` for every board, and ``root/README.md``."""
    import re

    from ..hdl.board import BOARDS
    root = Path(root)
    written = []
    rows = []
    for board in sorted(BOARDS):
        (root / board).mkdir(parents=True, exist_ok=True)
        for name, text in constraint_files(board).items():
            path = root / board / name
            path.write_text(text if isinstance(text, str) else text.decode())
            written.append(path)
            for port, pin in re.findall(
                    r'(?:set_io|LOCATE COMP) "?(\w+?__io)"?(?: SITE)? "?(\w+)"?', path.read_text()):
                rows.append((board, port, pin))
            for pin, port in re.findall(r'set_property LOC (\w+) \[get_ports "(\w+)"\]',
                                        path.read_text()):
                rows.append((board, port, pin))
            for port, pin in re.findall(r'IO_LOC "(\w+)" (\w+);', path.read_text()):
                rows.append((board, port, pin))
    lines = ["# Board constraints", "",
             "Written by `python -m fatnet.cli.constraints --constraints constraints` from the "
             "amaranth-boards platforms, exactly as `fatnet board ... --board B` writes "
             "them into its output directory (`tests/test_bist.py` checks that they still "
             "match). The pins do not depend on the network: every self-testing top uses "
             "the clock, a reset button, two LEDs and the UART. These are the files of the "
             "oscillator's clock; with `--clock` through the PLL, the build's own file "
             "adds the PLL output's frequency (`pll_clk`).", "",
             "| Board | Port | Pin | What it is for |", "|---|---|---|---|"]
    for board, port, pin in rows:
        lines.append(f"| {board} | `{port}` | {pin} | {_pin_role(board, port)} |")
    (root / "README.md").write_text("\n".join(lines) + "\n")
    return written + [root / "README.md"]


def main(argv=None) -> None:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m fatnet.cli.constraints",
                                 description="Write the boards' constraint files.")
    ap.add_argument("--constraints", required=True, metavar="DIR",
                    help="write DIR/<board>/bist_top.<pcf|lpf|xdc|cst> and DIR/README.md")
    args = ap.parse_args(argv)
    for path in write_constraints(Path(args.constraints)):
        print(path)


if __name__ == "__main__":
    main()
