"""Data the question itself states: "my vested balance is $40,000" is shown beside `vested_balance`.

Why: agents paste the customer's message as it came, and a field list that asks for what the message
already says, without saying so, reads as not having listened. The value is shown for the agent to confirm
(and prefills the form an interrupted run asks to fill); it is never counted as collected: the decision
rests on the data the caller sends, and a value read out of free text can be the wrong one.

Only a value written right beside the field's own name is read ("vested balance is $40,000", "a vested
balance of $40,000", "5 years of service"), only for types whose values carry their own shape (an amount,
a number, a date: a text or yes/no field's value cannot be told from the words around it), and never for a
sensitive field. A comparison or a rule's figure is no value ("a balance under $2,000", "the minimum vested
balance $2,000"), nor is a negated one ("is not $40,000"). A field the question names with two values, a
figure beside two fields' names, or a message that corrects itself ("no wait", "actually") is left to ask.
"""

from __future__ import annotations

import re
from typing import Any

from ..kb.fields import normalize_key, validate_value
from ..kb.text import CURRENCY_SYMBOLS, STOPWORDS, stem
from .records import FieldSpec

STATED_TYPES = ("currency", "number", "date")

_NAME_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
# Between a field's name and its value: a verb of being, "of", a colon, a hedge ("about", "roughly")
_LINK = (r"(?:\s*(?:(?:is|was|are|were|'s|’s|of|at|currently|now|right now|just|only|about|around|roughly|"
         r"approximately|approx\.?|nearly|almost|totals?|totalling|totaling|comes? to|stands? at|equals?|shows?|"
         r"sitting at|on)\b|[:=]))+\s*"
         r"|\s*[:=]\s*")
_SYMBOL = "[" + re.escape(CURRENCY_SYMBOLS) + "]"
_FIGURE = r"\d+(?:[.,]\d+)*"
_AMOUNT = (rf"(?-i:[A-Z]{{1,2}})?{_SYMBOL}\s?{_FIGURE}(?:\s?[kK]\b)?|"
           rf"(?-i:[A-Z]{{3}})\s?{_FIGURE}|{_FIGURE}\s?(?:[kK]\b|{_SYMBOL}|(?-i:[A-Z]{{3}})\b)?")
# a count's unit goes with it, for validate_value to hold against the field's ("2 hours" is no flight distance)
_COUNT_UNIT = (r"(?:\s?(?:seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|months?|mos?|years?|yrs?|km|kms|"
               r"kilomet(?:re|er)s?|miles?|kg|kgs|kilos?|lbs?|percent)\b)?")
_NUMBER = rf"{_FIGURE}(?:%|{_COUNT_UNIT})"
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_DATE = (rf"\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}/\d{{1,2}}/\d{{2,4}}|\d{{1,2}}\.\d{{1,2}}\.\d{{4}}|"
         rf"{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+\d{{4}}")
_VALUE = {"currency": _AMOUNT, "number": _NUMBER, "date": _DATE}
# The value must end there: "$40,000" and not the "$40" of "$40.5m", nor "5" of "5-10"
_END = r"(?![\w.,/-]\d|[\w%$£€])"
_PER = r"(?:\s?(?:pcm|pm|pw|pa|p/m)\b|\s?/\s?[a-z]+\b)?"  # "£700pm", "$1,850/mo": the amount is said per period
_AFTER = {kind: re.compile(rf"(?:{_LINK})({pattern}){_PER}{_END}", re.IGNORECASE) for kind, pattern in _VALUE.items()}
# A date or an amount with its currency sign needs no link word: "separation date 2026-03-01", "balance $40k"
_BARE = {"date": re.compile(rf"\s+({_DATE}){_END}", re.IGNORECASE),
         "currency": re.compile(rf"\s+((?-i:[A-Z]{{1,2}})?{_SYMBOL}\s?{_FIGURE}(?:\s?[kK]\b)?){_PER}{_END}",
                                re.IGNORECASE)}
# "5 years of service", "a $40,000 vested balance": a figure right before the name (amounts and numbers)
_BEFORE = {kind: re.compile(rf"(?<![\w.,/-])({_VALUE[kind]})\s+$", re.IGNORECASE) for kind in ("currency", "number")}
_COUNTING = {"number", "count", "total", "no"}  # "Number of tenants" is said "3 tenants"
# Words of a name that say what kind of datum it is, not which: "rent" names "Monthly rent", "amount" names nothing
_GENERIC = {stem(w) for w in ("amount", "date", "balance", "number", "total", "value", "count", "type", "status",
                                "current", "sum", "figure", "level", "period", "cycle", "day", "week", "month",
                                "quarter", "year", "time", "last", "new", "old")}
# A message that corrects itself or doubts its own figures: nothing in it is read ("no wait, the statement
# shows 4", "the app says $34,500 though, no idea which is right")
_CORRECTION = re.compile(r"\b(no,? wait|wait,? no|sorry,? i mean|or was it|no idea which|not sure which|which is "
                         r"(right|correct))\b", re.IGNORECASE)
# A figure after these is a bound, not the case's value: "a fee after 14 days overdrawn", "over $2,000"
_BOUND = re.compile(r"\b(after|within|over|under|above|below|than|least|most|up to|beyond|exceeds?|exceeding|"
                    r"past|before|until|by|need|needs|needed|require|requires|required)\s+$", re.IGNORECASE)
# A sentence about someone else's case: "My brother left Acme with about $90k vested"
_SOMEONE_ELSE = re.compile(r"\b(my|our|a|his|her) (brother|sister|friend|co-?worker|colleague|neighbou?r|cousin|"
                           r"son|daughter|mum|mom|dad|father|mother|wife|husband|partner|boss)\b|\b(someone|"
                           r"somebody|anyone|everyone|people)\b|\bif (i'd|i had|i were|we'd|we had)\b", re.IGNORECASE)
# A rule's figure, not the case's: "the minimum vested balance $2,000", "a balance of $2,000 or more"
_RULE_BEFORE = re.compile(r"\b(minimum|maximum|min|max|required|least|most|limit|threshold|cap|average|typical|"
                          r"usual|standard|default)\W+(\w+\W+){0,2}$", re.IGNORECASE)
_RULE_AFTER = re.compile(r"\s*(or|and)\s+(more|less|over|under|above|below|higher|lower|up|fewer|greater)\b|"
                         r"\s*(minimum|maximum|min|max|limit|threshold|cap)\b|\s*\+", re.IGNORECASE)


def stated_data(question: str, fields: list[FieldSpec], collected: dict[str, Any]) -> dict[str, str]:
    """field key -> the value as the question writes it ("$40,000"; valid for the field's type) beside the
    field's name, for the fields the caller has not given."""
    if _CORRECTION.search(question):
        return {}
    given = {normalize_key(k) for k, v in collected.items() if v not in (None, "")}
    tokens = [(m.start(), m.end(), stem(m.group().lower().replace("’", "'").split("'")[0]))
              for m in _NAME_WORD.finditer(question)]
    found: dict[str, list[tuple[tuple[int, int], Any]]] = {}
    wanted = [f for f in fields if f.data_type in STATED_TYPES and not f.sensitive and not f.choices]
    for f in wanted:
        if normalize_key(f.key) in given:
            continue
        others = {w for g in wanted if g.key != f.key for w in _name_stems(g)}
        for start, end in _mentions(tokens, _name_stems(f), others):
            for span, raw in _values_beside(question, start, end, f.data_type):
                ok, value, _ = validate_value(f.data_type, raw, f.words)
                if ok:
                    found.setdefault(f.key, []).append((span, (value, raw)))
    spans: dict[tuple[int, int], set[str]] = {}
    for key, hits in found.items():
        for span, _ in hits:
            spans.setdefault(span, set()).add(key)
    out: dict[str, str] = {}
    for key, hits in found.items():
        if len({value for _, (value, _) in hits}) == 1 and all(len(spans[span]) == 1 for span, _ in hits):
            out[key] = hits[0][1][1]
    return out


def _name_stems(f: FieldSpec) -> list[str]:
    names = [w.lower() for w in _NAME_WORD.findall(f.name)]
    if f.data_type == "number" and len(names) > 2 and names[0] in _COUNTING and names[1] == "of":
        names = names[2:]
    return list(dict.fromkeys(stem(w) for w in names if w not in STOPWORDS))


def _mentions(tokens: list[tuple[int, int, str]], wanted: list[str], others: set[str]) -> list[tuple[int, int]]:
    """Character spans of runs of the question's words that hold every one of the name's words, with at
    most one other word among them ("vested account balance"); or of one word of the name that no other
    field's name has and that says which datum it is ("rent" for "Monthly rent", "vested" for "Vested
    balance"; not "balance")."""
    if not wanted:
        return []
    need, out = set(wanted), []
    telling = need - others - _GENERIC
    out.extend((start, end) for start, end, word in tokens if word in telling and len(need) > 1)
    for i, (start, _, first) in enumerate(tokens):
        if first not in need:
            continue
        seen, extra = set(), 0
        for _, end, word in tokens[i:i + len(wanted) + 1]:
            if word in need:
                seen.add(word)
            else:
                extra += 1
                if extra > 1:
                    break
            if seen == need:
                out.append((start, end))
                break
    return out


def _values_beside(question: str, start: int, end: int, kind: str) -> list[tuple[tuple[int, int], str]]:
    if _RULE_BEFORE.search(question[:start]):
        return []
    out: list[tuple[tuple[int, int], str]] = []
    if (after := _AFTER[kind].match(question, end) or (kind in _BARE and _BARE[kind].match(question, end))):
        out.append((after.span(1), after.group(1)))
    if kind in _BEFORE and (before := _BEFORE[kind].search(question[:start])) is not None:
        out.append((before.span(1), before.group(1)))
    return [(span, raw) for span, raw in out
            if not _RULE_AFTER.match(question, span[1]) and not _BOUND.search(question[:span[0]])
            and not _SOMEONE_ELSE.search(_sentence(question, span[0]))]


_SENTENCE_END = re.compile(r"[.?!;](?=\s|$)|\n")  # not the point of "$18,250.40"


def _sentence(text: str, at: int) -> str:
    start = max((m.end() for m in _SENTENCE_END.finditer(text, 0, at)), default=0)
    end = next((m.start() for m in _SENTENCE_END.finditer(text, at)), len(text))
    return text[start:end]
