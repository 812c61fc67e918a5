"""A retrieved chunk with its scores: what search returns and what rerankers reorder."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Passage:
    chunk_id: str
    doc_id: str
    title: str
    section: str
    chunk_type: str
    tier: str
    text: str
    ordinal: int = 0
    tokens: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    score: float = 0.0  # the score that orders the results (fused, then reranked)
    fused: float | None = None  # the fused score before reranking
    bm25: float = 0.0
    dense: float = 0.0
    bm25_rank: int | None = None
    dense_rank: int | None = None
    row: int = -1  # row in the snapshot's indexes (for dense vectors, e.g. MMR)
    # where the chunk came from (kb/chunker.position_of): position, documentId, start/end_offset, page(s),
    # slide(s), heading_path, start/end_time, speakers, tags, indexVersion; empty for old snapshots
    position: dict[str, Any] = field(default_factory=dict)

    @property
    def indexed_text(self) -> str:
        """What both branches index: the title and section give a chunk its context."""
        return index_text(self.title, self.section, self.text)


def index_text(title: str, section: str, text: str) -> str:
    return "\n".join(p for p in (title, section, text) if p)
