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
from .text import addressed_sentences, clean_markdown, instruction_snippets, names_an_ai, visible

# Bump when parsing or chunking changes what a file becomes: stores re-parse every file once.
# 7: positions and source_type; quarantine; code blocks whole; namespace and confidentiality.
# 8: converted documents quarantined; a transcript window per chunk; more section-heading wordings.
# 22: one planted section of a document is held back, not the whole document (see screen).
# 23: a call's callers told by name (kb/convert/transcript.callers); the screening reads paragraphs addressed to
#     an AI reader (kb/text.addressed_orders) and more of their readers' names: stores of 22 are screened again.
# 24: callers told only by what a caller never says; virtual/digital support agents are staff.
# 25: a department's label answers ("Member Services"); "X speaking" is no agent's opening.
PARSER_VERSION = "25"

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
# Other wordings of the same kinds, as teams title an article's sections: matched whole (not "Never say die",
# "Costs of living"), and only in articles (a web page's "What not to say" section is its content).
HEADING_ALIASES: dict[str, tuple[str, str]] = {
    "what never to say": ("guardrails", "critical"),
    "what not to say": ("guardrails", "critical"),
    "never say": ("guardrails", "critical"),
    "frequently asked questions": ("faqs", "medium"),
    "questions and answers": ("faqs", "medium"),
    "q a": ("faqs", "medium"),
    "who qualifies": ("eligibility", "high"),
    "who is eligible": ("eligibility", "high"),
    "charges": ("fees", "high"),
    "costs": ("fees", "high"),
    "pricing": ("fees", "high"),
    "troubleshooting": ("common_issues", "high"),
    "known issues": ("common_issues", "high"),
    "common problems": ("common_issues", "high"),
    "worked examples": ("examples", "medium"),
}
# Beyond those exact wordings, a heading's shape names its kind the way a reader takes it: "What not to tell
# customers", "Questions customers ask", "Common questions", "Worked example", "Known login problems",
# "Baggage charges". Anchored, articles only, and narrow: "What not to use" is advice, "Questions to ask
# the customer" is the agent's checklist, "Tax issues" a topic, "Who covers the costs" a rule.
HEADING_PATTERNS: list[tuple[re.Pattern[str], tuple[str, str]]] = [(re.compile(p), kind) for p, kind in (
    (r"^(what|things|phrases|words|terms) (not|never) to (say|tell|promise|mention)\b|"
     r"^(words|phrases|terms) (not|never) to use\b", ("guardrails", "critical")),
    (r"^(common|customer|frequent|frequently asked)\b(\s\w+)?\s?questions\b|"
     r"^questions (customers|members|clients|callers|people|users|employees|patients|students) ask\b",
     ("faqs", "medium")),
    (r"\bexamples?$", ("examples", "medium")),
    (r"^troubleshooting\b|^(known|common|frequent|typical)\b.*\b(problems|issues)\b", ("common_issues", "high")),
    (r"^(?!(who|how|what|when|why|where)\b).*\b(fees|charges|pricing)$", ("fees", "high")),
)]
CONTENT = ("content", "medium")
# The format's facets: front-matter keys whose values the agent recognises in questions and filters on.
FACETS = ("record_keeper", "plan_type", "topic")
# The facet that says whose a text is (a provider is a name; a plan type is often a common word)
PROVIDER = "record_keeper"
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


@dataclass
class Unit:
    """A piece of a section the chunker never splits unless it alone exceeds the chunk size (a converted
    paragraph, list item, table, slide body or transcript window), with where it came from.

    Offsets index the document's text (`Converted.text` for converted files, the file's text for
    Markdown), so a citation can point at a character range without the store keeping a second copy.
    """

    text: str
    start: int | None = None
    end: int | None = None
    page: int | None = None
    slide: int | None = None
    start_time: float | None = None
    end_time: float | None = None
    speakers: tuple[str, ...] = ()


@dataclass
class Section:
    heading: str
    chunk_type: str
    tier: str
    text: str
    start: int | None = None  # offset of `text` in the document's text, when known (Markdown)
    units: list[Unit] | None = None  # converted files: the blocks `text` is made of, with their positions
    heading_path: tuple[str, ...] = ()  # converted files: the chain of headings above the section


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
    quarantine: str = ""  # why the document is not trusted as a source (it addresses the assistant)
    held: dict[int, str] = field(default_factory=dict)  # sections (by index) of one planted passage: held back
    source_type: str = ""  # pdf, docx, html, pptx, xlsx, transcript, markdown, text, beir
    tags: list[str] = field(default_factory=list)  # the RAG spec's chunk `tags`: front-matter tags, then k=v


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def section_kind(heading: str, kinds: dict[str, tuple[str, str]] = SECTION_KINDS,
                 aliases: dict[str, tuple[str, str]] = HEADING_ALIASES) -> tuple[str, str]:
    """Kind of a section from its heading: exact name or alias, or a name followed by a descriptor
    ("Guardrails (what never to say)", "Fees and charges", "Steps to apply"); else content."""
    text = re.sub(r"\([^)]*\)", " ", heading.lower())
    key = re.sub(r"\s+", " ", re.sub(r"[^a-z0-9 ]+", " ", text)).strip()
    if key in kinds:
        return kinds[key]
    if key in aliases:
        return aliases[key]
    for name in sorted(kinds, key=len, reverse=True):
        if key.startswith(name + " "):
            return kinds[name]
    if aliases:  # (articles only: a web page's or a guide's headings are its content)
        for pattern, kind in HEADING_PATTERNS:
            if pattern.search(key):
                return kind
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


QUARANTINED = "quarantined"  # chunk metadata of text that addresses the assistant: never retrieved or read
HELD_BACK = "held_back"  # document metadata: how many sections of it were held back (its answers are reviewed)
WRITTEN_AS_KB = frozenset({"", "markdown", "text", "beir"})  # other source types are converted prose
# Sections whose lines bind every answer drawn from their document (its Never-say and Always rules, the data
# it asks for): an order to the assistant there compromises the whole document, as one in its title,
# metadata or hidden comments does.
GOVERNING = frozenset({"guardrails", "required_data"})
# One section of orders is a planted passage only in a document with this many sections or more; in a
# shorter one the orders are what the document is for, and its other text goes with them. A heuristic, not a
# control (an author can add sections): chosen on the red-team corpus (hostile documents of 2-3 sections whose
# other sections carry the payload in words no check reads as an order) and the dev halves' tampered
# documents (6-12 sections, one planted passage each); not tuned on any test half.
PLANTED_MIN_SECTIONS = 4
FRONT_MATTER_MAX_BYTES = 64 * 1024
BEIR_MAX_LINE = 2_000_000
YAML_MAX_DEPTH = 10
YAML_MAX_NODES = 5000
TITLE_MAX_CHARS = 300
META_MAX_KEYS, META_MAX_STRING, META_MAX_LIST = 50, 500, 50


def safe_yaml(raw: str, source: str, what: str = "front matter", *, max_bytes: int = FRONT_MATTER_MAX_BYTES,
              max_nodes: int = YAML_MAX_NODES, first_line: int = 1) -> Any:
    """YAML parsed with bounded cost: no aliases (a 500-byte alias bomb expands to gigabytes), bounded
    nesting (deep nesting overflows the parser's recursion) and a bounded number of nodes."""
    if len(raw.encode("utf-8")) > max_bytes:
        raise IngestError(f"{source}: {what} is larger than {max_bytes // 1024} KB")
    depth = nodes = 0
    try:
        for event in yaml.parse(raw, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                raise IngestError(f"{source}: {what} uses a YAML alias (*{event.anchor}); aliases are not allowed")
            if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
                depth += 1
                if depth > YAML_MAX_DEPTH:
                    raise IngestError(f"{source}: {what} is nested deeper than {YAML_MAX_DEPTH} levels")
            elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                depth -= 1
            nodes += 1
            if nodes > max_nodes:
                raise IngestError(f"{source}: {what} has more than {max_nodes} YAML nodes")
        return yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" ({what} line {mark.line + first_line})" if mark else ""
        raise IngestError(f"{source}: malformed YAML {what}{where}") from None


def bounded_metadata(front: dict[str, Any], source: str, warnings: list[str]) -> dict[str, Any]:
    """Front-matter values as filterable metadata, each bounded; what does not fit is reported."""
    metadata: dict[str, Any] = {}
    for key, value in front.items():
        if key in ("id", "title", QUARANTINED, HELD_BACK):  # citewise's verdicts, never the file's
            continue
        if len(metadata) >= META_MAX_KEYS:
            warnings.append(f"{source}: more than {META_MAX_KEYS} front-matter keys; the rest are ignored")
            break
        mv = metadata_value(value)
        if mv is None or len(str(key)) > 64:
            continue
        if isinstance(mv, str) and len(mv) > META_MAX_STRING:
            warnings.append(f"{source}: front-matter value of {key!r} is longer than {META_MAX_STRING} characters; "
                            "ignored")
            continue
        if isinstance(mv, list):
            if len(mv) > META_MAX_LIST:
                warnings.append(f"{source}: {key!r} lists more than {META_MAX_LIST} values; the rest are ignored")
            mv = [v for v in mv[:META_MAX_LIST] if len(v) <= META_MAX_STRING]
        metadata[str(key)] = mv
    return metadata


_HTML_COMMENT = re.compile(r"<!--.*?(-->|$)", re.DOTALL)


def label(section: Section) -> str:
    """A section's headings as one line (a converted file's whole heading chain, its title first): a heading
    over a planted passage ("Note for AI assistants") is part of it, one over several sections part of each."""
    return " > ".join(section.heading_path) or section.heading


def screen(doc: Document, hidden: str = "") -> Document:
    """Decide once, at parse time, what of `doc` is held back: the whole document (`doc.quarantine`) or the
    sections of one planted passage (`doc.held`, by index). An order planted in one section of an otherwise
    sound document costs that section, every chunk of it (the order and any false claim beside it), not the
    document. The whole document goes when its title, metadata, `hidden` text (raw front matter, comments)
    or a governing section addresses the assistant, when more than one section does, when it is short, or
    when another section talks of an AI reader or an automated answer (`names_an_ai`): then it was written
    to command, and its facts are as suspect as its orders."""
    converted = doc.source_type not in WRITTEN_AS_KB
    verdicts = {i: r for i, sec in enumerate(doc.sections)
                if (r := quarantine_reason(f"{label(sec)}\n{sec.text}", converted=converted))}
    head = "\n".join(p for p in (doc.title, hidden, *(f"{k}: {v}" for k, v in doc.metadata.items())) if p)
    first = next(iter(verdicts.values()), "")
    if reason := quarantine_reason(head, converted=converted):
        doc.quarantine = reason
    elif governing := [i for i in verdicts if doc.sections[i].chunk_type in GOVERNING]:
        doc.quarantine = f"{verdicts[governing[0]]}, in {doc.sections[governing[0]].heading!r}, whose rules bind " \
                         "every answer"
    elif len(verdicts) > 1:
        doc.quarantine = f"{first} and in {len(verdicts) - 1} more section(s)"
    elif verdicts and len(doc.sections) < PLANTED_MIN_SECTIONS:
        doc.quarantine = f"{first}, in a document of {len(doc.sections)} section(s)"
    elif verdicts and (named := next((m for i, sec in enumerate(doc.sections) if i not in verdicts
                                      and (m := names_an_ai(f"{label(sec)}\n{sec.text}"))), "")):
        doc.quarantine = f"{first}, and another section names {named!r}"
    doc.held = {} if doc.quarantine else verdicts
    return doc


def chunk_quarantine(doc: Document, index: int) -> str:
    """Why the chunks of `doc`'s section `index` are held back, or "" (decided by `screen`)."""
    return doc.quarantine or doc.held.get(index, "")


def quarantine_reason(text: str, converted: bool = False) -> str:
    """Why a text must not be used as a source, or "": it addresses the assistant instead of informing
    the reader. A `converted` text (web page, office file, transcript) is held to `addressed_sentences`:
    its prose is not written for an assistant, and the sentences that only look like orders are still
    neutralised wherever they are retrieved."""
    found = addressed_sentences(text) if converted else instruction_snippets(text)
    return f"text addressed to the assistant ({found[0][:80]!r})" if found else ""


# A top-level `key: value` line whose plain value holds ": " ("title: Loans: fees and limits"): strict YAML
# refuses it, though the writer meant text. Only such a line that is not valid YAML on its own is quoted (a
# comment's colon, "topic: loan # see also: x", is valid), its comment dropped as YAML would, and only when
# the strict parse failed; never a value with control characters (YAML refuses those for a reason).
_PLAIN_WITH_COLON = re.compile(r"^([A-Za-z_][\w-]*):[ \t]+([^\s\[{\"'|>&*!%@`#][^\r\n]*?:[ \t][^\r\n]*?)[ \t]*\r?$",
                               re.MULTILINE)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")  # (C0, C1 and the line separators YAML breaks at)


def _slips(raw: str) -> list[re.Match[str]]:
    """The lines of `raw` that only an unquoted ": " makes invalid."""
    out = []
    for m in _PLAIN_WITH_COLON.finditer(raw):
        try:
            yaml.safe_load(m.group(0))
        except yaml.YAMLError:
            if not _CONTROL.search(m.group(2)):
                out.append(m)
    return out


def _quoted_plain_values(raw: str, slips: list[re.Match[str]]) -> str:
    for m in reversed(slips):
        value = re.split(r"[ \t]#", m.group(2), maxsplit=1)[0].rstrip()
        raw = raw[:m.start()] + f"{m.group(1)}: {json.dumps(value)}" + raw[m.end():]
    return raw


def split_front_matter(text: str, source: str,
                       warnings: list[str] | None = None) -> tuple[dict[str, Any] | None, str]:
    """The front matter and the body. A value written with an unquoted ": " (malformed YAML) is read as the
    text it plainly is, with a warning (in `warnings`); any other malformed front matter is an IngestError."""
    if not text.startswith("---"):
        return None, text
    lines = text.splitlines(keepends=True)
    if lines[0].strip() != "---":
        return None, text
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            raw = "".join(lines[1:i])
            try:
                data = safe_yaml(raw, source, first_line=2) or {}
            except IngestError as strict:
                slips = _slips(raw) if "malformed YAML" in str(strict) else []
                if not slips:
                    raise
                try:
                    data = safe_yaml(_quoted_plain_values(raw, slips), source, first_line=2) or {}
                except IngestError:
                    raise strict from None
                keys = list(dict.fromkeys(m.group(1) for m in slips))
                named = ", ".join(map(repr, keys[:5])) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
                if warnings is not None:
                    warnings.append(f"{source}: front-matter value of {named} has an unquoted ': ' (not valid YAML); "
                                    "read as text")
            if not isinstance(data, dict):
                raise IngestError(f"{source}: front matter must be a YAML mapping")
            return data, "".join(lines[i + 1:])
    raise IngestError(f"{source}: front matter opened with '---' but never closed")


def parse_markdown(text: str, *, source: str, default_id: str, default_title: str,
                   kinds: dict[str, tuple[str, str]] = SECTION_KINDS) -> Document:
    """Parse one Markdown/text file. With front matter it is a structured article, otherwise plain content."""
    clean = visible(text)
    warnings: list[str] = []
    front, body = split_front_matter(clean, source, warnings)
    hidden = "\n".join([clean[: len(clean) - len(body)], *(m.group(0) for m in _HTML_COMMENT.finditer(body))])
    body = _HTML_COMMENT.sub("", body)  # hidden text is not content (it is checked as the document's own)
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
    offset = len(text) - len(body)  # where the current line starts in `text` (body is a suffix of it)
    buf_start = offset

    def flush() -> None:
        raw = "".join(buf)
        body_text = raw.strip()
        if body_text:
            chunk_type, tier = section_kind(heading, kinds) if (structured and heading) else CONTENT
            start = buf_start + len(raw) - len(raw.lstrip())
            sections.append(Section(heading or "", chunk_type, tier, body_text, start=start,
                                    heading_path=(heading,) if heading else ()))

    for line in body.splitlines(keepends=True):
        line_start, offset = offset, offset + len(line)
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line.rstrip("\n"))
        if m and len(m.group(1)) == 1 and first_h1 is None and not sections and not "".join(buf).strip():
            first_h1 = " ".join(clean_markdown(m.group(2)).split())  # "# Name [![badge](...)](...)" -> "Name"
            buf, buf_start = [], offset  # only blank lines were before it
            continue
        if m and len(m.group(1)) <= 2:
            flush()
            heading, buf, buf_start = m.group(2).strip(), [], offset
            continue
        if not buf:
            buf_start = line_start
        buf.append(line)
    flush()

    title = " ".join(str(front.get("title") or first_h1 or default_title).split())
    if len(title) > TITLE_MAX_CHARS:
        if front.get("title"):  # a declared title is refused; a heading standing in for one is shortened
            raise IngestError(f"{source}: title is longer than {TITLE_MAX_CHARS} characters")
        title = title[: TITLE_MAX_CHARS - 1].rstrip() + "…"
    metadata = bounded_metadata(front, source, warnings)
    doc = Document(doc_id=doc_id, title=title, metadata=metadata, sections=sections, source=source,
                   content_hash=content_hash(text), structured=structured, warnings=warnings)
    return screen(doc, hidden)


def parse_beir_line(line: str, *, source: str, lineno: int) -> Document:
    if len(line) > BEIR_MAX_LINE:
        raise IngestError(f"{source}:{lineno}: line longer than {BEIR_MAX_LINE // 1_000_000} MB")
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise IngestError(f"{source}:{lineno}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise IngestError(f"{source}:{lineno}: JSON nested too deeply") from None
    if not isinstance(record, dict) or "_id" not in record:
        raise IngestError(f"{source}:{lineno}: a BEIR record needs an '_id'")
    text = visible(str(record.get("text") or "")).strip()
    title = " ".join(visible(str(record.get("title") or "")).split())[:TITLE_MAX_CHARS]
    if not text and not title:
        raise IngestError(f"{source}:{lineno}: record {record['_id']!r} has neither title nor text")
    metadata = {}
    raw_meta = record.get("metadata") or {}
    if isinstance(raw_meta, dict):
        for key, value in raw_meta.items():
            mv = metadata_value(value)
            if mv is not None and str(key) not in (QUARANTINED, HELD_BACK):  # citewise's verdicts, never the file's
                metadata[str(key)] = mv
    doc_id = str(record["_id"])
    return Document(doc_id=doc_id, title=title or doc_id, metadata=metadata,
                    sections=[Section("", *CONTENT, text or title, start=0)], source=source,
                    content_hash=content_hash(line.strip()), source_type="beir",
                    quarantine=quarantine_reason(f"{title}\n{text}"))
