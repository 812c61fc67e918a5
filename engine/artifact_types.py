"""Artifact types: each a pydantic schema whose fields are its fixed headings, and how each heading fills.

An artifact is a structured document built from the same retrieved, verified knowledge as an answer:
a processing checklist, a workflow, a call script, a brief, a project blueprint. Its schema fixes the
headings. Each heading is annotated with a `Heading`: the section types of the KB format that fill it
(`types`), the words of section headings that fill it in plain documents, which have no section types
(`words`), and how its items are chosen (`select`). A chat model fills the schema through structured
output; the extractive generator fills the same fields from the matching sections. Rendering is
deterministic, and a heading with nothing supported says so instead of being invented.

To add a type: write a schema class below (one field per heading, each `Annotated[..., Heading(...)]`)
and add an `ArtifactType` to `ARTIFACT_TYPES`. The prompts, both generators, verification, rendering,
the graph, the CLI and the API take every type from this registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from ..kb.text import squash, stem, words
from ..llm.schemas import CitedItem
from .records import Artifact, ArtifactHeading, Citation

NOTHING = "The knowledge base has nothing on this."
Select = Literal["all", "relevant", "warnings", "missing", "rules"]
Style = Literal["bullets", "checklist", "numbered"]


@dataclass(frozen=True)
class Heading:
    """How one heading is filled and shown.

    select: `all` = every item of the matching sections of the governing article (a procedure is
    copied whole, in order); `relevant` = the items of matching sections most related to the request;
    `warnings` = the articles' Always-rules plus the matching sections' items; `missing` = the
    required-data items not yet collected; `rules` = the articles' own guardrail lines, quoted (only
    those starting with one of `markers`), exempt from the never-say check because they state it.
    """

    name: str
    types: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    select: Select = "all"
    style: Style = "bullets"
    core: bool = True  # an artifact with every core heading empty has no substance: it abstains
    always: bool = False  # the articles' Always-rules are kept under this heading
    lead: bool = False  # text before a plain document's first heading belongs here
    markers: tuple[str, ...] = ()  # for select="rules": "never say", "never", "always"
    empty: str = NOTHING
    limit: int = 12

    @property
    def quotes_guardrails(self) -> bool:
        return self.select == "rules"

    def matches(self, chunk_type: str, section: str, title: str = "") -> bool:
        """A chunk fills this heading by its section type; an untyped one (plain documents, or a heading
        the KB format does not know) by the words of its heading. Text before the first heading, or
        under a heading that repeats the document's title, is the document's lead."""
        if chunk_type in self.types:
            return True
        if chunk_type != "content":
            return False
        if not section or squash(section) == squash(title):
            return self.lead
        have = [stem(w) for w in words(section)]
        return any(in_order([stem(w) for w in words(phrase)], have) for phrase in self.words)


def in_order(wanted: list[str], have: list[str]) -> bool:
    """True when the words of `wanted` occur in `have` in order, gaps allowed ("how works" ~ "How Faiss works")."""
    rest = iter(have)
    return bool(wanted) and all(any(w == h for h in rest) for w in wanted)


def items(description: str) -> Any:
    return Field(default_factory=list, description=description)


class StepItem(CitedItem):
    actor: str = Field(default="", description="Who performs the step (a role), only when the excerpt says so.")


class ArtifactOutput(BaseModel):
    """Fields shared by every artifact schema; the headings are the subclass's list fields."""

    cannot_answer: bool = Field(default=False, description="True when the excerpts cannot support this artifact.")
    reason: str = Field(default="", description="When cannot_answer: what the excerpts lack, in one sentence.")


_QUOTED = "Copied verbatim from the articles' guardrails by citewise; you may leave it empty."


class Checklist(ArtifactOutput):
    """A processing checklist: the data to collect, who qualifies, the rules to check, what to watch for."""

    data_to_collect: Annotated[list[CitedItem], Heading(
        "Data to collect", ("required_data",), ("required data", "requirement", "prerequisite"),
        style="checklist")] = items("Each datum to collect before processing, one per item.")
    eligibility: Annotated[list[CitedItem], Heading(
        "Eligibility", ("eligibility",), ("eligibility", "who can", "who qualifies"),
        style="checklist")] = items("Each eligibility condition, as a checkable item.")
    rules_to_check: Annotated[list[CitedItem], Heading(
        "Rules to check", ("business_rules",), ("rule", "policy", "limit"),
        style="checklist")] = items("Each business rule or limit to check, as a checkable item.")
    warnings: Annotated[list[CitedItem], Heading(
        "Warnings", ("common_issues",), ("common issue", "warning", "caveat"), select="warnings", core=False,
        always=True)] = items("Deadlines, taxes, penalties and common reasons a request fails.")


class Workflow(ArtifactOutput):
    """A workflow: who may start, the ordered steps and who acts, the decision points, what to watch for."""

    before_you_start: Annotated[list[CitedItem], Heading(
        "Before you start", ("eligibility",), ("eligibility", "prerequisite", "requirement", "before you"),
        core=False)] = items("Conditions to confirm before the first step.")
    steps: Annotated[list[StepItem], Heading(
        "Steps", ("steps",), ("step", "procedure", "process", "instruction", "how to", "getting started"),
        style="numbered")] = items("The procedure's steps, in order; `actor` names who acts when the excerpt does.")
    decision_points: Annotated[list[CitedItem], Heading(
        "Decision points", ("decision_guide",), ("decision", "choosing", "when to", "option"),
        core=False)] = items("Each branch of the procedure: if this, then that.")
    warnings: Annotated[list[CitedItem], Heading(
        "Warnings", ("common_issues",), ("common issue", "warning", "caveat", "troubleshooting"),
        select="warnings", core=False, always=True)] = items("Deadlines, taxes, penalties and common failures.")


class CallScript(ArtifactOutput):
    """A call script: how to frame the call, the data to ask for, what never to say, what always to say."""

    opening: Annotated[list[CitedItem], Heading(
        "Opening", ("response_frames",), ("response frame", "greeting", "opening"))] = items(
        "How to frame the conversation, in the order the excerpts give.")
    questions_to_ask: Annotated[list[CitedItem], Heading(
        "Questions to ask", ("required_data",), ("required data", "questions to ask"))] = items(
        "Each datum to ask the caller for, with why it is needed.")
    never_say: Annotated[list[CitedItem], Heading(
        "Never say", ("guardrails",), select="rules", core=False, markers=("never say", "never"))] = items(_QUOTED)
    always_mention: Annotated[list[CitedItem], Heading(
        "Always mention", ("guardrails",), select="rules", core=False, always=True, markers=("always",))] = items(
        _QUOTED)


class Brief(ArtifactOutput):
    """A one-page brief: overview, rules, fees, risks and warnings, and the questions still open."""

    overview: Annotated[list[CitedItem], Heading(
        "Overview", ("decision_guide", "eligibility", "background"), ("overview", "introduction", "about",
                                                                      "summary"),
        select="relevant", lead=True, limit=5)] = items("What the subject is and when it applies.")
    rules: Annotated[list[CitedItem], Heading(
        "Rules", ("business_rules",), ("rule", "policy", "limit"))] = items("The rules and limits that apply.")
    fees: Annotated[list[CitedItem], Heading(
        "Fees", ("fees",), ("fee", "cost", "pricing", "price", "charge"))] = items("Every fee and charge.")
    risks_and_warnings: Annotated[list[CitedItem], Heading(
        "Risks and warnings", ("common_issues",), ("risk", "warning", "common issue", "limitation", "caveat"),
        select="warnings", core=False, always=True)] = items("Risks, deadlines, taxes, penalties, common failures.")
    open_questions: Annotated[list[CitedItem], Heading(
        "Open questions", ("required_data",), select="missing", core=False,
        empty="None: the knowledge base lists no data still to collect.")] = items(
        "Data the articles require that has not been collected yet.")


class Blueprint(ArtifactOutput):
    """A project blueprint (the pipeline spec's headings), for knowledge bases that describe a project."""

    overview: Annotated[list[CitedItem], Heading(
        "Overview", ("background", "decision_guide"), ("overview", "introduction", "intro", "about", "summary",
                                                       "description", "what is"),
        select="relevant", lead=True, limit=5)] = items("What the project is.")
    goals: Annotated[list[CitedItem], Heading(
        "Goals", (), ("goal", "motivation", "why", "purpose", "objective", "aim", "vision", "mission", "philosophy",
                      "rationale", "benefit"), select="relevant", limit=6)] = items("What the project sets out to do.")
    architecture: Annotated[list[CitedItem], Heading(
        "Architecture", (), ("architecture", "design", "internals", "structure", "component", "module",
                             "implementation", "how works", "concept", "under the hood"),
        select="relevant", limit=6)] = items("How it is built: components and how they fit.")
    features: Annotated[list[CitedItem], Heading(
        "Features", (), ("feature", "capability", "highlight", "functionality", "usage", "example", "api"),
        select="relevant", limit=6)] = items("What it does for its users.")
    risks: Annotated[list[CitedItem], Heading(
        "Risks", ("common_issues",), ("risk", "limitation", "caveat", "known issue", "warning", "security",
                                      "troubleshooting", "deprecation", "gotcha"),
        select="warnings", core=False, always=True, limit=6)] = items("Limitations, risks and known issues.")
    next_steps: Annotated[list[CitedItem], Heading(
        "Next Steps", ("steps",), ("next step", "roadmap", "future", "todo", "getting started", "installation",
                                   "install", "quickstart", "quick start", "contributing", "upcoming"),
        select="relevant", limit=6)] = items("What comes next: roadmap, getting started, contributing.")


@dataclass(frozen=True)
class ArtifactType:
    name: str
    label: str  # the title's prefix
    schema: type[ArtifactOutput]

    @property
    def headings(self) -> list[tuple[str, Heading]]:
        """(schema field, heading) in the schema's order: the artifact's fixed headings."""
        out = []
        for name, info in self.schema.model_fields.items():
            spec = next((m for m in info.metadata if isinstance(m, Heading)), None)
            if spec is not None:
                out.append((name, spec))
        return out

    def heading(self, name: str) -> Heading | None:
        return next((h for _, h in self.headings if h.name == name), None)

    @property
    def always_heading(self) -> Heading:
        return next(h for _, h in self.headings if h.always)

    @property
    def quoting(self) -> frozenset[str]:
        return frozenset(h.name for _, h in self.headings if h.quotes_guardrails)


ARTIFACT_TYPES: dict[str, ArtifactType] = {t.name: t for t in (
    ArtifactType("checklist", "Checklist", Checklist),
    ArtifactType("workflow", "Workflow", Workflow),
    ArtifactType("call_script", "Call script", CallScript),
    ArtifactType("brief", "Brief", Brief),
    ArtifactType("blueprint", "Blueprint", Blueprint),
)}


def supported(artifact: Artifact) -> bool:
    """True when some core heading has verified content (otherwise the request abstains)."""
    kind = ARTIFACT_TYPES[artifact.type]
    return any(not h.empty and (spec := kind.heading(h.heading)) is not None and spec.core
               for h in artifact.headings)


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def render_markdown(artifact: Artifact, citations: list[Citation], note: str = "", lead: str = "") -> str:
    """The artifact as Markdown, deterministically: title, note, headings in schema order, sources."""
    kind = ARTIFACT_TYPES[artifact.type]
    lines = [f"# {one_line(artifact.title)}", ""]
    if note:
        lines += [f"> {one_line(note)}", ""]
    if lead:
        lines += [one_line(lead), ""]
    for h in artifact.headings:
        spec = kind.heading(h.heading) or Heading(h.heading)
        lines += [f"## {h.heading}", ""]
        if h.empty:
            lines.append(spec.empty)
        for i, item in enumerate(h.items, start=1):
            marker = {"checklist": "- [ ]", "numbered": f"{i}."}.get(spec.style, "-")
            lines.append(f"{marker} {one_line(item)}")
        lines.append("")
    if citations:
        lines += ["## Sources", ""]
        for c in citations:
            where = f'"{one_line(c.section)}"' if c.section else c.chunk_type
            lines.append(f"- [{c.id}] {one_line(c.title)}, {where} ({c.chunk_id})")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def shell(artifact_type: str, subject: str, text: str) -> Artifact:
    """The artifact of an abstained request: its headings, every one empty, and the reason."""
    kind = ARTIFACT_TYPES[artifact_type]
    out = Artifact(type=kind.name, title=f"{kind.label}: {subject}",
                   headings=[ArtifactHeading(h.name, [], True, h.quotes_guardrails) for _, h in kind.headings])
    out.markdown = render_markdown(out, [], lead=text)
    return out
