"""`citewise` command line: ingest | reindex | doctor | ask | required-data | resume | artifact | history | demo |
eval.

One module per group of commands; each registers its sub-commands. Bad input prints one line on
stderr and exits 2; tracebacks are only shown with CITEWISE_DEBUG=1.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from typing import NoReturn

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


def run() -> NoReturn:
    """The `citewise` command: `main()`, then exit without the interpreter's teardown.

    Why: at exit Python frees ~1,500 modules, the ONNX session and the KB snapshot, ~0.5 s of every
    one-shot command (evals/bench_cold.py) that nothing needs: by then the output is printed and the
    query log, threads and indexes are committed to SQLite. What exit would still do that matters is
    done here first: flush stdout, stderr and logging, and send pending LangSmith traces when tracing
    is on. `main()` itself returns normally, for callers in this process (tests, other tools).
    """
    try:
        code = main()
    except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int | None):
            sys.stderr.write(f"{exc.code}\n")
    leave(code)


def leave(code: int) -> NoReturn:
    """Flush what a normal exit would flush, then end the process at once (see run)."""
    tracers = sys.modules.get("langchain_core.tracers.langchain")
    if tracers is not None:
        with contextlib.suppress(Exception):
            tracers.wait_for_all_tracers()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
