"""generate: the structured, cited answer from the context (extractive offline, or a chat model)."""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from citewise.config import Context
from citewise.llm.base import AnswerRequest, get_generator, render_text
from citewise.nodes.common import ctx_of, kb_of, timed


def context_rules(kb: Any, chunks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c["doc_id"]: kb.docs[c["doc_id"]].guardrails for c in chunks if c["doc_id"] in kb.docs}


def similarity(kb: Any, question: str, texts: list[str]) -> list[float]:
    """Cosine of each text to the question (sentence vectors come from the shared on-disk cache)."""
    return (kb.embedder.embed_documents(texts) @ kb.embedder.embed_query(question)).tolist()


@timed("generate")
def generate(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = ctx_of(runtime)
    kb = kb_of(ctx)
    context = state.get("context") or {}
    chunks = context.get("chunks") or []
    request = AnswerRequest(
        question=state["question"], context_text=context.get("text", ""), chunks=chunks,
        article_id=(state.get("article_reference") or {}).get("article_id"), rules=context_rules(kb, chunks),
        idf=kb.bm25.idf, expansions=state.get("expansions") or [], feedback=state.get("feedback") or [],
        avoid=state.get("avoid") or [], missing_fields=state.get("missing_fields") or [],
        similarity=lambda texts: similarity(kb, state["question"], texts))
    draft = get_generator(ctx).generate(request)
    if not draft.generator.startswith("openai:") or "->" in draft.generator:
        # No model tokens went through the "messages" stream: let streaming callers see the draft.
        writer = get_stream_writer()
        for line in render_text(draft.sections).splitlines(keepends=True):
            writer({"node": "generate", "token": line})
    attempts = int(state.get("attempts") or 0) + 1
    return {"draft": {"sections": draft.sections, "generator": draft.generator, "notes": draft.notes},
            "attempts": attempts,
            "metadata": {"generator": draft.generator, "attempts": attempts, "generation_notes": draft.notes}}
