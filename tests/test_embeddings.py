from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from citewise.retrieval.embeddings import MiniLMEmbedder, VectorCache


@pytest.fixture
def embedder(tmp_path: Path) -> MiniLMEmbedder:
    return MiniLMEmbedder(cache=VectorCache(tmp_path / "vectors.sqlite"))


def test_long_text_is_windowed_not_truncated(embedder: MiniLMEmbedder) -> None:
    head = " ".join(["loan repayment"] * 150)
    tail = " ".join(["beneficiary designation"] * 150)
    windows = embedder.windows(f"{head} {tail}")
    assert len(windows) >= 2 and "beneficiary" in windows[-1]  # the end of the text reaches the index
    vec = embedder.embed_documents([f"{head} {tail}"])[0]
    truncated = embedder.embed_documents([windows[0]])[0]
    query = embedder.embed_query("beneficiary designation")
    assert float(vec @ query) > float(truncated @ query) + 0.05


def test_pooled_vector_is_the_normalised_mean_of_window_vectors(embedder: MiniLMEmbedder) -> None:
    text = " ".join(f"term{i} rollover withholding" for i in range(200))
    windows = embedder.window_vectors([text])[0]
    mean = windows.mean(axis=0)
    assert np.allclose(embedder.embed_documents([text])[0], mean / np.linalg.norm(mean), atol=1e-6)


def test_cached_windows_are_not_embedded_again(embedder: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["a short note about vesting", " ".join(["long text"] * 400)]
    first = embedder.embed_documents(texts)
    calls: list[int] = []
    original = embedder._encode
    monkeypatch.setattr(embedder, "_encode", lambda batch: calls.append(len(batch)) or original(batch))
    again = embedder.embed_documents(texts)
    assert calls == [] and np.allclose(first, again)
    embedder.embed_documents([*texts, "something new"])
    assert calls == [1]  # only the unseen text


def test_query_vectors_are_cached(embedder: MiniLMEmbedder) -> None:
    assert embedder.embed_query("rmd deadline") is embedder.embed_query("rmd deadline")
