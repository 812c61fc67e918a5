"""Chat-model generator through langchain-openai: OpenAI, or any OpenAI-compatible server (vLLM,
Ollama) via `llm_base_url`.

The answer schema (pydantic) is sent as a JSON-schema `response_format` and the reply is validated
here, so a malformed reply is an ordinary, recoverable event: one repair turn shows the model its
reply and the validation error; if that fails too, or the endpoint stays unavailable after the
client's retries with backoff (429, 5xx, timeouts), the extractive generator answers instead and
the draft notes say why. Tokens stream through LangGraph's "messages" mode when a caller streams.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from citewise.config import Context
from citewise.errors import ConfigError
from citewise.llm.base import AnswerRequest, Draft
from citewise.llm.extractive import MAX_COMPONENTS, ExtractiveGenerator
from citewise.llm.schemas import AnswerOutput, to_sections
from citewise.prompts import render

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


def guardrail_text(rules: dict[str, dict[str, Any]]) -> str:
    lines: list[str] = []
    for doc_id, r in sorted(rules.items()):
        if r.get("never_say"):
            lines.append(f"   - [{doc_id}] never say: " + ", ".join(f'"{p}"' for p in r["never_say"]))
        lines.extend(f"   - [{doc_id}] never: {x}" for x in r.get("never", []))
        lines.extend(f"   - [{doc_id}] always: {x}" for x in r.get("always", []))
    return "\n".join(lines) if lines else "   (no article guardrails in this context)"


def response_format(schema: type[BaseModel]) -> dict[str, Any]:
    return {"type": "json_schema",
            "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": False}}


def chat_model(ctx: Context) -> Any:
    from langchain_openai import ChatOpenAI

    api_key = os.environ.get("OPENAI_API_KEY")
    if not api_key and not ctx.llm_base_url:
        raise ConfigError("llm_model is set but OPENAI_API_KEY is not (and no llm_base_url for a local server)")
    return ChatOpenAI(model=ctx.llm_model, base_url=ctx.llm_base_url or None, api_key=api_key or "not-needed",
                      temperature=ctx.llm_temperature, timeout=ctx.llm_timeout, max_retries=ctx.llm_max_retries)


def structured_call(model: Any, messages: list[tuple[str, str]], schema: type[BaseModel],
                    notes: dict[str, Any]) -> BaseModel | None:
    """Invoke with a JSON-schema response format; one repair turn on an invalid reply; None if unusable."""
    fmt = response_format(schema)
    reply = model.invoke(messages, response_format=fmt)
    raw = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
    try:
        return schema.model_validate_json(_FENCE.sub("", raw).strip())
    except ValidationError as exc:
        error = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])
    notes["repair_attempts"] = notes.get("repair_attempts", 0) + 1
    repair = [*messages, ("assistant", raw[:4000]),
              ("user", f"That reply does not match the required JSON schema ({error}). Reply again with only "
                       "valid JSON for the schema.")]
    reply = model.invoke(repair, response_format=fmt)
    raw = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
    try:
        return schema.model_validate_json(_FENCE.sub("", raw).strip())
    except ValidationError as exc:
        notes["fallback"] = f"model output invalid after one repair: {exc.errors()[0]['msg']}"
        return None


class OpenAIGenerator:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.name = f"openai:{ctx.llm_model}"
        self.model = chat_model(ctx)
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
        import openai

        notes: dict[str, Any] = {"repair_attempts": 0}
        try:
            parsed = structured_call(self.model, self.messages(request), AnswerOutput, notes)
        except (openai.APIError, openai.APIConnectionError) as exc:
            notes["fallback"] = f"model unavailable after retries: {type(exc).__name__}: {str(exc)[:160]}"
            parsed = None
        if parsed is None:
            draft = self.fallback.generate(request)
            draft.notes.update(notes)
            draft.generator = f"{self.name}->extractive"
            return draft
        assert isinstance(parsed, AnswerOutput)
        if parsed.cannot_answer:
            notes["cannot_answer"] = True
        return Draft(sections=to_sections(parsed), generator=self.name, notes=notes)
