"""Approximate dense search for large corpora: faiss IVF with 8-bit scalar quantisation.

Exact search is the default and stays exact below `ANN_MIN_ROWS`. Above it, a full scan of N x 384
float32 is memory-bound (1M rows = 1.5 GB read per query, ~150 ms on two cores), so the index probes
`nprobe` of sqrt-scaled inverted lists of 8-bit codes and re-scores a shortlist exactly from the
memory-mapped float32 vectors. A filter that leaves few rows is searched exactly over those rows;
otherwise it is applied inside faiss (IDSelectorBitmap), so filtered-out rows are never returned.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .vectors import VECTORS_FILE, _best

ANN_MIN_ROWS = int(os.environ.get("CITEWISE_ANN_MIN_ROWS", "200000"))
ANN_FILE = "ivf_sq8.faiss"
EXACT_SUBSET = 30_000  # a filter leaving at most this many rows is searched exactly


class IVFIndex:
    def __init__(self, index: object, vectors: np.ndarray, nprobe: int = 24):
        self.index = index
        self.vectors = vectors  # float32, usually a read-only memmap
        self.n, self.dim = vectors.shape
        self.nprobe = nprobe

    @classmethod
    def build(cls, vectors: np.ndarray, nlist: int | None = None, seed: int = 0) -> IVFIndex:
        import faiss

        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        n, dim = vectors.shape
        nlist = nlist or max(64, int(np.sqrt(n)))
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFScalarQuantizer(quantizer, dim, nlist, faiss.ScalarQuantizer.QT_8bit,
                                              faiss.METRIC_INNER_PRODUCT)
        rng = np.random.default_rng(seed)
        sample = vectors[rng.choice(n, size=min(n, 40 * nlist), replace=False)]
        index.train(sample)
        index.add(vectors)
        return cls(index, vectors)

    def save(self, directory: Path) -> None:
        import faiss

        faiss.write_index(self.index, str(directory / ANN_FILE))

    @classmethod
    def load(cls, directory: Path) -> IVFIndex:
        import faiss

        vectors = np.load(directory / VECTORS_FILE, mmap_mode="r")
        return cls(faiss.read_index(str(directory / ANN_FILE)), vectors)

    def scores_for(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return np.asarray(self.vectors[np.sort(rows)] @ query, dtype=np.float32)[np.argsort(np.argsort(rows))]

    def search(self, query: np.ndarray, k: int, mask: np.ndarray | None = None,
               flt: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        import faiss

        if k <= 0 or self.n == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        q = np.asarray(query, dtype=np.float32).reshape(1, -1)
        params = faiss.SearchParametersIVF(nprobe=self.nprobe)
        if mask is not None:
            rows = np.flatnonzero(mask)
            if rows.size <= EXACT_SUBSET:
                return _best(rows, np.asarray(self.vectors[rows] @ q[0], dtype=np.float32), k)
            bitmap = np.packbits(mask.astype(np.uint8), bitorder="little")
            selector = faiss.IDSelectorBitmap(self.n, faiss.swig_ptr(bitmap))
            params = faiss.SearchParametersIVF(nprobe=self.nprobe, sel=selector)
        shortlist = max(2 * k, 100)
        _, ids = self.index.search(q, shortlist, params=params)
        cand = ids[0][ids[0] >= 0]
        if cand.size == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        return _best(cand.astype(np.int64), self.scores_for(q[0], cand), k)
