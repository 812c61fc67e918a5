"""Prompt templates as plain text files; any of them can be overridden per run through the context.

Templates use `{name}` placeholders (str.format). Retrieved text is only ever inserted inside the
delimited context block built by `assembly.py`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from citewise.errors import InputError

_DIR = Path(__file__).parent


@cache
def default(name: str) -> str:
    return (_DIR / f"{name}.txt").read_text(encoding="utf-8")


def render(name: str, override: str = "", **values: Any) -> str:
    template = override or default(name)
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        raise InputError(f"prompt template {name!r} is invalid: {exc!r} (placeholders: {', '.join(values)})") from None
