"""The fat-tree family's catalogue of network specs, shared by its model tests.

A test that takes a ``fattree_spec`` argument runs once per catalogue entry (its name);
``fattree_catalogue[name](**options)`` builds the spec with switch options.
"""

import pytest

from fatnet.golden.fattree.spec import FatTreeSpec

#: name -> factory(**options) -> FatTreeSpec: every capacity profile, 2 to 64 leaves
CATALOGUE = {
    "universal-2": lambda **kw: FatTreeSpec.universal(2, 2, **kw),
    "universal-16": lambda **kw: FatTreeSpec.universal(16, 8, **kw),
    "universal-64": lambda **kw: FatTreeSpec.universal(64, 20, **kw),
    "constant-8": lambda **kw: FatTreeSpec.constant(8, 2, **kw),
    "explicit-8": lambda **kw: FatTreeSpec.explicit(8, (5, 4, 3, 2), **kw),
}


def pytest_generate_tests(metafunc):
    if "fattree_spec" in metafunc.fixturenames:
        metafunc.parametrize("fattree_spec", sorted(CATALOGUE))


@pytest.fixture(scope="session")
def fattree_catalogue():
    return CATALOGUE
