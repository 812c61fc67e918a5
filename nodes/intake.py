"""intake: validate the inputs, pin the KB snapshot, understand the question (engine.inquiry)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from ..config import Context
from ..engine.inquiry import understand
from ..engine.outcomes import EMPTY_FIELDS, start_metadata
from ..engine.records import dump
from .common import ctx_of, node, open_snapshot, run_info


@node("intake")
def intake(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    ctx = ctx_of(runtime)
    kb = open_snapshot(ctx)  # pinned: every later node opens this generation
    inquiry = understand(kb, ctx, state, run_info().access)  # the caller's access rides in the inquiry
    return {  # a thread can carry several runs: every output starts fresh; personal data is masked
        "question": inquiry.question, "collected_data": inquiry.collected_data, "mode": inquiry.mode,
        "inquiry": dump(inquiry), "kb_generation": kb.generation, "model_seconds": Overwrite(0.0),
        "decision": "uncertain", "confidence": 0.0, "response": {"text": "", "sections": []}, "citations": [],
        "article_reference": None, "required_fields": dict(EMPTY_FIELDS), "missing_fields": [], "invalid_fields": {},
        "guardrails": {"passed": True, "violations": []}, "needs_review": False, "review": {"dropped": []},
        "artifact": None,
        "resolution": None, "retrieval": None, "context": None, "draft": None, "verdict": None, "feedback": None,
        "attempts": 0,
        "metadata": Overwrite(start_metadata(inquiry, ctx, kb.generation)),
    }
