"""Synonym and acronym expansion from a KB's `synonyms.yaml` (and everyday English, kb/everyday.py), applied
to queries for BM25 and to the coverage of a question's terms."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import IngestError
from .articles import safe_yaml
from .everyday import everyday_words
from .text import normalize, tag_acronyms

# Where a snapshot's synonyms.json keeps the tag acronyms (acronym -> long form), beside the file's groups
TAG_ACRONYMS = "(tag acronyms)"


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
        if str(key) == TAG_ACRONYMS:
            raise IngestError(f"{path}: {TAG_ACRONYMS!r} is reserved (the acronyms tags define); use another key")
        if isinstance(values, str):
            values = [values]
        if not isinstance(values, list) or not all(isinstance(v, str | int | float) for v in values):
            raise IngestError(f"{path}: synonyms for {key!r} must be a list of strings")
        out[str(key)] = [str(v) for v in values]
    return out


def with_kb_acronyms(synonyms: dict[str, list[str]], texts: Iterable[str],
                     tag_lists: Iterable[Iterable[str]]) -> dict[str, Any]:
    """The synonyms file's groups, plus (under TAG_ACRONYMS) each acronym an article's tags pair with its long
    form (`tags: [PT, personal training]`) where the KB's text never writes the acronym and no group names
    it. A question gains the long form only where it writes the acronym in capitals ("PT", not "pt"; "US",
    not "tell us"), and the acronym names no facet.

    Why: a question says "PT" and every passage says "personal training"; the tags are the KB's own word
    that the two are one, and nothing else in it would match. Not the acronyms the text defines ("paid time
    off (PTO)") and then writes: those are found as written, and expanding them drew a question about PTO
    during FMLA leave to the PTO article (measured: BENCHMARKS.md); their long forms count in the answer's
    checks instead (kb.text.with_long_forms)."""
    named = {normalize(t) for key, values in synonyms.items() for t in (key, *values)}
    paired: dict[str, str] = {}
    for tags in tag_lists:
        for abbr, long in tag_acronyms(tags).items():
            paired.setdefault(abbr, long)
    wanted = {a: long for a, long in paired.items() if normalize(a) not in named and normalize(long) not in named}
    if wanted:  # (the text writes it: search finds it as written)
        written = re.compile(r"\b(" + "|".join(map(re.escape, wanted)) + r")s?\b")
        for text in texts:
            for m in written.finditer(text):
                wanted.pop(m.group(1), None)
            if not wanted:
                break
    return {**synonyms, TAG_ACRONYMS: dict(sorted(wanted.items()))} if wanted else dict(synonyms)


EVERYDAY_MEMO = 512  # questions


class SynonymExpander:
    """Finds any term of a synonym group in a query and returns the group's other spellings.

    Groups are symmetric: a query saying "required minimum distribution" gains "RMD" and vice versa.
    Given `known` (is this stemmed term in the knowledge base's index?), a query also gains the formal
    words the KB writes for the everyday phrases it says ("money back" -> "refund"); one way only.
    """

    def __init__(self, synonyms: dict[str, Any], known: Callable[[str], bool] | None = None):
        self.known = known
        synonyms = dict(synonyms)
        tagged = synonyms.pop(TAG_ACRONYMS, None)
        # acronym -> long form, matched as written (with_kb_acronyms); not groups: no facet is named by them
        self.tag_acronyms: dict[str, str] = tagged if isinstance(tagged, dict) else {}
        alternation = "|".join(map(re.escape, self.tag_acronyms))
        self._tagged = re.compile(rf"(?<![A-Za-z0-9])({alternation})s?(?![A-Za-z0-9])") if alternation else None
        # one answer reads a question's everyday words five times or so (search, coverage, focus, answerability,
        # the uncertain text): looked up once per question, for the life of this snapshot
        self._everyday = lru_cache(maxsize=EVERYDAY_MEMO)(lambda query: everyday_words(query, known)) if known else None
        self.groups: list[list[str]] = []
        for key, values in synonyms.items():
            group = list(dict.fromkeys([key, *values]))
            self.groups.append(group)
        self._patterns = [
            [(re.compile(r"(?<![a-z0-9])" + re.escape(normalize(t)).replace(r"\ ", r"\s+") + r"(?![a-z0-9])"), t)
             for t in group]
            for group in self.groups
        ]

    def expansions(self, query: str, everyday: bool = True) -> list[str]:
        text = normalize(query)
        extra: list[str] = []
        for patterns in self._patterns:
            hit = [t for pat, t in patterns if pat.search(text)]
            if hit:
                extra.extend(t for _, t in patterns if t not in hit and normalize(t) not in text)
        extra.extend(self.tag_acronyms_in(query).values())
        for formal in self.everyday(query).values() if everyday else ():
            extra.extend(formal)
        return list(dict.fromkeys(extra))

    def tag_acronyms_in(self, query: str) -> dict[str, str]:
        """The tag acronyms the query writes, in capitals, -> their long forms."""
        if self._tagged is None:
            return {}
        return {m.group(1): self.tag_acronyms[m.group(1)] for m in self._tagged.finditer(query)}

    def everyday(self, query: str) -> dict[str, list[str]]:
        """Each everyday phrase of the query -> the formal words for it this knowledge base writes."""
        if self._everyday is None:
            return {}
        return {phrase: list(formal) for phrase, formal in self._everyday(query).items()}

    def expand(self, query: str) -> str:
        extra = self.expansions(query)
        return f"{query} {' '.join(extra)}" if extra else query
