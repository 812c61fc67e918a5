"""Turning command-line arguments into citewise inputs: KEY=VALUE pairs, filters, context overrides."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, NoReturn

from ..errors import InputError

EXIT_USAGE = 2
HOME_HELP = "knowledge-base home (default: $CITEWISE_HOME, else ./.citewise)"


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"citewise: error: {message} (see `{self.prog} --help`)\n")
        raise SystemExit(EXIT_USAGE)


STDIN_LIMIT = 64_000  # characters read for a question given as "-" (the question's own limit is checked later)


def text_arg(value: str) -> str:
    """A question given as "-" is read from standard input (`citewise ask - < question.txt`): a long or
    multi-line question, or one with quotes a shell would eat."""
    if value != "-":
        return value
    if sys.stdin is None or sys.stdin.isatty():
        raise argparse.ArgumentTypeError('"-" reads the question from standard input: pipe it in')
    return sys.stdin.read(STDIN_LIMIT + 1)


def parse_value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def pairs(items: list[str] | None, what: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"{what} must look like key=value (got {item!r})")
        key, parsed = key.strip(), parse_value(value.strip())
        if key in out and what == "--filter":  # repeated key: any of the values
            prev = out[key]["$in"] if isinstance(out[key], dict) else [out[key]]
            out[key] = {"$in": [*prev, parsed]}
        else:
            out[key] = parsed
    return out


def filters(args: argparse.Namespace) -> dict[str, Any]:
    flt = pairs(args.filter, "--filter")
    if getattr(args, "filter_json", None):
        try:
            extra = json.loads(args.filter_json)
        except ValueError as exc:
            raise InputError(f"--filter-json is not valid JSON: {exc}") from None
        if not isinstance(extra, dict):
            raise InputError("--filter-json must be a JSON object")
        flt = {"$and": [flt, extra]} if flt else extra
    return flt


def context_overrides(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if getattr(args, "model", None):
        out["llm_model"] = args.model
    if getattr(args, "base_url", None):
        out["llm_base_url"] = args.base_url
    return out


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
