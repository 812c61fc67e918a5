from __future__ import annotations

import numpy as np

from citewise.retrieval.bm25 import BM25Index, query_terms, top_k
from citewise.retrieval.filters import MetadataIndex
from citewise.retrieval.fusion import ranked, rrf, zscore
from citewise.retrieval.hybrid import SearchParams, hybrid_search
from citewise.retrieval.vectors import ExactIndex


def test_rrf_ranks_from_one_with_k60_and_dedupes() -> None:
    fused = rrf([[10, 20, 10, 30], [20, 40]], k=60)
    assert fused[10] == 1 / 61  # the repeated 10 is counted once
    assert fused[20] == 1 / 62 + 1 / 61
    assert fused[30] == 1 / 63 and fused[40] == 1 / 62
    assert [row for row, _ in ranked(fused)] == [20, 10, 40, 30]


def test_zscore_is_a_convex_mix_of_standardised_scores() -> None:
    fused = zscore([np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])], [0.5, 0.5])
    assert np.allclose(fused, 0.0)
    fused = zscore([np.array([1.0, 2.0, 3.0]), np.array([5.0, 5.0, 5.0])], [0.3, 0.7])
    assert np.argmax(fused) == 2  # a constant branch contributes nothing


def test_top_k_never_returns_filtered_or_zero_rows() -> None:
    scores = np.array([0.0, 3.0, 1.0, 0.0, 2.0], dtype=np.float32)
    rows, _vals = top_k(scores, 10)
    assert rows.tolist() == [1, 4, 2]
    rows, _ = top_k(scores, 10, mask=np.array([True, False, True, True, False]))
    assert rows.tolist() == [2]  # no score-0 padding when k exceeds the matches


CORPUS = ["loan repayment rules for the plan", "rollover to an IRA within 60 days", "loan fees and interest",
          "hardship withdrawal reasons", "beneficiary designation and spousal consent"]
META = [{"topic": "loan"}, {"topic": "rollover"}, {"topic": "loan"}, {"topic": "hardship"}, {"topic": "beneficiary"}]


def _vectors() -> np.ndarray:
    rng = np.random.default_rng(0)
    v = rng.normal(size=(len(CORPUS), 8)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_bm25_persists_its_analyser_and_scores_identically(tmp_path) -> None:
    index = BM25Index.build(CORPUS)
    index.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25")
    q = query_terms("loans and fees")  # stemmed: 'loans' matches 'loan'
    assert np.allclose(index.scores(q), loaded.scores(q))
    assert loaded.params.analyzer == index.params.analyzer
    rows, _ = loaded.search(q, 5)
    assert rows[0] == 2 and set(rows.tolist()) == {0, 2}


def test_hybrid_applies_the_same_filter_to_both_branches() -> None:
    bm25, vec, meta = BM25Index.build(CORPUS), ExactIndex(_vectors()), MetadataIndex(META)
    q = _vectors()[1]  # dense branch alone would rank the rollover doc first
    mask = meta.mask({"topic": "loan"})
    for method in ("bm25", "dense", "hybrid"):
        for fusion in ("rrf", "zscore"):
            hits = hybrid_search(bm25, vec, query_terms("rollover loan"), q, mask,
                                 SearchParams(k=10, candidate_k=10, method=method, fusion=fusion))
            assert hits and {h.row for h in hits} <= {0, 2}


def test_exact_vector_index_masked_search_matches_brute_force() -> None:
    rng = np.random.default_rng(1)
    v = rng.normal(size=(500, 16)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    index = ExactIndex(v)
    q = v[7]
    for keep in (0.05, 0.9):
        mask = rng.random(500) < keep
        rows, scores = index.search(q, 10, mask)
        allowed = np.flatnonzero(mask)
        expected = allowed[np.argsort(-(v[allowed] @ q))][:10]
        assert rows.tolist() == expected.tolist()
        assert np.all(np.diff(scores) <= 1e-6)


def test_repeated_searches_are_served_from_memory_and_copies_are_independent(kb_home) -> None:
    from citewise.retrieval.snapshot import open_kb

    kb = open_kb(kb_home)
    calls: list[str] = []
    original = kb.search_rows
    kb.search_rows = lambda *a, **k: calls.append("x") or original(*a, **k)
    try:
        first = kb.search("loan fees at Acme")
        first[0].score = -1.0  # a caller annotating its copy
        second = kb.search("loan fees at Acme")
        assert len(calls) == 1 and second[0].score != -1.0
        kb.search("loan fees at Acme", filters={"topic": "loan"})
        assert len(calls) == 2  # another filter is another search
    finally:
        del kb.search_rows
