"""Required data: which article governs an inquiry, which fields it needs, which are still missing."""

from __future__ import annotations

from typing import Any

from citewise.kb.fields import normalize_key, validate_value

RULE_TYPES = ["required_data", "eligibility", "business_rules"]


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
            if doc in structured and doc not in order:
                order.append(doc)
            if doc in structured:
                entry = info.setdefault(doc, {"title": h["title"], "dense": 0.0, "chunks": []})
                entry["dense"] = max(entry["dense"], float(h.get("dense") or 0.0))
                if h["chunk_id"] not in entry["chunks"]:
                    entry["chunks"].append(h["chunk_id"])
        for rank, doc in enumerate(order, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    ranked = [{"article_id": d, "title": info[d]["title"], "score": round(s, 6), "dense": info[d]["dense"],
               "chunks": info[d]["chunks"][:3]} for d, s in scores.items()]
    ranked.sort(key=lambda a: (-a["score"], a["article_id"]))
    return ranked


def article_confidence(ranked: list[dict[str, Any]], relevance: float) -> float:
    """Relevance of the evidence times how clearly the best article beats the runner-up.

    dominance = s1 / (s1 + s2) maps a tie to 0.5 and a lone candidate to 1.0; rescaled to 0..1.
    """
    if not ranked:
        return 0.0
    s1 = ranked[0]["score"]
    s2 = ranked[1]["score"] if len(ranked) > 1 else 0.0
    dominance = s1 / (s1 + s2) if s1 + s2 > 0 else 0.0
    margin = max(0.0, (dominance - 0.5) * 2)
    return round(relevance * (0.6 + 0.4 * margin), 4)


def group_fields(fields: list[dict[str, Any]], article_id: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {"participant_data": [], "plan_data": []}
    for f in fields:
        entry = {k: f[k] for k in ("key", "name", "data_type", "required", "description", "why_needed")}
        entry.update(article_id=article_id, chunk_id=f.get("chunk_id"))
        out["plan_data" if f.get("group") == "plan" else "participant_data"].append(entry)
    return out


def check_collected(required_fields: dict[str, list[dict[str, Any]]],
                    collected: dict[str, Any]) -> tuple[list[str], dict[str, str], dict[str, Any]]:
    """Missing required keys, reasons for invalid values, and the accepted values by field key.

    Keys match case- and punctuation-insensitively; a value that does not parse as the field's type
    counts as missing, with the reason.
    """
    by_norm = {normalize_key(k): v for k, v in collected.items()}
    missing: list[str] = []
    invalid: dict[str, str] = {}
    accepted: dict[str, Any] = {}
    for group in ("participant_data", "plan_data"):
        for f in required_fields.get(group, []):
            raw = by_norm.get(normalize_key(f["key"]))
            if raw is None:
                if f["required"]:
                    missing.append(f["key"])
                continue
            ok, value, reason = validate_value(f["data_type"], raw)
            if ok:
                accepted[f["key"]] = value
            else:
                invalid[f["key"]] = reason
                if f["required"]:
                    missing.append(f["key"])
    return list(dict.fromkeys(missing)), invalid, accepted
