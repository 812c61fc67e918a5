"""A knowledge base of real documentation: the long descriptions (README text) of installed dependencies.

    python -m citewise.evals.docs_kb DEST

Our sample KB and its questions were written by the same people, so they share words and habits. These
READMEs were written by nobody on the team, in both Markdown and reStructuredText, with the noise real
docs have (badges, HTML, changelogs, tables). The files are built at eval time from the installed
packages' metadata, so nothing is vendored into this repository; `examples/questions-docs.yaml` is the
eval set, and its facts were checked against the pinned versions (requirements.lock).

Each package becomes `DEST/<package>.md`, a plain document (no front matter) whose id is that file name.
reStructuredText section titles become Markdown headings; everything else is kept as text.
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import metadata
from pathlib import Path

PACKAGES = [
    "bm25s", "tiktoken", "tqdm", "pydantic", "httpx", "faiss-cpu", "ruff", "langgraph-cli",
    "hypothesis", "pytest", "pytest-timeout", "ir-measures", "rank-bm25",
]

# reST lets any punctuation underline a title ("Deprecated is Easy to Use" over a row of backticks); the
# level is by convention, the common characters first
_LEVELS = {"=": "#", "-": "##", "`": "##", "~": "###", ":": "###", "'": "###", '"': "###", "^": "####", "+": "####",
           "*": "####", "_": "####", "#": "#"}
_ADORNMENT = re.compile(r"([=\-`~:'\"^+*_#])\1+$")


def rst_headings(text: str) -> str:
    """Turn reST section titles (underlined, optionally overlined with the same line) into `#` headings."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        title, under = lines[i], lines[i + 1] if i + 1 < len(lines) else ""
        m = _ADORNMENT.match(under)
        if (m and title.strip() and not title[0].isspace() and any(c.isalnum() for c in title)
                and len(under) >= len(title.rstrip())):
            if out and out[-1] == under:  # the overline of an overlined title
                out.pop()
            out.append(f"{_LEVELS[m.group(1)]} {title.strip()}")
            i += 2
            continue
        out.append(title)
        i += 1
    return "\n".join(out)


_DIRECTIVE = re.compile(r"^\s*\.\. (code|code-block|sourcecode)::\s*(\S*)\s*$")


def rst_literal_blocks(text: str) -> str:
    """reST literal blocks as Markdown code fences: the indented block after a paragraph ending in `::`
    ("terminated::" reads "terminated:") and after a `.. code::` directive. Left as indented text they
    would read as prose, and a command in them would be joined to its neighbours."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        directive = _DIRECTIVE.match(line)
        literal = line.rstrip().endswith("::") and not line.lstrip().startswith("..")
        if not (directive or literal):
            out.append(line)
            i += 1
            continue
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or lines[j].lstrip().startswith(":")) and directive:
            j += 1  # a directive's blank line and options (":linenos:")
        while j < len(lines) and not lines[j].strip():
            j += 1
        outer = len(line) - len(line.lstrip())  # the directive or paragraph may itself sit in a list item
        indent = len(lines[j]) - len(lines[j].lstrip()) if j < len(lines) else 0
        end = j
        while end < len(lines) and (not lines[end].strip()
                                    or len(lines[end]) - len(lines[end].lstrip()) >= indent > outer):
            end += 1
        while end > j and not lines[end - 1].strip():
            end -= 1
        if indent <= outer or end == j:  # no indented block follows: not a literal block after all
            out.append(line)
            i += 1
            continue
        if literal:
            raw = line.rstrip()[:-2]
            lead = raw.rstrip()  # "text::" reads "text:"; "text ::" reads "text" (reST's rule)
            out.append(lead + ":" if lead and raw == lead and not lead.endswith(":") else lead)
        out.extend(["", "```" + (directive.group(2) if directive else ""),
                    *(ln[indent:] for ln in lines[j:end]), "```", ""])
        i = end
    return "\n".join(out)


def description(name: str) -> str:
    """The package's long description as Markdown (reST descriptions get Markdown headings)."""
    meta = metadata(name)
    text = (meta.get_payload() or meta.get("Description") or "").replace("\r\n", "\n")
    kind = (meta.get("Description-Content-Type") or "text/x-rst").split(";")[0].strip().lower()
    if kind == "text/x-rst":  # PyPI's default when no content type is declared
        text = rst_literal_blocks(rst_headings(text))
    text = text.strip("\n") + "\n"
    return "\n" + text if text.startswith("---") else text  # a leading '---' would read as front matter


def build_docs_kb(dest: Path, packages: list[str] | None = None) -> list[Path]:
    """Write each package's description to `dest/<package>.md`; returns the files written."""
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for name in packages or PACKAGES:
        path = dest / f"{name}.md"
        path.write_text(description(name), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m citewise.evals.docs_kb DEST", file=sys.stderr)
        return 2
    for path in build_docs_kb(Path(args[0])):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
