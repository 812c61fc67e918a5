"""Pinecone as the dense branch, against a loopback stand-in of its data-plane API (and live when
PINECONE_API_KEY + PINECONE_INDEX_HOST point at a real index)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citewise.errors import ConfigError
from citewise.retrieval.filters import MetadataIndex
from citewise.retrieval.pinecone import PineconeVectorIndex, with_retry
from citewise.retrieval.vectors import ExactIndex
from tests.pinecone_standin import PineconeStandIn

DIM = 384
RNG = np.random.default_rng(7)
VECS = RNG.normal(size=(40, DIM)).astype(np.float32)
VECS /= np.linalg.norm(VECS, axis=1, keepdims=True)
IDS = [f"doc{i // 4}#{i % 4:02d}-part" for i in range(40)]
META = [{"doc_id": f"doc{i // 4}", "record_keeper": ["Acme", "Summit", "Harborview"][i % 3],
         "topic": ["loan", "rollover"][i % 2], "tags": [["a", "b"], ["b"], []][i % 3], "year": 2020 + i % 5}
        for i in range(40)]


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> Iterator[PineconeStandIn]:
    with PineconeStandIn(DIM) as server:
        monkeypatch.setenv("PINECONE_API_KEY", "test-key")
        monkeypatch.setenv("PINECONE_INDEX_HOST", server.host)
        monkeypatch.setenv("CITEWISE_PINECONE_NAMESPACE", "test-ns")
        yield server


@pytest.fixture
def remote(standin: PineconeStandIn, tmp_path: Path) -> PineconeVectorIndex:
    index = PineconeVectorIndex.from_env(tmp_path, IDS, "model-a")
    index.sync(IDS, VECS, META, tmp_path / "state.json")
    return index


def test_sync_upserts_with_metadata_and_ids_then_deletes_vanished(remote: PineconeVectorIndex,
                                                                  standin: PineconeStandIn, tmp_path: Path) -> None:
    ns = standin.namespaces["test-ns"]
    assert set(ns) == {*IDS, "__citewise_manifest__"}
    assert ns[IDS[3]]["metadata"]["year"] == 2023.0 and ns[IDS[3]]["metadata"]["chunk_id"] == IDS[3]
    assert "tags" not in ns[IDS[2]]["metadata"] or ns[IDS[2]]["metadata"]["tags"] == []
    before = len(standin.requests)
    stats = remote.sync(IDS, VECS, META, tmp_path / "state.json")
    assert stats == {"upserted": 0, "deleted": 0}  # unchanged: nothing re-sent
    assert sum(r == "POST /vectors/upsert" for r in standin.requests[before:]) == 1  # the manifest only
    stats = remote.sync(IDS[:30], VECS[:30], META[:30], tmp_path / "state.json")
    assert stats["deleted"] == 10 and len(standin.namespaces["test-ns"]) == 31


def test_search_applies_filters_natively(remote: PineconeVectorIndex, standin: PineconeStandIn) -> None:
    rows, scores = remote.search(VECS[4], 5, flt={"record_keeper": "Summit"})
    assert rows[0] == 4 and all(META[r]["record_keeper"] == "Summit" for r in rows)
    assert np.all(np.diff(scores) <= 1e-6)
    body_seen = [r for r in standin.requests if r == "POST /query"]
    assert body_seen


def test_transient_errors_are_retried(remote: PineconeVectorIndex, standin: PineconeStandIn) -> None:
    standin.fail_next = [429, 503]
    rows, _ = remote.search(VECS[0], 3)
    assert rows[0] == 0 and standin.fail_next == []


def test_retry_gives_up_on_client_errors() -> None:
    class Bad(Exception):
        status = 400

    calls: list[int] = []

    def call() -> None:
        calls.append(1)
        raise Bad()

    with pytest.raises(Bad):
        with_retry(call, sleep=lambda _s: None)
    assert calls == [1]


def test_refuses_to_mix_embedding_models(remote: PineconeVectorIndex, tmp_path: Path) -> None:
    other = PineconeVectorIndex.from_env(tmp_path, IDS, "model-b")
    with pytest.raises(ConfigError, match="not 'model-b'"):
        other.check_model()
    with pytest.raises(ConfigError):
        other.sync(IDS, VECS, META, tmp_path / "other.json")


def test_missing_credentials_are_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PINECONE_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="PINECONE_API_KEY"):
        PineconeVectorIndex.from_env(tmp_path, IDS, "model-a")


_leaf = st.one_of(
    st.builds(lambda v: {"record_keeper": v}, st.sampled_from(["Acme", "Summit", "Nope"])),
    st.builds(lambda v: {"topic": {"$ne": v}}, st.sampled_from(["loan", "rollover"])),
    st.builds(lambda v: {"tags": {"$in": v}}, st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2)),
    st.builds(lambda v: {"tags": {"$nin": v}}, st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=2)),
    st.builds(lambda op, v: {"year": {op: v}}, st.sampled_from(["$gt", "$gte", "$lt", "$lte"]),
              st.integers(2019, 2025)),
    st.builds(lambda v: {"tags": {"$exists": v}}, st.booleans()),
)
_filters = st.recursive(_leaf, lambda inner: st.one_of(
    st.builds(lambda xs: {"$and": xs}, st.lists(inner, min_size=1, max_size=3)),
    st.builds(lambda xs: {"$or": xs}, st.lists(inner, min_size=1, max_size=3))), max_leaves=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flt=_filters, q=st.integers(0, 39), k=st.integers(1, 45))
def test_filtered_results_are_identical_locally_and_in_pinecone(remote: PineconeVectorIndex, flt: dict, q: int,
                                                                k: int) -> None:
    mask = MetadataIndex(META).mask(flt)
    local_rows, _ = ExactIndex(VECS).search(VECS[q], k, mask)
    remote_rows, _ = remote.search(VECS[q], k, flt=flt)
    assert remote_rows.tolist() == local_rows.tolist()  # same rows, same order, no padding


def test_whole_graph_on_pinecone(standin: PineconeStandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from citewise.config import Context
    from citewise.graphs.kb_agent import graph
    from citewise.kb.ingest import ingest, reindex
    from tests.paths import SAMPLE_KB

    monkeypatch.setenv("CITEWISE_VECTOR_STORE", "pinecone")
    home = tmp_path / "home"
    ingest([SAMPLE_KB / "summit"], home, progress=False)
    assert len(standin.namespaces["test-ns"]) > 50
    ctx = Context(home=str(home))
    assert ctx.vector_store == "pinecone"
    out = graph.invoke({"question": "What fees does Summit charge for a 403(b) loan?"}, context=ctx)
    assert out["article_reference"]["article_id"] == "summit-403b-loan" and out["citations"]
    assert any(r == "POST /query" for r in standin.requests)
    standin.namespaces["test-ns"].clear()
    reindex(home)  # rebuilds Pinecone from SQLite
    assert len(standin.namespaces["test-ns"]) > 50


@pytest.mark.live
@pytest.mark.skipif(not (os.environ.get("PINECONE_API_KEY") and os.environ.get("PINECONE_INDEX_HOST")),
                    reason="needs PINECONE_API_KEY and PINECONE_INDEX_HOST of a real 384-d cosine index")
def test_live_pinecone_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEWISE_PINECONE_NAMESPACE", f"citewise-test-{os.getpid()}")
    index = PineconeVectorIndex.from_env(tmp_path, IDS, "model-a")
    try:
        index.sync(IDS, VECS, META, tmp_path / "state.json")
        import time

        deadline = time.monotonic() + 60  # serverless indexes are eventually consistent
        rows: list[int] = []
        while time.monotonic() < deadline and (not rows or rows[0] != 4):
            rows = index.search(VECS[4], 3, flt={"record_keeper": "Summit"})[0].tolist()
            time.sleep(2)
        assert rows and rows[0] == 4
    finally:
        index.index.delete(delete_all=True, namespace=index.namespace)
