"""`python -m citewise.cli` runs the command line (as the `citewise` command does: see cli.run)."""

from . import run

run()
