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


def test_a_saved_index_loads_without_bm25s_and_reads_what_bm25s_reads(tmp_path) -> None:
    from citewise.retrieval.bm25s_adapter import load_postings

    index = BM25Index.build([" ".join(doc) for doc in CORPUS])
    index.save(tmp_path)
    ours, theirs = load_postings(tmp_path), postings(bm25s.BM25.load(str(tmp_path), mmap=False))
    assert ours.num_docs == theirs.num_docs and ours.vocab == theirs.vocab
    for name in ("data", "indices", "indptr"):
        assert np.array_equal(getattr(ours, name), getattr(theirs, name)) and \
            getattr(ours, name).dtype == getattr(theirs, name).dtype
    loaded = BM25Index.load(tmp_path)
    assert loaded._retriever is None  # nothing of bm25s was loaded to answer queries
    assert np.allclose(loaded.scores({"loan": 1.0, "fee": 0.5}), index.scores({"loan": 1.0, "fee": 0.5}))
    assert np.allclose(loaded.retriever.get_scores(["loan"]), index.scores({"loan": 1.0}), atol=1e-5)


def test_the_copied_stopwords_are_bm25s_english_stopwords() -> None:
    from bm25s.stopwords import STOPWORDS_EN

    from citewise.kb.text import ANALYZER_ID
    from citewise.kb.text import STOPWORDS_EN as COPIED

    assert tuple(STOPWORDS_EN) == COPIED
    assert ANALYZER_ID.endswith("stop-99c67f3f4b")  # changing it rebuilds every existing index: do so on purpose
