"""Real documents in (issue 12): a small KB of real PDF, DOCX, HTML, PPTX, XLSX and transcript files written
in the test ingests through kb/convert, answers one question per format with the citation's page, slide,
heading path or time right, and the files that cannot be read (scanned, encrypted, corrupt, empty) are
each one clear line, skipped, without costing the rest of the batch or anything already stored."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from citewise.cli.render import format_answer
from citewise.config import Context
from citewise.engine import answer
from citewise.errors import InputError
from citewise.kb.ingest import ingest
from citewise.retrieval.snapshot import open_kb
from citewise.store import open_store
from citewise.store.sqlite import Store
from tests.writers import write_pdf

ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}
FormatsKB = tuple[Path, Path, dict, str]  # sources, home, ingest summary, database URL ("" for SQLite)

# --- writers: real files, made with the libraries that make them in the wild ------------------------------


def write_scanned_pdf(path: Path) -> None:
    from PIL import Image
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    scan = io.BytesIO()
    Image.new("L", (200, 100), color=200).save(scan, format="PNG")
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.drawImage(ImageReader(io.BytesIO(scan.getvalue())), 72, 500, width=400, height=200)
    pdf.showPage()
    pdf.save()


def write_encrypted_pdf(path: Path, scratch: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    write_pdf(scratch, [[(11, "Executive compensation table.")]])
    writer = PdfWriter(clone_from=PdfReader(scratch))
    writer.encrypt(user_password="hunter2", owner_password="owner-secret", algorithm="AES-128")
    writer.write(path)
    scratch.unlink()


def write_docx(path: Path) -> None:
    import docx

    document = docx.Document()
    document.core_properties.title = "Procedures Manual"
    document.core_properties.author = "Service Team"
    document.add_paragraph("Procedures Manual", style="Title")
    document.add_heading("Mailing address change", level=1)
    document.add_paragraph("Participants keep one mailing address on file for statements and checks.")
    document.add_heading("Steps", level=2)
    for step in ("Open the member portal and choose Profile, then Mailing address.",
                 "Enter the new mailing address and confirm it with the one-time code.",
                 "Allow two business days before requesting a check to the new mailing address."):
        document.add_paragraph(step, style="List Number")
    document.add_heading("Name change", level=1)
    document.add_paragraph("A legal name change needs a copy of the marriage certificate or court order.")
    document.save(str(path))


def write_html(path: Path) -> None:
    path.write_text(
        "<!doctype html><html lang='en'><head><title>Beneficiary help</title>"
        "<meta name='author' content='Web team'><script>var x = 1;</script></head><body>"
        "<nav><a href='/'>Home</a></nav><main><h1>Beneficiary help</h1>"
        "<h2>Naming a beneficiary</h2><p>Spousal consent is required when a married participant names a "
        "non-spouse primary beneficiary; the spouse signs before a notary.</p>"
        "<h2>Updating a beneficiary</h2><p>Beneficiary updates take effect the day the signed form arrives.</p>"
        "</main></body></html>", encoding="utf-8")


def write_pptx(path: Path) -> None:
    import pptx

    deck = pptx.Presentation()
    deck.core_properties.title = "Quarterly service review"
    for title, bullets in (("Quarterly service review", ["Prepared for the operations committee"]),
                           ("Agenda", ["Volumes", "Call center metrics", "Next steps"]),
                           ("Call center metrics", ["Average hold time fell to 94 seconds in the third quarter.",
                                                    "First-call resolution rose to 81 percent."]),
                           ("Next steps", ["Hire four agents for the enrollment season."])):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        frame = slide.placeholders[1].text_frame
        frame.text = bullets[0]
        for bullet in bullets[1:]:
            frame.add_paragraph().text = bullet
    deck.save(str(path))


def write_xlsx(path: Path) -> None:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Fee schedule"
    sheet.append(["Service", "Fee (USD)", "Notes"])
    for row in (["Overnight check delivery", 25, "per check"], ["Wire transfer", 35, "per transfer"],
                ["Statement reprint", 5, "per statement"]):
        sheet.append(row)
    workbook.save(str(path))


def stamp(seconds: float) -> str:
    return f"{int(seconds) // 3600:02d}:{int(seconds) // 60 % 60:02d}:{int(seconds) % 60:02d}.000"


FILLER = ("We reviewed the agenda items for the enrollment season and the staffing plan for the service "
          "desk, including the training calendar and the escalation roster.")


def write_vtt(path: Path) -> None:
    """A 20-minute call; at 12:34 Dana Ruiz states the one fact the test asks about."""
    lines = ["WEBVTT - Fund change briefing", ""]
    t = 0.0
    number = 0
    while t < 12 * 60 + 34:
        number += 1
        speaker = ("Alex Kim", "Morgan Lee")[number // 6 % 2]
        lines += [str(number), f"{stamp(t)} --> {stamp(t + 15)}", f"<v {speaker}>{FILLER}", ""]
        t += 15.0
    t = 12 * 60 + 34.0
    fact = ("The blackout period for the fund lineup change lasts eleven business days, and participants "
            "cannot trade during the blackout period.")
    for text in (fact, "Notices about the blackout period go out thirty days before it starts."):
        number += 1
        lines += [str(number), f"{stamp(t)} --> {stamp(t + 12)}", f"<v Dana Ruiz>{text}", ""]
        t += 12.0
    while t < 20 * 60:
        number += 1
        lines += [str(number), f"{stamp(t)} --> {stamp(t + 15)}", f"<v Alex Kim>{FILLER}", ""]
        t += 15.0
    path.write_text("\n".join(lines), encoding="utf-8")


def build_sources(src: Path) -> None:
    src.mkdir(parents=True, exist_ok=True)
    write_pdf(src / "plan.pdf", [
        [(18, "Introduction"), (11, "This plan document describes the Harbor Savings Plan for employees."),
         (11, "It explains contributions, vesting and distributions.")],
        [(18, "Loans"), (11, "Participants may borrow up to half of the vested balance."),
         (11, "The loan origination fee is 75 dollars per loan."), (0, ""),
         (11, "Loans are repaid through payroll deduction.")],
        [(18, "Hardship withdrawals"), (11, "A hardship withdrawal requires documentation of the need.")],
    ], title="Plan Document")
    write_docx(src / "procedures.docx")
    write_html(src / "beneficiary.html")
    write_pptx(src / "review.pptx")
    write_xlsx(src / "fees.xlsx")
    write_vtt(src / "briefing.vtt")
    (src / "notes.md").write_text("---\nid: kb-notes\ntitle: KB notes\nauthor: KB editors\ntags: [internal]\n---\n"
                                  "## Background\nThe knowledge base is reviewed every quarter by the KB editors.\n")


def add_bad_files(src: Path) -> None:
    write_scanned_pdf(src / "scanned.pdf")
    write_encrypted_pdf(src / "locked.pdf", src.parent / "plain-for-locking.pdf")
    (src / "corrupt.docx").write_bytes(b"PK\x03\x04 this is not really a zip archive" * 20)
    (src / "empty.pdf").write_bytes(b"")


BAD_REASONS = {
    "scanned.pdf": "no text layer (scanned PDF?)",
    "locked.pdf": "encrypted PDF (password required)",
    "corrupt.docx": "not a valid DOCX file (corrupt or not a zip archive)",
    "empty.pdf": "empty file (0 bytes)",
}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def formats_kb(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FormatsKB]:
    """The formats KB ingested into each store: SQLite in the home, and a fresh PostgreSQL schema (where
    positions are jsonb, and citations must carry the same page, slide, heading path and time)."""
    url = ""
    if request.param == "postgresql":
        from tests.pg import fresh_schema_url

        url = fresh_schema_url(f"formats_{request.node.name}")
    root = tmp_path_factory.mktemp(f"formats-{request.param}")
    src = root / "src"
    build_sources(src)
    add_bad_files(src)
    summary = ingest([src], root / "home", progress=False, tags={"team": "benefits"},
                     context=Context(database_url=url))
    yield src, root / "home", summary, url
    if url:
        from citewise.store.postgres import close_pools

        close_pools()


# --- the batch: good files land, bad ones are one clear line each ---------------------------------------


def test_every_format_lands_and_bad_files_are_skipped_with_one_reason_each(
        formats_kb: FormatsKB) -> None:
    summary = formats_kb[2]
    skipped = {Path(entry["path"]).name: entry["reason"] for entry in summary["skipped"]}
    assert skipped == BAD_REASONS
    assert len(summary["skipped"]) == 4 and summary["files_skipped"] == 4
    assert summary["files_seen"] == 11 and summary["files_ingested"] == 7
    assert summary["source_types"] == {"pdf": 1, "docx": 1, "html": 1, "pptx": 1, "xlsx": 1, "transcript": 1,
                                       "markdown": 1}
    assert summary["documents_total"] == 7 and summary["reindexed"]
    assert set(summary["timings"]) == {"documents", "index", "embedding"}
    for key in ("files_seen", "files_unchanged", "files_ingested", "documents_added", "documents_updated",
                "documents_removed", "documents_unchanged", "chunks_written", "errors", "warnings", "reindexed",
                "documents_total", "chunks_total", "seconds", "home"):
        assert key in summary  # the --json summary keeps its shape; fields are only added
    assert any("empty.pdf" in w for w in summary["warnings"])  # empty: a warning, not an error


def test_chunks_keep_their_source_positions_in_store_and_snapshot(formats_kb: FormatsKB) -> None:
    _, home, _, url = formats_kb
    store = open_store(home, url)
    pdf = store.chunks_of("plan.pdf")
    fee = next(c for c in pdf if "origination fee" in c["text"])
    assert fee["position"]["page"] == 2 and fee["position"]["pages"] == [2]
    assert fee["position"]["heading_path"] == ["Loans"] and fee["section"] == "Loans"
    assert fee["position"]["documentId"] == "plan.pdf" and fee["position"]["position"] == fee["ordinal"]
    assert fee["position"]["tags"] == ["team=benefits"] and fee["position"]["indexVersion"] >= 1
    assert fee["metadata"]["source_type"] == "pdf" and fee["metadata"]["author"] == "Plan Sponsor"
    assert fee["metadata"]["team"] == "benefits" and fee["title"] == "Plan Document"
    # offsets point into the converted text, in order, without overlapping chunks of other sections
    offsets = [(c["position"]["start_offset"], c["position"]["end_offset"]) for c in pdf]
    assert offsets == sorted(offsets) and all(a < b for a, b in offsets)

    steps = next(c for c in store.chunks_of("procedures.docx") if c["chunk_type"] == "steps")
    assert steps["tier"] == "high" and steps["position"]["heading_path"] == ["Mailing address change", "Steps"]
    assert "page" not in steps["position"]  # python-docx files have no rendered pages: none is guessed
    slide = next(c for c in store.chunks_of("review.pptx") if "hold time" in c["text"])
    assert slide["position"]["slide"] == 3
    row = next(c for c in store.chunks_of("fees.xlsx") if "Wire transfer" in c["text"])
    assert row["position"]["heading_path"] == ["Fee schedule", "rows 2-4"]
    call = store.chunks_of("briefing.vtt")
    assert len(call) > 1 and call[0]["metadata"]["source_type"] == "transcript"
    assert all(c["position"]["start_time"] < c["position"]["end_time"] for c in call)
    assert "Dana Ruiz" in call[0]["metadata"]["speakers"]
    notes = store.chunks_of("kb-notes")[0]
    assert notes["metadata"]["author"] == "KB editors" and notes["metadata"]["source_type"] == "markdown"
    assert notes["position"]["tags"] == ["internal", "team=benefits"]

    kb = open_kb(home, database_url=url)
    passage = next(p for p in kb.chunks_of("plan.pdf") if "origination fee" in p.text)
    assert passage.position == fee["position"]  # the snapshot serves what the store holds


def _cited(result: dict, phrase: str, home: Path, url: str = "") -> dict:
    """The citation whose chunk says `phrase` (the snippet holds only a chunk's first 240 characters)."""
    chunks = open_store(home, url).chunks_by_id(c["chunk_id"] for c in result["citations"])
    texts = {cid: c["text"] for cid, c in chunks.items()}
    hits = [c for c in result["citations"] if phrase in texts[c["chunk_id"]]]
    assert hits, (result["decision"], [c["snippet"][:60] for c in result["citations"]])
    return hits[0]


def _seconds(clock: str) -> int:
    total = 0
    for part in clock.split(":"):
        total = total * 60 + int(part)
    return total


def test_a_question_per_format_cites_the_right_page_slide_heading_and_time(
        formats_kb: FormatsKB) -> None:
    _, home, _, url = formats_kb
    ctx = Context(home=str(home), database_url=url)

    result = answer("What is the loan origination fee?", ctx=ctx)
    cite = _cited(result, "origination fee", home, url)
    assert (cite["doc_id"], cite["page"], cite["reference"]) == ("plan.pdf", 2, "Plan Document, p. 2")
    assert "[C" in result["response"]["text"] and "75 dollars" in result["response"]["text"]
    assert f"[{cite['id']}] Plan Document, p. 2" in format_answer(result)

    result = answer("How do I change my mailing address in the member portal?", ctx=ctx)
    cite = _cited(result, "member portal", home, url)
    assert cite["heading_path"] == ["Mailing address change", "Steps"]
    assert cite["chunk_type"] == "steps" and cite["page"] is None
    assert cite["reference"] == "Procedures Manual, Mailing address change > Steps"

    result = answer("Is spousal consent required to name a non-spouse primary beneficiary?", ctx=ctx)
    cite = _cited(result, "Spousal consent", home, url)
    assert cite["heading_path"] == ["Beneficiary help", "Naming a beneficiary"]
    assert cite["metadata"]["source_type"] == "html"

    result = answer("What was the average hold time in the third quarter?", ctx=ctx)
    cite = _cited(result, "hold time", home, url)
    assert (cite["slide"], cite["reference"]) == (3, "Quarterly service review, slide 3")

    result = answer("How much is the wire transfer fee in the fee schedule?", ctx=ctx)
    cite = _cited(result, "Wire transfer", home, url)
    assert cite["heading_path"] == ["Fee schedule", "rows 2-4"]

    result = answer("How long does the blackout period for the fund lineup change last?", ctx=ctx)
    cite = _cited(result, "eleven business days", home, url)
    assert _seconds(cite["start"]) <= 12 * 60 + 34 <= _seconds(cite["end"])
    assert "Dana Ruiz" in cite["speakers"] and cite["reference"].startswith("Fund change briefing, t=")
    assert f"t={cite['start']}" in format_answer(result)


def test_metadata_filters_on_source_type_properties_and_tags(formats_kb: FormatsKB) -> None:
    _, home, _, url = formats_kb
    kb = open_kb(home, database_url=url)
    assert {h.doc_id for h in kb.search("fee", filters={"source_type": "pdf"})} == {"plan.pdf"}
    assert {h.doc_id for h in kb.search("review", filters={"source_type": {"$in": ["pptx", "xlsx"]}})} <= {
        "review.pptx", "fees.xlsx"}
    assert {h.doc_id for h in kb.search("procedures", filters={"author": "Service Team"})} == {"procedures.docx"}
    assert len({h.doc_id for h in kb.search("plan", filters={"team": "benefits"})}) > 1
    assert kb.search("plan", filters={"team": "other"}) == []


# --- nothing already stored is lost; unchanged is free; changed replaces atomically -------------------


def test_a_file_broken_after_ingest_keeps_its_documents_and_is_reported_until_fixed(tmp_path: Path) -> None:
    src = tmp_path / "src"
    build_sources(src)
    home = tmp_path / "home"
    first = ingest([src], home, progress=False)
    assert first["skipped"] == [] and first["documents_total"] == 7
    before = Store(home).chunks_of("procedures.docx")

    good = (src / "procedures.docx").read_bytes()
    (src / "procedures.docx").write_bytes(b"PK\x03\x04 truncated upload")
    (src / "new.pdf").write_bytes(b"")
    for _ in range(2):  # reported on every ingest, not just the first
        again = ingest([src], home, progress=False)
        reasons = {Path(e["path"]).name: e["reason"] for e in again["skipped"]}
        assert reasons == {"procedures.docx": BAD_REASONS["corrupt.docx"], "new.pdf": "empty file (0 bytes)"}
        assert Store(home).chunks_of("procedures.docx") == before and again["documents_total"] == 7

    (src / "procedures.docx").write_bytes(good)
    (src / "new.pdf").unlink()
    fixed = ingest([src], home, progress=False)
    assert fixed["skipped"] == [] and fixed["documents_total"] == 7


def test_unchanged_files_are_not_converted_again_and_changed_ones_replace_their_chunks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import citewise.kb.parallel as parallel_module

    src = tmp_path / "src"
    build_sources(src)
    home = tmp_path / "home"
    ingest([src], home, progress=False)
    generation = Store(home).generation()

    def no_conversion(*args: object, **kwargs: object) -> None:
        raise AssertionError("an unchanged file was converted again")

    with monkeypatch.context() as patch:
        patch.setattr(parallel_module, "convert", no_conversion)
        again = ingest([src], home, progress=False)
    assert again["files_unchanged"] == 7 and again["skipped"] == [] and not again["reindexed"]
    assert Store(home).generation() == generation

    write_pdf(src / "plan.pdf", [[(18, "Loans"), (11, "The loan origination fee is 90 dollars per loan.")]],
              title="Plan Document")
    changed = ingest([src], home, progress=False)
    assert changed["documents_updated"] == 1 and changed["files_unchanged"] == 6
    texts = " ".join(c["text"] for c in Store(home).chunks_of("plan.pdf"))
    assert "90 dollars" in texts and "75 dollars" not in texts and "Hardship" not in texts


def test_a_failure_while_writing_leaves_the_old_document_whole_and_the_batch_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "src"
    build_sources(src)
    home = tmp_path / "home"
    ingest([src], home, progress=False)
    before = Store(home).chunks_of("plan.pdf")
    write_pdf(src / "plan.pdf", [[(11, "A rewritten plan document.")]], title="Plan Document")
    (src / "extra.html").write_text("<h1>Extra</h1><p>An extra page about payroll calendars.</p>")

    original = Store.put_document

    def crash_after_writing(self: Store, conn: sqlite3.Connection, **kwargs: object) -> None:
        original(self, conn, **kwargs)  # the old chunks are deleted and the new ones written ...
        if kwargs["doc_id"] == "plan.pdf":
            raise RuntimeError("disk went away")  # ... then the process fails inside the transaction

    monkeypatch.setattr(Store, "put_document", crash_after_writing)
    summary = ingest([src], home, progress=False)
    assert [(Path(e["path"]).name, e["reason"]) for e in summary["skipped"]] == [
        ("plan.pdf", "could not ingest (RuntimeError: disk went away)")]
    assert Store(home).chunks_of("plan.pdf") == before  # all of the old document, none of the new
    assert Store(home).document("extra.html") is not None  # the rest of the batch landed


def _chunks(home: Path) -> list[dict]:
    """Every chunk of a home, without the generation it was written at (two homes differ only there)."""
    store = Store(home)
    rows = [c for doc in sorted(d["doc_id"] for d in store.documents()) for c in store.chunks_of(doc)]
    for row in rows:
        row["position"].pop("indexVersion")
    return rows


def test_a_batch_converted_by_worker_processes_lands_like_a_sequential_one(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for i in range(18):
        (src / f"page{i:02d}.html").write_text(f"<h1>Page {i}</h1><h2>Steps</h2><p>Step {i}: file form {i}.</p>")
    (src / "corrupt.docx").write_bytes(b"not a zip")
    write_docx(src / "procedures.docx")
    pooled = ingest([src], tmp_path / "pooled", progress=False, workers=2)
    alone = ingest([src], tmp_path / "alone", progress=False, workers=1)
    assert [e["reason"] for e in pooled["skipped"]] == [BAD_REASONS["corrupt.docx"]] == [
        e["reason"] for e in alone["skipped"]]
    assert pooled["documents_total"] == alone["documents_total"] == 19
    pooled_chunks, alone_chunks = _chunks(tmp_path / "pooled"), _chunks(tmp_path / "alone")
    assert pooled_chunks == alone_chunks and pooled_chunks[0]["chunk_type"] == "steps"


def test_empty_and_textless_files_are_warned_about_and_never_become_documents(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "empty.md").write_bytes(b"")
    (src / "blank.txt").write_text("  \n\n \t\n")
    (src / "only-front-matter.md").write_text("---\nid: fm\ntitle: Only front matter\n---\n")
    (src / "broken.md").write_text("---\nid: [broken\n---\nbody\n")
    (src / "real.md").write_text("# Real\n\nActual content about payroll calendars.\n")
    for attempt in range(2):  # said on every ingest until fixed, never "unchanged"
        summary = ingest([src], tmp_path / "home", progress=False)
        reasons = {Path(e["path"]).name: e["reason"] for e in summary["skipped"]}
        assert reasons == {"empty.md": "empty file (0 bytes)", "blank.txt": "empty file (only whitespace)",
                           "only-front-matter.md": "document 'fm' has no text to index",
                           "broken.md": "malformed YAML front matter (front matter line 3)"}
        assert summary["documents_total"] == 1 and summary["files_unchanged"] == attempt  # real.md, 2nd time
    assert [d["doc_id"] for d in Store(tmp_path / "home").documents()] == ["real.md"]


def test_headingless_pages_split_at_paragraphs_and_calls_at_speaker_turns(tmp_path: Path) -> None:
    from citewise.config import Context

    src = tmp_path / "src"
    src.mkdir()
    paragraphs = [f"Paragraph {i} explains how request type {i} is routed, approved and filed by the desk."
                  for i in range(40)]
    (src / "memo.html").write_text("<html><body>" + "".join(f"<p>{p}</p>" for p in paragraphs) + "</body></html>")
    write_vtt(src / "briefing.vtt")
    ingest([src], tmp_path / "home", progress=False, context=Context(chunk_size=160, chunk_overlap=20))
    store = Store(tmp_path / "home")
    memo = store.chunks_of("memo.html")
    assert len(memo) > 3 and all(c["chunk_type"] == "content" and "heading_path" not in c["position"] for c in memo)
    for chunk in memo:  # whole paragraphs only, each chunk within the size
        assert all(part in paragraphs for part in chunk["text"].split("\n\n")) and chunk["tokens"] <= 160
    call = store.chunks_of("briefing.vtt")
    assert len(call) > 5
    for chunk in call:
        first = chunk["text"].split("\n")[0]
        assert first.split(":")[0] in {"Alex Kim", "Morgan Lee", "Dana Ruiz"}  # a window starts with its speaker
        assert set(chunk["position"]["speakers"]) <= {"Alex Kim", "Morgan Lee", "Dana Ruiz"}
    starts = [c["position"]["start_time"] for c in call]
    assert starts == sorted(starts) and call[-1]["position"]["end_time"] >= 20 * 60  # the whole call


def test_tags_must_be_plain_key_values(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Some text.\n")
    for tags, message in (({"title": "x"}, "set by citewise"), ({"bad key": "x"}, "non-empty word"),
                          ({"k": {"nested": 1}}, "needs a string")):
        with pytest.raises(InputError, match=message):
            ingest([tmp_path / "a.md"], tmp_path / "home", progress=False, tags=tags)


def test_an_older_store_gains_the_position_column_without_losing_rows(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    conn = sqlite3.connect(home / "citewise.db")
    conn.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE documents (doc_id TEXT PRIMARY KEY, source TEXT NOT NULL, title TEXT NOT NULL, metadata TEXT "
        "NOT NULL, content_hash TEXT NOT NULL, structured INTEGER NOT NULL, fields TEXT NOT NULL, guardrails TEXT "
        "NOT NULL, ingested_at REAL NOT NULL);"
        "CREATE TABLE chunks (chunk_id TEXT PRIMARY KEY, doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE "
        "CASCADE, ordinal INTEGER NOT NULL, section TEXT NOT NULL, chunk_type TEXT NOT NULL, tier TEXT NOT NULL, "
        "text TEXT NOT NULL, tokens INTEGER NOT NULL, metadata TEXT NOT NULL);"
        "INSERT INTO documents VALUES ('d', 'd.md', 'D', '{}', 'h', 0, '[]', '{}', 0);"
        "INSERT INTO chunks VALUES ('d#00', 'd', 0, '', 'content', 'medium', 'old text', 2, '{}');")
    conn.commit()
    conn.close()
    store = Store(home)
    assert store.chunks_of("d") == [{"chunk_id": "d#00", "doc_id": "d", "ordinal": 0, "section": "", "chunk_type":
                                     "content", "tier": "medium", "text": "old text", "tokens": 2, "metadata": {},
                                     "title": "D", "position": {}}]
    Store(home)  # opening again is a no-op
    columns = [r[1] for r in sqlite3.connect(home / "citewise.db").execute("PRAGMA table_info(chunks)")]
    assert columns.count("position") == 1


# --- the command line: one line per skipped file, --strict, --tag, progress without a terminal -------------


def test_cli_reports_each_skip_in_text_mode_and_strict_exits_2(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    write_html(src / "beneficiary.html")
    add_bad_files(src)
    (src / "photo.png").write_bytes(b"\x89PNG")
    home = tmp_path / "home"
    for attempt in range(2):
        proc = subprocess.run([sys.executable, "-m", "citewise.cli", "ingest", str(src), "--home", str(home),
                               "--tag", "team=benefits"], capture_output=True, text=True, env=ENV, timeout=600)
        assert proc.returncode == 0, proc.stderr
        skips = [line for line in proc.stderr.splitlines() if line.startswith("skipped: ")]
        assert sorted(Path(line.split(": ")[1]).name for line in skips) == sorted([*BAD_REASONS, "photo.png"])
        for name, reason in BAD_REASONS.items():
            assert any(line.endswith(f"{name}: {reason}") for line in skips)
        assert "Traceback" not in proc.stderr and "5 skipped" in proc.stdout
        if attempt == 0:  # not a terminal: plain progress lines whose count and total agree
            assert "ingest: documents 5/5 files (100%)" in proc.stderr
            assert any(line.startswith("ingest: embedding ") and " chunks (100%)" in line
                       for line in proc.stderr.splitlines())
    strict = subprocess.run([sys.executable, "-m", "citewise.cli", "ingest", str(src), "--home", str(home),
                             "--tag", "team=benefits", "--strict", "--json"],
                            capture_output=True, text=True, env=ENV, timeout=600)
    assert strict.returncode == 2
    summary = json.loads(strict.stdout)
    assert summary["files_skipped"] == 5 and summary["tags"] == {"team": "benefits"}
    assert summary["files_unchanged"] == 1 and "ingest:" not in strict.stderr  # --json: no progress lines


def test_plain_progress_lines_agree_with_their_totals() -> None:
    from citewise.kb.progress import Progress

    out = io.StringIO()
    display = Progress("lines", stream=out, interval=0.0)
    step = display.phase("documents", 3, "file")
    for _ in range(3):
        step(1)
    step = display.phase("embedding", 10, "chunk")
    step(4)
    step(25)  # a caller that over-reports never pushes the count past the total
    display.close()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("ingest: documents 1/3 files (33%)") and "ETA" in lines[0]
    assert lines[2].startswith("ingest: documents 3/3 files (100%)") and "ETA" not in lines[2]
    assert lines[3].startswith("ingest: embedding 4/10 chunks (40%)")
    assert lines[-1].startswith("ingest: embedding 10/10 chunks (100%)") and len(lines) == 5


def test_a_call_is_chunked_in_windows_the_embedder_reads_whole(tmp_path: Path) -> None:
    """At the default chunk size a 20-minute call is not packed into a few 800-token chunks (one averaged
    vector about everything, too big to sit beside an article in the context): each window, cut at a
    speaker turn, is a chunk of about what MiniLM reads in one pass."""
    from citewise.kb.ingest import TRANSCRIPT_WORDS

    src = tmp_path / "src"
    src.mkdir()
    write_vtt(src / "briefing.vtt")
    ingest([src], tmp_path / "home", progress=False)
    call = Store(tmp_path / "home").chunks_of("briefing.vtt")
    spoken = [len(" ".join(line.split(":", 1)[1] for line in c["text"].split("\n")).split()) for c in call]
    # (the last window may hold a short tail: up to a quarter more)
    assert len(call) >= 10 and max(spoken[:-1]) <= TRANSCRIPT_WORDS and spoken[-1] <= 1.25 * TRANSCRIPT_WORDS, spoken
    fact = next(c for c in call if "eleven business days" in c["text"])
    assert fact["position"]["start_time"] <= 12 * 60 + 34 <= fact["position"]["end_time"]


def test_a_short_last_turn_joins_the_window_before_it() -> None:
    """"You're welcome, bye." is not a chunk of its own; and a window's words count its speaker labels."""
    from citewise.kb.convert.transcript import Segment, group

    talk = [Segment(i * 10.0, i * 10.0 + 9, ("Dana Ruiz", "Alex Kim")[i % 2], "word " * 20) for i in range(9)]
    tail = [Segment(95.0, 97.0, "Dana Ruiz", "You're welcome, bye.")]
    windows = group(talk + tail, max_words=100)
    assert windows[-1][-1].text == "You're welcome, bye." and len(windows[-1]) > 1
    assert all(sum(len(s.text.split()) + 2 for s in w) <= 100 for w in windows[:-1])  # labels ("Dana Ruiz") count


def test_a_web_pages_what_not_to_say_section_is_its_content(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "training.html").write_text("<html><body><h1>Calls in arrears</h1><h2>What not to say</h2>"
                                       "<p>Avoid threatening language with a customer in arrears.</p></body></html>")
    ingest([src], tmp_path / "home", progress=False)
    chunk = next(c for c in Store(tmp_path / "home").chunks_of("training.html") if "threatening" in c["text"])
    assert chunk["chunk_type"] == "content"
