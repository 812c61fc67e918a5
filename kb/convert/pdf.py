"""PDF -> blocks with page numbers, using pypdf (pure Python, no native deps, no services).

pypdf gives text per page, which is what citations need. It has no notion of headings or paragraphs, so
both are inferred from what its text visitor reports for every text run: the rendered font size
(headings are runs clearly larger than the body text) and the baseline position (a vertical gap wider
than a normal line spacing starts a new paragraph). Both are heuristics: a PDF whose headings are only
bold, or whose body uses several sizes, yields fewer headings, never wrong text.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, PdfReadError, PyPdfError

from .types import Block, ConversionError, Converted, base_metadata, clean_text, heading_stack, path_of

HEADING_RATIO = 1.15  # a line whose font is this much larger than the body font is a heading candidate
HEADING_MAX_CHARS = 150
HEADING_MAX_SHARE = 0.4  # if "headings" would hold more of the text than this, the guess is wrong: none
PARAGRAPH_GAP = 1.5  # a baseline gap above this many font sizes starts a new paragraph
MAX_LEVELS = 6
_FOLIO = re.compile(r"^(?:page\s+)?(?:\d{1,4}|[ivxlc]{1,7})(?:\s*(?:/|of)\s*\d{1,4})?$", re.IGNORECASE)
_LEADER = re.compile(r"(?:\.\s?){4,}\s*[\divxlc]*\s*$", re.IGNORECASE)  # "Introduction . . . . 3": a TOC entry


@dataclass
class _Line:
    text: str
    size: float  # largest rendered font size on the line, in points
    y: float | None  # baseline of the first visible run (PDF user space: larger is higher)
    page: int


def _scale(cm: list[float], tm: list[float]) -> tuple[float, float]:
    """(font scale, baseline y) of the text matrix composed with the current transformation matrix."""
    a, b, c, d, e, f = tm
    ca, cb, cc, cd, _, cf = cm
    # tm x cm, only the parts needed: the linear part's determinant and the translated y
    det = (a * d - b * c) * (ca * cd - cb * cc)
    y = e * cb + f * cd + cf
    return math.sqrt(abs(det)), y


class _LineCollector:
    """Receives pypdf's visitor callbacks for one page and splits them into lines with size and position."""

    def __init__(self, page: int) -> None:
        self.page = page
        self.lines: list[_Line] = []
        self._parts: list[str] = []
        self._size = 0.0
        self._y: float | None = None

    def visit(self, text: str, cm: list[float], tm: list[float], font_dict: Any, font_size: float) -> None:
        pieces = text.split("\n")
        for i, piece in enumerate(pieces):
            if i:
                self.flush()
            if piece.strip():
                scale, y = _scale(cm, tm)
                self._size = max(self._size, (font_size or 0.0) * (scale or 1.0))
                if self._y is None:
                    self._y = y
            self._parts.append(piece)

    def flush(self) -> None:
        text = "".join(self._parts).strip()
        self.lines.append(_Line(text, self._size, self._y, self.page))
        self._parts, self._size, self._y = [], 0.0, None


def _open(path: Path) -> PdfReader:
    try:
        reader = PdfReader(path)
    except PyPdfError as exc:  # includes EmptyFileError, PdfReadError
        raise ConversionError(f"not a valid PDF file ({exc})", str(path)) from exc
    except (ValueError, TypeError, KeyError, OSError) as exc:
        raise ConversionError(f"not a valid PDF file ({type(exc).__name__}: {exc})", str(path)) from exc
    if reader.is_encrypted:
        # Many PDFs are encrypted only to restrict printing/copying, with an empty user password: readable.
        try:
            result = reader.decrypt("")
        except (DependencyError, NotImplementedError) as exc:
            raise ConversionError(f"encrypted PDF (cannot decrypt: {exc})", str(path)) from exc
        if result == PasswordType.NOT_DECRYPTED:
            raise ConversionError("encrypted PDF (password required)", str(path))
    return reader


def _read_lines(reader: PdfReader, path: Path) -> tuple[list[_Line], int]:
    lines: list[_Line] = []
    count = 0
    try:
        for number, page in enumerate(reader.pages, start=1):
            count = number
            collector = _LineCollector(number)
            page.extract_text(visitor_text=collector.visit)
            collector.flush()
            lines.extend(_drop_folios(collector.lines))
    except FileNotDecryptedError as exc:
        raise ConversionError("encrypted PDF (password required)", str(path)) from exc
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise ConversionError(f"not a valid PDF file (page {count}: {exc})", str(path)) from exc
    return lines, count


def _drop_folios(lines: list[_Line]) -> list[_Line]:
    """Without the page number printed as the first or last line of a page ("7", "iii", "Page 2 of 9"):
    it would otherwise become a one-word paragraph in every page's text."""
    visible = [i for i, line in enumerate(lines) if line.text]
    drop = {i for i in (visible[:1] + visible[-1:]) if _FOLIO.match(lines[i].text)} if len(visible) > 1 else set()
    return [line for i, line in enumerate(lines) if i not in drop]


def _heading_like(text: str) -> bool:
    """Short enough for a heading and not a table-of-contents line with dot leaders."""
    return len(text) <= HEADING_MAX_CHARS and not _LEADER.search(text)


def _heading_levels(lines: list[_Line]) -> dict[float, int]:
    """Rounded font size -> heading level, biggest size = level 1; empty when headings can't be told apart."""
    weight: Counter[float] = Counter()
    for line in lines:
        if line.text:
            weight[round(line.size * 2) / 2] += len(line.text)
    if not weight:
        return {}
    body = weight.most_common(1)[0][0]
    total = sum(weight.values())
    candidates = {
        round(line.size * 2) / 2
        for line in lines
        if line.text and line.size >= body * HEADING_RATIO and _heading_like(line.text)
    }
    if not candidates or sum(weight[size] for size in candidates) > HEADING_MAX_SHARE * total:
        return {}
    return {size: min(rank, MAX_LEVELS) for rank, size in enumerate(sorted(candidates, reverse=True), start=1)}


def _join(lines: list[str]) -> str:
    """Lines of one paragraph as one string; a line ending in a hyphen joins the next without a space."""
    out = ""
    for line in lines:
        if not out:
            out = line
        elif out.endswith("-") and line[:1].isalpha():
            out += line
        else:
            out += " " + line
    return clean_text(out)


def _continues(prev: _Line, line: _Line) -> bool:
    """Whether `line` is the next line of the same paragraph as `prev`: same page, normal line spacing."""
    if prev.page != line.page:
        return False
    if prev.y is None or line.y is None:
        return True
    return abs(prev.y - line.y) <= PARAGRAPH_GAP * max(prev.size, line.size, 1.0)


def _blocks(lines: list[_Line]) -> list[Block]:
    levels = _heading_levels(lines)
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    para: list[str] = []
    para_page = 0
    prev: _Line | None = None

    def flush() -> None:
        if para:
            blocks.append(Block(_join(para), path_of(stack), page=para_page))
            para.clear()

    for line in lines:
        if not line.text:
            flush()
            prev = None
            continue
        level = levels.get(round(line.size * 2) / 2, 0) if _heading_like(line.text) else 0
        if level:
            flush()
            last = blocks[-1] if blocks else None
            if last is not None and last.level == level and prev is not None and _continues(prev, line):
                # a heading wrapped over two lines is one heading
                text = _join([last.text, line.text])
                stack = heading_stack(stack[:-1], level, text)
                blocks[-1] = Block(text, path_of(stack), page=line.page, level=level)
            else:
                stack = heading_stack(stack, level, line.text)
                blocks.append(Block(line.text, path_of(stack), page=line.page, level=level))
            prev = line
            continue
        if prev is None or not _continues(prev, line) or (blocks and blocks[-1].level and not para):
            flush()
            para_page = line.page
        para.append(line.text)
        prev = line
    flush()
    return blocks


_OFFICE_TITLE = re.compile(r"^Microsoft (?:Word|PowerPoint|Excel) - ")


@contextmanager
def _quiet_pypdf() -> Iterator[None]:
    """pypdf logs every defect it works around ("EOF marker not found", unsupported encodings, the latter
    at error level with a 256-entry table); with no logging configured they land on the ingest's stderr.
    What matters reaches the caller as a ConversionError instead."""
    logger = logging.getLogger("pypdf")
    previous = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(previous)


def convert(path: Path) -> Converted:
    """Convert a PDF; raise ConversionError for encrypted, corrupt or text-less (scanned) files."""
    with _quiet_pypdf():
        return _convert(path)


def _convert(path: Path) -> Converted:
    reader = _open(path)
    lines, pages = _read_lines(reader, path)
    if not any(line.text for line in lines):
        raise ConversionError("no text layer (scanned PDF?)", str(path))
    blocks = _blocks(lines)
    try:
        info = reader.metadata
        title, author = (info.title, info.author) if info else (None, None)
        created = info.creation_date if info else None
    except (PyPdfError, ValueError, TypeError, KeyError):  # malformed info dictionary or date
        title = author = created = None
    if isinstance(title, str):
        title = _OFFICE_TITLE.sub("", title)
    metadata = base_metadata("pdf", title, author, created)
    metadata["pages"] = str(pages)
    with_text = {line.page for line in lines if line.text}
    empty = [str(n) for n in range(1, pages + 1) if n not in with_text]
    if empty:
        metadata["pages_without_text"] = empty
    first_heading = next((b.text for b in blocks if b.level), None)
    return Converted(
        title=str(metadata.get("title") or first_heading or path.stem),
        blocks=blocks,
        metadata=metadata,
        source_type="pdf",
    )
