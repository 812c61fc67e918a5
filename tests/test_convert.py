"""kb/convert: real files written in the test (reportlab, python-docx, python-pptx, openpyxl, text), converted
back, with the positions a citation needs (page, slide, heading path, time range, speakers) checked, and
every failure a person can fix reported as a one-line ConversionError."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest

from citewise.errors import IngestError
from citewise.kb.convert import ConversionError, Converted, convert, convertible
from citewise.kb.convert.transcript import convert_text, group, hms, is_transcript, parse_simple
from tests.writers import write_pdf

# --- helpers -------------------------------------------------------------------------------------------


def errors_for(path: Path) -> str:
    with pytest.raises(ConversionError) as caught:
        convert(path)
    message = str(caught.value)
    assert "\n" not in message
    return message


def body(result: Converted) -> list:
    return [block for block in result.blocks if not block.level]


# --- PDF -----------------------------------------------------------------------------------------------


def test_pdf_pages_headings_and_paragraphs(tmp_path: Path) -> None:
    path = tmp_path / "manual.pdf"
    write_pdf(
        path,
        [
            [(18, "Refund policy"), (11, "Refunds are paid within ten days of the request."),
             (11, "They go back to the original card."), (0, ""), (11, "A second paragraph on page one."),
             (14, "Exceptions"), (11, "Gift cards are never refunded.")],
            [(18, "Fees"), (11, "The wire fee is 25 dollars."), (14, "Waivers"), (11, "Premium accounts pay nothing.")],
        ],
        title="Customer manual",
    )
    result = convert(path)
    assert result.source_type == "pdf"
    assert result.title == "Customer manual"
    assert result.metadata["author"] == "Plan Sponsor"
    assert result.metadata["pages"] == "2"
    assert len(str(result.metadata["created"])) == 10
    headings = [(b.text, b.level, b.page) for b in result.blocks if b.level]
    assert headings == [("Refund policy", 1, 1), ("Exceptions", 2, 1), ("Fees", 1, 2), ("Waivers", 2, 2)]
    paragraphs = body(result)
    assert paragraphs[0].text == "Refunds are paid within ten days of the request. They go back to the original card."
    assert paragraphs[0].heading_path == ("Refund policy",) and paragraphs[0].page == 1
    assert paragraphs[1].text == "A second paragraph on page one."
    assert paragraphs[2].heading_path == ("Refund policy", "Exceptions")
    last = paragraphs[-1]
    assert (last.text, last.page, last.heading_path) == ("Premium accounts pay nothing.", 2, ("Fees", "Waivers"))


def test_pdf_without_size_differences_has_paragraphs_but_no_headings(tmp_path: Path) -> None:
    path = tmp_path / "plain.pdf"
    write_pdf(path, [[(11, "Line one of a memo."), (11, "Line two."), (0, ""), (11, "Next paragraph.")]])
    result = convert(path)
    assert result.title == "plain"
    assert [b.text for b in result.blocks] == ["Line one of a memo. Line two.", "Next paragraph."]
    assert all(b.level == 0 and b.page == 1 and b.heading_path == () for b in result.blocks)


def test_pdf_page_numbers_and_toc_leaders_are_not_text_or_headings(tmp_path: Path) -> None:
    path = tmp_path / "book.pdf"
    write_pdf(path, [
        [(18, "Contents"), (14, "Introduction . . . . . . . . 3"), (11, "Front matter text."), (0, ""), (11, "ii")],
        [(18, "Introduction"), (11, "Body text."), (0, ""), (11, "Page 3 of 9")],
    ])
    result = convert(path)
    assert [b.text for b in result.blocks if b.level] == ["Contents", "Introduction"]
    assert "ii" not in [b.text for b in result.blocks] and "Page 3 of 9" not in result.text


def test_pdf_encrypted_with_password_is_refused(tmp_path: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    plain = tmp_path / "plain.pdf"
    write_pdf(plain, [[(11, "Secret salary table.")]])
    for name, user_password in (("locked.pdf", "hunter2"), ("restricted.pdf", "")):
        writer = PdfWriter(clone_from=PdfReader(plain))
        writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm="AES-128")
        writer.write(tmp_path / name)
    assert errors_for(tmp_path / "locked.pdf") == "encrypted PDF (password required)"
    # encrypted only to restrict printing/copying (empty user password): readable like any PDF
    assert convert(tmp_path / "restricted.pdf").blocks[0].text == "Secret salary table."


def test_pdf_without_text_layer_is_reported_as_scanned(tmp_path: Path) -> None:
    from PIL import Image
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    scan = io.BytesIO()
    Image.new("L", (200, 100), color=200).save(scan, format="PNG")
    path = tmp_path / "scan.pdf"
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.drawImage(ImageReader(io.BytesIO(scan.getvalue())), 72, 500, width=400, height=200)
    pdf.rect(72, 300, 200, 100)
    pdf.showPage()
    pdf.save()
    assert errors_for(path) == "no text layer (scanned PDF?)"


def test_pdf_with_some_image_only_pages_lists_them(tmp_path: Path) -> None:
    path = tmp_path / "mixed.pdf"
    write_pdf(path, [[(11, "Typed page.")], [], [(11, "Typed again.")]])
    result = convert(path)
    assert result.metadata["pages_without_text"] == ["2"]
    assert [b.page for b in result.blocks] == [1, 3]


def test_corrupt_pdf(tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(os.urandom(3000))
    assert errors_for(path).startswith("not a valid PDF file")


# --- DOCX ----------------------------------------------------------------------------------------------


def test_docx_headings_lists_tables_and_metadata(tmp_path: Path) -> None:
    import datetime as dt

    import docx
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document()
    document.core_properties.title = "Onboarding guide"
    document.core_properties.author = "HR Team"
    document.core_properties.created = dt.datetime(2024, 3, 5, 9, 30)
    custom = document.styles.add_style("Policy Heading", WD_STYLE_TYPE.PARAGRAPH)
    custom.base_style = document.styles["Heading 2"]
    document.add_heading("First week", level=1)
    document.add_paragraph("Collect your badge at reception.")
    document.add_heading("Accounts", level=2)
    document.add_paragraph("Ask IT for a laptop.", style="List Bullet")
    document.add_paragraph("Set up MFA.", style="List Bullet")
    document.add_paragraph("Approval rules", style="Policy Heading")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "System", "Owner"
    table.cell(1, 0).text, table.cell(1, 1).text = "Payroll | HR", "Maria"
    document.add_heading("Second week", level=1)
    document.add_paragraph("")  # empty paragraphs are dropped
    document.add_paragraph("Shadow a senior agent.")
    path = tmp_path / "guide.docx"
    document.save(str(path))

    result = convert(path)
    assert result.source_type == "docx" and result.title == "Onboarding guide"
    assert result.metadata["author"] == "HR Team" and result.metadata["created"] == "2024-03-05"
    assert [(b.text, b.level) for b in result.blocks if b.level] == [
        ("First week", 1), ("Accounts", 2), ("Approval rules", 2), ("Second week", 1),
    ]
    texts = {b.text: b for b in body(result)}
    assert texts["Collect your badge at reception."].heading_path == ("First week",)
    assert texts["- Ask IT for a laptop."].heading_path == ("First week", "Accounts")
    table_block = next(b for b in body(result) if b.text.startswith("|"))
    assert table_block.text.splitlines() == [
        "| System | Owner |", "| --- | --- |", "| Payroll \\| HR | Maria |",
    ]
    assert table_block.heading_path == ("First week", "Approval rules")
    assert texts["Shadow a senior agent."].heading_path == ("Second week",)
    assert all(b.page is None for b in result.blocks)  # not saved by Word: no page numbers guessed


def test_docx_pages_from_words_rendered_page_breaks(tmp_path: Path) -> None:
    import docx
    from docx.oxml import OxmlElement

    document = docx.Document()
    document.add_heading("Intro", level=1)
    document.add_paragraph("On page one.")
    later = document.add_paragraph("On page two.")
    later.runs[0]._r.insert(0, OxmlElement("w:lastRenderedPageBreak"))  # what Word writes when it saves
    path = tmp_path / "paged.docx"
    document.save(str(path))
    result = convert(path)
    assert [(b.text, b.page) for b in result.blocks] == [("Intro", 1), ("On page one.", 1), ("On page two.", 2)]
    assert result.metadata["pages"] == "2"


def test_corrupt_and_mislabelled_docx(tmp_path: Path) -> None:
    path = tmp_path / "random.docx"
    path.write_bytes(os.urandom(2048))
    assert errors_for(path) == "not a valid DOCX file (corrupt or not a zip archive)"
    other = tmp_path / "notword.docx"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("hello.txt", "not a word document")
    assert errors_for(other).startswith("not a valid DOCX file")


# --- PPTX ----------------------------------------------------------------------------------------------


def test_pptx_slides_titles_tables_and_notes(tmp_path: Path) -> None:
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    deck.core_properties.title = "Q3 review"
    deck.core_properties.author = "Finance"
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Revenue"
    first.placeholders[1].text_frame.text = "Up 12% on Q2"
    sub = first.placeholders[1].text_frame.add_paragraph()
    sub.text, sub.level = "Driven by renewals", 1
    first.notes_slide.notes_text_frame.text = "Mention the one-off deal."
    second = deck.slides.add_slide(deck.slide_layouts[5])  # title only
    second.shapes.title.text = "Costs"
    shape = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1))
    for (r, c), text in {(0, 0): "Item", (0, 1): "Cost", (1, 0): "Cloud", (1, 1): "40k"}.items():
        shape.table.cell(r, c).text = text
    third = deck.slides.add_slide(deck.slide_layouts[6])  # blank: no title placeholder
    third.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1)).text_frame.text = "Questions?"
    path = tmp_path / "review.pptx"
    deck.save(str(path))

    result = convert(path)
    assert result.source_type == "pptx" and result.title == "Q3 review"
    assert result.metadata["slides"] == "3" and result.metadata["author"] == "Finance"
    assert [(b.text, b.slide, b.level) for b in result.blocks if b.level] == [
        ("Revenue", 1, 1), ("Costs", 2, 1), ("Slide 3", 3, 1),
    ]
    bodies = body(result)
    assert (bodies[0].text, bodies[0].slide, bodies[0].heading_path) == (
        "Up 12% on Q2\n  Driven by renewals", 1, ("Revenue",),
    )
    assert (bodies[1].text, bodies[1].heading_path) == ("Mention the one-off deal.", ("Revenue", "Notes"))
    assert bodies[2].slide == 2 and bodies[2].text.splitlines()[2] == "| Cloud | 40k |"
    assert (bodies[3].text, bodies[3].slide) == ("Questions?", 3)
    assert not any(b.heading_path[-1:] == ("Notes",) for b in convert(path, notes=False).blocks)


def test_corrupt_pptx(tmp_path: Path) -> None:
    path = tmp_path / "deck.pptx"
    path.write_bytes(b"PK\x03\x04" + os.urandom(500))
    assert errors_for(path) == "not a valid PPTX file (corrupt or not a zip archive)"


# --- XLSX ----------------------------------------------------------------------------------------------


def test_xlsx_sheets_as_tables_with_row_locators(tmp_path: Path) -> None:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Fees"
    sheet.append(["Service", "Fee"])
    for i in range(5):
        sheet.append([f"Service {i}", 10 + i])
    workbook.create_sheet("Empty")
    path = tmp_path / "fees.xlsx"
    workbook.save(str(path))
    result = convert(path, rows_per_block=3)
    assert result.metadata["sheets"] == ["Fees", "Empty"]
    tables = body(result)
    assert [b.heading_path for b in tables] == [("Fees", "rows 2-4"), ("Fees", "rows 5-6")]
    assert tables[1].text.splitlines() == [
        "| Service | Fee |", "| --- | --- |", "| Service 3 | 13 |", "| Service 4 | 14 |",
    ]


# --- HTML ----------------------------------------------------------------------------------------------

PAGE = """<!DOCTYPE html><html lang="en"><head><title>Card help &amp; FAQ</title>
<meta name="author" content="Support"><meta property="article:published_time" content="2025-01-31T10:00:00Z">
<style>h1 { color: red }</style><script>var secret = "do not index";</script></head>
<body><nav><ul><li>Home</li><li>Cards</li></ul></nav>
<h1>Cards</h1><p>Cards are issued in <b>five</b> days.</p>
<h3>Lost cards</h3><p>Call us at once.<p>Unclosed paragraph here.
<ul><li>Freeze the card</li><li>Order a new one<ul><li>Express costs 10</li></ul></li></ul>
<h2>Limits</h2><table><tr><th>Card</th><th>Daily limit</th></tr><tr><td>Debit<td>500</td></tr></table>
<div>Loose text in a div</div><footer>Copyright</footer></body></html>"""


def test_html_structure_and_chrome_removal(tmp_path: Path) -> None:
    path = tmp_path / "help.html"
    path.write_text(PAGE, encoding="utf-8")
    result = convert(path)
    assert result.title == "Card help & FAQ"
    assert result.metadata == {
        "source_type": "html", "title": "Card help & FAQ", "author": "Support", "created": "2025-01-31",
        "language": "en",
    }
    assert "secret" not in result.text and "Home" not in result.text and "color" not in result.text
    assert [(b.text, b.level, b.heading_path) for b in result.blocks if b.level] == [
        ("Cards", 1, ("Cards",)), ("Lost cards", 3, ("Cards", "Lost cards")), ("Limits", 2, ("Cards", "Limits")),
    ]
    texts = [b.text for b in body(result)]
    assert texts[:6] == [
        "Cards are issued in five days.", "Call us at once.", "Unclosed paragraph here.",
        "- Freeze the card", "- Order a new one", "  - Express costs 10",
    ]
    table = next(b for b in body(result) if b.text.startswith("|"))
    assert table.heading_path == ("Cards", "Limits")
    assert table.text.splitlines() == ["| Card | Daily limit |", "| --- | --- |", "| Debit | 500 |"]
    assert texts[-2:] == ["Loose text in a div", "Copyright"]


def test_html_title_falls_back_to_first_h1_and_decodes_legacy_charsets(tmp_path: Path) -> None:
    path = tmp_path / "legacy.htm"
    page = '<meta charset="iso-8859-1"><h2>Intro</h2><h1>Café rules</h1><p>Crème brûlée</p>'
    path.write_bytes(page.encode("latin-1"))
    result = convert(path)
    assert result.title == "Café rules"
    assert result.blocks[-1].text == "Crème brûlée"


# --- transcripts ---------------------------------------------------------------------------------------

VTT = """WEBVTT - Weekly support sync

NOTE recorded by the meeting tool

1
00:00:01.000 --> 00:00:04.500
<v Alice Moreno>Welcome everyone, let's start with refunds.</v>

2
00:00:04.500 --> 00:00:09.000
<v Alice Moreno>The backlog is down to twelve tickets.

3
00:00:09.000 --> 00:00:15.250
<v.loud Bob Chen>Twelve is still too many &amp; growing.

00:00:15.250 --> 00:01:02.000
<v Priya Natarajan>I can take <i>five</i> of them today.
"""

SRT = """1
00:00:00,500 --> 00:00:03,000
Alice: Can you hear me?

2
00:00:03,000 --> 00:00:06,000
Bob: Yes, loud and clear.

3
00:00:06,000 --> 00:00:09,500
Alice: Great. Important: the deadline moved.
Bob: Noted.
"""


def test_vtt_segments_times_and_speakers(tmp_path: Path) -> None:
    path = tmp_path / "sync.vtt"
    path.write_text(VTT, encoding="utf-8")
    result = convert(path)
    assert result.source_type == "transcript" and result.title == "Weekly support sync"
    assert result.metadata["speakers"] == ["Alice Moreno", "Bob Chen", "Priya Natarajan"]
    assert result.metadata["duration"] == "00:01:02" and result.metadata["format"] == "vtt"
    [block] = result.blocks
    assert (block.start, block.end) == (1.0, 62.0)
    assert block.speakers == ("Alice Moreno", "Bob Chen", "Priya Natarajan")
    assert block.text.splitlines() == [
        "Alice Moreno: Welcome everyone, let's start with refunds. The backlog is down to twelve tickets.",
        "Bob Chen: Twelve is still too many & growing.",
        "Priya Natarajan: I can take five of them today.",
    ]


def test_srt_name_prefixes_are_speakers_only_when_repeated(tmp_path: Path) -> None:
    path = tmp_path / "call.srt"
    path.write_text(SRT, encoding="utf-8")
    result = convert(path)
    [block] = result.blocks
    assert (block.start, block.end, block.speakers) == (0.5, 9.5, ("Alice", "Bob"))
    assert block.text.splitlines() == [
        "Alice: Can you hear me?", "Bob: Yes, loud and clear.", "Alice: Great. Important: the deadline moved.",
        "Bob: Noted.",
    ]


def test_simple_timestamped_formats_and_txt_sniffing(tmp_path: Path) -> None:
    text = (
        "[00:00:05] Alice: We need the Q3 numbers.\n"
        "[00:00:12] Bob: They are in the shared drive.\n"
        "and also attached to the ticket.\n"
        "00:01:30 Alice: Thanks.\n"
    )
    segments = parse_simple(text)
    assert [(s.start, s.end, s.speaker) for s in segments] == [
        (5.0, 12.0, "Alice"), (12.0, 90.0, "Bob"), (90.0, 90.0, "Alice"),
    ]
    assert segments[1].text == "They are in the shared drive. and also attached to the ticket."
    path = tmp_path / "call.txt"
    path.write_text(text, encoding="utf-8")
    assert convertible(path)
    result = convert(path)
    assert result.metadata["format"] == "timestamped" and result.blocks[0].start == 5.0
    headed = "Alice Smith  0:03\nHello, this is the weekly sync.\nCan you hear me?\n\nBob Jones  0:15\nYes.\n"
    assert is_transcript(headed)
    assert [(b.start, b.end, b.speakers) for b in convert_text(headed, "otter").blocks] == [
        (3.0, 15.0, ("Alice Smith", "Bob Jones")),
    ]
    prose = tmp_path / "notes.txt"
    prose.write_text("Meeting notes\nWe talked about 3:30 pm deadlines.\n", encoding="utf-8")
    assert not convertible(prose)
    assert errors_for(prose).startswith("unsupported file type '.txt'")


def test_grouping_windows_break_at_speaker_turns() -> None:
    lines = []
    t = 0
    for turn in range(6):
        speaker = ("Ann", "Ben")[turn % 2]
        for _ in range(3):
            lines.append(f"[{hms(t)}] {speaker}: " + " ".join(["word"] * 10))
            t += 10
    result = convert_text("\n".join(lines), "call", max_words=100)
    # 30 words per turn: a 100-word window ends at the last turn change past 50 words (90 words)
    assert [len(b.text.split()) - len(b.text.splitlines()) for b in result.blocks] == [90, 90]
    assert [(b.start, b.end) for b in result.blocks] == [(0, 90), (90, 170)]
    assert result.blocks[0].text.splitlines()[0].startswith("Ann: word")
    assert result.blocks[1].speakers == ("Ben", "Ann")
    # one speaker talking for a long time: windows are cut at the size limit
    monologue = parse_simple("\n".join(f"[00:00:{i:02d}] Ann: " + " ".join(["w"] * 40) for i in range(10)))
    assert [sum(len(s.text.split()) for s in window) for window in group(monologue, 100)] == [80, 80, 80, 80, 80]


def test_transcript_without_cues(tmp_path: Path) -> None:
    path = tmp_path / "empty.vtt"
    path.write_text("WEBVTT\n\nNOTE nothing was said\n", encoding="utf-8")
    assert errors_for(path).startswith("no transcript segments found")


# --- dispatch, offsets, generic failures ---------------------------------------------------------------


def test_zero_byte_unsupported_and_missing_files(tmp_path: Path) -> None:
    for suffix in (".pdf", ".docx", ".pptx", ".html", ".vtt"):
        empty = tmp_path / f"empty{suffix}"
        empty.write_bytes(b"")
        assert errors_for(empty) == "empty file (0 bytes)"
    odd = tmp_path / "data.xyz"
    odd.write_text("x")
    assert errors_for(odd).startswith("unsupported file type '.xyz' (supported: .docx, .htm, .html")
    legacy = tmp_path / "old.doc"
    legacy.write_bytes(b"\xd0\xcf\x11\xe0")
    assert errors_for(legacy) == "unsupported file type '.doc' (save it as .docx)"
    assert errors_for(tmp_path / "missing.pdf") == "file not found"
    blank = tmp_path / "blank.html"
    blank.write_text("<html><body><script>x()</script></body></html>")
    assert errors_for(blank) == "no extractable text"


def test_conversion_error_is_an_ingest_error_carrying_the_path(tmp_path: Path) -> None:
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")
    with pytest.raises(IngestError) as caught:
        convert(path)
    assert isinstance(caught.value, ConversionError) and caught.value.path == str(path)


def test_spans_point_into_text(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text("<h1>Title</h1><p>First.</p><p>Second paragraph.</p>", encoding="utf-8")
    result = convert(path)
    text = result.text
    for block, (start, end) in zip(result.blocks, result.spans(), strict=True):
        assert text[start:end] == block.text
    assert result.to_markdown() == "# Title\n\nFirst.\n\nSecond paragraph."
