"""Maximal marginal relevance: pick relevant chunks that are not near-copies of each other.

score(d) = lambda * relevance(d) - (1 - lambda) * max_{s in selected} cos(d, s)
Relevance is the reranked score min-max normalised over the candidates; similarity is the cosine
of the dense embeddings. lambda = 1 keeps the relevance order unchanged.
"""

from __future__ import annotations

import numpy as np


def mmr(relevance: np.ndarray, vectors: np.ndarray, k: int, lam: float = 0.7) -> list[int]:
    """Indices (into the candidates) of the k chosen, in selection order."""
    n = len(relevance)
    if n == 0 or k <= 0:
        return []
    rel = np.asarray(relevance, dtype=np.float64)
    spread = rel.max() - rel.min()
    rel = (rel - rel.min()) / spread if spread > 0 else np.ones(n)
    sims = np.asarray(vectors, dtype=np.float32) @ np.asarray(vectors, dtype=np.float32).T
    chosen: list[int] = [int(np.argmax(rel))]
    redundancy = sims[chosen[0]].astype(np.float64).copy()
    while len(chosen) < min(k, n):
        score = lam * rel - (1 - lam) * redundancy
        score[chosen] = -np.inf
        pick = int(np.argmax(score))
        chosen.append(pick)
        redundancy = np.maximum(redundancy, sims[pick])
    return chosen
