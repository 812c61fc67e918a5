"""The one place that reads bm25s internals: its precomputed (term, doc) scores and its vocabulary.

bm25s stores BM25 contributions as a CSC matrix in `BM25.scores` ({"data", "indices", "indptr",
"num_docs"}) and the term ids in `BM25.vocab_dict`. These are not public API, so citewise reads
them here only; tests/test_bm25s_adapter.py checks them against bm25s's public `get_scores`, so a
bm25s upgrade that changes them fails loudly instead of scoring wrongly.
"""

from __future__ import annotations

from dataclasses import dataclass

import bm25s
import numpy as np


@dataclass(frozen=True)
class Postings:
    data: np.ndarray  # float32 BM25 contribution per (term, doc) entry
    indices: np.ndarray  # doc (row) of each entry
    indptr: np.ndarray  # entries of term t are data[indptr[t]:indptr[t + 1]]
    num_docs: int
    vocab: dict[str, int]  # term -> term id


def postings(retriever: bm25s.BM25) -> Postings:
    scores = retriever.scores
    return Postings(data=np.asarray(scores["data"], dtype=np.float32),
                    indices=np.asarray(scores["indices"], dtype=np.int64),
                    indptr=np.asarray(scores["indptr"], dtype=np.int64), num_docs=int(scores["num_docs"]),
                    vocab=dict(retriever.vocab_dict))
