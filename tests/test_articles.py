from __future__ import annotations

import pytest

from citewise.errors import IngestError
from citewise.kb.articles import parse_beir_line, parse_markdown, section_kind
from citewise.kb.guardrails import parse_guardrails, reflects, rule_as_warning

ARTICLE = """---
id: acme-401k-loan
title: Taking a loan
record_keeper: Acme Retirement
plan_type: 401(k)
topic: loan
tags: [loan, repayment]
updated: 2026-05-01
nested: {a: 1}
---
Intro text before any heading.

## Decision guide
- If A then B.

## FAQs
**Q: Why?** A: Because.

## Something else
Body.
"""


def test_front_matter_and_sections() -> None:
    doc = parse_markdown(ARTICLE, source="x.md", default_id="x.md", default_title="x")
    assert doc.doc_id == "acme-401k-loan" and doc.title == "Taking a loan" and doc.structured
    assert doc.metadata == {"record_keeper": "Acme Retirement", "plan_type": "401(k)", "topic": "loan",
                            "tags": ["loan", "repayment"], "updated": "2026-05-01"}  # nested dict dropped
    kinds = [(s.heading, s.chunk_type, s.tier) for s in doc.sections]
    assert kinds == [("", "content", "medium"), ("Decision guide", "decision_guide", "critical"),
                     ("FAQs", "faqs", "medium"), ("Something else", "content", "medium")]


def test_plain_markdown_takes_title_from_h1_and_everything_is_content() -> None:
    doc = parse_markdown("# My Title\n\n## Steps\n1. one\n", source="a/b.md", default_id="a/b.md",
                         default_title="b")
    assert (doc.doc_id, doc.title, doc.structured) == ("a/b.md", "My Title", False)
    assert [s.chunk_type for s in doc.sections] == ["content"]


def test_a_title_taken_from_a_heading_is_what_a_reader_sees_and_bounded() -> None:
    """A README's H1 carries badges ("# Thread-pool Controls [![Build](...)](...)"): found in installed
    READMEs, where the markup made the title too long and the whole document was skipped."""
    badges = " ".join(f"[![badge {i}](https://ci.example.org/b{i}.svg?branch=main)](https://ci.example.org/{i})"
                      for i in range(4))
    doc = parse_markdown(f"# Thread-pool Controls {badges}\n\nText.\n", source="t.md", default_id="t.md",
                         default_title="t")
    assert doc.title == "Thread-pool Controls"
    long = parse_markdown("# " + "word " * 100 + "\n\nText.\n", source="l.md", default_id="l.md", default_title="l")
    assert len(long.title) == 300 and long.title.endswith("…")
    with pytest.raises(IngestError, match="title is longer than 300"):  # a declared title is the author's: refused
        parse_markdown("---\nid: x\ntitle: " + "word " * 100 + "\n---\nText.\n", source="x.md", default_id="x.md",
                       default_title="x")


@pytest.mark.parametrize("heading,expected", [
    ("Decision Guide", ("decision_guide", "critical")), ("Response frames", ("response_frames", "critical")),
    ("GUARDRAILS", ("guardrails", "critical")), ("Required data:", ("required_data", "high")),
    ("FAQ", ("faqs", "medium")), ("Related", ("background", "low")), ("Whatever", ("content", "medium")),
])
def test_section_kinds(heading: str, expected: tuple[str, str]) -> None:
    assert section_kind(heading) == expected


@pytest.mark.parametrize("text,message", [
    ("---\nid: [unclosed\n---\nbody", "malformed YAML"),
    ("---\ntitle: no id\n---\nbody", "lacks required key"),
    ("---\nid: x\ntitle: t\nbody without closing", "never closed"),
    ("---\n- a list\n---\n", "must be a YAML mapping"),
])
def test_malformed_front_matter_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(IngestError, match=message):
        parse_markdown(text, source="bad.md", default_id="bad.md", default_title="bad")


def test_an_unquoted_colon_in_a_front_matter_value_is_read_as_text() -> None:
    """`title: Loans: fees and limits` is not valid YAML, but nobody means a mapping there (a blind eval KB's
    writer wrote one; the article was skipped whole). It is read as the text, with a warning; a value that
    opens a flow collection, or malformed YAML of any other kind, is still refused."""
    text = ("---\nid: loans\ntitle: Loans: fees and limits\nurl: https://example.com/a\ntopic: loan\n---\n"
            "## Business rules\n- The setup fee is $75.\n")
    doc = parse_markdown(text, source="loans.md", default_id="loans", default_title="loans")
    assert doc.title == "Loans: fees and limits" and doc.metadata["topic"] == "loan"
    assert any("unquoted ': '" in w and "'title'" in w for w in doc.warnings), doc.warnings
    # (review) only the lines that are not YAML on their own: a comment's colon stays a comment, and the slip's
    # own comment is dropped, as YAML drops it; CRLF files read alike
    text = ("---\r\nid: loans\r\ntitle: Loans: fees # internal: draft\r\ntopic: loan # see also: hardship\r\n"
            "record_keeper: Acme # was: Contoso\r\n---\r\n## Business rules\r\n- The setup fee is $75.\r\n")
    doc = parse_markdown(text, source="loans.md", default_id="loans", default_title="loans")
    assert (doc.title, doc.metadata["topic"], doc.metadata["record_keeper"]) == ("Loans: fees", "loan", "Acme")
    assert [w for w in doc.warnings if "unquoted" in w] == [
        "loans.md: front-matter value of 'title' has an unquoted ': ' (not valid YAML); read as text"]
    for bad in ("---\nid: x\ntitle: [a, b: c\n---\nbody", "---\nid: x\ntitle: a: b\nnested:\n  k: [v\n---\nbody",
                "---\nid: x\ntitle: Loans:\x00 fees\n---\nbody",
                "---\nid: x\ntitle: Loans: fees\x85 and limits\n---\nbody"):
        with pytest.raises(IngestError, match="malformed YAML"):
            parse_markdown(bad, source="bad.md", default_id="bad", default_title="bad")


def test_beir_line() -> None:
    doc = parse_beir_line('{"_id": "7", "title": "T", "text": "Body.", "metadata": {"year": 2020}}',
                          source="c.jsonl", lineno=1)
    assert (doc.doc_id, doc.title, doc.metadata, doc.sections[0].text) == ("7", "T", {"year": 2020}, "Body.")
    with pytest.raises(IngestError, match=r"c\.jsonl:3"):
        parse_beir_line("{not json", source="c.jsonl", lineno=3)
    with pytest.raises(IngestError, match="_id"):
        parse_beir_line('{"text": "x"}', source="c.jsonl", lineno=4)


def test_guardrail_rules() -> None:
    rules = parse_guardrails("""
- Never say: "guaranteed", "tax-free" — a rollover defers tax
- Never say: free money, no risk
- Never: give personal tax advice; refer to a professional.
- **Always:** mention the 60-day deadline for indirect rollovers.
- Some other line
""")
    assert rules.never_say == ["guaranteed", "tax-free", "free money", "no risk"]
    assert rules.never == ["give personal tax advice; refer to a professional."]
    assert rules.always == ["mention the 60-day deadline for indirect rollovers."]
    # a forbidden negation is a phrase the KB means, though the analyser drops it (the review: "cannot" became a
    # stopword and `Never say: "cannot"` was dropped); a phrase of stopwords alone would match every answer
    from citewise.kb.guardrails import meaningful_phrase

    assert meaningful_phrase("cannot") and meaningful_phrase("can't") and not meaningful_phrase("it is")


def test_always_rule_is_reflected_by_content_not_by_instruction_words() -> None:
    rule = "mention the 60-day deadline for indirect rollovers"
    assert reflects(rule, "Indirect rollovers must be completed within the 60-day deadline.")
    assert not reflects(rule, "Please mention this when asked.")
    assert rule_as_warning("state that hardship withdrawals are taxable.") == "Hardship withdrawals are taxable."
    # what someone is told is the clause after the first "that", however the recipient is named (a probe read
    # "Pay Now customers that refunds take up to 7 business days." under Important)
    assert rule_as_warning("tell Pay Now customers that refunds take up to 7 business days.") == \
        "Refunds take up to 7 business days."
    assert rule_as_warning("remind a new member who joins mid-year that benefits begin after 30 days") == \
        "Benefits begin after 30 days."
    assert rule_as_warning("tell customers that refunds that are late earn nothing") == \
        "Refunds that are late earn nothing."
    assert rule_as_warning("tell the customer to call the branch") is None  # told to act: never a warning
    # (the review) a "that" of "so that", a determiner or a bare "that": no recipient to read apart, no warning
    for rule in ("notify the account holder if a payment fails so that they can retry",
                 "warn members who ask about that plan that it closes in June",
                 "tell members in that state that the rule differs", "Always: tell the customer that",
                 "inform the user that: fees apply"):
        assert rule_as_warning(rule) is None, rule
    assert rule_as_warning("warn that fees apply") == "Fees apply."
    # what to say is a thing, not a statement: the rule as written, not a fragment left without its verb (the
    # demo's own answer read "The 60-day deadline and the 20% withholding when an indirect rollover is discussed.")
    assert rule_as_warning("Always: mention the 29-minute grace period.") == "Mention the 29-minute grace period."
    assert rule_as_warning("explain how the match works") == "Explain how the match works."
    assert rule_as_warning("state the excess that remains with the option chosen") == \
        "State the excess that remains with the option chosen."
    # (the review) a statement without its "that" is still a statement; a recipient told to act, or a recipient and
    # message that cannot be read apart, is no warning ("Tell the passenger to keep ..." had been shown as written)
    assert rule_as_warning("state the €3,000 minimum balance must be kept every day") == \
        "The €3,000 minimum balance must be kept every day."
    assert rule_as_warning("tell the customer they can complain to the Ombudsman") == \
        "They can complain to the Ombudsman."
    for rule in ("Tell the passenger to keep original receipts", "remind the renter to return the car full",
                 "remind the participant of the deadline", "Mention the.",
                 "tell a customer with Wellness Plus that benefits paid are deducted"):
        assert rule_as_warning(rule) is None, rule
    # ... but the reason an instruction gives is a statement of its own (one about "they" says nothing alone)
    assert rule_as_warning("tell the passenger to keep original receipts, because interim expenses are reimbursed "
                           "only against receipts.") == "Interim expenses are reimbursed only against receipts."
    assert rule_as_warning("advise members to wait because they may lose it") is None


def test_analyser_unifies_plan_names_and_acronym_plurals() -> None:
    from citewise.kb.text import terms

    assert terms("My 401(k) and 403 (b)") == terms("my 401k and 403b") == ["401k", "403b"]
    assert terms("When are RMDs due on IRAs?") == terms("When is the RMD due on an IRA?")
    # ... but the analyser never strips the "s" of a vowel-less word typed otherwise: "GPS" is no GP, "SMS" no
    # "sm" (a lower-case "rmds" is read against the KB's own terms at query time: engine/spelling.py)
    assert terms("GPS SMS") == ["gps", "sms"] and terms("gps") != terms("GP")
    assert terms("Rollovers rolled over") == ["rollov", "roll", "over"]
    # irregular plurals meet their singular, which the stemmer alone leaves apart
    assert terms("children flying alone, men, women") == terms("a child flying alone, a man, a woman")
    assert terms("the children's fare") == terms("the child fare")
    assert terms("people") != terms("personal")  # "person" is the stem of "personal": people stay people


@pytest.mark.parametrize("heading,expected", [
    ("Guardrails (what never to say)", "guardrails"), ("Fees and charges", "fees"), ("Steps to apply", "steps"),
    ("Common issues & fixes", "common_issues"), ("Required data:", "required_data"), ("Stepson rules", "content"),
    ("Business rules for loans", "business_rules"), ("Response frames", "response_frames"),
    # other wordings teams give the same kinds (a blind KB titled its guardrails "What never to say": its
    # `Never say:` lines were plain content and bound nothing)
    ("What never to say", "guardrails"), ("What not to say", "guardrails"), ("Frequently asked questions", "faqs"),
    ("Q&A", "faqs"), ("Who qualifies", "eligibility"), ("Costs", "fees"), ("Troubleshooting", "common_issues"),
    ("Worked examples", "examples"), ("Costume rules", "content"),
    # aliases match whole headings only (second review)
    ("Never say die", "content"), ("Costs of living adjustment", "content"), ("Pricing history 2019-2024", "content"),
    # a heading's shape (a blind travel KB: "What not to tell customers" bound nothing either)
    ("What not to tell customers", "guardrails"), ("Things never to promise", "guardrails"),
    ("Questions customers ask", "faqs"), ("Common questions", "faqs"), ("Worked example", "examples"),
    ("Troubleshooting tips", "common_issues"), ("Known login problems", "common_issues"),
    ("Change fees", "fees"), ("Baggage charges", "fees"), ("Questionable practices", "content"),
    ("Rules of the road", "content"), ("Policy rules", "content"),  # rule sections rank articles: exact names only
    # ... and narrow (second review): advice, the agent's own checklist, a topic, a rule stay content
    ("What not to use", "content"), ("Questions to ask the customer", "content"), ("Screening questions", "content"),
    ("Tax issues", "content"), ("Who covers the costs", "content"),
    ("Words never to use", "guardrails"), ("Common questions about billing", "faqs"),
    ("Common billing questions", "faqs"), ("Known issues and workarounds", "common_issues"),
    ("Who covers the fees", "content"), ("How to dispute charges", "content"),
])
def test_headings_with_descriptors_keep_their_kind(heading: str, expected: str) -> None:
    assert section_kind(heading)[0] == expected


def test_a_heading_shape_is_read_only_in_articles() -> None:
    """A web page's or a guide's "Questions customers ask" is its content, not an article's FAQ section."""
    assert section_kind("What not to tell customers", aliases={}) == ("content", "medium")


def test_never_say_lines_under_another_guardrails_heading_bind() -> None:
    doc = parse_markdown("---\nid: g\ntitle: Gas shut-off\n---\n## What never to say\n"
                         '- Never say: "your gas will stay on".\n- Always: mention the 21-day delay.\n',
                         source="g.md", default_id="g.md", default_title="g")
    from citewise.kb.guardrails import parse_guardrails

    section = next(s for s in doc.sections if s.chunk_type == "guardrails")
    assert parse_guardrails(section.text).never_say == ["your gas will stay on"]


def test_a_converted_documents_headings_use_the_format_names_only() -> None:
    """A web page's "What not to say to a customer" section is what the page says (content, answerable),
    not an article's guardrails."""
    assert section_kind("What not to say", aliases={}) == ("content", "medium")
    assert section_kind("Steps", aliases={}) == ("steps", "high")  # the format's own names still apply


def test_an_always_rule_never_brings_a_never_say_phrase_into_the_answer() -> None:
    """The article's own rules collide ("Never say: guaranteed"; "Always: mention that guaranteed delivery is
    only available with Express"): the extractive answer left the rule out, and verification added it back."""
    from citewise.engine.records import ContextChunk, Section
    from citewise.engine.verify import verify

    chunks = [ContextChunk("C1", "p#0", "p", "Parcels", "business_rules", "critical",
                           "Standard parcels arrive in 3 to 5 business days."),
              ContextChunk("C2", "p#1", "p", "Parcels", "guardrails", "critical",
                           "- Never say: \"guaranteed\"\n- Always: mention that guaranteed delivery is only available "
                           "with Express.\n- Always: mention that tracking is included.")]
    parsed = parse_guardrails(chunks[1].text)
    rules = {"p": {"never_say": parsed.never_say, "never": parsed.never, "always": parsed.always}}
    out = verify([Section("t", ["Standard parcels arrive in 3 to 5 business days. [C1]"])], chunks, rules,
                 support_threshold=0.5, article_id="p")
    warnings = out.sections[0].warnings
    assert not any("guaranteed" in w.lower() for w in warnings), warnings
    assert any("Tracking is included" in w for w in warnings), warnings  # the other rule is still added
    assert any(v.rule == "always_missing" and "guaranteed" in v.detail for v in out.violations)
