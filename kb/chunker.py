"""Section-aware chunking: a chunk never spans two sections; long sections split at paragraph and
list-item boundaries (then sentences, then tokens) with a token overlap between neighbours.

Every chunk also records where it came from (`Chunk.position`): its ordinal in the document, the
character range it covers, and — for converted files — the pages, slides, heading path, time range and
speakers of the blocks it was packed from. Positions are computed here, while the blocks are still
known, because once the text is joined into a chunk nothing can recover them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .articles import QUARANTINED, Document, Section, Unit, chunk_quarantine
from .text import blocks, paragraphs, slug, split_sentences
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
    position: dict[str, Any] = field(default_factory=dict)


# A token of cl100k spans at most a few dozen characters: `size` tokens always fit in this many
# characters per token, so cutting a long run of text needs to tokenize only a window of that length.
_CHARS_PER_TOKEN_BOUND = 32


def _split_table(unit: str, size: int) -> list[str] | None:
    """A pipe table too big for one chunk, cut between rows with the header rows repeated in every
    piece (a row read without its header means nothing); None when `unit` is not a table."""
    lines = unit.split("\n")
    if len(lines) < 3 or not all(line.startswith("|") for line in lines):
        return None
    header = lines[:2] if set(lines[1].replace("|", "").split()) <= {"---"} else lines[:1]
    room = size - count_tokens("\n".join(header)) - 1
    if room < size // 4:
        return None
    pieces: list[str] = []
    rows: list[str] = []
    used = 0
    for row in lines[len(header):]:
        cost = count_tokens(row) + 1
        if rows and used + cost > room:
            pieces.append("\n".join(header + rows))
            rows, used = [], 0
        if cost > room:  # one enormous row: it goes alone, cut like prose by _fit
            pieces.extend(_fit_prose("\n".join([*header, row]), size))
            continue
        rows.append(row)
        used += cost
    if rows:
        pieces.append("\n".join(header + rows))
    return pieces


def _fit_prose(unit: str, size: int) -> list[str]:
    """Sentences first, tokens last.

    A sentence longer than `size` is cut piece by piece, each cut made in a window of the text that
    follows (not in the whole rest of it), so a megabyte without a sentence end costs linear time —
    re-tokenizing the whole remainder for every piece made such a text take minutes.
    """
    pieces: list[str] = []
    for sentence in split_sentences(unit):
        window = size * _CHARS_PER_TOKEN_BOUND
        while len(sentence) > window or count_tokens(sentence) > size:
            head = truncate_to_tokens(sentence[:window], size)
            if not head.strip():
                head = sentence[: max(1, min(len(sentence), window) // 2)]
            pieces.append(head)
            sentence = sentence[len(head):].lstrip()
        if sentence:
            pieces.append(sentence)
    return pieces


_CODE = re.compile(r"^(```|~~~)([^\n]*)\n(.*)\n\1\s*$", re.DOTALL)


def _split_code(unit: str, size: int) -> list[str] | None:
    """A fenced code block too big for one chunk, cut between its blank-line-separated stanzas (then
    lines), every piece fenced again: split into sentences, a configuration example or a script would
    be flattened into one line of words. None when `unit` is not a code block."""
    m = _CODE.match(unit)
    if m is None:
        return None
    fence = m.group(1) + m.group(2)
    room = size - count_tokens(f"{fence}\n\n{m.group(1)}") - 1
    if room < size // 4:
        return None
    pieces: list[str] = []
    body, used = "", 0  # the piece being filled: stanzas joined by a blank line, a cut stanza's lines by "\n"

    def close() -> None:
        nonlocal body, used
        if body:
            pieces.append(f"{fence}\n{body}\n{m.group(1)}")
        body, used = "", 0

    for stanza in paragraphs(m.group(3)):
        whole = count_tokens(stanza) <= room
        for i, part in enumerate([stanza] if whole else stanza.split("\n")):
            sep = "\n\n" if (whole or i == 0) else "\n"
            cost = count_tokens(part) + 2
            if body and used + cost > room:
                close()
            if cost > room:  # one enormous line: cut like prose
                close()
                pieces.extend(f"{fence}\n{p}\n{m.group(1)}" for p in _fit_prose(part, room))
                continue
            body, used = (f"{body}{sep}{part}" if body else part), used + cost
    close()
    return pieces


def _fit(unit: str, size: int) -> list[str]:
    """Break one oversized unit into pieces of at most `size` tokens: table rows, code stanzas,
    sentences, tokens."""
    if count_tokens(unit) <= size:
        return [unit]
    for split in (_split_table, _split_code):
        pieces = split(unit, size)
        if pieces is not None:
            return pieces
    return _fit_prose(unit, size)


def _fit_unit(unit: Unit, size: int) -> list[Unit]:
    """`_fit` for a positioned unit: the pieces keep the unit's page/slide/time, and their character
    ranges are found in the unit's text (or, for re-spaced sentences, estimated proportionally)."""
    pieces = _fit(unit.text, size)
    if len(pieces) == 1:
        return [unit]
    out: list[Unit] = []
    total = sum(len(p) for p in pieces) or 1
    seen = 0
    cursor = 0
    for piece in pieces:
        start = end = None
        if unit.start is not None and unit.end is not None:
            at = unit.text.find(piece, cursor)
            if at >= 0:
                start, cursor = unit.start + at, at + len(piece)
                end = start + len(piece)
            else:
                span = unit.end - unit.start
                start = unit.start + span * seen // total
                end = unit.start + span * (seen + len(piece)) // total
        seen += len(piece)
        out.append(Unit(piece, start, end, unit.page, unit.slide, unit.start_time, unit.end_time, unit.speakers))
    return out


def section_units(section: Section) -> list[Unit]:
    """The units of a section: its converted blocks, or the paragraphs and list items of Markdown text
    (located in the file's text so their character offsets are real)."""
    if section.units is not None:
        return section.units
    units: list[Unit] = []
    cursor = 0
    for text, _ in blocks(section.text):
        at = section.text.find(text, cursor)
        if at >= 0:
            cursor = at + len(text)
        else:
            at = cursor
        start = section.start + at if section.start is not None else None
        units.append(Unit(text, start, start + len(text) if start is not None else None))
    return units


def pack_units(units: Sequence[Unit], size: int, overlap: int) -> list[list[Unit]]:
    """Greedy packing of units up to `size` tokens; the next chunk restates up to `overlap` tokens."""
    fitted = [piece for unit in units for piece in _fit_unit(unit, size)]
    costs = [count_tokens(u.text) + 1 for u in fitted]
    chunks: list[list[int]] = []
    current: list[int] = []
    current_tokens = 0
    for i, cost in enumerate(costs):
        if current and current_tokens + cost > size:
            chunks.append(current)
            carry: list[int] = []
            carry_tokens = 0
            for prev in reversed(current):
                if carry_tokens + costs[prev] > overlap or carry_tokens + costs[prev] + cost > size:
                    break
                carry.insert(0, prev)
                carry_tokens += costs[prev]
            current, current_tokens = carry, carry_tokens
        current.append(i)
        current_tokens += cost
    if current:
        chunks.append(current)
    return [[fitted[i] for i in chunk] for chunk in chunks]


def split_section(text: str, size: int, overlap: int) -> list[str]:
    """Greedy packing of units up to `size` tokens; the next chunk restates up to `overlap` tokens."""
    if count_tokens(text) <= size:
        return [text.strip()]
    units = section_units(Section("", "content", "medium", text))
    return ["\n\n".join(u.text for u in group).strip() for group in pack_units(units, size, overlap)]


def position_of(units: Sequence[Unit], section: Section, doc: Document, ordinal: int) -> dict[str, Any]:
    """The source position of a chunk made of `units`, in the RAG spec's terms (position, documentId,
    start/end offset, tags) plus the locators a citation shows (page, slide, heading path, time)."""
    position: dict[str, Any] = {"position": ordinal, "documentId": doc.doc_id}
    starts = [u.start for u in units if u.start is not None]
    ends = [u.end for u in units if u.end is not None]
    if starts and ends:
        position["start_offset"], position["end_offset"] = min(starts), max(ends)
    if section.heading_path:
        position["heading_path"] = list(section.heading_path)
    pages = sorted({u.page for u in units if u.page is not None})
    if pages:
        position["page"], position["pages"] = pages[0], pages
    slides = sorted({u.slide for u in units if u.slide is not None})
    if slides:
        position["slide"], position["slides"] = slides[0], slides
    times = [u.start_time for u in units if u.start_time is not None]
    if times:
        position["start_time"] = min(times)
        position["end_time"] = max(u.end_time if u.end_time is not None else u.start_time or 0.0 for u in units)
    speakers = list(dict.fromkeys(s for u in units for s in u.speakers))
    if speakers:
        position["speakers"] = speakers
    if doc.tags:
        position["tags"] = list(doc.tags)
    return position


def chunk_document(doc: Document, size: int = 800, overlap: int = 120) -> list[Chunk]:
    chunks: list[Chunk] = []
    for index, section in enumerate(doc.sections):
        units = section_units(section)
        if count_tokens(section.text) <= size:
            groups, texts = [units], [section.text.strip()]
        else:
            groups = pack_units(units, size, overlap)
            texts = ["\n\n".join(u.text for u in group).strip() for group in groups]
        label = section.heading_path[-1] if section.heading_path else section.heading
        name = slug(label or section.chunk_type)[:40] or "content"
        for group, piece in zip(groups, texts, strict=True):
            if not piece:
                continue
            ordinal = len(chunks)
            metadata = {
                **doc.metadata,
                "doc_id": doc.doc_id,
                "title": doc.title,
                "chunk_type": section.chunk_type,
                "tier": section.tier,
                "section": section.heading,
                **({QUARANTINED: True} if chunk_quarantine(doc, index) else {}),
            }
            chunks.append(Chunk(chunk_id=f"{doc.doc_id}#{ordinal:02d}-{name}", doc_id=doc.doc_id,
                                ordinal=ordinal, section=section.heading, chunk_type=section.chunk_type,
                                tier=section.tier, text=piece, tokens=count_tokens(piece),
                                metadata=metadata, position=position_of(group, section, doc, ordinal)))
    return chunks
