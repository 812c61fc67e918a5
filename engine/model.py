"""The chat-model generator: OpenAI, or any OpenAI-compatible server (vLLM, Ollama) via `llm_base_url`.

The model answers through structured output (`llm/chat.py`). Articles' guardrails travel in the
user message as delimited, per-article data — never as system instructions — so a knowledge-base
article cannot give the model orders. The completion budget is what `max_tokens` leaves after the
context. Any model fault falls back to the extractive generator; the draft's notes say why.
"""

from __future__ import annotations

from typing import Any

from ..config import Context
from ..kb.text import display_text
from ..llm.chat import ModelClock, ModelFault, structured_call
from ..llm.schemas import AnswerOutput, CitedItem
from ..prompts import attribute, escape, render
from .extractive import MAX_COMPONENTS, ExtractiveGenerator
from .generate import AnswerRequest
from .privacy import masked
from .records import Draft, Section


def guardrail_text(rules: dict[str, dict[str, Any]]) -> str:
    """Each article's rules as data lines, tagged with the article they belong to."""
    lines: list[str] = []
    for doc_id, r in sorted(rules.items()):
        who = attribute(doc_id, 80)
        if r.get("never_say"):
            lines.append(f"[{who}] never say: " + ", ".join(f'"{escape(p)[:80]}"' for p in r["never_say"][:20]))
        lines.extend(f"[{who}] never: {escape(x)[:300]}" for x in r.get("never", [])[:10])
        lines.extend(f"[{who}] always: {escape(x)[:300]}" for x in r.get("always", [])[:10])
    return "\n".join(lines) if lines else "(no article guardrails in this context)"


def retry_notes(request: AnswerRequest, what: str, missing_label: str) -> tuple[str, str]:
    """The prompt's `feedback` (what the previous version failed, so a regeneration can fix it) and
    `missing_data` (fields still to collect, so the model does not assume their values) blocks."""
    feedback = ""
    if request.feedback.violations:
        feedback = (f"\nYour previous {what} failed verification; fix these problems:\n"
                    + "\n".join(f"- {v.rule}: {v.detail}" for v in request.feedback.violations) + "\n")
    missing = f"\n{missing_label}: " + ", ".join(request.missing_fields) + "\n" if request.missing_fields else ""
    return feedback, missing


class ModelGenerator:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.name = f"openai:{ctx.llm_model}"
        self.fallback = ExtractiveGenerator()

    def messages(self, request: AnswerRequest) -> list[tuple[str, str]]:
        system = render("answer_system", self.ctx.answer_system_prompt, max_components=MAX_COMPONENTS)
        feedback, missing = retry_notes(request, "answer", "Not yet collected from the participant")
        user = render("answer_user", self.ctx.answer_user_prompt, question=masked(request.question),
                      context=request.context_text, guardrails=guardrail_text(request.rules), feedback=feedback,
                      missing_data=missing)
        return [("system", system), ("user", user)]

    def generate(self, request: AnswerRequest) -> Draft:
        notes: dict[str, Any] = {"repair_attempts": 0}
        clock = request.clock or ModelClock(self.ctx.llm_deadline)
        try:
            parsed = structured_call(self.ctx, self.messages(request), AnswerOutput, clock, notes,
                                     max_tokens=request.answer_tokens, tags=["citewise:answer"])
        except ModelFault as exc:
            notes["fallback"] = str(exc)
            draft = self.fallback.generate(request)
            draft.notes.update(notes)
            draft.generator = f"{self.name}->extractive"
            return draft
        if parsed.cannot_answer:
            return Draft(sections=[], generator=self.name, notes=notes, cannot_answer=True,
                         reason=" ".join(parsed.reason.split())[:300])
        return Draft(sections=to_sections(parsed), generator=self.name, notes=notes)


def to_sections(answer: AnswerOutput) -> list[Section]:
    """Items become strings with inline [C#] markers, the shape every generator returns."""

    def item(i: CitedItem) -> str:
        labels = [c.strip().strip("[]") for c in i.citations if c.strip()]
        return i.text.strip() + "".join(f" [{lb}]" for lb in labels)

    return [Section(topic=masked(display_text(s.topic, 120)), answer_components=[item(i) for i in s.answer_components],
                    steps=[item(i) for i in s.steps], warnings=[item(i) for i in s.warnings])
            for s in answer.sections]
