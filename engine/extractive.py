"""Deterministic extractive generator: builds the structured answer from context sentences.

Nothing is written that is not in the context, so every item is a verbatim, cited extract:
answer components are the context sentences most relevant to the question (0.45 x term overlap,
terms weighted by IDF and by how well they discriminate within the context, + 0.45 x dense
similarity to the question, + a bonus for a sentence of the type asked, more in the question's own terms:
its unit, the limit a deadline question asks for, the bound a "ceiling" question asks for; + small priors
for retrieval score and the matched article), steps are
the list items of a `steps` chunk, warnings are the articles' `Always:` rules plus warning-like
sentences.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..kb.convert.transcript import CALLER_ROLES
from ..kb.text import (
    FAQ_MARK,
    FAQ_SETUP,
    MAX_QUOTE_CHARS,
    NEUTRALIZED,
    acronym_definitions,
    blocks,
    clean_markdown,
    code_parts,
    display_text,
    split_items,
    term_set,
    terms,
    with_long_forms,
)
from .answerability import (
    QUESTION_WORDS,
    accepted_types,
    band_width,
    exact_match,
    figures,
    of_type,
    price_question,
    question_parts,
    question_type,
    sentence_types,
)
from .records import ContextChunk, Draft, Section
from .verify import (
    ANSWER_SOURCES,
    always_warning,
    citations_in,
    cite,
    never_say_for,
    phrase_said,
    strip_citations,
)

if TYPE_CHECKING:
    from .generate import AnswerRequest

ANSWER_TYPES = ANSWER_SOURCES - {"steps"}  # steps are listed as steps, not as answer components
MAX_COMPONENTS, MAX_STEPS, MAX_WARNINGS = 4, 12, 5
MAX_CONDITIONS = 6  # an eligibility list this short is given whole (see whole_conditions); not fitted
TYPE_BONUS = 0.20  # chosen on the dev split of the eval sets
EXAMPLE_SENTENCES = 3  # a worked example's paragraph quoted whole has at most this many sentences
EXACT_BONUS = 0.15  # a sentence in the question's own terms (its unit, a deadline); chosen on dev
BAND_BONUS = TYPE_BONUS  # a sentence stating the band the question's quantity falls in: as telling as its type
# A sentence with the caller's figures (two of them, or the only one: a rent and a day): as telling as its type
CASE_BONUS = TYPE_BONUS
# A "how do I ...?" answered in documentation: the sentence that shows the command or call is the answer's
# form, as a figure is a how-much question's. Chosen on dev: +1 (docs), nothing else moved, at 0.1 or 0.2.
CODE_BONUS = TYPE_BONUS
# code that does something: a command with a flag or a prompt ("pytest --timeout=300", "$ make"), a call
# ("tqdm.write(...)"), an install; not a sample of data (a CSV's header) or a UI label in backticks
_CODE_SPAN = re.compile(r"```[^\n]*\n(.*?)```|``([^`\n]+)``|`([^`\n]+)`", re.DOTALL)
_DOES_SOMETHING = re.compile(r"(?:^|\s)--?[a-z]|^\s*[$>]\s|\b[A-Za-z_][\w.]*\(|\b[A-Za-z_][\w.]*=\S|"
                             r"^\s*(?:import\s+[\w.]+$|from\s+[\w.]+\s+import\b|export\s+[A-Z_]+=)|"
                             r"\b(?:pip|pip3|npm|npx|apt|brew|conda|cargo|git|docker|curl|python|python3|uv|pytest|"
                             r"ruff|mypy|yarn|pnpm)\s+-?[a-z.]|\bgo\s+(?:build|run|test|get|install|mod)\b|"
                             r"^\s*make\s+[a-z][\w-]*\s*$", re.MULTILINE)


def shows_code(text: str) -> bool:
    """The text shows a command or a call (in backticks or a fenced block)."""
    return any(_DOES_SOMETHING.search(next(g for g in m.groups() if g is not None) or "")
               for m in _CODE_SPAN.finditer(text))
SOURCE_MARGIN = 0.15  # how much better another document's best sentence must be (chosen on dev)
_WARNING_CUES = re.compile(
    r"\b(penalt(y|ies)|deadline|must|cannot|can't|may not|do not|don't|never|irrevocabl\w*|withh[oe]ld\w*|"
    r"taxable|tax(es)?|default\w*|forfeit\w*|warning|important|note that|within \d+ days|risk\w*|lose|loss)\b",
    re.IGNORECASE)


def answerable_unit(text: str) -> bool:
    """Long enough to say something and short enough to be one statement; a code block (a command,
    a call, with the sentence that leads into it) is worth quoting however short or wordy it is."""
    return 4 <= len(text.split()) <= 90 or ("```" in text and len(text) <= MAX_QUOTE_CHARS)


def _opens_question(item: str) -> bool:
    """Whether the sentence opens an FAQ question with a "Q:" mark."""
    return (mark := FAQ_MARK.match(item)) is not None and mark.group(1) == "Q"


_ANSWER_JOINED = re.compile(r"(?<=\?)\s+(?=A\s*[:.]\s)")  # "Q: Which pets fly? A: These: dogs; cats."


def _marked_items(text: str) -> list[str]:
    """The chunk's units, with a "Q." or "A." that the sentence splitter cut off joined to its sentence, and
    a question and an answer it joined (an answer that leads into a list) parted again."""
    items = [part for item in split_items(text) for unit in code_parts(item) for part in _ANSWER_JOINED.split(unit)]
    out: list[str] = []
    for item in items:
        if out and FAQ_MARK.fullmatch(out[-1]):
            out[-1] = f"{out[-1].rstrip(':. ')}: {item}"
        else:
            out.append(item)
    return out


def _faq(items: list[str], i: int, text: str) -> tuple[str | None, str | None, int]:
    """The FAQ entry at items[i]: its question, its answer's first statement, and the index after it. A
    question marked "Q:" may open with the asker's situation ("I moved house. Do I need a new card?"): it
    is the question's, never a fact of its own, so a question set up at more than FAQ_SETUP sentences, or
    with no answer, is skipped (None) and its answer stands alone."""
    j = i
    while (not items[j].endswith("?") and j - i <= FAQ_SETUP and j + 1 < len(items)
           and not FAQ_MARK.match(items[j + 1])):
        j += 1  # a marked question runs to its "?"
    if not items[j].endswith("?"):
        return None, None, j + 1  # no "?" within reach: what was read is the (unfinished) question's
    if j + 1 >= len(items) or _opens_question(items[j + 1]) or items[j + 1].endswith("?") or j - i > FAQ_SETUP:
        return None, None, j + 1  # no answer follows (another question does), or too long a set-up to quote
    question = " ".join(FAQ_MARK.sub("", x).strip() for x in items[i:j + 1])
    answer, k = FAQ_MARK.sub("", items[j + 1]).strip(), j + 2
    # a bare "Yes." (shorter than a quotable unit) says what with the next sentence of its answer's paragraph
    if (not answerable_unit(answer) and k < len(items) and not FAQ_MARK.match(items[k]) and not items[k].endswith("?")
            and _one_paragraph(text, answer, items[k])):
        answer, k = f"{answer} {items[k]}", k + 1
    return question, answer, k


# What a call says that is no fact of the knowledge base, a whole sentence of it (a speaker's label may open
# it): a greeting ("Good afternoon, you're through to Brackenmoor Parcel, Dana speaking."), thanks ("Thanks
# for calling Brackenmoor Parcel."), "How can I help?", an acknowledgement of a few words ("Okay.", "Great,
# thanks."). Not one that goes on to say something ("Okay, it's up to £25 without cover.", "Good morning,
# our lines are open 8am to 8pm.", "Thanks for calling, returns are free within 30 days.").
_WORDS = r"(?:,?\s+[\w'’&-]+)"
_SPEAKER = r"(?:[A-Z][\w.'’ -]{0,30}:\s+)?"  # a speaker's label opening the turn
_CONSENTS = r"okay|ok|sure|right|great|perfect|lovely|brilliant|no problem"
_PLEASANTRY = re.compile(
    _SPEAKER + r"(?:"
    rf"(?:hi|hello|hey|{_CONSENTS}|you're welcome|you’re welcome|"
    rf"bye|goodbye|thanks|thank you)(?: (?:so|very) much)?{_WORDS}{{0,3}}|"
    rf"good (?:morning|afternoon|evening){_WORDS}{{0,2}}(?:,? (?:you're|you’re|you are) (?:through|speaking) to"
    rf"{_WORDS}{{1,4}}|,? welcome to{_WORDS}{{1,4}})?(?:,? [\w'’-]+ speaking)?|"
    rf"(?:thanks|thank you)(?: (?:so|very) much)? for (?:calling|contacting|holding|waiting|choosing|using)"
    rf"{_WORDS}{{0,4}}|"
    r"how (?:can|may) i help(?: you)?(?: today)?|is there anything else(?: i can (?:help|do) (?:you )?(?:with|for "
    r"you))?(?: today)?|have a (?:good|great|nice|lovely) \w+)[.?!]*", re.IGNORECASE)


_CONSENT = re.compile(_SPEAKER + rf"(?:{_CONSENTS})\b[^.?!]*[.!]*", re.IGNORECASE)


def _pleasantries(items: list[str]) -> set[int]:
    """The items that are pleasantries, but for an acknowledgement that answers a question ("Can I come on
    Thursday?" "Sure."): that is the answer."""
    said = {i for i, x in enumerate(items) if _PLEASANTRY.fullmatch(x) and not re.search(r"\d", x)}
    return {i for i in said
            if not (i and items[i - 1].endswith("?") and i - 1 not in said and _CONSENT.fullmatch(items[i]))}


_LABEL = re.compile(r"([A-Za-z][\w.'’ ()-]{0,30}):\s")


def _call_items(text: str, calling: frozenset[str] = frozenset()) -> tuple[list[str], set[int]]:
    """A transcript's units (a turn per paragraph, as _turns leaves them), without its pleasantries, and
    which of them a caller says: by the turn's label ("Customer:"), or a speaker the conversion found to be
    the caller (`calling`, kb/convert/transcript.callers: "Gareth" beside "Agent")."""
    items: list[str] = []
    callers: set[int] = set()
    for turn in text.split("\n\n"):
        said = _marked_items(turn)
        label = _LABEL.match(turn.strip())
        if label and (label.group(1).strip().lower() in CALLER_ROLES or label.group(1).strip() in calling):
            callers.update(range(len(items), len(items) + len(said)))
        items.extend(said)
    drop = _pleasantries(items)
    kept = [i for i in range(len(items)) if i not in drop]
    return [items[i] for i in kept], {n for n, i in enumerate(kept) if i in callers}


def _turns(text: str) -> str:
    """A transcript's speaker turns (one per line, "Agent: ...") as paragraphs: a sentence never runs from
    one speaker's turn into the next one's, and a question is answered within the next turn."""
    return re.sub(r"\n(?=\S)", "\n\n", text)


def _units(chunk: ContextChunk, allowed: Callable[[str], bool] | None = None) -> list[tuple[str, str]]:
    """(text to score, text to output) pairs; an FAQ entry is scored and quoted as its question with its
    answer: "No, only from the age of 16" or "Either a credit or a partial refund" answer a question the
    reader would otherwise never see. A call transcript's turns are read as paragraphs, without its
    pleasantries (see _turns). `allowed`: whether a text may be quoted (an example's paragraph that may not
    be is read sentence by sentence)."""
    call = chunk.metadata.get("source_type") == "transcript"
    text = _turns(chunk.text) if call else chunk.text
    items, callers = (_call_items(text, frozenset(chunk.metadata.get("callers") or ())) if call
                      else (_marked_items(text), set()))
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(items):
        item = FAQ_MARK.sub("", items[i]).strip()
        if _opens_question(items[i]) or (item.endswith("?") and i + 1 < len(items)):
            question, answer, i = _faq(items, i, text)
            # (what a caller says is their case, not the knowledge base's: quoted only as the question an
            # agent's answer follows, "Can your driver take it away? Agent: I'm afraid our drivers can't ...")
            if question is not None and answer is not None and i - 1 not in callers:
                quote = f"{question} {answer}"
                out.append((quote, quote if answerable_unit(quote) else answer))  # (a long question: its answer)
            continue
        if (chunk.chunk_type == "examples" and (whole := _example_paragraph(items, i, text))
                and (allowed is None or allowed(whole[0]))):  # (else its sentences, one by one)
            # A worked example told in a short paragraph ("A £120 lamp ... arrives cracked. It is concealed
            # damage reported on day 4, so the claim is in time. Without Shield, up to £75 can be paid.") is
            # one answer: its set-up alone states no outcome, its outcome alone no case.
            out.append((whole[0], whole[0]))
            i = whole[1]
            continue
        if (chunk.chunk_type == "examples" and i + 1 < len(items) and not sentence_types(item)
                and sentence_types(items[i + 1]) and not items[i + 1].endswith("?")
                and answerable_unit(f"{item} {items[i + 1]}") and _one_paragraph(text, item, items[i + 1])):
            # A worked example's set-up ("A ticket was booked for 'Jonh Smyth'...") states no outcome: what
            # it comes to is the next sentence of its paragraph, when that states one (a figure, "free"),
            # and the two are one answer. A list's items are examples of their own.
            pair = f"{item} {items[i + 1]}"
            out.append((pair, pair))
            i += 2
            continue
        if not item.endswith("?") and i not in callers:
            out.append((item, item))
        i += 1
    return out


def _example_paragraph(items: list[str], i: int, text: str) -> tuple[str, int] | None:
    """The paragraph of prose that items[i] opens, whole, with the index after it, when it has two or three
    sentences (a longer one tells more than one case), asks nothing, and is short enough to quote as one
    statement; else None."""
    j = i
    while j + 1 < len(items) and not items[j + 1].endswith("?") and _one_paragraph(text, items[j], items[j + 1]):
        j += 1
    if j == i or j - i >= EXAMPLE_SENTENCES or (j + 1 < len(items) and _one_paragraph(text, items[j], items[j + 1])):
        return None
    if i > 0 and _one_paragraph(text, items[i - 1], items[i]):
        return None  # not where its paragraph starts
    whole = " ".join(items[i:j + 1])
    return (whole, j + 1) if answerable_unit(whole) else None


def _one_paragraph(text: str, first: str, second: str) -> bool:
    """Whether two sentences stand in one paragraph of prose (not two list items, not two paragraphs; a
    paragraph may be wrapped over lines and marked up, as the units are read without either)."""
    for block, from_list in blocks(text):
        flat = " ".join(clean_markdown(block).split())
        if not from_list and first in flat and second in flat:
            return True
    return False


class ExtractiveGenerator:
    name = "extractive"

    def generate(self, request: AnswerRequest) -> Draft:
        chunks = request.chunks
        weights: dict[str, float] = {}
        for t in terms(request.question):
            weights[t] = max(request.idf(t), 0.1)
        for phrase in [*request.expansions, *request.situation]:
            for t in terms(phrase):
                weights.setdefault(t, 0.5 * max(request.idf(t), 0.1))
        avoid = {a.strip().lower() for a in request.feedback.avoid}
        binding = {c.doc_id: never_say_for({c.doc_id}, request.governing, request.rules) for c in chunks}

        def allowed(text: str, doc_id: str | None = None) -> bool:
            """Not a claim dropped before, and free of the phrases that bind it (its article's and the
            governing article's `Never say:`; another article's rules do not reach it)."""
            phrases = binding.get(doc_id, []) if doc_id else never_say_for(set(), request.governing, request.rules)
            return (NEUTRALIZED not in text and text.strip().lower() not in avoid
                    and phrase_said(text, phrases) is None)

        units = [(order, score_text, output, c) for order, c in enumerate(chunks) if c.chunk_type in ANSWER_TYPES
                 for score_text, output in _units(c, lambda t, d=c.doc_id: allowed(t, d))
                 if answerable_unit(output) and allowed(output, c.doc_id)]
        # "The STD benefit is 60% ..." answers a question about the short-term disability benefit: an acronym
        # the context defines counts as its long form. (Not the other way: a question's "PTO" read as "paid
        # time off" would credit every sentence with "part-time" in it.)
        defined = acronym_definitions(c.text for c in chunks)
        unit_terms = [term_set(with_long_forms(st, defined)) for _, st, _, _ in units]
        # A question term found in every candidate sentence (a facet every chunk shares) tells them apart
        # no better than a stopword: weight = global IDF x discrimination within this context.
        df = Counter(t for ts in unit_terms for t in ts if t in weights)
        local = {t: w * math.log(1 + len(units) / (1 + df.get(t, 0))) for t, w in weights.items()}
        total = sum(local.values()) or 1.0
        sims = request.similarity([st for _, st, _, _ in units]) if request.similarity and units else [0.0] * len(units)
        chunk_scores = [float(c.score) for c in chunks] or [0.0]
        low, spread = min(chunk_scores), (max(chunk_scores) - min(chunk_scores)) or 1.0

        # what a unit is and states, read once (a question of two parts ranks the units three times)
        unit_types = [sentence_types(output) for _, _, output, _ in units]
        case = request.case_figures
        case_hits = [len(case & figures(output)) >= min(2, len(case)) if case else False
                     for _, _, output, _ in units]

        def rank(question: str, asked: set[str] | None = None) -> list[tuple[float, int, str, ContextChunk]]:
            """Units by how well they answer `question`: the whole question, or one part of it (then the
            part's own terms, `asked`, weigh twice; the type is the part's)."""
            part = {t: w * (2.0 if asked and t in asked else 1.0) for t, w in local.items()}
            part_total = sum(part.values()) or total
            qtype = question_type(question)
            accepted, how = accepted_types(question, qtype), qtype == "procedure"
            priced = price_question(question)
            tightest = min((w for _, _, out, _ in units if (w := band_width(question, out)) is not None),
                           default=None)
            out: list[tuple[float, int, str, ContextChunk]] = []
            for (order, _, output, c), ts, sim, kinds, is_case in zip(units, unit_terms, sims, unit_types, case_hits,
                                                                      strict=True):
                lexical = sum(w for t, w in part.items() if t in ts) / part_total
                dense = min(1.0, max(0.0, (sim - 0.15) / 0.6))
                # A sentence of the kind the question asks for (an amount, a date, a duration...) answers it;
                # a sentence that merely shares the topic does not.
                typed = TYPE_BONUS if of_type(output, kinds, accepted, priced) else 0.0
                exact = bool(typed) and exact_match(question, output)
                if lexical <= 0 and dense < 0.4 and not (exact and c.doc_id == request.article_id):
                    continue  # shares no term with the question, means nothing close, and is not its answer's form
                if exact:
                    typed += EXACT_BONUS
                if tightest is not None and band_width(question, output) == tightest:
                    typed += BAND_BONUS  # "6 hours late": the row of the narrowest band it falls in is the answer
                if is_case:
                    typed += CASE_BONUS  # a worked example with the caller's own figures is the caller's case
                if how and shows_code(output):
                    typed += CODE_BONUS  # "run `pytest --timeout=300`" answers "how do I time out a test?"
                prior = 0.15 * (float(c.score) - low) / spread + (0.10 if c.doc_id == request.article_id else 0.0)
                out.append((0.45 * lexical + 0.45 * dense + typed + prior, order, output, c))
            out.sort(key=lambda x: (-x[0], x[1]))
            return out

        scored = rank(request.question)
        # One source per answer: the governing article (where none governs, the plain document that leads
        # the search), else the document of the best sentence. Mixing documents cites articles that do not
        # govern the inquiry.
        source = request.article_id or request.lead_document
        if scored:
            own = [score for score, *_, c in scored if c.doc_id == source]
            # The governing article answers unless another document says it far better (then the
            # question is not about the article's procedure, e.g. a fact in a plain document). The lead
            # document likewise: chosen on the twelve dev halves, +2 -0 (a slide deck's meter-reading advice
            # over an article's check-in rule; an unstated question no longer answered by a PDF's aside).
            if not own or scored[0][0] - own[0] > SOURCE_MARGIN:
                source = scored[0][3].doc_id
        # A comparison ("how long at Contoso, and at Fabrikam?") is answered from each named provider's
        # article, in turn: the best sentences of each, as many from each.
        sources = [source, *request.compared] if source == request.article_id and request.compared else [source]
        scored = [x for x in scored if x[3].doc_id in sources]
        quota = MAX_COMPONENTS if len(sources) == 1 else max(2, MAX_COMPONENTS // len(sources))

        # Only the answer's articles' Always-rules shape the warnings (a rule binds its own article). Where none
        # governs, an article the answer comes from may still come to (engine/check.py settles on it, and the
        # check adds its rules then); not every article an answer quotes is the inquiry's.
        always = self._always(chunks, request, sources if len(sources) > 1 else
                              [request.article_id] if request.article_id else [], allowed)
        # A question that asks two things ("what's the overdraft fee, and by when do I top up to get it
        # reversed?") gets each part's best sentence first, in the order asked; the rest follow.
        parts = question_parts(request.question) if len(sources) == 1 else []
        # (a part's asking words, "the *most* they pay", say what kind of answer, not what it is about)
        firsts = [next((x for x in rank(p, set(terms(p)) - QUESTION_WORDS) if x[3].doc_id in sources), None)
                  for p in parts] if len(parts) > 1 else []
        components: list[tuple[str, ContextChunk]] = []
        for _, _, text, c in [x for x in firsts if x is not None] + scored:
            if any(similar(text, w) for w in always):
                continue
            if sum(d.doc_id == c.doc_id for _, d in components) >= quota:
                continue
            if any(similar(text, other) for other, d in components if d.doc_id == c.doc_id):
                continue  # a repeat of this document's own claim (another provider's parallel rule is not one)
            components.append((text, c))
        components = whole_conditions(components, allowed, always)
        if not components:  # nothing overlaps lexically: fall back to the lead of the best answer chunk
            lead = next((c for c in chunks if c.chunk_type in ANSWER_TYPES and (source is None or c.doc_id == source)),
                        None)
            if lead is not None:
                first = next((out for _, out in _units(lead)
                              if allowed(out, lead.doc_id) and len(out.split()) >= 4), None)
                if first:
                    components.append((first, lead))

        docs_used = list(dict.fromkeys([*(s for s in sources if s), *(c.doc_id for _, c in components)]))
        steps = self._steps(chunks, request.article_id, docs_used, allowed)
        warnings = self._warnings(chunks, docs_used, weights, allowed, always, [t for t, _ in components])

        sections: list[Section] = []
        titles = {c.doc_id: display_text(c.title, 120) for c in chunks}
        doc_of = {c.label: c.doc_id for c in chunks}

        def warned(doc_id: str) -> list[str]:
            """A comparison's warnings go under the provider they cite (another bank's ombudsman is not this
            bank's); otherwise under the answer's first section."""
            if len(sources) > 1:
                return [w for w in warnings if doc_id in {doc_of.get(label) for label in citations_in(w)}]
            return warnings if doc_id == docs_used[0] else []

        for doc_id in docs_used:
            section = Section(topic=titles.get(doc_id, doc_id),
                              answer_components=[cite(t, [c.label]) for t, c in components if c.doc_id == doc_id],
                              steps=steps if doc_id == docs_used[0] else [],
                              warnings=warned(doc_id))
            if not section.empty():
                sections.append(section)
        return Draft(sections=sections, generator=self.name)

    @staticmethod
    def _steps(chunks: list[ContextChunk], article_id: str | None, docs_used: list[str],
               allowed: Callable[[str, str | None], bool]) -> list[str]:
        candidates = [c for c in chunks if c.chunk_type == "steps" and c.doc_id in docs_used]
        candidates.sort(key=lambda c: (c.doc_id != article_id, docs_used.index(c.doc_id)))
        if not candidates:
            return []
        doc = candidates[0].doc_id
        steps: list[str] = []
        for c in (c for c in candidates if c.doc_id == doc):
            for item in split_items(c.text, join_lead_ins=False):  # each step its own item
                if allowed(item, c.doc_id) and item not in steps and len(steps) < MAX_STEPS:
                    steps.append(cite(item, [c.label]))
        return steps

    @staticmethod
    def _always(chunks: list[ContextChunk], request: AnswerRequest, docs: list[str],
                allowed: Callable[[str, str | None], bool]) -> list[str]:
        """Each Always-rule as the context sentence that states it (or the rule's statement), cited."""
        out: list[str] = []
        for doc_id in docs:
            own = [c for c in chunks if c.doc_id == doc_id]
            for rule in (request.rules.get(doc_id) or {}).get("always", []):
                item = always_warning(rule, own)
                if (item is not None and allowed(strip_citations(item), doc_id) and len(out) < MAX_WARNINGS
                        and not any(similar(item, o) for o in out)):
                    out.append(item)
        return out

    @staticmethod
    def _warnings(chunks: list[ContextChunk], docs_used: list[str], weights: dict[str, float],
                  allowed: Callable[[str, str | None], bool],
                  always: list[str], taken: list[str]) -> list[str]:
        """Always-rules first, then the most relevant warning-like sentences of the main article."""
        warnings = list(always)
        cue_hits: list[tuple[float, str]] = []
        for c in chunks:
            if c.doc_id not in docs_used[:1] or c.chunk_type not in ANSWER_TYPES:
                continue
            for _, text in _units(c):
                if _WARNING_CUES.search(text) and allowed(text, c.doc_id) and 4 <= len(text.split()) <= 60:
                    overlap = sum(w for t, w in weights.items() if t in term_set(text))
                    if overlap > 0:
                        cue_hits.append((overlap, cite(text, [c.label])))
        cue_hits.sort(key=lambda x: -x[0])
        for _, w in cue_hits:
            if len(warnings) < MAX_WARNINGS and not any(similar(w, o) for o in warnings + taken):
                warnings.append(w)
        return warnings


def whole_conditions(components: list[tuple[str, ContextChunk]], allowed: Callable[[str, str | None], bool],
                     always: list[str]) -> list[tuple[str, ContextChunk]]:
    """An eligibility section's conditions all hold at once: the one that matched the question ("...or
    receives SSDI") is not the answer without the others (the income limit, the account in one's own
    name). Where an answer quotes one, the section's other conditions follow it, in their order, when the
    section is a short list (MAX_CONDITIONS, counted before Never-say filtering); a longer one is not a
    checklist of conditions. One list per document (the answer stays short), none cut by the budget (its
    last condition would be a fragment), and never a condition an Always-rule already gives as a warning."""
    out: list[tuple[str, ContextChunk]] = []
    listed: set[str] = set()  # documents whose list is given
    for text, chunk in components:
        if any(text == t and d.chunk_id == chunk.chunk_id for t, d in out):
            continue  # a condition already given with its list
        out.append((text, chunk))
        if chunk.chunk_type != "eligibility" or chunk.doc_id in listed or chunk.truncated:
            continue
        listed.add(chunk.doc_id)
        conditions = [unit for _, unit in _units(chunk) if answerable_unit(unit)]
        if len(conditions) <= MAX_CONDITIONS:  # (another provider's parallel condition is not a repeat)
            out += [(c, chunk) for c in conditions if allowed(c, chunk.doc_id)
                    and not any(similar(c, w) for w in always)
                    and not any(similar(c, t) for t, d in [*out, *components] if d.doc_id == chunk.doc_id)]
    return out


def similar(a: str, b: str) -> bool:
    ta, tb = term_set(a), term_set(b)
    if not ta or not tb:
        return False
    return len(ta & tb) / len(ta | tb) > 0.6
