"""Synonym and acronym expansion from a KB's `synonyms.yaml`, applied to queries for BM25."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import IngestError
from .articles import safe_yaml
from .text import normalize


def load_synonyms(path: Path) -> dict[str, list[str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"{path}: cannot read synonyms: {exc}") from None
    data = safe_yaml(text, str(path), "synonyms file", max_bytes=1024 * 1024, max_nodes=100_000) or {}
    if not isinstance(data, dict):
        raise IngestError(f"{path}: synonyms must be a mapping of term -> [synonyms]")
    out: dict[str, list[str]] = {}
    for key, values in data.items():
        if isinstance(values, str):
            values = [values]
        if not isinstance(values, list) or not all(isinstance(v, str | int | float) for v in values):
            raise IngestError(f"{path}: synonyms for {key!r} must be a list of strings")
        out[str(key)] = [str(v) for v in values]
    return out


class SynonymExpander:
    """Finds any term of a synonym group in a query and returns the group's other spellings.

    Groups are symmetric: a query saying "required minimum distribution" gains "RMD" and vice versa.
    """

    def __init__(self, synonyms: dict[str, list[str]]):
        self.groups: list[list[str]] = []
        for key, values in synonyms.items():
            group = list(dict.fromkeys([key, *values]))
            self.groups.append(group)
        self._patterns = [
            [(re.compile(r"(?<![a-z0-9])" + re.escape(normalize(t)).replace(r"\ ", r"\s+") + r"(?![a-z0-9])"), t)
             for t in group]
            for group in self.groups
        ]

    def expansions(self, query: str) -> list[str]:
        text = normalize(query)
        extra: list[str] = []
        for patterns in self._patterns:
            hit = [t for pat, t in patterns if pat.search(text)]
            if hit:
                extra.extend(t for _, t in patterns if t not in hit and normalize(t) not in text)
        return list(dict.fromkeys(extra))

    def expand(self, query: str) -> str:
        extra = self.expansions(query)
        return f"{query} {' '.join(extra)}" if extra else query
