"""Checks an answer against its context and the KB's guardrails, repairing what can be repaired.

Rules (each finding becomes a violation {rule, detail, action}):
  invalid_citation   a [C#] that names no chunk in the context: removed          (blocking)
  uncited_claim      an answer component or step with no valid citation: dropped (blocking)
  unsupported_claim  a claim whose words are not supported by its cited chunks   (blocking)
                     (support = share of its content terms found in those chunks): dropped
  never_say          a `Never say:` phrase of a used article (whole word): sentence dropped (blocking)
  always_missing     an `Always:` rule of a used article not reflected in the warnings: added
  personal_data      SSN / account / routing numbers, emails, phones: masked
Blocking violations fail the check (one regeneration, then the `uncertain` path).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from citewise.kb.guardrails import reflects, rule_as_warning, rule_terms
from citewise.kb.text import NEGATIONS, contains_phrase, term_set, words

CITATION = re.compile(r"\s*\[(C\d+)\]")
ANY_CITATION = re.compile(r"\s*\[([A-Za-z]*\d+)\]")
BLOCKING = {"invalid_citation", "uncited_claim", "unsupported_claim", "never_say", "ungrounded_claim", "never_rule"}

_PII = [
    ("ssn", re.compile(r"\b(?!000|666|9\d\d)\d{3}[- ](?!00)\d{2}[- ](?!0000)\d{4}\b"), "[SSN]"),
    ("ssn", re.compile(r"(?i)(\b(?:ssn|social security(?: number)?)\b\D{0,12})(\d{9})\b"), None),
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), "[EMAIL]"),
    ("routing_number", re.compile(r"(?i)(\brouting(?: number| no\.?| #)?\D{0,12})(\d{9})\b"), None),
    ("account_number", re.compile(r"(?i)(\b(?:account|acct)(?: number| no\.?| #)?\D{0,12})(\d[\d-]{5,19}\d)\b"), None),
    ("phone", re.compile(r"(?<!\d)(?:\+?1[ .-]?)?\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?!\d)"), "[PHONE]"),
    ("card_or_account", re.compile(r"(?<![\d$.,])\d{12,19}(?![\d.,])"), "[NUMBER]"),
]


def mask_pii(text: str) -> tuple[str, list[str]]:
    """Mask personal data; returns the masked text and the kinds that were found."""
    kinds: list[str] = []
    for kind, pattern, replacement in _PII:
        def sub(m: re.Match[str], kind: str = kind, replacement: str | None = replacement) -> str:
            kinds.append(kind)
            if replacement is None:  # keep the label ("account number: "), mask the digits
                return m.group(1) + "[" + kind.upper() + "]"
            return replacement

        text = pattern.sub(sub, text)
    return text, kinds


def citations_in(text: str) -> list[str]:
    return [m.group(1) for m in CITATION.finditer(text)]


def strip_citations(text: str) -> str:
    return ANY_CITATION.sub("", text).strip()


def _support_terms(text: str) -> set[str]:
    """Content terms plus negation words: "no withholding" must not be supported by "withholding"."""
    return term_set(text) | (set(words(text)) & NEGATIONS)


def support_score(claim: str, sources: list[str]) -> float:
    """Share of the claim's content terms that occur in the cited chunks (1.0 for a verbatim quote)."""
    claim_terms = _support_terms(claim)
    if not claim_terms:
        return 1.0
    found: set[str] = set()
    for s in sources:
        found |= _support_terms(s)
    return len(claim_terms & found) / len(claim_terms)


@dataclass
class Verified:
    sections: list[dict[str, Any]]
    violations: list[dict[str, str]] = field(default_factory=list)
    supports: list[float] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    @property
    def cited(self) -> list[str]:
        """Labels cited by the (repaired) answer, in order of first use."""
        labels: list[str] = []
        for s in self.sections:
            for kind in ("answer_components", "steps", "warnings"):
                for item in s[kind]:
                    labels.extend(lb for lb in citations_in(item) if lb not in labels)
        return labels

    @property
    def blocking(self) -> int:
        return sum(1 for v in self.violations if v["rule"] in BLOCKING)

    @property
    def support(self) -> float:
        return sum(self.supports) / len(self.supports) if self.supports else 0.0


def claims_of(sections: list[dict[str, Any]]) -> list[tuple[int, str, int]]:
    """(section index, kind, item index) of every answer component and step, in reading order."""
    return [(si, kind, ii) for si, s in enumerate(sections) for kind in ("answer_components", "steps")
            for ii in range(len(s[kind]))]


def drop_claims(checked: Verified, drops: dict[str, Any]) -> None:
    """Remove claims the grader rejected (keys are indexes into `claims_of`), recording each."""
    places = claims_of(checked.sections)
    doomed = {places[int(k)]: v for k, v in drops.items() if k.isdigit() and int(k) < len(places)}
    for (si, kind, ii), (rule, reason) in sorted(doomed.items(), key=lambda x: (-x[0][0], x[0][1], -x[0][2])):
        claim = strip_citations(checked.sections[si][kind].pop(ii))
        checked.violations.append({"rule": rule, "detail": f"{reason}: {claim[:80]}", "action": "dropped"})
        checked.dropped.append(claim)
    checked.sections = [s for s in checked.sections if s["answer_components"] or s["steps"] or s["warnings"]]


def never_rules(docs: set[str], rules: dict[str, dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r for d in sorted(docs) for r in (rules.get(d) or {}).get("never", [])))


def _rules_for(docs: set[str], rules: dict[str, dict[str, Any]]) -> tuple[list[str], list[tuple[str, str]]]:
    never_say: list[str] = []
    always: list[tuple[str, str]] = []
    for doc_id in sorted(docs):
        r = rules.get(doc_id) or {}
        never_say.extend(r.get("never_say", []))
        always.extend((doc_id, a) for a in r.get("always", []))
    return list(dict.fromkeys(never_say)), always


def verify(sections: list[dict[str, Any]], context_chunks: list[dict[str, Any]], rules: dict[str, dict[str, Any]],
           *, support_threshold: float, article_id: str | None) -> Verified:
    """Check and repair a structured answer. `rules` maps doc_id -> parsed guardrails of that article."""
    by_label = {c["label"]: c for c in context_chunks}
    out = Verified(sections=[])
    used_docs = {article_id} if article_id else set()
    for s in sections:
        for kind in ("answer_components", "steps", "warnings"):
            for item in s.get(kind, []):
                used_docs |= {by_label[lb]["doc_id"] for lb in citations_in(item) if lb in by_label}
    never_say, always = _rules_for(used_docs, rules)

    for s in sections:
        new = {"topic": s.get("topic", ""), "answer_components": [], "steps": [], "warnings": []}
        for kind in ("answer_components", "steps", "warnings"):
            for item in s.get(kind, []):
                kept = _check_item(item, kind, by_label, never_say, support_threshold, out)
                if kept is not None:
                    new[kind].append(kept)
        if new["answer_components"] or new["steps"] or new["warnings"]:
            out.sections.append(new)

    _ensure_always(out, always, context_chunks, support_threshold)
    for s in out.sections:
        for kind in ("answer_components", "steps", "warnings"):
            masked = []
            for item in s[kind]:
                text, kinds = mask_pii(item)
                for k in dict.fromkeys(kinds):
                    out.violations.append({"rule": "personal_data", "detail": f"{k} masked", "action": "masked"})
                masked.append(text)
            s[kind] = masked
    return out


def _check_item(item: str, kind: str, by_label: dict[str, dict[str, Any]], never_say: list[str],
                threshold: float, out: Verified) -> str | None:
    labels = [m.group(1) for m in ANY_CITATION.finditer(item)]
    bad = [lb for lb in labels if lb not in by_label]
    good = list(dict.fromkeys(lb for lb in labels if lb in by_label))
    claim = strip_citations(item)
    for lb in bad:
        out.violations.append({"rule": "invalid_citation", "detail": f"[{lb}] is not in the context: {claim[:80]}",
                               "action": "removed"})
    if not claim:
        return None
    if not good:
        out.violations.append({"rule": "uncited_claim", "detail": claim[:120], "action": "dropped"})
        out.dropped.append(claim)
        return None
    for phrase in never_say:
        if contains_phrase(claim, phrase):
            out.violations.append({"rule": "never_say", "detail": f"{phrase!r} in: {claim[:80]}",
                                   "action": "dropped"})
            out.dropped.append(claim)
            return None
    score = support_score(claim, [by_label[lb]["text"] + " " + by_label[lb]["title"] for lb in good])
    if score < threshold:
        out.violations.append({"rule": "unsupported_claim",
                               "detail": f"support {score:.2f} < {threshold:.2f}: {claim[:80]}", "action": "dropped"})
        out.dropped.append(claim)
        return None
    if kind != "warnings":
        out.supports.append(score)
    return claim + "".join(f" [{lb}]" for lb in good)


ANSWER_SOURCES = {"decision_guide", "business_rules", "eligibility", "fees", "common_issues", "examples", "faqs",
                  "content", "background", "steps"}


def always_warning(rule: str, doc_chunks: list[dict[str, Any]]) -> str | None:
    """An `Always:` rule as a cited warning: the context sentence that states it, else the rule itself
    cited to the article's guardrails chunk; None when neither is in the context."""
    from citewise.kb.text import split_items

    stated = [(len(rule_terms(rule) & term_set(u)), -len(u), u, c) for c in doc_chunks
              if c["chunk_type"] in ANSWER_SOURCES for u in split_items(c["text"]) if reflects(rule, u)]
    if stated:
        _, _, text, chunk = max(stated, key=lambda x: (x[0], x[1]))
        return f"{text} [{chunk['label']}]"
    source = next((c for c in doc_chunks if c["chunk_type"] == "guardrails"), None)
    return f"{rule_as_warning(rule)} [{source['label']}]" if source else None


def _ensure_always(out: Verified, always: list[tuple[str, str]], context_chunks: list[dict[str, Any]],
                   threshold: float) -> None:
    if not always:
        return
    if not out.sections:
        return
    warnings = [strip_citations(w) for s in out.sections for w in s["warnings"]]
    for doc_id, rule in always:
        if any(reflects(rule, w) for w in warnings):
            continue
        warning = always_warning(rule, [c for c in context_chunks if c["doc_id"] == doc_id])
        if warning is None:
            continue
        out.sections[0]["warnings"].append(warning)
        warnings.append(rule)
        out.violations.append({"rule": "always_missing", "detail": rule[:120], "action": "added"})
