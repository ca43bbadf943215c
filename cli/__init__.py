"""The ``fatnet`` command line, above the Python API (:mod:`fatnet.api`) and the layers."""
