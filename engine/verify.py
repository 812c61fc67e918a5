"""Checks an answer against its context and the KB's guardrails, repairing what can be repaired.

Rules (each finding becomes a Violation(rule, detail, action)):
  invalid_citation   a [C#] that names no chunk in the context: removed          (blocking)
  uncited_claim      an answer component or step with no valid citation: dropped (blocking)
  unsupported_claim  a claim whose words are not supported by its cited chunks   (blocking)
                     (support = share of its content terms found in those chunks): dropped
  never_say          a `Never say:` phrase of a used article (whole word): sentence dropped (blocking)
  always_missing     an `Always:` rule of a used article not reflected in the warnings: added
  personal_data      SSN / account / routing numbers, emails, phones: masked
Blocking violations fail the check (one regeneration, then the `uncertain` path).

Sections named in `quoted` (an artifact's "Never say" heading) hold the articles' own guardrail lines:
each item must be a line of the guardrails excerpt it cites, word for word (else it is dropped as
unsupported); being the rule itself, it is exempt from the never-say check it states.

Only `[C<n>]` and `[C<n>, C<m>]` are citations; any other bracketed text (`httpx[http2]`) is text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..kb.guardrails import reflects, rule_as_warning, rule_terms
from ..kb.text import NEGATIONS, NEUTRALIZED, contains_phrase, split_items, squash, term_set, words
from .entailment import entails
from .privacy import mask_pii
from .records import ContextChunk, Dropped, Section, Violation

CITATION = re.compile(r"\s*\[(C\d+(?:\s*,\s*C\d+)*)\]")
BLOCKING = {"invalid_citation", "uncited_claim", "unsupported_claim", "never_say", "ungrounded_claim", "never_rule"}
ANSWER_SOURCES = {"decision_guide", "business_rules", "eligibility", "fees", "common_issues", "examples", "faqs",
                  "content", "background", "steps"}


def citations_in(text: str) -> list[str]:
    """Labels cited in a text, in order, `[C1, C2]` counting as both."""
    return [lb.strip() for m in CITATION.finditer(text) for lb in m.group(1).split(",")]


def strip_citations(text: str) -> str:
    return CITATION.sub("", text).strip()


def cite(text: str, labels: list[str]) -> str:
    return text + "".join(f" [{lb}]" for lb in labels)


def _support_terms(text: str) -> set[str]:
    """Content terms plus negation words: "no withholding" must not be supported by "withholding"."""
    return term_set(text) | (set(words(text)) & NEGATIONS)


def support_score(claim: str, sources: list[str]) -> float:
    """Share of the claim's content terms that occur in the cited chunks (1.0 for a verbatim quote); a
    claim without content words supports nothing (0.0)."""
    claim_terms = _support_terms(claim)
    if not claim_terms:
        return 0.0
    found: set[str] = set()
    for s in sources:
        found |= _support_terms(s)
    return len(claim_terms & found) / len(claim_terms)


@dataclass
class Verified:
    sections: list[Section]
    violations: list[Violation] = field(default_factory=list)
    supports: list[float] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)

    @property
    def cited(self) -> list[str]:
        """Labels cited by the (repaired) answer, in order of first use."""
        labels: list[str] = []
        for s in self.sections:
            for _, item in s.items():
                labels.extend(lb for lb in citations_in(item) if lb not in labels)
        return labels

    @property
    def blocking(self) -> int:
        return sum(1 for v in self.violations if v.rule in BLOCKING)

    @property
    def support(self) -> float:
        return sum(self.supports) / len(self.supports) if self.supports else 0.0

    def drop(self, claim: str, rule: str, detail: str) -> None:
        self.violations.append(Violation(rule, detail, "dropped"))
        self.dropped.append(Dropped(claim=claim, rule=rule, reason=detail))


def claims_of(sections: list[Section]) -> list[tuple[int, str, int]]:
    """(section index, kind, item index) of every answer component and step, in reading order."""
    return [(si, kind, ii) for si, s in enumerate(sections) for kind in ("answer_components", "steps")
            for ii in range(len(getattr(s, kind)))]


def drop_claims(checked: Verified, drops: dict[int, tuple[str, str]]) -> None:
    """Remove claims a grader rejected (keys index into `claims_of`), recording each."""
    places = claims_of(checked.sections)
    doomed = {places[k]: v for k, v in drops.items() if 0 <= k < len(places)}
    for (si, kind, ii), (rule, reason) in sorted(doomed.items(), key=lambda x: (-x[0][0], x[0][1], -x[0][2])):
        claim = strip_citations(getattr(checked.sections[si], kind).pop(ii))
        checked.drop(claim, rule, f"{reason}: {claim[:80]}")
    checked.sections = [s for s in checked.sections if not s.empty()]


def never_rules(docs: set[str], rules: dict[str, dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r for d in sorted(docs) for r in (rules.get(d) or {}).get("never", [])))


def never_say_for(doc_ids: set[str], governing: str | None, rules: dict[str, dict[str, Any]]) -> list[str]:
    """The `Never say:` phrases that bind a claim: those of the articles it cites, and those of the
    article that governs the answer. Another article's rules never remove this claim."""
    docs = set(doc_ids) | ({governing} if governing else set())
    return list(dict.fromkeys(p for d in sorted(docs) for p in (rules.get(d) or {}).get("never_say", [])))


def binding_phrases(item: str, by_label: dict[str, ContextChunk], governing: str | None,
                    rules: dict[str, dict[str, Any]]) -> list[str]:
    """The `Never say:` phrases that bind a cited item (`never_say_for` the articles it cites)."""
    return never_say_for({by_label[lb].doc_id for lb in citations_in(item) if lb in by_label}, governing, rules)


def phrase_said(text: str, phrases: list[str]) -> str | None:
    """The first of `phrases` the text says, or None."""
    return next((p for p in phrases if contains_phrase(text, p)), None)


def verify(sections: list[Section], context_chunks: list[ContextChunk], rules: dict[str, dict[str, Any]], *,
           support_threshold: float, article_id: str | None, governing: str | None = "",
           quoted: frozenset[str] = frozenset()) -> Verified:
    """Check and repair a structured answer. `rules` maps doc_id -> parsed guardrails of that article;
    `quoted` names sections whose items quote guardrail lines (see the module docstring).

    An article's rules are scoped to it: its `Never say:` phrases bind the claims drawn from it, and
    every claim only when it governs the answer (`governing`; None while another article claims the
    same facets); the `Always:` rules added are those of the answer's article (`article_id`)."""
    governing = article_id if governing == "" else governing
    by_label = {c.label: c for c in context_chunks}
    out = Verified(sections=[])
    always = [(article_id, a) for a in (rules.get(article_id) or {}).get("always", [])] if article_id else []

    for s in sections:
        new = Section(topic=s.topic)
        for kind, item in s.items():
            if s.topic in quoted:
                kept = _check_quote(item, by_label, out)
            else:
                kept = _check_item(item, kind, by_label, binding_phrases(item, by_label, governing, rules),
                                   support_threshold, out)
            if kept is not None:
                getattr(new, kind).append(kept)
        if not new.empty():
            out.sections.append(new)

    _ensure_always(out, always, by_label, rules, governing)
    for s in out.sections:
        for kind in Section.KINDS:
            masked = []
            for item in getattr(s, kind):
                # the KB's text: its published contacts stay, but not a worked example's (a customer's details)
                text, kinds = mask_pii(item, public=not any(
                    by_label[lb].chunk_type == "examples" for lb in citations_in(item) if lb in by_label))
                for k in dict.fromkeys(kinds):
                    out.violations.append(Violation("personal_data", f"{k} masked", "masked"))
                masked.append(text)
            setattr(s, kind, masked)
    return out


def _check_item(item: str, kind: str, by_label: dict[str, ContextChunk], never_say: list[str],
                threshold: float, out: Verified) -> str | None:
    labels = citations_in(item)
    good = list(dict.fromkeys(lb for lb in labels if lb in by_label))
    claim = strip_citations(item)
    for lb in labels:
        if lb not in by_label:
            out.violations.append(Violation("invalid_citation", f"[{lb}] is not in the context: {claim[:80]}",
                                            "removed"))
    if not claim:
        return None
    if not good:
        out.drop(claim, "uncited_claim", claim[:120])
        return None
    if (phrase := phrase_said(claim, never_say)) is not None:
        out.drop(claim, "never_say", f"{phrase!r} in: {claim[:80]}")
        return None
    if NEUTRALIZED in claim:  # what is left of a neutralised instruction is never a claim
        out.drop(claim, "unsupported_claim", f"quotes removed instruction text: {claim[:80]}")
        return None
    sources = [by_label[lb].text for lb in good]
    score = support_score(claim, [f"{s} {by_label[lb].title}" for s, lb in zip(sources, good, strict=True)])
    if score < threshold:
        out.drop(claim, "unsupported_claim", f"support {score:.2f} < {threshold:.2f}: {claim[:80]}")
        return None
    finding = entails(claim, sources, [by_label[lb].title for lb in good])
    if not finding.ok:
        out.drop(claim, "unsupported_claim", f"{finding.reason}: {claim[:80]}")
        return None
    if kind != "warnings":
        out.supports.append(score)
    return cite(claim, good)


def _check_quote(item: str, by_label: dict[str, ContextChunk], out: Verified) -> str | None:
    """A quoted guardrail line: kept only if it is, word for word, in a guardrails excerpt it cites."""
    labels = citations_in(item)
    claim = strip_citations(item)
    good = [lb for lb in dict.fromkeys(labels) if lb in by_label and by_label[lb].chunk_type == "guardrails"
            and squash(claim) and squash(claim) in squash(by_label[lb].text)]
    if not claim:
        return None
    if not good:
        out.drop(claim, "unsupported_claim", f"not a guardrail line of its cited excerpt: {claim[:80]}")
        return None
    return cite(claim, good)


def always_warning(rule: str, doc_chunks: list[ContextChunk]) -> str | None:
    """An `Always:` rule as a cited warning: the rule's own statement (the article's author said it
    should be said) cited to its guardrails chunk, else the context sentence that states it; None when
    neither is available (a directive such as "tell the participant to ..." is never turned into text)."""
    source = next((c for c in doc_chunks if c.chunk_type == "guardrails"), None)
    statement = rule_as_warning(rule)
    if source and statement:
        return cite(statement, [source.label])
    stated = [(len(rule_terms(rule) & term_set(u)), -len(u), u, c) for c in doc_chunks
              if c.chunk_type in ANSWER_SOURCES for u in split_items(c.text) if reflects(rule, u)]
    if stated:
        _, _, text, chunk = max(stated, key=lambda x: (x[0], x[1]))
        return cite(text, [chunk.label])
    return None


def _ensure_always(out: Verified, always: list[tuple[str, str]], by_label: dict[str, ContextChunk],
                   rules: dict[str, dict[str, Any]], governing: str | None) -> None:
    """Add each `Always:` rule the answer does not reflect, as `always_warning` words it, unless those words
    say a `Never say:` phrase binding them (an author's two rules can collide: "Never say: guaranteed" and
    "Always: mention that guaranteed delivery is only with Express"; the phrase wins, as for any claim)."""
    if not always or not out.sections:
        return
    warnings = [strip_citations(w) for s in out.sections for w in s.warnings]
    for doc_id, rule in always:
        if any(reflects(rule, w) for w in warnings):
            continue
        warning = always_warning(rule, [c for c in by_label.values() if c.doc_id == doc_id])
        if warning is None:
            continue
        said = phrase_said(strip_citations(warning), binding_phrases(warning, by_label, governing, rules))
        if said is not None:
            out.violations.append(Violation("always_missing", f"{rule[:100]} (not added: it says {said!r})", "none"))
            continue
        out.sections[0].warnings.append(warning)
        warnings.append(rule)
        out.violations.append(Violation("always_missing", rule[:120], "added"))
