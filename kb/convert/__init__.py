"""Conversion of office documents, web pages and call transcripts into position-carrying blocks.

`convert(path)` picks a converter by suffix and returns a `Converted` whose blocks keep what a citation
needs: page (PDF, and Word-saved DOCX), slide (PPTX), heading path (all structured formats), start/end
time and speakers (transcripts), and character offsets via `Converted.spans()`. Every failure a person
can fix is a `ConversionError` with a one-line message; the layer never downloads or calls a service.

Converter modules are imported on first use so that importing this package (e.g. by ingest for
Markdown-only knowledge bases) does not pay for pypdf, python-docx, python-pptx and openpyxl.
"""

from __future__ import annotations

import inspect
from importlib import import_module
from pathlib import Path
from typing import Any

from .types import Block, ConversionError, Converted

__all__ = ["LEGACY", "SUFFIXES", "Block", "ConversionError", "Converted", "convert", "convertible"]

# suffix -> source_type (also the converter module's name, except transcripts)
SUFFIXES: dict[str, str] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".vtt": "transcript",
    ".srt": "transcript",
}
# Old binary Office formats: named so the error can say what to do instead of just "unsupported".
LEGACY = {".doc": ".docx", ".ppt": ".pptx", ".xls": ".xlsx"}
TRANSCRIPT_TEXT_SUFFIXES = {".txt"}  # converted only when the content looks like a transcript
MAX_BYTES = 200 * 1024 * 1024


def _sniff_transcript(path: Path) -> bool:
    from .transcript import is_transcript
    from .types import decode

    try:
        with path.open("rb") as handle:
            return is_transcript(decode(handle.read(20000)))
    except OSError:
        return False


def source_type(path: Path) -> str | None:
    """The converter that would handle `path`, or None. A `.txt` file counts only when it looks like a
    timestamped transcript, so ordinary text stays with the Markdown/text loader."""
    suffix = path.suffix.lower()
    if suffix in SUFFIXES:
        return SUFFIXES[suffix]
    if suffix in TRANSCRIPT_TEXT_SUFFIXES and path.is_file() and _sniff_transcript(path):
        return "transcript"
    return None


def convertible(path: Path) -> bool:
    """Whether `convert` should be tried for this file (cheap: suffix, plus a peek into `.txt` files)."""
    return source_type(path) is not None


def convert(path: Path | str, max_bytes: int = MAX_BYTES, **options: Any) -> Converted:
    """Convert one file. Options go to the converters that take them (`max_words=` for transcripts,
    `notes=` for PPTX, `rows_per_block=` for XLSX), so one call site can pass them all for every file.
    Raises ConversionError with a one-line reason."""
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.is_file():
        raise ConversionError("file not found" if not path.exists() else "not a regular file", str(path))
    kind = source_type(path)
    if kind is None:
        if suffix in LEGACY:
            raise ConversionError(f"unsupported file type '{suffix}' (save it as {LEGACY[suffix]})", str(path))
        supported = ", ".join(sorted(SUFFIXES))
        raise ConversionError(f"unsupported file type '{suffix or '(none)'}' (supported: {supported})", str(path))
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ConversionError(f"cannot read file ({exc.strerror or exc})", str(path)) from exc
    if size == 0:
        raise ConversionError("empty file (0 bytes)", str(path))
    if size > max_bytes:
        raise ConversionError(f"file too large ({size // 2**20} MiB > {max_bytes // 2**20} MiB)", str(path))
    module = import_module(f".{kind}", __name__)
    accepted = inspect.signature(module.convert).parameters
    try:
        result: Converted = module.convert(path, **{k: v for k, v in options.items() if k in accepted})
    except ConversionError:
        raise
    except Exception as exc:  # a library choking on a malformed file: report it, do not crash the ingest
        reason = f"{type(exc).__name__}: {exc}"[:200]
        raise ConversionError(f"could not convert {kind.upper()} file ({reason})", str(path)) from exc
    if not result.blocks:
        raise ConversionError("no extractable text", str(path))
    return result
