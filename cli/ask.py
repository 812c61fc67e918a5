"""`citewise ask`, `required-data` and `resume`: answers, streaming, and the interactive conversation."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

from ..errors import CitewiseError, InputError
from .args import HOME_HELP, context_overrides, filters, pairs, print_json, text_arg
from .render import format_answer, format_required


def preload_embedder() -> None:
    """Load the query model on a helper thread while this one imports the graph (a one-shot command is
    a cold process: the two overlap on a second core; see retrieval.embeddings.load_in_background)."""
    from ..config import Context
    from ..retrieval.embeddings import load_in_background

    with contextlib.suppress(CitewiseError, OSError, ImportError):  # the answer path meets and reports it
        load_in_background(Context().embedding_model)


def stream_answer(args: argparse.Namespace) -> dict[str, Any]:
    """Print generation tokens as they arrive (model tokens, or the extractive draft), node progress on
    stderr, and return the final verified state."""
    from ..api import _context, _payload, run_config
    from ..graphs.kb_agent import graph

    payload = _payload(args.question, filters(args), pairs(args.data, "--data"), args.max_tokens, args.mode)
    final: dict[str, Any] = {}
    printed = False
    for mode, chunk in graph.stream(payload, config=run_config(), context=_context(args.home, context_overrides(args)),
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


PAUSE_HINT = "(Enter skips a field; Ctrl-D to pause and resume later.)"


class Pause(Exception):
    """The person stopped answering (Ctrl-D, or Enter again on a field skipped before): the thread stays
    paused, keeping the values already given in this round (`answers`)."""

    def __init__(self, answers: dict[str, Any] | None = None):
        super().__init__("paused")
        self.answers = answers or {}


def read_line(prompt: str) -> str:
    try:
        return input(prompt).strip()
    except EOFError:
        raise Pause from None


def ask_field(f: dict[str, Any], skipped: set[str]) -> Any:
    """One field's value, checked here so a typo is asked again at once; None when skipped (Enter).

    A facet to choose lists numbered choices: a number, the name or an unambiguous beginning of it
    ('acme') picks one, case- and punctuation-insensitively; an ambiguous beginning is asked again
    with the choices it matches. Other values are checked against the field's type (dates, amounts,
    numbers, yes/no), as the graph checks them on resume. Enter on a field already skipped in this
    conversation pauses instead of asking the same question forever.
    """
    from ..kb.fields import choice_matches, validate_value

    choices = list(f.get("choices") or [])
    why = f" - {f['why_needed']}" if f.get("why_needed") else ""
    if f.get("reason"):
        print(f"  ! {f['name']}: {f['reason']}")
    if choices:
        print(f"{f['name']} (type its number or name){why}")
        for number, choice in enumerate(choices, start=1):
            print(f"  {number}) {choice}")
    else:
        print(f"{f['name']} ({f['data_type']}){why}")
    while True:
        value = read_line("> ")
        if not value:
            if f["key"] in skipped:
                raise Pause
            skipped.add(f["key"])
            return None
        if choices:
            found = [choices[int(value) - 1]] if value.isdigit() and 1 <= int(value) <= len(choices) else \
                choice_matches(value, choices)
            if len(found) == 1:
                return found[0]
            print(f"  ? {value!r} matches {', '.join(found)}: type more of the name, or its number" if found
                  else f"  ? {value!r} is not one of the choices: type its number (1-{len(choices)}) or name")
            continue
        words = f"{f.get('name', '')}: {f.get('description', '')}"  # what the field counts in
        ok, _, reason = validate_value(f.get("data_type", "text"), value, words)
        if ok:
            return value
        print(f"  ? {reason}; try again")


def prompt_fields(request: dict[str, Any], skipped: set[str]) -> dict[str, Any]:
    """Ask for each missing field at the terminal; raises Pause (with what was given so far) when the
    person stops (see ask_field)."""
    print(f"\n{request.get('message', 'More information is needed.')}")
    print(PAUSE_HINT)
    answers: dict[str, Any] = {}
    for f in request.get("fields", []):
        try:
            value = ask_field(f, skipped)
        except Pause:
            raise Pause(answers) from None
        if value is not None:
            answers[f["key"]] = value
    if not answers:
        raise Pause  # nothing new: resuming would only ask the same again
    return answers


def run_interactive(result: dict[str, Any], args: argparse.Namespace) -> dict[str, Any] | None:
    """Ask, resume, and ask again what is still missing, until the answer (returned) or a pause (None)."""
    from ..api import resume

    skipped: set[str] = set()
    while result.get("status") == "interrupted":
        try:
            answers = prompt_fields(result["interrupt"], skipped)
        except Pause as pause:
            if pause.answers:  # what was typed before pausing is kept in the thread
                result = resume(result["thread_id"], pause.answers, home=args.home, **context_overrides(args))
                if result.get("status") != "interrupted":
                    return result
            home = f" --home {args.home}" if args.home else ""
            print(f"\nPaused. Continue later with: citewise resume {result['thread_id']}{home}")
            return None
        result = resume(result["thread_id"], answers, home=args.home, **context_overrides(args))
    return result


def cmd_ask(args: argparse.Namespace) -> int:
    preload_embedder()
    from ..api import ask

    if args.interactive:
        if sys.stdin is None or not sys.stdin.isatty():
            raise InputError("--interactive asks for missing data at a terminal: run it in one (a question piped in "
                             "with '-' takes the input the answers would come from)")
        result = ask(args.question, home=args.home, filters=filters(args), collected_data=pairs(args.data, "--data"),
                     max_tokens=args.max_tokens, mode=args.mode, interrupt_on_missing_data=True,
                     **context_overrides(args))
        final = run_interactive(result, args)
        if final is not None:
            print_json(final) if args.json else print("\n" + format_answer(final))
        return 0
    if args.stream:
        result = stream_answer(args)
        print_json(result) if args.json else print(format_answer(result))
        return 0
    result = ask(args.question, home=args.home, filters=filters(args), collected_data=pairs(args.data, "--data"),
                 max_tokens=args.max_tokens, mode=args.mode, **context_overrides(args))
    print_json(result) if args.json else print(format_answer(result))
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    preload_embedder()
    from ..api import pending, resume

    request = pending(args.thread_id, home=args.home)
    if request is None:
        raise InputError(f"thread {args.thread_id!r} is not waiting for data")
    values = pairs(args.data, "--data")
    if values:
        result = resume(args.thread_id, values, home=args.home)
        final = run_interactive(result, args) if sys.stdin.isatty() else result
    else:  # no --data: the conversation goes on at the terminal
        final = run_interactive({"status": "interrupted", "interrupt": request, "thread_id": args.thread_id}, args)
    if final is None:
        return 0
    if final.get("status") == "interrupted":
        print(f"Still missing: {', '.join(f['key'] for f in final['interrupt']['fields'])} "
              f"(citewise resume {args.thread_id})")
        for f in final["interrupt"]["fields"]:
            if f.get("reason"):
                print(f"  {f['key']}: {f['reason']}")
        return 0
    print_json(final) if args.json else print(format_answer(final))
    return 0


def cmd_required_data(args: argparse.Namespace) -> int:
    preload_embedder()
    from ..api import required_data

    result = required_data(args.question, home=args.home, filters=filters(args),
                           collected_data=pairs(args.data, "--data"))
    if args.json:
        print_json({k: result[k] for k in ("decision", "article_reference", "required_fields", "missing_fields")})
    else:
        print(format_required(result))
    return 0


def register(sub: Any) -> None:
    for name, func, help_text in (("ask", cmd_ask, "answer a question with citations"),
                                  ("required-data", cmd_required_data, "list the data to collect for an inquiry")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("question", type=text_arg, help='the question ("-": read it from standard input)')
        p.add_argument("--home", help=HOME_HELP)
        p.add_argument("--filter", action="append", metavar="KEY=VALUE", help="metadata filter (repeatable)")
        p.add_argument("--filter-json", metavar="JSON", help="a full filter in Pinecone's filter language")
        p.add_argument("--data", action="append", metavar="KEY=VALUE", help="collected data (repeatable)")
        p.add_argument("--json", action="store_true", help="print the full JSON result")
        if name == "ask":
            p.add_argument("--max-tokens", type=int)
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
    p.add_argument("--home", help=HOME_HELP)
    p.add_argument("--data", action="append", metavar="KEY=VALUE", help="field values (else asked at the terminal)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_resume)
