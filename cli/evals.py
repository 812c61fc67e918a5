"""`citewise demo` and `citewise eval`."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from ..errors import InputError
from .args import print_json
from .render import format_answer

DEMO_QUESTIONS = [
    ("How do I roll over my Acme 401(k) to an IRA?", {}),
    ("What information do I need to collect for a 403(b) hardship withdrawal?", {}),
    ("What is the best recipe for banana bread?", {}),
]


def sample_kb() -> Path:
    return Path(__file__).resolve().parent.parent / "examples" / "kb"


def cmd_demo(args: argparse.Namespace) -> int:
    from ..api import ask
    from ..config import Context
    from ..kb.ingest import ingest

    with tempfile.TemporaryDirectory(prefix="citewise-demo-") as home:  # never the configured database
        summary = ingest([sample_kb()], home, context=Context(database_url=""), progress=False)
        if not args.json:
            print(f"Ingested the sample knowledge base: {summary['documents_total']} articles, "
                  f"{summary['chunks_total']} chunks ({summary['seconds']:.1f}s)\n")
        results = []
        for question, data in DEMO_QUESTIONS:
            result = ask(question, home=home, collected_data=data, mode=None, database_url="")
            results.append({"question": question, **result})
            if not args.json:
                print("=" * 100)
                print(f"Q: {question}\n")
                print(format_answer(result))
                print()
        if args.json:
            print_json(results)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    if args.what == "questions":
        from ..evals.questions import main as run

        return run(args.rest)
    if args.what == "retrieval":
        from ..evals.retrieval import main as run

        return run(args.rest)
    if args.what in ("runs", "compare"):
        from ..evals.runs import main as run

        return run(args.rest, what=args.what)
    if args.what == "peers":
        from ..evals.bench_retrieval import main as run

        return run(args.rest)
    raise InputError(f"unknown eval {args.what!r}")


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="ingest the sample KB into a temporary home and answer three questions")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("eval", help="evaluations: questions | retrieval | peers; stored runs: runs | compare A B")
    p.add_argument("what", choices=["questions", "retrieval", "peers", "runs", "compare"])
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_eval)
