"""Can the retrieved context answer *this* question, not just its topic?

A question has a type — an amount, a percentage, a date or age, a duration, a count, a procedure, a
party, a yes/no rule — and a focus (its telling terms, minus the facets that only select the article).
It is answered when the answer cites a sentence of its type about its focus (and, for the named
facets, when the answer's article carries what the question names).
Otherwise the answer goes to `uncertain`, saying in plain words what the knowledge base does not state.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise

from ..kb.text import CURRENCY_CODES, CURRENCY_SYMBOLS, STOPWORDS, stem, terms, words
from .entailment import numbers
from .facets import QUESTION_WORD, is_universal

# Question types by wording; the first match wins (most specific first).
QUESTION_TYPES: list[tuple[str, re.Pattern[str]]] = [(t, re.compile(p, re.IGNORECASE)) for t, p in (
    ("duration", r"\bhow (long|soon|quickly|fast)\b|\bhow many (hours|days|weeks|months|years|business days|"
                 r"pay periods)\b|\bwithin how\b|"
                 # "how much notice", "how far in advance", "what is the grace period": a period by another name
                 # (the lookaheads keep "notice" and "grace" in the focus: they say which period)
                 r"\bhow much (?=(advance |written )?(notice|time|lead time)\b)|\bhow far (in advance|ahead)\b|"
                 r"\bwhat( is|'s|\u2019s| are) the (?=([\w-]+ ){0,2}(period|window)\b(?!-)"
                 r"(?!\s+([\w-]+\s+)?(fee|fees|cost|costs|price|prices|charge|charges|seat|seats)\b))"),
    ("date", r"\bwhen (is|are|do|does|must|should|will|can|am|did)\b|\bby when\b|\bwhat (date|day|deadline|month|"
             r"year|time)\b(?! zones?\b)|\bwhat hours\b|\b(cut-?off|closing|opening) time\b|\b(what|which) age\b|"
             r"\bhow old\b|\bat what age\b|\bdeadline\b"),
    ("percent", r"\bwhat (percent|percentage)\b|\bhow much (of|is withheld|tax|penalt)|\bwhat (interest )?rate\b|"
                # "what is the interest rate on a loan", "what's the APR": a few words may name the product
                r"\bwhat( (is|are|was|were|will be|would be)|'s|\u2019s) (the|my|your|their|its|an?) "
                r"([\w'\u2019-]+ ){0,2}?(interest rates?|aprs?|apys?)\b"),
    # "what is the 2026 elective deferral limit" (a few words between "the" and the quantity, none of them a
    # preposition: "the process for a fee refund" asks for a process); "what does the carrier charge"
    ("amount", r"\bhow much\b|\bwhat( (is|are|was|were)|'s|\u2019s) the ((?!(for|on|of|about|between|in|to|with|"
               r"if|when|time|age)\b)[\w()'-]+ ){0,4}?(fee|fees|cost|costs|charge|charges|price|amount|minimum|maximum|"
               r"limit|limits|cap)\b(?!-)|\b(minimum|maximum|max|min)\b|\bwhat (fee|fees|does it cost)\b|"
               # (a verb: "what does a cheque cost at the bank?", not the noun of "what does the charge at
               # the top of my bill mean?")
               r"\bwhat (does|will|would) [^?.]{0,60}\b(?<!\bthe )(?<!\bthis )(?<!\bthat )(?<!\bmy )(?<!\byour )"
               r"(charge|cost)"
               r"(?=\s*(\?|$|(for|to|per|me|us|them|you|a|an|the|on|if|when|in|at|with|from|through|monthly|annually|each|"
               r"now)\b))|"
               r"\bwhat do (you|they|we) (charge|pay)\b|"
               r"\bwhat (am|are|is|will|would|do|does|did) (i|we|you|they|he|she|it|my \w+) (be |being |get |getting |"
               r"got |been )?(charged|billed)\b|"
               r"\bhow expensive\b|"
               # "what's the most they pay", "the least I can borrow": a bound on a sum
               r"\bthe (most|least) (i|we|you|they|it|one|he|she) (can |could |will |would |might )?(pay|pays|get|gets|"
               r"receive|claim|borrow|cover|covers|charge|charges|refund|refunds|reimburse|reimburses)\b|"
               # "is there a fee for ...", "does it cost anything": a yes/no whose answer is a price or "free"
               # (not "a person in charge", "a cost-of-living adjustment", "any costs to my credit score")
               r"\b(is|are) there (a|an|any) ((?!(in|of|to|for)\s)[\w-]+ ){0,2}(fee|fees|charge|charges|cost|costs)\b"
               r"(?![\w-]|\s+(of(?! any kind)|to my|against|pending)\b)|"
               r"\b(does|will|would) (it|that|this) cost\b|"
               r"\b(do|does|will|would) (they|you|it|(the )?\w+) charge (me |us )?(anything|extra|a fee)\b"),
    ("count", r"\bhow many\b|\bhow (big|large|heavy|tall|wide)\b"),  # a number of units: "20 MB", "23 kg"
    # a number or address to reach or pay someone ("what's the bank's BSB number?", "what number do I call?"):
    # answered by the code itself, not by a sentence about it. One particular code (the, my, the bank's...):
    # "what is a routing number?" asks what one is.
    ("identifier", r"\b(what|which)( is|'s|\u2019s| are|'re|s)?\s+(the|my|your|our|their|its|"
                   r"([\w-]+\s+){0,3}[\w-]+['\u2019]s)\s+([\w-]+\s+){0,3}?(((phone|telephone|fax|contact|helpline|"
                   r"hotline|routing|bsb|account|sort|swift|bic|swift/bic|iban|reference|customer service|support) "
                   r"(number|code)s?)|e-?mail( address)?|web ?site|url|web address|(postal|mailing|street) address|bsb|"
                   r"bic|swift|iban|po box)\b(?!\s+of\s+(conduct|practice|ethics)\b)"
                   r"(?=\s*(\?|$|,|(for|to|at|on|of|in|if|when|please)\b))|"
                   r"\b(what|which) (phone |telephone )?number (do|should|can|could|would) (i|we|you|they) "
                   r"(call|ring|dial|text|use)\b|\bwhat( is|'s|\u2019s|s)? the (phone |telephone )?number to "
                   r"(call|ring|dial|text)\b"),
    ("procedure", r"\bhow (do|can|should|would) (i|we|you|they|the \w+)\b|\bhow to\b|\bwhat (are the )?steps\b|"
                  r"\bwhat do (i|we) (need to )?do\b|\bprocess for\b"),
    ("party", r"^\s*who\b|\bwho (is|are|must|should|can|pays|approves|signs|decides)\b|\bto whom\b"),
)]
# Sentence types a question type accepts.
ACCEPTS = {"duration": {"duration", "date"}, "date": {"date", "duration"}, "percent": {"percent"},
           "amount": {"amount", "percent", "count"}, "count": {"count", "amount", "duration"},
           "identifier": {"identifier"}}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december)"
# A month in running text. "may" is mostly the modal verb ("participants may request..."): it is the month
# only written "May" before a figure ("May 1", "May 2026") or inside a sentence (the modal starts one: "May I
# ...?"); the other months need no such care.
_MONTH_IN_TEXT = (r"\b(january|february|march|april|june|july|august|september|october|november|december)\b|"
                  r"(?-i:\bMay\b)(?=,?\s*\d)|(?<=[^.!?\s\"'(:*-] )(?-i:May)\b|(?<=mid-)(?-i:May)\b")
# Money as written before or after a figure: a symbol or an ISO code ("₹2,500", "AUD 40", "120 SEK", "1,500 yen")
_SYMBOLS = f"[{re.escape(CURRENCY_SYMBOLS)}]"
_CODES = "|".join(CURRENCY_CODES)
_MONEY_AFTER = rf"dollars|{_CODES}|€|euros?|pounds|yen|rupees?|kronor|krona|kroner|francs?|pesos?|rand|zloty"
# A time of day: "9 a.m.", "noon", or a 24-hour time (most of the world writes opening hours that way) where it
# reads as one, after "at", "from", "by", "until", "between"... or in a range ("08:00-20:00"); not a hold time
# of "4:30", a verse "3:16", a ratio "1:20" or a time stamp "00:01:23".
_H24 = r"([01]?\d|2[0-3]):[0-5]\d"
_TIME_OF_DAY = (r"\b\d{1,2}(:\d\d)?\s?(a\.m\.|p\.m\.|am\b|pm\b)|\b(noon|midnight)\b|"
                rf"\b(at|from|until|till|by|before|after|between|and|to|opens?|closes?)\s+{_H24}\b(?!:)|"
                rf"(?<![:\d]){_H24}\s?[-\u2013]\s?{_H24}\b(?!:)")
# No price to pay, said in words: "no fee", "free of charge", "the second visit is free", "fee-free" -- not a
# freedom or a compound that is no price ("feel free to", "toll-free line", "tax-free", "free of debris"; "free
# to" a verb is a freedom, "you're free to switch", unless "it is free to open"; "free to UK accounts" prices a
# destination). A price (SENTENCE_TYPES "amount") and the answer to "does X charge a fee" (offered_things).
_NO_CHARGE = (r"\b(no|free of|without) ([\w-]+ ){0,2}(fee|charge|cost)s?\b(?![\w-]|\s+(?!(for|to|on|if|when|is|are|"
              r"applies|apply|and|or|at|in|unless|until|from|of|was|will|charged|required|payable|due)\b)[a-z])|"
              r"(?<![\w-])(?<!feel )free\b(?!-)(?!\s+(of|from)\s+(?!(charge|cost|fees?)\b))"
              r"(?!\s+to\s+(?!(a|an|the|any|all|every|some|most|your|their|our|my)\b)(?-i:[a-z]))|"
              r"\bit(?: is|'s|\u2019s| will be) free to\b|"
              r"\b(fee|fees|charge|cost|interest|commission|penalty|rent)-free\b|\bat no (cost|charge)\b")
_FREE = re.compile(_NO_CHARGE, re.IGNORECASE)
SENTENCE_TYPES: dict[str, re.Pattern[str]] = {t: re.compile(p, re.IGNORECASE) for t, p in {
    "amount": rf"{_SYMBOLS}\s?\d|\b({_CODES})\s?\d|"
              r"\b(price|fee|cost|charge)s?( \([a-z$£€]{1,4}\)\s*:\s*\d|\s*:\s*\d{2,})"
              r"(?![\d.,]*\s*(business |calendar )?(days?|hours?|weeks?|months?|years?|minutes?|of)\b)|"
              rf"(?<![\d,])\b\d[\d,]*(\.\d+)?\s*({_MONEY_AFTER})(?!\w)|"
              + _NO_CHARGE,
    "percent": r"\d\s*%|\bpercent\b",
    "date": _MONTH_IN_TEXT + r"|\bage\s+\d|\b\d+(½)?\s*(or older|and older)\b|\b(19|20)\d\d\b|\bby the (end|date)\b|"
            r"\b(end|start|beginning) of the (year|month|quarter)\b|\bdeadline\b|"
            # a day of the month: "on the 5th", "the 1st of each month", "by the 15th"
            r"\b(on|by|before|after|until|from) the \d{1,2}(st|nd|rd|th)\b(?!\s+(?!(of|and|or|at|to|through|until|"
            r"each|every|if|when|is|are|will|must|unless|business|working|calendar|days?)\b)[a-z])|"
            r"\b\d{1,2}(st|nd|rd|th) (of|day of) (the|each|every) month\b",
    # a time of day: what answers "what time is the cut-off?" (see accepted_types)
    "time": _TIME_OF_DAY,
    # opening hours: a time of day or the days of the week (what answers "when are the lines open", see
    # accepted_types; "when do I have to file" is not answered by "reviewed on weekdays")
    "clock": _TIME_OF_DAY + r"|\b24/7\b|\b(mon|tues|wednes|thurs|fri|satur|sun)days?\b|\b(weekdays|weekends)\b",
    # ("10 working days", "a 10-working-day period": how the UK counts them)
    "duration": r"\b\d+(\.\d+)?[\s-]*(to \d+\s*)?((business|calendar|working)[\s-])?(hours?|days?|weeks?|months?|"
                r"years?|pay periods?|minutes?)\b|\b(one|two|three|four|five|six|seven|ten|twelve) "
                r"((business|calendar|working) )?(days?|weeks?|months?|years?)\b|\bimmediately\b|\bsame day\b",
    "count": r"\b\d+\b|\b(one|two|three|four|five|six|seven|eight|nine|ten)\b",
    "identifier": (
        # digit groups of six digits or more ("120-456", "0123 456 7890"; not "10-15 days", "1 250 000 calls",
        # a date or a range of years), an e-mail or web address, a bank identifier (a SWIFT/BIC code named as
        # one or with a digit, an IBAN), or one the answer masks ([PHONE]: the KB states it, the answer
        # withholds it)
        r"(?<![\w.,/-])(?<![" + re.escape(CURRENCY_SYMBOLS) + r"])"
        r"(?!(19|20)\d\d[-\u2013](\d\d|(19|20)\d\d)\b)(?!\d{4}-\d\d-\d\d\b)"
        r"(?!\d{1,2}[./]\d{1,2}[./]\d{2,4}\b)(?!\d{1,3}( \d{3})+(?![\d-]))(?=(\d[-\u2013. ]?){6})"
        r"\d{1,5}([-\u2013. ]\d{2,6}){1,4}"
        r"(?![\w%]|[.,]\d|\s*(%|per\b|a (year|month|week|day)\b|((business|calendar|working) )?(hours?|days?|"
        r"weeks?|months?|years?|mins?|minutes?)\b))|"
        r"\b(number|no|code|bsb|routing|account|phone|tel|fax|call|dial|text)\W{1,3}\d{6,}\b|"  # "number 021000021"
        r"[\w.+-]+@[\w-]+\.[\w.-]+|\b(https?://|www\.)\S+|"
        r"(?-i:\b(SWIFT|BIC)\W{1,5}(code\W{1,3})?[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?\b|"
        r"\b[A-Z]{6}(?=[A-Z0-9]{2}([A-Z0-9]{3})?\b)(?=[A-Z0-9]*\d)[A-Z0-9]{2}([A-Z0-9]{3})?\b|"
        r"\b[A-Z]{2}\d{2}( ?[A-Z0-9]{4}){3,7}\b)|"
        r"\[(PHONE|EMAIL|NUMBER|ROUTING_NUMBER|ACCOUNT_NUMBER)\]"),
}.items()}
# Words that ask rather than tell: they are never what a question is about.
QUESTION_WORDS = frozenset(terms(
    "how much many long soon what which when where who whom why whether need needs know tell explain "
    "please help want wants get getting can could would will shall should do does did happen happens "
    "thing things way ways something anything option options work works mean means once all make makes made "
    "expect expected most least"))
# A verb's particle ("get my deposit *back*", "cash *out*"): alone it names nothing the answer must say.
PARTICLES = frozenset(terms("back out up off away over down"))
# Words that only carry a question's type ("how long does it *take*"): a sentence of the type answers them.
FILLER_WORDS = {"duration": frozenset(terms("take takes taking took last lasts period periods window windows"))}
# Words that name which quantity a money question asks for ("how much does it *charge*", "what *rate*"):
# not its subject when the question names one ("charge to set up a loan": setup is the subject), but
# when nothing else is left they are the subject, and the answer must name one of them (a vesting
# percentage does not answer "how much does vesting cost").
_MONEY = frozenset(terms("cost costs charge charges charged price prices pay pays paid fee fees rate rates"))
FAMILY_WORDS = {"amount": _MONEY, "percent": _MONEY}
# The words that only ask: never echoed back as a subject the knowledge base lacks.
ASKING_WORDS = frozenset(terms("how much many long soon quickly often what which when where who whom why whether"))


@dataclass
class Answerability:
    question_type: str
    focus: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # what the KB does not state, in words for a person

    @property
    def ok(self) -> bool:
        return not self.missing


# "When are the phone lines open", "when does the pharmacy close", "when is customer service open": a question
# about opening hours.
_HOURS_QUESTION = re.compile(
    r"\b(phones?|lines?|office|offices|stores?|shops?|branch|branches|desks?|support|services?|cent(er|re)s?|"
    r"helpline|hotline|"
    r"counters?|chat|you|they|it|we)\b[^.?!]{0,30}(?<!\bbe )(?<!\bbeen )\b(open|opens|close|closes|closed|staffed)\b"
    r"(?!\s+(my|the|your|this|that|our|his|her|their|an?)\b)|"
    r"\b(opening|business|office|support|phone|service) hours\b|\bhours of (operation|business|service)\b",
    re.IGNORECASE)


def accepted_types(question: str, qtype: str) -> set[str]:
    """The sentence types that answer a question of this type (opening hours for a "when... open" question)."""
    accepted = set(ACCEPTS.get(qtype, set()))
    if qtype == "date" and _HOURS_QUESTION.search(question):
        accepted.add("clock")
    if qtype == "date" and _TIME_ASK.search(question):
        accepted.add("time")
    return accepted


# "What time is the cut-off?", "by what time": a time of day is asked for, whatever it is about (not "what time
# period", "what time limit")
_TIME_ASK = re.compile(r"\bwhat time\b(?!\s+(periods?|frames?|limits?|windows?|spans?|zones?)\b)", re.IGNORECASE)


# The words of a question about a price ("does it charge a fee", "how much does it cost"), not a sum that
# is not one ("how much can I borrow")
_PRICE_QUESTION = re.compile(r"\b(fee|fees|charge|charges|charged|cost|costs|price|prices|expensive)\b",
                             re.IGNORECASE)
# A count that is a price: "25,000 points", "40 credits"
_PRICE_UNIT = re.compile(r"\d[\d,.]*\s*(points|miles|credits|tokens|coins)\b", re.IGNORECASE)
_COUNT_ASK = re.compile(r"\bhow many\b|\bnumber of\b", re.IGNORECASE)


def price_question(question: str) -> bool:
    """Every part of the question asks a price, not how many of something (one that also asks "how many
    bags", or "the maximum number of withdrawals before a fee applies", is not only that)."""
    return question_type(question) == "amount" and all(
        _PRICE_QUESTION.search(part) and not _COUNT_ASK.search(part)
        for part in (asking_part(p) for p in question_parts(question)))


_ORDINAL_DAY = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)\b")


def figures(text: str) -> set[str]:
    """The figures a text states, written one way (the verifier's numbers: "$1,400" is 1400), and its
    days of the month as written ("on the 8th" is 8th)."""
    text = text.lower()
    days = set(_ORDINAL_DAY.findall(text))
    out = set()
    for n in numbers(_ORDINAL_DAY.sub(" ", text)):
        n = n.rstrip("%")
        out.add(n.rstrip("0").rstrip(".") if "." in n else n)  # "1,400.00" is 1400, "12.50" is 12.5
    return out | days


def question_type(question: str) -> str:
    for name, pattern in QUESTION_TYPES:
        if pattern.search(question):
            return name
    first = words(question)[:1]
    if first and first[0] in {"can", "could", "do", "does", "did", "is", "are", "was", "were", "will", "would",
                              "should", "must", "may", "has", "have", "am"}:
        return "yesno"
    return "other"


# "How many *hours*": a sentence giving a number of that unit answers more exactly than any other time.
_ASKED_UNIT = re.compile(r"\bhow many (business |calendar |working )?(hour|day|week|month|year|minute)s?\b",
                         re.IGNORECASE)
# "How long do I have to...", "when is it due": a limit set on the asker, not how long something takes.
_DEADLINE_QUESTION = re.compile(
    r"\bhow (long|much time|many days) (do|does|did|will|would) (i|we|you|they|he|she|the \w+) have\b|"
    r"\bdeadline\b|\bby when\b|\bdue\b(?!\s+to\b)|\blast day (to|for)\b|\bhow (late|soon) (can|must|should|do)\b",
    re.IGNORECASE)
_DEADLINE_SENTENCE = re.compile(
    r"\b(due(?!\s+to\b)|deadline|no later than|last (day|date)|expires?|must be (filed|submitted|received|made|"
    r"returned|reported|requested|sent|postmarked)|at the latest)\b", re.IGNORECASE)


# "Is there a ceiling on how much...", "what's the most...": a bound, stated as one ("up to", "maximum").
_BOUND_QUESTION = {
    "max": re.compile(r"\b(ceiling|cap|caps|capped|limit|limits|maximum|max|up to)\b|"
                      r"\bthe most (i|we|you|they|one|it)\b", re.IGNORECASE),
    "min": re.compile(r"\b(floor|minimum|min|at least)\b|\bthe least (i|we|you|they|one|it)\b", re.IGNORECASE)}
_BOUND_SENTENCE = {
    "max": re.compile(r"\b(maximum|max|cap|caps|capped|ceiling|up to|limit|limited to|no more than|at most|"
                      r"(may|can|must) not exceed|exceeds?)\b", re.IGNORECASE),
    "min": re.compile(r"\b(minimum|min|floor|at least|no less than|or more)\b", re.IGNORECASE)}


def exact_match(question: str, sentence: str) -> bool:
    """Whether the sentence gives what the question asks for in its own terms: a number of the unit asked
    ("how many hours" -> "480 hours"); for a deadline question, a limit ("due within 30 days") rather than
    a processing time ("processed within 10 days"); for a bound ("is there a ceiling on...", "the least I
    can..."), a sentence stating one ("the maximum adjustment is...", "at least $25"); for a how-long
    question, a period of its very subject (`timed_subject`)."""
    unit = _ASKED_UNIT.search(question)
    if unit and re.search(rf"(?<![\d,.])\d[\d,.]*\s*(-|to)?\s*({unit.group(1) or ''})?{unit.group(2)}s?\b", sentence,
                          re.IGNORECASE):
        return True
    asking = asking_part(question)
    if _DEADLINE_QUESTION.search(asking) and _DEADLINE_SENTENCE.search(sentence):
        return True
    if (named := _NAMED_CHARGE.search(asking)) and named.group(1).lower() not in STOPWORDS | QUESTION_WORDS:
        # "what's the overdraft fee": the sentence that puts a price on that very fee ("a $34 overdraft fee",
        # "Overdraft fee: $34"), not one with another amount near the word (a -$50.00 balance)
        kind, noun = re.escape(named.group(1)), named.group(2)
        if re.search(rf"\b{kind}\W+(\w+\W+)?{noun}s?\b\W*((of|is|are|costs?|:|=|\()\W*){{0,2}}{_MONEY}|"
                     rf"{_MONEY}[\d,.]*\s+(\w+\s+)?{kind}\W+(\w+\W+)?{noun}s?\b", sentence, re.IGNORECASE):
            return True
    if any(_BOUND_QUESTION[b].search(asking) and _BOUND_SENTENCE[b].search(sentence) for b in ("max", "min")):
        return True
    return timed_subject(asking, sentence)


# How close before a period its subject stands: "Reviews finish within 30 days"
SUBJECT_REACH = 4
_PERIOD = re.compile(r"\b\d+(\.\d+)?\s*(to \d+\s*)?(business |calendar |working )?"
                     r"(hours?|days?|weeks?|months?|years?)\b", re.IGNORECASE)


def timed_subject(question: str, sentence: str) -> bool:
    """Whether, for a how-long question ("how long does X take?"), the sentence times its subject X: the word
    stands at most SUBJECT_REACH words before a period ("Reviews finish within 30 days"), not far from
    it ("claims filed within 60 days ... while the team reviews them")."""
    subject = timed_word(question)
    if subject is None:
        return False
    for period in _PERIOD.finditer(sentence):
        before = words(sentence[:period.start()])[-SUBJECT_REACH - 1:]
        # a length of time ("takes 5-7 days", "within 10 days"), not a window's edge ("after 14 days") nor
        # what does not happen in it ("no refund within 14 days")
        if (before and before[-1] not in _EDGES and not _NEGATIONS & set(before)
                and subject in {stem(w) for w in before}):
            return True
    return False


_EDGES = frozenset({"after", "before", "past", "since", "until", "following"})
_NEGATIONS = frozenset({"no", "not", "never", "cannot", "cant", "wont", "isnt", "arent"})


@lru_cache(maxsize=512)  # asked once per candidate sentence, of the same question
def timed_word(question: str) -> str | None:
    """The stem of what a how-long question times: the word before "take"/"last" ("how long does a card
    dispute *investigation* take"), when it is a focus word; None for any other question (a question without
    one names its subject less surely: "how long is leave due to an illness" is not timed by "due"; a
    deadline question asks for a limit on the asker, not how long anything takes)."""
    qtype = question_type(question)
    if qtype != "duration" or _DEADLINE_QUESTION.search(question):
        return None
    head = re.search(r"\b([\w'-]+)\s+(take|takes|last|lasts)\b", question, re.IGNORECASE)
    subject = stem(head.group(1).lower()) if head else None
    return subject if subject in focus_terms(question, set(), qtype) else None


# "the overdraft fee", "a wire transfer charge": a charge the question names by its kind
_NAMED_CHARGE = re.compile(r"\b([a-z][a-z-]{2,})\s+(fee|charge|cost|price|rate)s?\b", re.IGNORECASE)
_MONEY = rf"({_SYMBOLS}\s?\d|\b({_CODES})\s?\d)"


# A quantity with its unit, as questions state a case ("6 hours late", "1,900 km", "35 kilos") and tables
# state bands ("5 hours to less than 8 hours", "1,500 km or more", "up to 23 kg").
_NUM = r"(?<![\d.,])((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
_UNITS = {"hour": r"hours?|hrs?", "minute": r"minutes?|mins?", "day": r"(?:business |calendar |working )?days?",
          "week": r"weeks?", "month": r"months?", "year": r"years?(?![- ]old)", "age": r"years?[- ]old",
          "km": r"km|kilomet(?:er|re)s?", "kg": r"kg|kilos?|kilograms?", "lb": r"lbs?", "mile": r"miles?"}
_EXCLUSIVE_LOW = r"(?:more than|over|above|longer than|exceeding)"
_INCLUSIVE_LOW = r"(?:at least|from|a minimum of)"
_EXCLUSIVE_HIGH = r"(?:less than|under|below|fewer than|shorter than)"
_INCLUSIVE_HIGH = r"(?:up to|no more than|at most|not exceeding|a maximum of)"
BAND_TEXT_LIMIT = 600  # longer units are not table rows or band rules; the regexes never read them
Band = tuple[float, float, bool, bool]  # low, high, low included, high included


def _number(text: str) -> float:
    return float(text.replace(",", ""))


@lru_cache(maxsize=4096)
def _quantities(text: str) -> tuple[tuple[str, float], ...]:
    if len(text) > BAND_TEXT_LIMIT:
        return ()
    return tuple((unit, _number(m.group(1))) for unit, pattern in _UNITS.items()
                 for m in re.finditer(rf"{_NUM}\s?(?:-\s?)?(?:{pattern})\b", text, re.IGNORECASE))


@lru_cache(maxsize=16384)
def _bands(sentence: str, unit: str) -> tuple[Band, ...]:
    """The ranges of `unit` a sentence states, ends open or closed as worded ("to less than 8 hours": 8 is
    out; "up to 23 kg": 23 is in). "within 24 hours" is a deadline, not a band; "3 and 5 hours" is two."""
    if len(sentence) > BAND_TEXT_LIMIT:
        return ()
    u = rf"\s?(?:-\s?)?(?:{_UNITS[unit]})\b"
    out: list[Band] = []
    ranges: list[tuple[int, int]] = []
    for m in re.finditer(rf"(?:(between)\s+{_NUM}(?:{u})?\s+and|{_NUM}(?:{u})?\s?(?:to|-|–|through))\s?"
                         rf"({_EXCLUSIVE_HIGH}\s)?{_NUM}{u}", sentence, re.IGNORECASE):
        low = m.group(2) or m.group(3)
        out.append((_number(low), _number(m.group(5)), True, not m.group(4)))
        ranges.append(m.span())
    # an open end inside a range ("to less than 8 hours") is that range's, not a band of its own; "no more
    # than 3 hours" and "not exceeding 23 kg" are upper bounds
    open_ends = (
        (rf"(?<!no )(?<!not ){_EXCLUSIVE_LOW}\s?{_NUM}{u}", False, False, False),
        (rf"{_INCLUSIVE_LOW}\s?{_NUM}{u}|{_NUM}{u}\s(?:or|and) (?:more|longer|over|above|later)|{_NUM}\+{u}",
         False, True, False),
        (rf"{_EXCLUSIVE_HIGH}\s?{_NUM}{u}", True, True, False),
        (rf"{_INCLUSIVE_HIGH}\s?{_NUM}{u}|(?:no|not) (?:more|longer) than\s?{_NUM}{u}|"
         rf"{_NUM}{u}\s(?:or|and) (?:less|fewer|under|shorter)", True, True, True))
    if unit == "age":  # an age band is as often written after "aged" with no unit: "pupils aged 6 to 10"
        # (not "aged 6 to 24 months", a baby's age; "and" only after "between": "aged 4 and 12" is two ages)
        not_years = r"(?![\d.,]?\d|\s?(?:-\s?)?(?:months?|mos?|mths?|m|weeks?|wks?|days?)\b)"
        for m in re.finditer(rf"\b(?:aged?|ages)\s+(?:between\s+{_NUM}\s?and|{_NUM}\s?(?:to|-|–|through))\s?"
                             rf"({_EXCLUSIVE_HIGH}\s)?{_NUM}{not_years}", sentence, re.IGNORECASE):
            if not any(a < m.end() and m.start() < b for a, b in ranges):
                out.append((_number(m.group(1) or m.group(2)), _number(m.group(4)), True, not m.group(3)))
                ranges.append(m.span())
        open_ends += (
            (rf"\b(?:aged?|ages)\s+{_NUM}\s(?:or|and) (?:over|older|above|more){not_years}", False, True, False),
            (rf"\b(?:aged?|ages)\s+{_NUM}\s(?:or|and) (?:under|younger|below){not_years}", True, True, True),
            (rf"\b(?:aged?|ages)\s+{_EXCLUSIVE_HIGH}\s?{_NUM}{not_years}", True, True, False))
    for pattern, upper, low_in, high_in in open_ends:
        for m in re.finditer(pattern, sentence, re.IGNORECASE):
            if any(a <= m.start() < b for a, b in ranges):
                continue
            value = _number(next(g for g in m.groups() if g))
            out.append((0.0, value, low_in, high_in) if upper else (value, math.inf, low_in, high_in))
    return tuple(out)


def _inside(value: float, band: Band) -> bool:
    low, high, low_in, high_in = band
    return (low < value or (low_in and low == value)) and (value < high or (high_in and value == high))


_AGE_WORDS = re.compile(r"\b(aged?|ages|old|older|younger)\b", re.IGNORECASE)


def band_width(question: str, sentence: str) -> float | None:
    """How narrow the tightest band is, of those the sentence states that contain the question's own quantity
    ("6 hours late" in "5 hours to less than 8 hours": 3); None when it states none. The narrowest band
    of the context answers the case: "3 hours or more" contains 6 hours too, but says less."""
    # an age meets the years of a sentence about ages ("aged 70 years or over"), not a length of service
    ages = ("age", "year") if _AGE_WORDS.search(sentence) else ("age",)
    widths = [band[1] - band[0] for unit, value in _quantities(question)
              for read in (ages if unit == "age" else (unit,))
              for band in _bands(sentence, read) if _inside(value, band)]
    return min(widths) if widths else None


def in_stated_band(question: str, sentence: str) -> bool:
    """Whether the sentence states any band the question's own quantity falls in (see band_width)."""
    return band_width(question, sentence) is not None


def sentence_types(text: str) -> set[str]:
    return {t for t, p in SENTENCE_TYPES.items() if p.search(text)}


def type_words(question: str, qtype: str) -> set[str]:
    """The words of a time question's asking phrase ("how many *days*", "what *year*", "which *age*"): they
    name the type, which any sentence of that type carries, not what the question is about."""
    if qtype not in ("duration", "date"):  # an amount's phrase can hold its subject ("the deferral limit")
        return set()
    found = dict(QUESTION_TYPES)[qtype].search(question)
    return set(terms(found.group(0))) if found else set()


def focus_terms(question: str, facet_terms: set[str], qtype: str = "") -> list[str]:
    """The question's telling terms: not question words, stopwords, the words of its type, or the facets
    that select the article; the money words of an amount or percentage question only when nothing else
    is left."""
    skip = QUESTION_WORDS | facet_terms | STOPWORDS | FILLER_WORDS.get(qtype, frozenset()) | type_words(question, qtype)
    focus = list(dict.fromkeys(t for t in terms(question) if t not in skip and len(t) > 1))
    if all(t in PARTICLES for t in focus):
        return []
    family = FAMILY_WORDS.get(qtype, frozenset())
    return [t for t in focus if t not in family] or focus


# A -sion noun and its verb, which the stemmer keeps apart (and the shortest words whose pairing is a
# coincidence: pension / pend, tension / tend): (noun ending, verb ending, shortest noun).
_NOUN_VERB = (("ision", "ide", 7), ("usion", "ude", 7), ("ension", "end", 9), ("ansion", "and", 9))


def derived_words(word: str) -> set[str]:
    """A word's noun or verb partner: decision / decide, inclusion / include, extension / extend."""
    out = set()
    for noun, verb, shortest in _NOUN_VERB:
        if word.endswith(noun) and len(word) >= shortest:
            out.add(word[:-len(noun)] + verb)
        elif word.endswith(verb) and len(word) - len(verb) + len(noun) >= shortest:
            out.add(word[:-len(verb)] + noun)
    return out


def says_derived(partners: set[str], text: str) -> bool:
    """Whether the text writes one of the partner words, inflected ("decided", "deciding", "extensions") but
    not merely sharing a stem ("intensive" is not "intension")."""
    forms = {f for p in partners for f in (p, p + "s", p + "es", p + "d", p + "ed", p + "ing",
                                           *((p[:-1] + "ing",) if p.endswith("e") else ()))}
    return any(w in forms for w in words(text))


def with_compounds(text: str) -> set[str]:
    """A text's terms, plus each pair of adjacent words written as one ("set up" -> "setup"), so that a
    compound spelt open in the question and closed in the answer (or the reverse) still matches."""
    seq = terms(text)
    return set(seq) | {a + b for a, b in pairwise(seq)}


WHAT = {"amount": "the amount", "percent": "the percentage", "date": "when", "duration": "how long",
        "identifier": "the number or address",
        "count": "how many"}

# "What exchange-rate margin does it add?", "how many crews do they keep?": a thing asked for by name (up
# to three words, then the verb), which an answer states by that name. Not "which": it picks one of a
# kind, and the answer names the one ("which extra do I need" -> "httpx[socks]"), not the kind; not a
# name that opens with a function word ("what *if my card* is stolen", "what *does Contoso* do").
# ("*at* what point / stage / moment does ...": when, or on what condition, not a thing named "point")
_NAMED_ASK = re.compile(r"(?<!\bat )\b(what|how many) (?!(?:if|of|about|does|do|did|is|are|was|were|will|would|can|"
                        r"could|should|else|happens|kind|sort|type|the|a|an|my|your|our|their|this|that)\b)"
                        r"((?:[a-z][a-z-]* ){0,2}?[a-z][a-z-]*) (do|does|did|is|are|was|were|"
                        r"will|would|can|could|should|must|has|have|applies|apply)\b", re.IGNORECASE)
# A name that ends in a word of the question's type or a quantity ("what *annual fee*", "how many *business
# days*", "what *range* can I set"): a figure answers it, and the type check reads it. A name that asks for
# the required data is answered by the fields to collect, not by a claim.
_TYPE_NOUNS = frozenset(terms("time times day days date dates month months year years age ages hour hours minute "
                              "minutes week weeks amount amounts number numbers percent percentage price prices cost "
                              "costs fee fees charge charges rate rates sum kind kinds type types sort sorts range "
                              "ranges limit limits maximum minimum total size length weight height distance speed "
                              "temperature level levels period periods deductible deductibles copay copays deposit "
                              "deposits apr apy discount discounts penalty penalties night nights"))
_NAME_ENDS = frozenset({"after", "before", "on", "in", "of", "for", "per", "at", "to", "from", "with", "by", "during",
                        "under", "within"})
_DATA_NOUNS = frozenset(terms("information info details detail data documents document documentation paperwork "
                              "fields field else people person persons"))


# British and American spellings: one form for both sides of a comparison ("anaesthesia" / "anesthesia",
# "hospitalisation" / "hospitalization", "colour" / "color", "licence" / "license", "centres" / "centers",
# "programme" / "program", "cheque" / "check", "catalogue" / "catalog"). Applied to both sides, a rule can
# only make two words meet, never part them; so each is kept to the suffixes where the spellings differ (a
# review: "poet" met "pet", "prize" met "prise", "tour" met "tor").
_END = r"(?=s?\b)"  # at the end of a word, or before its plural "s"
_SPELT = ((re.compile(r"ae"), "e"),  # not "oe": "poet" is no "pet", "canoe" no "cane"
          # the suffixes only, after a stem of four letters ("organisation", "realised"; "prise" is no "prize")
          (re.compile(r"(?<=[a-z]{4})is(?=(e|ed|es|ing|ation|ations|er|ers)\b)"), "iz"),
          (re.compile(r"(?<=[a-z]{2})our(?=(s|ed|ing|ite|ites|able|al|ful)?\b)"), "or"),  # "colour"; not "tour"
          (re.compile(r"ence" + _END), "ense"), (re.compile(r"tre" + _END), "ter"), (re.compile(r"mme" + _END), "m"),
          (re.compile(r"\bcheque"), "check"), (re.compile(r"ogue" + _END), "og"))


def spelt(text: str) -> str:
    """Lower-case text spelt one way for British and American forms, before its terms are taken."""
    text = text.lower()
    for pattern, repl in _SPELT:
        text = pattern.sub(repl, text)
    return text


def named_asks(question: str, skip: set[str]) -> list[tuple[str, str]]:
    """The things the question asks for by name, as (the name as asked, the word an answer must state):
    the last word, before any preposition, that is not a particle ("roll-over" -> "rollover", "how many
    *days* after move-in"). None when that word is a type or quantity noun, asks for the required data, or
    is in `skip` (the facets that chose the article); nor for a plural after "what" ("what payment
    methods"): a list of the kind answers it, naming each one."""
    out = []
    for found in _NAMED_ASK.finditer(asking_part(question)):
        written = [w for w in found.group(2).lower().split()
                   if stem(w) not in QUESTION_WORDS and not w.endswith("ly")]  # "what *exactly* is covered"
        if cut := next((i for i, w in enumerate(written) if w in _NAME_ENDS), None):
            written = written[:cut]  # "how many *days* after move-in": the name ends at its preposition
        while written and all(t in PARTICLES for t in terms(written[-1]) or [""]):
            written.pop()
        if not written:
            continue
        head = written[-1]
        word = stem(head.replace("-", ""))
        plural = found.group(1).lower() == "what" and re.search(r"[^su]s$", head) is not None
        if not plural and word not in _TYPE_NOUNS | _DATA_NOUNS | skip and not set(terms(head)) & _TYPE_NOUNS:
            out.append((found.group(2), word))
    return out


# "Does Contoso *install* heat pumps?", "will it *pay for* acupuncture?": whether the provider offers a thing,
# asked by naming the thing. An answer about the provider that never names it does not say whether: the
# KB's nearest topic answered instead (its boiler warranty for a heat-pump question). Only a clause that
# opens with the verb's auxiliary and has someone other than the asker as its subject:
# not "can *I* pay for a flight with ..." (how the asker may pay), nor "you" asked to do something ("could
# you provide a summary": a request); "do you offer ..." asks the provider.
_CLAUSE = r"(?:^|[.?!,;:]\s*|\s[-–—]\s+|\b(?:and|but|also|plus|or)\s+)"  # where a clause may open
_OFFER_ASK = re.compile(_CLAUSE + r"(?:(?:do|does|did)\s+(?!(?:i|we)\b)|(?:will|would|can|could)\s+(?!(?:i|we|you)\b))",
                        re.IGNORECASE)
# "charge" asks whether a price is charged only before one ("charge a fee to ...", "charge interest on ..."); not
# "charge my card on the 1st", "charge a lot for shipping", "does it charge fast"
_CHARGED = (r"charges?(?=\s+(?:(?:an?|any|extra|additional)\s+)?(?:fees?|interest|penalty|penalties|surcharges?|"
            r"commissions?|charges?)\b)")
# A kind of payment is named by its word or the words an answer pays it in (a review: "We reimburse up to £50"
# answers "Does it pay compensation?", "The account pays 4.1% AER" whether it pays interest). The kind alone is
# the thing: "pay interest *monthly*", "pay bonuses *quarterly*" ask about the interest, the bonuses.
_PAYMENTS: dict[str, frozenset[str]] = {terms(kind)[0]: frozenset(terms(f"{kind} {namings}")) for kind, namings in {
    "interest": "aer apr apy", "compensation": "compensate reimburse reimbursement payout", "dividend": "",
    "bonus": "incentive", "rebate": "cashback", "refund": "reimburse reimbursement", "damages": "compensation",
    "cashback": "rebate", "reward": "points"}.items()}
# "pay" asks whether a sum is paid only before one of those kinds ("pay interest on ...", "pay me compensation
# for ..."); not "pay the vet", "pay for grooming" (a thing covered: `pays? for`), "pay it off"
_PAID = (r"pays?(?=\s+(?:(?:me|us|you|them|him|her)\s+)?(?:(?:an?|any|extra|additional)\s+)?(?:"
         + "|".join(_PAYMENTS) + r")\w*\b)")
_OFFER_VERB = re.compile(rf"\b(offers?|{_CHARGED}|{_PAID}|sells?|installs?|includes?|provides?|gives?|supply|"
                         r"supplies|lends?|comes? with|pays?(?: out)? for|covers?)\s+(?=([^?.!;:–—]{1,160}))",
                         re.IGNORECASE)
_GIVING = frozenset(terms("offer give lend"))  # "give *students* a discount": the thing comes after its receiver
SUBJECT_WORDS = 5  # "does *the Contoso everyday account* come with": the furthest a verb stands from its auxiliary
_WORD = r"[\w'’/%()-]+|,"
# After "and" or a comma, the words that open another clause ("..., and what is the excess?"), not a list item
_CLAUSE_START = frozenset(words("what how when where which who why whether is are was were do does did can could will "
                                "would should must may it they there i we you he she"))
# Where the thing's name ends ("a discount *if* I pay a year up front", "a courtesy car *while* ...")
_THING_ENDS = frozenset(words("if when while whenever for to so because after before in on at from with during "
                              "but as than that which who once unless until by per each every of toward towards into "
                              "like outside inside within across between except"))
# Words that are no part of a thing's name: articles, pronouns, quantifiers ("give *me a* discount")
_NOT_THING = frozenset(words("a an any some the me us you them him her his my our your their its it this that "
                             "these those more extra additional other another anything something both either all"))
# Words of manner that name nothing ("does it install dependencies *automatically*", "cover *only* accidents"),
# and "free": whether it costs is answered by a price as well ("a $3 fee")
_MANNER = frozenset(words("automatically only also still even ever really actually just free"))
# Who receives, in "provide *staff* with a laptop": the thing is after "with" ("provide a laptop with the
# job": before it)
_RECEIVERS = frozenset(terms("staff employees employee workers customers customer members member clients client "
                             "students student tenants tenant residents resident users user patients patient parents "
                             "families people"))
# A name that only says which part of the thing ("the *cost of* a replacement phone", "*coverage for* IVF",
# "*access to* a gym", "2 free *days of* volunteering leave"): the thing is what follows
_PERIODS = frozenset(terms("year years month months week weeks day days night nights hour hours time times"))
_PART_OF = frozenset(terms("cost costs price prices fee fees coverage cover support option options access budget "
                           "allowance repairs repair help")) | _PERIODS
# A last word that counts the thing out ("hydrotherapy *sessions*", "physio *visits*"): the words before it name
# the thing. Not a plan, scheme, service, system, fee or expense: a review found those carry the meaning ("a
# family *plan*" is not answered by "family leave", "a monthly *fee*" not by "monthly statements").
_GENERIC_HEADS = frozenset(terms("session sessions visit visits appointment appointments"))
# Information asked for, not a thing offered ("does it include a summary", "give me the steps")
_INFORMATION = frozenset(terms("summary overview steps step details detail information info explanation list "
                               "rundown breakdown example examples instructions guide description answer"))
# A thing named only as money ("give any cash toward a wedding"): an amount in the answer names it. A price
# charged ("charge a fee to switch"): by any word for a price ("switching costs $10") or said to be none
# ("switching is free"); an amount alone is not enough (a contribution limit's says nothing of a fee)
_MONEY_THINGS = frozenset(terms("money cash funds"))
_PRICE_THINGS = frozenset(terms("fee fees charge charges cost costs price penalty surcharge"))


def offered_things(question: str, skip: set[str]) -> list[tuple[str, list[str]]]:
    """The things a yes/no question asks whether the provider offers, as (the name as asked, its terms an
    answer must state); each of a list ("x-rays and acupuncture") is asked. The provider's own words
    (`skip`: the facets that chose the article) are not the thing, nor is a verb that is a capitalised
    word of a name (a provider called "Contoso Home *Cover*")."""
    out: list[tuple[str, list[str]]] = []
    text = re.sub(r"\[[A-Z_]+\]", " ", asking_part(question))  # masked data ([EMAIL]) names nothing
    for clause in _OFFER_ASK.finditer(text):
        after = text[clause.end():]
        found = next((v for v in _OFFER_VERB.finditer(after) if len(after[:v.start()].split()) <= SUBJECT_WORDS
                      and not (v.group(1)[0].isupper() and set(terms(v.group(1))) & skip)), None)
        if found is None or re.search(r"[.?!,;:]", after[:found.start()]):
            continue  # no offering verb in this clause
        if found.group(1).lower() in ("pay", "pays"):  # (_PAID) the kinds of payment it names, alone
            # not where the question names a customer as who pays ("Do *students* pay interest while studying?")
            if not set(terms(after[:found.start()])) & _RECEIVERS:
                tokens = re.findall(_WORD, found.group(2))
                for i, word in enumerate(tokens):
                    if word.lower() in (",", "and", "or") and i + 1 < len(tokens) \
                            and tokens[i + 1].lower() in _CLAUSE_START:
                        break  # "..., and how do I get a refund?": another question (the second review)
                    if (kind := next(iter(terms(word)), "")) in _PAYMENTS and (word, [kind]) not in out:
                        out.append((word, [kind]))
            continue
        for name in thing_names(re.findall(_WORD, found.group(2)), giving=bool(set(terms(found.group(1))) & _GIVING)):
            _add_thing(out, name, skip)
    return out


def _add_thing(out: list[tuple[str, list[str]]], name: list[str], skip: set[str]) -> None:
    # a hyphenated word as one ("pre-existing" meets "preexisting"; "pre-existing" in a claim is joined too)
    wanted = [t for w in name for t in terms(w.replace("-", "")) if t not in skip | QUESTION_WORDS | PARTICLES
              and not t.isdigit()]
    if len(wanted) > 1 and wanted[-1] in _GENERIC_HEADS:
        wanted = wanted[:-1]
    if wanted and not set(wanted) & _INFORMATION and (" ".join(name), wanted) not in out:
        out.append((" ".join(name), list(dict.fromkeys(wanted))))


def thing_names(tokens: list[str], giving: bool) -> list[list[str]]:
    """The names of the things, from the words after the verb: up to where the name ends, each of a list
    ("x-rays, MRI scans and acupuncture"), past a name of its part ("the cost of ..."), without a particle
    ("give *out* toasters"), the pronouns and articles around it or a period after it ("2 sessions *a
    year*") or a dash, without a manner word or whose it is ("my dog's"). Of a receiver and a thing ("give
    students a discount", `giving`; "provide staff with a laptop") the thing; of a thing and its complement
    ("pay for grooming my cat") the thing. Not read: the passive ("is my pet's surgery covered?" names the
    asker's case, not a thing offered), "if" clauses (conditions), lists of clauses."""
    names: list[list[str]] = []
    segments: list[list[str]] = [[]]

    def close() -> None:
        kept = [seg for seg in segments if seg and not {t for w in seg for t in terms(w)} <= _PERIODS]
        if kept:
            names.append(kept[-1] if giving else kept[0])

    for i, w in enumerate(tokens):
        low = w.lower()
        if low in (",", "and", "or", "&", "nor"):
            if i + 1 < len(tokens) and tokens[i + 1].lower() in _CLAUSE_START:
                break  # "..., and what is the excess?": another question
            if any(segments):
                close()
                segments = [[]]
            continue
        if low in _THING_ENDS or not low.strip("-"):  # a word that ends the name, or a dash
            last = next((seg for seg in reversed(segments) if seg), [])
            if last and ((low in ("of", "for") and set(terms(last[-1])) <= _PART_OF)
                         or (low == "to" and last[-1].lower() == "access")):
                segments = [[]]  # "the cost of a replacement phone": the phone is the thing
                continue
            if low == "with" and (not last or set(terms(last[-1])) <= _RECEIVERS):
                segments = [[]]  # "provide staff with a laptop": the laptop is the thing
                continue
            break
        if low in _NOT_THING:
            if segments[-1]:
                segments.append([])
            continue
        if (not any(segments) and set(terms(w)) <= PARTICLES) or low in _MANNER:
            continue
        if re.search(r"['’]s$|s['’]$", low):
            continue  # whose it is ("my dog's physiotherapy"), not what
        segments[-1].append(w)
    close()
    return names


def of_type(sentence: str, kinds: set[str], accepted: set[str], priced: bool) -> bool:
    """Whether a sentence (of `kinds`) is of a type the question accepts. A bare number prices nothing
    (`priced`: a price question): "it starts within 1 business day", "a 3-year term", "my daughter is 9"
    do not answer what it costs; "25,000 points" does. The answerability check and the
    extractive ranking both read types through it."""
    matched = kinds & accepted
    return bool(matched) and not (matched == {"count"} and priced and not _PRICE_UNIT.search(sentence))


# Where a period starts: "paid within 3 days *after approval*" times the payment, not the approval. A question
# that names no start of its own ("how long does approval take?") is not answered by a period that only
# starts at its subject.
_STARTS = re.compile(r"\b(after|following|upon|once)\s+((the|a|an|its|their|your|his|her|my)\s+)?[\w-]+",
                     re.IGNORECASE)
TIMED = {"duration", "date"}


def assess(question: str, claims: list[str], context_text: str, facet_terms: set[str],
           alternatives: dict[str, list[str]] | None = None) -> Answerability:
    """Whether the answer's claims answer the question's type and focus, and what is missing if not.
    `alternatives`: the synonyms the KB lists for the question's terms (a thing named by its synonym is
    named)."""
    qtype = question_type(question)
    focus = focus_terms(question, facet_terms, qtype)
    out = Answerability(qtype, focus)
    if qtype in ACCEPTS:
        accepted = accepted_types(question, qtype)
        priced = price_question(question)
        typed = [c for c in claims if of_type(c, sentence_types(c), accepted, priced)]
        family = FAMILY_WORDS.get(qtype, frozenset())
        if focus and set(focus) <= family:
            wanted = set(family)  # "how much does it charge": any fee, charge, cost or rate answers
        else:
            wanted = set(focus) | {
                t for t in with_compounds(question) - set(terms(question))
                if any(t.startswith(f) or t.endswith(f) for f in focus)}
        partners = {d for w in words(question) if stem(w) in focus for d in derived_words(w)}
        timed = qtype in TIMED and not _STARTS.search(asking_part(question))
        on_focus = [c for c in typed if not focus or with_compounds(_STARTS.sub(" ", c) if timed else c) & wanted
                    or says_derived(partners, c)]
        what = what_about(qtype, subject_phrase(question, focus))
        if not on_focus:
            out.missing.append(what)
        elif qtype in FIGURES and (asked := question_years(question)) and (stated := figure_years(on_focus)) \
                and not asked & stated:
            # "the 2026 limit" answered with the 2025 one: a figure given for another year does not answer
            out.missing.append(f"{what} in {' or '.join(sorted(asked))}")
    stated = set().union(*(with_compounds(c) for c in claims)) if claims else set()
    alternatives = alternatives or {}
    for name, word in named_asks(question, facet_terms):
        if not names(word, name, stated, claims, alternatives, asked_by_name=True):
            out.missing.append(f"the {name.lower()}")  # "the exchange-rate margin": never named in the answer
    offered = offered_things(question, facet_terms)
    # each claim read once: its terms, whether it gives an amount
    read = [(c, with_compounds(c), "amount" in sentence_types(c)) for c in claims] if offered else []
    for name, wanted in offered:
        # named in one claim: "a credit card" is not named by "a line of credit" and "card transactions"
        if not any(all(names(w, name, terms_of, [c], alternatives) or (w in _MONEY_THINGS and priced)
                       or bool(_PAYMENTS.get(w, frozenset()) & terms_of)
                       or (w in _PRICE_THINGS and (terms_of & _PRICE_THINGS or _FREE.search(c))) for w in wanted)
                   for c, terms_of, priced in read):
            out.missing.append(f"anything about {name}")  # "whether it installs heat pumps": never named
    return out


def names(word: str, name: str, stated: set[str], claims: list[str],
          alternatives: dict[str, list[str]] | None = None, asked_by_name: bool = False) -> bool:
    """Whether the claims (their terms: `stated`) name a word of the question's `name`: as written, in the
    other spelling ("behaviour" / "behavior"), as its noun or verb partner ("decision" / "decided"), or by
    a synonym the KB lists for it ("SSO" / "single sign-on")."""
    # the word as written in the name, a hyphenated one whole ("pre-existing" is the term "preexist")
    written = [w.replace("-", "") for w in re.findall(r"[\w'’-]+", name) if stem(w.replace("-", "").lower()) == word]
    respelt = {t for w in written for t in terms(spelt(w))}
    as_such = not (asked_by_name and only_as_past_participle(word, written, claims)) and (
        word in stated or bool(respelt and respelt <= with_compounds(spelt(" ".join(claims)))))
    return as_such or any(
        terms(alt) and all(t in stated for t in terms(alt)) for alt in (alternatives or {}).get(word, [])) or any(
        says_derived(derived_words(w), " ".join(claims)) for w in words(name) if stem(w) == word)


def only_as_past_participle(word: str, written: list[str], claims: list[str]) -> bool:
    """Whether the claims write the asked thing's stem only as a past participle ("3 months have *passed*" for
    "how many guest *passes*"): the stemmer makes them one term, but the answer names no such thing. Not
    where the question writes that form too, nor a word that merely ends in -ed ("bed", "shed"). For a
    thing asked for by name (named_asks) only: whether a provider offers a thing is answered by its
    participle ("Does Contoso offer refunds?" -- "Unused months are refunded")."""
    if not written or any(w.lower().endswith("ed") for w in written):
        return False
    forms = [w for c in claims for w in words(c) if stem(w) == word]
    return bool(forms) and all(w.endswith("ed") and w != word and w != stem(w) for w in forms)


SUBJECT_SPAN = 10  # words: a longer stretch of the question is read as its focus words alone


# Words that open a clause or a phrase of their own: "how long *until* I can use the money", not "how long for until"
_OPENERS = frozenset(words("after before until till since if when whenever while during from to for of on in at by "
                           "with about within once unless"))


def what_about(qtype: str, subject: str) -> str:
    """What a person is told the knowledge base does not state: "how long for a transfer abroad", "how long
    until I can use the money again"."""
    if not subject:
        return WHAT[qtype]
    return f"{WHAT[qtype]} {subject}" if subject.split()[0].lower() in _OPENERS else f"{WHAT[qtype]} for {subject}"


def subject_phrase(question: str, focus: list[str]) -> str:
    """What the question asks about, in its own words, for the user to read: the stretch of its asking part
    from the first focus word to the last ("approve or deny a 401(k) hardship withdrawal request", not
    "approve deny request"), without years (said apart) or masked data; the focus words alone when the
    stretch is long."""
    wanted = set(focus)
    tokens = [t for t in asking_part(question).split() if not re.fullmatch(r"\W*\[[A-Z_]+\]\W*", t)]
    hits = [i for i, t in enumerate(tokens) if set(terms(t)) & wanted and not _YEAR.search(t)]
    if hits and hits[-1] - hits[0] < SUBJECT_SPAN:
        span = [t for t in tokens[hits[0]:hits[-1] + 1] if not _YEAR.fullmatch(t.strip(".,;:!?\"'()"))]
        return " ".join(span).strip(" .,;:!?\"'")
    return " ".join(dict.fromkeys(w for w in words(question) if stem(w) in wanted and not _YEAR.match(w)))


# A year, not an amount ("$2000"), a model number or a birth year ("born in 1961", "turned 50 in 2024")
_YEAR = re.compile(r"(?<![$\d,.])(?<!born in )(?<!born )(?<!since )(?<!model )(?<!turned \d\d in )"
                   r"\b((?:19|20)\d\d)\b(?![\d,.]\d)")
_YEAR_RANGE = re.compile(r"\b((?:19|20)\d\d)\s*(?:-|–|to|through|thru)\s*((?:19|20)\d\d)\b")
FIGURES = {"amount": {"amount", "percent"}, "percent": {"percent"}}  # questions whose answer is a yearly figure


def years(text: str) -> set[str]:
    """The years a text names, ranges included ("plan years 2024-2026" names 2025)."""
    found = set(_YEAR.findall(text))
    for start, end in _YEAR_RANGE.findall(text):
        if int(start) <= int(end) <= int(start) + 50:
            found |= {str(y) for y in range(int(start), int(end) + 1)}
    return found


@lru_cache(maxsize=512)  # asked once per candidate sentence of an answer (exact_match): same question each time
def asking_part(question: str) -> str:
    """The sentences of a question that ask (a question mark, or an asking phrase), without those that set
    the scene ("Our baby is due on 14 September 2026. How much leave can I take?"); the whole question
    when none stands out."""
    parts = re.split(r"(?<=[.!?])\s+", question.strip())
    asking = [s for s in parts if s.rstrip().endswith("?") or any(p.search(s) for _, p in QUESTION_TYPES)]
    return " ".join(asking) if asking else question


# Where a question asks a second thing: "..., and what's the most they pay?", "... fee, and is it
# refundable?" (a conjunction followed by a question word), or a second question mark.
# A verb after "and" asks again only with its subject ("and is it refundable", "and can the child change
# planes"); "if I close my account and have a loan" goes on with the same clause.
_NEXT_ASK = re.compile(r"(?:,\s*|;\s*|\s+)(?:and|but|also|plus)\s+(?=(?:how|what|what's|when|where|which|who|why|"
                       r"by when)\b|(?:is|are|can|could|do|does|did|will|would|should|must|may)\s+(?:i|you|we|"
                       r"they|he|she|it|there|this|that|these|those|the|my|your|our|their|his|her|its)\b)|"
                       r"(?<=\?)\s+", re.IGNORECASE)
_ASKS = re.compile(r"\?|\bmust\b|" + QUESTION_WORD, re.IGNORECASE)


def question_parts(question: str) -> list[str]:
    """The separate asks of a question ("after how long is a bag lost, and what's the most they pay?" asks
    two): each is answered by its own sentence. One part when the question asks one thing; a bare "how?" or
    "and when", or a part that asks nothing ("Explain the difference between savings"), is no ask of its own."""
    parts = [p.strip(" ,;") for p in _NEXT_ASK.split(asking_part(question))]
    parts = [p for p in parts if p]
    asks = len(parts) > 1 and all(len(p.split()) >= 3 and _ASKS.search(p) for p in parts)
    return parts if asks else [question]


# A calendar day: "May 12, 2026", "12 May 2026", "2026-05-12", "5/12/2026".
_FULL_DATE = re.compile(r"\b(" + _MONTH + r"\s+\d{1,2}(st|nd|rd|th)?,?\s+|\d{1,2}(st|nd|rd|th)?\s+(of\s+)?" + _MONTH
                        + r",?\s+)(19|20)\d\d\b|\b(19|20)\d\d-\d\d-\d\d\b|\b\d{1,2}/\d{1,2}/(19|20)\d\d\b",
                        re.IGNORECASE)
EVENT_QUESTIONS = {"yesno", "procedure", "party"}  # they ask whether, how or who, not for a figure of a period
# ... unless they ask about a figure on that day ("Is the fee still $75 on January 1, 2031?"; not "can I pay
# the fee by check on March 3, 2027?", which is about paying)
_FIGURE_WORDS = re.compile(r"\b(is|are|will|would|does|do) (the|my|your|their|its|this|that) [\w'() -]{0,40}?\b("
                           r"fees?|costs?|prices?|rates?|limits?|caps?|amounts?|charges?|premiums?|deductibles?|"
                           r"percent(age)?|allowances?|minimums?|maximums?)\b", re.IGNORECASE)


def question_years(question: str) -> set[str]:
    """The years a question asks about: those of its asking sentences, dates included ("the fee in
    January 2031", "the limit as of 1/1/2026"), not those of the sentences that set the scene ("I turned 50
    in 2024.", "The baby is due on 14 September 2026."). In a question that asks whether, how or who, a
    calendar day is when something happens to the asker ("Can they pay the vet directly for my surgery on
    May 12, 2026?"), not a period the knowledge base must state a rule for, unless the sentence names a
    figure ("Is the fee still $75 on January 1, 2031?")."""
    asking = asking_part(question)
    if question_type(question) in EVENT_QUESTIONS and not _FIGURE_WORDS.search(asking):
        asking = _FULL_DATE.sub(" ", asking)
    return years(asking)


def figure_years(claims: list[str]) -> set[str]:
    """The years the claims give figures for: a claim counts only if it has a figure besides its years
    (\"Starting in 2026, 401(k) catch-up must be Roth\" gives no figure for 2026)."""
    return {y for c in claims if sentence_types(_YEAR_RANGE.sub(" ", _YEAR.sub(" ", c))) & {"amount", "percent"}
            for y in years(c)}


def unnamed_facets(detected: dict[str, list[str]], article_metadata: dict[str, object]) -> list[str]:
    """Facet values the question names that the answer's article does not carry (the search had to drop
    them to find anything): the KB has nothing for them ("Corvane", "grant or loan": one entry per facet).
    Topics are matched loosely, so only the other facets (record keeper, plan type) count."""
    missing = []
    for facet, values in detected.items():
        if facet == "topic" or not values:
            continue
        have = article_metadata.get(facet)
        have_values = have if isinstance(have, list) else [have]
        if any(is_universal(v, facet) for v in have_values if v is not None):
            continue  # "plan_type: all aid" carries whichever plan type the question names
        if not set(values) & {str(v) for v in have_values if v is not None}:
            missing.append(" or ".join(values))
    return missing
