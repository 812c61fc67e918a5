from __future__ import annotations

from types import SimpleNamespace

from citewise.config import Context
from citewise.graphs.kb_agent import route_after_guardrails, route_after_required_data, route_after_retrieve


def rt(**ctx: object) -> SimpleNamespace:
    return SimpleNamespace(context=Context(**ctx))


def test_required_data_mode_ends_after_extraction() -> None:
    assert route_after_required_data({"mode": "required_data"}) == "__end__"
    assert route_after_required_data({"mode": "answer"}) == "retrieve"


def test_nothing_relevant_abstains() -> None:
    assert route_after_retrieve({"hits": [], "relevance": {"score": 0.9}}, rt()) == "abstain"
    assert route_after_retrieve({"hits": [{}], "relevance": {"score": 0.2}}, rt(relevance_threshold=0.5)) == "abstain"
    assert route_after_retrieve({"hits": [{}], "relevance": {"score": 0.6}}, rt(relevance_threshold=0.5)) == \
        "assemble_context"


def test_failed_check_regenerates_once_then_goes_uncertain() -> None:
    failed = {"guardrails": {"passed": False}, "confidence": 0.9}
    assert route_after_guardrails({**failed, "attempts": 1}, rt(max_regenerations=1)) == "generate"
    assert route_after_guardrails({**failed, "attempts": 2}, rt(max_regenerations=1)) == "uncertain"
    assert route_after_guardrails({**failed, "attempts": 1}, rt(max_regenerations=0)) == "uncertain"


def test_low_confidence_is_uncertain_else_end() -> None:
    passed = {"guardrails": {"passed": True}, "attempts": 1}
    assert route_after_guardrails({**passed, "confidence": 0.69}, rt(confidence_threshold=0.7)) == "uncertain"
    assert route_after_guardrails({**passed, "confidence": 0.7}, rt(confidence_threshold=0.7)) == "__end__"
