"""The command line the probe evals share (evals/injection.py, evals/stated.py): the report as JSON, then,
unless `--json`, a Markdown table of it with one row per probe, as BENCHMARKS.md quotes it."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any


def probe_main(prog: str, doc: str, evaluate: Callable[[], dict[str, Any]], columns: list[str],
               row: Callable[[str, dict[str, Any]], list[Any]], argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {prog}", description=doc.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    report = evaluate()
    print(json.dumps(report, indent=2))
    if not args.json:
        print("\n| " + " | ".join(columns) + " |")
        print("|" + "---|" * len(columns))
        for name, entry in report.items():
            print("| " + " | ".join(str(cell) for cell in row(name, entry)) + " |")
    return 0
