"""Real document files for tests, made with the libraries that make them in the wild."""

from __future__ import annotations

from pathlib import Path


def write_pdf(path: Path, pages: list[list[tuple[int, str]]], title: str | None = None,
              author: str = "Plan Sponsor") -> None:
    """Each page is a list of (font size, line); size 0 leaves a paragraph gap; over 12 points is bold."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=A4)
    if title:
        pdf.setTitle(title)
        pdf.setAuthor(author)
    for lines in pages:
        y = 800.0
        for size, text in lines:
            if size == 0:
                y -= 20
                continue
            pdf.setFont("Helvetica-Bold" if size > 12 else "Helvetica", size)
            pdf.drawString(72, y, text)
            y -= size * 1.25
        pdf.showPage()
    pdf.save()
