"""Offline artifacts: every heading filled from the sections of its type, verbatim and cited.

Nothing is written that is not in the context. The subject is the governing article, or, for plain
documents, the documents of the best chunks. By the heading's `select`:
  all       the matching sections' items in reading order (a procedure keeps its order)
  relevant  the matching sections' items most related to the request (IDF-weighted term overlap with
            it plus dense similarity, as answers rank sentences), shown in reading order
  warnings  the Always-rules as the context sentences that state them, then the matching sections' items
  missing   the required-data items whose fields are not collected yet
  rules     the guardrail lines with the heading's markers, quoted
Required-data items are shown as "Name (required): description Why: ..." — their own words, without
the type annotation. An item appears under one heading only, except an Always-rule: it is always
under the heading for warnings.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..kb.fields import parse_required_data
from ..kb.guardrails import rule_kind
from ..kb.text import split_items, term_set, terms, words
from .artifact_types import ArtifactOutput, ArtifactType, Heading
from .extractive import similar
from .generate import AnswerRequest
from .records import ContextChunk
from .verify import always_warning, citations_in, phrase_said, strip_citations

MAX_WORDS = 90
MIN_RELEVANT_WORDS = 4  # a ranked sentence needs some substance; copied sections keep short items
TOP_DOCS, DOC_SHARE = 3, 0.5  # without a governing article: the documents of the best chunks are the subject
Picked = list[tuple[str, str]]  # (text, label)
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_CODE = re.compile(r"[=(){}\[\];<>|#$\\]")
CODE_SHARE = 0.04  # plain documents mix code and badges into their text: above this share of symbols, not prose


def usable(item: str, chunk: ContextChunk) -> bool:
    """An item worth showing: not empty once cleaned, and, in plain documents, prose rather than code."""
    text = shown(item, chunk)
    return bool(text) and (chunk.chunk_type != "content" or len(_CODE.findall(text)) <= CODE_SHARE * len(text))


def primary_docs(request: AnswerRequest) -> list[str]:
    """The documents an artifact is about: the governing article, else those of the best chunks that
    score at least DOC_SHARE of the best one (a document far behind is another subject)."""
    if request.article_id and any(c.doc_id == request.article_id for c in request.chunks):
        return [request.article_id]
    ranked = sorted(request.chunks, key=lambda c: -float(c.score))
    if not ranked:
        return []
    best = float(ranked[0].score)
    return list(dict.fromkeys(c.doc_id for c in ranked[:TOP_DOCS]
                              if best <= 0 or float(c.score) >= DOC_SHARE * best))


def shown(item: str, chunk: ContextChunk) -> str:
    """A required-data line in its own words without the type annotation; any other item without the
    HTML tags documents carry (badges, alignment), its words unchanged."""
    if chunk.chunk_type != "required_data":
        return " ".join(_TAG.sub(" ", item).split())
    fields, _ = parse_required_data("- " + item)
    if not fields:
        return item
    f = fields[0]
    text = f"{f.name} ({'required' if f.required else 'optional'}): {f.description}".rstrip(": ")
    return f"{text} Why: {f.why_needed}" if f.why_needed else text


class ExtractiveArtifacts:
    name = "extractive"

    def fill(self, kind: ArtifactType, request: AnswerRequest) -> ArtifactOutput:
        docs = primary_docs(request)
        never_say = [p for r in request.rules.values() for p in r.get("never_say", [])]
        avoid = {a.strip().lower() for a in request.feedback.avoid}

        def allowed(text: str, quoting: bool = False) -> bool:
            return (text.strip().lower() not in avoid and len(words(text)) <= MAX_WORDS
                    and (quoting or phrase_said(text, never_say) is None))

        taken: set[str] = set()
        data: dict[str, list[dict[str, object]]] = {}
        for field_name, heading in kind.headings:
            kept: list[dict[str, object]] = []
            for text, label in self.select(heading, request, docs, allowed):
                # Always-rules belong under their heading even when another heading already quotes them.
                seen = text.strip().lower() in taken and not heading.always
                if seen or len(kept) >= heading.limit or any(text == k["text"] for k in kept):
                    continue
                taken.add(text.strip().lower())
                kept.append({"text": text, "citations": [label]})
            data[field_name] = kept
        return kind.schema.model_validate(data)

    def select(self, heading: Heading, request: AnswerRequest, docs: list[str],
               allowed: Callable[..., bool]) -> Picked:
        def sections(doc: str) -> list[ContextChunk]:
            own = [c for c in request.chunks if c.doc_id == doc and heading.matches(c.chunk_type, c.section, c.title)]
            return sorted(own, key=lambda c: c.ordinal)

        def copied(chunks: list[ContextChunk]) -> Picked:
            return [(shown(u, c), c.label) for c in chunks for u in split_items(c.text) if allowed(u) and usable(u, c)]

        if heading.select == "all":
            return next((copied(own) for doc in docs if (own := sections(doc))), [])
        if heading.select == "rules":
            return [(u, c.label) for doc in docs for c in sections(doc) for u in split_items(c.text)
                    if rule_kind(u) in heading.markers and allowed(u, quoting=True)]
        if heading.select == "missing":
            wanted = set(request.missing_fields)
            return [(shown(u, c), c.label) for doc in docs for c in sections(doc) for u in split_items(c.text)
                    if (f := parse_required_data("- " + u)[0]) and f[0].key in wanted and allowed(u)]
        if heading.select == "warnings":
            out: Picked = []
            for doc in docs:
                own = [c for c in request.chunks if c.doc_id == doc]
                for rule in (request.rules.get(doc) or {}).get("always", []):
                    item = always_warning(rule, own)
                    if item is not None and allowed(strip_citations(item)):
                        out.append((strip_citations(item), citations_in(item)[0]))
            for text, label in (p for doc in docs for p in copied(sections(doc))):
                if not any(similar(text, o) for o, _ in out):
                    out.append((text, label))
            return out
        return self.relevant(heading, request, [c for doc in docs for c in sections(doc)], docs, allowed)

    @staticmethod
    def relevant(heading: Heading, request: AnswerRequest, chunks: list[ContextChunk], docs: list[str],
                 allowed: Callable[..., bool]) -> Picked:
        # A sentence that only introduces what follows ("Install it with pip:") says nothing on its own.
        units = [(c, i, shown(u, c)) for c in chunks for i, u in enumerate(split_items(c.text))
                 if len(words(shown(u, c))) >= MIN_RELEVANT_WORDS and allowed(u) and usable(u, c)
                 and not u.rstrip().endswith(":")]
        if not units:
            return []
        weights = {t: max(request.idf(t), 0.1) for t in terms(request.question)}
        for phrase in request.expansions:
            for t in terms(phrase):
                weights.setdefault(t, 0.5 * max(request.idf(t), 0.1))
        total = sum(weights.values()) or 1.0
        sims = request.similarity([u for _, _, u in units]) if request.similarity else [0.0] * len(units)
        scored = []
        for (c, i, text), sim in zip(units, sims, strict=True):
            lexical = sum(w for t, w in weights.items() if t in term_set(text)) / total
            scored.append((0.5 * lexical + 0.5 * max(0.0, sim), c, i, text))
        scored.sort(key=lambda x: -x[0])
        best = scored[:heading.limit]
        best.sort(key=lambda x: (docs.index(x[1].doc_id), x[1].ordinal, x[2]))
        return [(text, c.label) for _, c, _, text in best]
