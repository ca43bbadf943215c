"""``python -m fatnet.cli``: the same as the ``fatnet`` command."""

import sys

from .main import main

sys.exit(main())
