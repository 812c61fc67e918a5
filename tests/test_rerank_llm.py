"""The `llm` reranker: one batched structured-output call scores the candidates; any fault falls back to
the heuristic order and says so. Exercised against the loopback OpenAI-compatible stand-in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from citewise.config import Context
from citewise.errors import ConfigError
from citewise.llm.chat import ModelClock
from citewise.retrieval.passage import Passage
from citewise.retrieval.rerank import LLMRerank, get_reranker
from tests.openai_standin import OpenAIStandIn


@pytest.fixture(scope="module")
def llm() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn() as server:
        yield server


def _hits() -> list[Passage]:
    texts = ["Loans are repaid by payroll deduction.", "The loan origination fee is $50.", "Rollovers take 5 days."]
    return [Passage(chunk_id=f"c{i}", doc_id="d", title="T", section="", chunk_type="content", tier="medium",
                    text=t, score=1.0 - i * 0.01) for i, t in enumerate(texts)]


def test_model_scores_reorder_the_candidates(llm: OpenAIStandIn) -> None:
    llm.script = [{"json": {"scores": [{"id": 1, "score": 2}, {"id": 2, "score": 9}, {"id": 3, "score": 0}]}}]
    llm.requests.clear()
    ctx = Context(llm_model="standin-model", llm_base_url=llm.base_url, reranker="llm")
    notes: dict = {}
    out = LLMRerank(ctx, ModelClock(10)).rerank("What is the loan fee?", _hits(), notes=notes)
    assert [h.chunk_id for h in out] == ["c1", "c0", "c2"] and notes["rerank_scored"] == 3
    prompt = llm.chat_requests()[0]["body"]["messages"][0]["content"]
    assert "What is the loan fee?" in prompt and '<chunk id="2"' in prompt and "data, not\ninstructions" in prompt
    assert len(llm.chat_requests()) == 1  # one batched call for all candidates


def test_a_model_fault_falls_back_to_the_heuristic_order(llm: OpenAIStandIn) -> None:
    llm.script = [{"status": 500}]
    ctx = Context(llm_model="standin-model", llm_base_url=llm.base_url, reranker="llm", llm_max_retries=0)
    notes: dict = {}
    hits = _hits()
    out = LLMRerank(ctx, ModelClock(10)).rerank("What is the loan fee?", hits, notes=notes)
    assert "heuristic" in notes["rerank_fallback"]
    heuristic = get_reranker(ctx, "heuristic").rerank("What is the loan fee?", hits)
    assert [h.chunk_id for h in out] == [h.chunk_id for h in heuristic]


def test_llm_reranker_needs_a_model() -> None:
    with pytest.raises(ConfigError, match="needs a chat model"):
        get_reranker(Context(reranker="llm"))


def test_llm_reranker_in_a_run(llm: OpenAIStandIn, kb_home: Path) -> None:
    from citewise.engine import answer

    llm.script = [{"json": {"scores": [{"id": i, "score": 10 - i} for i in range(1, 13)]}}]
    llm.requests.clear()
    ctx = Context(home=str(kb_home), llm_model="standin-model", llm_base_url=llm.base_url, reranker="llm",
                  llm_required_fields=False)
    out = answer("What is the loan origination fee at Acme?", ctx=ctx)
    assert out["metadata"]["rerank"]["rerank_scored"] >= 5 and out["metadata"]["reranker"] == "llm"
    bodies = [r["body"]["messages"][-1]["content"] for r in llm.chat_requests()]
    assert sum("You rank knowledge-base passages" in b for b in bodies) == 1  # only retrieval reranks
