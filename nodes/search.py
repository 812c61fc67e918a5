"""Search with detected facets as filters, relaxing them when they leave nothing relevant.

Shared by `extract_required_data` and `retrieve`: detected facets are a guess, caller filters are
not, so only the detected part is ever relaxed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from citewise.config import Context
from citewise.knowledge import KnowledgeBase
from citewise.nodes.common import plain, search_params
from citewise.query import combine_filters
from citewise.retrieval.mmr import mmr
from citewise.retrieval.rerank import get_reranker
from citewise.scoring import relevance


def alternatives(kb: KnowledgeBase, question: str) -> dict[str, list[str]]:
    """question term -> synonym phrases that stand for it (for coverage)."""
    from citewise.kb.text import terms

    out: dict[str, list[str]] = {}
    for group in kb.synonyms.groups:
        for member in group:
            for t in terms(member):
                out.setdefault(t, []).extend(m for m in group if m != member)
    q = set(terms(question))
    return {t: v for t, v in out.items() if t in q}


def search(kb: KnowledgeBase, ctx: Context, state: dict[str, Any], *, extra_filter: dict[str, Any] | None = None,
           k: int | None = None) -> tuple[list[dict[str, Any]], dict[str, float], dict[str, Any], bool]:
    """(hits, relevance, filter used, relaxed?) for the state's question."""
    question = state["question"]
    caller = state.get("filters") or {}
    facet = state.get("facet_filters") or {}
    reranker = get_reranker(ctx.reranker, ctx.reranker_model)
    alts = alternatives(kb, question)

    want = k or ctx.top_k
    pool = want if ctx.mmr_lambda >= 1.0 else 3 * want

    def run(flt: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, float]]:
        hits = kb.search(question, filters=flt, params=search_params(ctx, pool), expansions=state.get("expansions"))
        hits = reranker.rerank(question, hits, facets=state.get("detected_facets") or {}, idf=kb.bm25.idf)
        if ctx.mmr_lambda < 1.0 and len(hits) > want:
            chosen = mmr(np.asarray([h["score"] for h in hits]), kb.vectors_of([h["row"] for h in hits]), want,
                         ctx.mmr_lambda)
            hits = [hits[i] for i in chosen]
        return hits, relevance(question, hits, alts, kb.bm25.idf)

    used = combine_filters(caller, facet, extra_filter or {})
    hits, rel = run(used)
    relaxed = False
    if facet and (not hits or rel["score"] < ctx.relevance_threshold):
        loose = combine_filters(caller, extra_filter or {})
        hits2, rel2 = run(loose)
        if rel2["score"] > rel["score"]:
            hits, rel, used, relaxed = hits2, rel2, loose, True
    for h in hits:
        h.pop("row", None)
    return plain(hits), plain(rel), used, relaxed
