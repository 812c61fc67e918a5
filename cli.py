"""`citewise` command line: ingest | reindex | ask | required-data | demo | eval | resume.

Bad input prints one line on stderr and exits 2; tracebacks are only shown with CITEWISE_DEBUG=1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any, NoReturn

from citewise.errors import CitewiseError, InputError

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"citewise: error: {message} (see `{self.prog} --help`)\n")
        raise SystemExit(EXIT_USAGE)


def _parse_value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _pairs(items: list[str] | None, what: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"{what} must look like key=value (got {item!r})")
        key, parsed = key.strip(), _parse_value(value.strip())
        if key in out and what == "--filter":  # repeated key: any of the values
            prev = out[key]["$in"] if isinstance(out[key], dict) else [out[key]]
            out[key] = {"$in": [*prev, parsed]}
        else:
            out[key] = parsed
    return out


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    flt = _pairs(args.filter, "--filter")
    if getattr(args, "filter_json", None):
        try:
            extra = json.loads(args.filter_json)
        except ValueError as exc:
            raise InputError(f"--filter-json is not valid JSON: {exc}") from None
        if not isinstance(extra, dict):
            raise InputError("--filter-json must be a JSON object")
        flt = {"$and": [flt, extra]} if flt else extra
    return flt


def _context_overrides(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if getattr(args, "model", None):
        out["llm_model"] = args.model
    if getattr(args, "base_url", None):
        out["llm_base_url"] = args.base_url
    return out


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def format_answer(result: dict[str, Any]) -> str:
    """Readable rendering of a graph result for a terminal."""
    width = 100
    lines = [f"Decision: {result.get('decision')}   confidence: {result.get('confidence', 0):.2f}"]
    ref = result.get("article_reference")
    if ref:
        lines.append(f"Article: {ref['article_id']} ({ref.get('title', '')}), confidence {ref['confidence']:.2f}")
    text = (result.get("response") or {}).get("text", "")
    if text:
        lines.append("")
        for para in text.splitlines():
            lines.extend(textwrap.wrap(para, width, subsequent_indent="   ") or [""])
    if result.get("missing_fields"):
        lines += ["", "Still to collect: " + ", ".join(result["missing_fields"])]
    for key, reason in (result.get("invalid_fields") or {}).items():
        lines.append(f"  {key}: {reason}")
    cites = result.get("citations") or []
    if cites:
        lines += ["", "Sources:"]
        lines += [f"  [{c['id']}] {c['title']} - {c['chunk_type']} ({c['chunk_id']})" for c in cites]
    violations = (result.get("guardrails") or {}).get("violations") or []
    if violations:
        lines += ["", "Guardrail checks:"] + [f"  {v['rule']}: {v['detail']} ({v['action']})" for v in violations]
    return "\n".join(lines)


def format_required(result: dict[str, Any]) -> str:
    ref = result.get("article_reference")
    if not ref:
        return "No article in this knowledge base governs that inquiry."
    lines = [f"Article: {ref['article_id']} (confidence {ref['confidence']:.2f})"]
    if ref.get("alternatives"):
        lines.append(f"  or, depending on the answers below: {', '.join(ref['alternatives'])}")
    for group, label in (("participant_data", "Participant data"), ("plan_data", "Plan data")):
        fields = (result.get("required_fields") or {}).get(group) or []
        if fields:
            lines.append(f"{label}:")
            for f in fields:
                flag = "required" if f["required"] else "optional"
                lines.append(f"  - {f['name']} [{f['key']}] ({f['data_type']}, {flag}): {f['why_needed']}")
    missing = result.get("missing_fields") or []
    lines.append("Missing: " + (", ".join(missing) if missing else "nothing"))
    return "\n".join(lines)


def cmd_ingest(args: argparse.Namespace) -> int:
    from citewise.config import Context
    from citewise.ingest import ingest

    overrides = {k: v for k, v in (("chunk_size", args.chunk_size), ("chunk_overlap", args.chunk_overlap)) if v}
    ctx = Context().with_overrides(**overrides) if overrides else None
    summary = ingest(args.paths, args.home, prune=args.prune, context=ctx, progress=None if not args.json else False)
    if args.json:
        _print_json(summary)
    else:
        print(f"Ingested {summary['files_ingested']} file(s), {summary['files_unchanged']} unchanged; "
              f"documents +{summary['documents_added']} ~{summary['documents_updated']} "
              f"-{summary['documents_removed']}; "
              f"{summary['documents_total']} documents / {summary['chunks_total']} chunks in {summary['home']} "
              f"({summary['seconds']:.1f}s)")
        for err in summary["errors"]:
            print(f"  skipped: {err}", file=sys.stderr)
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    from citewise.ingest import reindex

    result = reindex(args.home, embedding_model=args.embedding_model)
    _print_json(result) if args.json else print(f"Reindexed {result['chunks']} chunks in {result['seconds']:.1f}s")
    return 0


def stream_answer(args: argparse.Namespace) -> dict[str, Any]:
    """Print generation tokens as they arrive (model tokens, or the extractive draft), node progress on
    stderr, and return the final verified state."""
    from citewise.api import _context, _payload
    from citewise.graphs.kb_agent import graph

    payload = _payload(args.question, _filters(args), _pairs(args.data, "--data"), args.max_tokens, args.mode)
    final: dict[str, Any] = {}
    printed = False
    for mode, chunk in graph.stream(payload, context=_context(args.home, _context_overrides(args)),
                                    stream_mode=["messages", "custom", "updates", "values"]):
        if mode == "messages":
            message, meta = chunk
            if meta.get("langgraph_node") == "generate" and isinstance(message.content, str) and message.content:
                sys.stdout.write(message.content)
                sys.stdout.flush()
                printed = True
        elif mode == "custom" and isinstance(chunk, dict) and chunk.get("token"):
            sys.stdout.write(chunk["token"])
            sys.stdout.flush()
            printed = True
        elif mode == "updates":
            for node in chunk:
                sys.stderr.write(f"[{node}]\n")
        elif mode == "values":
            final = chunk
    if printed:
        sys.stdout.write("\n\n--- verified answer ---\n")
    return final


def prompt_fields(request: dict[str, Any]) -> dict[str, Any] | None:
    """Ask for each missing field at the terminal; None when input ends (the thread stays paused)."""
    print(f"\n{request.get('message', 'More information is needed.')}")
    answers: dict[str, Any] = {}
    for f in request.get("fields", []):
        hint = f"one of: {', '.join(f['choices'])}" if f.get("choices") else f["data_type"]
        if f.get("reason"):
            print(f"  ! {f['name']}: {f['reason']}")
        why = f" - {f['why_needed']}" if f.get("why_needed") else ""
        try:
            value = input(f"{f['name']} ({hint}){why}\n> ").strip()
        except EOFError:
            return None
        if value:
            answers[f["key"]] = value
    return answers


def run_interactive(result: dict[str, Any], args: argparse.Namespace) -> dict[str, Any] | None:
    from citewise.api import resume

    while result.get("status") == "interrupted":
        answers = prompt_fields(result["interrupt"])
        if answers is None:
            home = args.home or ".citewise"
            print(f"\nPaused. Continue later with: citewise resume {result['thread_id']} --home {home}")
            return None
        result = resume(result["thread_id"], answers, home=args.home, **_context_overrides(args))
    return result


def cmd_ask(args: argparse.Namespace) -> int:
    from citewise.api import ask

    if args.interactive:
        result = ask(args.question, home=args.home, filters=_filters(args), collected_data=_pairs(args.data, "--data"),
                     max_tokens=args.max_tokens, mode=args.mode, interrupt_on_missing_data=True,
                     **_context_overrides(args))
        final = run_interactive(result, args)
        if final is not None:
            _print_json(final) if args.json else print("\n" + format_answer(final))
        return 0
    if args.stream:
        result = stream_answer(args)
        _print_json(result) if args.json else print(format_answer(result))
        return 0
    result = ask(args.question, home=args.home, filters=_filters(args), collected_data=_pairs(args.data, "--data"),
                 max_tokens=args.max_tokens, mode=args.mode, **_context_overrides(args))
    _print_json(result) if args.json else print(format_answer(result))
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    from citewise.api import pending, resume

    request = pending(args.thread_id, home=args.home)
    if request is None:
        raise InputError(f"thread {args.thread_id!r} is not waiting for data")
    values = _pairs(args.data, "--data")
    if not values:
        values = prompt_fields(request)
        if values is None:
            print(f"\nStill paused: citewise resume {args.thread_id}")
            return 0
    result = resume(args.thread_id, values, home=args.home)
    final = run_interactive(result, args) if sys.stdin.isatty() or not args.data else result
    if final is None:
        return 0
    if final.get("status") == "interrupted":
        print(f"Still missing: {', '.join(f['key'] for f in final['interrupt']['fields'])} "
              f"(citewise resume {args.thread_id})")
        for f in final["interrupt"]["fields"]:
            if f.get("reason"):
                print(f"  {f['key']}: {f['reason']}")
        return 0
    _print_json(final) if args.json else print(format_answer(final))
    return 0


def cmd_required_data(args: argparse.Namespace) -> int:
    from citewise.api import required_data

    result = required_data(args.question, home=args.home, filters=_filters(args),
                           collected_data=_pairs(args.data, "--data"))
    if args.json:
        _print_json({k: result[k] for k in ("article_reference", "required_fields", "missing_fields")})
    else:
        print(format_required(result))
    return 0


DEMO_QUESTIONS = [
    ("How do I roll over my Acme 401(k) to an IRA?", {}),
    ("What information do I need to collect for a 403(b) hardship withdrawal?", {}),
    ("What is the best recipe for banana bread?", {}),
]


def sample_kb() -> Path:
    return Path(__file__).resolve().parent / "examples" / "kb"


def cmd_demo(args: argparse.Namespace) -> int:
    from citewise.api import ask
    from citewise.ingest import ingest

    with tempfile.TemporaryDirectory(prefix="citewise-demo-") as home:
        summary = ingest([sample_kb()], home, progress=False)
        if not args.json:
            print(f"Ingested the sample knowledge base: {summary['documents_total']} articles, "
                  f"{summary['chunks_total']} chunks ({summary['seconds']:.1f}s)\n")
        results = []
        for question, data in DEMO_QUESTIONS:
            result = ask(question, home=home, collected_data=data, mode=None)
            results.append({"question": question, **result})
            if not args.json:
                print("=" * 100)
                print(f"Q: {question}\n")
                print(format_answer(result))
                print()
        if args.json:
            _print_json(results)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    if args.what == "questions":
        from citewise.evals.questions import main as run

        return run(args.rest)
    if args.what == "retrieval":
        from citewise.evals.retrieval import main as run

        return run(args.rest)
    if args.what == "peers":
        from citewise.evals.bench_retrieval import main as run

        return run(args.rest)
    raise InputError(f"unknown eval {args.what!r}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="citewise", description="Grounded knowledge-base answers with citations.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    home_help = "knowledge-base home (default: $CITEWISE_HOME, else ./.citewise)"

    p = sub.add_parser("ingest", help="ingest Markdown/text/BEIR .jsonl files or folders")
    p.add_argument("paths", nargs="+")
    p.add_argument("--home", help=home_help)
    p.add_argument("--prune", action="store_true", help="remove documents whose files are gone")
    p.add_argument("--chunk-size", type=int)
    p.add_argument("--chunk-overlap", type=int)
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("reindex", help="rebuild the BM25 and vector indexes from SQLite")
    p.add_argument("--home", help=home_help)
    p.add_argument("--embedding-model", help="switch the home to another embedding model (minilm | openai:MODEL)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_reindex)

    for name, func, help_text in (("ask", cmd_ask, "answer a question with citations"),
                                  ("required-data", cmd_required_data, "list the data to collect for an inquiry")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("question")
        p.add_argument("--home", help=home_help)
        p.add_argument("--filter", action="append", metavar="KEY=VALUE", help="metadata filter (repeatable)")
        p.add_argument("--filter-json", metavar="JSON", help="a full filter in Pinecone's filter language")
        p.add_argument("--data", action="append", metavar="KEY=VALUE", help="collected data (repeatable)")
        p.add_argument("--json", action="store_true", help="print the full JSON result")
        if name == "ask":
            p.add_argument("--max-tokens", type=int, default=1500)
            p.add_argument("--mode", choices=["answer", "required_data"], default="answer")
            p.add_argument("--model", help="OpenAI-compatible chat model (default: extractive, offline)")
            p.add_argument("--base-url", help="base URL of an OpenAI-compatible server")
            p.add_argument("--stream", action="store_true", help="print tokens as they are generated, then the "
                                                                 "verified answer")
            p.add_argument("--interactive", action="store_true",
                           help="ask for missing required data at the terminal (the thread is saved: resumable)")
        p.set_defaults(func=func)

    p = sub.add_parser("resume", help="continue a paused inquiry (from `ask --interactive`)")
    p.add_argument("thread_id")
    p.add_argument("--home", help=home_help)
    p.add_argument("--data", action="append", metavar="KEY=VALUE", help="field values (else asked at the terminal)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_resume)

    p = sub.add_parser("demo", help="ingest the sample KB into a temporary home and answer three questions")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("eval", help="evaluations: questions | retrieval | peers")
    p.add_argument("what", choices=["questions", "retrieval", "peers"])
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_eval)
    return parser


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CitewiseError as exc:
        sys.stderr.write(f"citewise: error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("citewise: interrupted\n")
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
