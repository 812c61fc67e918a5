"""Resolve an inquiry: which article governs it, which data it needs, which of that is still missing.

Two searches rank the articles — rule-type chunks (required data, eligibility, business rules) and the
full ranking — fused per document. When the best articles are parallel versions of one procedure
(same topic, differing only in facets the question did not name, e.g. two record keepers' rollover
articles), the governing article is not guessed: the union of their fields is returned grouped by
article and the facet to choose becomes the first missing field. When plain documents (no front matter)
hold the top of the search, or one of them states the figure a question asks for where the leading
article states none, no article governs: the question is about them, and they answer it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from difflib import SequenceMatcher
from typing import Any

from ..config import Context
from ..kb.articles import FACETS, PROVIDER
from ..kb.fields import choice_matches, normalize_key, validate_value
from ..kb.text import display_text, split_items, term_set
from ..llm.chat import ModelClock
from ..retrieval.snapshot import KnowledgeBase
from .access import visible_facets
from .answerability import (
    ACCEPTS,
    accepted_types,
    asking_part,
    focus_terms,
    question_type,
    sentence_types,
    unnamed_facets,
    with_compounds,
)
from .facets import (
    asked_providers,
    combine_filters,
    facet_clause,
    facet_filter,
    filter_keys,
    is_universal,
    universal_values,
)
from .privacy import SENSITIVE_PLACEHOLDER, masked, refused_value_masked
from .records import ArticleCandidate, FieldSpec, Inquiry, Resolution
from .score import relevant
from .search import search
from .stated import stated_data

RULE_TYPES = ["required_data", "eligibility", "business_rules"]
PARALLEL_MARGIN = 0.85  # a parallel article within this share of the best score is a tie (chosen on dev)
SEARCH_DEPTH = 20
# Plain documents holding this many top hits, before any article's, answer alone. Set as a rule, not tuned: no
# calibration set mixes articles and plain documents; on solar's dev (the mixed set, held out) 2 and 4 give the same.
PLAIN_LEAD = 3
# For which data to collect, an article governs unless a guide scores over ~3x its best: set as a rule
# between the cases we have (a claims article at 0.76 of its app guide, a loan article at 0.51 of a
# loan-screen guide: both govern; a loan article at 0.25 of a password guide: not), not tuned on an eval set.
FIELDS_GAP = 0.35
# How much more of the question (IDF-weighted focus terms) a plain document's sentence must say than the
# leading article's best: chosen on dev (the nine sets of 1bde862: 0.0-0.3 send questions the article
# answers to a call transcript or a guide that repeats it with more of the question's words, 3 of 6 switches
# wrong; 0.4 keeps those whose article has no such sentence at all).
PLAIN_MARGIN = 0.4
# A plain first hit 1.25x every article's best holds the question. Chosen on the dev halves of the twelve sets
# (76cdc7a): 0.6 -> 0.7 +1 -1, 0.75 +2 -1, 0.8-0.9 +4 -1 (a flat stretch; the lowest of it taken); the test
# halves, read after: +5 -0. (Before, on pets, aid and solar alone: 0.4-0.5 one question fewer than 0.6.)
PLAIN_GAP = 0.8
# An article whose best chunk scores this many times the next article's best in the full search governs, though
# the rule-section and whole-article rankings put another first (fusion by rank cannot see a lead of 2x).
# Chosen on the dev halves of the eleven sets: of the 25 questions where the full search's leader was not the
# article chosen, 1.5 picks the right article 7 times more and 1 time less, 1.7 5 more and none less.
ARTICLE_LEAD = 1.7


def resolve(kb: KnowledgeBase, ctx: Context, inquiry: Inquiry, collected: dict[str, Any] | None = None,
            clock: ModelClock | None = None) -> Resolution:
    """The governing article (or tied parallel articles), its fields, and what is missing or invalid."""
    collected = dict(inquiry.collected_data if collected is None else collected)
    chosen, bad_facets = chosen_facets(kb, collected, inquiry.access)
    given = (facet_clause(f, v, universal_values(f, kb.facets.get(f, []))) for f, v in chosen.items())
    detected = inquiry.facet_filters
    if topic_the_data_overrules(kb, inquiry, collected):  # the words named one topic, the data another's article
        detected = facet_filter({f: v for f, v in inquiry.detected_facets.items() if f != "topic"}, inquiry.filters,
                                kb.facets)
    facet_filters = combine_filters(detected, *given)
    # One model call per question reranks the context (in retrieval); ranking articles stays heuristic.
    strategy = "heuristic" if ctx.reranker == "llm" else ctx.reranker
    rule_hits = search(kb, ctx, inquiry, facet_filters=facet_filters, k=SEARCH_DEPTH, strategy=strategy,
                       extra_filter={"chunk_type": {"$in": RULE_TYPES}})
    full = search(kb, ctx, inquiry, facet_filters=facet_filters, k=SEARCH_DEPTH, strategy=strategy)
    structured = {d for d, info in kb.docs.items() if info.structured}
    ranked = rank_articles([rule_hits.hits, full.hits], structured,
                           orders=[article_similarity(kb, inquiry.question, rule_hits.hits + full.hits, structured)],
                           stand_ins=rule_less_ranks(kb, full.hits, structured))
    # Which data to collect, or a checklist, comes from an article's sections: a plain guide that leads the
    # search answers a question about itself, never one of those; only an article far behind it is out.
    by_score = strategy == "heuristic"
    led = bool(ranked) and (plain_document_leads(full.hits, structured, by_score) if inquiry.mode == "answer"
                            else by_score and plain_far_ahead(full.hits, structured, FIELDS_GAP))
    by_data = (None if led or full.relevance.score < min(DATA_RELEVANCE, ctx.relevance_threshold)
               else article_the_data_names(kb, ranked[:DATA_CANDIDATES], collected))
    on_topic = relevant(full.relevance, ctx.relevance_threshold)
    out = Resolution(covered=bool(ranked) and not led and (on_topic or by_data is not None),
                     relevance=full.relevance, candidates=ranked, filters=full.filters, relaxed=full.relaxed,
                     facet_filters=facet_filters, collected=collected, invalid=dict(bad_facets),
                     lead_document=full.hits[0].doc_id if led else None)
    if not out.covered:
        return out
    pinned = filter_keys(inquiry.filters) | filter_keys(facet_filters)
    metadata = {d: kb.docs[d].metadata for d in structured}
    tied, deciding = parallel_articles(ranked, metadata, pinned)
    # A plain document with the fact the leading article lacks answers, unless the articles are still tied
    # (which provider's is not known yet: the data to choose comes first).
    if (not tied and by_score and inquiry.mode == "answer"
            and (lead := plain_document_answers(kb, inquiry, full.hits, structured, ranked[0].article_id))):
        out.covered, out.lead_document = False, lead
        return out
    far = article_far_ahead(full.hits, structured) if not tied and by_score else None
    if far is not None and far != ranked[0].article_id:
        leader = next((c for c in ranked if c.article_id == far), None)
        if leader is not None:  # first by the stronger evidence, at the top fused score
            ranked = [replace(leader, score=ranked[0].score), *(c for c in ranked if c.article_id != far)]
            out.candidates = ranked
    best = ranked[0]
    if tied and not bad_facets and (fitted := article_the_data_fits(kb, tied, collected)):
        tied, deciding = [], []
        best = next(c for c in ranked if c.article_id == fitted)
    if by_data is not None and not tied and not bad_facets:
        best, out.named_by_data = next(c for c in ranked if c.article_id == by_data), True
    elif not on_topic:  # the data named an article that cannot govern alone: out of scope, as its words are
        out.covered = False
        return out
    out.conflicts = conflicting_articles(ranked, metadata)
    if not tied and len(inquiry.detected_facets.get(PROVIDER) or []) > 1:
        # the providers the question itself names where it asks (a synonym's expansion can add a provider's
        # word; "I moved from Contoso to Northwind. What is the fee?" asks about Northwind alone)
        named = asked_providers(kb.facet_detector, asking_part(inquiry.question))
        out.compared = compared_articles(ranked, metadata, best.article_id, named)
    if tied or out.conflicts or out.compared:  # not guessed: the data any of the candidate articles needs
        out.by_article = {a: article_fields(kb, a)
                          for a in (tied or [best.article_id, *out.conflicts, *out.compared])}
        fields = union_fields(out.by_article)
        choices = {f: sorted({str(kb.docs[a].metadata.get(f)) for a in tied}) for f in deciding}
    else:
        fields = article_fields(kb, best.article_id)
        choices = {}
        if ctx.llm_model and ctx.llm_required_fields:
            from .implied_fields import implied_fields

            extra, notes = implied_fields(ctx, inquiry.question, best.title, kb.chunks_of(best.article_id),
                                          [f.key for f in fields], clock)
            fields += [replace(f, article_id=best.article_id) for f in extra]
            out.notes["model_fields"] = {"added": [f.key for f in extra], **notes}
    missing, invalid, _ = check_collected(fields, collected, choices, declared_keys(kb))
    out.stated = stated_data(inquiry.question, fields, collected)
    out.collected = withhold_sensitive(fields, collected)
    out.article_id, out.title = best.article_id, best.title
    out.tied, out.choices, out.fields = tied, choices, fields
    out.missing, out.invalid = missing, {**bad_facets, **invalid}
    out.confidence = article_confidence(ranked, full.relevance.score, tied=bool(tied),
                                        far_ahead=far is not None and best.article_id == far)
    out.elsewhere = other_providers(kb, inquiry.detected_facets, out)
    return out


def other_providers(kb: KnowledgeBase, detected: dict[str, list[str]], resolution: Resolution) -> list[str]:
    """The providers the question names where the governing article is another provider's (the search had
    to drop the named one to find anything): its rules and the data it asks for are that provider's, not the
    named one's. Not a plan type the article does not carry (the named provider's own article on the plans
    it does cover answers "can I have SSO on the Team plan?"), nor an article of no provider in particular."""
    if not resolution.relaxed or resolution.article_id not in kb.docs or PROVIDER not in detected:
        return []
    metadata = kb.docs[resolution.article_id].metadata
    return unnamed_facets({PROVIDER: detected[PROVIDER]}, metadata) if metadata.get(PROVIDER) else []


def declared_keys(kb: KnowledgeBase) -> set[str]:
    """The field keys the KB's articles declare (normalised): a key one of them declares is that article's
    data, never a slip of another's."""
    return {normalize_key(f["key"]) for doc in kb.docs.values() for f in doc.fields}


# How far ahead of the next article the answering article must rank for an answer to settle on it: an
# answer from an article the ranking barely prefers ("can I add my kitten to my policy?" from a wellness
# add-on, 0.97 of it the claims article) is as likely a neighbour's as the inquiry's, and its data would be
# asked for in vain. Chosen on a review's probe (156 questions, eight KBs), not on an eval split: the five
# answers that settled right had the runner-up at 0.84-0.89 of the leader or none, the two that settled on
# a neighbour at 0.95 and 0.97; with or without it no dev or test answer of the eval sets changes. A known
# limit: candidate scores are fused reciprocal ranks, so a runner-up second in every ranking sits at 0.917 of
# a leader first in every one, and such an answer never settles however weak the runner-up's evidence.
SETTLE_MARGIN = 0.9


def answering_article(kb: KnowledgeBase, resolution: Resolution, cited: set[str],
                      inquiry: Inquiry) -> Resolution | None:
    """Where a plain document led the search (no article governs) but the draft cites one article and nothing
    else, and that article also leads the article ranking clearly (SETTLE_MARGIN), it governs what the answer
    says: its rules bind the claims, its Always-rules are said and its required data are asked for, as any
    governing article's are (engine/check.py). None otherwise."""
    if resolution.article_id is not None or resolution.lead_document is None or len(cited) != 1:
        return None
    article_id = next(iter(cited))
    info = kb.docs.get(article_id)
    ranked = resolution.candidates
    if (info is None or not info.structured or not ranked or ranked[0].article_id != article_id
            or (len(ranked) > 1 and ranked[1].score >= SETTLE_MARGIN * ranked[0].score)):
        return None
    fields = article_fields(kb, article_id)
    missing, invalid, _ = check_collected(fields, resolution.collected, {}, declared_keys(kb))
    settled = replace(resolution, covered=True, lead_document=None, article_id=article_id, title=info.title,
                      fields=fields, missing=missing, invalid={**resolution.invalid, **invalid},
                      stated=stated_data(inquiry.question, fields, resolution.collected),
                      collected=withhold_sensitive(fields, resolution.collected),
                      confidence=article_confidence(ranked, resolution.relevance.score))
    settled.elsewhere = other_providers(kb, inquiry.detected_facets, settled)
    return settled


def plain_document_leads(hits: list[Any], structured: set[str], by_score: bool = True) -> bool:
    """Whether the question is about a plain document (a guide, an FAQ page, a transcript) rather than
    any article: the search's first PLAIN_LEAD hits are all plain text, or one plain chunk is far ahead
    (`plain_far_ahead`). Then no article governs (it would pull its fields and critical chunks into an
    answer about something else), and the document answers, as it does in a KB of plain documents only."""
    top = hits[:PLAIN_LEAD]
    if len(top) == PLAIN_LEAD and not any(h.doc_id in structured for h in top):
        return True
    return by_score and plain_far_ahead(hits, structured)


def plain_document_answers(kb: KnowledgeBase, inquiry: Inquiry, hits: list[Any], structured: set[str],
                           article_id: str) -> str | None:
    """A retrieved plain document with a sentence that says more of what the question is about than any
    in the leading article, its most telling word included (and of the asked type itself, for an amount,
    date, duration or count question): the article is about the topic, the document has the fact (a fee
    schedule's bicycle row, an app guide's attachment limit, the minutes that priced a pay station), so
    the document answers. A question about one thing only ("is there a pet fee?") is too thin to tell
    them apart. The article is read as leniently as an answer is checked (any type the question accepts)."""
    question = inquiry.question
    qtype = question_type(question)
    facet_terms = {t for values in inquiry.detected_facets.values() for v in values for t in term_set(v)}
    weights = {t: kb.bm25.idf(t) for t in focus_terms(question, facet_terms, qtype)}
    total = sum(weights.values())
    if len(weights) < 2 or not total:
        return None
    telling = max(weights, key=lambda t: weights[t])

    def said(texts: list[str], wanted: set[str] | None, must: str = "", enough: float = 2.0) -> float:
        """The best share of the focus a unit states; stops once `enough` is reached (the article only
        needs to reach it), and skips a chunk whose terms cannot beat what is found or reach `enough`."""
        best = 0.0
        for text in texts:
            found = with_compounds(text)  # with compounds, as units are scored: "set up" is "setup"
            bound = sum(w for t, w in weights.items() if t in found) / total
            if (must and must not in found) or bound <= best or (enough < 2.0 and bound < enough):
                continue  # the cheap test first: a long article is mostly chunks that cannot matter
            for unit in split_items(text):
                if wanted is not None and not sentence_types(unit) & wanted:
                    continue
                found = with_compounds(unit)
                if not must or must in found:
                    best = max(best, sum(w for t, w in weights.items() if t in found) / total)
                    if best >= enough:
                        return best
        return best

    typed = qtype in ACCEPTS
    scored = [(said([h.text], {qtype} if typed else None, telling), -i, h.doc_id)
              for i, h in enumerate(hits) if h.doc_id not in structured]
    plain = max(scored, default=None)
    if plain is None or plain[0] <= PLAIN_MARGIN:
        return None
    article = said([c.text for c in kb.chunks_of(article_id)], accepted_types(question, qtype) if typed else None,
                   enough=plain[0] - PLAIN_MARGIN)
    return plain[2] if plain[0] > article + PLAIN_MARGIN else None


def article_far_ahead(hits: list[Any], structured: set[str], lead: float = ARTICLE_LEAD) -> str | None:
    """The article whose best chunk scores `lead` times any other article's best (on the heuristic
    reranker's scale, like plain_far_ahead), or None."""
    best: dict[str, float] = {}
    for h in hits:
        if h.doc_id in structured and h.doc_id not in best:
            best[h.doc_id] = float(h.score or 0.0)
    order = sorted(best.values(), reverse=True)
    if len(order) < 2 or order[1] <= 0 or order[0] < lead * order[1]:
        return None
    return max(best, key=lambda d: best[d])


def plain_far_ahead(hits: list[Any], structured: set[str], gap: float = PLAIN_GAP) -> bool:
    """The first hit is plain and every article's best scores under PLAIN_GAP of it (a call transcript's
    one window on the subject). Read on the default heuristic reranker's 0-1.3 scale (min-max over the
    SEARCH_DEPTH hits): a cross-encoder's logits or RRF's 1/(60+rank) make a ratio meaningless. For
    which data to collect, the test (with FIELDS_GAP): an article a guide merely outranks still has the
    fields; one far behind is about something else ("reset my password" is not the loan article's)."""
    best_article = next((h.score for h in hits if h.doc_id in structured), None)
    return (bool(hits) and hits[0].doc_id not in structured and hits[0].score > 0
            and best_article is not None and best_article < gap * hits[0].score)


_DIGIT_RUN = re.compile(r"\d(?:[\d \t./-]*\d){4,}")  # five digits or more, however grouped


def chosen_facets(kb: KnowledgeBase, collected: dict[str, Any],
                  access: dict[str, Any] | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """Facet values given as collected data ('record_keeper': 'contoso retirement'), matched to the KB's
    values that the caller may read (`access`, see engine.access)."""
    chosen, invalid = {}, {}
    known = visible_facets(kb, access or {})
    by_norm = {normalize_key(k): v for k, v in collected.items()}
    for facet in FACETS:
        raw = by_norm.get(normalize_key(facet))
        if raw is None:
            continue
        match = match_choice(str(raw), known.get(facet, []))
        if match is None:  # said back with any run of digits withheld: no provider is named by one, an SSN can be
            echo = _DIGIT_RUN.sub("[NUMBER]", str(raw))
            invalid[facet] = f"{echo!r} is not a known {facet.replace('_', ' ')}"
        else:
            chosen[facet] = match
    return chosen, invalid


def match_choice(value: str, choices: list[str]) -> str | None:
    """A choice by its exact name, case- and punctuation-insensitively, or by an unambiguous prefix
    of its words ('contoso' -> 'Contoso Retirement'); the CLI's prompt matches the same way (choice_matches)."""
    found = choice_matches(value, choices)
    return found[0] if len(found) == 1 or (found and normalize_key(found[0]) == normalize_key(value)) else None


def article_similarity(kb: KnowledgeBase, question: str, hits: list[Any], structured: set[str]) -> list[str]:
    """The candidate articles ordered by how close the question is to each article as a whole (its mean
    chunk vector): everyday wording that matches no single chunk well can still be about one article."""
    candidates = list(dict.fromkeys(h.doc_id for h in hits if h.doc_id in structured))
    if len(candidates) < 2:
        return candidates
    query = kb.embedder.embed_query(question)
    scored = [(float(v @ query), d) for d in candidates if (v := kb.doc_vector(d)) is not None]
    return [d for _, d in sorted(scored, key=lambda x: (-x[0], x[1]))]


def rule_less_ranks(kb: KnowledgeBase, full_hits: list[Any], structured: set[str]) -> dict[str, int]:
    """Articles with no rule section (required data, eligibility, business rules) -> their rank in the full
    search, the rank they take in the rule-section ranking they cannot appear in: their author titled the
    rules otherwise ("Refund or eCredit", "24-hour free cancellation"), which is no evidence against them.
    Without it such an article lost to any article that had a rules section."""
    order = list(dict.fromkeys(h.doc_id for h in full_hits if h.doc_id in structured))
    return {doc: rank for rank, doc in enumerate(order, start=1) if not kb.chunk_types(doc) & set(RULE_TYPES)}


def rank_articles(rankings: list[list[Any]], structured: set[str], k: int = 10,
                  orders: list[list[str]] | None = None, stand_ins: dict[str, int] | None = None,
                  ) -> list[ArticleCandidate]:
    """Article candidates from several chunk rankings (and article orders) by document-level reciprocal
    rank fusion.

    Each ranking lists a document at the rank of its best chunk; a document's score is the sum of
    1 / (k + rank) over rankings. A small k rewards being first, which is what choosing one
    governing article needs. Only structured articles (front matter) can govern an inquiry; an
    `orders` list ranks the same candidates another way (it adds no new ones); `stand_ins` gives a candidate
    the rank it takes in a ranking it cannot appear in, without moving the others.
    """
    scores: dict[str, float] = {}
    info: dict[str, ArticleCandidate] = {}
    for order_ in orders or []:
        for rank, doc in enumerate(order_, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    for hits in rankings:
        order: list[str] = []
        for h in hits:
            if h.doc_id not in structured:
                continue
            if h.doc_id not in order:
                order.append(h.doc_id)
            entry = info.setdefault(h.doc_id, ArticleCandidate(h.doc_id, h.title, 0.0))
            if h.chunk_id not in entry.chunks:
                entry.chunks.append(h.chunk_id)
        for rank, doc in enumerate(order, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    for doc, rank in (stand_ins or {}).items():
        if doc in info:
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    ranked = [replace(info[d], score=round(s, 6), chunks=info[d].chunks[:3]) for d, s in scores.items()]
    ranked.sort(key=lambda a: (-a.score, a.article_id))
    return ranked


def parallel_articles(ranked: list[ArticleCandidate], metadata: dict[str, dict[str, Any]],
                      pinned: set[str]) -> tuple[list[str], list[str]]:
    """Articles tied with the best one, and the facets that would decide between them.

    Tied = same topic as the best article, different only in facets the question left open, and a
    score within PARALLEL_MARGIN of the best. Different topics are different inquiries, not a tie.
    """
    if len(ranked) < 2:
        return [], []
    best = ranked[0]
    best_md = metadata.get(best.article_id, {})
    tied, deciding = [best.article_id], []
    for cand in ranked[1:]:
        if cand.score < PARALLEL_MARGIN * best.score:
            break
        md = metadata.get(cand.article_id, {})
        # a value that covers every value ("all aid") is no rival choice: the question needs not pick one
        differs = [f for f in FACETS if md.get(f) != best_md.get(f)
                   and not is_universal(md.get(f), f) and not is_universal(best_md.get(f), f)]
        if differs and "topic" not in differs and not set(differs) & pinned:
            tied.append(cand.article_id)
            deciding.extend(f for f in differs if f not in deciding)
    return (tied, deciding) if len(tied) > 1 else ([], [])


def governing_chunks(kb: KnowledgeBase, resolution: Resolution) -> list[Any]:
    """The chunks of the article that governs the inquiry, and of the articles it is compared with: their
    critical and high sections lead the context."""
    ids = [resolution.article_id, *resolution.compared] if resolution.article_id else []
    return [c for a in ids for c in kb.chunks_of(a)]


def compared_articles(ranked: list[ArticleCandidate], metadata: dict[str, dict[str, Any]], best: str,
                      named: list[str]) -> list[str]:
    """The articles of the other providers a question names, on the best article's topic ("how long do I
    have to dispute a charge at Contoso, and at Fabrikam?"): a comparison is answered from each
    provider's own article, the best-ranked of each, in the order they rank."""
    if len(named) < 2:
        return []
    best_md = metadata.get(best, {})
    topic, own = best_md.get("topic"), best_md.get(PROVIDER)
    if not topic:
        return []
    wanted = {v for v in named if v != own}
    out: list[str] = []
    for cand in ranked:
        md = metadata.get(cand.article_id, {})
        if md.get(PROVIDER) in wanted and md.get("topic") == topic:
            out.append(cand.article_id)
            wanted.discard(md.get(PROVIDER))
    return out


# An inquiry whose collected data fills this many fields of one article, more than of any other close
# candidate, is that article's: the caller is in its procedure (it collected what that article asks for),
# however its question is worded. Not fitted: two, so that one field any article might ask for never names
# one. But the question must still be near the subject: DATA_RELEVANCE (chosen on dev) is under the one dev
# question this concerns (relevance 0.46) and over off-topic questions (a capital city, a bread recipe, a
# car loan asked of the pets and banking KBs: 0.00-0.23); a lower relevance_threshold lowers it with it.
DATA_CANDIDATES, DATA_FIELDS, DATA_RELEVANCE = 5, 2, 0.4


def article_the_data_names(kb: KnowledgeBase, candidates: list[ArticleCandidate],
                           collected: dict[str, Any]) -> str | None:
    """The candidate article whose own fields the caller's data fills (valid values, DATA_FIELDS or more),
    strictly more of them than any other candidate's: an inquiry that comes with a "meter serial", a
    "reading date" and an "account number" is the meter article's, not the billing article's that asks
    for the account number alone. None when the data is what several candidates ask for alike, or absent."""
    if len(collected) < DATA_FIELDS:
        return None
    filled = sorted(((len(filled_fields(article_fields(kb, c.article_id), collected)), c.article_id)
                     for c in candidates), reverse=True)
    if filled and filled[0][0] >= DATA_FIELDS and (len(filled) == 1 or filled[0][0] > filled[1][0]):
        return filled[0][1]
    return None


def topic_the_data_overrules(kb: KnowledgeBase, inquiry: Inquiry, collected: dict[str, Any]) -> bool:
    """Whether the caller's data names an article of the named provider (article_the_data_names) whose topic
    is not the one a word of the question set as a filter, while it fills none of the fields of that topic's
    own articles: "...with 20 seats. Can we drop to Team?" with the plan-change article's fields collected is
    a plan change (the seats article asks for none of them), and the filter the word "seats" set would keep
    the plan-change article out of the search. Account data most articles ask for alike (a balance, a name)
    fills the named topic's article too, so it never overrules; nor does data where no provider is named."""
    topics = inquiry.detected_facets.get("topic") or []
    providers = set(inquiry.detected_facets.get(PROVIDER) or [])
    if not topics or not providers or "topic" in filter_keys(inquiry.filters) or len(collected) < DATA_FIELDS:
        return False
    own = [d for d, info in kb.docs.items() if info.structured and info.metadata.get(PROVIDER) in providers]
    if any(filled_fields(article_fields(kb, d), collected) for d in own if kb.docs[d].metadata.get("topic") in topics):
        return False
    named = article_the_data_names(kb, [ArticleCandidate(d, kb.docs[d].title, 0.0) for d in own], collected)
    return named is not None and kb.docs[named].metadata.get("topic") not in topics


def filled_fields(fields: list[FieldSpec], collected: dict[str, Any]) -> list[FieldSpec]:
    """The fields the caller's data fills with a valid value (keys compared as normalised)."""
    given = {normalize_key(k): v for k, v in collected.items()}
    return [f for f in fields if normalize_key(f.key) in given
            and validate_value(f.data_type, given[normalize_key(f.key)], f.words)[0]]


def article_the_data_fits(kb: KnowledgeBase, tied: list[str], collected: dict[str, Any]) -> str | None:
    """Of parallel articles, the one whose own fields the caller has filled in with valid values: a name as
    booked and a name as on the passport are one airline's name-correction fields, so the caller is already
    in that procedure and the provider need not be asked. Only a field no other tied article asks for counts,
    and not one the other article words differently ("delay at arrival" / "arrival delay" are one datum)."""
    per = {a: article_fields(kb, a) for a in tied}
    wording = {a: {frozenset(term_set(f.key.replace("_", " "))) for f in fs} for a, fs in per.items()}
    fit: dict[str, int] = {}
    for a, fields in per.items():
        others = set().union(*(w for b, w in wording.items() if b != a))
        fit[a] = sum(1 for f in filled_fields(fields, collected)
                     if frozenset(term_set(f.key.replace("_", " "))) not in others)
    winners = [a for a, n in fit.items() if n]
    return winners[0] if len(winners) == 1 else None


def conflicting_articles(ranked: list[ArticleCandidate], metadata: dict[str, dict[str, Any]]) -> list[str]:
    """Articles that claim exactly the best one's facets (same topic, record keeper, plan type) and rank
    close to it: two articles governing one inquiry may contradict each other, so neither is trusted
    to bind the answer with its rules, and the answer goes to review."""
    if len(ranked) < 2:
        return []
    best = ranked[0]
    best_md = metadata.get(best.article_id, {})
    if not best_md.get("topic"):
        return []
    same = [c.article_id for c in ranked[1:] if c.score >= PARALLEL_MARGIN * best.score
            and all(metadata.get(c.article_id, {}).get(f) == best_md.get(f) for f in FACETS)]
    return same


def article_confidence(ranked: list[ArticleCandidate], relevance: float, tied: bool = False,
                       far_ahead: bool = False) -> float:
    """On the same scale as answer confidence: retrieval relevance, discounted by ambiguity.

    ambiguity = 1 for an unresolved tie, 0 for an article far ahead in the full search (article_far_ahead:
    the fused scores say nothing then); otherwise it grows as the runner-up's score approaches the
    best's (score ratio 0.7 -> 0, 1.0 -> 1). confidence = relevance * (1 - 0.5 * ambiguity).
    """
    if not ranked:
        return 0.0
    if tied:
        ambiguity = 1.0
    elif far_ahead:
        ambiguity = 0.0
    else:
        ratio = ranked[1].score / ranked[0].score if len(ranked) > 1 and ranked[0].score else 0.0
        ambiguity = max(0.0, min(1.0, (ratio - 0.7) / 0.3))
    return round(relevance * (1 - 0.5 * ambiguity), 4)


def article_fields(kb: KnowledgeBase, article_id: str) -> list[FieldSpec]:
    """The `Required data` fields an article declares, tied to the chunk each came from."""
    keep = ("key", "name", "data_type", "required", "description", "why_needed", "chunk_id", "source", "sensitive")
    return [FieldSpec(**{k: v for k, v in f.items() if k in keep and v is not None},
                      group="plan" if f.get("group") == "plan" else "participant", article_id=article_id)
            for f in kb.docs[article_id].fields]


def union_fields(per_article: dict[str, list[FieldSpec]]) -> list[FieldSpec]:
    """Fields of several articles deduplicated by key, each noting every article that asks for it."""
    out: list[FieldSpec] = []
    for article_id, fields in per_article.items():
        for f in fields:
            existing = next((e for e in out if e.key == f.key), None)
            if existing is None:
                out.append(replace(f, article_ids=[article_id]))
            else:
                existing.article_ids.append(article_id)
                existing.required = existing.required or f.required
    return out


def facet_choice_field(facet: str, choices: list[str]) -> FieldSpec:
    name = facet.replace("_", " ")
    return FieldSpec(key=facet, name=name.capitalize(), data_type="text", required=True,
                     description=f"Which {name} applies: {', '.join(choices)}.",
                     why_needed=f"The answer differs by {name}; each has its own article.", choices=choices)


NEAR_KEY = 0.8  # difflib ratio of two normalised keys: a slip of a letter or two (not chosen on an eval set)


def is_near(given: str, f: FieldSpec) -> bool:
    """`given` (a normalised key) is a slip of `f`'s key or name, or its start ("loanamount")."""
    for own in {normalize_key(f.key), normalize_key(f.name)}:
        if own.startswith(given) and len(given) >= 6:
            return True
        # a slip changes a letter or two, not the length ("date_of_birth" is no slip of "pet_date_of_birth")
        match = SequenceMatcher(None, given, own)
        if abs(len(given) - len(own)) <= 2 and match.quick_ratio() >= NEAR_KEY and match.ratio() >= NEAR_KEY:
            return True
    return False


def near_keys(fields: list[FieldSpec], strays: list[str]) -> dict[str, str]:
    """field key -> the caller's key that is a slip of it, where the slip fits that one field alone (a key
    near two fields, "beneficiary percentage" for primary and contingent, is no telling slip)."""
    near = {k: [f.key for f in fields if is_near(normalize_key(k), f)] for k in strays if normalize_key(k)}
    return {keys[0]: k for k, keys in near.items() if len(keys) == 1}


def check_collected(fields: list[FieldSpec], collected: dict[str, Any], choices: dict[str, list[str]] | None = None,
                    declared: set[str] | frozenset[str] = frozenset()
                    ) -> tuple[list[str], dict[str, str], dict[str, Any]]:
    """Missing required keys, reasons for invalid values, and the accepted values by field key.

    Keys match case- and punctuation-insensitively; a value that does not parse as the field's type
    (or is not one of a facet's choices) counts as missing, with the reason. `declared`: the keys every
    article of the KB declares (normalised), never read as a slip of one of these fields.
    """
    by_norm = {normalize_key(k): v for k, v in collected.items()}
    missing: list[str] = []
    invalid: dict[str, str] = {}
    accepted: dict[str, Any] = {}
    wanted = [facet_choice_field(k, v) for k, v in (choices or {}).items()] + fields
    known = {normalize_key(f.key) for f in wanted} | {normalize_key(f.name) for f in wanted} | set(declared)
    slips = near_keys(wanted, [k for k in collected if normalize_key(k) not in known])
    for f in wanted:
        raw = by_norm.get(normalize_key(f.key))
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            if f.required:
                missing.append(f.key)
            if (near := slips.get(f.key)) is not None:
                # a slip in a key ("vested balnce") is not guessed at, but said: asked again, the caller
                # would not see why the value given was not taken
                invalid[f.key] = masked(f"{near!r} is not a field here: give this value as {f.key!r}")
            continue
        if f.sensitive and raw == SENSITIVE_PLACEHOLDER:  # validated before, then withheld from state
            accepted[f.key] = raw
            continue
        ok, value, reason = validate_value(f.data_type, raw, f.words)
        if ok and f.choices:
            value = match_choice(str(value), f.choices)
            ok = value is not None
            reason = "" if ok else f"{raw!r} is not one of: {', '.join(f.choices)}"
        if ok:
            accepted[f.key] = value
        else:
            invalid[f.key] = "the value given is not valid" if f.sensitive else refused_value_masked(reason)
            if f.required:
                missing.append(f.key)
    return list(dict.fromkeys(missing)), invalid, accepted


def withhold_sensitive(fields: list[FieldSpec], collected: dict[str, Any]) -> dict[str, Any]:
    """Collected data as it may be kept: a valid value of a sensitive field becomes a placeholder, an
    invalid one is dropped (to be asked again); the caller's keys are kept as given."""
    sensitive = {normalize_key(f.key): f for f in fields if f.sensitive}
    out: dict[str, Any] = {}
    for key, value in collected.items():
        f = sensitive.get(normalize_key(key))
        if f is None:
            out[key] = value
        elif value == SENSITIVE_PLACEHOLDER or validate_value(f.data_type, value, f.words)[0]:
            out[key] = SENSITIVE_PLACEHOLDER
    return out


def output_fields(resolution: Resolution) -> dict[str, Any]:
    """`required_fields` as callers see it: grouped by participant/plan data (and by article on a tie)."""

    def entry(f: FieldSpec) -> dict[str, Any]:
        out = {"key": f.key, "name": display_text(f.name, 120), "data_type": f.data_type, "required": f.required,
               "description": display_text(f.description, 300), "why_needed": display_text(f.why_needed, 300),
               "article_id": f.article_id, "chunk_id": f.chunk_id}
        if f.source:
            out["source"] = f.source
        if f.key in resolution.stated:  # for the agent to confirm: never counted as collected
            out["stated_in_question"] = resolution.stated[f.key]
        if f.article_ids:
            out["article_ids"] = list(f.article_ids)
        return out

    def grouped(fields: list[FieldSpec]) -> dict[str, Any]:
        return {"participant_data": [entry(f) for f in fields if f.group != "plan"],
                "plan_data": [entry(f) for f in fields if f.group == "plan"]}

    out = grouped(resolution.fields)
    if resolution.by_article:
        out["by_article"] = {a: grouped(fields) for a, fields in resolution.by_article.items()}
    return out


def missing_data_request(resolution: Resolution, question: str) -> dict[str, Any]:
    """The interrupt payload: the fields still missing (with choices and reasons), for a person to fill."""
    fields = [facet_choice_field(f, c) for f, c in resolution.choices.items()] + resolution.fields
    wanted = [f for f in fields if f.key in resolution.missing]
    items = []
    for f in wanted:
        item = {"key": f.key, "name": display_text(f.name, 120), "data_type": f.data_type, "required": f.required,
                "description": display_text(f.description, 300), "why_needed": display_text(f.why_needed, 300),
                "choices": [display_text(c, 120) for c in f.choices],
                "stated_in_question": resolution.stated.get(f.key),
                "reason": masked(resolution.invalid.get(f.key, ""))}
        items.append({k: v for k, v in item.items() if v not in (None, "", [])})
    return {"kind": "missing_data", "question": question, "article_id": resolution.article_id,
            "candidates": resolution.tied or [resolution.article_id],
            "message": "Please provide: " + ", ".join(display_text(f.name, 120) for f in wanted) + ".", "fields": items,
            "resume_with": "Command(resume={field_key: value, ...})"}
