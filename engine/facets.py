"""Facets named in a question, and the filter language's small algebra (combine, keys).

Facets are detected from the values the knowledge base itself holds (never from a built-in list),
so any KB with facet front matter (`record_keeper`, `plan_type`, `topic`) gets detection for free.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..kb.articles import FACETS, PROVIDER
from ..kb.text import squash, stem, words

# English prepositions and particles: a closed class of words that say where or how, never whose. In a
# small KB one of them can occur mostly in one facet's documents ("off" in "paid time off"), but a
# question's "days off" or "went over" names no facet value.
FUNCTION_WORDS = frozenset(words(
    "about above across after against along among around at before behind below beneath beside between beyond "
    "by down during except for from in inside into near of off on onto out outside over past since through "
    "throughout to toward towards under underneath until up upon with within without away back"))
# A word of a name is written capitalised at least this often in the KB's text. Set as a rule (rule (d)'s own
# 0.8), not tuned: no dev question of the eval sets changes outcome between 0.6 and 0.95.
NAME_CASE_SHARE = 0.8
# The first word of a facet value that covers every value of its facet ("all aid", "any plan type").
UNIVERSAL_WORDS = frozenset({"all", "any", "every"})
UNIVERSAL_FACETS = frozenset(FACETS) - {"topic"}  # a provider or a product; a topic is a subject


_CAPITALS = re.compile(r"\b[A-Z]{3,6}\b")


def initials(name: str) -> str | None:
    """The acronym of a name of three capitalised words or more ("Contoso National Bank" -> "CNB"; the
    small words of "Bank of the West" are skipped), else None: a shorter one is too ambiguous to read."""
    parts = name.replace("_", " ").split()
    caps = [w for w in parts if w[:1].isupper() and w[:1].isalpha()]
    small = [w for w in parts if not w[:1].isupper()]
    if len(caps) < 3 or any(w.lower() not in FUNCTION_WORDS | {"and", "the", "&"} for w in small):
        return None
    return "".join(w[0] for w in caps).upper()


def _contains_seq(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


class FacetDetector:
    """Finds facet values named in a question.

    A value is detected when (a) its words appear in order (stemmed), (b) its letters-only form
    equals a run of 1-3 question words ('roll over' ~ 'rollover'), (c) a synonym of it does, or
    (d) the question uses a word that, in this KB, nearly only occurs in documents with that value
    (a brand name such as 'Contoso' for 'Contoso Retirement'). Rule (d) is measured on the corpus: never a
    preposition or particle, and for a value written as a name (capitalised) only a word the KB
    itself writes as a name — 'retirement' of 'Contoso Retirement' is mostly lower case in the text, so
    "my retirement account" pins no record keeper even if most chunks that say it are Contoso's. And (e) a
    value written as a name of three capitalised words or more is named by its initials in capitals
    ("TVEC"), unless the KB's text uses those letters for something else ("ATM").
    """

    def __init__(self, facets: dict[str, list[str]], synonym_groups: Iterable[list[str]] = (),
                 term_precision: Callable[[str, str, str], float] | None = None, min_precision: float = 0.8,
                 name_case: Callable[[str], float] | None = None, occurs: Callable[[str], bool] | None = None):
        self.facets = facets
        groups = [list(g) for g in synonym_groups]
        self.variants: dict[tuple[str, str], list[str]] = {}
        for facet, values in facets.items():
            for value in values:
                forms = {value, value.replace("_", " ")}
                for g in groups:
                    if any(squash(m) == squash(f) for m in g for f in forms):
                        forms.update(g)
                self.variants[(facet, value)] = sorted(forms)
        # (e) A name of three words or more by its initials, as people write it: "NVEC" for Northwind Valley
        # Electric Cooperative. Only in capitals in the question, and only an acronym one value alone has.
        by_initials: dict[str, set[tuple[str, str]]] = {}
        for (facet, value), forms in self.variants.items():
            for form in forms:
                if (letters := initials(form)) is not None:
                    by_initials.setdefault(letters, set()).add((facet, value))
        # A word the KB's own text uses ("ATM", "PIN") is a name's acronym only where it tells that value, as
        # in rule (d): "Is there an ATM fee?" names no Alpha Trust Mutual.
        self.acronyms = {a: owner for a, owners in by_initials.items() if len(owners) == 1
                         and (owner := next(iter(owners)))
                         and (occurs is None or term_precision is None or not occurs(stem(a.lower()))
                              or term_precision(stem(a.lower()), *owner) >= min_precision)}
        self.distinctive: dict[str, list[tuple[str, str]]] = {}
        if term_precision is not None:
            all_words: dict[str, set[tuple[str, str]]] = {}
            for (facet, value), forms in self.variants.items():
                for form in forms:
                    for w in words(form.replace("_", " ")):
                        if len(w) >= 3 and not w.isdigit() and w not in FUNCTION_WORDS:
                            all_words.setdefault(stem(w), set()).add((facet, value))
            for st, owners in all_words.items():
                # one value per facet: "Fabrikam" names the airline Fabrikam Air even though the loyalty plan
                # Fabrikam Miles shares the word (its own precision test then rules it out as a plan type)
                for facet in sorted({f for f, _ in owners}):
                    values = [v for f, v in owners if f == facet]
                    if len(values) != 1:
                        continue
                    value = values[0]
                    if term_precision(st, facet, value) < min_precision:
                        continue
                    # (read text only for the few words that pass the cheap posting-list test)
                    if value[:1].isupper() and name_case is not None and name_case(st) < NAME_CASE_SHARE:
                        continue
                    self.distinctive.setdefault(st, []).append((facet, value))
        # The words that tell a name-valued facet ("Contoso" of "Contoso Retirement"), as written in the value:
        # a question's slip of the keyboard in one of them is read as it (engine/spelling.py).
        self.name_words: dict[str, str] = {
            stem(w.lower()): w for (facet, value), forms in self.variants.items() if value[:1].isupper()
            for form in forms for w in form.replace("_", " ").split()
            if w.isalpha() and stem(w.lower()) in self.distinctive}

    def detect(self, question: str) -> dict[str, list[str]]:
        q_words = words(question.replace("_", " "))
        q_stems = [stem(w) for w in q_words]
        runs = {"".join(q_words[i:i + n]) for n in (1, 2, 3) for i in range(len(q_words) - n + 1)}
        found: dict[str, list[str]] = {}
        for (facet, value), forms in self.variants.items():
            if is_universal(value, facet):
                continue  # "does this apply to all aid?" names no plan type
            for form in forms:
                f_stems = [stem(w) for w in words(form.replace("_", " "))]
                if _contains_seq(q_stems, f_stems) or squash(form) in runs:
                    found.setdefault(facet, []).append(value)
                    break
        for token in _CAPITALS.findall(question):
            if (owner := self.acronyms.get(token)) is not None and owner[1] not in found.get(owner[0], []):
                found.setdefault(owner[0], []).append(owner[1])
        for st in set(q_stems):
            for facet, value in self.distinctive.get(st, []):
                if value not in found.get(facet, []):
                    found.setdefault(facet, []).append(value)
        return {k: sorted(set(v)) for k, v in found.items()}


def term_precision_fn(kb: Any) -> Callable[[str, str, str], float]:
    """precision(stem, facet, value): share of the chunks containing the term that carry the value, among
    those that carry the facet at all. A plain document (no front matter) is about no value in
    particular: its many "Contoso"s do not make the brand word less telling of Contoso's articles."""
    cache: dict[tuple[str, str, str], float] = {}
    carriers: dict[str, Any] = {}  # facet -> mask of the chunks that carry it (one per facet, not per term)

    def precision(term: str, facet: str, value: str) -> float:
        key = (term, facet, value)
        if key not in cache:
            rows = kb.bm25.rows_containing(term)
            mask = kb.meta.mask({facet: value})
            if facet not in carriers:
                carriers[facet] = kb.meta.mask({facet: {"$exists": True}})
            has = carriers[facet]
            if has is not None and rows.size:
                rows = rows[has[rows]]
            cache[key] = float(np.mean(mask[rows])) if rows.size and mask is not None else 0.0
        return cache[key]

    return precision


def name_case_fn(kb: Any, sample: int = 50) -> Callable[[str], float]:
    """name_case(stem): the share of the term's occurrences in the chunks' text written capitalised (0
    when it occurs only in titles or metadata: no evidence that the KB uses it as a name), read from at
    most `sample` chunks spread over its posting list. Each written word is analysed as the index
    analyses it ("Zürich", "O'Neil", "Contoso’s"), so an occurrence is counted wherever BM25 counts one."""

    def share(term: str) -> float:
        rows = kb.bm25.rows_containing(term)
        if len(rows) > sample:
            rows = rows[np.linspace(0, len(rows) - 1, sample).astype(int)]
        written = capitalised = 0
        for row in rows:
            for token in str(kb.passages.get(int(row)).get("text", "")).split():
                if term in {stem(w) for w in words(token)}:
                    written += 1
                    first = next((ch for ch in token if ch.isalpha()), "")
                    capitalised += first.isupper()
        return capitalised / written if written else 0.0

    return share


# A word a question asks with (answerability.question_parts reads the same list, and "must")
QUESTION_WORD = r"\b(how|what|what's|when|where|which|who|why|can|could|do|does|did|is|are|will|would|should|may)\b"
_ASKING_WORD = re.compile(QUESTION_WORD, re.IGNORECASE)


def asked_providers(detector: FacetDetector, asking: str) -> list[str]:
    """The providers a question asks about by name: detected in its capitalised words only ("Contoso
    Wireless", not the "mobile" of "my mobile phone" that the KB's Fabrikam Mobile makes a telling word),
    and from its first question word on when that part names any ("I'm switching from Contoso to Northwind,
    what is the fee at Northwind?" asks about Northwind; "Comparing Contoso and Fabrikam: what is the
    youngest age each accepts?" names both before it). A lower-case word is no second provider."""
    def named(text: str) -> list[str]:
        return detector.detect(" ".join(w for w in text.split() if w[:1].isupper())).get(PROVIDER) or []

    start = _ASKING_WORD.search(asking)
    return (start is not None and start.start() > 0 and named(asking[start.start():])) or named(asking)


def facet_filter(detected: dict[str, list[str]], caller: dict[str, Any],
                 known: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """Detected facets as filter clauses, skipping any facet the caller already constrained.

    A document without the facet (a plain guide, a policy PDF, a transcript: no front matter) is about
    no one value in particular, and one whose value says "all" (`plan_type: all aid`) is about every
    value, so a question that names one still reaches both; a caller's own filter stays strict.
    `known` is the KB's values per facet, where the universal ones are found."""
    mentioned = filter_keys(caller)
    clauses: list[dict[str, Any]] = []
    for facet, values in detected.items():
        if facet in mentioned or not values:
            continue
        clauses.append(facet_clause(facet, values[0] if len(values) == 1 else {"$in": values},
                                    universal_values(facet, (known or {}).get(facet, []))))
    return combine_filters(*clauses)


def facet_clause(facet: str, match: Any, universal: list[str] | None = None) -> dict[str, Any]:
    """A facet named by the question or given as data: documents with that value, with a value that
    covers every value (`universal`), or without the facet."""
    clauses: list[dict[str, Any]] = [{facet: match}, {facet: {"$exists": False}}]
    if universal:
        clauses.append({facet: {"$in": universal}})
    return {"$or": clauses}


def is_universal(value: object, facet: str = "plan_type") -> bool:
    """A facet value that names no one value but all of them ("all aid", "any plan", "All"): the article
    applies whichever value a question names. Only for the facets that name a provider or a product
    (a topic is a subject, `any_device_access` is one). A name that starts with such a word ("All Points
    Retirement", every word capitalised; "All-State", one word) is a name, not "all"."""
    if facet not in UNIVERSAL_FACETS:
        return False
    written = str(value).replace("_", " ").split()
    if not written or written[0].lower() not in UNIVERSAL_WORDS:
        return False
    return len(written) == 1 or not all(w[:1].isupper() for w in written)


def universal_values(facet: str, values: Iterable[object]) -> list[str]:
    return [str(v) for v in values if is_universal(v, facet)]


def combine_filters(*filters: dict[str, Any]) -> dict[str, Any]:
    parts = [f for f in filters if f]
    if not parts:
        return {}
    if len(parts) == 1:
        return parts[0]
    return {"$and": parts}


def filter_keys(flt: Any) -> set[str]:
    """Metadata keys a filter constrains, at any depth."""
    keys: set[str] = set()
    if isinstance(flt, dict):
        for k, v in flt.items():
            if k in ("$and", "$or"):
                for sub in v:
                    keys |= filter_keys(sub)
            elif not k.startswith("$"):
                keys.add(k)
    return keys
