"""Required-data fields: parsing the `Required data` section and validating collected values.

Format (one field per list item):
    - NAME (TYPE, required|optional, participant|plan[, sensitive]): DESCRIPTION Why: WHY_NEEDED
`sensitive` marks data (an account number, a date of birth) whose collected value is validated but
never echoed back or stored in thread state.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from datetime import date, datetime
from typing import Any

from .text import CURRENCY_SYMBOLS, slug
from .units import currencies, without_unit

DATA_TYPES = ("text", "currency", "date", "boolean", "number")
TYPE_ALIASES = {"string": "text", "str": "text", "amount": "currency", "money": "currency", "dollars": "currency",
                "usd": "currency", "datetime": "date", "bool": "boolean", "yes/no": "boolean", "yesno": "boolean",
                "int": "number", "integer": "number", "float": "number", "decimal": "number", "percent": "number",
                "percentage": "number"}
_FIELD = re.compile(
    r"^\s*(?:[-*+•]|\d+[.)])\s+(?:\*\*)?(?P<name>[^()*\n]+?)(?:\*\*)?\s*"
    r"\((?P<attrs>[^)]*)\)\s*(?:\*\*)?\s*:?\s*(?P<rest>.*)$"
)
_WHY = re.compile(r"\bwhy\s*:\s*", re.IGNORECASE)


@dataclass(frozen=True)
class RequiredField:
    key: str
    name: str
    data_type: str
    required: bool
    group: str  # "participant" | "plan"
    description: str
    why_needed: str
    sensitive: bool = False  # `(text, required, participant, sensitive)`: collected values are never echoed

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("group")
        return out


def parse_required_data(text: str) -> tuple[list[RequiredField], list[str]]:
    """Parse fields, returning (fields, warnings). A line that is not a field is a warning, not a crash."""
    found: list[RequiredField] = []
    warnings: list[str] = []
    for line in text.splitlines():
        if not re.match(r"^\s*(?:[-*+•]|\d+[.)])\s+", line):
            continue
        m = _FIELD.match(line)
        if not m:
            warnings.append(f"not a required-data field: {line.strip()[:80]!r}")
            continue
        attrs = [TYPE_ALIASES.get(a.strip().lower(), a.strip().lower()) for a in m.group("attrs").split(",")
                 if a.strip()]
        data_type = next((a for a in attrs if a in DATA_TYPES), None)
        if data_type is None:
            data_type = "text"
            warnings.append(f"field {m.group('name').strip()!r}: no type among {DATA_TYPES}, using text")
        required = "optional" not in attrs
        group = "plan" if "plan" in attrs else "participant"
        rest = m.group("rest").strip().lstrip(":—–- ").strip()
        parts = _WHY.split(rest, maxsplit=1)
        description = parts[0].strip()
        why = parts[1].strip() if len(parts) > 1 else ""
        name = m.group("name").strip().strip("*").strip()
        found.append(RequiredField(key=slug(name), name=name, data_type=data_type, required=required,
                                   group=group, description=description, why_needed=why,
                                   sensitive="sensitive" in attrs))
    return found, warnings


def normalize_key(key: str) -> str:
    """Collected data is matched case- and punctuation-insensitively: 'Vested Balance' == 'vested-balance'."""
    return re.sub(r"[^a-z0-9]", "", str(key).lower())


def choice_matches(value: str, choices: list[str]) -> list[str]:
    """The choices `value` names: those equal to it, else those it begins, compared case- and
    punctuation-insensitively ('acme' -> ['Acme Retirement']; 'Acme-Retirement' -> the same). One
    match is a choice; several are ambiguous (a person is asked again, shown them); none is invalid."""
    wanted = normalize_key(value)
    if not wanted:
        return []
    exact = [c for c in choices if normalize_key(c) == wanted]
    return exact or [c for c in choices if normalize_key(c).startswith(wanted)]


_TRUE = {"true", "yes", "y", "1", "on", "yeah", "yep", "yup"}
_FALSE = {"false", "no", "n", "0", "off", "nope", "nah"}
# (US month-first before day-first: "03/04/2024" is March 4; "15/03/2024" can only be 15 March)
_DATE_FORMATS = ("%Y-%m-%d", "%m/%d/%Y", "%m/%d/%y", "%d/%m/%Y", "%d.%m.%Y", "%Y/%m/%d", "%Y.%m.%d", "%m-%d-%Y",
                 "%d-%m-%Y", "%d %B %Y", "%d %b %Y", "%B %d %Y", "%b %d %Y")
def date_text(text: str) -> str:
    """A written date in the forms strptime reads: "March 3rd, 2026" -> "March 3 2026", "Sept. 3" -> "Sep 3",
    "3-Mar-2026" -> "3 Mar 2026"."""
    text = re.sub(r"(?<=\d)(?:st|nd|rd|th)\b", "", text, flags=re.IGNORECASE)
    text = re.sub(r"\bsept\b", "Sep", re.sub(r"(?<=[a-z])\.", "", text, flags=re.IGNORECASE), flags=re.IGNORECASE)
    if re.search(r"[a-z]", text, re.IGNORECASE):
        text = text.replace("-", " ")
    return re.sub(r"\s+", " ", text.replace(",", " ")).strip()


# An amount as people write it in any currency: "$1,500", "€14,300", "£150", "AUD 40", "40 EUR", "US$ 12"


def without_currency(text: str) -> str:
    """The figure without a currency code or symbol before or after it. Plain string steps, no regular
    expression: a pattern anchored at the end backtracked over a run of spaces (8 s for 1,000 characters)."""
    text = text.strip()
    head = text[:3]
    for size in (3, 2):  # "AUD 40", "US$ 12"
        if head[:size].isalpha() and head[:size].isupper() and len(text) > size:
            text = text[size:].lstrip()
            break
    if len(text) > 2 and text[0].isalpha() and text[1] in CURRENCY_SYMBOLS:
        text = text[1:]  # "A$500", "C$40"
    if text[:1] in CURRENCY_SYMBOLS:
        text = text[1:].lstrip()
    if len(text) > 3 and text[-3:].isalpha() and text[-3:].isupper():
        text = text[:-3].rstrip()  # "40 EUR"
    if text[-1:] and text[-1] in CURRENCY_SYMBOLS:
        text = text[:-1].rstrip()  # "14,30 €"
    return text


# Digits grouped by thousands (or, as in India, by lakhs and crores: "1,00,000")
_GROUPED = r"(\d{1,3}(T\d{3})*|\d{1,2}(T\d{2})*T\d{3})"


def decimal_point(text: str, data_type: str = "currency") -> str | None:
    """The figure with "." as its only separator, read as people write it: "1,234.56" and "1.234,56" (the last
    mark is the decimal one), "14,300" and "1,00,000" (grouped digits), "14,30" (decimals). None when it
    cannot be told or is malformed: a single group of three after a point in an amount ("€14.300" is 14300
    to some, 14.3 to others), "1.2,5". Text with neither mark is returned as it is."""
    if "," in text and "." in text:
        decimal = "," if text.rfind(",") > text.rfind(".") else "."
        thousands = "." if decimal == "," else ","
        whole, _, fraction = text.rpartition(decimal)
        if not fraction.isdigit() or not re.fullmatch(_GROUPED.replace("T", re.escape(thousands)), whole):
            return None
        return f"{whole.replace(thousands, '')}.{fraction}"
    if "," in text:
        if re.fullmatch(_GROUPED.replace("T", ","), text):
            return text.replace(",", "")
        return text.replace(",", ".") if re.fullmatch(r"\d+,\d{1,2}", text) else None
    if re.fullmatch(r"\d{1,3}(\.\d{3}){2,}", text):
        return text.replace(".", "")  # "1.234.567"
    if data_type == "currency" and re.fullmatch(r"[1-9]\d{0,2}\.\d{3}", text):
        return None
    return text


def validate_value(data_type: str, value: Any, unit: str = "") -> tuple[bool, Any, str]:
    """Parse a collected value by its declared type: (ok, normalized value, reason if not ok). `unit` is the
    field's own words (name and description): a figure given with a unit ("3 years") counts when the field
    counts in it."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return False, None, "no value given"
    if data_type in ("currency", "number"):
        if isinstance(value, bool):
            return False, None, f"expected a {data_type}, got a boolean"
        if isinstance(value, int | float):
            number = float(value)
        else:
            text = str(value).strip().replace("\u00a0", " ").replace("\u202f", " ")
            if data_type == "currency" and (named := currencies(unit, negatable=True)) and \
                    (given := currencies(text)) and not given & named:
                return False, None, f"{value!r} is in another currency than this field's: give the figure alone"
            if (bare := without_unit(text, unit, data_type)) is None:
                return False, None, f"{value!r} is not in this field's unit: give the figure alone"
            text = bare
            sign, text = ("-", text[1:].strip()) if text.startswith("-") else ("", text)  # "-$5": a negative sum
            text = re.sub(r"(?<=\d) (?=\d{3}\b)", "", without_currency(text))  # "14 300"
            multiplier = 1.0
            if text[-1:].lower() == "k" and data_type == "currency":
                text, multiplier = text[:-1].rstrip(), 1000.0
            elif text.endswith("%") and data_type == "number":  # "50%": a percentage field given with its sign
                text = text[:-1].strip()
            if (plain := decimal_point(text, data_type)) is None:
                return False, None, (f"{value!r} is ambiguous or malformed: write the figure without thousands "
                                     f"separators (14300, or 14.30)")
            text = sign + plain
            try:
                number = float(text) * multiplier
            except ValueError:
                return False, None, f"{value!r} is not {'an amount' if data_type == 'currency' else 'a number'}"
        if not math.isfinite(number):
            return False, None, f"{value!r} is not a finite {'amount' if data_type == 'currency' else 'number'}"
        if data_type == "currency" and number < 0:
            return False, None, f"{value!r} is a negative amount"
        return True, round(number, 2) if data_type == "currency" else number, ""
    if data_type == "boolean":
        if isinstance(value, bool):
            return True, value, ""
        text = str(value).strip().lower().rstrip(".! ")
        if text in _TRUE:
            return True, True, ""
        if text in _FALSE:
            return True, False, ""
        return False, None, f"{value!r} is not yes/no"
    if data_type == "date":
        if isinstance(value, datetime):
            return True, value.date().isoformat(), ""
        if isinstance(value, date):
            return True, value.isoformat(), ""
        text = str(value).strip()
        try:  # a timestamp in ISO form ("2024-03-15T09:30:00"): its date
            return True, datetime.fromisoformat(text).date().isoformat(), ""
        except ValueError:
            pass
        text = date_text(text)
        for fmt in _DATE_FORMATS:
            try:
                return True, datetime.strptime(text, fmt).date().isoformat(), ""
            except ValueError:
                continue
        return False, None, f"{value!r} is not a date (use YYYY-MM-DD)"
    return True, str(value).strip(), ""
