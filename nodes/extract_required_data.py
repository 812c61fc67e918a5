"""extract_required_data: pick the governing article and list the data to collect for it."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from citewise.config import Context
from citewise.nodes.common import ctx_of, kb_of, timed
from citewise.nodes.search import search
from citewise.required import RULE_TYPES, article_confidence, check_collected, group_fields, rank_articles


@timed("extract_required_data")
def extract_required_data(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = ctx_of(runtime)
    kb = kb_of(ctx)
    rule_hits, _, _, _ = search(kb, ctx, state, extra_filter={"chunk_type": {"$in": RULE_TYPES}}, k=20)
    hits, rel, used, relaxed = search(kb, ctx, state, k=20)
    structured = {d for d, info in kb.docs.items() if info.structured}
    ranked = rank_articles([rule_hits, hits], structured)
    update: dict[str, Any] = {"article_candidates": ranked[:5]}
    covered = bool(ranked) and rel["score"] >= ctx.relevance_threshold
    if covered:
        best = ranked[0]
        conf = article_confidence(ranked, rel["score"])
        fields = group_fields(kb.docs[best["article_id"]].fields, best["article_id"])
        missing, invalid, _accepted = check_collected(fields, state.get("collected_data") or {})
        update.update(article_reference={"article_id": best["article_id"], "title": best["title"], "confidence": conf},
                      required_fields=fields, missing_fields=missing, invalid_fields=invalid)
    if state.get("mode") == "required_data":
        if not covered:
            update.update(decision="out_of_scope", confidence=rel["score"])
        else:
            update.update(decision="needs_data" if update["missing_fields"] else "can_proceed",
                          confidence=update["article_reference"]["confidence"])
    candidates = [(a["article_id"], round(a["score"], 5)) for a in ranked[:5]]
    update["metadata"] = {"required_data": {"relevance": rel, "filters": used, "facets_relaxed": relaxed,
                                            "candidates": candidates}}
    return update
