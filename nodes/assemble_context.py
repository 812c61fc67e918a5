"""assemble_context: tiered, budgeted, labelled context, critical chunks of the article first (engine.assemble)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ..config import Context
from ..engine.assemble import assemble
from ..engine.outcomes import pack_metadata
from ..engine.records import Inquiry, Resolution, Retrieval, dump, load
from ..engine.resolve import governing_chunks
from .common import node, snapshot


@node("assemble_context")
def assemble_context(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    kb, ctx = snapshot(state, runtime)
    resolution, inquiry = load(Resolution, state["resolution"]), load(Inquiry, state["inquiry"])
    pack = assemble(load(Retrieval, state["retrieval"]).hits, governing_chunks(kb, resolution), resolution.article_id,
                    int(ctx.context_share * inquiry.max_tokens), lead=resolution.lead_document)
    return {"context": dump(pack), "metadata": pack_metadata(pack)}
