"""Where an answer goes next: the decisions behind the graph's edges, shared by `engine.answer`.

Each function takes what it decides on and returns the name of the next step; the graph's named
edge functions (graphs/kb_agent.py) and the plain pipeline (engine/pipeline.py) both call these,
so the two cannot route differently.
"""

from __future__ import annotations

from typing import Literal

from ..config import Context
from .artifact_types import supported
from .records import Artifact, Draft, Relevance
from .score import relevant


def after_required_data(mode: str) -> Literal["retrieve", "end"]:
    """`required_data` mode ends with the field list; `answer` and `artifact` go on to retrieval."""
    return "end" if mode == "required_data" else "retrieve"


def after_retrieve(has_hits: bool, relevance: Relevance, ctx: Context,
                   named_by_data: bool = False) -> Literal["assemble_context", "abstain"]:
    """Abstain before any generation when retrieval found nothing relevant enough, unless the caller's
    collected data is the governing article's fields (the question may be worded far from the article)."""
    if not has_hits:
        return "abstain"
    return "assemble_context" if named_by_data or relevant(relevance, ctx.relevance_threshold) else "abstain"


def after_generate(draft: Draft) -> Literal["check_guardrails", "abstain"]:
    """A model that says the excerpts do not answer the question abstains, with its reason."""
    return "abstain" if draft.cannot_answer else "check_guardrails"


def after_check(passed: bool, confidence: float, attempts: int, ctx: Context,
                answered: bool = True) -> Literal["generate", "uncertain", "end"]:
    """A failed check earns a bounded regeneration; a second failure, low confidence, or an answer that
    does not state what the question asks (the context lacks it: regenerating cannot help) is `uncertain`."""
    if not passed and attempts <= ctx.max_regenerations:
        return "generate"
    if not passed or not answered or confidence < ctx.confidence_threshold:
        return "uncertain"
    return "end"


def after_context(mode: str) -> Literal["generate", "build_artifact"]:
    """An artifact is built from the same context by its own step; anything else is answered."""
    return "build_artifact" if mode == "artifact" else "generate"


def after_artifact(draft: Draft, artifact: Artifact, passed: bool, confidence: float, attempts: int,
                   ctx: Context, elsewhere: bool = False) -> Literal["build_artifact", "abstain", "uncertain", "end"]:
    """As an answer routes: no material (or a model that says so) abstains; a failed check earns a
    bounded rebuild; after that, nothing left under a core heading abstains, unless the governing article
    has the rest (`Draft.partial`: a workflow without steps, the article has its rules, not its
    procedure); that, a failure or low confidence is `uncertain`. So is an artifact built from another
    provider's article than the one named (`elsewhere`: Resolution.elsewhere), which is not shown."""
    if draft.cannot_answer:
        return "abstain"
    if elsewhere:
        return "uncertain"
    step = after_check(passed, confidence, attempts, ctx)
    if step == "generate":
        return "build_artifact"
    if not supported(artifact):
        return "uncertain" if draft.partial else "abstain"
    return step
