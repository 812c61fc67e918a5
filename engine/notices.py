"""Notices in force: a memo or bulletin that changes a rule from a date that has come.

Teams write a memo before they revise the article ("From 1 June 2026, name changes close 14 days before
gates open instead of 7 days ... until then, this memo takes precedence"). Where such a notice says as
much of what is asked as the article does, the article's figure is the old one: the notice answers.
A notice whose date has not come yet changes nothing today, and a document that only carries a date
("Date: 12 May 2026") or only describes ("the fee is $15") announces no change.
"""

from __future__ import annotations

import re
from datetime import date

from ..kb.fields import validate_value

_MONTHS = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
           r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
# a date with its year, as notices write it: "1 June 2026", "June 1, 2026", "1st of June 2026", "2026-06-01"
_DATE = (rf"\d{{1,2}}(?:st|nd|rd|th)?(?:\s+of)?\s+{_MONTHS},?\s+\d{{4}}|"
         rf"{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|\d{{4}}-\d{{2}}-\d{{2}}")
# where the change takes effect: "From 1 June 2026, ...", "effective 1 April 2026", "as of July 1, 2026"
_TAKES_EFFECT = re.compile(rf"\b(?:from|as of|as from|effective(?: from| on)?|starting(?: on| from)?|beginning(?: on)?|"
                           rf"with effect from|on or after|on and after)\s+(?:the\s+)?(?P<date>{_DATE})", re.IGNORECASE)
# a sentence that says a figure or a rule changed: "rises from £12 to £15", "instead of 7 days" (not "instead of
# the early termination fee": one thing in place of another, no change), "will no longer accept"
_CHANGED = (r"\b(?:rises?|rose|increases?|increased|goes up|went up|drops?|dropped|falls?|fell|decreases?|decreased|"
            r"(?:is|are) (?:reduced|extended|shortened)|changes?|changed|moves?|moved)\s+from\b[^.;\n]{1,60}?\bto\b|"
            r"\binstead of\s+(?:the\s+)?(?:[$£€¥₹]\s?)?\d|\bno longer\b")
# a document that announces a change: such a sentence, or "this memo takes precedence", "replaces last year's"
_ANNOUNCES = re.compile(_CHANGED + r"|\breplaces?\b|\btakes? precedence\b", re.IGNORECASE)
_CHANGED_HERE = re.compile(_CHANGED, re.IGNORECASE)


def in_force_since(text: str, today: date) -> date | None:
    """The latest date on or before `today` from which the text says a rule changes; None when it says no
    change, or only one yet to come."""
    if not _ANNOUNCES.search(text):
        return None
    dates = [d for m in _TAKES_EFFECT.finditer(text) if (d := written_date(m["date"])) is not None and d <= today]
    return max(dates, default=None)


def states_change(sentence: str, today: date) -> bool:
    """Whether a sentence of a notice in force states the change itself: it takes effect from a date that has
    come ("From 1 June 2026, name changes close 14 days before"), or says what changed ("the fee rises from £12
    to £15")."""
    dates = [written_date(m["date"]) for m in _TAKES_EFFECT.finditer(sentence)]
    if dates:
        return all(d is not None and d <= today for d in dates)
    return bool(_CHANGED_HERE.search(sentence))


def written_date(text: str) -> date | None:
    """A date as written ("1st of June 2026", "Sept. 3, 2026"), or None."""
    ok, value, _ = validate_value("date", re.sub(r"\s+of\s+", " ", text))
    return date.fromisoformat(value) if ok else None
