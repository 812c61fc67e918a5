"""What every converter returns: a flat, ordered list of blocks, each carrying the position a citation needs.

A flat list (rather than a tree) keeps the chunker simple: it can group consecutive blocks that share a
`heading_path` and still know, for every character it emits, which page, slide or time range it came from.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

from ...errors import IngestError

BLOCK_SEPARATOR = "\n\n"


class ConversionError(IngestError):
    """A file could not be converted. `str(error)` is one line meant for the person who owns the file.

    It subclasses `IngestError` so the ingest loop, which already reports and skips unreadable files,
    handles converted formats the same way without special cases.
    """

    def __init__(self, message: str, path: str | None = None) -> None:
        message = " ".join(message.split())  # one line, whatever a library put in the reason
        super().__init__(message)
        self.message = message
        self.path = path


@dataclass(frozen=True, slots=True)
class Block:
    """One heading, paragraph, list item, table, slide body or transcript window.

    `heading_path` is the chain of headings above the block; for a heading block it ends with the heading
    itself, so a heading and the text under it share a path. `level` is 1-6 for headings and 0 otherwise.
    Position fields are set only where the format has them: `page` (PDF, 1-based), `slide` (PPTX,
    1-based), `start`/`end` in seconds and `speakers` (transcripts).
    """

    text: str
    heading_path: tuple[str, ...]
    page: int | None = None
    slide: int | None = None
    start: float | None = None
    end: float | None = None
    speakers: tuple[str, ...] = ()
    level: int = 0

    @property
    def is_heading(self) -> bool:
        return self.level > 0


@dataclass
class Converted:
    """A converted file. `metadata` always has `source_type`; `title`, `author`, `created` (YYYY-MM-DD)
    and format-specific keys (`pages`, `slides`, `sheets`, `speakers`, `duration`) appear when known."""

    title: str
    blocks: list[Block]
    metadata: dict[str, str | list[str]] = field(default_factory=dict)
    source_type: str = ""

    @property
    def text(self) -> str:
        """The blocks joined by a blank line: the string that `spans()` offsets point into."""
        return BLOCK_SEPARATOR.join(block.text for block in self.blocks)

    def spans(self) -> list[tuple[int, int]]:
        """Character offsets `(start, end)` of each block in `text`, so a citation can name a range
        without the store keeping a second copy of the document."""
        spans: list[tuple[int, int]] = []
        offset = 0
        for block in self.blocks:
            spans.append((offset, offset + len(block.text)))
            offset += len(block.text) + len(BLOCK_SEPARATOR)
        return spans

    def to_markdown(self) -> str:
        """Markdown with `#` headings: a fallback for feeding the existing Markdown article parser
        (positions are lost that way; prefer the blocks)."""
        parts = [f"{'#' * min(block.level, 6)} {block.text}" if block.level else block.text for block in self.blocks]
        return BLOCK_SEPARATOR.join(parts)


def heading_stack(stack: list[tuple[int, str]], level: int, text: str) -> list[tuple[int, str]]:
    """The heading stack after a heading of `level`: deeper-or-equal headings are closed first.
    Shared by every converter so skipped levels (h1 -> h3) behave the same everywhere."""
    return [*(item for item in stack if item[0] < level), (level, text)]


def path_of(stack: list[tuple[int, str]]) -> tuple[str, ...]:
    return tuple(text for _, text in stack)


def clean_text(text: str) -> str:
    """Collapse whitespace runs (including non-breaking spaces) to single spaces."""
    return " ".join(text.replace("\u00a0", " ").split())


def pipe_row(cells: list[str]) -> str:
    """A Markdown table row; pipes inside cells are escaped so the column count stays right."""
    return "| " + " | ".join(clean_text(cell).replace("|", "\\|") for cell in cells) + " |"


def pipe_table(rows: list[list[str]]) -> str:
    """Rows as a Markdown pipe table, the first row as header. Short rows are padded, trailing empty
    columns dropped, so ragged source tables still render as one rectangle."""
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        return ""
    width = max(max((i + 1 for i, cell in enumerate(row) if cell.strip()), default=0) for row in rows)
    rows = [(row + [""] * width)[:width] for row in rows]
    lines = [pipe_row(rows[0]), "| " + " | ".join(["---"] * width) + " |"]
    lines.extend(pipe_row(row) for row in rows[1:])
    return "\n".join(lines)


def iso_date(value: object) -> str | None:
    """`YYYY-MM-DD` from a datetime/date (document properties), or None when absent or unparseable."""
    isoformat = getattr(value, "isoformat", None)
    if value is None or isoformat is None:
        return None
    return str(isoformat())[:10]


# values tools write when the author left a property empty: better absent than cited
PLACEHOLDERS = {"untitled", "anonymous", "unknown", "unspecified", "none", "null", "n/a"}


def _real(value: object) -> str | None:
    if isinstance(value, str) and value.strip() and value.strip().lower().strip("()") not in PLACEHOLDERS:
        return clean_text(value)
    return None


def base_metadata(source_type: str, title: object = None, author: object = None, created: object = None) -> dict:
    """The common metadata keys, leaving out the ones a file does not have."""
    metadata: dict[str, str | list[str]] = {"source_type": source_type}
    if _real(title):
        metadata["title"] = str(_real(title))
    if _real(author):
        metadata["author"] = str(_real(author))
    date = iso_date(created)
    if date:
        metadata["created"] = date
    return metadata


def decode(raw: bytes) -> str:
    """Bytes -> text: BOM, else UTF-8, else the declared meta charset, else Windows-1252 (never fails)."""
    if raw.startswith(codecs.BOM_UTF8):
        return raw[3:].decode("utf-8", "replace")
    if raw.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):  # before UTF-16: same first two bytes
        return raw.decode("utf-32", "replace")
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return raw.decode("utf-16", "replace")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    declared = re.search(rb"<meta[^>]+charset=[\"']?([\w-]+)", raw[:4096], re.IGNORECASE)
    if declared:
        try:
            return raw.decode(declared.group(1).decode("ascii"), "replace")
        except LookupError:
            pass
    return raw.decode("cp1252", "replace")
