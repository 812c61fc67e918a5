"""Prompt templates as plain text files; any of them can be overridden per run through the context.

Templates use `{name}` placeholders (str.format). Text from the knowledge base only ever enters a
prompt through `render_passages` (or the context block built the same way): delimited, tag-escaped,
marked as data, and always inside the user message, never the system prompt.
"""

from __future__ import annotations

import html
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import InputError

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


def escape(text: str) -> str:
    """Neutralise tags inside data so a document cannot close its own delimiter."""
    return text.replace("<", "&lt;").replace(">", "&gt;")


def attribute(text: str, limit: int = 200) -> str:
    """A value shown as a tag attribute: one line, instruction-like text neutralised, quoted safely,
    length-limited (titles and metadata come from the KB and are data too)."""
    from ..kb.text import display_text

    return html.escape(display_text(text, limit), quote=True)


def passage_block(label: str, title: str, text: str, **attrs: str) -> str:
    extra = "".join(f' {k}="{attribute(v, 40)}"' for k, v in attrs.items())
    return f'<chunk id="{label}" title="{attribute(title)}"{extra}>\n{escape(text)}\n</chunk>\n'


def render_passages(items: list[tuple[str, str, str]]) -> str:
    """(label, title, text) passages as one delimited data block."""
    return "<context>\n" + "".join(passage_block(*item) for item in items) + "</context>"
