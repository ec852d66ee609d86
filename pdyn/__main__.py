"""``python -m pdyn`` is the ``pdyn`` command."""

import sys

from .cli import main

sys.exit(main())
