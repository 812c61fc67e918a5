"""Data the question itself states: "my vested balance is $40,000" is shown beside `vested_balance`.

Why: agents paste the customer's message as it came, and a field list that asks for what the message
already says, without saying so, reads as not having listened. The value is shown for the agent to confirm
(and prefills the form an interrupted run asks to fill); it is never counted as collected, nor used to shape
the answer: the decision rests on the data the caller sends, and a value read out of free text can be the
wrong one.

So this reads little and refuses much. Only a value written right beside the field's name is read: the
whole name ("vested balance is $40,000", "a vested balance of $40,000", "5 years of service"), or its head
word alone after a link word ("rent is £820", "rent's £820pm"; not "balance", which names no one field, nor
"late fee" for a monthly fee: another word qualifies it). Only amounts (with a currency sign or code),
numbers and dates; never a sensitive field, nor a number as long as an identifier. It refuses what its
patterns recognise as a rule's or a bound's figure ("a balance under $2,000", "you need a balance of ...",
"is a GPA of 2.0 required?"), a qualified one ("the proposed rent", "my last withdrawal", "half my
balance"), someone else's, a range, a figure with a scale or another figure after it ("$1.2 million", "3
hours 40 minutes", "40 x 30 cm"), one of a list ("30 lbs for the beagle and 55 lbs for the lab"), a
per-period amount in another period than the field's ("$1,800 a month" for an annual income), two values
for one field, one figure beside two fields, and a message that corrects or doubts itself ("actually", "no
wait", "maybe"). Patterns miss things: two reviews' adversarial messages
still drew a wrong value now and then, which is why a value is only ever shown to be confirmed.
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
_LINK_WORDS = (r"is|was|are|were|'s|’s|of|at|currently|now|right now|just|only|about|around|roughly|approximately|"
               r"approx\.?|nearly|almost|totals?|totalling|totaling|comes? to|stands? at|equals?|shows?|sitting at|on")
_LINK = rf"(?:\s*(?:(?:{_LINK_WORDS})\b|[:=]))+\s*"
_SYMBOL = "[" + re.escape(CURRENCY_SYMBOLS) + "]"
_FIGURE = r"[0-9]+(?:[.,][0-9]+)*"  # ASCII digits: \d would take "٤٠" as a figure
_CODE = r"(?-i:[A-Z]{3})"
# an amount carries its currency: a sign, a code, or "k" ("40k"); a bare "40000" could be anything
_AMOUNT = (rf"(?-i:[A-Z]{{1,2}})?{_SYMBOL}\s?{_FIGURE}(?:\s?[kK]\b)?|{_CODE}\s?{_FIGURE}|"
           rf"{_FIGURE}\s?(?:[kK]\b|{_SYMBOL}|{_CODE}\b)")
# a count's unit goes with it, for validate_value to hold against the field's ("2 hours" is no flight distance)
_COUNT_UNIT = (r"(?:\s?(?:seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|months?|mos?|years?|yrs?|km|kms|"
               r"kilomet(?:re|er)s?|miles?|kg|kgs|kilos?|lbs?|percent|litres?|liters?|ml|cm|mm|inch(?:es)?|feet|ft|"
               r"gallons?|kwh|kw|gb|mb|tb)\b)?")
_NUMBER = rf"{_FIGURE}(?:%|{_COUNT_UNIT})"
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_DATE = (r"[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{1,2}/[0-9]{1,2}/[0-9]{2,4}|[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{4}|"
         rf"{_MONTH}\s+[0-9]{{1,2}}(?:st|nd|rd|th)?,?\s+[0-9]{{4}}|"
         rf"[0-9]{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+[0-9]{{4}}")
# an amount said per period ("£820pm", "$1,850/mo", "$1,800 a month") is read with its period
_PER = r"(?:\s?(?:pcm|pm|pw|pa|p/m)\b|\s?/\s?[a-z]+\b|\s(?:a|per|each|every)\s(?:month|week|year|day|fortnight)\b)?"
_VALUE = {"currency": rf"(?:{_AMOUNT}){_PER}", "number": _NUMBER, "date": _DATE}
# Where the value ends: not inside a longer figure ("5-10", "40.5"), not before a scale ("$1.2 million"),
# another group of digits ("£1 200"), a dimension ("40 x 30"), a half ("4 and a half hours"), another
# figure with its unit ("3 hours 40 minutes") or the other end of a range ("$40,000 to $45,000")
_END = (r"(?![\w%$£€]|[.,/-][0-9]|\s?(?:million|billion|thousand|bn|mn|m)\b|\s[0-9]{3}\b|\s?[x×]\s?[0-9]|"
        r"\s+and an? (?:half|quarter)\b|\s+[0-9]+\s?[a-z]|\s*(?:-|–|to|or)\s*[$£€0-9])")
# (atomic: a value is read whole or not at all, never cut back to pass the end's checks: "3 hours" of
# "3 hours 40 minutes" is not "3")
_AFTER = {kind: re.compile(rf"(?:{_LINK})((?>{pattern})){_END}", re.IGNORECASE) for kind, pattern in _VALUE.items()}
# With the whole name, a date or an amount with its sign needs no link word ("separation date 2026-03-01")
_BARE = {"date": re.compile(rf"\s+((?>{_DATE})){_END}", re.IGNORECASE),
         "currency": re.compile(rf"\s+((?>(?-i:[A-Z]{{1,2}})?{_SYMBOL}\s?{_FIGURE}(?:\s?[kK]\b)?{_PER})){_END}",
                                re.IGNORECASE)}
# "5 years of service", "a $40,000 vested balance": a figure right before the whole name (amounts and numbers)
_BEFORE = {kind: re.compile(rf"(?<![\w.,/£$€-])({_VALUE[kind]})\s+$", re.IGNORECASE)
           for kind in ("currency", "number")}
_GLUED = {kind: re.compile(rf"\s*((?>{pattern})){_END}", re.IGNORECASE) for kind, pattern in _VALUE.items()}
_ANY_VALUE = {kind: re.compile(rf"(?<![\w.,])(?>{pattern}){_END}", re.IGNORECASE) for kind, pattern in _VALUE.items()}
_PERIODS = {"pcm": "per month", "pm": "per month", "p/m": "per month", "pw": "per week", "pa": "per year"}
_COUNTING = {"number", "count", "total", "no"}  # "Number of tenants" is said "3 tenants"
# Words of a name that say what kind of datum it is, not which: "rent" names "Monthly rent", "amount" nothing
_GENERIC = {stem(w) for w in ("amount", "date", "balance", "number", "total", "value", "count", "type", "status",
                                "current", "sum", "figure", "level", "period", "cycle", "day", "week", "month",
                                "quarter", "year", "time", "last", "new", "old", "age", "distance", "weight", "size",
                                "length", "width", "height", "volume", "setting", "rate", "percentage", "percent",
                                "fee", "cost", "price", "charge", "payment", "limit")}
# The quantity of a thing is the thing ("Deposit amount": the deposit), its age or weight is not
_QUANTITY = {stem(w) for w in ("amount", "total", "value", "sum", "figure", "balance")}
# Words of a name that only say which period or when: "Monthly rent" is the rent
_SOFT = {stem(w) for w in ("monthly", "weekly", "annual", "yearly", "daily", "current", "total", "present")}
# Where a name's head word ends: "Distance *between* branches" is a distance, "Weight *of* pet" a weight
_NAME_PREPOSITIONS = {"of", "in", "between", "per", "for", "on", "at", "to", "from", "with", "since", "after",
                      "before", "during", "by"}
# Before the head word alone, only these (or a word of the name itself): "my rent", not "the late fee"
_DETERMINERS = {"my", "our", "the", "a", "an", "their", "his", "her", "your", "its", "this", "that"}
# A message that corrects itself or doubts its own figures: nothing in it is read ("no wait, the statement
# shows 4", "the app says $34,500 though, no idea which is right")
_CORRECTION = re.compile(r"\b(no,? wait|wait,? no|sorry,? i mean|or was it|no idea which|not sure which|which is "
                         r"(right|correct)|i mean|actually|make (that|it)|maybe|perhaps)\b", re.IGNORECASE)
# A figure after these is a bound, not the case's value: "a fee after 14 days overdrawn", "over $2,000"
_BOUND = re.compile(r"\b(after|within|over|under|above|below|than|least|most|up to|beyond|exceeds?|exceeding|"
                    r"past|before|until|by|need|needs|needed|require|requires|required|include|includes|included|"
                    r"allow|allows|allowance|quota)\s+$", re.IGNORECASE)
# A sentence about someone else's case: "My brother left Acme with about $90k vested"
_SOMEONE_ELSE = re.compile(r"\b(my|our|a|his|her) (brother|sister|friend|co-?worker|colleague|neighbou?r|cousin|"
                           r"son|daughter|mum|mom|dad|father|mother|wife|husband|partner|boss|lodger|flatmate|"
                           r"roommate)\b|\b(someone|somebody|anyone|everyone|people)\b|"
                           r"\bif (i'd|i had|i were|we'd|we had)\b", re.IGNORECASE)
# Words before the name that make its figure another one than the case's: a rule's ("the minimum vested
# balance"), a bound's, another time's ("my last withdrawal", "the proposed rent"), a share of it ("half my")
_QUALIFIERS = frozenset((  # (words as written: "planned" and "plan" share a stem)
    "minimum", "maximum", "min", "max", "required", "least", "most", "limit", "threshold", "cap", "average",
    "typical", "usual", "standard", "default", "proposed", "new", "old", "previous", "prior", "last", "next",
    "future", "planned", "expected", "estimated", "quoted", "original", "former", "target", "guaranteed",
    "promised", "sla", "half", "double", "twice", "third", "quarter", "extra", "another", "other"))
# ... and words after the figure that make it a rule's or a bound: "$2,000 or more", "is a GPA of 2.0 required?"
_RULE_AFTER = re.compile(r"\s*(or|and)\s+(more|less|over|under|above|below|higher|lower|up|fewer|greater)\b|"
                         r"\s*(minimum|maximum|min|max|limit|threshold|cap)\b|\s*\+|"
                         r"\s+(\w+\s+){0,2}(required|needed|enough|sufficient|allowed|permitted|necessary)\b",
                         re.IGNORECASE)
# A figure of another time ("$40,000 in January; it's $36,000 now"), and a case made up ("Suppose the balance
# is $40,000", "E.g. a balance of ...")
_PAST = re.compile(rf"\s+(in {_MONTH}|last (week|month|year|time)|\w+ ago|before|previously|at the time|"
                   r"when i (applied|started|joined|signed))\b", re.IGNORECASE)
_MADE_UP = re.compile(r"\b((suppose|supposing|assuming|assume|say|hypothetically|imagine|for example|for instance)\b|"
                      r"e\.g\.)", re.IGNORECASE)
# ... and a list of values, each someone's or something's: "Pet weight is 30 lbs for the beagle and 55 lbs for
# the lab", "rent: £820 (flat A), £760 (flat B)" (which one is the case's is not said). The first value's own
# "for ..." or "(...)" makes it one of a list: "rent is £820, and £900 was the deposit" is no list.
_LISTED = {kind: re.compile(rf"(?:\s+(?:for|of|on|at|in|with)\s+(?:[\w'’-]+\s+){{0,3}}[\w'’-]+|\s*\([^()]{{1,30}}\))"
                            rf"\s*(?:[,;&/]\s*(?:(?:and|plus)\b)?|\band\b|\bplus\b)\s*"
                            rf"(?:(?:the|my|our|about|around|roughly|is|was)\s+)?"
                            rf"(?<![\w.,])(?>{pattern}){_END}", re.IGNORECASE) for kind, pattern in _VALUE.items()}
# ... and one another figure contradicts: "... is $40,000 per my statement but the website shows $41,200"
_BUT = re.compile(r"\b(but|though|although|however|whereas|while)\b", re.IGNORECASE)
# ... and, anywhere in the clause before the name, a word that makes the figure a rule's: "you need a combined
# average balance of $5,000", "the SAP minimum is a cumulative GPA of 2.0"
_RULE_CLAUSE = re.compile(r"\b(need|needs|needed|require|requires|required|minimum|maximum|min|max|limit|threshold|"
                          r"must|should|allowed|eligible|qualify)\b", re.IGNORECASE)
_CLAUSE_START = re.compile(r"[.?!;,:]\s|\b(and|but|so|because)\b", re.IGNORECASE)
_ID_LIKE = re.compile(r"[0-9]{7,}")  # a run of digits as long as an account or member number: no count


def stated_data(question: str, fields: list[FieldSpec], collected: dict[str, Any]) -> dict[str, str]:
    """field key -> the value as the question writes it ("$40,000"; valid for the field's type) beside the
    field's name, for the fields the caller has not given."""
    if _CORRECTION.search(question):
        return {}
    given = {normalize_key(k) for k, v in collected.items() if v not in (None, "")}
    tokens = [(m.start(), m.end(), m.group()) for m in _NAME_WORD.finditer(question)]
    found: dict[str, list[tuple[tuple[int, int], tuple[Any, str]]]] = {}
    for f in fields:
        if f.data_type not in STATED_TYPES or f.sensitive or f.choices or normalize_key(f.key) in given:
            continue
        # every other field's words (a sensitive one's too) make a word no telling one
        others = {w for g in fields if g.key != f.key for w in _name_stems(g)}
        whole = [(s, e, True) for s, e in _mentions(tokens, _name_stems(f))]
        for start, end, full in whole + [(s, e, False) for s, e in _head_mentions(tokens, f, others)]:
            for span, raw in _values_beside(question, start, end, f.data_type, full, _name_stems(f)):
                ok, value = stated_value(f, raw)
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


def _name_words(f: FieldSpec) -> list[str]:
    names = [w.lower() for w in _NAME_WORD.findall(f.name)]
    if f.data_type == "number" and len(names) > 2 and names[0] in _COUNTING and names[1] == "of":
        names = names[2:]
    return names


def _name_stems(f: FieldSpec) -> list[str]:
    return list(dict.fromkeys(stem(w) for w in _name_words(f) if w not in STOPWORDS))


def _stem_of(token: str) -> str:
    return stem(token.lower().replace("’", "'").split("'")[0])


def _mentions(tokens: list[tuple[int, int, str]], wanted: list[str]) -> list[tuple[int, int]]:
    """Character spans of runs of the question's words that hold every one of the name's words, with at
    most one other word among them ("vested account balance")."""
    if not wanted:
        return []
    need, out = set(wanted), []
    for i, (start, _, first) in enumerate(tokens):
        if _stem_of(first) not in need:
            continue
        seen, extra = set(), 0
        for _, end, word in tokens[i:i + len(wanted) + 1]:
            if _stem_of(word) in need:
                seen.add(_stem_of(word))
            else:
                extra += 1
                if extra > 1:
                    break
            if seen == need:
                out.append((start, end))
                break
    return out


def _head(f: FieldSpec) -> str:
    """The word a name is about, where it stands for the whole name: "rent" of "Monthly rent" or "Current
    rent", "deposit" of "Deposit amount" (the amount of a deposit is the deposit). "" where the rest of the name
    says which one ("Outstanding loan balance", "Liability coverage amount", "State disability benefit"), where
    the word names a kind of datum only ("Pet age at enrollment": a pet is no age; "Distance between
    branches"), or is a participle or an adverb ("Deposit paid", "Vested balance")."""
    words = [w for w in _name_words(f) if w not in STOPWORDS]
    cut = next((i for i, w in enumerate(_name_words(f)) if w in _NAME_PREPOSITIONS), None)
    if cut is not None:
        words = [w for w in _name_words(f)[:cut] if w not in STOPWORDS]
    if len(_name_words(f)) < 2 or not words:
        return ""
    head = words[-1]
    if stem(head) in _QUANTITY and len(words) >= 2:
        head = words[-2]
    rest = {stem(w) for w in _name_words(f) if w != head and w not in STOPWORDS} - _GENERIC - _SOFT
    if rest or stem(head) in _GENERIC or head.endswith(("ed", "ing", "ly")):
        return ""
    return head


def _head_mentions(tokens: list[tuple[int, int, str]], f: FieldSpec, others: set[str]) -> list[tuple[int, int]]:
    """The head word alone, as written ("rent", "rents", "rent's"), where no other field's name has it and
    nothing but a determiner, a word of the name or a small word stands before it ("my rent", "monthly
    rent", "and rent"; not "the proposed rent", "the late fee")."""
    head = _head(f)
    if not head or stem(head) in others:
        return []
    own = set(_name_words(f))
    out = []
    for i, (start, end, word) in enumerate(tokens):
        plain = word.lower().replace("’", "'")
        if plain.split("'")[0] not in (head, head + "s", head + "es"):
            continue
        before = tokens[i - 1][2].lower() if i else ""
        if before and before not in _DETERMINERS | own and (before not in STOPWORDS or before in _QUALIFIERS):
            continue
        out.append((start, end))
    return out


def _values_beside(question: str, start: int, end: int, kind: str, full: bool,
                   name: list[str]) -> list[tuple[tuple[int, int], str]]:
    lead = [w.lower() for w in _NAME_WORD.findall(question[max(0, start - 40):start])][-2:]
    if any(w in _QUALIFIERS and stem(w) not in name for w in lead) or _MADE_UP.search(question, max(0, start - 12),
                                                                                       start):
        return []
    clause = max((m.end() for m in _CLAUSE_START.finditer(question, 0, start)), default=0)
    if _RULE_CLAUSE.search(question, clause, start):
        return []
    before = re.search(r"([A-Za-z]+)\s+$", question[max(0, start - 30):start])
    if full and len(name) == 1 and before and before.group(1).lower() not in _DETERMINERS | STOPWORDS:
        return []  # a one-word name qualified by another word: "the fee amount" is no "Amount"
    out: list[tuple[tuple[int, int], str]] = []
    after = _AFTER[kind].match(question, end)
    if after is None and question[end - 2:end].lower() in ("'s", "’s"):  # "rent's £820pm": the 's is the link
        after = _GLUED[kind].match(question, end)
    if after is None and full and kind in _BARE:
        after = _BARE[kind].match(question, end)
    if after is not None:
        out.append((after.span(1), after.group(1)))
    if full and kind in _BEFORE and (before := _BEFORE[kind].search(question[:start])) is not None:
        out.append((before.span(1), before.group(1)))
    return [(span, raw) for span, raw in out
            if not _RULE_AFTER.match(question, span[1]) and not _PAST.match(question, span[1])
            and not _LISTED[kind].match(question, span[1])
            and not _BOUND.search(question[:span[0]]) and not _ID_LIKE.search(raw)
            and not _SOMEONE_ELSE.search(sentence := _sentence(question, span[0]))
            and not _MADE_UP.search(sentence) and not _contradicted(question, span, kind)]


def _contradicted(question: str, span: tuple[int, int], kind: str) -> bool:
    """Whether, in the value's sentence, a "but" or "though" comes with another figure of its kind."""
    start, end = _sentence_bounds(question, span[0])
    return bool(_BUT.search(question, start, end)) and any(
        m.start() != span[0] for m in _ANY_VALUE[kind].finditer(question, start, end))


def stated_value(f: FieldSpec, raw: str) -> tuple[bool, Any]:
    """Whether a value as written is valid for the field, and the value validate_value makes of it; "£820pm"
    is read as "£820 per month" ("$1,800 a month" is no annual figure)."""
    match = re.search(r"\s?(pcm|pm|pw|pa|p/m)$", raw, re.IGNORECASE)
    ok, value, _ = validate_value(f.data_type, raw[:match.start()] + " " + _PERIODS[match.group(1).lower()]
                                  if match else raw, f.words)
    return ok, value


_SENTENCE_END = re.compile(r"[.?!;](?=\s|$)|\n")  # not the point of "$18,250.40"


def _sentence_bounds(text: str, at: int) -> tuple[int, int]:
    start = max((m.end() for m in _SENTENCE_END.finditer(text, 0, at)), default=0)
    end = next((m.start() for m in _SENTENCE_END.finditer(text, at)), len(text))
    return start, end


def _sentence(text: str, at: int) -> str:
    start, end = _sentence_bounds(text, at)
    return text[start:end]
