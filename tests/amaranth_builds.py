"""One Amaranth-simulator build per network design, shared by the tests of a module
(importable as ``amaranth_builds``: pytest puts tests/ on the path for its conftest.py);
the ``amaranth_runs`` fixture of tests/conftest.py hands it out."""

import json
from collections import OrderedDict

from fatnet.api.registry import family_of
from fatnet.sim.amaranth_bench import PortBench
from fatnet.sim.plan import plans as make_plans


class BuildCache:
    """``cache(net, ms, cycles, masks=None)``: (plan, mismatches) per cycle, the plans made
    from ``net``, run on the build of ``net``'s design (made on first use). Two networks
    share a build when their family and build parameters (what keys a Verilog build) are
    equal. Only the ``keep`` builds used last are kept (a compiled design holds many
    objects, which every garbage collection walks): tests that share a design are
    parametrized so that they run one after the other."""

    def __init__(self, keep: int = 4):
        self._benches: OrderedDict = OrderedDict()
        self._keep = keep
        self.builds = 0

    def bench(self, net) -> PortBench:
        family = family_of(net)
        params = family.testbench.build_params(net).params
        key = (type(net).__qualname__, json.dumps(params, sort_keys=True, default=str))
        if key not in self._benches:
            self._benches[key] = PortBench(net, family=family)
            self.builds += 1
            while len(self._benches) > self._keep:
                self._benches.popitem(last=False)
        self._benches.move_to_end(key)
        return self._benches[key]

    def __call__(self, net, ms, cycles, masks=None) -> list:
        family = family_of(net)
        plans = make_plans(net, ms, cycles, masks, family=family)  # refusals first
        return self.bench(net).run_plans(plans)
