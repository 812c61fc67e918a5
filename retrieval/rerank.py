"""Reranking strategies behind one interface: `none`, `heuristic` (default), `cross-encoder`, `llm`.

heuristic = fused score min-max normalised over the hits (0..1)
          + 0.10 * IDF-weighted query-term coverage of the chunk
          + 0.10 * share of detected facets the chunk carries
          + 0.10 * section match (the chunk type the wording asks for: "how do I" -> steps, "fee" -> fees)
The bonuses are small on purpose: BM25 already counts term overlap, so they only reorder near-ties.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, Protocol

from ..config import Context
from ..errors import ConfigError
from ..kb.text import term_set, terms
from ..llm.chat import ModelClock, ModelFault, structured_call
from .passage import Passage

_INTENTS: list[tuple[re.Pattern[str], set[str]]] = [
    (re.compile(r"\b(how (do|can|should) (i|we|they|you)|how to|steps?|process|procedure|submit|request|apply)\b",
                re.I), {"steps"}),
    (re.compile(r"\b(fees?|costs?|charges?|how much|price|expense)\b", re.I), {"fees"}),
    (re.compile(r"\b(eligib\w*|qualif\w*|allowed|permitted|who can|am i able)\b", re.I), {"eligibility"}),
    (re.compile(r"\b(information|documents?|data|details|paperwork)\b.*\b(need|required|provide|collect)\b", re.I),
     {"required_data"}),
    (re.compile(r"\b(problems?|issues?|errors?|rejected|denied|delay\w*|stuck|not (working|received))\b", re.I),
     {"common_issues"}),
    (re.compile(r"\b(should (i|we)|which|whether|options?|choose|better)\b", re.I), {"decision_guide"}),
    (re.compile(r"\b(rules?|limits?|maximum|minimum|deadline|how long|when)\b", re.I), {"business_rules"}),
]


def intent_types(question: str) -> set[str]:
    wanted: set[str] = set()
    for pattern, types in _INTENTS:
        if pattern.search(question):
            wanted |= types
    return wanted


class Reranker(Protocol):
    name: str

    def rerank(self, question: str, hits: list[Passage], **signals: Any) -> list[Passage]: ...


class NoRerank:
    name = "none"

    def rerank(self, question: str, hits: list[Passage], **signals: Any) -> list[Passage]:
        return hits


class HeuristicRerank:
    name = "heuristic"

    def rerank(self, question: str, hits: list[Passage], *, facets: dict[str, list[str]] | None = None,
               idf: Callable[[str], float] = lambda _t: 1.0, **_: Any) -> list[Passage]:
        if not hits:
            return hits
        top = max(h.score for h in hits)
        low = min(h.score for h in hits)
        spread = (top - low) or 1.0
        q_terms = {t: max(idf(t), 0.1) for t in terms(question)}
        total = sum(q_terms.values()) or 1.0
        wanted = intent_types(question)
        facets = facets or {}
        out = []
        for h in hits:
            chunk_terms = term_set(f"{h.title} {h.section} {h.text}")
            overlap = sum(w for t, w in q_terms.items() if t in chunk_terms) / total
            md = h.metadata or {}
            facet = (sum(1 for f, vals in facets.items() if _has(md.get(f), vals)) / len(facets)) if facets else 0.0
            section = 1.0 if h.chunk_type in wanted else 0.0
            score = (h.score - low) / spread + 0.10 * overlap + 0.10 * facet + 0.10 * section
            out.append(replace(h, fused=h.score, score=round(score, 6)))
        out.sort(key=lambda h: (-h.score, h.chunk_id))
        return out


def _has(value: Any, wanted: list[str]) -> bool:
    if isinstance(value, list):
        return any(v in wanted for v in value)
    return value in wanted


class CrossEncoderRerank:
    """sentence-transformers CrossEncoder loaded from a local path (never from a hub)."""

    name = "cross-encoder"
    _models: ClassVar[dict[str, Any]] = {}
    _lock = threading.Lock()

    def __init__(self, path: str):
        if not path or not Path(path).is_dir():
            raise ConfigError(f"cross-encoder reranker needs a local model directory (reranker_model={path!r})")
        self.path = path

    @property
    def model(self) -> Any:
        with self._lock:
            model = self._models.get(self.path)
            if model is None:
                from sentence_transformers import CrossEncoder

                model = self._models[self.path] = CrossEncoder(self.path, device="cpu", local_files_only=True)
            return model

    def rerank(self, question: str, hits: list[Passage], **_: Any) -> list[Passage]:
        if not hits:
            return hits
        scores = self.model.predict([(question, f"{h.title}\n{h.text}") for h in hits], show_progress_bar=False)
        out = [replace(h, fused=h.score, score=float(s)) for h, s in zip(hits, scores, strict=True)]
        out.sort(key=lambda h: (-h.score, h.chunk_id))
        return out


class LLMRerank:
    """A chat model scores the candidates 0-10 for relevance in one batched structured-output call.

    Only the first `LLM_RERANK_DEPTH` candidates are scored (the rest keep their order below them);
    the model's score orders them, the heuristic order breaks ties. Any model fault (timeout, bad
    reply, budget used up) falls back to the heuristic order and says so in `notes`.
    """

    name = "llm"

    def __init__(self, ctx: Context, clock: ModelClock | None):
        self.ctx = ctx
        self.clock = clock or ModelClock(limit=ctx.llm_deadline)
        self.fallback = HeuristicRerank()

    def rerank(self, question: str, hits: list[Passage], *, notes: dict[str, Any] | None = None,
               **signals: Any) -> list[Passage]:
        from ..llm.schemas import RerankOutput
        from ..prompts import render, render_passages

        ordered = self.fallback.rerank(question, hits, **signals)
        head, tail = ordered[:LLM_RERANK_DEPTH], ordered[LLM_RERANK_DEPTH:]
        if not head:
            return ordered
        prompt = render("rerank", self.ctx.rerank_prompt, question=question,
                        passages=render_passages([(str(i), h.title, h.text) for i, h in enumerate(head, start=1)]))
        call_notes: dict[str, Any] = {}
        try:
            out = structured_call(self.ctx, [("user", prompt)], RerankOutput, self.clock, call_notes,
                                  tags=["citewise:rerank"])
        except ModelFault as exc:
            if notes is not None:
                notes["rerank_fallback"] = f"heuristic: {exc}"
            return ordered
        given = {s.id: max(0.0, min(10.0, s.score)) for s in out.scores if 1 <= s.id <= len(head)}
        if notes is not None:
            notes["rerank_scored"] = len(given)
        rescored = [replace(h, fused=h.fused if h.fused is not None else h.score,
                            score=round(given.get(i, 0.0) + h.score / 100.0, 6))
                    for i, h in enumerate(head, start=1)]
        rescored.sort(key=lambda h: (-h.score, h.chunk_id))
        floor = min((h.score for h in rescored), default=0.0)
        return rescored + [replace(h, score=floor - 1 - i) for i, h in enumerate(tail)]


LLM_RERANK_DEPTH = 20


def get_reranker(ctx: Context, name: str | None = None, clock: ModelClock | None = None) -> Reranker:
    """The reranking strategy by name (the context's by default); `llm` needs a configured chat model."""
    name = name or ctx.reranker
    if name == "none":
        return NoRerank()
    if name == "cross-encoder":
        return CrossEncoderRerank(ctx.reranker_model)
    if name == "llm":
        if not ctx.llm_model:
            raise ConfigError("reranker 'llm' needs a chat model (llm_model)")
        return LLMRerank(ctx, clock)
    return HeuristicRerank()
