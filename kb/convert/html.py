"""HTML -> blocks with heading paths, using the standard library's `html.parser` (no dependency).

A streaming parser is enough: h1-h6 open headings, block-level elements (p, li, div, td, ...) end a
text block, tables become pipe rows. Page chrome that would pollute answers (script, style, nav,
noscript, template, svg) is dropped. The parser never raises on malformed markup, so a broken page
degrades to less structure rather than an error.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from .types import (
    Block,
    ConversionError,
    Converted,
    base_metadata,
    clean_text,
    decode,
    heading_stack,
    path_of,
    pipe_table,
)

SKIP = {"script", "style", "nav", "noscript", "template", "svg", "iframe", "object", "canvas", "select"}
BLOCK = {
    "p", "div", "section", "article", "main", "header", "footer", "aside", "ul", "ol", "dl", "dt", "dd",
    "blockquote", "pre", "figure", "figcaption", "form", "fieldset", "address", "details", "summary",
    "hr", "body", "html", "li", "caption", "center", "legend",
}
HEADINGS = {f"h{n}": n for n in range(1, 7)}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_DATE_META = ("dcterms.created", "dc.date.created", "article:published_time", "date", "dc.date", "created")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


class _Parser(HTMLParser):
    """Collects blocks as the markup streams past; see the module docstring for the rules."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.stack: list[tuple[int, str]] = []
        self.title_parts: list[str] | None = None
        self.title = ""
        self.meta: dict[str, str] = {}
        self.lang = ""
        self._skip: list[str] = []
        self._buf: list[str] = []
        self._prefix = ""
        self._lists = 0
        self._pre = 0
        self._heading: tuple[int, list[str]] | None = None
        self._tables: list[list[str]] = []  # outermost table's rows of cells (nested tables are flattened)
        self._cell: list[str] | None = None
        self._table_depth = 0

    # structure ---------------------------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip:
            if tag == self._skip[-1] and tag not in VOID:
                self._skip.append(tag)
            return
        if tag in SKIP:
            self._skip.append(tag)
            return
        if tag == "html":
            self.lang = dict(attrs).get("lang") or ""
        if tag == "title":
            self.title_parts = []
        elif tag == "meta":
            values = dict(attrs)
            key = (values.get("name") or values.get("property") or "").lower()
            if key and values.get("content"):
                self.meta.setdefault(key, values["content"] or "")
        elif tag == "br":
            self._text("\n")
        elif self._table_depth:
            self._table_start(tag)
        elif tag == "table":
            self._flush()
            self._table_depth = 1
            self._tables = []
        elif tag in HEADINGS:
            self._flush()
            self._heading = (HEADINGS[tag], [])
        elif tag in BLOCK:
            self._flush()
            if tag in ("ul", "ol"):
                self._lists += 1
            elif tag == "li":
                self._prefix = "  " * max(self._lists - 1, 0) + "- "
            elif tag == "pre":
                self._pre += 1

    def handle_endtag(self, tag: str) -> None:
        if self._skip:
            if tag == self._skip[-1]:
                self._skip.pop()
            return
        if tag == "title" and self.title_parts is not None:
            self.title = self.title or clean_text("".join(self.title_parts))
            self.title_parts = None
        elif self._table_depth:
            self._table_end(tag)
        elif tag in HEADINGS and self._heading is not None:
            level, parts = self._heading
            self._heading = None
            text = clean_text("".join(parts))
            if text:
                self.stack = heading_stack(self.stack, level, text)
                self.blocks.append(Block(text, path_of(self.stack), level=level))
        elif tag in BLOCK:
            self._flush()
            if tag in ("ul", "ol"):
                self._lists = max(self._lists - 1, 0)
            elif tag == "pre":
                self._pre = max(self._pre - 1, 0)

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self._text(data)

    # tables ------------------------------------------------------------------------------------------
    def _table_start(self, tag: str) -> None:
        if tag == "table":
            self._table_depth += 1
        elif self._table_depth == 1 and tag == "tr":
            self._end_cell()  # </td> and </tr> may be omitted
            self._tables.append([])
        elif self._table_depth == 1 and tag in ("td", "th"):
            self._end_cell()
            if not self._tables:
                self._tables.append([])
            self._cell = []
        elif self._cell is not None and tag in BLOCK | set(HEADINGS):
            self._cell.append(" ")

    def _table_end(self, tag: str) -> None:
        if tag == "table":
            self._table_depth -= 1
            if self._table_depth == 0:
                self._end_cell()
                text = pipe_table(self._tables)
                if text:
                    self.blocks.append(Block(text, path_of(self.stack)))
                self._tables = []
        elif self._table_depth == 1 and tag in ("td", "th", "tr"):
            self._end_cell()

    def _end_cell(self) -> None:
        if self._cell is not None and self._tables:
            self._tables[-1].append(clean_text("".join(self._cell)))
        self._cell = None

    # text --------------------------------------------------------------------------------------------
    def _text(self, data: str) -> None:
        if self.title_parts is not None:
            self.title_parts.append(data)
        elif self._table_depth:
            if self._cell is not None:
                self._cell.append(data)
        elif self._heading is not None:
            self._heading[1].append(data)
        else:
            self._buf.append(data)

    def _flush(self) -> None:
        raw = "".join(self._buf)
        self._buf = []
        if self._pre:
            text = "\n".join(line.rstrip() for line in raw.strip("\n").splitlines())
        else:
            text = "\n".join(filter(None, (clean_text(line) for line in raw.split("\n"))))
        if text.strip():
            self.blocks.append(Block(self._prefix + text, path_of(self.stack)))
        self._prefix = ""

    def close(self) -> None:
        super().close()
        if self._table_depth:
            self._table_depth = 1
            self._table_end("table")
        if self._heading is not None:
            self.handle_endtag(f"h{self._heading[0]}")
        self._flush()


def convert(path: Path) -> Converted:
    """Convert an HTML file; the title is <title>, else the first h1, else the file name."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConversionError(f"cannot read file ({exc.strerror or exc})", str(path)) from exc
    parser = _Parser()
    parser.feed(decode(raw))
    parser.close()
    created = next((parser.meta[key] for key in _DATE_META if _ISO_DATE.match(parser.meta.get(key, ""))), None)
    metadata = base_metadata("html", parser.title, parser.meta.get("author"))
    if created:
        metadata["created"] = created[:10]
    if parser.meta.get("description"):
        metadata["description"] = clean_text(parser.meta["description"])
    if parser.lang:
        metadata["language"] = parser.lang
    first_h1 = next((b.text for b in parser.blocks if b.level == 1), None)
    return Converted(
        title=str(metadata.get("title") or first_h1 or path.stem),
        blocks=parser.blocks,
        metadata=metadata,
        source_type="html",
    )
