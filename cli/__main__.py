"""`python -m citewise.cli` runs the command line."""

from . import main

raise SystemExit(main())
