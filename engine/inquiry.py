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
from ..kb.tokens import encoder
from ..retrieval.filters import validate_filter
from ..retrieval.snapshot import KnowledgeBase
from .access import UNRESTRICTED, Access, visible_facets
from .artifact_types import ARTIFACT_TYPES
from .assemble import minimum_context_tokens
from .facets import combine_filters, facet_clause, facet_filter, universal_values
from .privacy import mask_values, masked
from .records import DEFAULT_MAX_TOKENS, MAX_QUESTION, MIN_QUESTION, Inquiry
from .spelling import Lexicon, corrected
from .wording import without_contact_lines, without_pleasantries, without_reply_marks

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
    question = re.sub(r"\s+", " ", without_reply_marks(question)).strip()
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
        # The KB's own synonyms may name a facet; everyday English may not: "my mum" is no parental leave, "send
        # back a reply" no return, and a facet filter narrows the whole search (a review's probe: 9 answers
        # worse, most through a topic detected this way; keeping the words out cost one dev answer).
        named = kb.synonyms.expansions(inquiry.question, everyday=False) if ctx.expand_synonyms else []
        detected = kb.facet_detector.detect(" ".join([inquiry.question, *named]))
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
