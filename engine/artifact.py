"""The artifact step: fill a type's headings from the context, verify every item as an answer's, render.

    build_artifact(kb, ctx, inquiry, resolution, relevance, pack, feedback, clock) -> ArtifactBuild

Offline the extractive filler copies the matching sections (engine/artifact_extractive.py); with a
model, the model fills the type's schema through structured output at low temperature and a model
fault falls back to the extractive filler, with the reason in the notes. Headings that quote the
articles' guardrails are copied from the KB by both: they are the KB's own words, not generated.

Then every item goes through `check` (engine/check.py), the answers' verification: invalid
citations removed, uncited and unsupported items dropped, never-say phrases enforced, Always-rules
added (kept under the type's warnings heading), personal data masked, confidence scored. When no
core heading keeps any content and verification dropped nothing, the KB lacks the material: the
draft says it cannot answer, and the request abstains like an unanswerable question; unless the
governing article fills another heading (a workflow's decision points, not its steps): then what it
has goes out as `uncertain`, the core heading marked empty (`own_material`, `Draft.partial`).
"""

from __future__ import annotations

from typing import Any

from ..config import Context
from ..llm.chat import ModelClock, ModelFault
from ..retrieval.snapshot import KnowledgeBase
from .artifact_extractive import ExtractiveArtifacts, primary_docs
from .artifact_types import ARTIFACT_TYPES, ArtifactOutput, ArtifactType, one_line, render_markdown, shell, supported
from .check import check
from .generate import AnswerRequest, answer_request
from .privacy import masked
from .records import (
    Artifact,
    ArtifactBuild,
    ArtifactHeading,
    ContextPack,
    Draft,
    Feedback,
    Inquiry,
    Relevance,
    Resolution,
    Section,
    Verdict,
)
from .verify import citations_in, cite


def subject(inquiry: Inquiry, resolution: Resolution | None) -> str:
    """What the artifact is about: the governing article's title, else the request as written (masked)."""
    if resolution is not None and resolution.article_id:
        return resolution.title
    return one_line(masked(inquiry.question)).rstrip("?.! ")


def fill(ctx: Context, kind: ArtifactType, request: AnswerRequest) -> tuple[ArtifactOutput, str, dict[str, Any]]:
    """(filled schema, generator name, notes): the model's when one is configured and answers, else extractive."""
    extractive = ExtractiveArtifacts()
    if not ctx.llm_model:
        return extractive.fill(kind, request), extractive.name, {}
    from .artifact_model import ModelArtifacts

    model = ModelArtifacts(ctx)
    notes: dict[str, Any] = {"repair_attempts": 0}
    try:
        output = model.fill(kind, request, notes)
    except ModelFault as exc:
        notes["fallback"] = str(exc)
        return extractive.fill(kind, request), f"{model.name}->extractive", notes
    if kind.quoting:  # quoted guardrail headings are the KB's words: copied, never taken from the model
        copied = extractive.fill(kind, request)
        for name, h in kind.headings:
            if h.quotes_guardrails:
                setattr(output, name, getattr(copied, name))
    return output, model.name, notes


def item_text(item: Any) -> str:
    """A filled item as the string every check reads: text (after its actor, if any), then [C#] markers."""
    labels = [c.strip().strip("[]") for c in item.citations if c.strip()]
    text = one_line(item.text)
    actor = one_line(getattr(item, "actor", "") or "")
    return cite(f"{actor}: {text}" if actor else text, labels)


def to_draft(kind: ArtifactType, output: ArtifactOutput, generator: str, notes: dict[str, Any]) -> Draft:
    """The headings as sections (topic = heading), so the answers' verification applies unchanged.

    Warnings-like headings (Always-rules, quoted guardrails) hold `warnings`, a numbered heading
    `steps`, any other heading `answer_components`.
    """
    if output.cannot_answer:
        return Draft(generator=generator, notes=notes, cannot_answer=True, reason=one_line(output.reason)[:300])
    sections = []
    for name, h in kind.headings:
        section = Section(topic=h.name)
        if h.always or h.quotes_guardrails:
            slot = "warnings"
        else:
            slot = "steps" if h.style == "numbered" else "answer_components"
        setattr(section, slot, [item_text(i) for i in getattr(output, name)])
        sections.append(section)
    return Draft(sections=[s for s in sections if not s.empty()], generator=generator, notes=notes)


def to_artifact(kind: ArtifactType, title_subject: str, verdict: Verdict) -> Artifact:
    """The verified sections back under their headings; Always-rules verification added go to the
    type's warnings heading; every heading present, the empty ones marked."""
    by_topic = {s.topic: s for s in verdict.sections}
    always = kind.always_heading.name
    stray = [w for s in verdict.sections if s.topic != always and s.topic not in kind.quoting for w in s.warnings]
    headings = []
    for _, h in kind.headings:
        s = by_topic.get(h.name) or Section(topic=h.name)
        found = s.answer_components + s.steps + (s.warnings if h.always or h.quotes_guardrails else [])
        if h.name == always:
            found += [w for w in stray if w not in found]
        headings.append(ArtifactHeading(h.name, found, not found, h.quotes_guardrails))
    artifact = Artifact(type=kind.name, title=f"{kind.label}: {title_subject}", headings=headings)
    artifact.markdown = render_markdown(artifact, verdict.citations, note=verdict.note)
    return artifact


def own_material(kind: ArtifactType, artifact: Artifact, verdict: Verdict, article_id: str) -> bool:
    """Whether a heading drawn from the retrieved sections (not the Always-rules every answer carries, not
    quoted guardrails) holds an item cited from the governing article: the article has the rest of what
    the type needs (a workflow's decision points), it is not merely the nearest one."""
    docs = {c.id: c.doc_id for c in verdict.citations}
    for h in artifact.headings:
        spec = kind.heading(h.heading)
        if h.empty or spec is None or spec.core or spec.always or spec.quotes_guardrails:
            continue
        if any(docs.get(label) == article_id for item in h.items for label in citations_in(item)):
            return True
    return False


def build_artifact(kb: KnowledgeBase, ctx: Context, inquiry: Inquiry, resolution: Resolution | None,
                   relevance: Relevance, pack: ContextPack, feedback: Feedback | None = None,
                   clock: ModelClock | None = None) -> ArtifactBuild:
    kind = ARTIFACT_TYPES[inquiry.artifact_type]
    request = answer_request(kb, inquiry, resolution, pack, feedback, clock)
    output, generator, notes = fill(ctx, kind, request)
    draft = to_draft(kind, output, generator, {**notes, "documents": primary_docs(request)})
    title_subject = subject(inquiry, resolution)
    if draft.cannot_answer:
        return ArtifactBuild(draft, Verdict([], [], [], True, 0.0, {}), shell(kind.name, title_subject, draft.reason))
    verdict = check(kb, ctx, inquiry, resolution, relevance, pack, draft, clock, quoted=kind.quoting)
    artifact = to_artifact(kind, title_subject, verdict)
    if not supported(artifact) and not verdict.dropped:
        core = ", ".join(h.name for _, h in kind.headings if h.core)
        governing = resolution.article_id if resolution is not None else None
        # ... and only when the article is surely the one asked about: the nearest article's decision guide
        # always cites it ("booking a hotel room in Lisbon" drew the flight-delay article's)
        if governing and verdict.confidence >= ctx.confidence_threshold and own_material(kind, artifact, verdict,
                                                                                         governing):
            verdict.unanswered.append(f"the {core} a {kind.label.lower()} needs")  # the article has the rest
            draft.partial = True
        else:
            draft.cannot_answer = True
            draft.reason = f"No retrieved article has what a {kind.label.lower()} needs ({core})"
    return ArtifactBuild(draft, verdict, artifact)
