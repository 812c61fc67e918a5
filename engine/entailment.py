"""Does a claim say what its cited sentence says? A lexical check that fails where meaning changes.

Term overlap alone passes a claim that copies a cited sentence but flips a negation ("are taken" ->
"are not taken"), swaps a number (10% -> 27%), a modal (must -> may) or a party (the employer -> the
participant): one changed word keeps the overlap high. So the claim is aligned with its best window
of the cited text (one sentence or list item, or two adjacent ones) and must agree with it on:

  numbers     every number, amount, percentage, age, date part or duration in the claim is in the window
  negation    what the claim negates the window negates, and the reverse
  modality    obligation / permission / restriction / universality / hedging / certainty / advice words
              of the claim are in the window; the window's obligation and restriction are in the claim
  terms       every content term of the claim is in the window, except connectives and generic verbs
              and, as the claim's subject, the cited article's subject ("Contoso charges ...")

A claim with no content term supports nothing. Measured on tests/data/perturbations.yaml (negation
flips, number, entity, modal, unit and date swaps vs faithful paraphrases): see BENCHMARKS.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..kb.text import FAQ_MARK, FAQ_QUOTE, NEGATIONS, code_parts, normalize, split_items, stem, term_set, words

_NUMBER = re.compile(r"(?<![\w.])\$?\d[\d,]*(?:\.\d+)?(?:½|¼|¾)?%?")
MODALS: dict[str, frozenset[str]] = {
    "obligation": frozenset({"must", "requir", "shall", "mandatori", "oblig"}),
    "permission": frozenset({"may", "can", "allow", "permit", "elig", "option", "could"}),
    "restriction": frozenset({"onli", "sole", "exclus"}),
    "universal": frozenset({"alway", "all", "everi"}),
    "hedge": frozenset({"usual", "general", "typic", "often", "sometim", "most", "rare"}),
    "certainty": frozenset({"will", "guarante", "definit", "certain"}),
    "advice": frozenset({"recommend", "suggest", "should", "advis"}),
}
SYMMETRIC = ("obligation", "restriction")  # dropping "must" or "only" changes the rule as much as adding it
# Words a faithful paraphrase adds without adding meaning: connectives and generic verbs (stemmed).
LIGHT = frozenset(stem(w) for w in (
    "once", "because", "rather", "case", "when", "whenever", "while", "where", "after", "before", "then", "also",
    "which", "so", "thus", "therefore", "hence", "however", "although", "though", "whereas", "since", "until",
    "unless", "instead", "either", "both", "each", "per", "via", "carry", "carries", "charge", "charged",
    "charges", "total", "totals", "count", "counts", "take", "taken", "takes", "submit", "submitted", "send",
    "sent", "calculate", "calculated", "use", "used", "using", "become", "becomes", "combine", "combined", "need",
    "needed", "make", "made", "get", "gets", "have", "has", "give", "given", "apply", "applies", "happen",
    "happens", "occur", "occurs", "do", "does", "done", "go", "goes", "put", "set", "show", "shows"
))


@dataclass(frozen=True)
class Finding:
    ok: bool
    reason: str = ""


def numbers(text: str) -> set[str]:
    """Numbers as written, normalised ($50,000 = 50000, 10% = 10%): the amounts a claim may not change."""
    out = set()
    for m in _NUMBER.finditer(text):
        token = m.group(0).replace(",", "").replace("$", "")
        out.add(token.rstrip("."))
    return out


def negated_terms(text: str) -> set[str]:
    """Content terms within three words after a negation cue ("no withholding" -> {withhold})."""
    tokens = words(text)
    out: set[str] = set()
    for i, w in enumerate(tokens):
        if w in NEGATIONS:
            out |= term_set(" ".join(tokens[i + 1:i + 4]))
    return out


def negations(text: str) -> int:
    return sum(w in NEGATIONS for w in words(text))


def modal_classes(text: str) -> set[str]:
    stems = {stem(w) for w in words(text)}
    return {name for name, cues in MODALS.items() if stems & cues}


@lru_cache(maxsize=256)
def _items(source: str) -> tuple[str, ...]:
    """A cited text's sentences and list items, split once per text (every claim citing it reads them)."""
    return tuple(split_items(source))


def best_window(claim: str, sources: list[str]) -> str:
    """The sentence or list item of the cited text the claim rests on; a pair of neighbours only when
    no single one covers most of the claim (a claim may join two sentences, but one should not borrow
    a word from the next sentence to pass)."""
    claim_terms = term_set(claim) | numbers(claim)

    def key(w: str) -> tuple[float, int]:
        w_terms = term_set(w) | numbers(w)
        return len(claim_terms & w_terms) / (len(claim_terms) or 1), -len(w_terms)

    # a long code example is quoted by its stanzas (kb.text.code_parts): each is a window of its own
    units = [p for source in sources for u in (_items(source) or [source])
             for p in dict.fromkeys([u, *code_parts(u)])]
    if not units:
        return ""
    best = max(units, key=key)
    if key(best)[0] >= 0.8 or not re.search(r"[;.]\s+\S", claim.strip().rstrip(".")):
        return best
    pairs = [f"{a} {b}" for source in sources for a, b in zip(_items(source), _items(source)[1:],
                                                            strict=False)]
    return max([best, *pairs], key=key)


_TOKEN = re.compile(r"\w+|[^\w\s]")
_SENTENCE_ENDS = frozenset(".?!")


def _tokens(text: str) -> list[str]:
    """Words, numbers and every mark between them ("$", "%", ".", "'"), lower-cased: a quote's spelling."""
    return _TOKEN.findall(normalize(text))


def quotes_whole_sentences(claim: str, sources: list[str]) -> bool:
    """Whether the claim is consecutive whole sentences (or list items) of a cited text, as written (marks
    and symbols included: "No. Refunds are issued" is not "No refunds are issued", "$5" is not "5%"), up to
    an FAQ quote's length (kb.text.FAQ_QUOTE). A quote that starts and ends where the text's sentences do
    says what they say, however many it spans; a part of a sentence ("fees are waived" out of "it is not
    true that fees are waived") is not one."""
    target = _tokens(claim)
    for source in sources:
        units = [tokens for u in _items(source) if (tokens := _tokens(FAQ_MARK.sub("", u)))]  # (a bare "Q.")
        for i in range(len(units)):
            joined: list[str] = []
            for unit in units[i:i + FAQ_QUOTE]:
                if joined and joined[-1] not in _SENTENCE_ENDS:
                    break  # list items without a full stop do not run on into one sentence
                joined += unit
                if joined == target:
                    return True
                if len(joined) >= len(target):
                    break
    return False


def entails(claim: str, sources: list[str], titles: list[str] = ()) -> Finding:  # type: ignore[assignment]
    """Whether the claim agrees with the best-aligned window of its cited sources; the reason if not."""
    content = term_set(claim)
    if not content:
        return Finding(False, "no content words")
    if quotes_whole_sentences(claim, sources):
        return Finding(True)
    window = best_window(claim, sources)
    if not window:
        return Finding(False, "nothing cited states it")
    extra_numbers = numbers(normalize(claim)) - numbers(normalize(window))
    if extra_numbers:
        return Finding(False, f"number not in the cited text: {sorted(extra_numbers)[0]}")
    claim_terms, window_terms = content, term_set(window)
    claim_neg, window_neg = negated_terms(claim), negated_terms(window)
    shared_negation = bool(claim_neg & window_neg)
    if (claim_neg and not shared_negation) or (window_neg & claim_terms and not shared_negation) or (
            negations(claim) != negations(window) and window_neg & claim_terms):
        return Finding(False, "negation differs from the cited text")
    claim_modals, window_modals = modal_classes(claim), modal_classes(window)
    added = claim_modals - window_modals
    dropped = {m for m in SYMMETRIC if m in window_modals and m not in claim_modals}
    if added or dropped:
        return Finding(False, f"{'/'.join(sorted(added | dropped))} wording differs from the cited text")
    # A paraphrase may name the article's subject ("Contoso charges ..."), as its subject, not elsewhere.
    subject = term_set(" ".join(words(claim)[:4])) & {t for title in titles for t in term_set(title)}
    allowed = window_terms | LIGHT | subject
    new = {t for t in claim_terms - allowed if not t.isdigit()} - {stem(w) for w in NEGATIONS}
    if new:
        return Finding(False, f"says what the cited text does not: {sorted(new)[0]}")
    return Finding(True)
