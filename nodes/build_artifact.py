"""build_artifact: fill the requested artifact's headings from the context and verify it (engine.artifact)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ..config import Context
from ..engine.artifact import build_artifact as build
from ..engine.outcomes import artifact_answered, draft_metadata, settled_output, verdict_metadata
from ..engine.records import ContextPack, Feedback, Inquiry, Resolution, Retrieval, dump, load
from .common import clock_of, model_update, node, snapshot


@node("build_artifact")
def build_artifact(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    kb, ctx = snapshot(state, runtime)
    clock = clock_of(state, ctx)
    feedback = load(Feedback, state["feedback"]) if state.get("feedback") else Feedback()
    resolution = load(Resolution, state["resolution"])
    built = build(kb, ctx, load(Inquiry, state["inquiry"]), resolution, load(Retrieval, state["retrieval"]).relevance,
                  load(ContextPack, state["context"]), feedback, clock)
    attempts = int(state.get("attempts") or 0) + 1
    used = model_update(clock, float(state.get("model_seconds") or 0))
    meta = {**used["metadata"], **draft_metadata(built.draft, attempts), **verdict_metadata(built.verdict)}
    missing = (built.verdict.settled or resolution).missing
    return {**used, **artifact_answered(built, missing), **settled_output(built.verdict), "draft": dump(built.draft),
            "verdict": dump(built.verdict), "feedback": dump(built.verdict.feedback()), "attempts": attempts,
            "metadata": meta}
