"""Guardrail rules of an article: `Never say:` phrases, `Never:` and `Always:` prose rules."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .text import clean_markdown

_MARKER = re.compile(r"^\s*(?:[-*+•]|\d+[.)])?\s*(never say|never|always)\s*:\s*(.*)$", re.IGNORECASE)
_QUOTED = re.compile(r"[\"“”']([^\"“”']+)[\"“”']")
_REASON_SPLIT = re.compile(r"\s+[—–-]{1,2}\s+")


@dataclass
class Guardrails:
    never_say: list[str] = field(default_factory=list)
    never: list[str] = field(default_factory=list)
    always: list[str] = field(default_factory=list)

    def merge(self, other: Guardrails) -> Guardrails:
        def union(a: list[str], b: list[str]) -> list[str]:
            return list(dict.fromkeys(a + b))

        return Guardrails(union(self.never_say, other.never_say), union(self.never, other.never),
                          union(self.always, other.always))

    def as_dict(self) -> dict[str, list[str]]:
        return {"never_say": self.never_say, "never": self.never, "always": self.always}


def meaningful_phrase(phrase: str) -> bool:
    """A phrase of stopwords alone would match every answer; a negation ("cannot", "can't") is a word a KB
    may forbid, though its analysis drops it."""
    from .text import NEGATIONS, STOPWORDS, words

    return any(len(w) > 1 and (w not in STOPWORDS or w in NEGATIONS - {"no", "not", "nor"}) for w in words(phrase))


def parse_guardrails(text: str) -> Guardrails:
    rules = Guardrails()
    for line in clean_markdown(text).splitlines():
        m = _MARKER.match(line)
        if not m:
            continue
        kind, body = m.group(1).lower(), m.group(2).strip()
        if kind == "never say":
            phrases = _QUOTED.findall(body)
            if not phrases:  # unquoted list: everything before an optional " — reason"
                head = _REASON_SPLIT.split(body, maxsplit=1)[0]
                phrases = [p.strip() for p in head.split(",")]
            # A phrase of stopwords or single characters would silence everything: not a rule.
            rules.never_say.extend(p.strip() for p in phrases if meaningful_phrase(p))
        elif body:
            (rules.never if kind == "never" else rules.always).append(body)
    return rules


def rule_kind(line: str) -> str | None:
    """The marker a guardrail line starts with ("never say", "never", "always"), or None."""
    m = _MARKER.match(clean_markdown(line))
    return m.group(1).lower() if m else None


# Words that make an `Always:` rule an instruction to the agent rather than content ("mention that ...").
_INSTRUCTION = {"mention", "state", "explain", "tell", "remind", "say", "note", "discuss", "inform", "advis",
                "ensur", "includ", "describ", "warn", "point", "make", "sure", "clear", "alway", "recommend"}
_LEAD = re.compile(r"^(?:always\s*:?\s*)?(?:(?:mention|state|explain|say|note|stress|point out|make (?:it )?clear|"
                   r"ensure|remind|tell|warn|inform)\w*(?:\s+(?:the\s+)?(?:participant|user|caller|customer|"
                   r"member|client|them|him|her)s?)?\s+(?:that\s+)?)", re.IGNORECASE)


def rule_terms(rule: str) -> set[str]:
    """The content terms of a prose rule: what an answer must say, not the instruction to say it."""
    from .text import terms

    return {t for t in terms(rule) if t not in _INSTRUCTION}


def reflects(rule: str, text: str, threshold: float = 0.7) -> bool:
    """True when `text` states most of the rule's content terms."""
    from .text import term_set

    wanted = rule_terms(rule)
    return bool(wanted) and len(wanted & term_set(text)) / len(wanted) >= threshold


# A rule that tells someone something: its recipient, however named, up to the "that" of what they are told
_TOLD_LEAD = re.compile(r"^(?:always\s*:?\s*)?(?:tell|remind|inform|warn|notify|assure)\w*\s", re.IGNORECASE)
_TOLD = re.compile(r"^([^,.;:!?]{1,80}?\s)?that\s+", re.IGNORECASE)
# Words a recipient's name never holds: they open a clause or a phrase, or make "that" a determiner
_NOT_RECIPIENT = frozenset({"so", "if", "when", "whenever", "while", "about", "in", "of", "on", "for", "with", "that",
                            "those", "this", "these", "because", "unless", "after", "before", "until", "once", "where"})
_DIRECTIVE_LEAD = re.compile(r"^(?:always\s*:?\s*)?(?:recommend|advise|urge|suggest|ask|request|instruct|direct|"
                             r"include|add|send|share|provide|give|have|get|invite)\b", re.IGNORECASE)
# A recipient told to do something: "the passenger to keep ...", "every renter to return ..."
_TOLD_TO = re.compile(r"^(?:[\w'-]+\s+){1,5}?to\s", re.IGNORECASE)
# A finite verb that makes a clause a statement ("the balance must be kept", "they can complain")
_FINITE = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|must|may|might|can|cannot|can't|could|will|won't|"
                     r"would|should|shall|does|do|did|don't|doesn't|isn't|aren't)\b", re.IGNORECASE)
# Where a clause of its own begins: "the 20% withholding when an indirect rollover is discussed", "the excess
# that remains with the option" state nothing
_SUBORDINATE = re.compile(r"\b(?:when|whenever|if|unless|because|while|before|after|where|once|until|so|that|which|"
                          r"who)\b", re.IGNORECASE)


def reason_given(rule: str) -> str | None:
    """The reason an instruction gives, when it is a statement: "tell the passenger to keep original receipts,
    because interim expenses are reimbursed only against receipts" -> "Interim expenses are reimbursed only
    against receipts." (what the KB asserts; the instruction itself is not shown)."""
    found = re.search(r"(?i)(?:,\s*|\s+)because\s+(.+?)\.?\s*$", rule)
    if (found is None or not states(reason := found.group(1).strip()) or len(reason.split()) < 3
            or re.match(r"(?i)(?:it|they|them|he|she|this|that|these|those|we|you|i)\b", reason)):
        return None  # (a reason about "it" or "they" says nothing read alone)
    return reason[:1].upper() + reason[1:] + "."


def told_to_act(body: str) -> bool:
    """A recipient told to do something ("the passenger to keep receipts"), not told a statement ("they can
    complain to the ombudsman")."""
    return (m := _TOLD_TO.match(body)) is not None and not _FINITE.search(m.group(0))


def states(body: str) -> bool:
    """Whether a rule's body is a statement (a finite verb before any clause of its own), not a thing."""
    return bool(_FINITE.search(_SUBORDINATE.split(body, maxsplit=1)[0]))


_ALWAYS_MARK = re.compile(r"^always\s*:?\s*", re.IGNORECASE)
_LINK = re.compile(r"https?://|www\.|\]\(", re.IGNORECASE)


def rule_as_warning(rule: str) -> str | None:
    """'mention that X' -> 'X.', so a rule can stand as a warning when no sentence of its article states it;
    'mention the X' (a thing to say, not a statement) stays the author's instruction: 'Mention the X.'

    Only a statement, or a thing to mention, becomes a warning. A directive ("tell the participant to ...",
    "recommend ...", "include the link ..."), a told rule whose recipient and message cannot be read apart,
    or anything with a link is an instruction to act, not a fact the KB asserts, and is never shown: None,
    or the statement it gives as its reason ("..., because X" -> "X.").
    """
    if _LINK.search(rule):
        return None
    if _DIRECTIVE_LEAD.match(rule.strip()):
        return reason_given(rule)
    # "tell Pay Now customers that refunds take ...", "remind a new member that benefits begin ...": what they
    # are told is the clause after the first "that" (the recipient read as the warning's subject made "Pay Now
    # customers that refunds take ...")
    rule = rule.strip()
    told = _TOLD_LEAD.match(rule)
    heard = _TOLD.match(rule[told.end():]) if told else None
    if heard is not None and (set(re.findall(r"[a-z]+", (heard.group(1) or "").lower())) & _NOT_RECIPIENT
                              or not re.match(r"\w", rule[told.end() + heard.end():])):
        heard = None  # "... so that they can retry", "about that plan that ...", "that, if late, ...": not a recipient
    lead = _LEAD.match(rule)
    body = rule[told.end() + heard.end():] if told and heard else rule[lead.end():] if lead else rule
    body = body.strip().rstrip(".")
    if told and not heard and (_TOLD_LEAD.match(body) or re.match(r"(?i)(that|who|in|if|so|about|when)\b", body)
                               or re.search(r"(?i)\bthat\s", body) or told_to_act(body) or not states(body)):
        # who is told what cannot be read apart ("a customer with Wellness Plus that ...", "of the deadline"), or
        # they are told to act ("the passenger to keep receipts"): no warning rather than a garbled one, but the
        # reason a rule gives is a statement of its own
        return reason_given(rule)
    if not body or re.match(r"(?i)to\s", body):
        return reason_given(rule)
    if lead and not told and not re.search(r"(?i)\bthat\s+$", lead.group(0)) and not states(body):
        # "mention the 29-minute grace period": what to say is a thing, not a statement ("state the balance must
        # be kept" is one); the rule, as its author wrote it, is the warning (stripped of its verb it read as a
        # fragment under Important: "The 29-minute grace period.")
        body = _ALWAYS_MARK.sub("", rule).strip().rstrip(".")
        if len(re.findall(r"[A-Za-z0-9]\w*", body)) < 3:
            return None  # "Mention the."
    return body[:1].upper() + body[1:] + "."
