"""Call transcripts (WebVTT, SRT, and `[hh:mm:ss] Speaker: text` lines) -> time-stamped blocks.

Captions come in cues of a few words, far too small to retrieve on their own, so consecutive segments are
grouped into windows of about `max_words` words, cut preferably where the speaker changes so a block
does not start mid-answer. Each block keeps its start/end time (seconds) and its speakers, which is what
a citation to a call needs ("Alice, 00:12:05-00:14:30"). Inside a block, consecutive lines of the same
speaker are merged and each line starts with "Speaker: ".

Speakers come from WebVTT voice tags (`<v Alice>`), else from a leading "Name:" (accepted only for
names that label at least two lines, so "Note: ..." in a caption is not a speaker). A cue without a
label continues the previous speaker.
"""

from __future__ import annotations

import html
import itertools
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .types import Block, ConversionError, Converted, base_metadata, clean_text, decode

MAX_WORDS = 300
_TS = r"(?:\d+:)?\d{1,2}:\d{2}(?:[.,]\d{1,3})?"
_TIMING = re.compile(rf"^\s*({_TS})\s*-->\s*({_TS})")
_VOICE = re.compile(r"<v(?:\.[\w.-]+)?\s+([^>]+)>")
_TAG = re.compile(r"<[^>]*>")
# "Alice:", "Dr. Bob Chen:", "SPEAKER 2:", "Anna van Dijk:" (up to four words, each capitalised or a particle)
_NAME = r"[A-Z][\w'’.\-]*(?: (?:[A-Z0-9][\w'’.\-]*|de|van|von|da|di|le)){0,3}"
_NAME_PREFIX = re.compile(rf"^(?:>>\s*|-\s*)?({_NAME}):\s+(.*)$")
_SIMPLE = re.compile(rf"^\s*\[?({_TS})\]?\s*(?:[-–—|]\s*)?(?:([^:\[\]]{{1,60}}?):\s+)?(.*?)\s*$")
# WebVTT/SRT cues are separated by blank lines: a file-format rule, not kb.text's paragraph splitting
_CUE_GAP = re.compile(r"\n[ \t]*\n")
_NAME_THEN_TIME = re.compile(rf"^\s*([^\d\s\[\]:][^\[\]:]{{0,60}}?)\s+\[?({_TS})\]?\s*$")


@dataclass
class Segment:
    start: float
    end: float
    speaker: str
    text: str


# Who calls in, by the labels transcripts give them; the other party (an agent, or an adviser by name) answers
CALLER_ROLES = frozenset({"customer", "caller", "client", "member", "participant", "tenant", "passenger", "renter",
                          "patient", "student", "guest", "policyholder", "homeowner", "cardholder", "consumer",
                          "applicant", "borrower", "traveller", "traveler", "user", "holder"})
AGENT_ROLES = frozenset({"agent", "adviser", "advisor", "representative", "rep", "csr", "support", "specialist",
                         "consultant", "operator", "associate", "officer", "handler", "coordinator", "banker",
                         "counsellor", "counselor", "concierge", "host", "staff", "team", "employee",
                         # a department answering: "Member Services", "Customer Care", "Guest Relations"
                         "services", "service", "care", "relations", "success", "liaison", "desk", "helpdesk",
                         "help", "helpline", "centre", "center", "office", "department"})
# How only an agent opens a call: "Thanks for calling Tidewell", "How can I help?" (not "this is Marek from
# Brightfield", "thanks for calling me back", nor "Marek speaking": a caller says those too, answering a callback)
_AGENT_OPENING = re.compile(r"\b((thanks|thank you) for (calling|contacting)\b(?! (me|us|back)\b)|"
                            r"you'?re through to\b|how (can|may) i (help|assist)\b)", re.IGNORECASE)


def _role(label: str) -> str:
    """"agent", "caller" or "" by the label's words, letters only: an agent's word anywhere ("Agent Dana",
    "Staff Member", "Member Services"), else a caller's as its last word ("Customer", "Account Holder", "Maeve
    (role-play customer)")."""
    said = [re.sub(r"[^a-z]", "", w) for w in label.lower().split()]
    return "agent" if set(said) & AGENT_ROLES else "caller" if said and said[-1] in CALLER_ROLES else ""


def callers(segments: list[Segment]) -> list[str]:
    """The speakers who call in: those labelled as a caller's role ("Customer"); else, in a call between
    two speakers, the one not labelled as the agent ("Agent" and "Gareth": Gareth), or, both named, the
    other one where the call's first turn opens as only an agent's does ("Dana: Thanks for calling Tidewell")
    and the other speaker's first turns do not. [] whenever it cannot be told: what anyone says is then
    quoted as any named speaker's was before."""
    speakers = list(dict.fromkeys(s.speaker for s in segments if s.speaker))
    roles = {sp: _role(sp) for sp in speakers}
    by_role = [sp for sp in speakers if roles[sp] == "caller"]
    if by_role or len(speakers) != 2:
        return by_role
    agents = [sp for sp in speakers if roles[sp] == "agent"]
    if not agents:
        turns = [s for s in segments if s.speaker][:4]
        opening = {s.speaker for s in turns if _AGENT_OPENING.search(s.text)}
        agents = [turns[0].speaker] if turns and opening == {turns[0].speaker} else []
    return [sp for sp in speakers if sp not in agents] if len(agents) == 1 else []


def seconds(stamp: str) -> float:
    """'01:02:03.500', '02:03,5' or '2:03' -> seconds."""
    stamp = stamp.replace(",", ".")
    total = 0.0
    for part in stamp.split(":"):
        total = total * 60 + float(part)
    return total


def hms(value: float) -> str:
    """Seconds -> 'hh:mm:ss', the form a citation shows."""
    whole = int(value)
    return f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def _cue_lines(lines: list[str]) -> list[tuple[str | None, str]]:
    """(voice-tag speaker or None, plain text) per caption line."""
    out = []
    for line in lines:
        voice = _VOICE.search(line)
        text = clean_text(html.unescape(_TAG.sub("", line)))
        if text:
            out.append((clean_text(voice.group(1)) if voice else None, text))
    return out


def parse_cues(text: str) -> tuple[list[Segment], str]:
    """WebVTT or SRT: blank-line separated cues with a `start --> end` line; returns segments and the
    title given on the WEBVTT line, if any."""
    title = ""
    cues: list[tuple[float, float, list[tuple[str | None, str]]]] = []
    for chunk in _CUE_GAP.split(text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")):
        lines = chunk.strip("\n").split("\n")
        if not lines or not lines[0].strip():
            continue
        head = lines[0].strip()
        if head.startswith("WEBVTT"):
            title = clean_text(head[6:].lstrip(" -:\t"))
            lines = lines[1:]  # the header may be followed directly by a cue
        elif head.startswith(("NOTE", "STYLE", "REGION")):
            continue
        for i, line in enumerate(lines):
            timing = _TIMING.match(line)
            if timing:
                cues.append((seconds(timing.group(1)), seconds(timing.group(2)), _cue_lines(lines[i + 1 :])))
                break
    names = Counter(m.group(1) for _, _, cue in cues for voice, line in cue if voice is None
                    for m in [_NAME_PREFIX.match(line)] if m)
    segments: list[Segment] = []
    speaker = ""
    for start, end, cue in cues:
        for voice, line in cue:
            text = line
            if voice is not None:
                speaker = voice
            else:
                match = _NAME_PREFIX.match(line)
                if match and names[match.group(1)] >= 2:
                    speaker, text = match.group(1), match.group(2)
            segments.append(Segment(start, end, speaker, text))
    return segments, title


def parse_simple(text: str) -> list[Segment]:
    """Lines `[hh:mm:ss] Speaker: text` or `hh:mm:ss Speaker: text` (speaker optional), and the
    `Speaker  hh:mm:ss` header-then-text layout of some note-taking apps. Untimed lines continue the
    previous segment; a segment ends where the next starts (the last one where it starts)."""
    segments: list[Segment] = []
    pending_speaker: str | None = None
    for raw in text.replace("\r\n", "\n").lstrip("\ufeff").split("\n"):
        line = raw.strip()
        if not line:
            continue
        header = _NAME_THEN_TIME.match(line)
        if header:
            pending_speaker = clean_text(header.group(1))
            segments.append(Segment(seconds(header.group(2)), 0.0, pending_speaker, ""))
            continue
        match = _SIMPLE.match(line)
        if match and _looks_timed(line):
            speaker = clean_text(match.group(2) or "") or (pending_speaker or "")
            segments.append(Segment(seconds(match.group(1)), 0.0, speaker, clean_text(match.group(3))))
        elif segments:
            last = segments[-1]
            last.text = clean_text(f"{last.text} {line}")
    segments = [segment for segment in segments if segment.text]
    for current, following in itertools.pairwise(segments):
        current.end = max(following.start, current.start)
    if segments:
        segments[-1].end = segments[-1].start
    return segments


def _looks_timed(line: str) -> bool:
    return re.match(rf"^\s*\[?{_TS}\]?(?:\s|$)", line) is not None


def is_transcript(text: str) -> bool:
    """Whether plain text looks like a transcript: cue timings, or mostly timestamped lines. Lets the
    ingest layer route a `.txt` call export here instead of to the Markdown/text loader."""
    head = text[:20000]
    if _TIMING.search(head) is not None and "-->" in head:
        return True
    lines = [line for line in head.splitlines() if line.strip()]
    timed = sum(1 for line in lines if _looks_timed(line))
    headers = sum(1 for line in lines if _NAME_THEN_TIME.match(line.strip()))  # "Alice Smith  0:03" + text
    return (timed >= 2 and timed * 2 >= len(lines)) or (headers >= 2 and headers * 3 >= len(lines))


def _cut(window: list[Segment], words: list[int], next_speaker: str | None, max_words: int) -> int:
    """Where to end the current block: the latest speaker change past half the target, else everything."""
    boundaries = list(range(1, len(window))) + ([len(window)] if next_speaker is not None else [])
    for i in reversed(boundaries):
        following = window[i].speaker if i < len(window) else next_speaker
        if following != window[i - 1].speaker and sum(words[:i]) * 2 >= max_words:
            return i
    return len(window)


def group(segments: list[Segment], max_words: int = MAX_WORDS) -> list[list[Segment]]:
    """Consecutive segments in windows of about `max_words` words, cut at speaker turns when possible."""
    groups: list[list[Segment]] = []
    window: list[Segment] = []
    words: list[int] = []
    for segment in segments:
        # its "Speaker:" label too, shown once per run of one speaker's segments
        shown = not window or window[-1].speaker != segment.speaker
        count = len(segment.text.split()) + (len((segment.speaker or "").split()) if shown else 0)
        while window and sum(words) + count > max_words:
            cut = _cut(window, words, segment.speaker, max_words)
            groups.append(window[:cut])
            window, words = window[cut:], words[cut:]
        window.append(segment)
        words.append(count)
    if window:
        if groups and sum(words) * 4 < max_words:  # a short tail ("You're welcome, bye.") joins the window before
            groups[-1].extend(window)
        else:
            groups.append(window)
    return groups


def _block(window: list[Segment]) -> Block:
    lines: list[tuple[str, str]] = []
    for segment in window:
        if lines and lines[-1][0] == segment.speaker:
            lines[-1] = (segment.speaker, f"{lines[-1][1]} {segment.text}")
        else:
            lines.append((segment.speaker, segment.text))
    text = "\n".join(f"{speaker}: {line}" if speaker else line for speaker, line in lines)
    speakers = tuple(dict.fromkeys(segment.speaker for segment in window if segment.speaker))
    return Block(
        text,
        (),
        start=window[0].start,
        end=max(segment.end for segment in window),
        speakers=speakers,
    )


def convert_text(text: str, name: str, max_words: int = MAX_WORDS) -> Converted:
    """Convert transcript text (format detected from content: cue timings or timestamped lines)."""
    if "-->" in text:
        segments, title = parse_cues(text)
        kind = "vtt" if text.lstrip("\ufeff").startswith("WEBVTT") else "srt"
    else:
        segments, title, kind = parse_simple(text), "", "timestamped"
    if not segments:
        raise ConversionError("no transcript segments found (expected WebVTT, SRT or '[hh:mm:ss] Speaker: text')")
    blocks = [_block(window) for window in group(segments, max_words)]
    metadata = base_metadata("transcript", title or None)
    metadata["format"] = kind
    speakers = list(dict.fromkeys(s.speaker for s in segments if s.speaker))
    if speakers:
        metadata["speakers"] = speakers
    if calling := callers(segments):
        metadata["callers"] = calling
    metadata["duration"] = hms(max(s.end for s in segments))
    return Converted(title=title or name, blocks=blocks, metadata=metadata, source_type="transcript")


def convert(path: Path, max_words: int = MAX_WORDS) -> Converted:
    """Convert a .vtt, .srt or timestamped-lines transcript file."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConversionError(f"cannot read file ({exc.strerror or exc})", str(path)) from exc
    try:
        return convert_text(decode(raw), path.stem, max_words)  # exports are not always UTF-8
    except ConversionError as exc:
        raise ConversionError(exc.message, str(path)) from exc
