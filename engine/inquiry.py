"""Understanding a question before anything is searched: validation, mode, synonyms and facets.

Mode detection defaults to `answer`: only a question that asks what must be *collected* (gathered,
obtained, asked for, provided before processing) is a `required_data` question. "What do I need to
know about RMDs?" asks for an answer. The rule is measured on tests/data/mode_phrasings.yaml.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from ..arguments import check_text
from ..config import Context
from ..errors import InputError
from ..kb.articles import PROVIDER
from ..kb.text import terms
from ..kb.tokens import encoder
from ..retrieval.filters import validate_filter
from ..retrieval.snapshot import KnowledgeBase
from .access import UNRESTRICTED, Access, visible_facets
from .artifact_types import ARTIFACT_TYPES
from .assemble import minimum_context_tokens
from .facets import combine_filters, facet_clause, facet_filter, universal_values
from .privacy import MASK_TOKEN, NUMBER_TOKEN, mask_values, masked
from .records import DEFAULT_MAX_TOKENS, Inquiry
from .spelling import Lexicon, corrected

MIN_QUESTION, MAX_QUESTION = 3, 1000
MAX_MAX_TOKENS = 16000
MAX_COLLECTED, MAX_VALUE = 100, 1000
MODES = ("answer", "required_data", "artifact")
# An artifact covers a whole procedure, not one question: by default it gets a larger budget (70% of it
# context, still counted with tiktoken and never exceeded); a caller's max_tokens always wins.
DEFAULT_ARTIFACT_MAX_TOKENS = 4000

_DATA = r"(information|info|data|data points?|details|documents?|documentation|fields?|inputs?|paperwork|facts)"
_WHO = r"(i|we|you|they|agents?|the \w+)"
_REQUIRED_DATA_CUES = [re.compile(p, re.IGNORECASE) for p in (
    # what/which is the object of a collecting verb: "what information do I need to collect",
    # "which details must I gather", "what should I ask the caller"
    r"\b(what|which)\b(\s+[\w-]+){0,3}?\s+(do|does|should|must|shall|will|would|can)\s+" + _WHO
    + r"\s+(need to\s+|have to\s+)?(collect|gather|obtain|capture|request|ask)\b",
    # "what details do I need from the participant", "what do you need from me"
    r"\b(what|which)\b[^?]{0,40}\b(need|want|require)s?\s+from\s+(me|us|them|him|her|the|a|an)\b",
    # "what data do we need before processing", "which inputs are needed", "what info is required to"
    r"\b(what|which)\b[^?]{0,25}\b" + _DATA + r"\b[^?]{0,25}\b(need|needed|required|require|must be|have to be)\b"
    r"(?![^?]{0,12}\b(know|understand|about)\b)",
    r"\bwhat do (you|we|they) need before\b",
    r"\b(required|needed) (data|information|fields|details|inputs|documents)\b",
    r"\b(data|information|details|documents) to (collect|gather|obtain|capture)\b",
    r"\bbefore (i|we|you) can (answer|help|process|proceed)\b",
)]
# Asking what the knowledge base *says* is an answer, whatever nouns it uses.
_ANSWER_CUES = re.compile(r"\b(need to know|should (i|we) know|do you have|(information|details|data) (on|about))\b",
                          re.IGNORECASE)


def detect_mode(question: str) -> str:
    if _ANSWER_CUES.search(question):
        return "answer"
    return "required_data" if any(p.search(question) for p in _REQUIRED_DATA_CUES) else "answer"


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
# asking sentence went unseen and the embedding moved (a probe: 6 of 40 answers per set changed decision).
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


def minimum_max_tokens(ctx: Context) -> int:
    """The smallest `max_tokens` whose context share holds the context frame and one useful excerpt."""
    return max(64, math.ceil(minimum_context_tokens() / ctx.context_share))


def iso_dates(values: Mapping[str, Any]) -> dict[str, Any]:
    """Field values with date objects (a Python caller's, or YAML's unquoted 2024-03-15) as ISO text, so
    that what is validated and kept in state is JSON."""
    return {k: v.isoformat() if isinstance(v, date) else v for k, v in values.items()}


def validate(raw: Mapping[str, Any], ctx: Context) -> Inquiry:
    """Normalised inputs, or InputError naming the field and the rule."""
    question = raw.get("question")
    if not isinstance(question, str):
        raise InputError("question must be a string")
    check_text(question, "question")
    question = re.sub(r"\s+", " ", _REPLY_MARKS.sub("", question)).strip()
    if not MIN_QUESTION <= len(question) <= MAX_QUESTION:
        raise InputError(f"question must be {MIN_QUESTION}-{MAX_QUESTION} characters after trimming "
                         f"(got {len(question)})")
    question = without_pleasantries(question)
    filters = raw.get("filters") or {}
    validate_filter(filters)
    collected = raw.get("collected_data") or {}
    if not isinstance(collected, dict):
        raise InputError("collected_data must be an object of field -> value")
    if len(collected) > MAX_COLLECTED:
        raise InputError(f"collected_data has more than {MAX_COLLECTED} fields")
    collected = iso_dates(collected)
    for key, value in collected.items():
        if not isinstance(key, str) or not key.strip() or len(key) > 100:
            raise InputError("collected_data keys must be non-empty strings of at most 100 characters")
        if value is not None and not isinstance(value, str | int | float | bool):
            raise InputError(f"collected_data[{key[:40]!r}] must be a string, number, boolean or date")
        check_text(key, "a collected_data key")
        check_text(value, f"collected_data[{key[:40]!r}]")
        if isinstance(value, str) and len(value) > MAX_VALUE:
            raise InputError(f"collected_data[{key[:40]!r}] is longer than {MAX_VALUE} characters")
    mode, artifact_type = artifact_mode(raw.get("mode"), raw.get("artifact_type"))
    max_tokens = raw.get("max_tokens")
    if max_tokens is None:
        max_tokens = DEFAULT_ARTIFACT_MAX_TOKENS if mode == "artifact" else DEFAULT_MAX_TOKENS
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise InputError("max_tokens must be an integer")
    least = minimum_max_tokens(ctx)
    if not least <= max_tokens <= MAX_MAX_TOKENS:
        raise InputError(f"max_tokens must be within {least}..{MAX_MAX_TOKENS} (got {max_tokens}): below {least} "
                         f"the context share ({ctx.context_share:g}) cannot hold one excerpt")
    # Personal data never travels further than this: the question and collected values are masked
    # before they reach state, checkpoints, logs, a model or an answer.
    question = without_contact_lines(masked(question))
    return Inquiry(question=question, filters=filters, collected_data=mask_values(collected), max_tokens=max_tokens,
                   mode=mode or detect_mode(question), artifact_type=artifact_type)


def artifact_mode(mode: Any, artifact_type: Any) -> tuple[str | None, str]:
    """The mode (None: detect it from the question) and artifact type, or InputError.

    `artifact_type` alone implies mode `artifact`; mode `artifact` needs one; any other mode refuses one.
    """
    if mode is not None and mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)} (got {mode!r})")
    kinds = ", ".join(ARTIFACT_TYPES)
    if artifact_type in (None, ""):
        if mode == "artifact":
            raise InputError(f"mode 'artifact' needs an artifact_type, one of: {kinds}")
        return mode, ""
    if not isinstance(artifact_type, str) or artifact_type not in ARTIFACT_TYPES:
        raise InputError(f"artifact_type must be one of: {kinds} (got {artifact_type!r})")
    if mode not in (None, "artifact"):
        raise InputError(f"artifact_type goes with mode 'artifact' (got mode {mode!r})")
    return "artifact", artifact_type


def understand(kb: KnowledgeBase, ctx: Context, raw: Mapping[str, Any], access: Access = UNRESTRICTED) -> Inquiry:
    """Validate, read a slip of the keyboard in a provider's name as the name, pick the mode, expand synonyms
    and detect the facets the question names.

    `access` is the caller's reach (engine.access): its filter travels with the inquiry into every
    search, and only facet values the caller can read are detected (a value that exists only in
    another tenant's documents must not show up, even as a detected facet).
    """
    inquiry = validate(raw, ctx)
    inquiry.access = access.filter()
    if ctx.correct_spelling:
        inquiry.question, inquiry.corrections = corrected(inquiry.question, lexicon(kb))
    inquiry.expansions = kb.synonyms.expansions(inquiry.question) if ctx.expand_synonyms else []
    if ctx.detect_facets:
        detected = kb.facet_detector.detect(" ".join([inquiry.question, *inquiry.expansions]))
        inquiry.detected_facets = with_the_provider(kb, visible_facets(kb, inquiry.access, detected), inquiry.access)
    inquiry.facet_filters = facet_filter(inquiry.detected_facets, inquiry.filters, kb.facets)
    return inquiry


def lexicon(kb: KnowledgeBase) -> Lexicon:
    """The KB's words for the spelling step: its index, its names, its synonyms, and cl100k's whole words
    (or their bases) as the English ones (a slip is never one token of it)."""
    encode = encoder().encode

    def english(word: str) -> bool:
        return any(len(encode(" " + form)) == 1 for w in (word, word.capitalize()) for form in inflected(w))

    return Lexicon(indexed=kb.bm25.vocab.__contains__, names=kb.facet_detector.name_words,
                   listed=lambda word: bool(kb.synonyms.expansions(word)), english=english)


def inflected(word: str) -> list[str]:
    """A word and the bases it may be inflected from ("tanked" -> "tank", "tripled" -> "triple", "elects" ->
    "elect"): cl100k holds the base of many inflected words whole, not the inflection."""
    forms = [word]
    for end, back in (("s", ""), ("es", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"), ("er", ""),
                      ("ly", "")):
        if word.endswith(end) and len(word) - len(end) >= 3:
            forms.append(word[:-len(end)] + back)
    return forms


def with_the_provider(kb: KnowledgeBase, detected: dict[str, list[str]],
                      access: dict[str, Any] | None = None) -> dict[str, list[str]]:
    """The detected facets without a value no document of the named provider has: "my Contoso apartment"
    reads as the plan type "apartment lease" (a word mostly another landlord's articles use), but Contoso's
    are all "residential tenancy"; filtering on both would leave none of the provider's articles. The
    provider, a name, is the surer reading. Read as the search filters: a document for every provider, or
    for none, is the provider's too, a value that covers every value matches, and only what the caller may
    read counts."""
    providers = detected.get(PROVIDER)
    if not providers:
        return detected
    theirs = combine_filters(access or {}, facet_clause(PROVIDER, {"$in": providers},
                                                        universal_values(PROVIDER, kb.facets.get(PROVIDER, []))))
    out = {PROVIDER: providers}
    for facet, values in detected.items():
        if facet == PROVIDER:
            continue
        universal = universal_values(facet, kb.facets.get(facet, []))
        keep = [v for v in values if kb.meta.mask(combine_filters(theirs, {facet: {"$in": [v, *universal]}})).any()]
        if keep:
            out[facet] = keep
    return out
