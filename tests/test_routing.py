from __future__ import annotations

from types import SimpleNamespace

from citewise.config import Context
from citewise.engine.records import Artifact, ArtifactHeading, Draft, Relevance, Retrieval, Verdict, dump
from citewise.graphs.kb_agent import (
    route_after_artifact,
    route_after_context,
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
    # the caller's collected data is the governing article's fields: its context is assembled; no hits, none
    named = {"resolution": {"named_by_data": True}}
    assert route_after_retrieve({**_retrieved(1, 0.2), **named}, rt(relevance_threshold=0.5)) == "assemble_context"
    assert route_after_retrieve({**_retrieved(0, 0.2), **named}, rt(relevance_threshold=0.5)) == "abstain"


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
    assert route_after_guardrails(_checked(True, 0.7, 1), rt(confidence_threshold=0.7)) == "record"
    assert route_after_guardrails(_checked(True, 0.95, 1, ["the amount"]), rt()) == "uncertain"


def test_artifact_mode_builds_an_artifact_instead_of_an_answer() -> None:
    assert route_after_context({"mode": "artifact"}) == "build_artifact"
    assert route_after_context({"mode": "answer"}) == "generate"
    assert route_after_required_data({"mode": "artifact"}) == "retrieve"


def _built(*, cannot: bool = False, steps: bool = True, passed: bool = True, confidence: float = 0.9,
           attempts: int = 1) -> dict:
    headings = [ArtifactHeading("Before you start", ["x [C1]"], False),
                ArtifactHeading("Steps", ["y [C2]"] if steps else [], not steps)]
    return {"draft": dump(Draft(cannot_answer=cannot)), "artifact": dump(Artifact("workflow", "t", headings)),
            "guardrails": {"passed": passed}, "confidence": confidence, "attempts": attempts}


def test_an_artifact_routes_like_an_answer_and_abstains_without_core_content() -> None:
    assert route_after_artifact(_built(), rt()) == "record"
    assert route_after_artifact(_built(cannot=True), rt()) == "abstain"
    assert route_after_artifact(_built(passed=False), rt(max_regenerations=1)) == "build_artifact"
    assert route_after_artifact(_built(passed=False, attempts=2), rt(max_regenerations=1)) == "uncertain"
    assert route_after_artifact(_built(confidence=0.5), rt(confidence_threshold=0.7)) == "uncertain"
    # "Before you start" is not core to a workflow: with no steps left after verification it abstains.
    assert route_after_artifact(_built(steps=False, passed=False, attempts=2), rt()) == "abstain"
    assert route_after_artifact(_built(steps=False, passed=False), rt()) == "build_artifact"


def test_the_uncertain_reason_prints_a_confidence_that_reads_below_its_threshold() -> None:
    """0.6286 printed to two places read "confidence 0.63 is below the 0.63 threshold"."""
    from citewise.engine.outcomes import below

    assert below(0.6286, 0.63) == "0.629 is below the 0.630"
    assert below(0.5, 0.63) == "0.50 is below the 0.63"
    assert below(0.62999, 0.63) == "0.62999 is below the 0.63000"
