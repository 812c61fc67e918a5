"""Hybrid search over one KB: BM25 + dense with the same filter mask, fused, optionally reranked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from .bm25 import BM25Index, top_k
from .fusion import rrf, zscore
from .vectors import VectorIndex

Method = Literal["bm25", "dense", "hybrid"]


@dataclass
class Hit:
    row: int
    score: float
    bm25: float = 0.0
    dense: float = 0.0
    bm25_rank: int | None = None
    dense_rank: int | None = None


@dataclass
class SearchParams:
    k: int = 10
    candidate_k: int = 100
    method: Method = "hybrid"
    fusion: Literal["rrf", "zscore"] = "rrf"
    rrf_k: int = 60
    alpha: float = 0.5  # dense weight for z-score fusion


def hybrid_search(bm25: BM25Index, vectors: VectorIndex, weighted_terms: dict[str, float],
                  query_vec: np.ndarray | None, mask: np.ndarray | None, p: SearchParams,
                  flt: dict | None = None) -> list[Hit]:
    """Both branches see exactly the same allowed rows; nothing outside the mask is ever returned."""
    b_rows = b_scores = d_rows = d_scores = np.zeros(0)
    full_bm25: np.ndarray | None = None
    if p.method in ("bm25", "hybrid"):
        full_bm25 = bm25.scores(weighted_terms)
        b_rows, b_scores = top_k(full_bm25, p.candidate_k if p.method == "hybrid" else p.k, mask)
    if p.method in ("dense", "hybrid") and query_vec is not None:
        d_rows, d_scores = vectors.search(query_vec, p.candidate_k if p.method == "hybrid" else p.k, mask, flt)

    if p.method == "bm25":
        return [Hit(int(r), float(s), bm25=float(s), bm25_rank=i) for i, (r, s) in enumerate(zip(b_rows, b_scores), 1)]
    if p.method == "dense":
        return [Hit(int(r), float(s), dense=float(s), dense_rank=i)
                for i, (r, s) in enumerate(zip(d_rows, d_scores), 1)]

    b_rank = {int(r): i + 1 for i, r in enumerate(b_rows)}
    d_rank = {int(r): i + 1 for i, r in enumerate(d_rows)}
    d_score = {int(r): float(s) for r, s in zip(d_rows, d_scores)}
    union = list(dict.fromkeys([*b_rank, *d_rank]))
    if not union:
        return []
    rows = np.asarray(union, dtype=np.int64)
    bm = full_bm25[rows] if full_bm25 is not None else np.zeros(len(rows))
    missing = [i for i, r in enumerate(union) if r not in d_score]
    if missing and query_vec is not None and hasattr(vectors, "scores_for"):
        extra = vectors.scores_for(query_vec, rows[missing])
        for i, s in zip(missing, extra):
            d_score[union[i]] = float(s)
    dn = np.asarray([d_score.get(r, float(d_scores.min()) if len(d_scores) else 0.0) for r in union])
    if p.fusion == "zscore":
        fused = zscore([bm, dn], [1.0 - p.alpha, p.alpha])
        scores = {r: float(s) for r, s in zip(union, fused)}
    else:
        scores = rrf([list(b_rank), list(d_rank)], k=p.rrf_k)
    hits = [Hit(r, scores[r], bm25=float(bm[i]), dense=float(dn[i]), bm25_rank=b_rank.get(r),
                dense_rank=d_rank.get(r)) for i, r in enumerate(union)]
    hits.sort(key=lambda h: (-h.score, h.row))
    return hits[: p.k]
