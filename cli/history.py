"""`citewise history`: the query log of a home (every answer from every surface, newest first)."""

from __future__ import annotations

import argparse
from typing import Any

from ..config import Context
from ..errors import InputError
from .args import HOME_HELP, print_json

DECISIONS = ("can_proceed", "needs_data", "uncertain", "out_of_scope")


def parse_since(text: str) -> float:
    from ..engine.querylog import parse_since as parse

    try:
        return parse(text)
    except ValueError as exc:
        raise InputError(f"--{exc}") from None


def format_rows(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No queries recorded."
    lines = [f"{'time (UTC)':<20} {'surface':<8} {'decision':<13} {'conf':>5} {'ms':>8}  question"]
    for r in rows:
        when = str(r.get("time", ""))[:19].replace("T", " ")
        conf = "" if r.get("confidence") is None else f"{r['confidence']:.2f}"
        decision = r.get("decision") or ("error" if r.get("error") else "-")
        question = str(r.get("question", "")).replace("\n", " ")
        lines.append(f"{when:<20} {r.get('surface', ''):<8} {decision:<13} {conf:>5} {r.get('latency_ms', 0):>8.0f}  "
                     f"{question[:70]}")
        lines.append(f"{'':<20} id {r.get('id')}" + (f"  error: {r['error'][:80]}" if r.get("error") else ""))
    return "\n".join(lines)


def cmd_history(args: argparse.Namespace) -> int:
    from ..engine import querylog

    ctx = Context(home=args.home) if args.home else Context()
    if args.limit < 1:
        raise InputError("--limit must be at least 1")
    since = parse_since(args.since) if args.since else None
    store = querylog.open_log(ctx)
    if store is None:
        raise InputError(f"no knowledge base at {ctx.home_path}: nothing has been asked there")
    if args.id:
        row = store.query(args.id)
        if row is None:
            raise InputError(f"no query {args.id!r} in the log of {ctx.home_path}")
        rows = [row]
    else:
        rows = store.queries(since=since, decision=args.decision, limit=args.limit)
    print_json(rows) if args.json else print(format_rows(rows))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("history", help="the query log: what was asked, on which surface, and what was answered")
    p.add_argument("id", nargs="?", help="one record by its id (from metadata.query_id)")
    p.add_argument("--home", help=HOME_HELP)
    p.add_argument("--since", metavar="WHEN", help="ISO-8601 date/time, or a duration back from now: 30m, 12h, 7d")
    p.add_argument("--decision", choices=DECISIONS, help="only answers with this decision")
    p.add_argument("--limit", type=int, default=100, help="at most this many records (default 100)")
    p.add_argument("--json", action="store_true", help="print the records as JSON")
    p.set_defaults(func=cmd_history)
