"""retrieve: hybrid search for the context, reranked and scored for relevance (engine.search)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ..config import Context
from ..engine.outcomes import retrieval_metadata
from ..engine.records import Inquiry, Resolution, dump, load
from ..engine.search import search
from .common import clock_of, model_update, node, snapshot


@node("retrieve")
def retrieve(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    kb, ctx = snapshot(state, runtime)
    clock = clock_of(state, ctx)
    resolution = load(Resolution, state["resolution"])
    retrieval = search(kb, ctx, load(Inquiry, state["inquiry"]), facet_filters=resolution.facet_filters, clock=clock)
    used = model_update(clock, float(state.get("model_seconds") or 0))
    return {**used, "retrieval": dump(retrieval),
            "metadata": {**used["metadata"], **retrieval_metadata(retrieval, ctx)}}
