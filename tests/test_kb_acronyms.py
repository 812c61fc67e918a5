"""An acronym an article's tags pair with its long form (`tags: [PT, personal training]`) reads as that long
form in questions that write it in capitals, where the KB's text never writes the acronym
(kb.synonyms.with_kb_acronyms)."""

from __future__ import annotations

from pathlib import Path

from citewise.kb.synonyms import TAG_ACRONYMS, with_kb_acronyms
from citewise.kb.text import tag_acronyms


def test_tags_pair_an_acronym_with_the_tag_its_letters_begin() -> None:
    assert tag_acronyms(["PT", "personal training", "refund"]) == {"PT": "personal training"}
    assert tag_acronyms(["UM", "unaccompanied minor"]) == {"UM": "unaccompanied minor"}
    assert tag_acronyms(["FOS", "Financial Ombudsman Service"]) == {"FOS": "Financial Ombudsman Service"}
    assert tag_acronyms(["PT", "training"]) == {}  # one word is no long form
    assert tag_acronyms(["pt", "personal training"]) == {}  # not written as an acronym
    assert tag_acronyms(["AT", "a training"]) == {}  # a small word does not start a long form...
    assert tag_acronyms(["FT", "fee for transfer"]) == {"FT": "fee for transfer"}  # ... but may stand inside it


def test_only_acronyms_the_text_never_writes_and_no_group_names_join_the_synonyms() -> None:
    tags = [["PT", "personal training"], ["PTO", "paid time off"], ["ESA", "emotional support animal"]]
    texts = ["A personal training package expires after 240 days.", "PTO carries over up to 40 hours.",
             "Sessions are one to one."]
    assert with_kb_acronyms({}, texts, tags) == {TAG_ACRONYMS: {"ESA": "emotional support animal",
                                                                "PT": "personal training"}}
    listed = {"support animal": ["ESA"]}  # the synonyms file already says it: kept as written
    assert with_kb_acronyms(listed, texts, tags) == {**listed, TAG_ACRONYMS: {"PT": "personal training"}}
    assert with_kb_acronyms({}, [*texts, "PTs are booked in the app."], tags[:1]) == {}  # the text writes it
    # a question gains the long form only where it writes the acronym in capitals: "tell us", "is it free?"
    # and "pt" are ordinary words; and the acronym names no facet (no synonym group)
    from citewise.kb.synonyms import SynonymExpander

    expander = SynonymExpander(with_kb_acronyms({}, ["A refund takes 5 days."], [["US", "unit surcharge"],
                                                                                 ["IT", "income tax"]]))
    assert expander.expansions("Can you tell us if it is free?") == [] and expander.groups == []
    assert expander.expansions("Is the US fee waived? Does IT apply?") == ["unit surcharge", "income tax"]


def test_a_synonyms_file_may_not_use_the_reserved_key(tmp_path: Path) -> None:
    """(Second review) a synonyms.yaml key named like the snapshot's place for tag acronyms was dropped silently."""
    import pytest

    from citewise.errors import IngestError
    from citewise.kb.synonyms import load_synonyms

    path = tmp_path / "synonyms.yaml"
    path.write_text(f'"{TAG_ACRONYMS}": [x]\n')
    with pytest.raises(IngestError, match="reserved"):
        load_synonyms(path)


def test_a_question_in_the_tags_acronym_finds_the_article(tmp_path: Path) -> None:
    from citewise import api
    from citewise.kb.ingest import ingest

    src = tmp_path / "kb"
    src.mkdir()
    (src / "pt.md").write_text(
        "---\nid: qf-pt\ntitle: Quillfield personal training packages\nrecord_keeper: Quillfield\n"
        "tags: [PT, personal training]\n---\n## Business rules\n- A personal training package can be extended "
        "once by 30 days for a $25 fee.\n- Sessions cancelled less than 24 hours ahead are forfeited.\n")
    (src / "freeze.md").write_text(
        "---\nid: qf-freeze\ntitle: Quillfield membership freeze\nrecord_keeper: Quillfield\n"
        "tags: [freeze, hold]\n---\n## Business rules\n- A membership can be frozen for up to 3 months a year "
        "for $9.50 per month.\n- A frozen membership can be extended once for a further month.\n")
    home = tmp_path / "home"
    ingest([src], home, progress=False)
    out = api.ask("Can I extend my Quillfield PT pack, and what does it cost?", home=home)
    assert out["article_reference"]["article_id"] == "qf-pt", out["article_reference"]
    assert "$25" in out["response"]["text"], out["response"]["text"]
