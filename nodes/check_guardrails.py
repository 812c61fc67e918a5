"""check_guardrails: verify and repair the draft, score confidence, set the decision (engine.check)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ..config import Context
from ..engine.check import check
from ..engine.outcomes import answered, settled_output, verdict_metadata
from ..engine.records import ContextPack, Draft, Inquiry, Resolution, Retrieval, dump, load
from .common import clock_of, model_update, node, snapshot


@node("check_guardrails")
def check_guardrails(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    kb, ctx = snapshot(state, runtime)
    clock = clock_of(state, ctx)
    resolution = load(Resolution, state["resolution"])
    verdict = check(kb, ctx, load(Inquiry, state["inquiry"]), resolution, load(Retrieval, state["retrieval"]).relevance,
                    load(ContextPack, state["context"]), load(Draft, state["draft"]), clock)
    used = model_update(clock, float(state.get("model_seconds") or 0))
    missing = (verdict.settled or resolution).missing
    return {**used, **answered(verdict, missing), **settled_output(verdict), "verdict": dump(verdict),
            "feedback": dump(verdict.feedback()), "metadata": {**used["metadata"], **verdict_metadata(verdict)}}
