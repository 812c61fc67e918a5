"""XLSX -> per sheet a heading block and pipe-table blocks of at most `rows_per_block` rows, via openpyxl.

Each table block repeats the sheet's first non-empty row as its header so a chunk read alone still says
what its columns mean. A spreadsheet has no pages, so a block's locator is its heading path
`(sheet name, "rows A-B")` with the 1-based spreadsheet row numbers. Values are the cached results of
formulas (`data_only`): a file never opened in Excel after its formulas changed shows empty cells there.
"""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path

import openpyxl
from openpyxl.utils.exceptions import InvalidFileException

from .types import Block, ConversionError, Converted, base_metadata, pipe_table

ROWS_PER_BLOCK = 50


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)


def convert(path: Path, rows_per_block: int = ROWS_PER_BLOCK) -> Converted:
    """Convert an XLSX workbook; raise ConversionError when it is not a readable Excel file."""
    try:
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, InvalidFileException) as exc:
        raise ConversionError("not a valid XLSX file (corrupt or not a zip archive)", str(path)) from exc
    except (KeyError, ValueError, OSError) as exc:
        raise ConversionError(f"not a valid XLSX file ({exc})", str(path)) from exc
    blocks: list[Block] = []
    sheets: list[str] = []
    try:
        for sheet in workbook.worksheets:
            name = str(sheet.title)
            sheets.append(name)
            rows = [
                (number, [_cell(value) for value in row])
                for number, row in enumerate(sheet.iter_rows(values_only=True), start=1)
                if any(value is not None and str(value).strip() for value in row)
            ]
            if not rows:
                continue
            blocks.append(Block(name, (name,), level=1))
            header_number, header = rows[0]
            body = rows[1:]
            if not body:
                blocks.append(Block(pipe_table([header]), (name, f"row {header_number}")))
                continue
            for i in range(0, len(body), max(rows_per_block, 1)):
                window = body[i : i + max(rows_per_block, 1)]
                first, last = window[0][0], window[-1][0]
                locator = f"rows {first}-{last}" if first != last else f"row {first}"
                blocks.append(Block(pipe_table([header] + [row for _, row in window]), (name, locator)))
        props = workbook.properties
    finally:
        workbook.close()
    metadata = base_metadata("xlsx", props.title, props.creator, props.created)
    metadata["sheets"] = sheets
    return Converted(
        title=str(metadata.get("title") or path.stem),
        blocks=blocks,
        metadata=metadata,
        source_type="xlsx",
    )
