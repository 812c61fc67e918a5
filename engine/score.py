"""Retrieval relevance (abstain or not) and answer confidence: small, documented formulas.

relevance  = 0.6 * ramp(top dense cosine, 0.20, 0.60) + 0.4 * coverage
    coverage = IDF-weighted share of the question's terms found in the top 3 chunks
               (a term also counts as found when a synonym of it is found).
confidence = 0.35 * relevance + 0.15 * agreement + 0.15 * article + 0.20 * support + 0.15 * critical
             - 0.15 per blocking guardrail violation (floored at 0)
    agreement = share of the top 3 fused chunks ranked in the top 10 of BOTH branches
    article   = confidence of the matched article (required-data step)
    support   = mean support score of the claims kept in the answer
    critical  = 1 if the matched article's critical chunks made it into the context
When no structured article is in play (plain Markdown/text or BEIR documents), `article` and
`critical` cannot apply: confidence is the first three terms renormalised, (0.35 r + 0.15 a + 0.20 s) / 0.70.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ..kb.text import term_set, terms
from ..retrieval.passage import Passage

if TYPE_CHECKING:
    from .records import Relevance

DENSE_LO, DENSE_HI = 0.20, 0.60


def ramp(x: float, lo: float, hi: float) -> float:
    return max(0.0, min(1.0, (x - lo) / (hi - lo)))


def coverage(question: str, alternatives: dict[str, list[str]], texts: Iterable[str],
             idf: Callable[[str], float]) -> float:
    """IDF-weighted share of question terms present in `texts`; synonyms count as the term."""
    found_terms: set[str] = set()
    for t in texts:
        found_terms |= term_set(t)
    q_terms = list(dict.fromkeys(terms(question)))
    if not q_terms:
        return 0.0
    total = hit = 0.0
    for term in q_terms:
        weight = max(idf(term), 0.1)
        total += weight
        alts = alternatives.get(term, [])
        if term in found_terms or any(all(a in found_terms for a in terms(alt)) and terms(alt) for alt in alts):
            hit += weight
    return hit / total if total else 0.0


def relevance(question: str, hits: list[Passage], alternatives: dict[str, list[str]],
              idf: Callable[[str], float]) -> dict[str, float]:
    if not hits:
        return {"score": 0.0, "dense_top": 0.0, "coverage": 0.0, "agreement": 0.0}
    top = hits[:3]
    dense_top = max(float(h.dense or 0.0) for h in top)
    cov = coverage(question, alternatives, (f"{h.title} {h.section} {h.text}" for h in top), idf)
    both = [h for h in top if (h.bm25_rank or 99) <= 10 and (h.dense_rank or 99) <= 10]
    score = 0.6 * ramp(dense_top, DENSE_LO, DENSE_HI) + 0.4 * cov
    return {"score": round(score, 4), "dense_top": round(dense_top, 4), "coverage": round(cov, 4),
            "agreement": round(len(both) / len(top), 4)}


def confidence(rel: Relevance, article: float, support: float, critical: bool,
               blocking_violations: int, structured: bool = True) -> tuple[float, dict[str, float]]:
    parts = {"relevance": rel.score, "agreement": rel.agreement, "support": support}
    value = 0.35 * parts["relevance"] + 0.15 * parts["agreement"] + 0.20 * parts["support"]
    if structured:
        parts.update(article=article, critical=1.0 if critical else 0.0)
        value += 0.15 * article + 0.15 * parts["critical"]
    else:
        value /= 0.70
    value -= 0.15 * blocking_violations
    return round(max(0.0, min(1.0, value)), 4), {k: round(v, 4) for k, v in parts.items()}
