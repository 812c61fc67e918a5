from __future__ import annotations

from types import SimpleNamespace

from citewise.config import Context
from citewise.engine.records import Draft, Relevance, Retrieval, Verdict, dump
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
    assert route_after_required_data({"mode": "required_data"}) == "__end__"
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


def _checked(passed: bool, confidence: float, attempts: int, unanswered: list[str] | None = None) -> dict:
    verdict = Verdict(sections=[], citations=[], violations=[], passed=passed, confidence=confidence, parts={},
                      unanswered=unanswered or [])
    return {"verdict": dump(verdict), "attempts": attempts}


def test_failed_check_regenerates_once_then_goes_uncertain() -> None:
    assert route_after_guardrails(_checked(False, 0.9, 1), rt(max_regenerations=1)) == "generate"
    assert route_after_guardrails(_checked(False, 0.9, 2), rt(max_regenerations=1)) == "uncertain"
    assert route_after_guardrails(_checked(False, 0.9, 1), rt(max_regenerations=0)) == "uncertain"


def test_low_confidence_or_an_unanswered_question_is_uncertain_else_end() -> None:
    assert route_after_guardrails(_checked(True, 0.69, 1), rt(confidence_threshold=0.7)) == "uncertain"
    assert route_after_guardrails(_checked(True, 0.7, 1), rt(confidence_threshold=0.7)) == "__end__"
    assert route_after_guardrails(_checked(True, 0.95, 1, ["the amount"]), rt()) == "uncertain"
