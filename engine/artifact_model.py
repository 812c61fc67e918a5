"""A chat model fills an artifact type's schema (structured output), at low temperature.

The excerpts and the articles' guardrails travel in the user message as delimited data, exactly as
for answers (engine/model.py); the system prompt holds the rules. Artifacts are documents people act
on, so sampling is capped at ARTIFACT_TEMPERATURE whatever `llm_temperature` says. Any model fault
(unreachable, out of time, a reply that never validates) is the caller's to turn into the
extractive artifact with a note.
"""

from __future__ import annotations

from typing import Any

from ..config import Context
from ..llm.chat import ModelClock, structured_call
from ..prompts import render
from .artifact_types import ArtifactOutput, ArtifactType
from .generate import AnswerRequest
from .model import guardrail_text, retry_notes
from .privacy import masked

ARTIFACT_TEMPERATURE = 0.1


def heading_guide(kind: ArtifactType) -> str:
    """One line per heading: the JSON field, the heading, what belongs there, which excerpts hold it."""
    lines = []
    for name, h in kind.headings:
        where = f" (usually in excerpts of type {', '.join(h.types)})" if h.types and not h.quotes_guardrails else ""
        lines.append(f'- {name}: "{h.name}" - {kind.schema.model_fields[name].description}{where}')
    return "\n".join(lines)


class ModelArtifacts:
    def __init__(self, ctx: Context):
        self.ctx = ctx.with_overrides(llm_temperature=min(ctx.llm_temperature, ARTIFACT_TEMPERATURE))
        self.name = f"openai:{ctx.llm_model}"

    def messages(self, kind: ArtifactType, request: AnswerRequest) -> list[tuple[str, str]]:
        system = render("artifact_system", self.ctx.artifact_system_prompt)
        feedback, missing = retry_notes(request, "version", "Not yet collected")
        user = render("artifact_user", self.ctx.artifact_user_prompt, artifact=kind.label.lower(),
                      subject=masked(request.question), headings=heading_guide(kind), context=request.context_text,
                      guardrails=guardrail_text(request.rules), missing_data=missing, feedback=feedback)
        return [("system", system), ("user", user)]

    def fill(self, kind: ArtifactType, request: AnswerRequest, notes: dict[str, Any]) -> ArtifactOutput:
        """The model's artifact (ModelFault when there is none to be had)."""
        clock = request.clock or ModelClock(self.ctx.llm_deadline)
        return structured_call(self.ctx, self.messages(kind, request), kind.schema, clock, notes,
                               max_tokens=request.answer_tokens, tags=["citewise:artifact"])
