"""bm25s internals, read in one adapter, must still mean what citewise assumes (fails loudly on an upgrade)."""

from __future__ import annotations

import bm25s
import numpy as np

from citewise.retrieval.bm25 import BM25Index
from citewise.retrieval.bm25s_adapter import postings

CORPUS = [["loan", "fee", "loan"], ["rollover", "ira"], ["loan", "repay", "payroll"], ["fee", "schedul"]]


def test_postings_reproduce_bm25s_public_scores() -> None:
    retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    retriever.index(CORPUS, show_progress=False)
    p = postings(retriever)
    assert p.num_docs == len(CORPUS) and set(p.vocab) >= {"loan", "fee", "rollover"}
    real_terms = [t for t in p.vocab if t]  # bm25s also lists "" (the empty-document token), without a column
    assert p.indptr.shape == (len(real_terms) + 1,) and p.data.shape == p.indices.shape
    for term, tid in p.vocab.items():
        if not term:
            continue
        ours = np.zeros(p.num_docs, dtype=np.float32)
        ours[p.indices[p.indptr[tid]:p.indptr[tid + 1]]] = p.data[p.indptr[tid]:p.indptr[tid + 1]]
        public = retriever.get_scores([term])  # bm25s's public API
        assert np.allclose(ours, public, atol=1e-6), term


def test_citewise_bm25_scores_match_bm25s() -> None:
    index = BM25Index.build([" ".join(doc) for doc in CORPUS])
    retriever = index.retriever
    for query in (["loan"], ["loan", "fee"], ["ira", "payroll"]):
        terms = [t for t in query if t in index.vocab]
        assert np.allclose(index.scores(dict.fromkeys(terms, 1.0)), retriever.get_scores(terms), atol=1e-5)
