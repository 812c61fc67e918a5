"""Search with the detected facets as filters, relaxing them when they leave nothing relevant.

Shared by the required-data step and retrieval: detected facets are a guess, caller filters are
not, so only the detected part is ever relaxed. Reranking and MMR happen here; relevance (abstain
or not) is scored on the final order.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import islice
from typing import Any

import numpy as np

from ..config import Context
from ..kb.articles import PROVIDER, QUARANTINED
from ..kb.text import terms
from ..llm.chat import ModelClock
from ..retrieval.hybrid import SearchParams
from ..retrieval.mmr import mmr
from ..retrieval.passage import Passage
from ..retrieval.rerank import get_reranker
from ..retrieval.snapshot import KnowledgeBase
from .answerability import QUESTION_WORDS
from .facets import combine_filters, is_universal
from .records import Inquiry, Relevance, Retrieval
from .score import TOPIC_FLOOR, blend, coverage, relevance, relevant

# Never relaxed, never overridable: a quarantined document (one that addresses the assistant) is not a source.
TRUSTED = {QUARANTINED: {"$ne": True}}


def synonym_alternatives(kb: KnowledgeBase, question: str) -> dict[str, list[str]]:
    """question term -> synonym phrases that stand for it (they count as the term for coverage): the KB's
    synonym groups, and the formal words for an everyday phrase the question says (its verb and particle
    stand for "refund", not the object between them)."""
    out: dict[str, list[str]] = {}
    for group in kb.synonyms.groups:
        for member in group:
            for t in terms(member):
                out.setdefault(t, []).extend(m for m in group if m != member)
    for phrase, formal in kb.synonyms.everyday(question).items():
        for t in terms(phrase):
            out.setdefault(t, []).extend(formal)
    for abbr, long in kb.synonyms.tag_acronyms_in(question).items():
        for t in terms(abbr):
            out.setdefault(t, []).append(long)
    q = set(terms(question))
    return {t: v for t, v in out.items() if t in q}


# Whose a plain document is (kb.named_facets): the provider only. A plan type is often a common word
# ("Business hours for customer support" names no Business plan), a provider is a name.
PROVIDER_FACET: tuple[str, ...] = (PROVIDER,)


def about_another(kb: KnowledgeBase, doc_id: str, named: dict[str, list[str]]) -> bool:
    """A plain document whose title names another provider or product than the question does (the question
    names Contoso; "fabrikam-wellness-schedule.xlsx" is Fabrikam's): the facet filter it has no
    front matter for. A document naming none, or also the asked one, stays (a FAQ covering every provider)."""
    info = kb.docs.get(doc_id)
    if info is None or info.structured:
        return False
    own = kb.named_facets(doc_id)
    return any(facet in own and not set(own[facet]) & set(values)
               and not any(is_universal(v, facet) for v in own[facet])
               for facet, values in named.items() if facet in PROVIDER_FACET and values)


_COMMON: dict[tuple[str, int, str], frozenset[str]] = {}
_WORD = re.compile(r"(?<![\w'’-])[A-Za-z][a-z'’-]*")
COMMON_SCAN = 400  # chunks read per provider: its articles' usage shows in a sample


def common_words(kb: KnowledgeBase, provider: str) -> frozenset[str]:
    """The words of a provider's name its own articles mostly write in lower case, twice or more ("water",
    "gas", "insurance"): words of the subject, not of the name ("Mutual" written once in "mutual agreement"
    is still the name's). Read once per snapshot and provider, from up to COMMON_SCAN of its chunks."""
    key = (str(kb.home), kb.generation, provider)
    found = _COMMON.get(key)
    if found is not None:
        return found
    own = set(terms(provider))
    lower: Counter[str] = Counter()
    upper: Counter[str] = Counter()
    chunks = (c for doc, info in kb.docs.items() if info.structured and _owned_by(info.metadata.get(PROVIDER), provider)
              for c in kb.chunks_of(doc))
    for chunk in islice(chunks, COMMON_SCAN):
        for m in _WORD.finditer(chunk.text):
            w = m.group()
            if w[0].isupper() and chunk.text[max(0, m.start() - 3):m.start()].strip()[-1:] in ("", ".", "!", "?",
                                                                                          ":", "-", "*", "•"):
                continue  # a sentence's or a list item's first word is capitalised whatever it is
            for t in set(terms(w)) & own:
                (lower if w[0].islower() else upper)[t] += 1
    found = frozenset(t for t in own if lower[t] >= 2 and lower[t] > upper[t])
    if len(_COMMON) > 1024:  # a long-lived server sees many snapshots: keep the current ones
        _COMMON.clear()
    _COMMON[key] = found
    return found


def _owned_by(value: object, provider: str) -> bool:
    """A document's provider metadata names this provider (a scalar, or one of a list)."""
    return value == provider or (isinstance(value, list) and provider in value)


# Words that ask about a provider in general, naming no subject of their own
_ONLY_ASKING = QUESTION_WORDS | frozenset(terms("about offer offers provide provides service services product "
                                                "products sell sells"))


def topic_relevance(kb: KnowledgeBase, question: str, hits: list[Passage], alternatives: dict[str, list[str]],
                    named: dict[str, list[str]]) -> float | None:
    """The relevance of the top hits to the question without the provider names it gives (None when it names
    none, asks nothing else, or its other words alone clear TOPIC_FLOOR): a provider's name finds its
    articles whatever the subject, and only the rest of the question says whether the knowledge base covers
    it. A name counts where it is written capitalised; in a question whose only capitals open its sentences
    (or are "I"), capitals say nothing, so a name's own words count wherever they stand (its common words
    never do)."""
    values = [value for facet in PROVIDER_FACET for value in named.get(facet) or []]
    names = {t for value in values for t in terms(value)} - set().union(*(common_words(kb, v) for v in values))
    if not names or not hits:
        return None
    # a name as written, capitalised, and only its own words: "Alder Creek Water" is "Alder Creek" (its
    # documents write "water" too), and "the gas guy" keeps its "gas"
    # capitals that say something: not a sentence's first letter, not "I", not an acronym ("UK", "ISA")
    cased = any(w[:1].isupper() and not w.isupper() and not re.search(r"(^|[.!?]\s*)$", question[:m.start()])
                for m in re.finditer(r"\S+", question) if (w := m.group()))
    rest = " ".join(w for w in question.split()
                    if not ((w[:1].isupper() or not cased) and (found := set(terms(w))) and found <= names))
    if not set(terms(rest)) - _ONLY_ASKING:
        return None  # "tell me about Northwind", "what does Northwind offer": nothing asked but the provider
    top = hits[:3]
    cov = coverage(rest, alternatives, (f"{h.title} {h.section} {h.text}" for h in top), kb.bm25.idf)
    if blend(0.0, cov) >= TOPIC_FLOOR:
        return None  # its words alone clear the floor: not worth embedding the rest (~15 ms a question)
    query = kb.embedder.embed_query(rest)
    dense_top = max(float(v @ query) for v in kb.vectors_of([h.row for h in top]))
    return round(blend(dense_top, cov), 4)


ARTIFACT_DEPTH = 2  # an artifact covers a whole procedure or project: it reads twice the chunks an answer does


def context_depth(ctx: Context, inquiry: Inquiry) -> int:
    """Chunks retrieval keeps for the context (top_k; twice that for an artifact, within candidate_k)."""
    return min(ctx.candidate_k, ctx.top_k * ARTIFACT_DEPTH) if inquiry.mode == "artifact" else ctx.top_k


def search_params(ctx: Context, k: int) -> SearchParams:
    return SearchParams(k=k, candidate_k=ctx.candidate_k, method="hybrid", fusion=ctx.fusion, rrf_k=ctx.rrf_k,
                        alpha=ctx.fusion_alpha)


def search(kb: KnowledgeBase, ctx: Context, inquiry: Inquiry, *, extra_filter: dict[str, Any] | None = None,
           facet_filters: dict[str, Any] | None = None, k: int | None = None, strategy: str | None = None,
           clock: ModelClock | None = None) -> Retrieval:
    """The passages for the inquiry's question under its filters (relaxing detected facets if needed)."""
    question = inquiry.question
    facets = inquiry.facet_filters if facet_filters is None else facet_filters
    reranker = get_reranker(ctx, strategy or ctx.reranker, clock)
    alternatives = synonym_alternatives(kb, question)
    want = k or context_depth(ctx, inquiry)
    pool = want if ctx.mmr_lambda >= 1.0 else 3 * want

    def run(flt: dict[str, Any]) -> tuple[list, Relevance, dict[str, Any]]:
        notes: dict[str, Any] = {}
        hits = kb.search(question, filters=flt, params=search_params(ctx, pool), expansions=inquiry.expansions)
        if any(values for facet, values in inquiry.detected_facets.items() if facet in PROVIDER_FACET):
            hits = [h for h in hits if not about_another(kb, h.doc_id, inquiry.detected_facets)]
        hits = reranker.rerank(question, hits, facets=inquiry.detected_facets, idf=kb.bm25.idf, notes=notes)
        if ctx.mmr_lambda < 1.0 and len(hits) > want:
            chosen = mmr(np.asarray([h.score for h in hits]), kb.vectors_of([h.row for h in hits]), want,
                         ctx.mmr_lambda)
            hits = [hits[i] for i in chosen]
        rel = Relevance(**relevance(question, hits, alternatives, kb.bm25.idf))
        rel.topic = topic_relevance(kb, question, hits, alternatives, inquiry.detected_facets)
        return hits, rel, notes

    used = combine_filters(TRUSTED, inquiry.access, inquiry.filters, facets, extra_filter or {})
    hits, rel, notes = run(used)
    relaxed = False
    if facets and (not hits or not relevant(rel, ctx.relevance_threshold)):
        # trust and access are never relaxed; only the facets the question seemed to name are
        loose = combine_filters(TRUSTED, inquiry.access, inquiry.filters, extra_filter or {})
        hits2, rel2, notes2 = run(loose)
        if rel2.score > rel.score:
            hits, rel, used, relaxed, notes = hits2, rel2, loose, True, notes2
    return Retrieval(hits=hits, relevance=rel, filters=used, relaxed=relaxed,
                     notes={"reranker": reranker.name, **notes})
