"""`citewise ingest`, `citewise reindex` and `citewise doctor`: writing and maintaining a home."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .args import EXIT_USAGE, HOME_HELP, pairs, print_json


def cmd_ingest(args: argparse.Namespace) -> int:
    from ..config import Context
    from ..kb.ingest import ingest

    overrides = {k: v for k, v in (("chunk_size", args.chunk_size), ("chunk_overlap", args.chunk_overlap)) if v}
    ctx = Context(**overrides) if overrides else None
    tags = pairs(args.tag, "--tag")
    summary = ingest(args.paths, args.home, prune=args.prune, context=ctx, progress=not args.json, tags=tags,
                     workers=args.workers)
    if args.json:
        print_json(summary)
    else:
        skipped = f", {summary['files_skipped']} skipped" if summary["files_skipped"] else ""
        print(f"Ingested {summary['files_ingested']} file(s), {summary['files_unchanged']} unchanged{skipped}; "
              f"documents +{summary['documents_added']} ~{summary['documents_updated']} "
              f"-{summary['documents_removed']}; "
              f"{summary['documents_total']} documents / {summary['chunks_total']} chunks in {summary['home']} "
              f"({summary['seconds']:.1f}s)")
        for line in skip_lines(summary):
            print(line, file=sys.stderr)
    if args.strict and summary["skipped"]:
        if not args.json:
            print(f"citewise: error: {summary['files_skipped']} input(s) skipped (--strict)", file=sys.stderr)
        return EXIT_USAGE
    return 0


def skip_lines(summary: dict[str, Any]) -> list[str]:
    """One line per skipped input (every ingest until it is fixed or removed), then other warnings."""
    lines = [f"skipped: {entry['path']}: {entry['reason']}" for entry in summary["skipped"]]
    said = {f"{entry['path']}: {entry['reason']}" for entry in summary["skipped"]}
    lines += [f"warning: {w}" for w in summary["warnings"] if w not in said]
    return lines


def cmd_reindex(args: argparse.Namespace) -> int:
    from ..kb.ingest import reindex

    result = reindex(args.home, embedding_model=args.embedding_model, progress=not args.json)
    print_json(result) if args.json else print(f"Reindexed {result['chunks']} chunks in {result['seconds']:.1f}s")
    return 0


EXIT_UNHEALTHY = 3  # doctor found problems it did not (or could not) fix: not a usage error, not a crash


def cmd_doctor(args: argparse.Namespace) -> int:
    from ..kb.doctor import doctor

    report = doctor(args.home, repair=args.repair)
    if args.json:
        print_json(report)
    else:
        print(f"citewise doctor: {report['home']}")
        for f in report["findings"]:
            label = "ok" if f["ok"] else "PROBLEM"
            print(f"  {label:<8} {f['check']}: {f['detail']}")
            if f["fixed"]:
                print(f"  {'fixed':<8} {f['check']}: {f['fixed']}")
        if report["healthy"]:
            print("healthy" + (" (after repairs)" if any(f["fixed"] for f in report["findings"]) else ""))
        else:
            print("problems remain" + ("" if args.repair else ": run `citewise doctor --repair` to fix what can be "
                                                             "fixed"))
    return 0 if report["healthy"] else EXIT_UNHEALTHY


def register(sub: Any) -> None:
    p = sub.add_parser("ingest", help="ingest Markdown/text/BEIR .jsonl, PDF, DOCX, HTML, PPTX, XLSX and "
                                      "transcript (.vtt/.srt) files or folders")
    p.add_argument("paths", nargs="+")
    p.add_argument("--home", help=HOME_HELP)
    p.add_argument("--prune", action="store_true", help="remove documents whose files are gone")
    p.add_argument("--chunk-size", type=int)
    p.add_argument("--chunk-overlap", type=int)
    p.add_argument("--tag", action="append", metavar="KEY=VALUE",
                   help="filterable metadata for every document of this ingest (repeatable; front matter wins)")
    p.add_argument("--strict", action="store_true", help="exit 2 when any input was skipped")
    p.add_argument("--workers", type=int, help="processes converting office files (default: by batch size and CPUs)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("reindex", help="rebuild the BM25 and vector indexes from the store")
    p.add_argument("--home", help=HOME_HELP)
    p.add_argument("--embedding-model", help="switch the home to another embedding model (minilm | openai:MODEL)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_reindex)

    p = sub.add_parser("doctor", help="check a home: store integrity, index against the store, leftovers "
                                      "(exit 3 when problems remain)")
    p.add_argument("--home", help=HOME_HELP)
    p.add_argument("--repair", action="store_true", help="fix what can be fixed without losing content")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor)
