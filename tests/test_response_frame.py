"""The article's response frame says what every answer gives; the extractive answer gives it even when the
question's own words do not ask for it."""

from __future__ import annotations

from pathlib import Path

from citewise.engine.extractive import FRAME_EXTRA, MAX_COMPONENTS, frame_clauses
from citewise.engine.records import ContextChunk
from citewise.engine.verify import strip_citations

FRAME = ("Confirm the line and the account holder, explain how to get the transfer code, state how long the code "
         "is valid and how long the move takes, then explain the final bill.")
RULES = ("- To move a line to another carrier, the customer needs a transfer code and the account number.\n"
         "- Only the account holder can request a transfer code.\n"
         "- Request the transfer code in the app under Account > Transfer code, or by dialling #7678.\n"
         "- A transfer code is requested once per line; a new request replaces the previous code.\n"
         "- The transfer code expires after 7 days.\n"
         "- A move between two carriers usually completes within 24 hours.\n"
         "- The final bill is issued within 10 days after the move completes.\n"
         "- Any device balance is billed in full on the final bill.\n")


def frame_chunk(text: str, doc_id: str = "a") -> ContextChunk:
    return ContextChunk("C9", f"{doc_id}#frame", doc_id, "Moving a line", "response_frames", "critical", text)


def test_a_frame_is_read_clause_by_clause_and_what_the_agent_asks_is_no_part_of_the_answer() -> None:
    clauses = frame_clauses([frame_chunk(FRAME)], "a")
    assert clauses == ["explain how to get the transfer code", "state how long the code is valid",
                       "how long the move takes", "explain the final bill."]
    # a clause with no verb of its own goes on with the one before: asked of the caller after "confirm", given
    # after "state"
    assert frame_clauses([frame_chunk("Confirm the destination, the travel dates and the plan, state the daily "
                                      "price, the monthly cap and the steps.")], "a") == [
        "state the daily price", "the monthly cap and the steps."]
    # another article's frame is not this answer's
    assert frame_clauses([frame_chunk(FRAME, doc_id="b")], "a") == []
    # (the review) what is never given, or given only in some cases, is no point of every answer ...
    assert frame_clauses([frame_chunk("Do not quote the early termination fee; refer the customer to their "
                                      "contract. State the notice period.")], "a") == ["State the notice period."]
    assert frame_clauses([frame_chunk("If the member is a student, state the student discount. Otherwise state the "
                                      "joining fee. Never state the promotional price, explain the cap.")], "a") == [
        "explain the cap."]
    # ... a frame written as a list or with arrows is read item by item, and a date keeps its comma
    assert frame_clauses([frame_chunk("- Confirm the caller's identity\n- State the replacement fee\n- Give the "
                                      "delivery time")], "a") == ["State the replacement fee", "Give the delivery time"]
    assert frame_clauses([frame_chunk("Confirm identity → state the fee → explain the delivery time")], "a") == [
        "state the fee", "explain the delivery time"]
    assert frame_clauses([frame_chunk("Give the March 31, 2027 deadline.")], "a") == [
        "Give the March 31, 2027 deadline."]


def carrier_home(tmp_path: Path, frame: str | None, extra: str = "") -> Path:
    from citewise.kb.ingest import ingest

    src = tmp_path / "kb"
    src.mkdir(parents=True)
    (src / "move.md").write_text(
        "---\nid: move-line\ntitle: Moving a line to another carrier\ntopic: porting\n---\n"
        + (f"## Response frame\n{frame}\n\n" if frame else "")
        + f"## Business rules\n{RULES}\n## Steps\n1. Verify the caller.\n2. Give the transfer code.\n{extra}")
    ingest([src], tmp_path / "home", progress=False)
    return tmp_path / "home"


def components(home: Path, question: str) -> list[str]:
    from citewise import api

    result = api.ask(question, home=home, confidence_threshold=0.0)
    assert result["decision"] in ("can_proceed", "needs_data"), result["response"]["text"]
    return [c for s in result["response"]["sections"] for c in s["answer_components"]]


def test_the_answer_gives_the_fact_the_frame_requires_though_the_question_does_not_ask_it(tmp_path) -> None:
    """"How do I get a transfer code?" is answered with how; the frame says an answer also tells how long the
    code is valid, which the question's words never reach (the sentence says "expires", not "valid")."""
    question = "How do I request a transfer code to move my line to another carrier?"
    framed = components(carrier_home(tmp_path / "framed", FRAME), question)
    assert any("expires after 7 days" in c for c in framed), framed
    assert len(framed) <= MAX_COMPONENTS + FRAME_EXTRA
    plain = components(carrier_home(tmp_path / "plain", None), question)
    assert not any("expires after 7 days" in c for c in plain), plain  # without the frame: the question alone
    assert len(framed) <= len(plain) + FRAME_EXTRA


def test_a_question_with_an_ask_of_its_own_is_answered_by_what_it_asks(tmp_path) -> None:
    """(the review) "Can I ...?" or "how much ...?" is not completed by the frame's other points."""
    home = carrier_home(tmp_path, FRAME)
    for question in ("Can only the account holder request a transfer code?",
                     "How long does a move between two carriers take?"):
        assert not any("expires after 7 days" in c for c in components(home, question)), question


def test_a_frame_that_only_asks_the_caller_adds_nothing(tmp_path) -> None:
    question = "How do I request a transfer code to move my line to another carrier?"
    asking = components(carrier_home(tmp_path / "asking", "Confirm how long the code is valid and check the "
                                                          "final bill."), question)
    plain = components(carrier_home(tmp_path / "plain", None), question)
    assert [strip_citations(c) for c in asking] == [strip_citations(c) for c in plain]


def test_a_worked_example_is_no_frame_point_s_fact(tmp_path) -> None:
    """(the review) a case's outcome ("a customer who ... got a refund of $12") is not the answer's fact."""
    example = "## Examples\nA customer who moved in May got a refund of $12 on the final bill.\n"
    question = "How do I request a transfer code to move my line to another carrier?"
    got = components(carrier_home(tmp_path, "Explain how to get the transfer code, then state the refund.", example),
                     question)
    assert not any("refund of $12" in c for c in got), got
