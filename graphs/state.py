"""Graph state: what callers send (InputState), what they get back (OutputState), and the working
state the nodes share. Studio renders the input and output schemas from these types."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, Required  # pydantic needs these on Python 3.11

from typing_extensions import TypedDict

# The output's records are the engine's (values travel as their JSON; these types give the schema).
from ..engine.records import Artifact, Citation, Dropped, Section, Violation

Decision = Literal["can_proceed", "needs_data", "uncertain", "out_of_scope"]


class InputState(TypedDict, total=False):
    question: Required[str]
    """The inquiry, 3-1000 characters."""
    filters: dict[str, Any]
    """Metadata filter in Pinecone's language, e.g. {"record_keeper": "Acme Retirement"}."""
    collected_data: dict[str, Any]
    """Data already collected, by field key (matched case- and punctuation-insensitively)."""
    max_tokens: int
    """Token budget of the answer (default 2000; at least 175, enough for one excerpt at the default
    context share); 70% goes to context, the rest bounds the model's reply."""
    mode: Literal["answer", "required_data", "artifact"]
    """`required_data` stops after listing the fields to collect; `artifact` builds the document named by
    `artifact_type` instead of an answer; absent: detected from the question."""
    artifact_type: Literal["checklist", "workflow", "call_script", "brief", "blueprint"]
    """Mode `artifact`: which document to build from the knowledge base (implies the mode). The question
    is its subject, e.g. "hardship withdrawal at Acme"; the default max_tokens is then 4000."""


class Response(TypedDict):
    text: str
    sections: list[Section]


class Review(TypedDict):
    dropped: list[Dropped]
    """Claims verification removed, for a reviewer (personal data masked); never shown in `response.text`."""


class ArticleReference(TypedDict):
    article_id: str
    title: str
    confidence: float
    alternatives: NotRequired[list[str]]  # parallel articles still in play (a facet must be chosen)


class Field(TypedDict):
    key: str
    name: str
    data_type: str
    required: bool
    description: str
    why_needed: str
    article_id: NotRequired[str]
    chunk_id: NotRequired[str]
    stated_in_question: NotRequired[Any]  # the value the question gives beside the field's name, to confirm


class RequiredFields(TypedDict):
    participant_data: list[Field]
    plan_data: list[Field]
    by_article: NotRequired[dict[str, Any]]  # when parallel articles tie: their fields, per article


class GuardrailReport(TypedDict):
    passed: bool
    violations: list[Violation]


def merge_metadata(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Nodes each add their part of `metadata`; per-node timings and model usage accumulate
    (a retried node adds up)."""
    out = dict(left or {})
    for key, value in (right or {}).items():
        if key in ("timings_ms", "model") and isinstance(value, dict):
            total = dict(out.get(key) or {})
            for name, amount in value.items():
                total[name] = round(total.get(name, 0) + amount, 3)
            out[key] = total
        else:
            out[key] = value
    return out


def add_seconds(left: float | None, right: float | None) -> float:
    return round((left or 0.0) + (right or 0.0), 4)


class OutputState(TypedDict, total=False):
    decision: Decision
    confidence: float
    response: Response
    citations: list[Citation]
    article_reference: ArticleReference | None
    required_fields: RequiredFields
    missing_fields: list[str]
    invalid_fields: dict[str, str]
    guardrails: GuardrailReport
    needs_review: bool
    review: Review
    artifact: Artifact | None
    """Mode `artifact`: {type, title, headings: [{heading, items, empty, quotes_guardrails}], markdown}."""
    metadata: Annotated[dict[str, Any], merge_metadata]


class State(InputState, OutputState, total=False):
    """Working state: engine records as JSON (engine/records.py), so any checkpointer can persist it."""

    kb_generation: int  # the KB snapshot pinned at intake
    inquiry: dict[str, Any]  # records.Inquiry
    resolution: dict[str, Any] | None  # records.Resolution
    retrieval: dict[str, Any] | None  # records.Retrieval
    context: dict[str, Any] | None  # records.ContextPack
    draft: dict[str, Any] | None  # records.Draft
    verdict: dict[str, Any] | None  # records.Verdict
    feedback: dict[str, Any] | None  # records.Feedback, for a regeneration
    attempts: int
    model_seconds: Annotated[float, add_seconds]  # model time spent on this answer (llm_deadline bounds it)
