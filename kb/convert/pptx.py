"""PPTX -> one heading block (the slide title) and one body block per slide, using python-pptx.

A slide is the unit people cite ("slide 12"), so every block keeps its 1-based slide number, hidden
slides included (numbering must match what PowerPoint shows). Body shapes are read top-to-bottom,
left-to-right rather than in z-order, tables become pipe rows, grouped shapes are descended into, and
speaker notes become a third block under the path (title, "Notes") unless `notes=False`.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pptx
from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER
from pptx.exc import PackageNotFoundError

from .types import Block, ConversionError, Converted, base_metadata, clean_text, pipe_table

NOTES_HEADING = "Notes"
_TITLE_TYPES = {PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE, PP_PLACEHOLDER.VERTICAL_TITLE}
_SKIP_TYPES = {PP_PLACEHOLDER.SLIDE_NUMBER, PP_PLACEHOLDER.FOOTER, PP_PLACEHOLDER.DATE}


def _open(path: Path) -> Any:
    try:
        return pptx.Presentation(str(path))
    except (zipfile.BadZipFile, PackageNotFoundError) as exc:
        raise ConversionError("not a valid PPTX file (corrupt or not a zip archive)", str(path)) from exc
    except (KeyError, ValueError, OSError) as exc:
        raise ConversionError(f"not a valid PPTX file ({exc})", str(path)) from exc


def _placeholder_type(shape: Any) -> Any:
    if not shape.is_placeholder:
        return None
    try:
        return shape.placeholder_format.type
    except ValueError:
        return None


def _shapes(shapes: Any) -> Iterator[Any]:
    """Shapes in reading order (top, then left), group members in place of their group."""
    def key(shape: Any) -> tuple[int, int]:
        return (shape.top or 0, shape.left or 0)

    for shape in sorted(shapes, key=key):
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _shapes(shape.shapes)
        else:
            yield shape


def _text_frame_lines(frame: Any) -> list[str]:
    """Paragraph texts; indented bullet levels keep their depth as leading spaces."""
    lines = []
    for paragraph in frame.paragraphs:
        text = clean_text(paragraph.text)
        if text:
            lines.append("  " * (paragraph.level or 0) + text)
    return lines


def _slide_content(slide: Any) -> tuple[str, list[str]]:
    title = ""
    body: list[str] = []
    for shape in _shapes(slide.shapes):
        kind = _placeholder_type(shape)
        if kind in _SKIP_TYPES:
            continue
        if kind in _TITLE_TYPES and not title and shape.has_text_frame:
            title = clean_text(shape.text_frame.text)
            continue
        if getattr(shape, "has_table", False) and shape.has_table:
            rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
            table = pipe_table(rows)
            if table:
                body.append(table)
        elif shape.has_text_frame:
            body.extend(_text_frame_lines(shape.text_frame))
    return title, body


def convert(path: Path, notes: bool = True) -> Converted:
    """Convert a PPTX; raise ConversionError when it is not a readable PowerPoint file."""
    presentation = _open(path)
    blocks: list[Block] = []
    first_title = None
    count = 0
    for number, slide in enumerate(presentation.slides, start=1):
        count = number
        title, body = _slide_content(slide)
        first_title = first_title or title or None
        heading = title or f"Slide {number}"
        blocks.append(Block(heading, (heading,), slide=number, level=1))
        if body:
            blocks.append(Block("\n".join(body), (heading,), slide=number))
        if notes and slide.has_notes_slide:
            frame = slide.notes_slide.notes_text_frame
            text = "\n".join(_text_frame_lines(frame)) if frame is not None else ""
            if text:
                blocks.append(Block(text, (heading, NOTES_HEADING), slide=number))
    props = presentation.core_properties
    metadata = base_metadata("pptx", props.title, props.author, props.created)
    metadata["slides"] = str(count)
    if first_title is None and all(block.level for block in blocks):
        blocks = []  # only "Slide N" placeholders: the deck has no text (images only)
    return Converted(
        title=str(metadata.get("title") or first_title or path.stem),
        blocks=blocks,
        metadata=metadata,
        source_type="pptx",
    )
