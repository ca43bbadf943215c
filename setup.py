"""Package discovery for the layer folders (the rest of the metadata is in pyproject.toml).

The top-level folders install as ``fatnet.<layer>`` (``golden/`` -> ``fatnet.golden``),
and every package below a layer (one per network family) is found here, so that a new
family's folder cannot be left out of the wheel by a hand-kept list.
"""

from setuptools import find_packages, setup

#: The top-level folders that install under ``fatnet``: the three layers, the CLI and
#: the Python API (with the family registry, which belongs to no layer).
LAYERS = ("golden", "hdl", "sim", "cli", "api")

packages, package_dir = [], {}
for layer in LAYERS:
    packages.append(f"fatnet.{layer}")
    packages += [f"fatnet.{layer}.{sub}" for sub in find_packages(where=layer)]
    package_dir[f"fatnet.{layer}"] = layer

# shipped data read at run time (hdl/board.py), each with its provenance: the size
# search's findings (copied from bench/results/raw/ by `python bench/boards.py --ship`)
# and the measured builds of the fit estimate; no benchmark writes into the package
setup(packages=packages, package_dir=package_dir,
      package_data={"fatnet.hdl": ["board_sizes.json", "board_builds.json"]})
