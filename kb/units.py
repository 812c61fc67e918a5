"""Figures with units in collected data: "16 years", "$1,400 per month", "40 hours per week", "500 USD".

A field says in its own words ("Name: description") what it counts and per what: "Years of service: full
years" counts years, "Hours per week: hours worked" counts hours per week, "Monthly rent" is per month, and a
currency it names ("in euros") is the only one its figures may be in. A figure in the field's unit is read as
the figure; one in another unit or currency is refused with the reason (18 months are not 18 years), never
misread.
"""

from __future__ import annotations

import re

from .text import CURRENCY_CODES, CURRENCY_SYMBOLS

# A unit after a number ("3 years", "$500 per month", "40 hours per week") and the words it is written in
_RATE = r"(?:(?:per|a|an|each|every)\b|/)"
_UNIT = re.compile(r"^(?P<figure>.*?\d(?:[kK](?![a-zA-Z]))?)\s*(?:(?P<rate>" + _RATE + r")\s*)?(?P<unit>[a-z]+)\.?"
                   r"(?:\s*" + _RATE + r"\s*(?P<per>[a-z]+)\.?)?$", re.IGNORECASE)
# a unit as written -> the word a field's text would use for it
_UNIT_WORDS = {"yr": "year", "yrs": "year", "mo": "month", "mos": "month", "mth": "month", "mths": "month",
               "hr": "hour", "hrs": "hour", "h": "hour", "wk": "week", "wks": "week", "min": "minute",
               "mins": "minute", "annual": "year", "annually": "year", "annum": "year", "yearly": "year",
               "monthly": "month", "weekly": "week", "daily": "day", "hourly": "hour", "quarterly": "quarter",
               "pct": "percent", "percentage": "percent", "lb": "pound", "lbs": "pound", "kgs": "kg",
               "kilo": "kg", "kilos": "kg", "kilogram": "kg", "kilometre": "km", "kilometer": "km"}
_RATE_WORDS = {"annual", "annually", "yearly", "monthly", "weekly", "daily", "hourly", "quarterly"}
_TIME_UNITS = {"second", "minute", "hour", "day", "week", "month", "quarter", "year"}
# The currency a figure or a field names, as ISO codes: a symbol or a word can stand for several ("$": any
# dollar). A figure in a currency the field does not name is not the field's (a euro field's "$500").
_DOLLARS = frozenset({"usd", "aud", "cad", "nzd", "sgd", "hkd"})
_MONEY: dict[str, frozenset[str]] = {
    **{code: frozenset({code}) for code in CURRENCY_CODES},
    "$": _DOLLARS, "dollar": _DOLLARS, "buck": _DOLLARS, "us$": frozenset({"usd"}), "a$": frozenset({"aud"}),
    "c$": frozenset({"cad"}), "euro": frozenset({"eur"}), "\u20ac": frozenset({"eur"}), "\u00a3": frozenset({"gbp"}),
    "quid": frozenset({"gbp"}), "pound": frozenset({"gbp"}), "rupee": frozenset({"inr"}), "\u20b9": frozenset({"inr"}),
    "yen": frozenset({"jpy"}),
    "\u00a5": frozenset({"jpy"}), "franc": frozenset({"chf"}), "krona": frozenset({"sek"}),
    "krone": frozenset({"nok", "dkk"}), "rand": frozenset({"zar"}), "peso": frozenset({"mxn"})}
_MONEY_MARK = re.compile(r"[a-z]{1,2}\$|[" + re.escape(CURRENCY_SYMBOLS) + r"]|[a-z]+", re.IGNORECASE)


def currencies(text: str, negatable: bool = False) -> set[str]:
    """The currencies (ISO codes) a text names by symbol, code or word ("in euros" -> {"eur"}); with
    `negatable` (a field's own words), not those after "not"/"no" ("in euros, not dollars") or after "per"
    ("cost per pound")."""
    marks = [m.group().lower() for m in _MONEY_MARK.finditer(text)]
    out: set[str] = set()
    for i, mark in enumerate(marks):
        if negatable and any(b in ("not", "no", "never") for b in marks[max(0, i - 2):i]):
            continue
        if negatable and i and marks[i - 1] in ("per", "a", "each", "every"):
            continue  # "cost per pound": a weight
        out |= _MONEY.get(mark if mark in _MONEY else unit_word(mark), frozenset())
    return out


def unit_word(word: str) -> str:
    """"years", "yrs", "yearly", "annual" -> "year"; "kilograms" -> "kg"."""
    word = word.lower()
    if word not in _UNIT_WORDS and word.endswith("s") and len(word) > 3:
        word = word[:-1]
    return _UNIT_WORDS.get(word, word)


def field_units(words: str) -> tuple[set[str], set[str]]:
    """What a field counts and what it counts per, in its own words ("Name: description"): "Hours per week:
    Hours worked, not overtime." counts hours per week. A word of the description after "not"/"no"/"never"
    is ruled out (the name's words never are); a unit after a number ("in the last 12 months") or after
    "per"/"every"/"each" ("in each plan year") says over what, not in what."""
    name, _, description = words.partition(":")
    counted: set[str] = set()
    per: set[str] = set()
    for part, is_name in ((name, True), (description, False)):
        own = re.findall(r"[a-z]+|\d+", part.lower())
        for i, w in enumerate(own):
            before, unit = own[max(0, i - 2):i], unit_word(w)
            if w.isdigit() or (not is_name and any(b in ("not", "no", "never") for b in before)):
                continue
            if w in _RATE_WORDS or any(b in ("per", "every", "each") for b in before) or (
                    before[-1:] in (["a"], ["an"]) and unit in _TIME_UNITS):
                per.add(unit)
            elif before[-1:] and before[-1].isdigit() and unit in _TIME_UNITS:
                continue  # "the last 12 months": a period, not the unit ("up to 23 kg" is the unit)
            else:
                counted.add(unit)
    return counted, per


def without_unit(text: str, unit: str, data_type: str = "number") -> str | None:
    """The figure of "3 years" when the field's own words (`unit`: "Name: description") count in years, of
    "$1,400 per month" when it is a monthly figure, of "1200 dollars" when it is an amount (in the field's
    currency, when it names one); None when the unit is not the field's (18 "months" for a count of years
    is not 18, "3 weeks" no count of hours per week, "$5,000 per month" no salary "per year, not per
    month"). Words are compared whole ("day" is not in "daycare"). Text without a unit is returned as it is."""
    found = _UNIT.match(text.strip())
    if found is None or found.group("unit").lower() == "k":
        return text  # "12.5k": the figure's own suffix
    word = unit_word(found.group("unit"))
    money = data_type == "currency" and (found.group("unit").lower() in _MONEY or word in _MONEY)
    if data_type == "currency" and re.fullmatch(r"[A-Z]{3}", found.group("unit")):
        return text  # "40 EUR": a currency code (checked against the field's by validate_value)
    if money and not found.group("per"):
        return found.group("figure")
    counted, per = field_units(unit)
    if found.group("per"):  # "40 hours per week", "$1,400 per month"
        ok = (word in counted or money) and unit_word(found.group("per")) in per | counted
    elif found.group("rate") or found.group("unit").lower() in _RATE_WORDS:  # "$1,400 per month", "... monthly"
        ok = word in per or (word in counted and word in _TIME_UNITS)  # "... for calendar year 2026"
    else:  # "16 years"
        ok = len(word) >= 2 and word in counted
    return found.group("figure") if ok else None
