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
