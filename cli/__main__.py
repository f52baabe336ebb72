"""Allow ``python -m sblr_rt.cli``."""

from sblr_rt.cli import console

console()
