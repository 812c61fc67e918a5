"""Documents and sections: reading KB articles (front matter + `## Sections`) and BEIR records.

A section's heading names its kind; the kind decides the chunk type and the tier used when the
context is assembled (critical material first). The mapping is data so another KB can extend it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import yaml

from ..errors import IngestError

# Bump when parsing or chunking changes what a file becomes: stores re-parse every file once.
PARSER_VERSION = "3"  # 3: every document carries namespace and confidentiality

# heading (normalised) -> (chunk_type, tier)
SECTION_KINDS: dict[str, tuple[str, str]] = {
    "decision guide": ("decision_guide", "critical"),
    "response frame": ("response_frames", "critical"),
    "response frames": ("response_frames", "critical"),
    "guardrails": ("guardrails", "critical"),
    "guardrail": ("guardrails", "critical"),
    "business rules": ("business_rules", "critical"),
    "business rule": ("business_rules", "critical"),
    "required data": ("required_data", "high"),
    "eligibility": ("eligibility", "high"),
    "steps": ("steps", "high"),
    "fees": ("fees", "high"),
    "common issues": ("common_issues", "high"),
    "examples": ("examples", "medium"),
    "example": ("examples", "medium"),
    "faq": ("faqs", "medium"),
    "faqs": ("faqs", "medium"),
    "background": ("background", "low"),
    "related": ("background", "low"),
}
CONTENT = ("content", "medium")
# The format's facets: front-matter keys whose values the agent recognises in questions and filters on.
FACETS = ("record_keeper", "plan_type", "topic")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


@dataclass
class Section:
    heading: str
    chunk_type: str
    tier: str
    text: str


@dataclass
class Document:
    doc_id: str
    title: str
    metadata: dict[str, Any]
    sections: list[Section]
    source: str
    content_hash: str
    structured: bool = False  # True when the file follows the KB article format (front matter)
    warnings: list[str] = field(default_factory=list)


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def section_kind(heading: str, kinds: dict[str, tuple[str, str]] = SECTION_KINDS) -> tuple[str, str]:
    """Kind of a section from its heading: exact name, or a name followed by a descriptor
    ("Guardrails (what never to say)", "Fees and charges", "Steps to apply"); else content."""
    text = re.sub(r"\([^)]*\)", " ", heading.lower())
    key = re.sub(r"\s+", " ", re.sub(r"[^a-z0-9 ]+", " ", text)).strip()
    if key in kinds:
        return kinds[key]
    for name in sorted(kinds, key=len, reverse=True):
        if key.startswith(name + " "):
            return kinds[name]
    return CONTENT


def metadata_value(value: Any) -> Any:
    """Front-matter value as filterable metadata (Pinecone's types), or None if it cannot be one."""
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, list | tuple) and all(isinstance(v, str | int | float | bool) for v in value):
        return [str(v) for v in value]
    return None


def split_front_matter(text: str, source: str) -> tuple[dict[str, Any] | None, str]:
    if not text.startswith("---"):
        return None, text
    lines = text.splitlines(keepends=True)
    if lines[0].strip() != "---":
        return None, text
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            raw = "".join(lines[1:i])
            try:
                data = yaml.safe_load(raw) or {}
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                where = f" (front matter line {mark.line + 2})" if mark else ""
                raise IngestError(f"{source}: malformed YAML front matter{where}") from None
            if not isinstance(data, dict):
                raise IngestError(f"{source}: front matter must be a YAML mapping")
            return data, "".join(lines[i + 1:])
    raise IngestError(f"{source}: front matter opened with '---' but never closed")


def parse_markdown(text: str, *, source: str, default_id: str, default_title: str,
                   kinds: dict[str, tuple[str, str]] = SECTION_KINDS) -> Document:
    """Parse one Markdown/text file. With front matter it is a structured article, otherwise plain content."""
    front, body = split_front_matter(text, source)
    structured = front is not None
    front = front or {}
    if structured:
        missing = [k for k in ("id", "title") if not str(front.get(k) or "").strip()]
        if missing:
            raise IngestError(f"{source}: front matter lacks required key(s): {', '.join(missing)}")
    doc_id = str(front.get("id") or default_id).strip()
    if any(c.isspace() for c in doc_id) or len(doc_id) > 200:
        raise IngestError(f"{source}: id {doc_id!r} must be at most 200 characters without spaces")

    sections: list[Section] = []
    heading, buf, first_h1 = "", [], None
    in_fence = False

    def flush() -> None:
        body_text = "".join(buf).strip()
        if body_text:
            chunk_type, tier = section_kind(heading, kinds) if (structured and heading) else CONTENT
            sections.append(Section(heading or "", chunk_type, tier, body_text))

    for line in body.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line.rstrip("\n"))
        if m and len(m.group(1)) == 1 and first_h1 is None and not sections and not "".join(buf).strip():
            first_h1 = m.group(2).strip()
            continue
        if m and len(m.group(1)) <= 2:
            flush()
            heading, buf = m.group(2).strip(), []
            continue
        buf.append(line)
    flush()

    title = str(front.get("title") or first_h1 or default_title).strip()
    metadata = {}
    for key, value in front.items():
        if key in ("id", "title"):
            continue
        mv = metadata_value(value)
        if mv is not None:
            metadata[str(key)] = mv
    return Document(doc_id=doc_id, title=title, metadata=metadata, sections=sections, source=source,
                    content_hash=content_hash(text), structured=structured)


def parse_beir_line(line: str, *, source: str, lineno: int) -> Document:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise IngestError(f"{source}:{lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(record, dict) or "_id" not in record:
        raise IngestError(f"{source}:{lineno}: a BEIR record needs an '_id'")
    text = str(record.get("text") or "").strip()
    title = str(record.get("title") or "").strip()
    if not text and not title:
        raise IngestError(f"{source}:{lineno}: record {record['_id']!r} has neither title nor text")
    metadata = {}
    raw_meta = record.get("metadata") or {}
    if isinstance(raw_meta, dict):
        for key, value in raw_meta.items():
            mv = metadata_value(value)
            if mv is not None:
                metadata[str(key)] = mv
    doc_id = str(record["_id"])
    return Document(doc_id=doc_id, title=title or doc_id, metadata=metadata,
                    sections=[Section("", *CONTENT, text or title)], source=source,
                    content_hash=content_hash(line.strip()))
