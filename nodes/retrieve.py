"""retrieve: hybrid BM25 + dense search under the same filters, fused, reranked, scored for relevance."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from citewise.config import Context
from citewise.nodes.common import ctx_of, kb_of, timed
from citewise.nodes.search import search


@timed("retrieve")
def retrieve(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = ctx_of(runtime)
    hits, rel, used, relaxed = search(kb_of(ctx), ctx, state)
    return {"hits": hits, "relevance": rel,
            "metadata": {"chunks_retrieved": len(hits), "filters_applied": used, "facets_relaxed": relaxed,
                         "relevance": rel, "fusion": ctx.fusion, "reranker": ctx.reranker}}
