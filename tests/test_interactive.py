"""`citewise ask --interactive` and `citewise resume` at a real terminal (pexpect): numbered choices,
case- and prefix-insensitive matching, ambiguity asked again, Enter skips once, Ctrl-D pauses and keeps
what was typed, and the resume hint that continues the same thread in another process."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect

from citewise import api
from citewise.kb.fields import choice_matches
from tests.paths import ROOT

ROLLOVER = "How do I roll over my 401(k)?"


def spawn(*args: str, home: Path) -> pexpect.spawn:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    return pexpect.spawn(sys.executable, ["-m", "citewise.cli", *args, "--home", str(home)], cwd=str(ROOT), env=env,
                         encoding="utf-8", timeout=120)


def answer(child: pexpect.spawn, value: str) -> None:
    child.expect(r"\n> ")
    child.sendline(value)


def finish(child: pexpect.spawn) -> None:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_choices_match_by_beginning_case_and_punctuation_insensitively() -> None:
    keepers = ["Acme Retirement", "Harborview Recordkeeping", "Summit Plan Services"]
    assert choice_matches("acme", keepers) == ["Acme Retirement"]
    assert choice_matches("SUMMIT plan", keepers) == ["Summit Plan Services"]
    assert choice_matches("acme-retirement", keepers) == ["Acme Retirement"]
    assert choice_matches("4", ["401(k)", "457(b)"]) == ["401(k)", "457(b)"]  # ambiguous: asked again
    assert choice_matches("457", ["401(k)", "457(b)"]) == ["457(b)"]
    assert choice_matches("vanguard", keepers) == [] and choice_matches("  ", keepers) == []


def test_a_prefix_picks_a_choice_enter_skips_once_then_pauses_and_resume_finishes(kb_home: Path) -> None:
    child = spawn("ask", ROLLOVER, "--interactive", home=kb_home)
    child.expect(r"Ctrl-D to pause and resume later")
    child.expect(r"1\) Acme Retirement\s+2\) Harborview Recordkeeping")
    answer(child, "vanguard")
    child.expect(r"'vanguard' is not one of the choices: type its number \(1-2\) or name")
    answer(child, "acme")  # lower case, first word only
    child.expect(r"Separation date \(date\)")
    answer(child, "")  # skipped once
    for value in ("Example Bank", "Traditional IRA", "1960-05-01", "$40,000"):
        answer(child, value)
    child.expect(r"Please provide: Separation date\.")  # the round went through; only the skipped field is left
    child.expect(r"Ctrl-D to pause and resume later")
    answer(child, "")  # Enter again on the same field: pause, not an endless loop
    child.expect(r"Paused\. Continue later with: citewise resume ([0-9a-f]+) --home ")
    thread_id = child.match.group(1)
    finish(child)
    assert [f["key"] for f in api.pending(thread_id, home=kb_home)["fields"]] == ["separation_date"]

    later = spawn("resume", thread_id, home=kb_home)
    later.expect(r"Separation date \(date\)")
    answer(later, "2026-03-31")
    later.expect("Decision: can_proceed")
    later.expect("Article: acme-401k-rollover")
    finish(later)


def test_a_number_picks_a_choice_and_ctrl_d_keeps_what_was_typed(kb_home: Path) -> None:
    child = spawn("ask", "How do I roll over my Harborview plan?", "--interactive", home=kb_home)
    child.expect(r"Plan type \(type its number or name\)")
    child.expect(r"1\) 401\(k\)\s+2\) 457\(b\)")
    answer(child, "4")
    child.expect(r"'4' matches 401\(k\), 457\(b\): type more of the name, or its number")
    answer(child, "2")
    child.expect(r"\(date\)")
    child.sendeof()  # Ctrl-D mid-round
    child.expect(r"Paused\. Continue later with: citewise resume ([0-9a-f]+)")
    thread_id = child.match.group(1)
    finish(child)
    request = api.pending(thread_id, home=kb_home)
    assert request["article_id"] == "harborview-457b-rollover"  # the choice typed before Ctrl-D was kept
    assert "plan_type" not in [f["key"] for f in request["fields"]]


def test_enter_on_every_field_pauses_at_once(kb_home: Path) -> None:
    child = spawn("ask", ROLLOVER, "--interactive", home=kb_home)
    child.expect(r"Please provide: Record keeper")
    for _ in range(6):
        answer(child, "")
    child.expect(r"Paused\. Continue later with: citewise resume [0-9a-f]+")
    assert "Please provide" not in child.before  # not asked the same round again
    finish(child)
