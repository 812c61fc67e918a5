from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from citewise.cli import main

ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "citewise.cli", *args], capture_output=True, text=True, env=ENV,
                          timeout=300)


def test_ask_json_end_to_end_in_a_real_process(kb_home: Path) -> None:
    proc = cli("ask", "How do I roll over my 401(k)?", "--json", "--home", str(kb_home))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["citations"] and out["metadata"]["context_tokens"] <= out["metadata"]["context_budget"]


def test_a_question_given_as_a_dash_is_read_from_standard_input(kb_home: Path) -> None:
    """A long or multi-line question (an e-mail pasted into a file) cannot go through a shell argument
    intact: `citewise ask - < question.txt` reads it."""
    question = "Hi team,\n\nHow do I roll over my 401(k)?\n\nThanks,\nSam\n"
    proc = subprocess.run([sys.executable, "-m", "citewise.cli", "ask", "-", "--json", "--home", str(kb_home)],
                          input=question, capture_output=True, text=True, env=ENV, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["citations"]
    empty = subprocess.run([sys.executable, "-m", "citewise.cli", "ask", "-", "--home", str(kb_home)],
                           input="", capture_output=True, text=True, env=ENV, timeout=300)
    assert empty.returncode == 2 and "3-1000 characters" in empty.stderr and "Traceback" not in empty.stderr
    # --interactive asks at a terminal; a piped question leaves it none (the review: it printed "Paused", exit 0)
    piped = subprocess.run([sys.executable, "-m", "citewise.cli", "ask", "-", "--interactive", "--home", str(kb_home)],
                           input=question, capture_output=True, text=True, env=ENV, timeout=300)
    assert piped.returncode == 2 and "terminal" in piped.stderr and "Traceback" not in piped.stderr


def test_the_command_exits_fast_but_keeps_its_output_log_row_and_exit_code(kb_home: Path, tmp_path: Path) -> None:
    """`citewise` skips the interpreter's teardown (cli.run): what a normal exit guarantees must hold anyway."""
    import sqlite3

    from tests.paths import copy_home

    home = copy_home(kb_home, tmp_path / "home")
    proc = cli("ask", "How do I roll over my 401(k)?", "--json", "--home", str(home))
    assert proc.returncode == 0, proc.stderr
    query_id = json.loads(proc.stdout)["metadata"]["query_id"]  # the whole JSON reached the pipe
    with sqlite3.connect(home / "citewise.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM query_log WHERE id=?", (query_id,)).fetchone()[0] == 1
    assert cli("--help").returncode == 0 and "ingest" in cli("--help").stdout
    bad = cli("frobnicate")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
    assert cli("ask", "hi", "--home", str(home)).returncode == 2


HEAVY = ("torch", "transformers", "sentence_transformers", "bm25s", "scipy", "sklearn", "faiss", "langchain_openai",
         "openai", "pypdf", "docx", "pptx", "openpyxl")


def test_a_cold_ask_imports_nothing_it_does_not_need(kb_home: Path) -> None:
    """What a one-shot `citewise ask` imports is most of its cost (BENCHMARKS.md, cold start): building
    indexes, chat models, office converters and the torch backend are not on its path."""
    code = ("import contextlib, io, json, sys\nfrom citewise.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    code = main(['ask', 'How do I roll over my 401(k)?', '--home', {str(kb_home)!r}])\n"
            f"print(json.dumps([code, sorted(m for m in {HEAVY!r} if m in sys.modules)]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [0, []]


@pytest.mark.parametrize("args,message", [
    (["ask", "hi"], "3-1000 characters"),
    (["ask", "valid question", "--max-tokens", "5"], "max_tokens"),
    (["ask", "valid question", "--filter", "novalue"], "key=value"),
    (["ask", "valid question", "--filter-json", "{bad"], "not valid JSON"),
    (["ask", "valid question", "--max-tokens", "many"], "invalid int value"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_is_one_line_and_exit_2(kb_home: Path, capsys: pytest.CaptureFixture, args: list[str],
                                          message: str) -> None:
    with pytest.raises(SystemExit) as exc:  # argparse errors exit directly
        code = main([*args, "--home", str(kb_home)] if args[0] == "ask" else args)
        raise SystemExit(code)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_missing_home_is_a_clear_error_in_a_real_process(tmp_path: Path) -> None:
    proc = cli("ask", "How do I roll over?", "--home", str(tmp_path / "nothing"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "citewise ingest" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_required_data_json_shape(kb_home: Path, capsys: pytest.CaptureFixture) -> None:
    code = main(["required-data", "What information do we need for an Acme 401(k) rollover?", "--json",
                 "--home", str(kb_home), "--data", "date_of_birth=1960-01-02"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"decision", "article_reference", "required_fields", "missing_fields"}
    assert out["article_reference"]["article_id"] == "acme-401k-rollover" and out["decision"] == "needs_data"
    assert "date_of_birth" not in out["missing_fields"] and "separation_date" in out["missing_fields"]


def test_ingest_json_summary_and_filters(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from tests.paths import SAMPLE_KB

    assert main(["ingest", str(SAMPLE_KB / "summit"), "--home", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["documents_total"] == 9 and summary["errors"] == []
    assert main(["ask", "What are the loan fees?", "--home", str(tmp_path), "--json",
                 "--filter", "topic=loan", "--filter", "topic=rollover"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {c["metadata"]["topic"] for c in out["citations"]} <= {"loan", "rollover"}


def test_demo_answers_three_questions(capsys: pytest.CaptureFixture) -> None:
    assert main(["demo", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    assert [r["decision"] for r in results][2] == "out_of_scope"
    assert results[0]["citations"] and results[1]["required_fields"]["participant_data"]
