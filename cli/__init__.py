"""The ``fatnet`` command line and the family registry, above the golden/hdl/sim layers."""
