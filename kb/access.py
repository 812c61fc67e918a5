"""Who may read a document: its tenant (`namespace`) and its `confidentiality` level.

Every document carries both, from its front matter or the defaults below, so that an access filter
over chunk metadata never meets a chunk without them (a chunk lacking the keys would silently fall
outside every `$in` filter, or inside every `$nin` one). Levels are ordered: a reader cleared for a
level reads that level and every level below it.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import IngestError

NAMESPACE_KEY, CONFIDENTIALITY_KEY = "namespace", "confidentiality"
DEFAULT_NAMESPACE = "default"
LEVELS = ("public", "internal", "confidential", "restricted")  # lowest to highest
DEFAULT_CONFIDENTIALITY = "public"
NAMESPACE_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def levels_up_to(clearance: str) -> list[str]:
    """The confidentiality levels a reader with this clearance may read (unknown clearance: none)."""
    if clearance not in LEVELS:
        return []
    return list(LEVELS[:LEVELS.index(clearance) + 1])


def valid_namespace(value: Any) -> bool:
    return isinstance(value, str) and bool(NAMESPACE_PATTERN.match(value))


def with_access_metadata(metadata: dict[str, Any], source: str) -> dict[str, Any]:
    """The document's metadata with `namespace` and `confidentiality` set and checked.

    A typo in either must not make a confidential article public, so an invalid value rejects the
    document (ingest reports it and keeps the previous version) instead of falling back to a default.
    """
    out = dict(metadata)
    namespace = out.get(NAMESPACE_KEY, DEFAULT_NAMESPACE)
    if not valid_namespace(namespace):
        raise IngestError(f"{source}: namespace {namespace!r} must be 1-64 letters, digits, '.', '_' or '-' "
                          f"(starting with a letter or digit)")
    level = out.get(CONFIDENTIALITY_KEY, DEFAULT_CONFIDENTIALITY)
    if level not in LEVELS:
        raise IngestError(f"{source}: confidentiality {level!r} must be one of {', '.join(LEVELS)}")
    out[NAMESPACE_KEY], out[CONFIDENTIALITY_KEY] = namespace, level
    return out
