"""intake: validate and normalise the inputs, expand synonyms, detect facets, pick the mode."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from citewise.config import Context
from citewise.nodes.common import ctx_of, kb_of, timed
from citewise.query import detect_mode, facet_filter, validate_inputs


@timed("intake")
def intake(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = ctx_of(runtime)
    inputs = validate_inputs(state)
    kb = kb_of(ctx)
    question = inputs["question"]
    expansions = kb.synonyms.expansions(question) if ctx.expand_synonyms else []
    detected = kb.facet_detector.detect(" ".join([question, *expansions])) if ctx.detect_facets else {}
    mode = inputs["mode"] or detect_mode(question)
    return {
        **inputs,
        "mode": mode,
        "expansions": expansions,
        "detected_facets": detected,
        "facet_filters": facet_filter(detected, inputs["filters"]),
        # A thread can carry several runs: every output starts fresh.
        "decision": "uncertain",
        "confidence": 0.0,
        "response": {"text": "", "sections": []},
        "citations": [],
        "article_reference": None,
        "article_candidates": [],
        "required_fields": {"participant_data": [], "plan_data": []},
        "missing_fields": [],
        "invalid_fields": {},
        "guardrails": {"passed": True, "violations": []},
        "needs_review": False,
        "hits": [],
        "context": {},
        "draft": {},
        "attempts": 0,
        "feedback": [],
        "avoid": [],
        "unsupported_claims": [],
        "metadata": Overwrite({"mode": mode, "facets_detected": detected, "expansions": expansions,
                               "generator": None, "context_tokens": 0,
                               "context_budget": int(ctx.context_share * inputs["max_tokens"]),
                               "chunks_retrieved": 0, "chunks_used": 0,
                               "tiers_used": {"critical": 0, "high": 0, "medium": 0, "low": 0}}),
    }
