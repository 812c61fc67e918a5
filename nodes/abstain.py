"""abstain: the knowledge base does not cover the question; say so instead of guessing."""

from __future__ import annotations

import json
import re
from typing import Any

from langgraph.runtime import Runtime

from citewise.config import Context
from citewise.kb.text import STOPWORDS, words
from citewise.nodes.common import ctx_of, kb_of, timed
from citewise.verify import mask_pii

MESSAGE = "I don't have information about that in this knowledge base."


def subject_words(question: str) -> list[str]:
    """The question's content words, personal data masked first and numbers left out: these are
    echoed back to the user and must not repeat an SSN or an email address."""
    masked, _ = mask_pii(question)
    masked = re.sub(r"\[[A-Z_]+\]", " ", masked)
    return list(dict.fromkeys(w for w in words(masked) if w not in STOPWORDS and len(w) > 2 and not w.isdigit()))


@timed("abstain")
def abstain(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    kb = kb_of(ctx_of(runtime))
    subject = " ".join(subject_words(state["question"])[:8]) or state["question"]
    topics = [t.replace("_", " ") for t in kb.facets.get("topic", [])]
    suggestion = f"To answer it, ingest articles that cover: {subject}."
    covered = f" This knowledge base covers: {', '.join(topics[:12])}." if topics else ""
    scope = ""
    if state.get("filters"):
        scope = f" (I searched only documents matching the filter {json.dumps(state['filters'], sort_keys=True)}.)"
    text = f"{MESSAGE}{scope} {suggestion}{covered}"
    return {"decision": "out_of_scope", "confidence": float((state.get("relevance") or {}).get("score", 0.0)),
            "response": {"text": text, "sections": []}, "citations": [], "article_reference": None,
            "required_fields": {"participant_data": [], "plan_data": []}, "missing_fields": [],
            "needs_review": False,
            "metadata": {"abstain_reason": "retrieval found nothing relevant", "suggested_content": subject}}
