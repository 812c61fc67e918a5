"""generate: the structured, cited draft (engine.generate: extractive offline, or a chat model)."""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from ..config import Context
from ..engine.generate import generate as generate_draft
from ..engine.outcomes import draft_metadata, render_text
from ..engine.records import ContextPack, Feedback, Inquiry, Resolution, dump, load
from .common import clock_of, model_update, node, snapshot


@node("generate")
def generate(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    kb, ctx = snapshot(state, runtime)
    clock = clock_of(state, ctx)
    feedback = load(Feedback, state["feedback"]) if state.get("feedback") else Feedback()
    draft = generate_draft(kb, ctx, load(Inquiry, state["inquiry"]), load(Resolution, state["resolution"]),
                           load(ContextPack, state["context"]), feedback, clock)
    if not draft.generator.startswith("openai:") or "->" in draft.generator:
        writer = get_stream_writer()  # no model tokens went through "messages": stream the draft instead
        for line in render_text(draft.sections).splitlines(keepends=True):
            writer({"node": "generate", "token": line})
    attempts = int(state.get("attempts") or 0) + 1
    used = model_update(clock, float(state.get("model_seconds") or 0))
    return {**used, "draft": dump(draft), "attempts": attempts,
            "metadata": {**used["metadata"], **draft_metadata(draft, attempts)}}
