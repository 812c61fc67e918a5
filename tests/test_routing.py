from __future__ import annotations

from types import SimpleNamespace

from citewise.config import Context
from citewise.engine.records import Draft, Relevance, Retrieval, dump
from citewise.graphs.kb_agent import (
    route_after_generate,
    route_after_guardrails,
    route_after_required_data,
    route_after_retrieve,
)
from citewise.retrieval.passage import Passage


def rt(**ctx: object) -> SimpleNamespace:
    return SimpleNamespace(context=Context(**ctx))


def test_required_data_mode_ends_after_extraction() -> None:
    assert route_after_required_data({"mode": "required_data"}) == "record"
    assert route_after_required_data({"mode": "answer"}) == "retrieve"


def _retrieved(hits: int, score: float) -> dict:
    passage = Passage(chunk_id="c", doc_id="d", title="t", section="", chunk_type="content", tier="medium", text="x")
    return {"retrieval": dump(Retrieval(hits=[passage] * hits, relevance=Relevance(score=score)))}


def test_nothing_relevant_abstains() -> None:
    assert route_after_retrieve(_retrieved(0, 0.9), rt()) == "abstain"
    assert route_after_retrieve(_retrieved(1, 0.2), rt(relevance_threshold=0.5)) == "abstain"
    assert route_after_retrieve(_retrieved(1, 0.6), rt(relevance_threshold=0.5)) == "assemble_context"


def test_a_model_that_cannot_answer_abstains() -> None:
    assert route_after_generate({"draft": dump(Draft(cannot_answer=True, reason="no fee for 2031"))}) == "abstain"
    assert route_after_generate({"draft": dump(Draft())}) == "check_guardrails"


def test_failed_check_regenerates_once_then_goes_uncertain() -> None:
    failed = {"guardrails": {"passed": False}, "confidence": 0.9}
    assert route_after_guardrails({**failed, "attempts": 1}, rt(max_regenerations=1)) == "generate"
    assert route_after_guardrails({**failed, "attempts": 2}, rt(max_regenerations=1)) == "uncertain"
    assert route_after_guardrails({**failed, "attempts": 1}, rt(max_regenerations=0)) == "uncertain"


def test_low_confidence_is_uncertain_else_end() -> None:
    passed = {"guardrails": {"passed": True}, "attempts": 1}
    assert route_after_guardrails({**passed, "confidence": 0.69}, rt(confidence_threshold=0.7)) == "uncertain"
    assert route_after_guardrails({**passed, "confidence": 0.7}, rt(confidence_threshold=0.7)) == "record"
