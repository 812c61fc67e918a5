from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from citewise.config import Context
from citewise.errors import ConfigError
from citewise.kb.synonyms import SynonymExpander
from citewise.retrieval.ann import IVFIndex
from citewise.retrieval.bm25 import query_terms
from citewise.retrieval.mmr import mmr
from citewise.retrieval.passage import Passage
from citewise.retrieval.rerank import CrossEncoderRerank, HeuristicRerank, get_reranker, intent_types
from citewise.retrieval.vectors import ExactIndex


def test_mmr_on_known_inputs() -> None:
    vecs = np.array([[1, 0], [0.999, 0.045], [0, 1]], dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rel = np.array([1.0, 0.95, 0.5])
    assert mmr(rel, vecs, 2, lam=1.0) == [0, 1]  # pure relevance keeps the near-duplicate
    assert mmr(rel, vecs, 2, lam=0.5) == [0, 2]  # diversity swaps it for the different one
    assert mmr(rel, vecs, 5, lam=0.5) == [0, 2, 1]  # never more than there are
    assert mmr(np.array([]), np.zeros((0, 2)), 3) == []


def _hit(cid: str, score: float, chunk_type: str = "content", text: str = "", **md: str) -> Passage:
    return Passage(chunk_id=cid, doc_id="d", title="T", section="", chunk_type=chunk_type, tier="medium", text=text,
                   score=score, metadata=md)


def test_heuristic_rerank_only_reorders_near_ties() -> None:
    hits = [_hit("a", 1.0, text="loan limits"), _hit("b", 0.99, "steps", "how to request a loan", record_keeper="X"),
            _hit("c", 0.0, "steps", "how to request a loan", record_keeper="X")]
    out = HeuristicRerank().rerank("How do I request a loan?", hits, facets={"record_keeper": ["X"]})
    assert [h.chunk_id for h in out] == ["b", "a", "c"]  # the near-tie flips, the far one does not
    assert out[0].fused == 0.99
    assert "fees" in intent_types("How much is the fee?") and "steps" in intent_types("How do I apply?")
    assert get_reranker(Context(reranker="none")).rerank("q", hits) is hits


def test_cross_encoder_loads_a_local_model_offline(tmp_path: Path) -> None:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "loan", "fee", "rollover", "ira", "the", "is", "what"]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab))
    BertTokenizerFast(vocab_file=str(tmp_path / "vocab.txt")).save_pretrained(tmp_path)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(tmp_path)

    reranker = CrossEncoderRerank(str(tmp_path))
    hits = [_hit("a", 0.5, text="rollover ira"), _hit("b", 0.4, text="loan fee"), _hit("c", 0.1, text="the fee")]
    out = reranker.rerank("what is the loan fee", hits)
    scores = reranker.model.predict([("what is the loan fee", f"T\n{h.text}") for h in hits])
    assert [h.chunk_id for h in out] == [hits[i].chunk_id for i in np.argsort(-scores, kind="stable")]
    assert {h.fused for h in out} == {0.5, 0.4, 0.1}
    with pytest.raises(ConfigError, match="local model directory"):
        CrossEncoderRerank(str(tmp_path / "missing"))


def test_ivf_index_finds_neighbours_and_respects_filters(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    centers = rng.normal(size=(50, 64)).astype(np.float32)
    data = centers[rng.integers(0, 50, 20_000)] + 0.05 * rng.normal(size=(20_000, 64)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    ann, exact = IVFIndex.build(data), ExactIndex(data)
    np.save(tmp_path / "vectors.npy", data)
    ann.save(tmp_path)
    loaded = IVFIndex.load(tmp_path)
    recall = np.mean([len(set(loaded.search(data[i], 10)[0]) & set(exact.search(data[i], 10)[0])) / 10
                      for i in range(0, 2000, 40)])
    assert recall >= 0.9
    for keep in (0.005, 0.6):  # exact path for a selective filter, faiss selector otherwise
        mask = rng.random(20_000) < keep
        rows, scores = loaded.search(data[int(np.flatnonzero(mask)[0])], 10, mask)
        assert len(rows) == 10 and mask[rows].all() and np.all(np.diff(scores) <= 1e-6)


def test_synonym_groups_expand_both_ways_without_noise_terms() -> None:
    expander = SynonymExpander({"RMD": ["required minimum distribution"], "loan": ["borrow"]})
    assert expander.expansions("When is my RMD due?") == ["required minimum distribution"]
    assert expander.expansions("the Required Minimum Distribution rules") == ["RMD"]
    assert expander.expansions("Can I borrow money?") == ["loan"]
    assert expander.expansions("rmdx is not an acronym here") == []
    weights = query_terms("401(k) loan", ["401 k", "plan loan"])
    assert weights == {"401k": 1.0, "loan": 1.0, "plan": 0.5}  # no bare '401' or 'k' from a spelling variant


def test_synonyms_raise_the_bm25_rank_of_the_article_for_colloquial_questions(kb_home: Path) -> None:
    from citewise.evals.questions import load_questions, synonym_effect
    from tests.paths import QUESTIONS

    report = synonym_effect(load_questions(QUESTIONS), kb_home)
    assert report["questions"] >= 8 and report["mrr_with"] > report["mrr_without"]
