"""assemble_context: tiered, budgeted, labelled context (critical chunks of the matched article first)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from citewise.assembly import assemble
from citewise.config import Context
from citewise.nodes.common import ctx_of, kb_of, timed


@timed("assemble_context")
def assemble_context(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = ctx_of(runtime)
    ref = state.get("article_reference") or {}
    article_id = ref.get("article_id")
    article_chunks = kb_of(ctx).chunks_of(article_id) if article_id else []
    budget = int(ctx.context_share * state["max_tokens"])
    built = assemble(state.get("hits") or [], article_chunks, article_id, budget)
    return {"context": built,
            "metadata": {"context_tokens": built["tokens"], "context_budget": built["budget"],
                         "chunks_used": len(built["chunks"]), "tiers_used": built["tiers_used"],
                         "instructions_neutralized": built["instructions_neutralized"]}}
