"""Does the answer state what the question asks? Words that name the question's type are not its subject."""

from __future__ import annotations

from citewise.engine.answerability import assess, focus_terms, question_type
from citewise.engine.outcomes import subject_words


def test_the_words_of_a_question_type_are_not_its_focus() -> None:
    assert question_type("How much does the plan charge to set up a loan?") == "amount"
    assert "charg" not in focus_terms("How much does the plan charge to set up a loan?", set(), "amount")
    assert focus_terms("How long does a rollover take?", set(), "duration") == ["rollov"]
    assert "much" not in subject_words("How much does the plan charge?")  # never echoed as "not covered"


def test_an_amount_question_is_answered_by_an_amount_about_its_subject() -> None:
    question = "How much does the plan charge to set up a loan?"
    topic = {"loan"}  # a facet: it selected the article, so it does not count as the answer's subject
    assert assess(question, ["Loan setup fee: $100."], "", topic).ok  # "set up" / "setup", charge / fee
    missing = assess(question, ["Loans are repaid by payroll deduction."], "", set()).missing
    assert missing and missing[0].startswith("the amount")  # no amount: still not answered
    assert not assess("How much is the wire transfer charge?", ["Loan setup fee: $100."], "", set()).ok


def test_a_duration_question_is_answered_by_a_duration() -> None:
    sent = ["Rollovers are sent within 3 business days."]
    assert assess("How long does a rollover take?", sent, "", {"rollov"}).ok  # "take" asks how long, nothing more
    assert not assess("How long does a rollover take?", ["Rollovers need a signed form."], "", set()).ok
