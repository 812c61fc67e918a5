"""Checks of the public functions' arguments (citewise.ask/ingest/required_data, api.*, engine.answer).

A caller's wrong type must be an `InputError` that names the argument, not a `TypeError` from
`Path(5)`, an `AttributeError` from `[].items()` or a `RecursionError` from a dict that contains
itself, raised deep inside a graph run. Value rules (question length, filter language, max_tokens
range) stay with the engine (`engine.inquiry.validate`), which every surface calls before a run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .errors import InputError

MAX_DEPTH = 32  # nesting allowed in filters and values: deeper is a mistake (or a structure that contains itself)


def kind(value: Any) -> str:
    return type(value).__name__


def as_home(home: Any) -> str | None:
    """None (the default home) or a path given as str, bytes or os.PathLike."""
    if home is None:
        return None
    if isinstance(home, bytes):
        return os.fsdecode(home)
    if isinstance(home, str | os.PathLike):
        text = os.fspath(home)
        if isinstance(text, bytes):
            text = os.fsdecode(text)
        if "\x00" in text:
            raise InputError("home must not contain a NUL character")
        return text
    raise InputError(f"home must be a path (str or os.PathLike), got {kind(home)}")


def as_paths(paths: Any) -> list[Path]:
    """What to ingest: one path (a str is one path, never its characters) or an iterable of paths."""
    if isinstance(paths, str | bytes | os.PathLike):
        paths = [paths]
    elif isinstance(paths, Mapping) or not isinstance(paths, Iterable):
        raise InputError(f"paths must be a path or a list of paths, got {kind(paths)}")
    out: list[Path] = []
    for i, item in enumerate(paths):
        if isinstance(item, bytes):
            item = os.fsdecode(item)
        if not isinstance(item, str | os.PathLike):
            raise InputError(f"paths[{i}] must be a path (str or os.PathLike), got {kind(item)}")
        text = os.fspath(item)
        text = os.fsdecode(text) if isinstance(text, bytes) else text
        if not text or "\x00" in text:
            raise InputError(f"paths[{i}] must be a non-empty path without NUL characters")
        out.append(Path(text))
    return out


def as_mapping(value: Any, name: str) -> dict[str, Any] | None:
    """None, or a plain dict copy of a mapping that is not nested too deeply (nor contains itself)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InputError(f"{name} must be an object (dict), got {kind(value)}")
    check_depth(value, name)
    return dict(value)


def as_filters(value: Any) -> dict[str, Any] | None:
    """None, or a plain dict copy of a filter mapping. Its nesting and size are the filter language's
    rules (retrieval.filters.validate_filter: at most a few levels, a bounded number of clauses), which
    also stop a filter that contains itself, so they are left to it and its messages."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InputError(f"filters must be an object (dict), got {kind(value)}")
    return dict(value)


def check_depth(value: Any, name: str, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise InputError(f"{name} is nested more than {MAX_DEPTH} levels deep (or contains itself)")
    if isinstance(value, Mapping):
        for v in value.values():
            check_depth(v, name, depth + 1)
    elif isinstance(value, list | tuple):
        for v in value:
            check_depth(v, name, depth + 1)


def as_flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"{name} must be true or false, got {kind(value)}")
    return value


def as_thread_id(value: Any, *, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise InputError(f"thread_id must be a non-empty string of at most 200 characters, got {kind(value)}")
    return value


def check_text(value: Any, name: str) -> None:
    """Text must be encodable as UTF-8: the CLI passes undecodable argv bytes on as lone surrogates."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"{name} is not valid UTF-8 text") from None
