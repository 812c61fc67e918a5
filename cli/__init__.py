"""`citewise` command line: ingest | reindex | doctor | ask | required-data | resume | artifact | history | demo |
eval.

One module per group of commands; each registers its sub-commands. Bad input prints one line on
stderr and exits 2; tracebacks are only shown with CITEWISE_DEBUG=1.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..engine import querylog
from ..errors import CitewiseError
from . import artifact, ask, evals, history, ingest
from .args import EXIT_USAGE, Parser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="citewise", description="Grounded knowledge-base answers with citations.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    ingest.register(sub)
    ask.register(sub)
    artifact.register(sub)
    evals.register(sub)
    history.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    args = build_parser().parse_args(argv)
    try:
        with querylog.surface("cli"):  # answers given by this command are logged as the CLI's
            return int(args.func(args) or 0)
    except CitewiseError as exc:
        sys.stderr.write(f"citewise: error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt as exc:  # an ingest's `Interrupted` says what it kept and what to run
        sys.stderr.write(f"citewise: {exc}\n" if str(exc) else "citewise: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if os.environ.get("CITEWISE_DEBUG"):
            raise
        sys.stderr.write(f"citewise: internal error: {type(exc).__name__}: {exc} (set CITEWISE_DEBUG=1 for details)\n")
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
