"""The butterfly family's catalogue of networks, shared by its tests.

A test that takes a ``bfly_network`` argument runs once per catalogue entry (its name);
``bfly_catalogue[name]`` is ``(kind, inputs, multiplicity, modified)``.
"""

import pytest

#: name -> (kind, inputs, multiplicity, modified): every kind, d = 1 to 3, "*" included
CATALOGUE = {
    "butterfly-16": ("butterfly", 16, 1, False),
    "dilated2-16": ("dilated-butterfly", 16, 2, False),
    "dilated3-32": ("dilated-butterfly", 32, 3, False),
    "multi2-32": ("multibutterfly", 32, 2, False),
    "multi3-16": ("multibutterfly", 16, 3, False),
    "multi2-star-32": ("multibutterfly", 32, 2, True),
}


def pytest_generate_tests(metafunc):
    if "bfly_network" in metafunc.fixturenames:
        metafunc.parametrize("bfly_network", sorted(CATALOGUE))


@pytest.fixture(scope="session")
def bfly_catalogue():
    return CATALOGUE
