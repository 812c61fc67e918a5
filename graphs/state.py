"""Graph state: what callers send (InputState), what they get back (OutputState), and the working
state the nodes share. Studio renders the input and output schemas from these types."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, Required  # pydantic needs these on Python 3.11

from typing_extensions import TypedDict

Decision = Literal["can_proceed", "needs_data", "uncertain", "out_of_scope"]


class InputState(TypedDict, total=False):
    question: Required[str]
    """The inquiry, 3-1000 characters."""
    filters: dict[str, Any]
    """Metadata filter in Pinecone's language, e.g. {"record_keeper": "Acme Retirement"}."""
    collected_data: dict[str, Any]
    """Data already collected, by field key (matched case- and punctuation-insensitively)."""
    max_tokens: int
    """Token budget of the answer call (64-16000, default 1500); 70% goes to context."""
    mode: Literal["answer", "required_data"]
    """`required_data` stops after listing the fields to collect; absent: detected from the question."""


class Section(TypedDict):
    topic: str
    answer_components: list[str]
    steps: list[str]
    warnings: list[str]


class Response(TypedDict):
    text: str
    sections: list[Section]
    unsupported: NotRequired[list[str]]  # on the uncertain path: statements removed as unsupported


class Citation(TypedDict):
    id: str
    chunk_id: str
    doc_id: str
    title: str
    chunk_type: str
    tier: str
    score: float
    snippet: str
    metadata: dict[str, Any]


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


class RequiredFields(TypedDict):
    participant_data: list[Field]
    plan_data: list[Field]
    by_article: NotRequired[dict[str, Any]]  # when parallel articles tie: their fields, per article


class Violation(TypedDict):
    rule: str
    detail: str
    action: str


class GuardrailReport(TypedDict):
    passed: bool
    violations: list[Violation]


def merge_metadata(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Nodes each add their part of `metadata`; per-node timings accumulate (a retried node adds up)."""
    out = dict(left or {})
    for key, value in (right or {}).items():
        if key == "timings_ms" and isinstance(value, dict):
            timings = dict(out.get("timings_ms") or {})
            for node, ms in value.items():
                timings[node] = round(timings.get(node, 0.0) + ms, 3)
            out["timings_ms"] = timings
        else:
            out[key] = value
    return out


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
    metadata: Annotated[dict[str, Any], merge_metadata]


class State(InputState, OutputState, total=False):
    """Working state. Everything here is plain JSON so any checkpointer can persist it."""

    expansions: list[str]
    detected_facets: dict[str, list[str]]
    facet_filters: dict[str, Any]
    article_candidates: list[dict[str, Any]]
    hits: list[dict[str, Any]]
    relevance: dict[str, float]
    context: dict[str, Any]
    draft: dict[str, Any]
    attempts: int
    feedback: list[dict[str, str]]
    avoid: list[str]
    unsupported_claims: list[str]
