"""The question it asks, out of the question as it was sent.

People paste a question with what surrounds it: a greeting and a sign-off with their name, an e-mail's
subject line and reply marks, quotes, emoji, a frame ("I was wondering, ..."), their contact details. None of
it is asked, and all of it moved the answer: MiniLM reads the marks as words and the answer's focus counted
them (probes in BENCHMARKS.md: up to a sixth of the answers changed decision or article). It comes off here,
before anything reads the question; what the question says stays (each rule has its counter-examples in
tests/test_engine.py: "Is my bonus sent from my employer taxable?", "> 50 employees: ...", "2**10").
"""

from __future__ import annotations

import re

from ..kb.text import terms
from .privacy import MASK_TOKEN, NUMBER_TOKEN
from .records import MIN_QUESTION

# A greeting or a thank-you around the question ("Hi, ...", "Quick question: ...", "... Thanks!") and an
# agent's frame ("A customer is asking: ..."): words the knowledge base never uses, so each one lowered the
# share of the question an answer states (its confidence) and could send a well-answered question to
# `uncertain`. They ask nothing; they come off. An agent's frame is a support role passing the question on
# (generic roles of a caller, any KB), not "my spouse asked" or "the IRS wants to know": their words are the
# question's.
_ROLE = (r"(?:(?:a|an|the|my|our|this|one)\s+)?(?:customer|caller|client|member|participant|user|policyholder|"
         r"account holder|tenant|resident|patient|student|passenger|employee|applicant|someone|somebody|person)")
_OPENING = re.compile(
    r"^(?:(?:hi|hello|hey|hiya|greetings|good (?:morning|afternoon|evening|day))(?: there| team| all| everyone"
    r"| folks)?(?![\w-])[\s,:;!?.\-\u2013\u2014]*|(?:quick|simple|short|one|a) question\s*[,:;!.\-\u2013\u2014]+\s*"
    r"|question\s*[:\-\u2013\u2014]+\s*"
    # the asker's own frame and courtesies: "I was wondering, ...", "Can you tell me: ...", "I'd like to know
    # whether ...", "Sorry to bother you. ...", "Hope you're well. ..."
    r"|(?:i was |i'm |i am |just )?wondering(?:\s*[,:\-\u2013\u2014]+\s*|\s+(?=(?:if|whether)\b))"
    r"|(?:can|could|would) you (?:please )?(?:tell me|let me know)(?:\s*[,:\-\u2013\u2014]+\s*|\s+(?=(?:if|whether)\b))"
    r"|(?:please )?(?:tell me|let me know)\s*[,:\-\u2013\u2014]+\s*"
    r"|please[\s,]+(?=(?:what|when|where|who|which|why|how|can|could|do|does|is|are|will|would|should)\b)"
    r"|i(?:'d| would) (?:like|love) to know(?:\s*[,:\-\u2013\u2014]+\s*|\s+(?=(?:if|whether)\b))"
    r"|(?:sorry to (?:bother|trouble) you|(?:i )?hope (?:you're|you are|this finds you|all is)(?: doing)? well)"
    r"\s*[,.!:;\-\u2013\u2014]+\s*"
    # a forwarded e-mail's subject and a flag of urgency: "Re: ...", "URGENT: ...", "[urgent] ..." (not
    # "urgent - care visits" or "(urgent) care": there the word is the question's)
    r"|(?:re|fwd?)\s*:\s*|(?:urgent|asap|important)\s*[:!]+\s*"
    r"|\[(?:urgent|asap|important|external|ext|re|fwd?)\](?=\s)\s*[:\-]?\s*"
    # a Q&A form's label: "Q: ..." (a reply's quote marks come off each line in `validate`)
    r"|q\s*:\s*"
    # an agent passing a question on: "A customer is asking: ...", "Caller wants to know whether ..."
    r"|" + _ROLE + r"\s+(?:is asking|asks|asked|wants to know|would like to know|wonders|is wondering|needs to know)"
    r"(?:\s*[:\-\u2013\u2014]+\s*|\s*,\s*|\s+(?=(?:if|whether)\b)))",
    re.IGNORECASE)
# ... and what an e-mail or a phone appends: a sign-off with the sender's name ("Kind regards, Sam Taylor"),
# "Sent from my iPhone", a smiley.
_SIGN_OFF = (r"(?:thanks|thank you|thx|cheers|many thanks|(?:thanks|thank you) (?:so much|a lot|in advance)"
             r"|(?:(?:kind|best|warm|warmest) )?regards|best wishes|best|sincerely|yours (?:sincerely|truly)"
             r"|all the best|take care)")
_CLOSING = re.compile(
    r"(?<=[?.!,;\-\u2013\u2014])\s*(?:" + _SIGN_OFF + r"(?:\s*,?\s*(?-i:[A-Z][\w'\-]*(?:\s+[A-Z][\w'\-]*){0,2}))?"
    r"|please (?:help|advise)|any help (?:is )?(?:much |greatly )?appreciated|appreciate (?:it|any help)"
    r"|[:;]-?[()])[\s!.:)]*$", re.IGNORECASE)
# (as a phone writes it, capitalised: "is my bonus sent from my employer taxable" is a question)
_DEVICE = re.compile(r"\s*\b(?:Sent from my|Get Outlook for)\b[\w ]{1,30}$")
# pictographs carry nothing a knowledge base states ("... for a while? \U0001F64F")
# (emoji, with their joiners and variation selectors; not the check marks and ballot boxes, "✓" or "☐" in a
# question can be its content, nor a joiner between letters of Indic scripts, which is spelling)
_EMOJI = ("\U0001F000-\U0001FAFF\u2600-\u260F\u2613-\u26FF\u2700-\u2712\u2715\u2716\u2719-\u27BF"
          "\u2B50\u2B55\u2B06\u2B07\u2B05\u2B1B\u2B1C")
_PICTOGRAPHS = re.compile(f"[{_EMOJI}](?:[\u200D\uFE0F]*[{_EMOJI}])*\uFE0F?")


# A question pasted in quotes ("A customer asks: "Can I ...?"") and a run of marks ("...??", "?!"): the
# sentence embedding reads the marks as words, and a quoted or doubly marked question scored up to 0.2
# lower than the same question plain (an answered question went out of scope). The quotes come off only
# when they enclose the whole question and no other quote of the same kind stands inside it (an
# apostrophe is none).
_QUOTES = {'"': '"', "\u201c": "\u201d", "\u201e": "\u201c", "'": "'", "\u2018": "\u2019", "\u00ab": "\u00bb"}
_MARK_RUN = re.compile(r"[?!]{2,}")
_BOLD = re.compile(r"(?<![\w*])\*\*(?=\S)([^*]+?)(?<=\S)\*\*(?![\w*])")
# A reply's quote marks at the start of each line ("> Hi team,\n> How do I ...?"), not a comparison ("> 50 staff")
_REPLY_MARKS = re.compile(r"(?m)^[ \t]*(?:>(?![ \t]*[\d=$\u20ac\u00a3\u00a5\u20b9])[ \t]?)+")


def without_reply_marks(text: str) -> str:
    """The text without a reply's quote marks at the start of its lines."""
    return _REPLY_MARKS.sub("", text)


def unquoted(text: str) -> str:
    """The question inside the quotes that enclose all of it (the mark after a closing quote kept)."""
    mark = text[-1] if len(text) > 2 and text[-1] in "?.!" and text[-2] in _QUOTES.values() else ""
    body = text[:-1] if mark else text
    close = _QUOTES.get(body[:1])
    # an apostrophe between letters ("can't") is no quote
    inside = re.sub(r"(?<=\w)['\u2019](?=\w)", "", body[1:-1])
    if close is None or len(body) < 3 or body[-1] != close or body[0] in inside or close in inside:
        return text
    inner = body[1:-1].strip()
    return inner + mark if mark and inner[-1:] not in ("?", ".", "!") else inner


# A question typed without its mark ("Can I get a company car through Contoso") read as a statement: the
# asking sentence went unseen and the embedding moved (a probe: 7 of 1,507 answers changed decision or article).
_ASKING_START = re.compile(r"^(?:(?:on|in|at|for|from|to|by|with|under|after|before|until|during|of)\s+"
                           r"(?=which|what|whom|whose|how)\b)?(?:what|when|where|who|whom|whose|which|why|how|can|"
                           r"could|do(?!['\u2019]s)|does|did|is|are|was|were|will|would|should|shall|may|might|must|has|have|am)\b",
                           re.IGNORECASE)


def with_its_mark(text: str) -> str:
    """The question with a question mark when its last sentence starts as one and ends with no mark."""
    last = re.split(r"(?<=[.!?])\s+", text)[-1]
    ends_bare = text[-1:].isalnum() or (text[-1:] == ")" and "(" in text)  # "401(k)", not a smiley
    return text + "?" if ends_bare and _ASKING_START.match(last) else text


def without_pleasantries(question: str) -> str:
    """The question without the greeting or subject line before it, the thanks, sign-off or device line
    after it, the quotes around it, pictographs and runs of marks (the whole question when nothing else
    would be left)."""
    # (Markdown's strong emphasis, "**...**", marks no words of its own; "2**10", "**kwargs", "__init__" are code)
    text = re.sub(r"\s+", " ", _BOLD.sub(r"\1", _PICTOGRAPHS.sub(" ", question))).strip()
    text = re.sub(r"(?<=\w)\u2019(?=\w)", "'", text)  # a phone's apostrophe ("can\u2019t") is the apostrophe
    text = _MARK_RUN.sub(lambda m: "?" if "?" in m.group() else "!", re.sub(r"(?:\.{2,}|\u2026)\s*\?", "?", text))
    while ((cut := _OPENING.sub("", text, count=1)) != text or (cut := _CLOSING.sub("", text, count=1)) != text
           or (cut := _DEVICE.sub("", text, count=1)) != text or (cut := unquoted(text)) != text):
        text = cut.strip()
    return with_its_mark(text) if len(text) >= MIN_QUESTION and text[:1] else question


# A sentence that only gives the asker's contact details ("My email is [EMAIL].", "Call me on [PHONE].", "My
# name is Sam Taylor."): masked, it still moved the question's embedding and focus (a probe: 103 of 600
# answers changed decision or article). It asks nothing; it comes off after masking, as does a bracketed
# reference "(account [NUMBER])". A card or account number in a sentence stays: "My card [NUMBER]. Why was it
# declined?" is about that card. A sentence that asks stays.
_CONTACT_WORDS = frozenset(terms(
    "my name email e-mail address phone telephone number mobile cell call text reach contact me on at or and is "
    "ssn social security here via please"))
_CONTACT_TOKENS = re.compile(r"\[(?:EMAIL|PHONE|SSN)\]")
_INTRODUCTION = re.compile(r"^(?:my name is|my name's)\s+(?-i:[A-Z][\w'\-]*(?:\s+[A-Z][\w'\-]*){0,2})[.!,]?$",
                           re.IGNORECASE)


# A reference in brackets at the very end, after the question's mark ("... ? (account [NUMBER])"): the
# masked number is all it says (inside or before a sentence, the brackets can be the question's: "is it this
# card or (card [NUMBER])?", "(card [NUMBER]) was declined. Why?")
_REFERENCE = re.compile(r"(?<=[.!?])\s*[(\[](?i:[a-z]+\s*){0,2}(?i:no\.?|#)?\s*:?\s*(?:" + NUMBER_TOKEN.pattern
                        + r")[)\]]\s*$")


def without_contact_lines(question: str) -> str:
    """The question without the sentences that only give contact details and bracketed references to a
    masked number (the whole question when nothing else would be left)."""
    sentences = re.split(r"(?<=[.!?])\s+", _REFERENCE.sub("", question).strip())
    kept = [s for s in sentences if s.rstrip().endswith("?") or not (
        (_CONTACT_TOKENS.search(s) and not MASK_TOKEN.sub(" ", _CONTACT_TOKENS.sub(" ", s)).count("[")
        and set(terms(MASK_TOKEN.sub(" ", s))) <= _CONTACT_WORDS) or _INTRODUCTION.match(s.strip()))]
    text = " ".join(kept).strip()
    return text if len(text) >= MIN_QUESTION else question
