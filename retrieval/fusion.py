"""Rank fusion of the BM25 and dense branches.

`rrf`: reciprocal rank fusion, score = sum over branches of 1 / (k + rank), ranks from 1; a row
listed by several branches is one entry (deduplicated by row/chunk).
`zscore`: convex combination of per-branch z-normalised scores over the candidate union, with the
missing branch score of a candidate computed exactly (both branches can score any row).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def rrf(rankings: Sequence[Sequence[int]], k: int = 60, weights: Sequence[float] | None = None) -> dict[int, float]:
    fused: dict[int, float] = {}
    for b, ranking in enumerate(rankings):
        w = 1.0 if weights is None else weights[b]
        seen: set[int] = set()
        rank = 0
        for row in ranking:
            if row in seen:
                continue
            seen.add(row)
            rank += 1
            fused[row] = fused.get(row, 0.0) + w / (k + rank)
    return fused


def zscore(scores: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    """Weighted sum of z-scores; each array holds one branch's scores for the same candidates."""
    total = np.zeros(len(scores[0]), dtype=np.float64)
    for s, w in zip(scores, weights, strict=True):
        s = np.asarray(s, dtype=np.float64)
        std = float(s.std())
        total += w * ((s - s.mean()) / std if std > 1e-9 else np.zeros_like(s))
    return total


def ranked(fused: dict[int, float]) -> list[tuple[int, float]]:
    """Best first; ties broken by row for determinism."""
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
