"""The generator interface and what every generator receives and returns."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from citewise.config import Context


@dataclass
class AnswerRequest:
    question: str
    context_text: str  # the rendered, delimited context exactly as budgeted
    chunks: list[dict[str, Any]]  # labelled context chunks
    article_id: str | None
    rules: dict[str, dict[str, Any]]  # doc_id -> guardrails of the articles in the context
    idf: Callable[[str], float] = lambda _t: 1.0
    expansions: list[str] = field(default_factory=list)
    feedback: list[dict[str, str]] = field(default_factory=list)  # violations of the previous attempt
    avoid: list[str] = field(default_factory=list)  # claims dropped by the previous check
    missing_fields: list[str] = field(default_factory=list)
    similarity: Callable[[list[str]], list[float]] | None = None  # cosine of each text to the question


@dataclass
class Draft:
    sections: list[dict[str, Any]]
    generator: str
    notes: dict[str, Any] = field(default_factory=dict)  # e.g. repair attempts, fallback reason


class Generator(Protocol):
    name: str

    def generate(self, request: AnswerRequest) -> Draft: ...


def render_text(sections: list[dict[str, Any]]) -> str:
    """Plain-text rendering of the structured answer (what a person reads); citations stay inline."""
    lines: list[str] = []
    for s in sections:
        if len(sections) > 1 and s.get("topic"):
            lines.append(f"{s['topic'].rstrip(' .:')}:")
        if s.get("answer_components"):
            lines.append(" ".join(s["answer_components"]))
        if s.get("steps"):
            lines.append("Steps:")
            lines.extend(f"{i}. {step}" for i, step in enumerate(s["steps"], start=1))
        if s.get("warnings"):
            lines.append("Important:")
            lines.extend(f"- {w}" for w in s["warnings"])
        lines.append("")
    return "\n".join(lines).strip()


_GENERATORS: dict[tuple, Generator] = {}
_LOCK = threading.Lock()


def get_generator(ctx: Context) -> Generator:
    """One generator per configuration per process (an HTTP client is reused across runs)."""
    if not ctx.llm_model:
        from citewise.llm.extractive import ExtractiveGenerator

        key: tuple = ("extractive",)
        factory: Callable[[], Generator] = ExtractiveGenerator
    else:
        from citewise.llm.openai_chat import OpenAIGenerator

        key = ("openai", ctx.llm_model, ctx.llm_base_url, ctx.llm_temperature, ctx.llm_timeout, ctx.llm_max_retries,
               ctx.answer_system_prompt, ctx.answer_user_prompt)

        def factory() -> Generator:
            return OpenAIGenerator(ctx)
    with _LOCK:
        gen = _GENERATORS.get(key)
        if gen is None:
            gen = _GENERATORS[key] = factory()
        return gen
