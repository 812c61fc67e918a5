"""Section-aware chunking: a chunk never spans two sections; long sections split at paragraph and
list-item boundaries (then sentences, then tokens) with a token overlap between neighbours."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .articles import QUARANTINED, Document
from .text import blocks, slug, split_sentences
from .tokens import count_tokens, truncate_to_tokens


@dataclass
class Chunk:
    chunk_id: str
    doc_id: str
    ordinal: int
    section: str
    chunk_type: str
    tier: str
    text: str
    tokens: int
    metadata: dict[str, Any] = field(default_factory=dict)


def _fit(unit: str, size: int) -> list[str]:
    """Break one oversized unit into pieces of at most `size` tokens: sentences first, tokens last."""
    if count_tokens(unit) <= size:
        return [unit]
    pieces: list[str] = []
    for sentence in split_sentences(unit):
        while count_tokens(sentence) > size:
            head = truncate_to_tokens(sentence, size)
            if not head.strip():
                head = sentence[: max(1, len(sentence) // 2)]
            pieces.append(head)
            sentence = sentence[len(head):].lstrip()
        if sentence:
            pieces.append(sentence)
    return pieces


def split_section(text: str, size: int, overlap: int) -> list[str]:
    """Greedy packing of units up to `size` tokens; the next chunk restates up to `overlap` tokens."""
    if count_tokens(text) <= size:
        return [text.strip()]
    units = [piece for unit, _ in blocks(text) for piece in _fit(unit, size)]
    chunks: list[list[str]] = []
    current: list[str] = []
    current_tokens = 0
    for unit in units:
        cost = count_tokens(unit) + 1
        if current and current_tokens + cost > size:
            chunks.append(current)
            carry: list[str] = []
            carry_tokens = 0
            for prev in reversed(current):
                prev_cost = count_tokens(prev) + 1
                if carry_tokens + prev_cost > overlap or carry_tokens + prev_cost + cost > size:
                    break
                carry.insert(0, prev)
                carry_tokens += prev_cost
            current, current_tokens = carry, carry_tokens
        current.append(unit)
        current_tokens += cost
    if current:
        chunks.append(current)
    return ["\n\n".join(c).strip() for c in chunks]


def chunk_document(doc: Document, size: int = 800, overlap: int = 120) -> list[Chunk]:
    chunks: list[Chunk] = []
    for section in doc.sections:
        for piece in split_section(section.text, size, overlap):
            ordinal = len(chunks)
            name = slug(section.heading or section.chunk_type)[:40] or "content"
            metadata = {
                **doc.metadata,
                "doc_id": doc.doc_id,
                "title": doc.title,
                "chunk_type": section.chunk_type,
                "tier": section.tier,
                "section": section.heading,
                **({QUARANTINED: True} if doc.quarantine else {}),
            }
            chunks.append(Chunk(chunk_id=f"{doc.doc_id}#{ordinal:02d}-{name}", doc_id=doc.doc_id,
                                ordinal=ordinal, section=section.heading, chunk_type=section.chunk_type,
                                tier=section.tier, text=piece, tokens=count_tokens(piece),
                                metadata=metadata))
    return chunks
