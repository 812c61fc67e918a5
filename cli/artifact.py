"""`citewise artifact TYPE "subject"`: a cited checklist, workflow, call script, brief or blueprint.

Prints the artifact's Markdown (or, with --json, the whole result); --out writes the Markdown to a
file and prints a one-line summary. A subject the knowledge base cannot support abstains as an answer
would: the decision is out_of_scope and the Markdown says so under every heading, nothing invented.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..engine.artifact_types import ARTIFACT_TYPES
from ..errors import InputError
from .args import HOME_HELP, context_overrides, filters, pairs, print_json, text_arg


def cmd_artifact(args: argparse.Namespace) -> int:
    from .ask import preload_embedder

    preload_embedder()
    from ..api import artifact

    result = artifact(args.type, args.subject, home=args.home, filters=filters(args),
                      collected_data=pairs(args.data, "--data"), max_tokens=args.max_tokens, **context_overrides(args))
    markdown = (result.get("artifact") or {}).get("markdown") or (result.get("response") or {}).get("text", "")
    if args.out:
        try:
            Path(args.out).write_text(markdown, encoding="utf-8")
        except OSError as exc:
            raise InputError(f"--out {args.out}: cannot write: {exc.strerror or exc}") from None
    if args.json:
        print_json(result)
    elif args.out:
        cited = len(result.get("citations") or [])
        print(f"{result.get('decision')} (confidence {result.get('confidence', 0):.2f}): wrote {args.out}, "
              f"{cited} source(s)")
    else:
        sys.stdout.write(markdown if markdown.endswith("\n") else markdown + "\n")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("artifact", help="build a cited checklist, workflow, call script, brief or blueprint")
    p.add_argument("type", choices=list(ARTIFACT_TYPES), help="the kind of artifact")
    p.add_argument("subject", type=text_arg,
                   help='what it is about, e.g. "hardship withdrawal at Acme" ("-": read it from standard input)')
    p.add_argument("--out", metavar="FILE.md", help="write the Markdown to this file")
    p.add_argument("--json", action="store_true", help="print the full JSON result")
    p.add_argument("--home", help=HOME_HELP)
    p.add_argument("--filter", action="append", metavar="KEY=VALUE", help="metadata filter (repeatable)")
    p.add_argument("--filter-json", metavar="JSON", help="a full filter in Pinecone's filter language")
    p.add_argument("--data", action="append", metavar="KEY=VALUE", help="collected data (repeatable)")
    p.add_argument("--max-tokens", type=int, help="token budget (default 4000 for an artifact; 70%% is context)")
    p.add_argument("--model", help="OpenAI-compatible chat model (default: extractive, offline)")
    p.add_argument("--base-url", help="base URL of an OpenAI-compatible server")
    p.set_defaults(func=cmd_artifact)
