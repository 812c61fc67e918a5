"""Required data: which article governs an inquiry, which fields it needs, which are still missing.

When the best articles are parallel versions of one procedure (same topic, differing only in facets
the question did not name, e.g. two record keepers' rollover articles), the governing article cannot
be chosen yet: the union of their fields is returned grouped by article and the facet to choose
becomes the first missing field.
"""

from __future__ import annotations

from typing import Any

from citewise.kb.fields import normalize_key, validate_value

RULE_TYPES = ["required_data", "eligibility", "business_rules"]
FACETS = ("record_keeper", "plan_type", "topic")
PARALLEL_MARGIN = 0.85  # a parallel article within this share of the best score is a tie


def rank_articles(rankings: list[list[dict[str, Any]]], structured: set[str], k: int = 10) -> list[dict[str, Any]]:
    """Article candidates from several chunk rankings by document-level reciprocal rank fusion.

    Each ranking lists a document at the rank of its best chunk; a document's score is the sum of
    1 / (k + rank) over rankings. A small k rewards being first, which is what choosing one
    governing article needs. Only structured articles (front matter) can govern an inquiry.
    """
    scores: dict[str, float] = {}
    info: dict[str, dict[str, Any]] = {}
    for hits in rankings:
        order: list[str] = []
        for h in hits:
            doc = h["doc_id"]
            if doc not in structured:
                continue
            if doc not in order:
                order.append(doc)
            entry = info.setdefault(doc, {"title": h["title"], "chunks": []})
            if h["chunk_id"] not in entry["chunks"]:
                entry["chunks"].append(h["chunk_id"])
        for rank, doc in enumerate(order, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    ranked = [{"article_id": d, "title": info[d]["title"], "score": round(s, 6), "chunks": info[d]["chunks"][:3]}
              for d, s in scores.items()]
    ranked.sort(key=lambda a: (-a["score"], a["article_id"]))
    return ranked


def parallel_articles(ranked: list[dict[str, Any]], metadata: dict[str, dict[str, Any]],
                      pinned: set[str]) -> tuple[list[str], list[str]]:
    """Articles tied with the best one, and the facets that would decide between them.

    Tied = same topic as the best article, different only in facets the question left open, and a
    score within PARALLEL_MARGIN of the best. Different topics are different inquiries, not a tie.
    """
    if len(ranked) < 2:
        return [], []
    best = ranked[0]
    best_md = metadata.get(best["article_id"], {})
    tied, deciding = [best["article_id"]], []
    for cand in ranked[1:]:
        if cand["score"] < PARALLEL_MARGIN * best["score"]:
            break
        md = metadata.get(cand["article_id"], {})
        differs = [f for f in FACETS if md.get(f) != best_md.get(f)]
        if differs and "topic" not in differs and not set(differs) & pinned:
            tied.append(cand["article_id"])
            deciding.extend(f for f in differs if f not in deciding)
    return (tied, deciding) if len(tied) > 1 else ([], [])


def article_confidence(ranked: list[dict[str, Any]], relevance: float, tied: bool = False) -> float:
    """On the same scale as answer confidence: retrieval relevance, discounted by ambiguity.

    ambiguity = 1 for an unresolved tie; otherwise it grows as the runner-up's score approaches the
    best's (score ratio 0.7 -> 0, 1.0 -> 1). confidence = relevance * (1 - 0.5 * ambiguity).
    """
    if not ranked:
        return 0.0
    if tied:
        ambiguity = 1.0
    else:
        ratio = ranked[1]["score"] / ranked[0]["score"] if len(ranked) > 1 and ranked[0]["score"] else 0.0
        ambiguity = max(0.0, min(1.0, (ratio - 0.7) / 0.3))
    return round(relevance * (1 - 0.5 * ambiguity), 4)


def group_fields(fields: list[dict[str, Any]], article_id: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {"participant_data": [], "plan_data": []}
    for f in fields:
        entry = {k: f[k] for k in ("key", "name", "data_type", "required", "description", "why_needed")}
        entry.update(article_id=article_id, chunk_id=f.get("chunk_id"))
        if f.get("source"):
            entry["source"] = f["source"]
        out["plan_data" if f.get("group") == "plan" else "participant_data"].append(entry)
    return out


def union_fields(per_article: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """Fields of several articles: deduplicated by key (noting every article that asks for it), plus the
    per-article grouping under `by_article`."""
    out: dict[str, Any] = {"participant_data": [], "plan_data": [], "by_article": per_article}
    for article_id, groups in per_article.items():
        for group in ("participant_data", "plan_data"):
            for f in groups[group]:
                existing = next((e for e in out[group] if e["key"] == f["key"]), None)
                if existing is None:
                    out[group].append({**f, "article_ids": [article_id]})
                else:
                    existing["article_ids"].append(article_id)
                    existing["required"] = existing["required"] or f["required"]
    return out


def facet_choice_field(facet: str, choices: list[str]) -> dict[str, Any]:
    name = facet.replace("_", " ")
    return {"key": facet, "name": name.capitalize(), "data_type": "text", "required": True,
            "description": f"Which {name} applies: {', '.join(choices)}.",
            "why_needed": f"The answer differs by {name}; each has its own article.", "choices": choices}


def check_collected(required_fields: dict[str, Any], collected: dict[str, Any],
                    choices: dict[str, list[str]] | None = None) -> tuple[list[str], dict[str, str], dict[str, Any]]:
    """Missing required keys, reasons for invalid values, and the accepted values by field key.

    Keys match case- and punctuation-insensitively; a value that does not parse as the field's type
    (or is not one of a facet's choices) counts as missing, with the reason.
    """
    by_norm = {normalize_key(k): v for k, v in collected.items()}
    missing: list[str] = []
    invalid: dict[str, str] = {}
    accepted: dict[str, Any] = {}
    fields = [f for group in ("participant_data", "plan_data") for f in required_fields.get(group, [])]
    fields = [facet_choice_field(k, v) for k, v in (choices or {}).items()] + fields
    for f in fields:
        raw = by_norm.get(normalize_key(f["key"]))
        if raw is None:
            if f["required"]:
                missing.append(f["key"])
            continue
        ok, value, reason = validate_value(f["data_type"], raw)
        if ok and f.get("choices"):
            match = next((c for c in f["choices"] if normalize_key(c) == normalize_key(str(value))), None)
            ok, value = match is not None, match
            reason = "" if ok else f"{raw!r} is not one of: {', '.join(f['choices'])}"
        if ok:
            accepted[f["key"]] = value
        else:
            invalid[f["key"]] = reason
            if f["required"]:
                missing.append(f["key"])
    return list(dict.fromkeys(missing)), invalid, accepted
