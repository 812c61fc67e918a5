"""BM25 branch: bm25s's eager sparse index with our analyser, weighted query terms and filter masks.

bm25s precomputes per-(term, doc) BM25 contributions in CSC form; a query is a weighted sum of
columns. We score with `np.bincount` over the query's postings (faster than bm25s's `np.add.at`
loop), which also lets expansion terms carry a weight below 1. Filtered-out rows and rows that
match no query term are never returned (bm25s would pad with score-0 rows).

Only building an index imports bm25s (and with it scipy); loading one reads the saved postings
directly (bm25s_adapter.load_postings), so a cold query process never pays for those imports.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..kb.text import ANALYZER_ID, terms
from .bm25s_adapter import Postings, load_postings, postings

PARAMS_FILE = "citewise_bm25.json"


@dataclass
class BM25Params:
    k1: float = 1.2
    b: float = 0.75
    method: str = "lucene"
    analyzer: str = ANALYZER_ID  # persisted: bm25s does not persist stemmer/stopword settings


def top_k(scores: np.ndarray, k: int, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Indices and scores of the k best positive entries (masked rows excluded), best first."""
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    candidates = np.flatnonzero(scores > 0) if mask is None else np.flatnonzero(np.isfinite(scores) & (scores > 0))
    if candidates.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    sub = scores[candidates]
    if candidates.size > k:
        part = np.argpartition(-sub, k - 1)[:k]
        candidates, sub = candidates[part], sub[part]
    order = np.argsort(-sub, kind="stable")
    return candidates[order], sub[order]


class BM25Index:
    def __init__(self, index: Postings, params: BM25Params, retriever: Any = None,
                 directory: Path | None = None):
        self._retriever = retriever  # the bm25s.BM25 (built here, or loaded on demand from `directory`)
        self._directory = directory
        self.params = params
        self._data, self._indices, self._indptr = index.data, index.indices, index.indptr
        self.n = index.num_docs
        self.vocab: dict[str, int] = index.vocab
        df = np.diff(self._indptr)
        self._idf = np.log(1 + (self.n - df + 0.5) / (df + 0.5)).astype(np.float32)

    @classmethod
    def build(cls, texts: Sequence[str], params: BM25Params | None = None) -> BM25Index:
        params = params or BM25Params()
        corpus_terms = [terms(t) or [""] for t in texts]
        import bm25s

        retriever = bm25s.BM25(k1=params.k1, b=params.b, method=params.method)
        retriever.index(corpus_terms, show_progress=False)
        return cls(postings(retriever), params, retriever=retriever)

    @property
    def retriever(self) -> Any:
        """The bm25s.BM25 itself (benchmarks and tests compare with it); loading it imports bm25s."""
        if self._retriever is None:
            import bm25s

            self._retriever = bm25s.BM25.load(str(self._directory), mmap=False)
        return self._retriever

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.retriever.save(str(directory))
        (directory / PARAMS_FILE).write_text(json.dumps(asdict(self.params)))

    @classmethod
    def load(cls, directory: Path) -> BM25Index:
        params = BM25Params(**json.loads((directory / PARAMS_FILE).read_text()))
        return cls(load_postings(directory), params, directory=directory)

    def rows_containing(self, term: str) -> np.ndarray:
        """Rows whose text contains the (analysed) term: the term's posting list."""
        tid = self.vocab.get(term)
        if tid is None:
            return np.zeros(0, dtype=np.int64)
        return self._indices[self._indptr[tid]:self._indptr[tid + 1]]

    def doc_term_matrix(self):
        """(docs x terms) BM25 contributions, built once on demand (pseudo-relevance feedback reads it)."""
        if getattr(self, "_csr", None) is None:
            from scipy.sparse import csc_matrix

            self._csr = csc_matrix((self._data, self._indices, self._indptr),
                                   shape=(self.n, len(self._indptr) - 1)).tocsr()
        return self._csr

    def inverse_vocab(self) -> dict[int, str]:
        if getattr(self, "_inverse", None) is None:
            self._inverse = {tid: term for term, tid in self.vocab.items()}
        return self._inverse

    def idf(self, term: str) -> float:
        """A term the corpus never contains gets the highest IDF: it is the most telling term of all."""
        tid = self.vocab.get(term)
        if tid is None:
            return float(np.log(1 + (self.n + 0.5) / 0.5))
        return float(self._idf[tid])

    def scores(self, weighted_terms: dict[str, float]) -> np.ndarray:
        ids, weights = [], []
        for term, w in weighted_terms.items():
            tid = self.vocab.get(term)
            if tid is not None and term:
                ids.append(tid)
                weights.append(w)
        if not ids:
            return np.zeros(self.n, dtype=np.float32)
        starts, ends = self._indptr[ids], self._indptr[np.asarray(ids) + 1]
        idx = np.concatenate([self._indices[s:e] for s, e in zip(starts, ends, strict=True)])
        vals = np.concatenate([self._data[s:e] * w for s, e, w in zip(starts, ends, weights, strict=True)])
        return np.bincount(idx, weights=vals, minlength=self.n).astype(np.float32)

    def search(self, weighted_terms: dict[str, float], k: int,
               mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        return top_k(self.scores(weighted_terms), k, mask)


def query_terms(query: str, expansions: Sequence[str] = (), expansion_weight: float = 0.5) -> dict[str, float]:
    """Query term weights: original terms count by frequency; expansion terms add a fraction."""
    weights: dict[str, float] = {}
    for t in terms(query):
        weights[t] = weights.get(t, 0.0) + 1.0
    for phrase in expansions:
        for t in terms(phrase):
            # spelling variants ("401 k") would add bare numbers and letters: noise, not synonyms
            if t not in weights and len(t) > 1 and not t.isdigit():
                weights[t] = expansion_weight
    return weights
