"""Side-by-side check of conversion candidates on the same files (the evidence behind kb/convert/CHOICE.md).

    python -m citewise.evals.compare_converters generate DIR [--files 60]   # in the project venv
    python evals/compare_converters.py measure DIR --candidate markitdown   # in a scratch venv with
                                                                            # markitdown[pdf,docx,pptx,xlsx]
    python -m citewise.evals.compare_converters measure DIR --candidate citewise

markitdown is deliberately not a project dependency, so it is measured from a throwaway venv; this
file imports nothing from citewise at module level so it runs there too. For each format it reports
mean conversion time, how many headings survive as headings, whether page/slide boundaries can be
recovered, whether tables come out as tables and whether transcript times/speakers are kept.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

_SEPARATOR = re.compile(r"(?m)^\|(?:\s*:?-+:?\s*\|)+$")  # a Markdown table's header separator row: one per table

# per generated file (evals/bench_convert.py): headings written, pages/slides, tables
EXPECTED = {
    "pdf": {"headings": 9, "pages": 3, "tables": 0},
    "docx": {"headings": 7, "pages": None, "tables": 1},
    "pptx": {"headings": 5, "slides": 5, "tables": 0},
    "xlsx": {"headings": 2, "tables": 2},
    "html": {"headings": 7, "tables": 1},
    "vtt": {"cues": 80},
}


def _markitdown_stats(path: Path, converter: Any) -> dict[str, Any]:
    text = converter.convert(str(path)).text_content
    lines = text.splitlines()
    return {
        "headings": sum(1 for line in lines if re.match(r"^#{1,6} ", line)),
        "page_breaks_recoverable": text.count("\f"),  # pdfminer's form feed, if markitdown keeps it
        "slide_markers": len(re.findall(r"<!-- Slide number: \d+ -->", text)),
        "tables": len(_SEPARATOR.findall(text)),
        "timestamps": len(re.findall(r"\d{2}:\d{2}:\d{2}\.\d{3} -->", text)),
        "speaker_tags_left": text.count("<v "),
        "chars": len(text),
    }


def _citewise_stats(path: Path, converter: Any) -> dict[str, Any]:
    result = converter(path)
    blocks = result.blocks
    return {
        "headings": sum(1 for block in blocks if block.level),
        "pages": len({block.page for block in blocks if block.page is not None}),
        "slides": len({block.slide for block in blocks if block.slide is not None}),
        "tables": sum(len(_SEPARATOR.findall(block.text)) for block in blocks),
        "timed_blocks": sum(1 for block in blocks if block.start is not None),
        "speakers": len({s for block in blocks for s in block.speakers}),
        "chars": len(result.text),
    }


def measure(folder: Path, candidate: str) -> dict[str, Any]:
    started = time.perf_counter()
    if candidate == "markitdown":
        from markitdown import MarkItDown

        md = MarkItDown(enable_plugins=False)
        imported = time.perf_counter() - started
        stats, converter = _markitdown_stats, md
    else:
        from citewise.kb.convert import convert, docx, html, pdf, pptx, transcript, xlsx  # noqa: F401  (import cost)

        imported = time.perf_counter() - started
        stats, converter = _citewise_stats, convert
    per: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in sorted(folder.iterdir()):
        t0 = time.perf_counter()
        try:
            row = stats(path, converter)
        except Exception as exc:
            row = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        row["ms"] = 1000 * (time.perf_counter() - t0)
        per[path.suffix.lstrip(".")].append(row)
    report: dict[str, Any] = {"candidate": candidate, "import_s_in_process": round(imported, 3), "formats": {}}
    for suffix, rows in per.items():
        merged: dict[str, Any] = {"files": len(rows), "expected": EXPECTED.get(suffix)}
        for key in rows[0]:
            values = [row[key] for row in rows if key in row]
            if all(isinstance(v, int | float) for v in values):
                merged[key] = round(sum(values) / len(values), 2)
            else:
                merged[key] = values[0]
        report["formats"][suffix] = merged
    return report


def cold_import(candidate: str) -> float:
    module = "markitdown" if candidate == "markitdown" else "citewise.kb.convert.pdf"
    extra = "" if candidate == "markitdown" else (
        "; import citewise.kb.convert.docx, citewise.kb.convert.pptx, citewise.kb.convert.xlsx, "
        "citewise.kb.convert.html, citewise.kb.convert.transcript"
    )
    code = f"import time; t=time.perf_counter(); import {module}{extra}; print(time.perf_counter()-t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(3)]
    return round(min(runs), 3)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["generate", "measure"])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--candidate", choices=["markitdown", "citewise"], default="citewise")
    args = parser.parse_args(argv)
    if args.action == "generate":
        from citewise.evals.bench_convert import generate

        generate(args.folder, args.files)
        return
    report = measure(args.folder, args.candidate)
    report["cold_import_s"] = cold_import(args.candidate)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
