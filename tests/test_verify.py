from __future__ import annotations

import pytest

from citewise.engine.privacy import mask_pii
from citewise.engine.records import ContextChunk, Section
from citewise.engine.verify import citations_in, strip_citations, support_score, verify

CHUNKS = [
    ContextChunk(label="C1", chunk_id="d1#0", doc_id="d1", chunk_type="decision_guide", title="Rollovers",
                 tier="critical",
                 text="A direct rollover has no withholding. Indirect rollovers must be completed within 60 days."),
    ContextChunk(label="C2", chunk_id="d1#1", doc_id="d1", chunk_type="guardrails", title="Rollovers", tier="critical",
                 text='- Never say: "tax-free"\n- Always: mention the 20% withholding on indirect rollovers.'),
]
RULES = {"d1": {"never_say": ["tax-free"], "never": [],
                "always": ["mention the 20% withholding on indirect rollovers."]}}


def _section(components: list[str], warnings: list[str] | None = None) -> list[Section]:
    return [Section(topic="t", answer_components=components, warnings=warnings or [])]


def _verify(sections: list[Section]):
    return verify(sections, CHUNKS, RULES, support_threshold=0.5, article_id="d1")


def test_valid_answer_passes_and_missing_always_rule_is_added() -> None:
    out = _verify(_section(["A direct rollover has no withholding. [C1]"]))
    assert out.blocking == 0 and out.cited == ["C1", "C2"]
    assert out.sections[0].warnings == ["Mention the 20% withholding on indirect rollovers. [C2]"]
    assert [v.rule for v in out.violations] == ["always_missing"]


def test_invalid_citation_is_removed_and_reported() -> None:
    out = _verify(_section(["A direct rollover has no withholding. [C1] [C99]"]))
    assert out.sections[0].answer_components == ["A direct rollover has no withholding. [C1]"]
    assert out.violations[0].rule == "invalid_citation" and out.blocking == 1


def test_claims_without_citation_or_support_or_with_never_say_are_dropped() -> None:
    out = _verify(_section(["No citation here.", "Bitcoin is a great retirement investment. [C1]",
                            "A direct rollover is tax-free. [C1]",
                            "Indirect rollovers must be completed within 60 days. [C1]"]))
    assert out.sections[0].answer_components == ["Indirect rollovers must be completed within 60 days. [C1]"]
    assert {v.rule for v in out.violations} >= {"uncited_claim", "unsupported_claim", "never_say"}
    assert out.blocking == 3 and len(out.dropped) == 3


def test_support_score() -> None:
    assert support_score("direct rollovers have no withholding", [CHUNKS[0].text]) == 1.0
    assert support_score("crypto yields guaranteed returns", [CHUNKS[0].text]) == 0.0
    assert support_score("indirect rollovers are not completed within 60 days", [CHUNKS[0].text]) < 0.9


@pytest.mark.parametrize("text,kind,masked", [
    ("SSN 123-45-6789 on file", "ssn", "SSN [SSN] on file"),
    ("ssn: 123456789", "ssn", "ssn: [SSN]"),
    ("account number 0012345678", "account_number", "account number [ACCOUNT_NUMBER]"),
    ("routing number: 021000021", "routing_number", "routing number: [ROUTING_NUMBER]"),
    ("mail jane.doe@example.com", "email", "mail [EMAIL]"),
    ("call (555) 123-4567", "phone", "call [PHONE]"),
    # other countries' numbers (a probe's "0412 555 019" was stored unmasked in the query log)
    ("my mobile is 0412 555 019", "phone", "my mobile is [PHONE]"),
    ("call +44 20 7946 0958 today", "phone", "call [PHONE] today"),
    ("text 07700 900123", "phone", "text [PHONE]"),
    ("ring +61 412 555 019", "phone", "ring [PHONE]"),
    # (the review) more countries' forms, and numbers one after another, each masked whole
    ("call (020) 7946 0958", "phone", "call [PHONE]"), ("+44 (0)20 7946 0958", "phone", "[PHONE]"),
    ("030 12345678", "phone", "[PHONE]"), ("0049 30 12345678", "phone", "[PHONE]"),
    ("+91 98765 43210", "phone", "[PHONE]"), ("mobile 0412555019", "phone", "mobile [PHONE]"),
    ("Tel 020 7946 0958 020 7946 0959", "phone", "Tel [PHONE] [PHONE]"),
    ("call 020 7946 0958 0900-1700 weekdays", "phone", "call [PHONE] 0900-1700 weekdays"),
    ("mine are 0412 555 019 0412 555 020", "phone", "mine are [PHONE] [PHONE]"),
    ("My date of birth is 04/12/1961.", "date_of_birth", "My date of birth is [DATE_OF_BIRTH]."),
    ("DOB: 1961-04-12", "date_of_birth", "DOB: [DATE_OF_BIRTH]"),
    ("I was born on April 12, 1961", "date_of_birth", "I was born on [DATE_OF_BIRTH]"),
    ("born 12 April 1961", "date_of_birth", "born [DATE_OF_BIRTH]"),
    ("date of birth (mm/dd/yyyy): 04/12/1961", "date_of_birth", "date of birth (mm/dd/yyyy): [DATE_OF_BIRTH]"),
    # a card number as printed, in groups (it went through unmasked: a probe found it)
    ("my card 4111 1111 1111 1111.", "card_or_account", "my card [NUMBER]."),
    ("card 5500-0000-0000-0004 was charged", "card_or_account", "card [NUMBER] was charged"),
    ("Amex 3782 822463 10005", "card_or_account", "Amex [NUMBER]"),
    ("My card 4111 1111 1111 1111, expiring 12/27", "card_or_account", "My card [NUMBER], expiring 12/27"),
    # (the second review) cards of 13 to 15 digits printed in fours
    ("amex 3782 8224 6310 005", "card_or_account", "amex [NUMBER]"),
    ("visa 4222 2222 2222 2", "card_or_account", "visa [NUMBER]"),
    # (the third review) a card followed by its expiry or code, or printed with no-break spaces
    ("card 4111 1111 1111 1111 12/27 declined", "card_or_account", "card [NUMBER] 12/27 declined"),
    ("4111 1111 1111 1111 123 is the CVV", "card_or_account", "[NUMBER] 123 is the CVV"),
    ("card 4111\u00a01111\u00a01111\u00a01111", "card_or_account", "card [NUMBER]"),
    # (the fifth review) a card before a small count or an expiry written with a space
    ("card 4111 1111 1111 1111 2 days ago", "card_or_account", "card [NUMBER] 2 days ago"),
    ("card 4111 1111 1111 1111 12 27", "card_or_account", "card [NUMBER] 12 27"),
])
def test_personal_data_is_masked(text: str, kind: str, masked: str) -> None:
    out, kinds = mask_pii(text)
    assert out == masked and kind in kinds


def test_amounts_dates_and_plan_names_are_not_personal_data() -> None:
    text = "Borrow up to $50,000 (50%) by 2026-05-01 from a 401(k) over 60 days; 1,000 hours."
    assert mask_pii(text) == (text, [])
    for text in ("Due 01-02-2026, or on 05 10 2026.", "Version 0.12.3 is pinned.", "BSB 633-104.",
                 "Sort code 04-00-04.", "Plan years 2024-2026.", "1 000 000 000 users", "250 000 500 000 EUR",
                 "IBAN DE89 3704 0044 0532 0130 00", "Open 0800 to 1700 hours, or 0800-1700."):
        assert mask_pii(text) == (text, [])  # a date, a version, a bank's code: too few digits for a phone
    for text in ("Participants born in 1961 may take catch-up contributions.", "The deadline is April 15, 2026.",
                 "Participants born on January 1, 1960 or later start RMDs at age 75."):
        assert mask_pii(text) == (text, [])  # a birth year or a date that is nobody's birth date
    # (the review: a run of years passed the check digit 1 time in 7, "2017 2018 2019 2020" was masked)
    for text in ("Plan years 2017 2018 2019 2020 are covered.", "Plan years 2021 2022 2023 apply.",
                 "Codes 1000 2000 3000 4000 apply.", "Pages 1000 1010 1020 1030.",
                 # (the fourth review) years before a count
                 "Filed for 2020 2021 2022 2023 10 claims.", "In 2022 2023 2024 15 claims."):
        assert mask_pii(text) == (text, [])  # grouped digits whose check digit fails are no card


def test_only_c_labels_are_citations_and_a_list_cites_each() -> None:
    assert citations_in("Install with pip install httpx[http2] [C3]") == ["C3"]
    assert strip_citations("Install with pip install httpx[http2] [C3]") == "Install with pip install httpx[http2]"
    assert citations_in("Both say so [C1, C2].") == ["C1", "C2"]
    out = _verify(_section(["Indirect rollovers must be completed within 60 days [C1, C2]."]))
    assert out.blocking == 0 and out.cited[:2] == ["C1", "C2"]


def test_a_word_for_word_quote_of_whole_sentences_is_entailed_however_many_it_spans() -> None:
    """An FAQ entry is quoted with its question ("My toilet ran all month. Does that count? Yes - ..."): three
    sentences of the cited text, as written, which no two-sentence window covers. Part of a sentence is
    not such a quote: it can leave out the negation that governs it."""
    from citewise.engine.entailment import entails, quotes_whole_sentences

    faq = ("**Q:** My toilet ran all month. Does that count?\n**A:** Yes, a running toilet is a fixture failure. "
           "Only the 50% water credit applies; there is no sewer credit.")
    quote = "My toilet ran all month. Does that count? Yes, a running toilet is a fixture failure."
    assert quotes_whole_sentences(quote, [faq]) and entails(quote, [faq]).ok
    # a changed word, a flipped negation or a number is no longer the quote, and the window check decides
    assert not quotes_whole_sentences(quote.replace("Yes,", "No,"), [faq])
    assert not entails("Only the 50% water credit applies; there is a sewer credit.", [faq]).ok
    assert not entails("My toilet ran all month. Does that count? Yes, a running toilet is a fixture failure. "
                       "Only the 80% water credit applies.", [faq]).ok
    # part of a sentence is not a whole-sentence quote
    assert not quotes_whole_sentences("there is a sewer credit", ["It is not true that there is a sewer credit."])
    # (the review) marks and symbols are part of a quote: a moved full stop or a changed currency is not it
    assert not entails("No refunds are issued within 5 days.", ["A: No. Refunds are issued within 5 days."]).ok
    assert not entails("You can't cancel online instead.", ["You can't. Cancel online instead."]).ok
    assert not entails("The fee is 5%.", ["The fee is $5."]).ok
    # the longest FAQ quote the extractive generator makes (two set-up sentences, the question, "Yes." and
    # the sentence after it) is still a quote
    longest = ("**Q:** My toilet ran all month. The bill doubled. Does that count?\n**A:** Yes. A running toilet "
               "is a fixture failure. Only the 50% water credit applies.")
    assert entails("My toilet ran all month. The bill doubled. Does that count? Yes. A running toilet is a fixture "
                   "failure.", [longest]).ok
    # (the second review) list items without a full stop are not one sentence; a bare "Q." mark is no sentence
    assert not quotes_whole_sentences("No pets smoking allowed on the balcony.",
                                      ["Rules\n\n- No pets\n- Smoking allowed on the balcony.\n"])
    dotted = "Q. My cat is 9. She is deaf. Can she fly?\nA. Yes. Cats fly in the cabin."
    assert quotes_whole_sentences("My cat is 9. She is deaf. Can she fly? Yes. Cats fly in the cabin.", [dotted])


def test_an_organisation_s_published_contacts_stay_in_the_knowledge_base_s_own_text() -> None:
    """A support line, a claims mailbox and a bank's routing number are the answer, not someone's data (a
    probe asked "what number do I call?" and read "Quenmoor Roadside on [PHONE]"); in the caller's text, and
    anyone's own number or address in the KB's, stay masked."""
    kb_text = ("Call Roadside on 1-888-555-0143, 1 (800) 555-0142 or 0808 157 0419; email claims@pawsure.example or "
               "customer.service@bank.example; ABA routing number 071925448.")
    assert mask_pii(kb_text, public=True) == (kb_text, [])
    assert mask_pii(kb_text)[0] == ("Call Roadside on [PHONE], [PHONE] or [PHONE]; email [EMAIL] or [EMAIL]; "
                                    "ABA routing number [ROUTING_NUMBER].")
    # a Florida number is no Irish freephone; a webmail provider's mailbox is nobody's function address
    assert mask_pii("Call her at 1850-555-0143 or claims@qq.com.", public=True)[0] == "Call her at [PHONE] or [EMAIL]."
    personal = ("The member wrote from jane.doe@example.com and support@gmail.com, called from (555) 123-4567, "
                "account number 0012345678, SSN 123-45-6789.")
    out, kinds = mask_pii(personal, public=True)
    assert out == ("The member wrote from [EMAIL] and [EMAIL], called from [PHONE], account number "
                   "[ACCOUNT_NUMBER], SSN [SSN].")
    assert set(kinds) == {"email", "phone", "account_number", "ssn"}
