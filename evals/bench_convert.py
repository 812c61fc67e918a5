"""Micro-benchmark of the document conversion layer (kb/convert): files per second per format.

    python -m citewise.evals.bench_convert [--files 200] [--workers 1] [--json-only]

Generates a deterministic mix of small-but-real files (PDF via reportlab, DOCX via python-docx, PPTX via
python-pptx, XLSX via openpyxl, HTML and WebVTT as text) into a temporary folder, converts each one and
prints JSON plus a table. No embeddings, no network: this measures only what conversion adds to ingest.
The generators are also used by evals/compare_converters.py so both candidates see the same files.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

_VOCABULARY = (
    "account balance transfer rollover plan employer deadline form signature fee waiver policy customer request "
    "review approval payment statement tax withholding distribution eligible contribution limit annual quarterly "
    "retirement beneficiary document identity verification branch online support ticket escalation refund "
    "interest rate penalty exception manager compliance record notice"
)
WORDS = _VOCABULARY.split()
SPEAKERS = ("Alice Moreno", "Bob Chen", "Priya Natarajan")


def sentence(rng: random.Random, n: int = 12) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random, sentences: int = 4) -> str:
    return " ".join(sentence(rng, rng.randint(8, 16)) for _ in range(sentences))


def make_pdf(path: Path, seed: int, pages: int = 3) -> None:
    """Pages with an 18pt heading, 14pt subheadings and 11pt body paragraphs (reportlab canvas)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    rng = random.Random(seed)
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.setTitle(f"Policy manual {seed}")
    pdf.setAuthor("Operations")
    for page in range(1, pages + 1):
        y = 800.0
        pdf.setFont("Helvetica-Bold", 18)
        pdf.drawString(72, y, f"Chapter {page}: {rng.choice(WORDS).title()} rules")
        y -= 32
        for sub in range(2):
            pdf.setFont("Helvetica-Bold", 14)
            pdf.drawString(72, y, f"{page}.{sub + 1} {rng.choice(WORDS).title()} {rng.choice(WORDS)}")
            y -= 22
            pdf.setFont("Helvetica", 11)
            for _ in range(2):
                line: list[str] = []
                for word in paragraph(rng).split():
                    if len(" ".join([*line, word])) > 85:
                        pdf.drawString(72, y, " ".join(line))
                        y -= 14
                        line = []
                    line.append(word)
                pdf.drawString(72, y, " ".join(line))
                y -= 28
        pdf.showPage()
    pdf.save()


def make_docx(path: Path, seed: int) -> None:
    """Title, Heading 1/2 sections with paragraphs, a bulleted list and a table (python-docx)."""
    import docx

    rng = random.Random(seed)
    document = docx.Document()
    document.core_properties.title = f"Procedures {seed}"
    document.core_properties.author = "Service team"
    document.add_paragraph(f"Procedures {seed}", style="Title")
    for section in range(1, 4):
        document.add_heading(f"Section {section} {rng.choice(WORDS)}", level=1)
        document.add_paragraph(paragraph(rng))
        document.add_heading(f"Details {section}.1", level=2)
        document.add_paragraph(paragraph(rng))
        for _ in range(3):
            document.add_paragraph(sentence(rng), style="List Bullet")
    table = document.add_table(rows=4, cols=3)
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            cell.text = ("Item", "Fee", "Notes")[c] if r == 0 else f"{rng.choice(WORDS)} {r}{c}"
    document.save(str(path))


def make_pptx(path: Path, seed: int, slides: int = 5) -> None:
    """Title-and-content slides with bullets and speaker notes (python-pptx)."""
    import pptx

    rng = random.Random(seed)
    deck = pptx.Presentation()
    deck.core_properties.title = f"Quarterly review {seed}"
    for number in range(1, slides + 1):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Slide topic {number} {rng.choice(WORDS)}"
        body = slide.placeholders[1].text_frame
        body.text = sentence(rng)
        for _ in range(3):
            body.add_paragraph().text = sentence(rng)
        slide.notes_slide.notes_text_frame.text = sentence(rng)
    deck.save(str(path))


def make_xlsx(path: Path, seed: int, rows: int = 40) -> None:
    """Two sheets with a header row and mixed values (openpyxl)."""
    import openpyxl

    rng = random.Random(seed)
    workbook = openpyxl.Workbook()
    for index, name in enumerate(("Fees", "Limits")):
        sheet = workbook.active if index == 0 else workbook.create_sheet()
        sheet.title = name
        sheet.append(["Item", "Amount", "Notes"])
        for r in range(rows):
            sheet.append([f"{rng.choice(WORDS)} {r}", rng.randint(1, 500), sentence(rng, 6)])
    workbook.save(str(path))


def make_html(path: Path, seed: int) -> None:
    rng = random.Random(seed)
    sections = []
    for s in range(1, 4):
        items = "".join(f"<li>{sentence(rng)}</li>" for _ in range(3))
        sections.append(
            f"<h2>Topic {s}</h2><p>{paragraph(rng)}</p><h3>Steps {s}</h3><ul>{items}</ul><p>{paragraph(rng)}</p>"
        )
    table = "<table><tr><th>Plan</th><th>Limit</th></tr><tr><td>Basic</td><td>100</td></tr></table>"
    path.write_text(
        f"<!doctype html><html lang='en'><head><title>Help page {seed}</title>"
        "<meta name='author' content='Web team'><style>p {{color: red}}</style>"
        "<script>var tracking = 1;</script></head><body><nav><a href='/'>Home</a></nav>"
        f"<main><h1>Help page {seed}</h1>{''.join(sections)}{table}</main></body></html>",
        encoding="utf-8",
    )


def make_vtt(path: Path, seed: int, cues: int = 80) -> None:
    """A WebVTT call with voice tags; speakers take turns of one to four cues."""
    rng = random.Random(seed)
    lines = ["WEBVTT", ""]
    t = 0.0
    speaker = SPEAKERS[0]
    for number in range(1, cues + 1):
        if rng.random() < 0.35:
            speaker = rng.choice(SPEAKERS)
        duration = rng.uniform(2.0, 6.0)
        lines += [str(number), f"{_stamp(t)} --> {_stamp(t + duration)}", f"<v {speaker}>{sentence(rng)}", ""]
        t += duration
    path.write_text("\n".join(lines), encoding="utf-8")


def _stamp(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


MAKERS: dict[str, Callable[[Path, int], None]] = {
    "pdf": make_pdf,
    "docx": make_docx,
    "pptx": make_pptx,
    "xlsx": make_xlsx,
    "html": make_html,
    "vtt": make_vtt,
}


def generate(folder: Path, count: int, formats: tuple[str, ...] = tuple(MAKERS)) -> list[Path]:
    """`count` files, formats in rotation, deterministic content."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        suffix = formats[i % len(formats)]
        path = folder / f"doc{i:04d}.{suffix}"
        MAKERS[suffix](path, i)
        paths.append(path)
    return paths


def _convert_timed(path: Path) -> tuple[str, float, int]:
    from citewise.kb.convert import convert

    started = time.perf_counter()
    result = convert(path)
    return path.suffix.lstrip("."), time.perf_counter() - started, len(result.blocks)


def _import_seconds(module: str) -> float:
    """Cold import time of one converter module, in a fresh interpreter (what a CLI run pays once)."""
    code = (
        "import time,importlib; import citewise.kb.convert.types; t=time.perf_counter(); "
        f"importlib.import_module('{module}'); print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def run(files: int, workers: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        paths = generate(Path(tmp), files)
        generated = time.perf_counter() - started
        for module in ("pdf", "docx", "pptx", "xlsx"):  # warm: import cost is reported separately
            __import__(f"citewise.kb.convert.{module}")
        started = time.perf_counter()
        if workers > 1:
            with ProcessPoolExecutor(workers) as pool:
                results = list(pool.map(_convert_timed, paths, chunksize=8))
        else:
            results = [_convert_timed(path) for path in paths]
        wall = time.perf_counter() - started
    per: dict[str, list[float]] = defaultdict(list)
    blocks: dict[str, int] = defaultdict(int)
    for suffix, seconds, count in results:
        per[suffix].append(seconds)
        blocks[suffix] += count
    formats = {
        suffix: {
            "files": len(times),
            "files_per_s": round(len(times) / sum(times), 1),
            "ms_per_file": round(1000 * sum(times) / len(times), 2),
            "blocks_per_file": round(blocks[suffix] / len(times), 1),
        }
        for suffix, times in sorted(per.items())
    }
    imports = {
        module: round(_import_seconds(f"citewise.kb.convert.{module}"), 3)
        for module in ("pdf", "docx", "pptx", "xlsx", "html", "transcript")
    }
    return {
        "files": files,
        "workers": workers,
        "cpus": os.cpu_count(),
        "generate_s": round(generated, 2),
        "convert_wall_s": round(wall, 3),
        "overall_files_per_s": round(files / wall, 1),
        "formats": formats,
        "import_s": imports,
    }


def table(report: dict) -> str:
    lines = ["| format | files | files/s | ms/file | blocks/file | import s |", "|---|---|---|---|---|---|"]
    module = {"vtt": "transcript"}
    for suffix, row in report["formats"].items():
        imported = report["import_s"].get(module.get(suffix, suffix), "")
        lines.append(
            f"| {suffix} | {row['files']} | {row['files_per_s']} | {row['ms_per_file']} "
            f"| {row['blocks_per_file']} | {imported} |"
        )
    lines.append(
        f"| **all** | {report['files']} | **{report['overall_files_per_s']}** "
        f"| {round(1000 * report['convert_wall_s'] / report['files'], 2)} | | |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1, help="processes converting in parallel")
    parser.add_argument("--json-only", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.files, args.workers)
    print(json.dumps(report, indent=2))
    if not args.json_only:
        print()
        print(table(report))


if __name__ == "__main__":
    main()
