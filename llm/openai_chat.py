"""Chat-model generator through langchain-openai: OpenAI, or any OpenAI-compatible server (vLLM,
Ollama) via `llm_base_url`. Structured output with pydantic; a malformed reply gets one repair
attempt, then the extractive generator answers instead (reported in the draft notes)."""

from __future__ import annotations

import os
from typing import Any

from citewise.config import Context
from citewise.errors import ConfigError
from citewise.llm.base import AnswerRequest, Draft
from citewise.llm.extractive import MAX_COMPONENTS, ExtractiveGenerator
from citewise.llm.schemas import AnswerOutput, to_sections
from citewise.prompts import render


def guardrail_text(rules: dict[str, dict[str, Any]]) -> str:
    lines: list[str] = []
    for doc_id, r in sorted(rules.items()):
        if r.get("never_say"):
            lines.append(f"   - [{doc_id}] never say: " + ", ".join(f'"{p}"' for p in r["never_say"]))
        lines.extend(f"   - [{doc_id}] never: {x}" for x in r.get("never", []))
        lines.extend(f"   - [{doc_id}] always: {x}" for x in r.get("always", []))
    return "\n".join(lines) if lines else "   (no article guardrails in this context)"


class OpenAIGenerator:
    def __init__(self, ctx: Context):
        from langchain_openai import ChatOpenAI

        api_key = os.environ.get("OPENAI_API_KEY")
        if not api_key and not ctx.llm_base_url:
            raise ConfigError("CITEWISE_LLM_MODEL is set but OPENAI_API_KEY is not (and no llm_base_url)")
        self.ctx = ctx
        self.name = f"openai:{ctx.llm_model}"
        self.model = ChatOpenAI(model=ctx.llm_model, base_url=ctx.llm_base_url or None,
                                api_key=api_key or "not-needed", temperature=ctx.llm_temperature,
                                timeout=ctx.llm_timeout, max_retries=ctx.llm_max_retries)
        self.structured = self.model.with_structured_output(AnswerOutput, method="json_schema", include_raw=True)
        self.fallback = ExtractiveGenerator()

    def messages(self, request: AnswerRequest) -> list[tuple[str, str]]:
        system = render("answer_system", self.ctx.answer_system_prompt, guardrails=guardrail_text(request.rules),
                        max_components=MAX_COMPONENTS)
        feedback = ""
        if request.feedback:
            feedback = ("\nYour previous answer failed verification; fix these problems:\n"
                        + "\n".join(f"- {v['rule']}: {v['detail']}" for v in request.feedback) + "\n")
        missing = ""
        if request.missing_fields:
            missing = "\nNot yet collected from the participant: " + ", ".join(request.missing_fields) + "\n"
        user = render("answer_user", self.ctx.answer_user_prompt, question=request.question,
                      context=request.context_text, feedback=feedback, missing_data=missing)
        return [("system", system), ("user", user)]

    def generate(self, request: AnswerRequest) -> Draft:
        messages = self.messages(request)
        notes: dict[str, Any] = {"repair_attempts": 0}
        result = self.structured.invoke(messages)
        parsed, error = result.get("parsed"), result.get("parsing_error")
        if parsed is None:
            notes["repair_attempts"] = 1
            raw = getattr(result.get("raw"), "content", "") or ""
            repair = [*messages, ("assistant", str(raw)[:4000]),
                      ("user", f"That reply was not valid for the required JSON schema ({error}). "
                               "Reply again with only valid JSON for the schema.")]
            result = self.structured.invoke(repair)
            parsed, error = result.get("parsed"), result.get("parsing_error")
        if parsed is None:
            draft = self.fallback.generate(request)
            draft.notes.update(notes, fallback=f"model output unusable after repair: {str(error)[:200]}")
            draft.generator = f"{self.name}->extractive"
            return draft
        return Draft(sections=to_sections(parsed), generator=self.name, notes=notes)
