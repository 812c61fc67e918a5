"""The one typed configuration object, shared by the engine, the CLI and the graph.

`Context` is LangGraph's `context_schema`: Studio renders it as an editable form per assistant and
API callers pass it per run. A field the caller does not give falls back to an environment variable
named `CITEWISE_<FIELD>` (upper case), so a server started with `CITEWISE_HOME=/kb` answers from that
knowledge base; a value the caller gives always wins over the environment. Each field says who may
set it (`scope`): `caller` fields tune an answer, `operator` fields (locations, URLs, prompts,
resource limits) belong to whoever runs citewise. Secrets (API keys) are deliberately not
fields: they are read from the environment at the point of use and never shown in Studio or logs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

from .errors import InputError

ENV_PREFIX = "CITEWISE_"


def _desc(text: str, scope: str = "caller") -> dict[str, str]:
    """Field docs shown in Studio, and who may set the field: a run's caller, or only the operator."""
    return {"description": text, "scope": scope}


def _op(text: str) -> dict[str, str]:
    return _desc(text, "operator")


@dataclass(kw_only=True)
class Context:
    """Run-time configuration. Field docs are shown in LangGraph Studio."""

    # --- knowledge base -------------------------------------------------------------------------
    home: str = field(default="", metadata=_op(
        "Knowledge-base home directory (SQLite store + indexes). Empty: $CITEWISE_HOME, else ./.citewise"))
    database_url: str = field(default="", metadata=_op(
        "PostgreSQL URL (postgresql://user:password@host:5432/db) of a knowledge base shared by every replica; "
        "`home` then only caches this process's index snapshots. Empty: the SQLite store in the home."))
    chunk_size: int = field(default=800, metadata=_op("Target chunk size in tokens at ingest (700-1000)."))
    chunk_overlap: int = field(default=120, metadata=_op("Token overlap between split chunks (100-150)."))

    # --- retrieval ------------------------------------------------------------------------------
    top_k: int = field(default=12, metadata=_desc("Fused chunks handed to context assembly."))
    candidate_k: int = field(default=100, metadata=_desc("Candidates taken from each branch before fusion."))
    fusion: Literal["rrf", "zscore"] = field(default="zscore", metadata=_desc(
        "How BM25 and dense rankings are fused: z-score convex combination (default; +0.027 nDCG@10 on SciFact) "
        "or reciprocal rank fusion."))
    rrf_k: int = field(default=60, metadata=_desc("RRF constant k (ranks start at 1)."))
    fusion_alpha: float = field(default=0.5, metadata=_desc("Dense weight for z-score fusion (0..1)."))
    reranker: Literal["none", "heuristic", "cross-encoder", "llm"] = field(default="heuristic", metadata=_desc(
        "Reranking after fusion: 'llm' scores candidates with the chat model (falls back to heuristic)."))
    reranker_model: str = field(default="", metadata=_op("Local path of a CrossEncoder model."))
    relevance_threshold: float = field(default=0.5, metadata=_desc(
        "Minimum retrieval relevance (0..1) for the question to count as covered; below it citewise abstains."))
    mmr_lambda: float = field(default=1.0, metadata=_desc(
        "Maximal marginal relevance for the chunks kept: 1 = pure relevance, lower = more diverse."))
    expand_synonyms: bool = field(default=True, metadata=_desc(
        "Expand the question with the KB's synonyms.yaml (acronyms, everyday wording) for BM25."))
    correct_spelling: bool = field(default=True, metadata=_desc(
        "Read a word the KB never uses that is one slip of the keyboard from a provider's name as that name "
        "('Contsoo' -> 'Contoso'), and a lower-case acronym plural as its singular ('rmds'); the pairs are in "
        "the answer's metadata.spelling."))
    detect_facets: bool = field(default=True, metadata=_desc(
        "Detect record keeper / plan type / topic in the question and filter on them."))
    embedding_model: str = field(default="minilm", metadata=_op(
        "Dense embeddings: 'minilm' (local all-MiniLM-L6-v2) or 'openai:<model>', e.g. openai:text-embedding-3-small. "
        "An index remembers its model; switching needs `citewise reindex --embedding-model`."))
    embedding_base_url: str = field(default="", metadata=_op("Base URL for an OpenAI-compatible embeddings API."))
    vector_store: Literal["local", "pinecone"] = field(default="local", metadata=_op(
        "Where dense vectors live: the local index in the home, or Pinecone."))

    # --- answer ---------------------------------------------------------------------------------
    # 0.63: fewest false answers plus false abstentions on the DEV split, averaged over +-0.05 (evals/calibrate.py fit).
    confidence_threshold: float = field(default=0.63, metadata=_desc(
        "Answers below this confidence (the estimated chance the answer is right) take the explicit "
        "'uncertain' path."))
    support_threshold: float = field(default=0.5, metadata=_desc(
        "Minimum support score of a cited sentence by its cited chunk."))
    max_regenerations: int = field(default=1, metadata=_desc(
        "How many times a failed guardrail check may send the answer back to `generate`."))
    context_share: float = field(default=0.7, metadata=_desc("Share of max_tokens given to retrieved context."))
    llm_model: str = field(default="", metadata=_desc(
        "OpenAI-compatible chat model name. Empty: the deterministic extractive generator (offline)."))
    llm_base_url: str = field(default="", metadata=_op("Base URL of an OpenAI-compatible server (vLLM, Ollama)."))
    llm_temperature: float = field(default=0.1, metadata=_desc("Sampling temperature for the chat model."))
    llm_timeout: float = field(default=30.0, metadata=_op("Chat model request timeout in seconds."))
    llm_max_retries: int = field(default=3, metadata=_op("Retries with backoff on 429/5xx/timeouts."))
    llm_deadline: float = field(default=45.0, metadata=_op(
        "Seconds of model work allowed per answer, all calls and retries included; then the extractive answer."))
    llm_required_fields: bool = field(default=True, metadata=_desc(
        "With a chat model: add the data implied by the article's eligibility and business rules to its fields."))
    llm_grader: bool = field(default=False, metadata=_desc(
        "With a chat model: also ask it to grade each claim's groundedness and the KB's `Never:` rules."))
    answer_system_prompt: str = field(default="", metadata=_op("Override of prompts/answer_system.txt."))
    answer_user_prompt: str = field(default="", metadata=_op("Override of prompts/answer_user.txt."))
    required_data_prompt: str = field(default="", metadata=_op("Override of prompts/required_data.txt."))
    rerank_prompt: str = field(default="", metadata=_op("Override of prompts/rerank.txt."))
    artifact_system_prompt: str = field(default="", metadata=_op("Override of prompts/artifact_system.txt."))
    artifact_user_prompt: str = field(default="", metadata=_op("Override of prompts/artifact_user.txt."))

    # --- required data --------------------------------------------------------------------------
    interrupt_on_missing_data: bool = field(default=False, metadata=_desc(
        "Pause the graph (LangGraph interrupt) to ask for missing required fields."))

    # --- query log ------------------------------------------------------------------------------
    query_log: bool = field(default=True, metadata=_op(
        "Record every answer (question masked, filters, chunk ids, decision, timings, tokens) in the knowledge "
        "base's store (the home's database, or PostgreSQL with database_url); `citewise history` and "
        "GET /v1/queries read it. False: nothing is recorded."))
    query_log_retention_days: float = field(default=30.0, metadata=_op(
        "Query-log rows older than this many days are deleted (0: kept forever)."))

    def __post_init__(self) -> None:
        hints = get_type_hints(type(self))
        for f in fields(self):
            setattr(self, f.name, _coerce(f.name, hints[f.name], getattr(self, f.name)))
        self._validate()

    def _validate(self) -> None:
        checks = [
            (self.top_k >= 1, "top_k must be >= 1"),
            (self.candidate_k >= self.top_k, "candidate_k must be >= top_k"),
            (self.rrf_k >= 1, "rrf_k must be >= 1"),
            (0.0 <= self.fusion_alpha <= 1.0, "fusion_alpha must be within 0..1"),
            (0.0 <= self.mmr_lambda <= 1.0, "mmr_lambda must be within 0..1"),
            (0.0 <= self.relevance_threshold <= 1.0, "relevance_threshold must be within 0..1"),
            (0.0 <= self.confidence_threshold <= 1.0, "confidence_threshold must be within 0..1"),
            (0.0 <= self.support_threshold <= 1.0, "support_threshold must be within 0..1"),
            (0.0 < self.context_share <= 1.0, "context_share must be within (0, 1]"),
            (0 <= self.max_regenerations <= 3, "max_regenerations must be within 0..3"),
            (64 <= self.chunk_size <= 8000, "chunk_size must be within 64..8000"),
            (0 <= self.chunk_overlap < self.chunk_size // 2, "chunk_overlap must be >= 0 and < chunk_size/2"),
            (0.0 < self.llm_timeout <= 600, "llm_timeout must be within (0, 600] seconds"),
            (0.0 < self.llm_deadline <= 600, "llm_deadline must be within (0, 600] seconds"),
            (0 <= self.llm_max_retries <= 10, "llm_max_retries must be within 0..10"),
            (0.0 <= self.query_log_retention_days <= 36500, "query_log_retention_days must be within 0..36500"),
        ]
        for ok, message in checks:
            if not ok:
                raise InputError(f"invalid configuration: {message}")

    @property
    def home_path(self) -> Path:
        """Resolved KB home: explicit field, else $CITEWISE_HOME, else ./.citewise."""
        return Path(self.home or ".citewise").expanduser().resolve()

    def with_overrides(self, **changes: Any) -> Context:
        """Copy with some fields changed; unknown names are a clear error rather than silently ignored."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise InputError(f"unknown configuration field(s): {', '.join(unknown)}")
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


_dataclass_init = Context.__init__


def _init_with_env_defaults(self: Context, **given: Any) -> None:
    """Explicit values win; an environment variable only fills a field the caller did not give.

    (A copy made by `with_overrides`/`dataclasses.replace` passes every field, so a copy never picks
    up the environment again.)
    """
    known = {f.name for f in fields(Context)}
    unknown = sorted(set(given) - known)
    if unknown:
        raise InputError(f"unknown configuration field(s): {', '.join(unknown)}")
    from_env = {name: raw for name in known - set(given)
                if (raw := os.environ.get(ENV_PREFIX + name.upper())) not in (None, "")}
    object.__setattr__(self, "_given", dict(given))  # what the caller set (ServedContext checks it)
    _dataclass_init(self, **from_env, **given)


Context.__init__ = _init_with_env_defaults  # type: ignore[method-assign]


def _coerce(name: str, hint: Any, value: Any) -> Any:
    """Turn env strings (and JSON-ish values from API callers) into the declared type."""
    origin = get_origin(hint)
    try:
        if origin is Literal:
            allowed = get_args(hint)
            if value not in allowed:
                raise ValueError(f"expected one of {', '.join(map(str, allowed))}")
            return value
        if hint is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in {"1", "true", "yes", "on"}:
                return True
            if text in {"0", "false", "no", "off", ""}:
                return False
            raise ValueError("expected a boolean")
        if hint is int:
            if isinstance(value, bool):
                raise ValueError("expected an integer")
            return int(value)
        if hint is float:
            return float(value)
        if hint is str:
            return str(value)
    except (TypeError, ValueError) as exc:
        raise InputError(f"invalid configuration {name}={value!r}: {exc}") from None
    return value


# --- who may set what ------------------------------------------------------------------------------
OPEN_FIELDS_ENV = "CITEWISE_CALLER_FIELDS"  # operator fields the operator opens to callers (comma-separated)
MODELS_ENV = "CITEWISE_LLM_MODELS"  # chat models callers may choose (the operator's llm_model is always allowed)


def field_scope(name: str) -> str:
    return next((f.metadata.get("scope", "caller") for f in fields(Context) if f.name == name), "unknown")


def caller_fields() -> set[str]:
    """Fields a run's caller may set: the caller-scope ones plus those the operator opened."""
    opened = {n.strip() for n in os.environ.get(OPEN_FIELDS_ENV, "").split(",") if n.strip()}
    return {f.name for f in fields(Context) if f.metadata.get("scope", "caller") == "caller"} | opened


def allowed_models() -> set[str]:
    """Chat models a caller may pick: none (the extractive generator), the operator's, and any listed."""
    listed = {m.strip() for m in os.environ.get(MODELS_ENV, "").split(",") if m.strip()}
    return {"", Context().llm_model} | listed


def check_caller_settings(given: dict[str, Any]) -> None:
    """Refuse a run that changes an operator setting (KB location, URLs, prompts, limits).

    A value equal to the operator's own (from the environment or the default) changes nothing and is
    accepted, so a copy of a context passes. Credentials therefore only ever go to URLs the operator
    configured, and a caller cannot point citewise at another knowledge base on the server's disk.
    """
    operator = Context()
    open_to_caller = caller_fields()
    refused = sorted(name for name, value in given.items() if name not in open_to_caller
                     and value != getattr(operator, name, object()))
    if refused:
        raise InputError(f"configuration field(s) {', '.join(refused)} are set by the operator and cannot be "
                         f"changed per run (the operator can open fields with {OPEN_FIELDS_ENV})")
    model = given.get("llm_model")
    if model is not None and model not in allowed_models():
        raise InputError(f"llm_model {model!r} is not one of the models this server offers "
                         f"({', '.join(sorted(m for m in allowed_models() if m)) or 'none: extractive only'})")


class ServedContext(Context):
    """The context of the served graph: built from what a remote caller sent, so operator fields are
    refused (with a message naming them) before any node runs."""

    def __post_init__(self) -> None:
        super().__post_init__()
        check_caller_settings(getattr(self, "_given", {}))


def context_from(value: Context | dict[str, Any] | None) -> Context:
    """Accept what LangGraph hands a node (a Context, a dict from the API, or None) and return a Context."""
    if isinstance(value, Context):
        return value
    if value is None:
        return Context()
    if isinstance(value, dict):
        known = {f.name for f in fields(Context)}
        unknown = sorted(set(value) - known)
        if unknown:
            raise InputError(f"unknown configuration field(s): {', '.join(unknown)}")
        return Context(**value)
    raise InputError(f"configuration must be a mapping, got {type(value).__name__}")
