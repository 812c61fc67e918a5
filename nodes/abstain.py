"""abstain: the knowledge base does not cover the question (or the model says the excerpts do not
answer it); say so, and what would help, instead of guessing."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ..config import Context
from ..engine.outcomes import abstained
from ..engine.records import Draft, Inquiry, Retrieval, load
from .common import node, snapshot


@node("abstain")
def abstain(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    kb, _ = snapshot(state, runtime)
    draft = load(Draft, state["draft"]) if state.get("draft") else Draft()
    return abstained(kb, load(Inquiry, state["inquiry"]), load(Retrieval, state["retrieval"]).relevance,
                     draft.reason if draft.cannot_answer else "")
