"""Finding and reading source files. Each malformed file (or BEIR line) is reported and skipped."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import IngestError
from .articles import Document, parse_beir_line, parse_markdown

TEXT_SUFFIXES = {".md", ".markdown", ".txt"}
JSONL_SUFFIXES = {".jsonl"}
SYNONYMS_FILE = "synonyms.yaml"


@dataclass
class SourceFile:
    path: Path
    root: Path  # the folder (or file) that was passed to ingest

    @property
    def relative(self) -> str:
        if self.root.is_dir():
            return self.path.relative_to(self.root).as_posix()
        return self.path.name


def discover(paths: list[Path]) -> tuple[list[SourceFile], list[Path], list[str]]:
    """Files to ingest, synonym files found at folder roots, and problems with the paths themselves."""
    files: list[SourceFile] = []
    synonyms: list[Path] = []
    problems: list[str] = []
    for raw in paths:
        root = raw.expanduser().resolve()
        if not root.exists():
            problems.append(f"{raw}: no such file or directory")
            continue
        if root.is_file():
            if root.name == SYNONYMS_FILE:
                synonyms.append(root)
            elif root.suffix.lower() in TEXT_SUFFIXES | JSONL_SUFFIXES:
                files.append(SourceFile(root, root))
            else:
                problems.append(f"{raw}: unsupported file type {root.suffix or '(none)'}")
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
            if path.suffix.lower() in TEXT_SUFFIXES | JSONL_SUFFIXES:
                files.append(SourceFile(path, root))
            elif path.name != SYNONYMS_FILE and path.suffix.lower() not in {".yaml", ".yml"}:
                problems.append(f"{path}: skipped, unsupported file type {path.suffix or '(none)'}")
    return files, synonyms, problems


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise IngestError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise IngestError(f"{path}: cannot read ({exc.strerror})") from None


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
        yield parse_markdown(text, source=str(source.path), default_id=source.relative,
                             default_title=source.path.stem.replace("_", " ").replace("-", " "))
    except IngestError as exc:
        yield exc
