"""Finding and reading source files. Each malformed file (or BEIR line) is reported and skipped.

Markdown, text and BEIR `.jsonl` are parsed here; office documents, web pages and transcripts go
through `kb.convert`, whose position-carrying blocks become sections (one per heading) made of units
(one per block), so the chunker can say which page, slide, heading or time range every chunk came from.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import IngestError
from .articles import (
    CONTENT,
    SECTION_KINDS,
    Document,
    Section,
    Unit,
    parse_beir_line,
    parse_markdown,
    screen,
    section_kind,
)
from .convert import LEGACY, SUFFIXES, Converted
from .convert.transcript import is_transcript
from .convert.types import decode

TEXT_SUFFIXES = {".md", ".markdown", ".txt"}
JSONL_SUFFIXES = {".jsonl"}
CONVERTED_SUFFIXES = set(SUFFIXES)
TEXT_KINDS = ("markdown", "text", "beir")  # source types read here; every other one goes through kb.convert
SYNONYMS_FILE = "synonyms.yaml"
# document properties of a converted file that become filterable metadata (besides source_type)
PROPERTY_KEYS = ("author", "created", "language", "speakers", "callers")


@dataclass
class SourceFile:
    path: Path
    root: Path  # the folder (or file) that was passed to ingest

    @property
    def relative(self) -> str:
        if self.root.is_dir():
            return self.path.relative_to(self.root).as_posix()
        return self.path.name


def supported(path: Path) -> bool:
    return path.suffix.lower() in TEXT_SUFFIXES | JSONL_SUFFIXES | CONVERTED_SUFFIXES


def unsupported_reason(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in LEGACY:
        return f"unsupported file type {suffix} (save it as {LEGACY[suffix]})"
    return f"unsupported file type {path.suffix or '(none)'}"


def discover(paths: list[Path]) -> tuple[list[SourceFile], list[Path], list[tuple[str, str]]]:
    """Files to ingest, synonym files found at folder roots, and (path, reason) for every input that
    cannot be ingested (missing paths, unsupported file types)."""
    files: list[SourceFile] = []
    synonyms: list[Path] = []
    problems: list[tuple[str, str]] = []
    for raw in paths:
        root = raw.expanduser().resolve()
        if not root.exists():
            problems.append((str(raw), "no such file or directory"))
            continue
        if root.is_file():
            if root.name == SYNONYMS_FILE:
                synonyms.append(root)
            elif supported(root):
                files.append(SourceFile(root, root))
            else:
                problems.append((str(raw), unsupported_reason(root)))
            continue
        if not root.is_dir():  # a device, a FIFO: reading one could block or never end
            problems.append(f"{raw}: not a regular file or directory")
            continue
        if (root / SYNONYMS_FILE).is_file():
            synonyms.append(root / SYNONYMS_FILE)
        for path in sorted(root.rglob("*")):
            rel_parts = path.relative_to(root).parts
            if any(part.startswith(".") for part in rel_parts) or not path.is_file():
                continue
            if supported(path):
                files.append(SourceFile(path, root))
            elif path.name != SYNONYMS_FILE and path.suffix.lower() not in {".yaml", ".yml"}:
                problems.append((str(path), unsupported_reason(path)))
    return files, synonyms, problems


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise IngestError(f"{path}: cannot read ({exc.strerror or exc})") from None


def read_text(path: Path) -> str:
    return text_of(read_bytes(path), path)


def text_of(raw: bytes, path: Path) -> str:
    """UTF-8 text with universal newlines: exactly what `Path.read_text` gives, so digests of Markdown
    files stay what earlier versions recorded (no needless re-ingest)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise IngestError(f"{path}: not UTF-8 text") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def source_type(path: Path, raw: bytes) -> str:
    """pdf, docx, html, pptx, xlsx, transcript (incl. timestamped `.txt`), beir, markdown or text."""
    suffix = path.suffix.lower()
    if suffix in SUFFIXES:
        return SUFFIXES[suffix]
    if suffix in JSONL_SUFFIXES:
        return "beir"
    if suffix == ".txt":
        return "transcript" if is_transcript(decode(raw[:20000])) else "text"
    return "markdown"


def digest_of(raw: bytes, text: str | None) -> str:
    """What decides "unchanged": the text for text files (see `text_of`), the bytes otherwise."""
    return hashlib.sha256(text.encode("utf-8") if text is not None else raw).hexdigest()


def read_documents(source: SourceFile, text: str) -> Iterator[Document | IngestError]:
    """Documents of one file; errors are yielded, not raised, so one bad BEIR line skips only itself."""
    suffix = source.path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                yield parse_beir_line(line, source=str(source.path), lineno=lineno)
            except IngestError as exc:
                yield exc
        return
    try:
        doc = parse_markdown(text, source=str(source.path), default_id=source.relative,
                             default_title=source.path.stem.replace("_", " ").replace("-", " "))
    except IngestError as exc:
        yield exc
        return
    doc.source_type = "text" if suffix == ".txt" else "markdown"
    yield doc


def converted_document(result: Converted, source: SourceFile, digest: str,
                       kinds: dict[str, tuple[str, str]] = SECTION_KINDS) -> Document:
    """A converted file as a Document: one section per heading (its kind from the heading, so a "Steps"
    heading in a Word file is a steps section), made of the blocks under it as units with their
    positions. A file without headings is one section, chunked at block (paragraph) boundaries."""
    spans = result.spans()
    sections: list[Section] = []
    path: tuple[str, ...] = ()
    units: list[Unit] = []

    def flush() -> None:
        if not units:
            return
        shown = path[1:] if len(path) > 1 and path[0] == result.title else path  # the title is indexed anyway
        chunk_type, tier = section_kind(path[-1], kinds, aliases={}) if path else CONTENT
        sections.append(Section(" > ".join(shown), chunk_type, tier, "\n\n".join(u.text for u in units),
                                start=units[0].start, units=list(units), heading_path=path))
        units.clear()

    for block, (start, end) in zip(result.blocks, spans, strict=True):
        if block.level or block.heading_path != path:
            flush()
            path = block.heading_path
        if block.level:
            continue
        units.append(Unit(block.text, start, end, block.page, block.slide, block.start, block.end, block.speakers))
        if result.source_type == "transcript":
            flush()  # each window of a call is its own chunk: a call moves from subject to subject
    flush()
    if not sections:  # headings only (a deck of title slides): the headings are the text
        units = [Unit(b.text, s, e, b.page, b.slide, b.start, b.end, b.speakers)
                 for b, (s, e) in zip(result.blocks, spans, strict=True)]
        path = ()
        flush()
    metadata: dict[str, Any] = {"source_type": result.source_type}
    for key in PROPERTY_KEYS:
        value = result.metadata.get(key)
        if value:
            metadata[key] = value
    doc = Document(doc_id=source.relative, title=result.title, metadata=metadata, sections=sections,
                   source=str(source.path), content_hash=digest, structured=False, source_type=result.source_type)
    return screen(doc)  # held back whole, or one planted section of it
