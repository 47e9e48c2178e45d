"""Entry point of ``python3 -m paddle_prof``."""

import sys

from paddle_prof.cli import main

sys.exit(main())
