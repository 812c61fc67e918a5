"""extract_required_data: pick the governing article and list the data to collect for it.

With `interrupt_on_missing_data`, missing fields pause the graph (LangGraph `interrupt`); the run
resumes with Command(resume={field: value}), values are validated, and the article is resolved
again (a record keeper chosen on resume changes which article governs).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from citewise.config import Context
from citewise.kb.fields import normalize_key
from citewise.knowledge import KnowledgeBase
from citewise.nodes.common import ctx_of, kb_of, timed
from citewise.nodes.search import search
from citewise.query import combine_filters, filter_keys
from citewise.required import (
    FACETS,
    RULE_TYPES,
    article_confidence,
    check_collected,
    facet_choice_field,
    group_fields,
    parallel_articles,
    rank_articles,
    union_fields,
)


def chosen_facets(kb: KnowledgeBase, collected: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """Facet values given as collected data ('record_keeper': 'acme retirement'), matched to the KB's."""
    chosen, invalid = {}, {}
    by_norm = {normalize_key(k): v for k, v in collected.items()}
    for facet in FACETS:
        raw = by_norm.get(normalize_key(facet))
        if raw is None:
            continue
        match = next((v for v in kb.facets.get(facet, []) if normalize_key(v) == normalize_key(str(raw))), None)
        if match is None:
            invalid[facet] = f"{raw!r} is not a known {facet.replace('_', ' ')}"
        else:
            chosen[facet] = match
    return chosen, invalid


def resolve(kb: KnowledgeBase, ctx: Context, state: dict[str, Any], collected: dict[str, Any]) -> dict[str, Any]:
    chosen, bad_facets = chosen_facets(kb, collected)
    facet_filters = combine_filters(state.get("facet_filters") or {}, chosen)
    view = {**state, "facet_filters": facet_filters}
    rule_hits, _, _, _ = search(kb, ctx, view, extra_filter={"chunk_type": {"$in": RULE_TYPES}}, k=20)
    hits, rel, used, relaxed = search(kb, ctx, view, k=20)
    structured = {d for d, info in kb.docs.items() if info.structured}
    ranked = rank_articles([rule_hits, hits], structured)
    covered = bool(ranked) and rel["score"] >= ctx.relevance_threshold
    out: dict[str, Any] = {"ranked": ranked, "relevance": rel, "filters": used, "relaxed": relaxed,
                           "facet_filters": facet_filters, "covered": covered}
    if not out["covered"]:
        return out
    pinned = filter_keys(state.get("filters") or {}) | filter_keys(facet_filters)
    tied, deciding = parallel_articles(ranked, {d: kb.docs[d].metadata for d in structured}, pinned)
    best = ranked[0]
    if tied:
        fields = union_fields({a: group_fields(kb.docs[a].fields, a) for a in tied})
        choices = {f: sorted({str(kb.docs[a].metadata.get(f)) for a in tied}) for f in deciding}
    else:
        fields = group_fields(kb.docs[best["article_id"]].fields, best["article_id"])
        choices = {}
        if ctx.llm_model and ctx.llm_required_fields:
            from citewise.llm.required_fields import implied_fields

            known = [f["key"] for g in fields.values() for f in g]
            extra, notes = implied_fields(ctx, state["question"], best["title"], kb.chunks_of(best["article_id"]),
                                          known)
            extra_groups = group_fields(extra, best["article_id"])
            for group in ("participant_data", "plan_data"):
                fields[group].extend(extra_groups[group])
            out["model_fields"] = {"added": [f["key"] for f in extra], **notes}
    missing, invalid, _ = check_collected(fields, collected, choices)
    out.update(best=best, tied=tied, choices=choices, fields=fields, missing=missing,
               invalid={**bad_facets, **invalid},
               confidence=article_confidence(ranked, rel["score"], tied=bool(tied)))
    return out


def interrupt_payload(r: dict[str, Any], question: str) -> dict[str, Any]:
    fields = [facet_choice_field(f, c) for f, c in r["choices"].items()]
    fields += [f for g in ("participant_data", "plan_data") for f in r["fields"][g]]
    wanted = [dict(f, reason=r["invalid"].get(f["key"], "")) for f in fields if f["key"] in r["missing"]]
    return {"kind": "missing_data", "question": question, "article_id": r["best"]["article_id"],
            "candidates": r["tied"] or [r["best"]["article_id"]],
            "message": "Please provide: " + ", ".join(f["name"] for f in wanted) + ".",
            "fields": [{k: f.get(k) for k in ("key", "name", "data_type", "required", "description", "why_needed",
                                              "choices", "reason") if f.get(k) not in (None, "")} for f in wanted],
            "resume_with": "Command(resume={field_key: value, ...})"}


@timed("extract_required_data")
def extract_required_data(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = ctx_of(runtime)
    kb = kb_of(ctx)
    collected = dict(state.get("collected_data") or {})
    rounds = 0
    while True:
        r = resolve(kb, ctx, state, collected)
        if not (ctx.interrupt_on_missing_data and r["covered"] and r["missing"]):
            break
        reply = interrupt(interrupt_payload(r, state["question"]))
        rounds += 1
        if isinstance(reply, dict):
            collected.update({str(k): v for k, v in reply.items() if v not in (None, "")})

    update: dict[str, Any] = {"article_candidates": r["ranked"][:5], "collected_data": collected,
                              "facet_filters": r["facet_filters"]}
    if r["covered"]:
        best = r["best"]
        update.update(article_reference={"article_id": best["article_id"], "title": best["title"],
                                         "confidence": r["confidence"], "alternatives": r["tied"][1:]},
                      required_fields=r["fields"], missing_fields=r["missing"], invalid_fields=r["invalid"])
    if state.get("mode") == "required_data":
        if not r["covered"]:
            update.update(decision="out_of_scope", confidence=r["relevance"]["score"])
        else:
            update.update(decision="needs_data" if r["missing"] else "can_proceed", confidence=r["confidence"])
    candidates = [(a["article_id"], round(a["score"], 5)) for a in r["ranked"][:5]]
    update["metadata"] = {"required_data": {"relevance": r["relevance"], "filters": r["filters"],
                                            "facets_relaxed": r["relaxed"], "candidates": candidates,
                                            "tied": r.get("tied", []), "interrupts": rounds,
                                            **({"model_fields": r["model_fields"]} if "model_fields" in r else {})}}
    return update
