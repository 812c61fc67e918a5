"""The check step: verify and repair a draft, grade it (with a model), score confidence, cite.

The decision it sets is provisional: `can_proceed`, or `needs_data` while required fields are
missing. Routing (`routes.after_check`) turns a failed check into a regeneration or `uncertain`.
"""

from __future__ import annotations

from typing import Any

from ..config import Context
from ..kb.articles import HELD_BACK, PROVIDER
from ..kb.text import acronym_definitions, display_text, term_set, with_long_forms
from ..llm.chat import ModelClock
from ..retrieval.snapshot import KnowledgeBase
from .answerability import asking_part, assess, question_years, unnamed_facets
from .facets import asked_providers
from .grade import grade
from .privacy import masked
from .records import (
    Citation,
    ContextChunk,
    ContextPack,
    Draft,
    Inquiry,
    Relevance,
    Resolution,
    Section,
    Verdict,
    Violation,
)
from .resolve import answering_article
from .score import confidence, coverage
from .search import synonym_alternatives
from .verify import citations_in, claims_of, drop_claims, never_rules, strip_citations, verify

SNIPPET_CHARS = 240
MAX_FOCUS_CLAIMS = 12


def context_rules(kb: KnowledgeBase, chunks: list[ContextChunk]) -> dict[str, dict[str, Any]]:
    """doc_id -> guardrails of the articles whose chunks are in the context."""
    return {c.doc_id: kb.docs[c.doc_id].guardrails for c in chunks if c.doc_id in kb.docs}


def check(kb: KnowledgeBase, ctx: Context, inquiry: Inquiry, resolution: Resolution | None, relevance: Relevance,
          pack: ContextPack, draft: Draft, clock: ModelClock | None = None,
          quoted: frozenset[str] = frozenset()) -> Verdict:
    """`quoted`: sections whose items quote guardrail lines (an artifact's "Never say"), see verify.py.

    Where no article governs but the draft is one article's, that article governs it from here on
    (`Verdict.settled`): its rules bind the claims and its data are asked for."""
    settled = (answering_article(kb, resolution, cited_docs(draft.sections, pack), inquiry)
               if resolution else None)
    bound = settled or resolution
    rules = context_rules(kb, pack.chunks)
    checked = verify(draft.sections, pack.chunks, rules, support_threshold=ctx.support_threshold,
                     article_id=bound.article_id if bound else None, governing=bound.governing if bound else None,
                     quoted=quoted)
    notes: dict[str, Any] = {}
    if ctx.llm_model and ctx.llm_grader:
        claims = [strip_citations(getattr(checked.sections[si], kind)[ii])
                  for si, kind, ii in claims_of(checked.sections)]
        drops, notes["grader"] = grade(ctx, claims, pack.text, never_rules({c.doc_id for c in pack.chunks}, rules),
                                       clock or ModelClock(ctx.llm_deadline))
        drop_claims(checked, drops)
    if settled is not None and cited_docs(checked.sections, pack) == {settled.article_id}:
        resolution = settled
    else:
        settled = None  # verification (or the grader) left nothing of its claims: the decision stays as resolved
    article_id = resolution.article_id if resolution else None
    violations = list(checked.violations)
    blocking = checked.blocking
    if not checked.sections:
        violations.append(Violation("empty_answer", "no supported statement is left", "none"))
        blocking += 1
    critical = any(c.doc_id == article_id and c.tier == "critical" for c in pack.chunks)
    unanswered = answered_or_missing(kb, inquiry, resolution, pack, checked.sections)
    defined = acronym_definitions(c.text for c in pack.chunks)
    focus, match = answer_focus(kb, inquiry.question, checked.sections, defined)
    structured = (resolution is not None and resolution.article_id is not None) or any(
        kb.docs[c.doc_id].structured for c in pack.chunks if c.doc_id in kb.docs)
    conf, parts = confidence(relevance, resolution.confidence if resolution else 0.0, checked.support, critical,
                             blocking, answered=not unanswered, focus=focus, match=match, structured=structured)
    citations = build_citations(checked.cited, pack.chunks, kb)
    held = held_note(kb, citations)
    note = " ".join(n for n in (depends_note(kb, resolution) if resolution else "",
                                conflict_note(kb, resolution) if resolution else "", held) if n)
    return Verdict(sections=checked.sections, citations=citations,
                   violations=violations, passed=blocking == 0, confidence=conf, parts=parts,
                   dropped=checked.dropped, note=note, notes=notes,
                   needs_review=bool(resolution and resolution.conflicts) or bool(held), unanswered=unanswered,
                   unserved=resolution.elsewhere if resolution else [], settled=settled)


def answer_focus(kb: KnowledgeBase, question: str, sections: list[Section],
                 defined: dict[str, str] | None = None) -> tuple[float, float]:
    """How much of the question the answer itself takes up: the IDF-weighted share of the question's terms
    the answer states, and the best cosine between the question and one claim. Retrieval can be strong
    for a neighbouring question; these two look at what the user actually gets."""
    claims = [strip_citations(item) for s in sections for _, item in s.items()][:MAX_FOCUS_CLAIMS]
    if not claims:
        return 0.0, 0.0
    # (a claim that writes "STD" states the "short-term disability" a question asks about, where the context
    # defines it)
    focus = coverage(question, synonym_alternatives(kb, question),
                     [with_long_forms(c, defined or {}) for c in claims], kb.bm25.idf)
    query = kb.embedder.embed_query(question)  # the query path: in-memory cache, no disk writes per answer
    return round(focus, 4), round(max(float(kb.embedder.embed_query(c) @ query) for c in claims), 4)


def answered_or_missing(kb: KnowledgeBase, inquiry: Inquiry, resolution: Resolution | None, pack: ContextPack,
                        sections: list[Section]) -> list[str]:
    """What the question asks that the checked answer does not state (empty when it answers)."""
    if not sections:
        return []  # nothing left to judge: the empty answer is already a failed check
    claims = [strip_citations(item) for s in sections for _, item in s.items()]
    facet_terms = {t for values in inquiry.detected_facets.values() for v in values for t in term_set(v)}
    missing = assess(inquiry.question, claims, pack.text, facet_terms,
                     synonym_alternatives(kb, inquiry.question)).missing
    missing += [f"anything for {value}" for value in unserved_facets(kb, inquiry, resolution)]
    missing += providers_unanswered(kb, inquiry, pack, sections)
    # A year the question names that the answer's document never mentions: the KB has nothing for it.
    source = (resolution.article_id if resolution and resolution.article_id
              else pack.chunks[0].doc_id if pack.chunks else None)
    if source:
        text = " ".join(c.text for c in kb.chunks_of(source))
        missing += [f"anything about {y}" for y in sorted(question_years(inquiry.question)) if y not in text]
    return missing


def unserved_facets(kb: KnowledgeBase, inquiry: Inquiry, resolution: Resolution | None) -> list[str]:
    """The facet values the question names (a provider, a plan type) that the governing article does not
    carry, where the search had to drop them to find anything: the KB has nothing for them."""
    if resolution is None or not resolution.relaxed or resolution.article_id not in kb.docs:
        return []
    return unnamed_facets(inquiry.detected_facets, kb.docs[resolution.article_id].metadata)


def cited_docs(sections: list[Section], pack: ContextPack) -> set[str]:
    """The documents the sections' items cite."""
    docs = {c.label: c.doc_id for c in pack.chunks}
    return {docs[label] for s in sections for _, item in s.items() for label in citations_in(item) if label in docs}


def providers_unanswered(kb: KnowledgeBase, inquiry: Inquiry, pack: ContextPack, sections: list[Section]) -> list[str]:
    """A question asking about two providers or more ("...at Northwind, and at Fabrikam?") is not answered
    for a provider none of whose documents the answer cites (it has no article on the topic, or the budget
    left no room for it): said, not dropped without a word."""
    named = asked_providers(kb.facet_detector, asking_part(inquiry.question))
    if len(named) < 2:
        return []
    covered: set[str] = set()
    for doc in cited_docs(sections, pack):
        info = kb.docs.get(doc)
        own = info.metadata.get(PROVIDER) if info and info.structured else None
        if own is None and info is not None and not info.structured and not kb.named_facets(doc).get(PROVIDER):
            return []  # a plain document of nobody's in particular ("every bank in the network...") covers all
        covered |= {own} if own else set(kb.named_facets(doc).get(PROVIDER) or [])
    return [f"anything for {value}" for value in named if value not in covered]


def display_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """A document's metadata as shown with a citation: bounded, one-line, instruction-like text neutralised."""
    out: dict[str, Any] = {}
    for key, value in list(metadata.items())[:30]:
        if isinstance(value, str):
            out[key] = masked(display_text(value, 200), public=True)
        elif isinstance(value, list):
            out[key] = [masked(display_text(str(v), 80), public=True) for v in value[:20]]
        else:
            out[key] = value
    return out


def build_citations(labels: list[str], chunks: list[ContextChunk], kb: KnowledgeBase) -> list[Citation]:
    by_label = {c.label: c for c in chunks}
    out = []
    for label in labels:
        c = by_label.get(label)
        if c is None:
            continue
        doc = kb.docs.get(c.doc_id)
        pos = c.position
        title = display_text(c.title)
        out.append(Citation(id=label, chunk_id=c.chunk_id, doc_id=c.doc_id, title=title,
                            chunk_type=c.chunk_type, tier=c.tier, score=round(float(c.score), 6),
                            snippet=masked(display_text(c.text, SNIPPET_CHARS), public=c.chunk_type != "examples"),
                            metadata=display_metadata(doc.metadata) if doc else {},
                            section=display_text(c.section, 120),
                            page=pos.get("page"), slide=pos.get("slide"),
                            start=clock(pos["start_time"]) if pos.get("start_time") is not None else None,
                            end=clock(pos["end_time"]) if pos.get("end_time") is not None else None,
                            heading_path=[display_text(str(h), 120) for h in pos.get("heading_path") or []],
                            speakers=[display_text(str(sp), 80) for sp in pos.get("speakers") or []],
                            reference=reference(title, pos), position=dict(pos)))
    out.sort(key=lambda c: int(c.id[1:]))
    return out


def held_note(kb: KnowledgeBase, citations: list[Citation]) -> str:
    """A cited document had a passage addressed to the assistant, held back at ingest: the rest of it
    answered, but someone planted that passage, so a reviewer should confirm the answer."""
    held = list(dict.fromkeys(c.doc_id for c in citations
                              if c.doc_id in kb.docs and kb.docs[c.doc_id].metadata.get(HELD_BACK)))
    if not held:
        return ""
    titles = "; ".join(display_text(kb.docs[d].title, 120) for d in held)
    return (f"Note: a passage of {titles} addressed the assistant and was left out; a reviewer should confirm "
            "this answer.")


def conflict_note(kb: KnowledgeBase, resolution: Resolution) -> str:
    if not resolution.conflicts or resolution.article_id is None:
        return ""
    titles = [display_text(kb.docs[a].title, 120) if a in kb.docs else a
              for a in (resolution.article_id, *resolution.conflicts)]
    return (f"Note: {len(titles)} articles in this knowledge base cover exactly this inquiry and may disagree "
            f"({'; '.join(titles)}); a reviewer should confirm which one applies.")


def clock(seconds: float) -> str:
    """Seconds as a citation shows them: "12:34", or "1:02:03" past an hour."""
    whole = max(int(seconds), 0)
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def _numbers(label: str, plural: str, values: list[int]) -> str:
    if len(values) <= 1:
        return f"{label} {values[0]}"
    if values == list(range(values[0], values[-1] + 1)):
        return f"{plural} {values[0]}-{values[-1]}"
    return f"{plural} {', '.join(map(str, values))}"


def locator(position: dict[str, Any], title: str = "") -> str:
    """The most precise human locator a position has: time (transcripts), slide, page, else the heading
    path (without a first heading that only repeats the title); "" when the source has none."""
    if position.get("start_time") is not None:
        return f"t={clock(position['start_time'])}"
    if position.get("slide") is not None:
        return _numbers("slide", "slides", list(position.get("slides") or [position["slide"]]))
    if position.get("page") is not None:
        return _numbers("p.", "pp.", list(position.get("pages") or [position["page"]]))
    path = [str(p) for p in position.get("heading_path") or []]
    if path and path[0] == title:
        path = path[1:]
    return " > ".join(path)


def reference(title: str, position: dict[str, Any]) -> str:
    """`Plan Document, p. 12`: what a person reads next to [C#] to find the passage."""
    where = locator(position, title)
    return f"{title}, {where}" if where else title


def depends_note(kb: KnowledgeBase, resolution: Resolution) -> str:
    """When parallel articles are still in play, say which one the answer follows and what decides."""
    if not resolution.alternatives or resolution.article_id is None:
        return ""
    facet = next((f for f in resolution.missing if f in resolution.choices), "")
    ids = [resolution.article_id, *resolution.alternatives]
    values = list(dict.fromkeys(str(kb.docs[a].metadata.get(facet, a)) if a in kb.docs else a for a in ids))
    what = facet.replace("_", " ") if facet else "details still to collect"
    return (f"This depends on the {what} ({' or '.join(values)}); what follows is for {values[0]}. "
            f"Tell me the {what} to be sure.")
