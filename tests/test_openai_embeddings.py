"""OpenAI embeddings selectable by configuration (against a loopback OpenAI-compatible server), and an
index that refuses to mix embedding models."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from citewise.config import Context
from citewise.errors import ConfigError
from citewise.kb.ingest import ingest, reindex
from citewise.retrieval.hybrid import SearchParams
from citewise.retrieval.snapshot import open_kb
from tests.openai_standin import OpenAIStandIn
from tests.paths import SAMPLE_KB


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[OpenAIStandIn]:
    monkeypatch.setenv("CITEWISE_CACHE_DIR", str(tmp_path / "cache"))
    with OpenAIStandIn(embedding_dim=64) as s:
        yield s


def test_openai_embeddings_index_and_refuse_to_mix(server: OpenAIStandIn, tmp_path: Path) -> None:
    home = tmp_path / "home"
    ctx = Context(home=str(home), embedding_model="openai:text-embedding-3-small", embedding_base_url=server.base_url)
    summary = ingest([SAMPLE_KB / "summit"], context=ctx, progress=False)
    assert summary["reindexed"]
    calls = [r for r in server.requests if r["path"].endswith("/embeddings")]
    assert calls and calls[0]["body"]["model"] == "text-embedding-3-small"
    kb = open_kb(home, "local", ctx.embedding_model, ctx.embedding_base_url)
    assert kb.vectors.dim == 64
    chunk = kb.chunks_of("summit-403b-15-year-catch-up")[0]
    hits = kb.search(chunk.indexed_text, params=SearchParams(k=3, method="dense"))
    assert hits[0].chunk_id == chunk.chunk_id and hits[0].dense == pytest.approx(1.0, abs=1e-5)

    with pytest.raises(ConfigError, match="never mixed"):
        ingest([SAMPLE_KB / "summit"], home, progress=False)  # default minilm against an OpenAI-built home
    with pytest.raises(ConfigError, match="never mixed"):
        open_kb(home)
    result = reindex(home, embedding_model="minilm")
    assert result["embedding_model"].startswith("all-MiniLM-L6-v2")
    assert open_kb(home).vectors.dim == 384


def test_unknown_embedding_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown embedding model"):
        ingest([SAMPLE_KB / "summit"], tmp_path, context=Context(embedding_model="word2vec"), progress=False)
