"""Request and response models of the HTTP routes: the seeds' contracts, typed and strict.

Strict types on purpose: the seeds' spec refuses a non-boolean `stream`, so `"true"` or `1` must not
be coerced into `True` (pydantic's lax mode would), and the same holds for numbers given as text.
Unknown fields are refused too (`extra="forbid"`): a misspelt `top_k` must not be silently ignored.
Every refusal is a 400 whose `detail` names the field (server/errors.py).

Response models describe what the graph returns; nested objects allow extra keys so nothing the
engine adds later is dropped on the way out.
"""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Annotated, Any, Literal, get_origin, get_type_hints

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    create_model,
    field_validator,
)

from ..config import Context
from ..engine.artifact_types import ARTIFACT_TYPES
from ..engine.inquiry import MAX_MAX_TOKENS, MAX_QUESTION, MIN_QUESTION

Decision = Literal["can_proceed", "needs_data", "uncertain", "out_of_scope"]
Number = StrictFloat  # strict: JSON integers are accepted, text and booleans are not
TOP_K_MAX = 50

# Caller-scope settings a request may give, with bounds a public endpoint needs (Context itself checks
# consistency, e.g. candidate_k >= top_k). Stateless routes cannot pause, so interrupts are not offered.
_BOUNDS: dict[str, dict[str, Any]] = {
    "top_k": {"ge": 1, "le": 100}, "candidate_k": {"ge": 1, "le": 1000}, "rrf_k": {"ge": 1, "le": 10000},
    "fusion_alpha": {"ge": 0, "le": 1}, "relevance_threshold": {"ge": 0, "le": 1}, "mmr_lambda": {"ge": 0, "le": 1},
    "confidence_threshold": {"ge": 0, "le": 1}, "support_threshold": {"ge": 0, "le": 1},
    "max_regenerations": {"ge": 0, "le": 3}, "context_share": {"ge": 0.05, "le": 1},
    "llm_temperature": {"ge": 0, "le": 2}, "llm_model": {"max_length": 200},
}
NOT_ON_ROUTES = {"interrupt_on_missing_data"}


def caller_fields() -> list[str]:
    """Context fields whose scope is `caller` (config.py): the only settings a request may give."""
    return [f.name for f in fields(Context) if f.metadata.get("scope") == "caller" and f.name not in NOT_ON_ROUTES]


def _strict(hint: Any) -> Any:
    if get_origin(hint) is Literal:
        return hint
    return {bool: StrictBool, int: StrictInt, float: Number, str: StrictStr}.get(hint, hint)


def _caller_context_model() -> type[BaseModel]:
    hints = get_type_hints(Context)
    described = {f.name: f.metadata.get("description", "") for f in fields(Context)}
    spec: dict[str, Any] = {}
    for name in caller_fields():
        spec[name] = (_strict(hints[name]) | None,
                      Field(default=None, description=described[name], **_BOUNDS.get(name, {})))
    return create_model("CallerContext", __config__=ConfigDict(extra="forbid"),
                        __doc__="Per-request settings: caller-scope fields of config.Context only. Locations, URLs, "
                                "prompts and limits are the operator's and are refused here.", **spec)


CallerContext = _caller_context_model()


def clean_question(value: str, name: str) -> str:
    """Whitespace collapsed and trimmed, then the engine's length rule (refused here, at the door)."""
    text = re.sub(r"\s+", " ", value).strip()
    if not text:
        raise ValueError(f"{name} must not be empty")
    if not MIN_QUESTION <= len(text) <= MAX_QUESTION:
        raise ValueError(f"{name} must be {MIN_QUESTION}-{MAX_QUESTION} characters after trimming (got {len(text)})")
    return text


Facet = Annotated[StrictStr, Field(min_length=1, max_length=200)]


# The limits the engine enforces (after trimming), stated in the schema so clients and fuzzers know them;
# the check itself stays clean_question's, with its own message.
QUESTION_LENGTH = {"minLength": MIN_QUESTION, "maxLength": MAX_QUESTION, "pattern": r"\S"}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RequiredDataRequest(Strict):
    """The 401(k) engine's *get required data*: an inquiry and the facets the caller already knows."""

    inquiry: StrictStr = Field(description=f"The question, {MIN_QUESTION}-{MAX_QUESTION} characters.",
                               json_schema_extra=QUESTION_LENGTH,
                               examples=["What do we need for an Acme 401(k) loan?"])
    record_keeper: Facet | None = Field(default=None, description="Filter on the record keeper (e.g. Acme Retirement).")
    plan_type: Facet | None = Field(default=None, description="Filter on the plan type (e.g. 401(k)).")
    topic: Facet | None = Field(default=None, description="Filter on the topic (e.g. loan, rollover).")
    filters: dict[str, Any] | None = Field(default=None, description=(
        "Further metadata filter in Pinecone's language ($eq $ne $in $nin $gt $gte $lt $lte $exists $and $or); "
        "ANDed with the facets above and with what the caller's token may read."))
    collected_data: dict[str, Any] | None = Field(default=None, description=(
        "Data already collected, by field key: strings, numbers, booleans or null."))
    context: CallerContext | None = Field(default=None, description="Caller-scope settings (see config.Context).")

    @field_validator("inquiry")
    @classmethod
    def _inquiry(cls, value: str) -> str:
        return clean_question(value, "inquiry")

    @field_validator("collected_data")
    @classmethod
    def _collected(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        for key, item in (value or {}).items():
            if not key.strip():
                raise ValueError("collected_data keys must be non-empty")
            if item is not None and not isinstance(item, str | int | float | bool):
                raise ValueError(f"collected_data[{key!r}] must be a string, number, boolean or null")
        return value


class AnswerRequest(RequiredDataRequest):
    """The 401(k) engine's *generate response*: the inquiry, collected data and a token budget."""

    max_tokens: StrictInt | None = Field(default=None, ge=1, le=MAX_MAX_TOKENS, description=(
        "Token budget of the answer (default 2000; at least 175 at the default context share)."))


class ArtifactRequest(AnswerRequest):
    """A cited artifact (checklist, workflow, call script, brief, blueprint) about the inquiry's subject."""

    artifact_type: Literal[tuple(ARTIFACT_TYPES)] = Field(  # type: ignore[valid-type]
        description="What to build: " + ", ".join(ARTIFACT_TYPES) + ".", examples=["checklist"])


class QueryRequest(Strict):
    """Retrieval only: the passages a question finds, with their scores and metadata."""

    query: StrictStr = Field(description=f"The question, {MIN_QUESTION}-{MAX_QUESTION} characters.",
                             json_schema_extra=QUESTION_LENGTH,
                             examples=["401(k) loan repayment"])
    top_k: StrictInt = Field(default=10, ge=1, le=TOP_K_MAX, description="How many passages to return.")
    filters: dict[str, Any] | None = Field(default=None, description="Metadata filter in Pinecone's language.")
    context: CallerContext | None = Field(default=None, description="Caller-scope settings (see config.Context).")

    @field_validator("query")
    @classmethod
    def _query(cls, value: str) -> str:
        return clean_question(value, "query")


class SpecAnswerRequest(Strict):
    """`POST /api/v1/query/answer`, field for field as the answer endpoint spec names them."""

    query: StrictStr = Field(description="The question (must not be empty).", examples=["Can I borrow from my 401(k)?"])
    topK: StrictInt = Field(default=5, ge=1, le=TOP_K_MAX, description=f"Chunks used for the answer (1-{TOP_K_MAX}).")
    similarityThreshold: Number | None = Field(default=None, ge=0, le=1, description=(
        "Minimum retrieval relevance (0-1) for the question to count as covered; below it the answer says nothing "
        "relevant was found. Default: the server's relevance_threshold (0.5)."))
    source: Annotated[StrictStr, Field(min_length=1, max_length=2000)] | None = Field(
        default=None, description="Only documents whose front matter `source` equals this.")
    tags: list[Annotated[StrictStr, Field(min_length=1, max_length=200)]] | None = Field(
        default=None, max_length=50, description="Only documents carrying at least one of these tags.")
    stream: StrictBool = Field(default=False, description="true: answer as server-sent events (see /v1/answer/stream).")

    @field_validator("query")
    @classmethod
    def _query(cls, value: str) -> str:
        return clean_question(value, "query")


# --- responses ----------------------------------------------------------------------------------
class Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ErrorItem(BaseModel):
    field: str = Field(description="Where in the request: a field name, dotted for nested fields ('' for the body).")
    message: str


class ErrorBody(BaseModel):
    """Every refusal: a short code, a sentence, and one item per offending field."""

    error: str = Field(description="invalid_request | not_found | not_ingested | internal_error (stream only)")
    message: str
    detail: list[ErrorItem] = Field(default_factory=list)


class ArticleReference(Open):
    article_id: str
    title: str
    confidence: float
    alternatives: list[str] = Field(default_factory=list)


class RequiredFields(Open):
    participant_data: list[dict[str, Any]]
    plan_data: list[dict[str, Any]]


class Section(Open):
    topic: str = ""
    answer_components: list[str] = Field(default_factory=list)
    steps: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


class ResponseText(Open):
    text: str
    sections: list[Section]


class Citation(Open):
    id: str
    chunk_id: str
    doc_id: str
    title: str
    chunk_type: str
    tier: str
    score: float
    snippet: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class Guardrails(Open):
    passed: bool
    violations: list[dict[str, Any]]


class Resolved(BaseModel):
    """What every engine route returns: the decision, the governing article and the data to collect."""

    query_id: str | None = Field(description="The query-log row of this request (GET /v1/queries/{id}).")
    decision: Decision
    confidence: float
    article_reference: ArticleReference | None
    required_fields: RequiredFields
    missing_fields: list[str]
    invalid_fields: dict[str, str]


class RequiredDataResponse(Resolved):
    note: str = Field(default="", description=(
        "Why the decision is `uncertain` where it is: the only article on the subject is another provider's than "
        "the one named, so its data is not listed. Empty otherwise."))


class AnswerResponse(Resolved):
    response: ResponseText
    citations: list[Citation]
    guardrails: Guardrails
    needs_review: bool
    review: dict[str, Any]
    metadata: dict[str, Any]


class ArtifactResponse(AnswerResponse):
    artifact: dict[str, Any] | None = Field(default=None, description=(
        "The built artifact: type, title, headings (each with cited items) and markdown. When the knowledge "
        "base cannot support it the decision abstains (as for an answer) and the headings hold no items."))


class PassageOut(BaseModel):
    chunk_id: str
    doc_id: str
    title: str
    section: str
    chunk_type: str
    tier: str
    ordinal: int
    score: float = Field(description="The ranking score (fused, then reranked).")
    bm25: float
    dense: float = Field(description="Cosine similarity of the query and passage embeddings.")
    text: str
    metadata: dict[str, Any]


class Relevance(BaseModel):
    score: float
    dense_top: float
    coverage: float
    agreement: float
    topic: float | None = Field(None, description="The score without the provider names the query gives (absent "
                                                  "when it names none, or its other words alone clear 0.15); "
                                                  "under 0.15 the query is out of scope.")


class QueryResponse(BaseModel):
    query_id: str | None
    relevance: Relevance
    filters_applied: dict[str, Any]
    facets_relaxed: bool
    passages: list[PassageOut]


class QueryRecord(Open):
    """One query-log row (engine/querylog.py)."""

    id: str
    time: str
    surface: str
    question: str
    decision: Decision | None = None
    error: str | None = None


class QueryList(BaseModel):
    queries: list[QueryRecord]


class KBHealth(BaseModel):
    generation: int
    documents: int
    chunks: int


class Health(BaseModel):
    status: Literal["ok", "not_ingested"]
    kb: KBHealth | None
    query_log: bool
    auth: Literal["tokens", "open"]


class SpecSource(BaseModel):
    documentId: str
    title: str
    chunkIndex: int
    score: float
    source: str | None
    tags: list[str]


class SpecAnswerResponse(BaseModel):
    answer: str
    sources: list[SpecSource]
    contextUsed: list[str]
    latencyMs: int
    promptTokens: int
    completionTokens: int
