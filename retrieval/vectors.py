"""Local dense index: exact inner product over a NumPy matrix of normalised vectors.

Exact search is the default because it is exact and, at knowledge-base sizes, fast: one matrix-
vector product over 5k x 384 float32 takes well under a millisecond. Filters restrict the rows
scored (a gather when the filter is selective, a masked full scan otherwise). Larger corpora switch
to an approximate index behind the same `search` signature (see `retrieval/ann.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

VECTORS_FILE = "vectors.npy"


class VectorIndex(Protocol):
    n: int
    dim: int

    def search(self, query: np.ndarray, k: int, mask: np.ndarray | None = None,
               flt: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Rows and cosine scores of the k nearest rows allowed by the filter, best first.

        Local indexes use `mask` (the filter evaluated over metadata columns); remote ones (Pinecone)
        receive the filter dict `flt` itself and apply it natively.
        """
        ...


class ExactIndex:
    def __init__(self, vectors: np.ndarray):
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.n, self.dim = self.vectors.shape if self.vectors.ndim == 2 else (0, 384)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / VECTORS_FILE, self.vectors)

    @classmethod
    def load(cls, directory: Path) -> ExactIndex:
        return cls(np.load(directory / VECTORS_FILE))

    def search(self, query: np.ndarray, k: int, mask: np.ndarray | None = None,
               flt: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        if self.n == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        q = np.asarray(query, dtype=np.float32)
        if mask is not None:
            rows = np.flatnonzero(mask)
            if rows.size == 0:
                return rows, np.zeros(0, dtype=np.float32)
            if rows.size < self.n // 3:
                scores = self.vectors[rows] @ q
                return _best(rows, scores, k)
            scores = self.vectors @ q
            scores[~mask] = -np.inf
            best_rows, best = _best(np.arange(self.n), scores, min(k, rows.size))
            return best_rows, best
        return _best(np.arange(self.n), self.vectors @ q, k)

    def scores_for(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return self.vectors[rows] @ np.asarray(query, dtype=np.float32)


def _best(rows: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    k = min(k, scores.size)
    if k == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    part = np.argpartition(-scores, k - 1)[:k] if scores.size > k else np.arange(scores.size)
    order = part[np.argsort(-scores[part], kind="stable")]
    return rows[order], scores[order].astype(np.float32)
