"""Allow ``python -m sblr_rt.cli``."""

import sys

from sblr_rt.cli import main

sys.exit(main())
