"""The typed records that travel between the answering steps.

    Inquiry --resolve--> Resolution --search--> Retrieval --assemble--> ContextPack
            --generate--> Draft --check--> Verdict
            --build_artifact--> ArtifactBuild (Draft + Verdict + Artifact)   (mode `artifact`)

Each step takes records and returns one; nothing travels as a dict with ad-hoc keys. Records are
plain dataclasses so the engine is usable without LangGraph; the graph keeps its state as JSON (any
checkpointer can persist it) and converts at the node boundary with `dump` / `load`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, TypeVar

from pydantic import TypeAdapter

from ..retrieval.passage import Passage

Mode = Literal["answer", "required_data", "artifact"]
Decision = Literal["can_proceed", "needs_data", "uncertain", "out_of_scope"]
T = TypeVar("T")


MIN_QUESTION, MAX_QUESTION = 3, 1000  # characters of a question after trimming
DEFAULT_MAX_TOKENS = 2000  # an answer's token budget; chosen on the dev split of the eval sets (1500: one relevant
#                            chunk too few; 2500 and 3000 no better)

@dataclass
class Inquiry:
    """The caller's question after validation, with what the knowledge base recognises in it."""

    question: str
    filters: dict[str, Any] = field(default_factory=dict)
    collected_data: dict[str, Any] = field(default_factory=dict)
    max_tokens: int = DEFAULT_MAX_TOKENS
    mode: Mode = "answer"
    artifact_type: str = ""  # mode `artifact`: which kind (engine/artifact_types.py)
    expansions: list[str] = field(default_factory=list)  # synonyms of terms in the question
    corrections: list[tuple[str, str]] = field(default_factory=list)  # slips read as the KB's words (spelling.py)
    detected_facets: dict[str, list[str]] = field(default_factory=dict)  # facet -> values named in it
    facet_filters: dict[str, Any] = field(default_factory=dict)  # detected facets as a filter (relaxable)
    access: dict[str, Any] = field(default_factory=dict)  # what the caller may read (engine.access): never relaxed


@dataclass
class Relevance:
    """How well retrieval covers the question (0..1); below the threshold citewise abstains."""

    score: float = 0.0
    dense_top: float = 0.0
    coverage: float = 0.0
    agreement: float = 0.0
    # the score without the provider names the question gives (None: it names none, or clears the floor anyway)
    topic: float | None = None


@dataclass
class Retrieval:
    """One search: the passages kept, their relevance, and the filter that produced them."""

    hits: list[Passage] = field(default_factory=list)
    relevance: Relevance = field(default_factory=Relevance)
    filters: dict[str, Any] = field(default_factory=dict)
    relaxed: bool = False  # detected facets were dropped because they left nothing relevant
    notes: dict[str, Any] = field(default_factory=dict)  # e.g. a reranker that fell back


@dataclass
class FieldSpec:
    """A datum the agent must collect (the KB's `Required data` line, or one a model inferred)."""

    key: str
    name: str
    data_type: str
    required: bool
    description: str = ""
    why_needed: str = ""
    group: Literal["participant", "plan"] = "participant"
    article_id: str = ""
    chunk_id: str = ""
    source: str = ""  # "model" when inferred from the article's rules by a chat model
    article_ids: list[str] = field(default_factory=list)  # when parallel articles share it
    choices: list[str] = field(default_factory=list)  # a facet to choose (record keeper, ...)
    sensitive: bool = False  # collected values are never echoed

    @property
    def words(self) -> str:
        """What the field counts in, in its own words ("Years of service: completed years")."""
        return f"{self.name}: {self.description}"


@dataclass
class ArticleCandidate:
    article_id: str
    title: str
    score: float
    chunks: list[str] = field(default_factory=list)


@dataclass
class Resolution:
    """Which article governs the inquiry and what data it needs; `covered` False means abstain."""

    covered: bool
    relevance: Relevance
    candidates: list[ArticleCandidate] = field(default_factory=list)
    filters: dict[str, Any] = field(default_factory=dict)
    relaxed: bool = False
    facet_filters: dict[str, Any] = field(default_factory=dict)
    article_id: str | None = None
    lead_document: str | None = None  # a plain document that leads the search when no article governs
    title: str = ""
    confidence: float = 0.0
    tied: list[str] = field(default_factory=list)  # parallel articles still in play, best first
    conflicts: list[str] = field(default_factory=list)  # other articles claiming the very same facets
    compared: list[str] = field(default_factory=list)  # the other named providers' articles on the topic
    choices: dict[str, list[str]] = field(default_factory=dict)  # facet -> values that would decide
    fields: list[FieldSpec] = field(default_factory=list)
    by_article: dict[str, list[FieldSpec]] = field(default_factory=dict)  # each tied article's own fields
    missing: list[str] = field(default_factory=list)
    invalid: dict[str, str] = field(default_factory=dict)
    collected: dict[str, Any] = field(default_factory=dict)
    stated: dict[str, Any] = field(default_factory=dict)  # field key -> value the question states (engine/stated)
    notes: dict[str, Any] = field(default_factory=dict)
    named_by_data: bool = False  # the caller's collected data is this article's fields (see resolve)
    # the providers the question names where the governing article is another provider's (the search had to
    # drop them to find anything; engine.resolve.other_providers): its data and rules are not theirs
    elsewhere: list[str] = field(default_factory=list)

    @property
    def alternatives(self) -> list[str]:
        return self.tied[1:]

    @property
    def to_ask(self) -> list[str]:
        """The missing data worth asking the caller for: none where no article covers the inquiry, or where
        the article is another provider's than the one named (its data is not theirs)."""
        return [] if not self.covered or self.elsewhere else self.missing

    @property
    def governing(self) -> str | None:
        """The article whose rules bind the whole answer: none while another article claims the same
        facets (the KB contradicts itself there, and a reviewer must say which one holds), nor in a
        comparison (each provider's rules bind its own claims: one's "Never say: 110 days" is another's fact)."""
        return None if self.conflicts or self.compared else self.article_id


@dataclass
class ContextChunk:
    """A passage as placed in the context: labelled [C#], possibly truncated or neutralised."""

    label: str
    chunk_id: str
    doc_id: str
    title: str
    chunk_type: str
    tier: str
    text: str
    section: str = ""
    score: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)
    truncated: bool = False
    position: dict[str, Any] = field(default_factory=dict)
    ordinal: int = 0  # the chunk's place in its document (an artifact keeps a procedure's order)


@dataclass
class ContextPack:
    chunks: list[ContextChunk] = field(default_factory=list)
    text: str = ""  # exactly what a model is sent, delimited
    tokens: int = 0
    budget: int = 0
    tiers_used: dict[str, int] = field(default_factory=dict)
    candidates: int = 0
    neutralized: int = 0  # instruction-like sentences replaced

    def by_label(self) -> dict[str, ContextChunk]:
        return {c.label: c for c in self.chunks}


@dataclass
class Section:
    topic: str = ""
    answer_components: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    KINDS = ("answer_components", "steps", "warnings")

    def items(self) -> list[tuple[str, str]]:
        return [(kind, item) for kind in self.KINDS for item in getattr(self, kind)]

    def empty(self) -> bool:
        return not (self.answer_components or self.steps or self.warnings)


@dataclass
class Draft:
    sections: list[Section] = field(default_factory=list)
    generator: str = "extractive"
    notes: dict[str, Any] = field(default_factory=dict)  # repair attempts, fallback reasons, usage
    cannot_answer: bool = False  # the model says the context does not answer the question
    reason: str = ""  # ... and why
    # An artifact whose governing article has material for some headings but none for a core one (a
    # workflow without steps): what there is goes out as `uncertain`, not as "nothing on this".
    partial: bool = False


@dataclass
class Violation:
    rule: str
    detail: str
    action: str  # removed | dropped | added | masked | none


@dataclass
class Dropped:
    """A claim removed by verification: kept for reviewers (masked), never shown to users."""

    claim: str
    rule: str
    reason: str


@dataclass
class Citation:
    id: str
    chunk_id: str
    doc_id: str
    title: str
    chunk_type: str
    tier: str
    score: float
    snippet: str
    metadata: dict[str, Any] = field(default_factory=dict)
    section: str = ""  # the heading the chunk sits under (plain documents have no chunk types)
    # where in the source the cited chunk is (absent fields: the format has no such locator)
    page: int | None = None  # first page (PDF, Word-saved DOCX); every page in position["pages"]
    slide: int | None = None  # first slide (PPTX); every slide in position["slides"]
    start: str | None = None  # transcript time range, "12:34" (h:mm:ss past an hour)
    end: str | None = None
    heading_path: list[str] = field(default_factory=list)
    speakers: list[str] = field(default_factory=list)
    reference: str = ""  # how a person finds it: "Plan Document, p. 12", "Weekly call, t=12:34"
    position: dict[str, Any] = field(default_factory=dict)  # the chunk's full position (RAG spec fields)


@dataclass
class ArtifactHeading:
    """One fixed heading of an artifact and its verified items (each ends with its [C#] citations)."""

    heading: str
    items: list[str] = field(default_factory=list)
    empty: bool = True  # nothing supported: the rendering says so instead of inventing
    quotes_guardrails: bool = False  # items are the articles' own guardrail lines, quoted (e.g. "Never say")


@dataclass
class Artifact:
    """A structured document built from the knowledge base: fixed headings, cited items, Markdown."""

    type: str
    title: str
    headings: list[ArtifactHeading] = field(default_factory=list)
    markdown: str = ""


@dataclass
class Feedback:
    """What the previous attempt got wrong, for a bounded regeneration."""

    violations: list[Violation] = field(default_factory=list)
    avoid: list[str] = field(default_factory=list)  # claims not to repeat


@dataclass
class Verdict:
    """The checked answer: what passed verification, the guardrail report and the confidence."""

    sections: list[Section]
    citations: list[Citation]
    violations: list[Violation]
    passed: bool
    confidence: float
    parts: dict[str, float]
    dropped: list[Dropped] = field(default_factory=list)
    note: str = ""  # e.g. which parallel article the answer follows
    notes: dict[str, Any] = field(default_factory=dict)
    needs_review: bool = False  # e.g. two articles claim to govern the inquiry
    unanswered: list[str] = field(default_factory=list)  # what the question asks that the KB does not state
    # the providers the question names where the answer's article is another provider's (Resolution.elsewhere)
    unserved: list[str] = field(default_factory=list)
    # where no article governed but the answer is one article's: the resolution with that article governing
    # (engine.resolve.answering_article), whose data the decision asks for
    settled: Resolution | None = None

    def feedback(self) -> Feedback:
        return Feedback([v for v in self.violations if v.action != "masked"], [d.claim for d in self.dropped])


@dataclass
class ArtifactBuild:
    """One artifact attempt: the draft (its headings as sections), the verdict on it, the artifact shown."""

    draft: Draft
    verdict: Verdict
    artifact: Artifact


@cache
def _adapter(kind: Any) -> TypeAdapter:
    return TypeAdapter(kind)


def dump(value: Any) -> Any:
    """A record (or list of records) as JSON-ready data for graph state."""
    if value is None:
        return None
    kind = list[type(value[0])] if isinstance(value, list) and value else type(value)
    if isinstance(value, list) and not value:
        return []
    return _adapter(kind).dump_python(value, mode="json")


def load(kind: type[T], data: Any) -> T:
    """The record back from graph state (validated: a malformed checkpoint fails loudly here)."""
    return _adapter(kind).validate_python(data)
