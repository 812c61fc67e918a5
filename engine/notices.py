"""Notices in force: a memo or bulletin that changes a rule from a date that has come.

Teams write a memo before they revise the article ("From 1 June 2026, name changes close 14 days before
gates open instead of 7 days ... until then, this memo takes precedence"). Where a sentence of such a
notice states the change, in force today, and says as much of what is asked as the article does, the
article's figure is the old one: the notice answers (engine/resolve.plain_document_answers).

A sentence is in force from its own takes-effect date ("From 1 June 2026, ..."), else from the last one
before it in the text ("... on the same date"), else from one in the document's title; not before that
date, nor after an end it gives ("from 1 June to 31 August 2026") or the document gives ("Normal fees
resume on 1 September 2026"). A document that only carries a date ("Date: 12 May 2026"), describes
("the fee is $15", "you can change from monthly to annual billing") or is a call transcript (one
customer's arrangement) announces no change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from ..kb.fields import validate_value
from ..kb.text import split_items

_MONTHS = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
           r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
# a date with its year, as notices write it: "1 June 2026", "June 1, 2026", "1st of June 2026", "2026-06-01"
_DATE = (rf"\d{{1,2}}(?:st|nd|rd|th)?(?:\s+of)?\s+{_MONTHS},?\s+\d{{4}}|"
         rf"{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|\d{{4}}-\d{{2}}-\d{{2}}")
# where a change takes effect: "From 1 June 2026, ...", "effective 1 April 2026", "as of July 1, 2026"
_TAKES_EFFECT = re.compile(r"\b(?:from|effective(?: from| on)?|as of|as from|starting(?: on| from)?|beginning(?: on)?|"
                           rf"with effect from|on or after|on and after)\s+(?:the\s+)?(?P<date>{_DATE})", re.IGNORECASE)
# where it ends: "to 31 August 2026", "until 30 June 2026", "through ...", "ends on ...", "expires on ..."
_ENDS = re.compile(rf"\b(?:to|until|till|through|ends?(?: on)?|expires?(?: on)?|and)\s+(?P<date>{_DATE})",
                   re.IGNORECASE)
# the old rule back: "Normal fees resume on 1 September 2026"
_RESUMES = re.compile(rf"\b(?:resumes?|returns?|reverts?|goes back|go back)\b[^.;]{{0,40}}?\b(?P<date>{_DATE})",
                      re.IGNORECASE)
# a sentence that says a figure or a rule changed: "rises from £12 to £15", "instead of 7 days" (not "instead
# of the early termination fee": one thing in place of another; not "moves from the main desk to Gate B"),
# "will no longer accept"
_CHANGED = re.compile(r"\b(?:rises?|rose|increases?|increased|goes up|went up|drops?|dropped|falls?|fell|"
                      r"decreases?|decreased|(?:is|are|will be) (?:reduced|extended|shortened|cut)|changes?|changed)"
                      r"\s+from\s+(?:[$£€¥₹]\s?)?\d[^.;\n]{0,40}?\bto\b|"
                      r"\binstead of\s+(?:the\s+)?(?:[$£€¥₹]\s?)?\d|\bno longer\b", re.IGNORECASE)
# a document that announces a change: such a sentence, or "this memo takes precedence", "replaces last year's"
_ANNOUNCES = re.compile(_CHANGED.pattern + r"|\breplaces?\b|\btakes? precedence\b", re.IGNORECASE)


@dataclass(frozen=True)
class Change:
    """A sentence of a notice that states a change, and the date it is in force from."""

    text: str
    since: date


def changes_in_force(text: str, title: str, source_type: str, today: date) -> tuple[Change, ...]:
    """The sentences of a document that state a change in force on `today` (see the module docstring)."""
    if source_type == "transcript":
        return ()
    return _changes(text, title, today)


@lru_cache(maxsize=512)  # (per document text: a question reads the same few notices again)
def _changes(text: str, title: str, today: date) -> tuple[Change, ...]:
    if not _ANNOUNCES.search(text):
        return ()
    if any((d := written_date(m["date"])) is not None and d <= today for m in _RESUMES.finditer(text)):
        return ()  # the old rule is back
    heading = [d for m in _TAKES_EFFECT.finditer(title) if (d := written_date(m["date"]))]
    since = heading[-1] if heading else None
    out = []
    for sentence in split_items(text):
        own = [d for m in _TAKES_EFFECT.finditer(sentence) if (d := written_date(m["date"]))]
        since = own[-1] if own else since
        if since is None or since > today or not (own or _CHANGED.search(sentence)):
            continue
        if any((end := written_date(m["date"])) is not None and since < end < today for m in _ENDS.finditer(sentence)):
            continue  # its window has closed
        out.append(Change(sentence, since))
    return tuple(out)


def without_dates(sentence: str) -> str:
    """The sentence without its takes-effect and end dates: "From 1 June 2026, name changes close 14 days
    before" states a duration, not the date a question about some other date asks for."""
    return _ENDS.sub(" ", _TAKES_EFFECT.sub(" ", sentence))


def written_date(text: str) -> date | None:
    """A date as written ("1st of June 2026", "Sept. 3, 2026"), or None."""
    ok, value, _ = validate_value("date", re.sub(r"\s+of\s+", " ", text))
    return date.fromisoformat(value) if ok else None
