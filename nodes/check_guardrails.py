"""check_guardrails: verify and repair the draft, compute confidence, set the decision."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from citewise.config import Context
from citewise.llm.base import render_text
from citewise.llm.grader import grade
from citewise.nodes.common import ctx_of, kb_of, timed
from citewise.nodes.generate import context_rules
from citewise.scoring import confidence
from citewise.verify import claims_of, drop_claims, mask_pii, never_rules, strip_citations, verify

SNIPPET_CHARS = 240


def build_citations(labels: list[str], chunks: list[dict[str, Any]], kb: Any) -> list[dict[str, Any]]:
    by_label = {c["label"]: c for c in chunks}
    out = []
    for label in labels:
        c = by_label.get(label)
        if c is None:
            continue
        doc = kb.docs.get(c["doc_id"])
        snippet, _ = mask_pii(" ".join(c["text"].split())[:SNIPPET_CHARS])
        out.append({"id": label, "chunk_id": c["chunk_id"], "doc_id": c["doc_id"], "title": c["title"],
                    "chunk_type": c["chunk_type"], "tier": c["tier"], "score": round(float(c["score"]), 6),
                    "snippet": snippet, "metadata": dict(doc.metadata) if doc else {}})
    out.sort(key=lambda c: int(c["id"][1:]))
    return out


def depends_note(kb: Any, ref: dict[str, Any], missing: list[str]) -> str:
    """When parallel articles are still in play, say which one the answer follows and what decides."""
    alternatives = ref.get("alternatives") or []
    if not alternatives:
        return ""
    facet = next((f for f in missing if f in ("record_keeper", "plan_type", "topic")), "")
    ids = [ref["article_id"], *alternatives]
    values = [str(kb.docs[a].metadata.get(facet, a)) if a in kb.docs else a for a in ids]
    what = facet.replace("_", " ") if facet else "details still to collect"
    return (f"This depends on the {what} ({' or '.join(values)}); what follows is for {values[0]}. "
            f"Tell me the {what} to be sure.")


@timed("check_guardrails")
def check_guardrails(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = ctx_of(runtime)
    kb = kb_of(ctx)
    chunks = (state.get("context") or {}).get("chunks") or []
    ref = state.get("article_reference") or {}
    article_id = ref.get("article_id")
    rules = context_rules(kb, chunks)
    checked = verify((state.get("draft") or {}).get("sections") or [], chunks, rules,
                     support_threshold=ctx.support_threshold, article_id=article_id)
    meta: dict[str, Any] = {}
    if ctx.llm_model and ctx.llm_grader:
        claims = [strip_citations(checked.sections[si][kind][ii]) for si, kind, ii in claims_of(checked.sections)]
        drops = grade(ctx, claims, (state.get("context") or {}).get("text", ""),
                      never_rules({c["doc_id"] for c in chunks}, rules))
        meta["grader"] = drops.pop("_error", "ok")
        drop_claims(checked, drops)
    violations = list(checked.violations)
    blocking = checked.blocking
    if not checked.sections:
        violations.append({"rule": "empty_answer", "detail": "no supported statement is left", "action": "none"})
        blocking += 1
    critical = any(c["doc_id"] == article_id and c["tier"] == "critical" for c in chunks)
    structured = bool(ref) or any(kb.docs[c["doc_id"]].structured for c in chunks if c["doc_id"] in kb.docs)
    conf, parts = confidence(state.get("relevance") or {}, float(ref.get("confidence") or 0.0), checked.support,
                             critical, blocking, structured)
    note = depends_note(kb, ref, state.get("missing_fields") or [])
    text = render_text(checked.sections)
    return {
        "response": {"text": f"{note}\n\n{text}" if note and text else text, "sections": checked.sections},
        "citations": build_citations(checked.cited, chunks, kb),
        "guardrails": {"passed": blocking == 0, "violations": violations},
        "confidence": conf,
        "decision": "needs_data" if state.get("missing_fields") else "can_proceed",
        "feedback": [v for v in violations if v["action"] != "masked"],
        "avoid": checked.dropped,
        "unsupported_claims": checked.dropped,
        "metadata": {"confidence_parts": parts, **meta},
    }
