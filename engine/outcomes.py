"""What the caller receives: the answered, abstained and uncertain outcomes, as output fields.

Users see only what passed verification. Claims that verification dropped go to `review.dropped`
(masked, with the reason) for a reviewer, never into `response.text`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..config import Context
from ..kb.everyday import everyday_words
from ..kb.text import STOPWORDS, display_text, stem, term_set, words
from ..retrieval.snapshot import KnowledgeBase
from .access import visible_facets
from .answerability import ASKING_WORDS, focus_terms, question_type, subject_phrase
from .artifact_types import one_line, shell
from .privacy import mask_pii, masked
from .records import (
    Artifact,
    ArtifactBuild,
    ContextPack,
    Draft,
    Dropped,
    Inquiry,
    Relevance,
    Resolution,
    Retrieval,
    Section,
    Verdict,
    dump,
)
from .resolve import output_fields

NO_INFORMATION = "I don't have information about that in this knowledge base."
EMPTY_FIELDS = {"participant_data": [], "plan_data": []}


def render_text(sections: list[Section]) -> str:
    """Plain-text rendering of the structured answer (what a person reads); citations stay inline."""
    lines: list[str] = []
    for s in sections:
        if len(sections) > 1 and s.topic:
            lines.append(f"{s.topic.rstrip(' .:')}:")
        if s.answer_components:
            lines.append(" ".join(s.answer_components))
        if s.steps:
            lines.append("Steps:")
            lines.extend(f"{i}. {step}" for i, step in enumerate(s.steps, start=1))
        if s.warnings:
            lines.append("Important:")
            lines.extend(f"- {w}" for w in s.warnings)
        lines.append("")
    return "\n".join(lines).strip()


def resolution_output(resolution: Resolution) -> dict[str, Any]:
    """article_reference, required_fields, missing_fields and invalid_fields of a resolved inquiry."""
    if not resolution.covered or resolution.article_id is None:  # (a provider the KB does not know is still said)
        return {"article_reference": None, "required_fields": dict(EMPTY_FIELDS), "missing_fields": [],
                "invalid_fields": dict(resolution.invalid)}
    reference = {"article_id": resolution.article_id, "title": display_text(resolution.title),
                 "confidence": resolution.confidence, "alternatives": resolution.alternatives}
    if resolution.elsewhere:  # another provider's article: the data it asks for is not the named provider's
        return {"article_reference": reference, "required_fields": dict(EMPTY_FIELDS), "missing_fields": [],
                "invalid_fields": dict(resolution.invalid)}
    return {"article_reference": reference, "required_fields": output_fields(resolution),
            "missing_fields": list(resolution.missing), "invalid_fields": dict(resolution.invalid)}


def settled_output(verdict: Verdict) -> dict[str, Any]:
    """Where the answer's own article came to govern it (`Verdict.settled`): the resolution and the fields
    it asks for, as the required-data step outputs them; nothing otherwise."""
    if verdict.settled is None:
        return {}
    return {"resolution": dump(verdict.settled), "collected_data": verdict.settled.collected,
            **resolution_output(verdict.settled)}


def scope_confidence(relevance: Relevance) -> float:
    """An out-of-scope answer's confidence: the relevance found, or less when a provider's name found it."""
    return relevance.score if relevance.topic is None else min(relevance.score, relevance.topic)


def required_data_outcome(resolution: Resolution) -> dict[str, Any]:
    """`required_data` mode ends with the field list and a decision about it."""
    if not resolution.covered:
        return {"decision": "out_of_scope", "confidence": scope_confidence(resolution.relevance)}
    if resolution.elsewhere:
        return {"decision": "uncertain", "confidence": resolution.confidence, "needs_review": True,
                "response": {"text": elsewhere_note(resolution.title, resolution.elsewhere), "sections": []}}
    return {"decision": "needs_data" if resolution.missing else "can_proceed", "confidence": resolution.confidence}


def answered(verdict: Verdict, missing: list[str]) -> dict[str, Any]:
    text = render_text(verdict.sections)
    return {"response": {"text": f"{verdict.note}\n\n{text}" if verdict.note and text else text,
                         "sections": dump(verdict.sections)},
            "citations": dump(verdict.citations),
            "guardrails": {"passed": verdict.passed, "violations": dump(verdict.violations)},
            "confidence": verdict.confidence, "decision": "needs_data" if missing else "can_proceed",
            "needs_review": verdict.needs_review, "review": review(verdict.dropped)}


def artifact_answered(built: ArtifactBuild, missing: list[str]) -> dict[str, Any]:
    """An artifact's outcome: an answer's (decision, citations, guardrails, review), the artifact, and
    its Markdown as the response text."""
    out = answered(built.verdict, missing)
    out["response"] = {"text": built.artifact.markdown, "sections": out["response"]["sections"]}
    out["artifact"] = dump(built.artifact)
    return out


def review(dropped: list[Dropped]) -> dict[str, Any]:
    """For reviewers, not users: what verification removed and why, personal data masked."""
    return {"dropped": [{"claim": masked(d.claim)[:300], "rule": d.rule, "reason": masked(d.reason)[:300]}
                        for d in dropped]}


# English words that say how a question is put, never what it is about: pronouns and quantifiers, the light
# verbs of everyday speech ("I *got* stung", "*put* in a friend's card"), prepositions, time adverbs. A list of
# what the knowledge base "says nothing about" names the subject's words, in words a person would use, not
# "got, something, once". (Only for the words echoed back: search and scoring read every word.)
PLAIN_WORDS = frozenset(words(
    "he she hes shes him her his hers they them their theirs it itself someone somebody something anyone anybody "
    "anything everyone everybody everything nobody nothing some any all every each both either neither other another "
    "same get gets got gotten getting put puts putting take takes took taken taking makes made making go goes went "
    "gone going come comes came coming give gives gave given keep keeps kept say says said tell told know knew known "
    "want wants wanted need needs needed try tried seem seems look looks think thought happen happens happened now "
    "still already yet ever again too much many more less really actually here once twice ago soon later today "
    "tonight yesterday tomorrow instead maybe please thanks okay yes about above across after against along among "
    "around before behind below beneath beside between beyond during from inside near onto outside since through "
    "throughout toward towards until upon within without away"))
# (compared as written, not stemmed: "exceptions", "lettings", "evening" are subjects. Not listed, as they make
# compounds that are subjects: back (pain), past (due), down (payment), out, off, over, one (way), make,
# let, except, under, even.)


def subject_words(question: str) -> list[str]:
    """The question's content words, personal data masked first and numbers left out: these are
    echoed back to the user and must not repeat an SSN or an email address."""
    text, _ = mask_pii(question)
    text = re.sub(r"\[[A-Z_]+\]", " ", text)
    return list(dict.fromkeys(w for w in words(text) if w not in STOPWORDS and len(w) > 2 and not w.isdigit()
                              and stem(w) not in ASKING_WORDS and w not in PLAIN_WORDS))


def asked_subject(question: str) -> str:
    """What an out-of-scope question asks about, in its own words, for the reply to name as content to add:
    "the capital of France", "discounts for AAA members" (a bag of its words read "capital france", "offer
    discounts aaa members"). The bag of its content words when no short stretch of the asking sentence holds
    most of them ("I'm 34 weeks pregnant with twins. Can I still fly?" is not about flying). Echoed back, so
    personal data is masked first, and nothing with a digit (a PIN, a passport or plate number), no text after
    masked data ("call me at [PHONE] about ...") and no markup or control characters are repeated."""
    bag = subject_words(question)
    text = mask_pii(question)[0]
    text = re.split(r"\[[A-Z_]+\]", text)[-1]  # what follows the last masked datum
    own = {stem(w) for w in bag}  # (plain words, "about it, from before", name nothing to add)
    if not (focus := [t for t in focus_terms(text, set(), question_type(text)) if t in own]):
        return " ".join(bag[:8])
    # words only: none with a digit, none opening with markup or a control character
    tokens = [t for t in subject_phrase(text, focus).split()
              if re.fullmatch(r"[^\W\d_][\w'’&/().,;:?!-]*", t) and not re.search(r"\d", t)]
    phrase = " ".join(tokens).strip(" .,;:!?()")
    covered = {stem(w) for w in words(phrase)} & own
    if 0 < len(tokens) <= 8 and 2 * len(covered) >= min(len(own), 8):
        return phrase
    return " ".join(bag[:8])


def abstained(kb: KnowledgeBase, inquiry: Inquiry, relevance: Relevance, reason: str = "") -> dict[str, Any]:
    """The knowledge base does not cover the question: say so, and what would help, instead of guessing."""
    asked = asked_subject(inquiry.question)
    subject = asked or "this subject"
    # Topic values are KB metadata: only plain short names (the caller may read) are listed back.
    topics = [t.replace("_", " ") for t in visible_facets(kb, inquiry.access).get("topic", [])
              if re.fullmatch(r"[\w .()/&-]{1,40}", t)]
    scope = ""
    if inquiry.filters:
        scope = f" (I searched only documents matching the filter {json.dumps(inquiry.filters, sort_keys=True)}.)"
    why = f" {masked(reason).rstrip('.')}." if reason else ""
    covered = f" This knowledge base covers: {', '.join(topics[:12])}." if topics else ""
    text = f"{NO_INFORMATION}{scope}{why} To answer it, ingest articles that cover: {subject}.{covered}"
    out = {"decision": "out_of_scope", "confidence": scope_confidence(relevance), "review": {"dropped": []},
           "response": {"text": text, "sections": []}, "citations": [], "article_reference": None,
           "required_fields": dict(EMPTY_FIELDS), "missing_fields": [], "needs_review": False,
           "metadata": {"abstain_reason": reason or "retrieval found nothing relevant", "suggested_content": asked}}
    if inquiry.mode == "artifact":  # every heading present and empty: nothing is invented to fill them
        out["artifact"] = dump(shell(inquiry.artifact_type, one_line(masked(inquiry.question)).rstrip("?.! "), text))
    return out


def below(value: float, threshold: float) -> str:
    """"0.629 is below the 0.63": as many decimals as it takes for the two numbers a person reads to differ
    (0.6286 printed as 0.63 read "0.63 is below the 0.63 threshold")."""
    digits = next((d for d in range(2, 7) if round(value, d) != round(threshold, d)), 6)
    return f"{value:.{digits}f} is below the {threshold:.{digits}f}"


def uncertain(ctx: Context, inquiry: Inquiry, verdict: Verdict | None, pack: ContextPack,
              missing: list[str], artifact: Artifact | None = None) -> dict[str, Any]:
    """Keep what is supported, say what is missing, and flag the answer (or artifact) for review."""
    reasons: list[str] = []
    if verdict is not None and verdict.unanswered:
        reasons.append("the knowledge base does not state " + "; nor ".join(verdict.unanswered))
    dropped = len(verdict.dropped) if verdict else 0
    if verdict is not None and not verdict.passed and dropped:
        reasons.append(f"{dropped} statement(s) failed verification and were removed")
    elif verdict is not None and not verdict.sections:
        reasons.append("no statement in the knowledge base answers it directly")
    conf = verdict.confidence if verdict else 0.0
    if conf < ctx.confidence_threshold:
        reasons.append(f"confidence {below(conf, ctx.confidence_threshold)} threshold")
    context_terms: set[str] = set()
    for c in pack.chunks:
        context_terms |= term_set(c.text + " " + c.title)
    # "my money back" is not unstated where the context says "refund" (kb/everyday.py)
    said_formally = {stem(w) for phrase in everyday_words(inquiry.question, context_terms.__contains__)
                     for w in words(phrase)}
    uncovered = [w for w in subject_words(inquiry.question) if stem(w) not in context_terms | said_formally]
    missing_parts = []
    if uncovered:
        missing_parts.append("the knowledge base says nothing about: " + ", ".join(uncovered[:8]))
    elsewhere = verdict is not None and bool(verdict.unserved)
    if missing and not elsewhere:  # (another provider's article asks for its own provider's data)
        missing_parts.append("data still to collect: " + ", ".join(missing))
    sections = verdict.sections if verdict else []
    head = "I'm not certain this fully answers the question (" + "; ".join(reasons or ["low evidence"]) + ")."
    if missing_parts:
        head += " Missing: " + "; ".join(missing_parts) + "."
    out: dict[str, Any] = {}
    if elsewhere and verdict is not None:
        # the article found is another provider's: its rules and figures are not that provider's (nor its
        # data: resolution_output lists none)
        sections, out["citations"] = [], []
        head += " " + elsewhere_note("; ".join(sorted({c.title for c in verdict.citations})), verdict.unserved)
        if artifact is not None:  # (nor an artifact built from it)
            artifact, out["artifact"] = None, None
    body = artifact.markdown if artifact is not None else render_text(sections)
    text = head + ("\n\nWhat the knowledge base does support:\n" + body if body else "")
    if verdict is not None and verdict.note and artifact is None:  # (an artifact's markdown carries it already)
        text = f"{verdict.note}\n\n{text}"  # two articles disagree, a passage was held back: said here too
    return {**out, "decision": "uncertain", "needs_review": True,
            "response": {"text": text, "sections": dump(sections)},
            "review": review(verdict.dropped if verdict else []),
            "metadata": {"uncertain_reasons": reasons, "uncovered_terms": uncovered}}


def elsewhere_note(titles: str, providers: list[str]) -> str:
    """Why an answer (or a list of data to collect) from another provider's article is withheld."""
    named = f"provider ({display_text(titles)})" if titles else "provider"
    return (f"The knowledge base covers this only for another {named}; its rules and the data it asks for are "
            f"not given here, as they may not hold for {' or '.join(providers)}.")


# --- metadata: what each step reports (the graph's nodes and engine.answer report the same) --------
def start_metadata(inquiry: Inquiry, ctx: Context, generation: int) -> dict[str, Any]:
    return {"mode": inquiry.mode, "facets_detected": inquiry.detected_facets, "expansions": inquiry.expansions,
            "spelling": [list(pair) for pair in inquiry.corrections],
            "kb_generation": generation, "generator": None, "context_tokens": 0,
            "context_budget": int(ctx.context_share * inquiry.max_tokens), "chunks_retrieved": 0, "chunks_used": 0,
            "tiers_used": {"critical": 0, "high": 0, "medium": 0, "low": 0}}


def resolution_metadata(resolution: Resolution, interrupts: int = 0) -> dict[str, Any]:
    return {"required_data": {"relevance": dump(resolution.relevance), "filters": resolution.filters,
                              "facets_relaxed": resolution.relaxed,
                              "candidates": [(a.article_id, round(a.score, 5)) for a in resolution.candidates[:5]],
                              "tied": resolution.tied, "conflicts": resolution.conflicts,
                              "compared": resolution.compared, "interrupts": interrupts,
                              **resolution.notes}}


def retrieval_metadata(retrieval: Retrieval, ctx: Context) -> dict[str, Any]:
    return {"chunks_retrieved": len(retrieval.hits), "filters_applied": retrieval.filters,
            "facets_relaxed": retrieval.relaxed, "relevance": dump(retrieval.relevance), "fusion": ctx.fusion,
            "reranker": ctx.reranker, **({"rerank": retrieval.notes} if len(retrieval.notes) > 1 else {})}


def pack_metadata(pack: ContextPack) -> dict[str, Any]:
    return {"context_tokens": pack.tokens, "context_budget": pack.budget, "chunks_used": len(pack.chunks),
            "tiers_used": pack.tiers_used, "instructions_neutralized": pack.neutralized}


def draft_metadata(draft: Draft, attempts: int) -> dict[str, Any]:
    return {"generator": draft.generator, "attempts": attempts, "generation_notes": draft.notes}


def verdict_metadata(verdict: Verdict) -> dict[str, Any]:
    return {"confidence_parts": verdict.parts, **verdict.notes}
