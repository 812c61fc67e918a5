"""Reranking strategies behind one interface: `none`, `heuristic` (default) and `cross-encoder`.

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
from typing import Any, ClassVar, Protocol

from citewise.kb.text import term_set, terms

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

    def rerank(self, question: str, hits: list[dict[str, Any]], **signals: Any) -> list[dict[str, Any]]: ...


class NoRerank:
    name = "none"

    def rerank(self, question: str, hits: list[dict[str, Any]], **signals: Any) -> list[dict[str, Any]]:
        return hits


class HeuristicRerank:
    name = "heuristic"

    def rerank(self, question: str, hits: list[dict[str, Any]], *, facets: dict[str, list[str]] | None = None,
               idf: Callable[[str], float] = lambda _t: 1.0, **_: Any) -> list[dict[str, Any]]:
        if not hits:
            return hits
        top = max(h["score"] for h in hits)
        low = min(h["score"] for h in hits)
        spread = (top - low) or 1.0
        q_terms = {t: max(idf(t), 0.1) for t in terms(question)}
        total = sum(q_terms.values()) or 1.0
        wanted = intent_types(question)
        facets = facets or {}
        out = []
        for h in hits:
            chunk_terms = term_set(f"{h['title']} {h['section']} {h['text']}")
            overlap = sum(w for t, w in q_terms.items() if t in chunk_terms) / total
            md = h.get("metadata") or {}
            facet = (sum(1 for f, vals in facets.items() if _has(md.get(f), vals)) / len(facets)) if facets else 0.0
            section = 1.0 if h["chunk_type"] in wanted else 0.0
            score = (h["score"] - low) / spread + 0.10 * overlap + 0.10 * facet + 0.10 * section
            out.append({**h, "fused": h["score"], "score": round(score, 6)})
        out.sort(key=lambda h: (-h["score"], h["chunk_id"]))
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
        from pathlib import Path

        from citewise.errors import ConfigError

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

    def rerank(self, question: str, hits: list[dict[str, Any]], **_: Any) -> list[dict[str, Any]]:
        if not hits:
            return hits
        scores = self.model.predict([(question, f"{h['title']}\n{h['text']}") for h in hits], show_progress_bar=False)
        out = [{**h, "fused": h["score"], "score": float(s)} for h, s in zip(hits, scores, strict=True)]
        out.sort(key=lambda h: (-h["score"], h["chunk_id"]))
        return out


def get_reranker(name: str, model_path: str = "") -> Reranker:
    if name == "none":
        return NoRerank()
    if name == "cross-encoder":
        return CrossEncoderRerank(model_path)
    return HeuristicRerank()
