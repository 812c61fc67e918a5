"""Retrieval relevance (abstain or not) and answer confidence: small, documented formulas.

relevance  = 0.6 * ramp(top dense cosine, 0.20, 0.60) + 0.4 * coverage
    coverage = IDF-weighted share of the question's terms found in the top 3 chunks
               (a term also counts as found when a synonym of it is found).
    topic    = the same, for the question without the provider names it gives; under TOPIC_FLOOR the
               KB has nothing on the subject (a provider's name alone found its articles).
confidence = sigmoid(bias + w1 * dense_top + w2 * focus): the probability that the answer passes the
             answer-level eval (right decision, article, facts and citations), fitted on the dev split
    dense_top = best dense cosine among the top 3 chunks (MiniLM's scale; refit for another embedder)
    focus     = IDF-weighted share of the question's terms the answer's own claims state
Every answer logs the other parts too (agreement, article, support, critical, answered, match...):
`python -m citewise.evals.calibrate fit` tries them and keeps what predicts on dev.
"""

from __future__ import annotations

import math
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
    score = blend(dense_top, cov)
    return {"score": round(score, 4), "dense_top": round(dense_top, 4), "coverage": round(cov, 4),
            "agreement": round(len(both) / len(top), 4)}


# The relevance a question keeps without the provider names it gives: "Does Contoso Solar install water
# heaters?" is near Contoso's articles by the name alone. Below this floor the knowledge base has
# nothing on the topic, at that provider or any: out of scope, not an uncertain answer from a neighbouring
# article. Chosen on the dev halves of the eleven sets: of the 21 out-of-scope questions there that name a
# provider, 5 score under 0.15 (3 not caught by the relevance threshold), and no question the KB answers
# does (the nearest, 0.164, is out of scope by its relevance already; under 0.2 are two more, one of them
# answered now). A name's words its provider's articles also write in lower case ("water" of Alder Creek
# Water) stay in the question: they are its subject too. Re-swept on the twelve dev halves (a67ef52): 0.3 turned
# five test out-of-scope questions from `uncertain` to `out_of_scope` with no eval loss, but a review's probe of
# 30 everyday questions naming a rental company found 3 answered right at 0.15 and out of scope at 0.3 ("Quenmoor
# car broke down on the motorway, who do I ring?", topic 0.25): an abstention's wording is not worth a right
# answer, so 0.15 stays.
TOPIC_FLOOR = 0.15


def relevant(rel: Relevance, threshold: float) -> bool:
    """Whether retrieval found the question's subject: relevant enough, and not by a provider's name alone."""
    return rel.score >= threshold and (rel.topic is None or rel.topic >= TOPIC_FLOOR)


def blend(dense_top: float, cov: float) -> float:
    """The relevance score from its two parts (see the module docstring)."""
    return 0.6 * ramp(dense_top, DENSE_LO, DENSE_HI) + 0.4 * cov


# P(answer passes the answer-level eval | parts): a logistic regression fitted on the DEV split of the
# four eval sets (175 answers the threshold routes; `required_data` runs end before it) by
# `python -m citewise.evals.calibrate fit`, confidence routing off while collecting. Dev: AUROC 0.79,
# ECE 0.048 (refitted at 715f24a, after contractions stopped counting as question terms). The test split
# is only reported (BENCHMARKS.md).
CONFIDENCE_WEIGHTS: dict[str, float] = {"dense_top": 2.7312, "focus": 3.0172}
CONFIDENCE_BIAS = -1.8311


def confidence(rel: Relevance, article: float, support: float, critical: bool, blocking_violations: int,
               answered: bool = True, focus: float = 0.0, match: float = 0.0,
               structured: bool = True) -> tuple[float, dict[str, float]]:
    """The calibrated probability that the answer is right, and the parts logged with it (`article` and
    `critical` only where a structured article is in play: plain documents have neither)."""
    parts = {"relevance": rel.score, "dense_top": rel.dense_top, "coverage": rel.coverage,
             "agreement": rel.agreement, "support": support, "answered": 1.0 if answered else 0.0,
             "violations": float(min(blocking_violations, 3)), "focus": focus, "match": match}
    if structured:
        parts.update(article=article, critical=1.0 if critical else 0.0)
    z = CONFIDENCE_BIAS + sum(w * parts[k] for k, w in CONFIDENCE_WEIGHTS.items())
    return round(1.0 / (1.0 + math.exp(-z)), 4), {k: round(v, 4) for k, v in parts.items()}
