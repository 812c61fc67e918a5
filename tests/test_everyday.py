"""Everyday wording ("my money back") meets the knowledge base's words ("refund"), one way, only where the KB
writes them."""

from __future__ import annotations

from pathlib import Path

from citewise.kb.everyday import everyday_words
from citewise.kb.synonyms import SynonymExpander
from citewise.kb.text import terms
from tests.paths import ingested_kb


def _kb_writes(*words: str):
    vocab = {t for w in words for t in terms(w)}
    return vocab.__contains__


def test_an_everyday_phrase_gains_the_formal_words_the_kb_writes_and_only_those() -> None:
    known = _kb_writes("refund", "return", "disconnection")
    assert everyday_words("How do I get my money back?", known) == {"money back": ["refund"]}
    # the object between a verb and its particle is not what the formal word means
    assert everyday_words("They shut my water off on Friday", known) == {"shut off": ["disconnect"]}
    assert everyday_words("Can I give the phone back?", known) == {"give back": ["return"]}
    assert everyday_words("Did they cut her off?", known) == {"cut off": ["disconnect"]}
    # one way: the formal word gains no everyday phrase, and a formal word the KB never writes is not offered
    assert everyday_words("Can I get a refund?", known) == {}
    assert everyday_words("I want to sign up for paperless bills", known) == {}
    # whole words only: "illness" is no "ill", "skid" no "kid"
    assert everyday_words("My car went into a skid", _kb_writes("child")) == {}


def test_the_expander_offers_everyday_words_only_with_the_kb_s_vocabulary() -> None:
    groups = {"RMD": ["required minimum distribution"]}
    assert SynonymExpander(groups).expansions("How do I get my money back?") == []
    known = SynonymExpander(groups, known=_kb_writes("refund", "reimbursement"))
    assert known.expansions("How do I get my money back?") == ["refund", "reimburse"]  # one per stem
    assert known.expansions("When is my RMD due?") == ["required minimum distribution"]


def test_a_right_answer_in_everyday_words_is_as_confident_as_in_the_kb_s_words(tmp_path: Path) -> None:
    """"How do I get my money back?" is answered by the refund article as surely as "How do I get a refund?"
    (before, the everyday wording's terms counted as unstated: 0.64 against 0.79, near the abstain line)."""
    from citewise import api
    from citewise.engine.search import synonym_alternatives
    from citewise.retrieval.snapshot import open_kb

    home = ingested_kb(tmp_path, {
        "refunds.md": ("---\nid: halden-refunds\ntitle: Refunds for duplicate charges\nrecord_keeper: Halden Mobile\n"
                       "topic: billing\n---\n## Business rules\n- Halden Mobile refunds a duplicate charge to the "
                       "original card within 5 business days of the customer's report.\n- Refunds over $200 need a "
                       "supervisor's approval.\n## Decision guide\n- If the customer was charged twice for the same "
                       "bill, refund the duplicate charge.\n## Steps\n1. Find both charges on the account.\n"
                       "2. Issue the refund for the duplicate.\n"),
        "roaming.md": ("---\nid: halden-roaming\ntitle: Roaming day passes\nrecord_keeper: Halden Mobile\n"
                       "topic: roaming\n---\n## Business rules\n- A roaming day pass costs $12 per day and is charged "
                       "only on days the phone is used abroad.\n## Steps\n1. Add the day pass to the line.\n"),
        "porting.md": ("---\nid: halden-porting\ntitle: Moving a number to another carrier\nrecord_keeper: Halden "
                       "Mobile\ntopic: porting\n---\n## Business rules\n- A Number Transfer PIN is valid for 7 days.\n"
                       "## Steps\n1. Verify the account holder.\n"),
        "returns.md": ("---\nid: halden-returns\ntitle: Device returns\nrecord_keeper: Halden Mobile\ntopic: return\n"
                       "---\n## Business rules\n- A phone can be returned within 14 days of delivery.\n")})
    everyday = "Halden Mobile took my payment twice. How do I get my money back?"
    assert synonym_alternatives(open_kb(home, database_url=""), everyday) == {"money": ["refund"], "back": ["refund"]}
    formal = api.ask("Halden Mobile took my payment twice. How do I get a refund?", home=home)
    said = api.ask(everyday, home=home)
    assert formal["decision"] == said["decision"] == "can_proceed"
    assert said["article_reference"]["article_id"] == "halden-refunds"
    assert "within 5 business days" in said["response"]["text"]
    assert said["confidence"] >= formal["confidence"] - 0.05, (said["confidence"], formal["confidence"])
    # everyday English reaches the search, never a facet filter: "send back a reply" names no `return` topic
    from citewise.config import Context
    from citewise.engine.inquiry import understand

    sent = understand(open_kb(home, database_url=""), Context(home=home),
                      {"question": "Can I send back a reply to the Halden Mobile email?"})
    assert "return" in sent.expansions and "topic" not in sent.detected_facets, sent.detected_facets
    # an answer sent to `uncertain` does not say the KB is silent on "money" or "back" where it says "refund"
    unsure = api.ask("Can Halden Mobile give me my money back for the phone I dropped in the sea?", home=home,
                     confidence_threshold=0.99)
    assert unsure["decision"] == "uncertain"
    assert "sea" in unsure["metadata"]["uncovered_terms"]
    assert not {"money", "back"} & set(unsure["metadata"]["uncovered_terms"]), unsure["metadata"]["uncovered_terms"]
