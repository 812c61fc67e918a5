"""Required data that drives the conversation: ties, validation, interrupts and resumable threads."""

from __future__ import annotations

import os
import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pexpect
import pytest
from typing_extensions import TypedDict

from citewise import api
from citewise.config import Context
from citewise.errors import InputError
from tests.paths import ROOT

ROLLOVER = "How do I roll over my 401(k)?"
ACME_ROLLOVER = {"separation_date": "2026-03-31", "receiving_institution": "Example Bank",
                 "receiving_account_type": "Traditional IRA", "date_of_birth": "1960-05-01",
                 "vested_balance": "$40,000"}


def field_keys(result: dict[str, Any]) -> set[str]:
    return {f["key"] for g in ("participant_data", "plan_data") for f in result["required_fields"][g]}


def test_parallel_articles_return_the_union_and_ask_for_the_facet(kb_home: Path) -> None:
    out = api.ask(ROLLOVER, home=kb_home, mode="required_data")
    ref = out["article_reference"]
    assert {ref["article_id"], *ref["alternatives"]} == {"acme-401k-rollover", "harborview-401k-rollover"}
    assert out["missing_fields"][0] == "record_keeper" and out["decision"] == "needs_data"
    assert set(out["required_fields"]["by_article"]) == {"acme-401k-rollover", "harborview-401k-rollover"}
    assert "company_stock_held" in field_keys(out)  # Harborview-only field is part of the union
    shared = next(f for f in out["required_fields"]["participant_data"] if f["key"] == "separation_date")
    assert sorted(shared["article_ids"]) == ["acme-401k-rollover", "harborview-401k-rollover"]
    pinned = api.ask(ROLLOVER, home=kb_home, mode="required_data", collected_data={"Record Keeper": "acme retirement"})
    assert pinned["article_reference"]["article_id"] == "acme-401k-rollover"
    assert "record_keeper" not in pinned["missing_fields"] and "company_stock_held" not in field_keys(pinned)
    assert pinned["article_reference"]["confidence"] > ref["confidence"]  # resolving the tie raises confidence
    answer = api.ask(ROLLOVER, home=kb_home)
    assert answer["response"]["text"].startswith("This depends on the record keeper")
    assert "depends" not in api.ask("How do I roll over my Acme 401(k)?", home=kb_home)["response"]["text"]


def test_invalid_values_count_as_missing_with_a_reason(kb_home: Path) -> None:
    out = api.ask("What data do we need before processing an Acme 401(k) loan?", home=kb_home,
                  mode="required_data", collected_data={"vested balance": "lots", "LOAN-AMOUNT-REQUESTED": "5000",
                                                        "record_keeper": "Vanguard"})
    assert "vested_balance" in out["missing_fields"] and "loan_amount_requested" not in out["missing_fields"]
    assert "not an amount" in out["invalid_fields"]["vested_balance"]
    assert "not a known record keeper" in out["invalid_fields"]["record_keeper"]


def test_an_unknown_record_keeper_is_said_back_without_its_digits(kb_home: Path) -> None:
    """A number in the record keeper's place may be an SSN typed in the wrong box, and a bare one is not
    masked as personal data (figures are not): the reason names the value without its digits."""
    for given in (123456789, "123456789", "Acme 4111 1111 1111 1111"):
        out = api.ask("What data do we need before processing an Acme 401(k) loan?", home=kb_home,
                      mode="required_data", collected_data={"record_keeper": given})
        reason = out["invalid_fields"]["record_keeper"]
        assert "not a known record keeper" in reason and "[NUMBER]" in reason, reason
        assert not any(run in reason for run in ("1234", "4111")), reason


def test_a_refused_value_is_said_back_without_a_bare_long_number(kb_home: Path) -> None:
    """A nine-digit number in a date field is likelier an SSN than a date: the reason names the field's
    type, not the number; a malformed date of its own shape is still quoted, to be seen and mended."""
    for given in (123456789, "123456789", "5551234567", "123.45.6789"):
        out = api.ask("How do I roll over my Acme 401(k)?", home=kb_home, mode="required_data",
                      collected_data={**ACME_ROLLOVER, "separation_date": given})
        reason = out["invalid_fields"]["separation_date"]
        assert "not a date" in reason and "[NUMBER]" in reason and str(given)[:5] not in reason, reason
    out = api.ask("How do I roll over my Acme 401(k)?", home=kb_home, mode="required_data",
                  collected_data={**ACME_ROLLOVER, "separation_date": "2026-13-45"})
    assert "'2026-13-45' is not a date" in out["invalid_fields"]["separation_date"]


def test_dates_may_be_given_as_date_objects(kb_home: Path) -> None:
    """A Python caller's date (or YAML's unquoted 2026-03-31) is a date, not a refused type."""
    given = {**ACME_ROLLOVER, "separation_date": date(2026, 3, 31), "date_of_birth": datetime(1960, 5, 1, 9, 30)}
    out = api.ask("How do I roll over my Acme 401(k)?", home=kb_home, mode="required_data", collected_data=given)
    assert out["decision"] == "can_proceed" and not out["missing_fields"] and not out["invalid_fields"]
    with pytest.raises(InputError, match="string, number, boolean or date"):
        api.ask("How do I roll over my Acme 401(k)?", home=kb_home, collected_data={"separation_date": [2026]})


def test_interrupt_and_resume_through_the_python_api(kb_home: Path) -> None:
    first = api.ask(ROLLOVER, home=kb_home, interrupt_on_missing_data=True)
    assert first["status"] == "interrupted"
    request = first["interrupt"]
    assert request["fields"][0]["key"] == "record_keeper"
    assert request["fields"][0]["choices"] == ["Acme Retirement", "Harborview Recordkeeping"]
    assert all({"key", "name", "data_type", "why_needed"} <= set(f) for f in request["fields"])
    again = api.resume(first["thread_id"], {"record_keeper": "Acme Retirement", **ACME_ROLLOVER,
                                            "date_of_birth": "someday"}, home=kb_home)
    assert again["status"] == "interrupted" and [f["key"] for f in again["interrupt"]["fields"]] == ["date_of_birth"]
    assert "not a date" in again["interrupt"]["fields"][0]["reason"]
    done = api.resume(first["thread_id"], {"date_of_birth": date(1960, 5, 1)}, home=kb_home)  # a date object too
    assert done["status"] == "done" and done["decision"] == "can_proceed"
    assert done["article_reference"]["article_id"] == "acme-401k-rollover" and done["citations"]
    with pytest.raises(InputError, match="not waiting"):
        api.resume(first["thread_id"], {}, home=kb_home)
    with pytest.raises(InputError, match="no thread"):
        api.resume("no-such-thread", {}, home=kb_home)


class Parent(TypedDict, total=False):
    question: str
    decision: str
    missing_fields: list[str]


def test_interrupts_surface_through_a_parent_graph_with_its_own_checkpointer(kb_home: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command

    from citewise.graphs.kb_agent import build_graph

    parent = StateGraph(Parent, context_schema=Context)
    parent.add_node("kb_agent", build_graph())
    parent.add_edge(START, "kb_agent")
    parent.add_edge("kb_agent", END)
    app = parent.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "parent-1"}}
    ctx = Context(home=str(kb_home), interrupt_on_missing_data=True)
    out = app.invoke({"question": ROLLOVER}, config, context=ctx)
    assert out["__interrupt__"][0].value["fields"][0]["key"] == "record_keeper"
    assert app.get_state(config, subgraphs=True).tasks[0].state.next == ("extract_required_data",)
    out = app.invoke(Command(resume={"record_keeper": "Harborview Recordkeeping", **ACME_ROLLOVER}), config,
                     context=ctx)
    assert out["decision"] == "can_proceed" and out["missing_fields"] == []


def _spawn(*args: str, home: Path) -> pexpect.spawn:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    return pexpect.spawn(sys.executable, ["-m", "citewise.cli", *args, "--home", str(home)], cwd=str(ROOT), env=env,
                         encoding="utf-8", timeout=120)


def test_cli_interactive_then_pause_and_resume_later(kb_home: Path) -> None:
    child = _spawn("ask", ROLLOVER, "--interactive", home=kb_home)
    child.expect(r"Record keeper \(type its number or name\)")
    child.expect(r"2\) Harborview Recordkeeping")
    child.sendline("harborview recordkeeping")
    child.expect(r"Separation date \(date\)")
    child.sendline("not a date")
    child.expect("'not a date' is not a date")  # asked again at once, not after a round trip
    child.sendline("")
    for _ in range(4):
        child.expect(r"\n> ")
        child.sendline("")  # leave the rest for later
    child.expect(r"Please provide: Separation date")  # Harborview's article, asked again
    child.expect(r"\n> ")
    child.sendeof()
    child.expect(r"citewise resume ([0-9a-f]+)")
    thread_id = child.match.group(1)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    later = _spawn("resume", thread_id, *[x for k, v in ACME_ROLLOVER.items() for x in ("--data", f"{k}={v}")],
                   home=kb_home)
    later.expect("Decision: can_proceed")
    later.expect("Article: harborview-401k-rollover")
    later.expect(pexpect.EOF)
    later.close()
    assert later.exitstatus == 0


def test_model_implied_fields_are_cited_or_dropped(kb_home: Path) -> None:
    from tests.openai_standin import OpenAIStandIn

    implied = {"fields": [
        {"key": "employment_status", "name": "Employment status", "data_type": "text", "group": "participant",
         "description": "Active or separated.", "why_needed": "only active employees can borrow", "citation": "C1"},
        {"key": "favorite_color", "name": "Favorite color", "data_type": "text", "citation": "C42"}]}
    with OpenAIStandIn() as llm:
        llm.script = [{"json": implied}]
        out = api.ask("What do we need for a Summit 403(b) loan?", home=kb_home, mode="required_data",
                      llm_model="standin-model", llm_base_url=llm.base_url)
        prompt = llm.chat_requests()[0]["body"]["messages"][0]["content"]
    added = [f for f in out["required_fields"]["participant_data"] if f.get("source") == "model"]
    assert [f["key"] for f in added] == ["employment_status"] and added[0]["chunk_id"].startswith("summit-403b-loan#")
    assert "favorite_color" not in field_keys(out)
    assert "vested_balance" in prompt and "not instructions" in prompt


def test_data_collected_for_one_of_parallel_articles_settles_the_tie(kb_home: Path) -> None:
    """A caller who has filled in Harborview's own rollover field (company stock held) is in Harborview's
    procedure: the record keeper is not asked again. Data both articles need settles nothing."""
    shared = {"separation_date": "2026-03-31", "receiving_institution": "Example Bank"}
    tie = api.ask(ROLLOVER, home=kb_home, mode="required_data", collected_data=shared)
    assert tie["missing_fields"][0] == "record_keeper"
    own = api.ask(ROLLOVER, home=kb_home, mode="required_data",
                  collected_data={**shared, "company_stock_held": True})
    assert own["article_reference"]["article_id"] == "harborview-401k-rollover"
    assert "record_keeper" not in own["missing_fields"] and not own["article_reference"].get("alternatives")
    # an invalid value, or a provider named but unknown, settles nothing (review)
    bad = api.ask(ROLLOVER, home=kb_home, mode="required_data",
                  collected_data={**shared, "company_stock_held": "maybe"})
    assert bad["missing_fields"][0] == "record_keeper"
    unknown = api.ask(ROLLOVER, home=kb_home, mode="required_data",
                      collected_data={**shared, "record_keeper": "Vanguard", "company_stock_held": True})
    assert "record_keeper" in unknown["missing_fields"] and unknown["article_reference"].get("alternatives")


def test_one_datum_worded_two_ways_settles_no_tie(tmp_path: Path) -> None:
    """"Delay at arrival" (one airline's field) and "Arrival delay" (the other's) are the same datum: giving
    it says nothing about which airline the caller flew."""
    from citewise.kb.ingest import ingest

    src = tmp_path / "kb"
    src.mkdir()
    for rk, key, own in (("Aurelis Air", "Delay at arrival", "Meal voucher code"),
                         ("Cindervale Air", "Arrival delay", "Horizons number")):
        slug = rk.split()[0].lower()
        (src / f"{slug}.md").write_text(
            f"---\nid: {slug}-delay\ntitle: {rk} delay compensation\nrecord_keeper: {rk}\ntopic: delays\n---\n"
            "## Business rules\n- A delay of 3 hours or more earns a voucher.\n"
            f"## Required data\n- {key} (number, required, participant): Hours late at arrival. Why: sets the band.\n"
            f"- {own} (text, required, participant): Our own reference. Why: pays the voucher.\n")
    ingest([src], tmp_path / "home", progress=False)
    question = "My flight arrived late. What compensation do I get?"
    same = api.ask(question, home=tmp_path / "home", mode="required_data", collected_data={"delay_at_arrival": 5})
    assert same["missing_fields"][0] == "record_keeper", same["missing_fields"]
    own = api.ask(question, home=tmp_path / "home", mode="required_data",
                  collected_data={"delay_at_arrival": 5, "horizons_number": "H-123"})
    assert own["article_reference"]["article_id"] == "cindervale-delay" and "record_keeper" not in own["missing_fields"]


def test_an_article_without_rule_sections_is_not_outranked_for_it(tmp_path: Path) -> None:
    """An author who titled the rules "24-hour free cancellation" instead of "Business rules" wrote no
    rule-type section: the article used to be missing from the rule ranking and lost to any article with
    one (here, baggage claims, which mention refunds and 24 hours too)."""
    from citewise.kb.ingest import ingest

    src = tmp_path / "kb"
    src.mkdir()
    (src / "cancel.md").write_text(
        "---\nid: cv-cancellation\ntitle: Cancelling a Cindervale ticket\nrecord_keeper: Cindervale Air\n"
        "topic: refund\n---\n## 24-hour free cancellation\nAny ticket can be cancelled within 24 hours of buying "
        "it for a full refund of the money paid.\n## Refund or eCredit\nAfter 24 hours, a cancelled ticket "
        "earns an eCredit valid for 18 months.\n")
    for i, topic in enumerate(("delayed bags", "damaged bags", "lost bags")):
        (src / f"bags{i}.md").write_text(
            f"---\nid: cv-bags-{i}\ntitle: Cindervale {topic}\nrecord_keeper: Cindervale Air\ntopic: bags_{i}\n---\n"
            f"## Business rules\n- Report {topic} within 24 hours of landing to get your money back for "
            "essentials.\n- Refunds of essentials are paid within 7 days.\n"
            "## Required data\n- Bag tag (text, required, participant): The tag number. Why: finds the bag.\n")
    ingest([src], tmp_path / "home", progress=False)
    out = api.ask("Can I cancel my ticket within 24 hours of buying it and get all my money back?",
                  home=tmp_path / "home", mode="required_data")
    assert out["article_reference"]["article_id"] == "cv-cancellation", out["article_reference"]


def test_a_stand_in_rank_moves_no_other_article() -> None:
    """An article without rule sections takes its full-search rank in the rule ranking without pushing the
    rule leader down (review: inserting it there moved B from first to second in that ranking)."""
    from types import SimpleNamespace

    from citewise.engine.resolve import rank_articles

    def hit(doc: str) -> SimpleNamespace:
        return SimpleNamespace(doc_id=doc, title=doc, chunk_id=f"{doc}#0")

    rankings, orders = [[hit("B"), hit("C")], [hit("A"), hit("B"), hit("C")]], [["B", "C", "A"]]
    before = {a.article_id: a.score for a in rank_articles(rankings, {"A", "B", "C"}, orders=orders)}
    after = {a.article_id: a.score for a in rank_articles(rankings, {"A", "B", "C"}, orders=orders, stand_ins={"A": 1})}
    assert after["B"] == before["B"] and after["C"] == before["C"]
    assert after["A"] == round(before["A"] + 1 / 11, 6)  # A: as if first in the rule ranking (k = 10)


def test_collected_data_that_is_one_article_s_fields_names_the_article(tmp_path: Path) -> None:
    """A question worded far from every article ("itchy skin flared up last winter... could that be paid
    for?") is out of scope on its words; with the data the pre-existing-conditions article asks for (four of
    its fields, three more than the claims article fills), the caller is in that procedure: its article governs,
    through the plain pipeline and through the graph, and the answer cites it instead of abstaining. Data
    every article asks for (a member number) names none."""
    from citewise.engine.pipeline import answer
    from citewise.graphs.kb_agent import graph
    from citewise.kb.ingest import ingest

    src = tmp_path / "kb"
    src.mkdir()
    member = "- Member number (text, required, participant): The policy member number. Why: finds the policy.\n"
    (src / "pre.md").write_text(
        "---\nid: fenwick-pre-existing\ntitle: Pre-existing conditions at Fenwick Pet Cover\nrecord_keeper: Fenwick "
        "Pet Cover\ntopic: pre_existing\n---\n## Business rules\n- A condition with signs or treatment before the "
        "policy start date is pre-existing and excluded.\n- A curable pre-existing condition can be reconsidered "
        "after 12 symptom-free months: request a Clean Slate review.\n## Required data\n" + member +
        "- Condition (text, required, participant): The condition to review. Why: the review is per condition.\n"
        "- Last treatment date (date, required, participant): When signs or treatment last happened. Why: starts "
        "the 12 months.\n- Policy start date (date, required, plan): When cover began. Why: decides what is "
        "pre-existing.\n")
    (src / "claims.md").write_text(
        "---\nid: fenwick-claims\ntitle: Submitting a claim to Fenwick Pet Cover\nrecord_keeper: Fenwick Pet Cover\n"
        "topic: claims\n---\n## Business rules\n- Claims are submitted within 90 days of treatment with the "
        "itemised invoice.\n- Fenwick pays 80% of eligible costs after the annual excess.\n## Required data\n"
        + member + "- Invoice total (currency, required, participant): The invoice total. Why: sets the payment.\n")
    ingest([src], tmp_path / "home", progress=False)
    question = ("Biscuit's itchy skin flared up last winter, before I joined Fenwick in March. Nothing since. Could "
                "that ever be paid for now?")
    data = {"member_number": "FW-1", "condition": "itchy skin", "last_treatment_date": "2024-12-01",
            "policy_start_date": "2025-03-01"}
    assert api.ask(question, home=tmp_path / "home")["decision"] == "out_of_scope"
    assert api.ask(question, home=tmp_path / "home", collected_data={"member_number": "FW-1", "note": "x"}
                   )["decision"] == "out_of_scope"  # one generic field names nothing
    # (the review) an off-topic question that comes with the article's data stays out of scope: the data
    # names an article only for a question near its subject
    assert api.ask("What is the capital of France?", home=tmp_path / "home", collected_data={
        "member_number": "FW-1", "policy_start_date": "2025-03-01"})["decision"] == "out_of_scope"
    # (the second review) nor when it cannot govern: the caller names a provider the KB does not have (the
    # field list too is out of scope, not the pre-existing article's)
    for mode in ("answer", "required_data"):
        assert api.ask(question, home=tmp_path / "home", mode=mode, collected_data={
            **data, "record_keeper": "Nowhere Insurance"})["decision"] == "out_of_scope", mode
    for out in (answer(question, home=tmp_path / "home", collected_data=data),
                graph.invoke({"question": question, "collected_data": data},
                             context=Context(home=str(tmp_path / "home")))):
        assert out["decision"] != "out_of_scope", out["decision"]
        assert out["article_reference"]["article_id"] == "fenwick-pre-existing", out["article_reference"]
        assert "Clean Slate review" in out["response"]["text"], out["response"]["text"]


def test_the_callers_data_outranks_a_topic_one_word_of_the_question_names(tmp_path: Path) -> None:
    """"We have 20 seats. Can we drop to Team?" names the topic "seats" by a word, and that topic's filter
    keeps the plan-change article out of the search; but the data collected is the plan-change article's
    (a blind SaaS KB's dev half): the data decides. Without the data, the words do."""
    from citewise.kb.ingest import ingest

    src = tmp_path / "kb"
    src.mkdir()
    head = "---\nid: {id}\ntitle: {title}\nrecord_keeper: Quillstone\ntopic: {topic}\n---\n"
    (src / "plan.md").write_text(head.format(id="plan-change", title="Changing plans", topic="plan_change")
                                 + "## Business rules\n- An annual downgrade takes effect at renewal.\n"
                                 "## Required data\n- Current plan (text, required, plan): The plan now.\n"
                                 "- Requested plan (text, required, participant): The plan wanted.\n"
                                 "- Billing cycle (text, required, plan): Monthly or annual.\n")
    (src / "seats.md").write_text(head.format(id="seat-changes", title="Adding and removing seats", topic="seats")
                                  + "## Business rules\n- Seats can be added at any time; on annual plans seats "
                                  "drop only at renewal.\n- Minimum paid seats: 3 on Team.\n")
    ingest([src], tmp_path / "home", progress=False)
    question = "We're on Quillstone Business with 20 seats. Can we drop to Team now?"
    data = {"current_plan": "Business", "requested_plan": "Team", "billing_cycle": "annual"}
    out = api.ask(question, home=tmp_path / "home", collected_data=data)
    assert out["article_reference"]["article_id"] == "plan-change" and out["decision"] == "can_proceed", out
    plain = api.ask(question, home=tmp_path / "home")
    assert plain["article_reference"]["article_id"] == "seat-changes", plain["article_reference"]


def test_account_data_most_articles_ask_for_does_not_overrule_the_question(kb_home: Path) -> None:
    """(Review) A balance and an employment status fill the loan article's fields, but the rollover, RMD and
    hardship articles ask for some of them too: the question's topic stands."""
    data = {"vested_balance": "40000", "outstanding_loan_balance": "0", "employment_status": "active"}
    for question, article in (("How do I roll over my Acme 401(k)?", "acme-401k-rollover"),
                              ("What are the RMD rules for my Acme 401(k)?", "acme-401k-rmd"),
                              ("Can I take a hardship withdrawal from my Acme 401(k)?",
                               "acme-401k-hardship-withdrawal")):
        out = api.ask(question, home=kb_home, collected_data=data)
        assert out["article_reference"]["article_id"] == article, (question, out["article_reference"])
