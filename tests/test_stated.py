"""Values the question states beside a field's name are shown for the agent to confirm (engine/stated.py);
never counted as collected."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise import api
from citewise.engine.records import FieldSpec
from citewise.engine.stated import stated_data

FIELDS = [FieldSpec("vested_balance", "Vested balance", "currency", True),
          FieldSpec("monthly_rent", "Monthly rent", "currency", True),
          FieldSpec("deposit_amount", "Deposit amount", "currency", True),
          FieldSpec("arrival_delay", "Arrival delay", "number", True, "Hours late at arrival."),
          FieldSpec("outstanding_loan_balance", "Outstanding loan balance", "currency", True),
          FieldSpec("years_of_service", "Years of service", "number", True),
          FieldSpec("number_of_tenants", "Number of tenants", "number", True),
          FieldSpec("separation_date", "Separation date", "date", True),
          FieldSpec("loan_purpose", "Loan purpose", "text", True),
          FieldSpec("account_number", "Account number", "number", True, sensitive=True)]


@pytest.mark.parametrize(("question", "expected"), [
    ("My vested balance is $40,000. Can I borrow?", {"vested_balance": "$40,000"}),
    ("I have a vested balance of about £12,500 and 6 years of service.",
     {"vested_balance": "£12,500", "years_of_service": "6"}),
    ("vested balance: 40k, outstanding loan balance $0", {"vested_balance": "40k", "outstanding_loan_balance": "$0"}),
    ("We are 3 tenants on the lease.", {"number_of_tenants": "3"}),
    ("My separation date was March 3, 2026.", {"separation_date": "March 3, 2026"}),
    ("separation date 2026-03-01, what now?", {"separation_date": "2026-03-01"}),
    # one word of the name that tells the field apart, and an amount said per month
    ("Rent's £820pm and the deposit was £900.", {"monthly_rent": "£820pm", "deposit_amount": "£900"}),
    ("We got in 3.5 hrs late; the arrival delay was 3.5 hours.", {"arrival_delay": "3.5 hours"}),
    # a figure after the value that is not another of its kind: still read
    ("My vested balance is $40,000 and 6 years of service.", {"vested_balance": "$40,000", "years_of_service": "6"}),
    ("Separation date 2026-03-01, and I'm 58.", {"separation_date": "2026-03-01"}),
    # (second review) a figure after ", and" that is no list: the first value has no "for ..." of its own
    ("Years of service: 6, and 3 tenants on the lease.", {"years_of_service": "6", "number_of_tenants": "3"}),
    ("My rent is £820, and £900 was the deposit.", {"monthly_rent": "£820"}),
])
def test_a_value_beside_the_fields_name_is_taken(question: str, expected: dict[str, str]) -> None:
    assert stated_data(question, FIELDS, {}) == expected


@pytest.mark.parametrize("question", [
    "Can I borrow if my vested balance is under $2,000?",  # a threshold asked about, not the balance
    "My vested balance is not $40,000, it was wrong on the statement.",  # negated
    "My vested balance is $40,000, no wait, my vested balance is $45,000.",  # two values: ask
    "Is the minimum vested balance $2,000 or more?",  # no link word: a rule asked about
    "Loan purpose is 2 cars.",  # a text field's value cannot be told from its words
    "My account number is 12345678.",  # sensitive: never read from the question
    "The balance is $5,000.",  # not the field's whole name: which balance?
    "Is there a charge once rent is over £1,000?",  # a bound
    "Do I need 5 years of service to be fully vested?",  # what is required
    "My sister's vested balance is $80,000; what about mine?",  # someone else's case
    "Rent is £700, sorry I mean the rent is £750.",  # corrected: asked, not guessed
    "The arrival delay was 2 km.",  # not the field's unit
    # one of a list, each someone's or something's (a review's message: "30 lbs" was shown)
    "The arrival delay was 3 hours for the first leg and 5 hours for the second.",
    "Rent is £820 (flat A), £760 (flat B).",
    "The arrival delay was 3 hours for the very first leg, and 5 hours for the second.",  # (review)
])
def test_no_value_is_taken_where_it_is_not_the_fields_own(question: str) -> None:
    assert stated_data(question, FIELDS, {}) == {}


def test_one_figure_beside_two_names_is_no_ones() -> None:
    """"vested balance and outstanding loan balance of $5,000": which has it is not said."""
    fields = [FieldSpec("loan_balance", "Loan balance", "currency", True),
              FieldSpec("outstanding_loan_balance", "Outstanding loan balance", "currency", True)]
    assert stated_data("my outstanding loan balance of $5,000", fields, {}) == {}


def test_the_callers_data_wins() -> None:
    assert stated_data("My vested balance is $40,000.", FIELDS, {"Vested Balance": "41000"}) == {}


def test_stated_values_are_shown_for_the_agent_to_confirm(kb_home: Path) -> None:
    """The question's values prefill the fields (and an interrupt's form), but the decision rests on the data
    the caller sends: a value read out of free text is shown, never counted as collected."""
    question = ("My vested balance is $40,000 and my outstanding loan balance is $0. What do you need for an "
                "Acme 401(k) loan?")
    out = api.ask(question, home=kb_home, mode="required_data")
    assert out["article_reference"]["article_id"] == "acme-401k-loan"
    fields = {f["key"]: f for g in ("participant_data", "plan_data") for f in out["required_fields"][g]}
    assert fields["vested_balance"]["stated_in_question"] == "$40,000"
    assert fields["outstanding_loan_balance"]["stated_in_question"] == "$0"
    assert "stated_in_question" not in fields["loan_purpose"]
    assert {"vested_balance", "outstanding_loan_balance"} <= set(out["missing_fields"])
    given = api.ask(question, home=kb_home, mode="required_data", collected_data={"vested_balance": "$38,000"})
    fields = {f["key"]: f for g in ("participant_data", "plan_data") for f in given["required_fields"][g]}
    assert "stated_in_question" not in fields["vested_balance"]  # the caller's $38,000 is the value
    assert "vested_balance" not in given["missing_fields"]
    paused = api.ask(question, home=kb_home, interrupt_on_missing_data=True)
    form = {f["key"]: f for f in paused["interrupt"]["fields"]}
    assert paused["status"] == "interrupted" and form["vested_balance"]["stated_in_question"] == "$40,000"


def test_the_values_shown_are_right_on_blind_probes() -> None:
    """Two probes written blind (evals/stated.py): a value shown for the agent to confirm is the message's
    own value of that field; most values are not found (only a field's name, or its head word, right beside a
    value is read), which costs the agent a question, not a wrong answer."""
    from citewise.evals.stated import evaluate

    report = evaluate()
    assert all(report[p]["precision"] >= 0.9 for p in ("probe1 dev", "probe1 test", "probe2")), report
    assert report["review"]["precision"] >= 0.85, report  # written against the code to draw wrong values
    assert report["probe1 test"]["right"] >= 3 and report["probe2"]["right"] >= 1, report


@pytest.mark.parametrize(("question", "fields"), [
    ("My vested balance is $1.2 million.", [FieldSpec("vested_balance", "Vested balance", "currency", True)]),
    ("Our arrival delay was 3 hours 40 minutes.", [FieldSpec("arrival_delay", "Arrival delay", "number", True,
                                                              "Hours late.")]),
    ("The late fee was $25 this month.", [FieldSpec("monthly_fee", "Monthly fee", "currency", True)]),
    ("The proposed rent is £1,050 from June.", [FieldSpec("current_rent", "Current rent", "currency", True)]),
    ("Our household income is $1,800 a month.", [FieldSpec("annual_household_income", "Annual household income",
                                                            "currency", True, "Income per year.")]),
    ("My vested balance is $40,000 to $45,000.", [FieldSpec("vested_balance", "Vested balance", "currency", True)]),
    ("My vested balance was $40,000 in January; it's less now.",
     [FieldSpec("vested_balance", "Vested balance", "currency", True)]),
    ("Suppose the vested balance is $40,000: what's the max loan?",
     [FieldSpec("vested_balance", "Vested balance", "currency", True)]),
    ("My vested balance is $٤٠٬٠٠٠.", [FieldSpec("vested_balance", "Vested balance", "currency", True)]),
    ("The parcel weight is 40 x 30 x 20 cm.", [FieldSpec("parcel_weight", "Parcel weight", "number", True, "kg")]),
    ("Our plan includes 50,000 API calls per month.", [FieldSpec("api_calls", "API calls this month", "number",
                                                                 True)]),
    # the word of a sensitive field makes "member" no telling word for the count of members
    ("Member: 55123456. Can I add my wife?", [FieldSpec("member_number", "Member number", "text", True,
                                                        sensitive=True),
                                              FieldSpec("number_of_members", "Number of members", "number", True)]),
    ("Members: 55123456.", [FieldSpec("number_of_members", "Number of members", "number", True)]),  # an id
    # (a second review)
    ("You need a combined average balance of $5,000 and mine is $4,200.",
     [FieldSpec("combined_average_balance", "Combined average balance", "currency", True)]),
    ("The SAP minimum is a cumulative GPA of 2.0 and mine is 1.85.",
     [FieldSpec("cumulative_gpa", "Cumulative GPA", "number", True)]),
    ("The fee amount is €12 and I'm disputing a direct debit of €340.",
     [FieldSpec("amount", "Amount", "currency", True)]),
    ("Leave start date 1 April 2025 - actually, make that April 2nd.",
     [FieldSpec("leave_start_date", "Leave start date", "date", True)]),
    ("Miles driven: about 340, maybe 360.", [FieldSpec("miles_driven", "Miles driven", "number", True)]),
])
def test_a_review_s_wrong_values_are_not_shown(question: str, fields: list[FieldSpec]) -> None:
    """(A review: 63 of 114 values its adversarial messages drew were wrong; on the same messages now 2 of 19,
    both arguable.)"""
    assert stated_data(question, fields, {}) == {}
