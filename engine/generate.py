"""The generate step: a structured, cited draft from the assembled context.

Offline (no `llm_model`) the deterministic extractive generator answers; with a model, the model
answers through structured output and falls back to the extractive generator on any model fault,
saying why in the draft's notes. Generators share one request record and return a `Draft`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..config import Context
from ..kb.fields import normalize_key
from ..llm.chat import ModelClock
from ..retrieval.snapshot import KnowledgeBase
from .answerability import figures
from .check import context_rules
from .records import ContextChunk, ContextPack, Draft, Feedback, Inquiry, Resolution

ANSWER_SHARE_FLOOR = 256  # the least completion budget a model gets, whatever the context took


@dataclass
class AnswerRequest:
    question: str
    context_text: str  # the rendered, delimited context exactly as budgeted
    chunks: list[ContextChunk]
    article_id: str | None  # the article the answer is about (preferred for sentences and steps)
    rules: dict[str, dict[str, Any]]  # doc_id -> guardrails of the articles in the context
    governing: str | None = None  # whose Never-say binds every claim (None while articles conflict)
    compared: list[str] = field(default_factory=list)  # other providers' articles the question compares it with
    idf: Callable[[str], float] = lambda _t: 1.0
    expansions: list[str] = field(default_factory=list)
    feedback: Feedback = field(default_factory=Feedback)
    missing_fields: list[str] = field(default_factory=list)
    # The names of the fields the caller has given ("Letter of credit"): a rule conditioned on one of them
    # ("without a letter of credit, charge a $180 deposit") is about this case, even if the question is not.
    situation: list[str] = field(default_factory=list)
    # The figures of the caller's case (a rent of 1400, a payment on the 8th): a worked example with the
    # same figures is this case. Used to choose sentences only, never quoted.
    case_figures: set[str] = field(default_factory=set)
    similarity: Callable[[list[str]], list[float]] | None = None  # cosine of each text to the question
    # a plain document that leads the search where no article governs (resolve): it holds the question as
    # a governing article would
    lead_document: str | None = None
    answer_tokens: int = 1024  # completion budget: max_tokens minus what the context used
    clock: ModelClock | None = None


class Generator(Protocol):
    name: str

    def generate(self, request: AnswerRequest) -> Draft: ...


def generate(kb: KnowledgeBase, ctx: Context, inquiry: Inquiry, resolution: Resolution | None, pack: ContextPack,
             feedback: Feedback | None = None, clock: ModelClock | None = None) -> Draft:
    return get_generator(ctx).generate(answer_request(kb, inquiry, resolution, pack, feedback, clock))


def answer_request(kb: KnowledgeBase, inquiry: Inquiry, resolution: Resolution | None, pack: ContextPack,
                   feedback: Feedback | None = None, clock: ModelClock | None = None) -> AnswerRequest:
    """What every generator works from (answers and artifacts alike)."""
    return AnswerRequest(
        question=inquiry.question, context_text=pack.text, chunks=pack.chunks,
        article_id=resolution.article_id if resolution else None, rules=context_rules(kb, pack.chunks),
        compared=list(resolution.compared) if resolution else [],
        governing=resolution.governing if resolution else None,
        idf=kb.bm25.idf, expansions=inquiry.expansions, feedback=feedback or Feedback(),
        missing_fields=resolution.missing if resolution else [],
        situation=given_fields(resolution), case_figures=case_figures(resolution),
        similarity=lambda texts: similarity(kb, inquiry.question, texts),
        lead_document=resolution.lead_document if resolution else None,
        answer_tokens=max(ANSWER_SHARE_FLOOR, inquiry.max_tokens - pack.tokens), clock=clock)


def given_fields(resolution: Resolution | None) -> list[str]:
    """Names only, never values: the answer weighs what the case is about, and personal data stays out."""
    if resolution is None or not resolution.collected:
        return []
    given = {normalize_key(k) for k in resolution.collected}
    return [f.name for f in resolution.fields if normalize_key(f.key) in given and not f.choices]


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-(\d{2})$")


def case_figures(resolution: Resolution | None) -> set[str]:
    """The figures of the caller's case: the values of the governing article's amount, number and date
    fields (numbers of 2 or more; a date as its day of the month), from the data as resolve keeps it (a
    sensitive field's value withheld). A text field's digits (an account number) are no figure."""
    if resolution is None or not resolution.collected:
        return set()
    numeric = {normalize_key(f.key): f.data_type for f in resolution.fields
               if f.data_type in ("currency", "number", "date") and not f.sensitive}
    out: set[str] = set()
    for key, value in resolution.collected.items():
        kind = numeric.get(normalize_key(key))
        if kind is None or isinstance(value, bool):
            continue
        text = str(value).strip()
        if kind == "date" and (date := _ISO_DATE.match(text)) is not None:
            day = int(date.group(1))
            suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
            out.add(f"{day}{suffix}")
        elif kind != "date" and re.fullmatch(r"[$£€]?\s?\d[\d,]*(\.\d+)?", text):
            out |= {n for n in figures(text) if float(n) >= 2}
    return out


def similarity(kb: KnowledgeBase, question: str, texts: list[str]) -> list[float]:
    """Cosine of each text to the question (sentence vectors come from the shared on-disk cache)."""
    return (kb.embedder.embed_documents(texts) @ kb.embedder.embed_query(question)).tolist()


_GENERATORS: dict[tuple, Generator] = {}
_LOCK = threading.Lock()


def get_generator(ctx: Context) -> Generator:
    """One generator per configuration per process."""
    if not ctx.llm_model:
        from .extractive import ExtractiveGenerator

        key: tuple = ("extractive",)
        factory: Callable[[], Generator] = ExtractiveGenerator
    else:
        from .model import ModelGenerator

        key = ("model", ctx.llm_model, ctx.llm_base_url, ctx.llm_temperature, ctx.llm_timeout, ctx.llm_max_retries,
               ctx.llm_deadline, ctx.answer_system_prompt, ctx.answer_user_prompt)

        def factory() -> Generator:
            return ModelGenerator(ctx)
    with _LOCK:
        gen = _GENERATORS.get(key)
        if gen is None:
            gen = _GENERATORS[key] = factory()
        return gen
