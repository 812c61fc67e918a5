"""The rough edges a newcomer hit (issue 16) that no other test covered.

Covered elsewhere: plain progress lines and their totals, skipped files on every ingest, --strict,
empty files, broken front matter reported until fixed (tests/test_ingest_formats.py); only [C<n>] is
a citation (tests/test_verify.py); the interactive prompt (tests/test_interactive.py); ./run demo
(tests/test_run_script.py); the README examples (tests/test_readme.py); a cold ask's imports
(tests/test_cli.py) and the server's preload (tests/test_cold_start.py).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pexpect
import pytest

from citewise.cli import main
from citewise.engine.check import depends_note
from citewise.engine.records import Relevance, Resolution
from citewise.kb.ingest import ingest
from tests.paths import ROOT, SAMPLE_KB

README_DOC = """# httpx

[![PyPI](https://img.shields.io/pypi/v/httpx.svg)](https://pypi.org/project/httpx/) [![Docs](https://img.shields.io/badge/docs-latest-blue.svg)](https://www.python-httpx.org/)

HTTPX is a fully featured HTTP client for Python 3, with [HTTP/2 support](https://www.python-httpx.org/http2/).

## Installation

HTTP/2 support is an optional extra. To install httpx with HTTP/2 support, run:

```
pip install httpx[http2]
python -c "import httpx; print(httpx.__version__)"
```

## Proxies

Set the proxy with the `proxy` argument, for example `httpx.Client(proxy="http://localhost:8030")`.
"""


def test_the_parallel_article_note_names_each_value_once() -> None:
    """Two of the tied articles share a record keeper: the note lists it once, the governing one first."""
    docs = {"acme-401k-rollover": "Acme Retirement", "harborview-401k-rollover": "Harborview Recordkeeping",
            "summit-403b-rollover": "Summit Plan Services", "harborview-457b-rollover": "Harborview Recordkeeping"}
    kb = SimpleNamespace(docs={d: SimpleNamespace(metadata={"record_keeper": v}) for d, v in docs.items()})
    resolution = Resolution(covered=True, relevance=Relevance(0.9), article_id="acme-401k-rollover",
                            tied=list(docs), choices={"record_keeper": sorted(set(docs.values()))},
                            missing=["record_keeper"])
    note = depends_note(kb, resolution)
    assert note.startswith("This depends on the record keeper (Acme Retirement or Harborview Recordkeeping or "
                           "Summit Plan Services); what follows is for Acme Retirement.")
    assert note.count("Harborview Recordkeeping") == 1


def test_an_answer_from_plain_markdown_keeps_code_whole_and_drops_badges_and_link_markup(tmp_path: Path) -> None:
    """`pip install httpx[http2]` is a command, not a citation; the fenced block stays a block of lines."""
    src = tmp_path / "docs"
    src.mkdir()
    (src / "httpx-readme.md").write_text(README_DOC, encoding="utf-8")
    home = tmp_path / "home"
    assert ingest([src], home, progress=False)["documents_total"] == 1
    from citewise import api

    out = api.ask("How do I install httpx with HTTP/2 support?", home=home)
    text = out["response"]["text"]
    assert out["decision"] == "can_proceed", (out["decision"], out["guardrails"])
    assert not [v for v in out["guardrails"]["violations"] if v["rule"] == "invalid_citation"]
    assert "```\npip install httpx[http2]\npython -c \"import httpx; print(httpx.__version__)\"\n```" in text
    assert "shields.io" not in text and "![" not in text and "](" not in text
    assert re.findall(r"\[([^\]]*)\]", text.replace("[http2]", "")) == [c for c in re.findall(
        r"\[([^\]]*)\]", text.replace("[http2]", "")) if re.fullmatch(r"C\d+(, C\d+)*", c)]  # only [C#] remain


def test_text_mode_names_every_input_not_ingested_on_every_ingest(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing path among several, a non-UTF-8 text file, an unreadable file and a binary: one line each
    on stderr without --json, every time, and the good input still lands (exit 0; --strict: 2)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.md").write_text("# Payroll calendar\n\nPayroll runs on the 15th and the last day of the month.\n")
    (src / "latin1.txt").write_bytes("Caf\xe9 hours are posted weekly.".encode("latin-1"))
    (src / "locked.md").write_text("# Locked\n\nNobody may read this file.\n")
    (src / "blob.bin").write_bytes(bytes(range(256)))
    real_read = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "locked.md":
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    args = ["ingest", str(src), str(tmp_path / "missing.md"), "--home", str(tmp_path / "home")]
    for attempt in range(2):
        assert main(args) == 0
        out, err = capsys.readouterr()
        skipped = {Path(line.split(": ")[1]).name: line.split(": ", 2)[2] for line in err.splitlines()
                   if line.startswith("skipped: ")}
        assert skipped == {"missing.md": "no such file or directory", "latin1.txt": "not UTF-8 text",
                           "locked.md": "cannot read (Permission denied)",
                           "blob.bin": skipped.get("blob.bin", "")} and skipped["blob.bin"], (attempt, err)
        assert "4 skipped" in out and "Traceback" not in err
    assert main([*args, "--strict"]) == 2
    assert "input(s) skipped (--strict)" in capsys.readouterr().err


def test_the_ingest_bar_on_a_terminal_counts_each_phase_against_its_own_total(kb_home: Path, tmp_path: Path) -> None:
    """At a terminal: a documents bar in files, then an embedding bar in chunks, each against its own
    total with a percentage, never a bare count past it (`embedding: 768item`). The bars are cleared
    when done (the summary line says the totals), so what was drawn is checked, render by render."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", "COLUMNS": "120"}
    child = pexpect.spawn(sys.executable, ["-m", "citewise.cli", "ingest", str(SAMPLE_KB), "--home",
                                           str(tmp_path / "home")], cwd=str(ROOT), env=env, encoding="utf-8",
                          timeout=300, dimensions=(24, 120))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    shown = child.before.replace("\r", "\n")
    renders = re.findall(r"(documents|embedding):\s+(\d+)%\|[^|]*\|\s*(\d+)/(\d+) \[[^\]]*?(file|chunk)/s", shown)
    assert {(phase, int(total), unit) for phase, _, _, total, unit in renders} == {
        ("documents", 31, "file"), ("embedding", 264, "chunk")}
    assert all(int(done) <= int(total) and abs(int(pct) - 100 * int(done) / int(total)) <= 0.5
               for _, pct, done, total, _ in renders)
    assert "item" not in shown and "Ingested 31 file(s)" in shown


def test_a_sentence_that_breaks_off_before_code_keeps_the_code() -> None:
    """"... retrieve the best documents with" + a code block is one unit: cited alone, the sentence would
    promise an answer it does not give. A finished sentence before code, or a heading-like line, stays apart."""
    from citewise.kb.text import split_items

    text = ("Instead of scores, you can also retrieve the best documents with\n\n```\nbm25.get_top_n(q, docs, n=1)\n"
            "```\n\nThat is all.\n\n```\nprint(1)\n```\n")
    units = split_items(text)
    assert units[0] == ("Instead of scores, you can also retrieve the best documents with\n```\n"
                        "bm25.get_top_n(q, docs, n=1)\n```")
    assert units[1:] == ["That is all.", "```\nprint(1)\n```"]


def test_an_indented_code_block_is_quoted_whole() -> None:
    """Markdown's four-space code block is code too: its lines are not joined into one sentence with
    the command buried in it. Indented continuation lines of a list item stay prose."""
    from citewise.kb.text import split_items

    units = split_items("Run the suite with a timeout:\n\n    pytest --timeout=300\n    pytest -x\n\nThat is all.")
    assert units == ["Run the suite with a timeout:\n```\npytest --timeout=300\npytest -x\n```", "That is all."]
    assert split_items("- one item\n\n    that goes on here.\n\nA paragraph.") == [
        "one item", "that goes on here.", "A paragraph."]
    from citewise.kb.chunker import split_section  # in a section cut into chunks too

    chunks = split_section("Intro sentence here. " * 12 + "\n\nRun it with:\n\n    pytest -x\n    pytest --lf\n", 40, 0)
    assert "Run it with:\n```\npytest -x\npytest --lf\n```" in [u for c in chunks for u in split_items(c)]


def test_an_abbreviation_does_not_end_a_sentence() -> None:
    from citewise.kb.text import split_sentences

    assert split_sentences("Variants exist (see Kamphuis et al. 2020 for details). E.g. Lucene is one. "
                           "Dr. Smith agrees, i.e. Lucene. It ends. A: No. The form controls.") == [
        "Variants exist (see Kamphuis et al. 2020 for details).", "E.g. Lucene is one.",
        "Dr. Smith agrees, i.e. Lucene.", "It ends.", "A: No.", "The form controls."]


def test_a_clock_time_ends_a_sentence_only_when_no_time_zone_or_days_follow() -> None:
    from citewise.kb.text import split_sentences

    assert split_sentences("Lines are open 8 a.m. to 8 p.m. Central time, Monday through Saturday. We close "
                           "at 6 p.m. Call again tomorrow. Open until 5 p.m. ET. Closed Sundays.") == [
        "Lines are open 8 a.m. to 8 p.m. Central time, Monday through Saturday.", "We close at 6 p.m.",
        "Call again tomorrow.", "Open until 5 p.m. ET.", "Closed Sundays."]
    # a capitalised word after the time starts a sentence unless it is a time zone or a run of days (review)
    assert split_sentences("We close at 5 p.m. Sunday hours are shorter. It closes at 6 p.m. Pacific customers "
                           "call earlier. Open until 5 p.m. CET. Call again.") == [
        "We close at 5 p.m.", "Sunday hours are shorter.", "It closes at 6 p.m.", "Pacific customers call earlier.",
        "Open until 5 p.m. CET.", "Call again."]


def test_a_long_example_is_quoted_by_the_stanza_that_answers() -> None:
    """The default line length is one stanza of a long example configuration: quoting the whole
    example is too long, so the answer quotes the lead-in and that stanza, marking what is left out."""
    from citewise.engine.extractive import ExtractiveGenerator
    from citewise.engine.generate import AnswerRequest
    from citewise.engine.records import ContextChunk

    filler = "\n\n".join(f'# Option group {i}\noption-{i} = "value {i}"\nflag-{i} = true' for i in range(14))
    text = ("If left unspecified, the default configuration is equivalent to:\n\n```toml\n"
            f"{filler}\n\n# Same as Black.\nline-length = 88\nindent-width = 4\n\n{filler}\n```")
    chunks = [ContextChunk("C1", "tool#0", "tool", "Tool", "content", "medium", text),
              ContextChunk("C2", "tool#1", "tool", "Tool", "content", "medium", "Tool also runs in editors.")]
    draft = ExtractiveGenerator().generate(AnswerRequest("What line length does Tool use if I don't configure one?",
                                                         "", chunks, "tool", {}))
    first = draft.sections[0].answer_components[0]
    assert first.startswith("If left unspecified, the default configuration is equivalent to:\n```\n…\n"
                            "# Same as Black.\nline-length = 88\nindent-width = 4\n…\n```")
    assert "option-13" not in first  # the stanza, not the whole example
    # the verifier checks the quote against its stanza, not the whole example (where another stanza's
    # "must" would read as a changed obligation)
    from citewise.engine.entailment import entails
    from citewise.engine.verify import strip_citations

    strict = text.replace("indent-width = 4", "indent-width = 4\n\n# Windows only: line-length must not be set.\nx = 1")
    assert entails(strip_citations(first), [strict], ["Tool"]).ok


def test_a_code_block_longer_than_a_chunk_is_cut_between_stanzas_and_stays_code() -> None:
    from citewise.kb.chunker import _fit
    from citewise.kb.tokens import count_tokens

    stanzas = (f'# group {i}\noption-{i} = "value {i}"\nflag-{i} = true' for i in range(60))
    code = "```toml\n" + "\n\n".join(stanzas) + "\n```"
    pieces = _fit(code, 200)
    assert len(pieces) > 1 and all(p.startswith("```toml\n") and p.endswith("\n```") for p in pieces)
    assert all(count_tokens(p) <= 200 for p in pieces)
    assert "\n\n".join(p[len("```toml\n"):-len("\n```")] for p in pieces) == code[len("```toml\n"):-len("\n```")]
    # a stanza too long for a piece is cut between its lines, which stay single-spaced
    function = "```python\ndef f():\n" + "\n".join(f"    x{i} = {i} * {i}" for i in range(80)) + "\n```"
    cut = _fit(function, 120)
    assert len(cut) > 1 and all(count_tokens(p) <= 120 and "\n\n" not in p for p in cut)
    assert "\n".join(p[len("```python\n"):-len("\n```")] for p in cut) == function[len("```python\n"):-len("\n```")]


def test_rest_titles_underlined_with_any_punctuation_become_headings() -> None:
    from citewise.evals.docs_kb import rst_headings

    assert rst_headings("Deprecated is Easy to Use\n" + "`" * 25 + "\n\nText") == "## Deprecated is Easy to Use\n\nText"
    assert rst_headings("Intro\n=====\n\nText") == "# Intro\n\nText"


def test_rest_literal_blocks_become_code_fences() -> None:
    from citewise.evals.docs_kb import rst_literal_blocks

    text = ("Install it::\n\n   pip install thing\n\nThen run\n\n.. code:: python\n\n   import thing\n   thing.go()\n\n"
            "Plain text::\n\nnot indented, so not a literal block.")
    assert rst_literal_blocks(text) == (
        "Install it:\n\n```\npip install thing\n```\n\n\nThen run\n\n\n```python\nimport thing\nthing.go()\n```\n\n\n"
        "Plain text::\n\nnot indented, so not a literal block.")
