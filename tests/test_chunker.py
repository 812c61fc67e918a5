from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from citewise.kb.articles import Document, Section
from citewise.kb.chunker import chunk_document, split_section
from citewise.kb.tokens import count_tokens


def _doc(*sections: Section) -> Document:
    return Document("d1", "Title", {"topic": "loan"}, list(sections), "d1.md", "h", True)


def test_short_sections_are_one_chunk_each_and_never_mixed() -> None:
    chunks = chunk_document(_doc(Section("Steps", "steps", "high", "1. a\n2. b"),
                                 Section("Fees", "fees", "high", "- $50")))
    assert [(c.chunk_type, c.text) for c in chunks] == [("steps", "1. a\n2. b"), ("fees", "- $50")]
    assert chunks[0].chunk_id == "d1#00-steps" and chunks[0].metadata["topic"] == "loan"
    assert chunks[1].metadata["chunk_type"] == "fees" and chunks[1].metadata["tier"] == "high"


def test_long_section_splits_at_item_boundaries_with_overlap() -> None:
    items = [f"- Item number {i} says something specific about rule {i} and its exceptions." for i in range(120)]
    pieces = split_section("\n".join(items), size=200, overlap=40)
    assert len(pieces) > 3
    for piece in pieces:
        assert count_tokens(piece) <= 200
        assert all(line.startswith("- Item number") for line in piece.split("\n\n"))  # whole items only
    for prev, nxt in itertools.pairwise(pieces):
        assert prev.split("\n\n")[-1] in nxt.split("\n\n")  # overlap restates the previous tail
    assert {line for p in pieces for line in p.split("\n\n")} == set(items)  # nothing lost


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=400),
                min_size=1, max_size=30),
       st.integers(min_value=64, max_value=400))
def test_chunks_never_exceed_size(paragraphs: list[str], size: int) -> None:
    text = "\n\n".join(paragraphs).strip()
    if not text:
        return
    for piece in split_section(text, size=size, overlap=size // 5):
        assert count_tokens(piece) <= size


def test_markdown_chunks_carry_exact_character_offsets_into_the_file() -> None:
    from citewise.kb.articles import parse_markdown

    paragraphs = [f"Paragraph {i} explains rule {i} of the plan and how it applies to loans." for i in range(60)]
    text = ("---\nid: doc\ntitle: Doc\n---\n# Doc\n\n## Steps\n1. Open the form.\n2. Sign it.\n\n"
            "## Background\n\n" + "\n\n".join(paragraphs) + "\n")
    doc = parse_markdown(text, source="doc.md", default_id="doc", default_title="doc")
    chunks = chunk_document(doc, size=120, overlap=20)
    assert chunks[0].position["heading_path"] == ["Steps"] and chunks[0].position["position"] == 0
    assert text[chunks[0].position["start_offset"]:chunks[0].position["end_offset"]] == chunks[0].text
    for chunk in chunks[1:]:
        start, end = chunk.position["start_offset"], chunk.position["end_offset"]
        first, last = chunk.text.split("\n\n")[0], chunk.text.split("\n\n")[-1]
        assert text[start:].startswith(first) and text[:end].endswith(last)
        assert chunk.position["documentId"] == "doc" and chunk.position["heading_path"] == ["Background"]
    assert [c.position["position"] for c in chunks] == list(range(len(chunks)))


def test_an_oversized_table_splits_between_rows_and_repeats_its_header() -> None:
    rows = "\n".join(f"| item {i} | {i * 7} dollars | note about item {i} |" for i in range(200))
    table = "| Item | Fee | Notes |\n| --- | --- | --- |\n" + rows
    pieces = split_section(table, size=150, overlap=0)
    assert len(pieces) > 3
    for piece in pieces:
        lines = piece.split("\n")
        assert lines[:2] == ["| Item | Fee | Notes |", "| --- | --- | --- |"] and count_tokens(piece) <= 150
        assert all(line.startswith("| item ") and line.endswith(" |") for line in lines[2:])
    assert sum(len(p.split("\n")) - 2 for p in pieces) == 200  # every row once
