"""uncertain: keep what is supported, say what is missing, and flag the answer for review."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from citewise.config import Context
from citewise.kb.text import stem, term_set
from citewise.llm.base import render_text
from citewise.nodes.abstain import subject_words
from citewise.nodes.common import ctx_of, timed


@timed("uncertain")
def uncertain(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = ctx_of(runtime)
    reasons: list[str] = []
    guard = state.get("guardrails") or {"passed": True, "violations": []}
    if not guard.get("passed", True):
        dropped = [v for v in guard["violations"] if v["action"] in ("dropped", "removed", "none")]
        reasons.append(f"{len(dropped)} statement(s) failed verification and were removed")
    conf = float(state.get("confidence") or 0.0)
    if conf < ctx.confidence_threshold:
        reasons.append(f"confidence {conf:.2f} is below the {ctx.confidence_threshold:.2f} threshold")
    context_terms: set[str] = set()
    for c in (state.get("context") or {}).get("chunks") or []:
        context_terms |= term_set(c["text"] + " " + c["title"])
    uncovered = [w for w in subject_words(state["question"]) if stem(w) not in context_terms]
    missing_parts = []
    if uncovered:
        missing_parts.append("the knowledge base says nothing about: " + ", ".join(uncovered[:8]))
    if state.get("missing_fields"):
        missing_parts.append("data still to collect: " + ", ".join(state["missing_fields"]))
    sections = (state.get("response") or {}).get("sections") or []
    head = "I'm not certain this fully answers the question (" + "; ".join(reasons or ["low evidence"]) + ")."
    if missing_parts:
        head += " Missing: " + "; ".join(missing_parts) + "."
    body = render_text(sections)
    unsupported = list(dict.fromkeys(state.get("unsupported_claims") or []))
    text = head + ("\n\nWhat the knowledge base does support:\n" + body if body else "")
    if unsupported:
        text += "\n\nNot supported by the knowledge base (removed):\n" + "\n".join(f"- {u}" for u in unsupported)
    return {"decision": "uncertain", "needs_review": True,
            "response": {"text": text, "sections": sections, "unsupported": unsupported},
            "metadata": {"uncertain_reasons": reasons, "uncovered_terms": uncovered}}
