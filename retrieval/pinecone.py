"""Pinecone as the dense branch (scale-out), through langchain-pinecone's PineconeVectorStore.

SQLite stays the source of truth: vectors are upserted from it by `build_indexes` and `citewise
reindex` rebuilds the namespace. Records are keyed by chunk id, carry the chunk's metadata so
filters run natively in Pinecone (the same filter dict the local branches evaluate), and use
`chunk_id` as the text key, so no chunk text is duplicated into Pinecone. A sentinel record names
the embedding model that built the namespace; a different model is refused, never mixed.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError

SENTINEL = "__citewise_manifest__"
TEXT_KEY = "chunk_id"
RETRY_STATUS = {429, 500, 502, 503, 504}


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status", None)
    return int(status) if isinstance(status, int | str) and str(status).isdigit() else None


def with_retry(call: Callable[[], Any], *, attempts: int = 5, base_delay: float = 0.5,
               sleep: Callable[[float], None] = time.sleep) -> Any:
    """Retry on 429/5xx and connection errors with exponential backoff and jitter."""
    for attempt in range(attempts):
        try:
            return call()
        except Exception as exc:  # the SDK raises several exception types for HTTP errors
            status = _status(exc)
            transient = status in RETRY_STATUS or (status is None and isinstance(exc, ConnectionError | OSError))
            if not transient or attempt == attempts - 1:
                raise
            sleep(base_delay * (2 ** attempt) * (1 + random.random() / 4))
    raise AssertionError("unreachable")


def _clean_metadata(md: dict[str, Any]) -> dict[str, Any]:
    """Pinecone accepts str, number, bool and list[str]; no nulls, no numpy scalars."""
    out: dict[str, Any] = {}
    for k, v in md.items():
        if v is None or v == "":
            continue
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, bool | str):
            out[k] = v
        elif isinstance(v, int | float):
            out[k] = float(v)
        elif isinstance(v, list | tuple):
            out[k] = [str(x) for x in v]
    return out


class _Precomputed:
    """A LangChain Embeddings whose vectors were computed by citewise (looked up by chunk id)."""

    def __init__(self, vectors: dict[str, list[float]] | None = None):
        self.vectors = vectors or {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vectors[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        raise ConfigError("citewise embeds queries itself")


def namespace_for(home: Path, shared_id: str = "") -> str:
    """Per home for SQLite; per knowledge base (`shared_id`) for a store that replicas share."""
    explicit = os.environ.get("CITEWISE_PINECONE_NAMESPACE")
    if explicit:
        return explicit
    if shared_id:
        return f"kb-{shared_id[:16]}"
    resolved = Path(home).resolve()
    return f"{resolved.name}-{hashlib.sha1(str(resolved).encode()).hexdigest()[:8]}"


class PineconeVectorIndex:
    def __init__(self, index: Any, namespace: str, chunk_ids: Sequence[str], model_id: str, dim: int = 384):
        from langchain_core.embeddings import Embeddings
        from langchain_pinecone import PineconeVectorStore

        class Adapter(_Precomputed, Embeddings):
            pass

        self.index = index
        self.namespace = namespace
        self.model_id = model_id
        self.embeddings = Adapter()
        self.store = PineconeVectorStore(index=index, embedding=self.embeddings, text_key=TEXT_KEY,
                                         namespace=namespace)
        self.chunk_ids = list(chunk_ids)
        self.row_of = {c: i for i, c in enumerate(self.chunk_ids)}
        self.n, self.dim = len(self.chunk_ids), dim
        self.local: Any = None  # an ExactIndex over the same rows, for exact re-scoring

    @classmethod
    def from_env(cls, home: Path, chunk_ids: Sequence[str], model_id: str, shared_id: str = "") -> PineconeVectorIndex:
        from pinecone import Pinecone

        api_key = os.environ.get("PINECONE_API_KEY")
        host = os.environ.get("PINECONE_INDEX_HOST") or os.environ.get("PINECONE_HOST")
        if not api_key or not host:
            raise ConfigError("vector_store=pinecone needs PINECONE_API_KEY and PINECONE_INDEX_HOST (the index host "
                              "URL; giving only an index name would call the control plane)")
        index = Pinecone(api_key=api_key).Index(host=host)
        return cls(index, namespace_for(home, shared_id), chunk_ids, model_id)

    # --- model pinning ------------------------------------------------------------------------
    def recorded_model(self) -> str | None:
        found = with_retry(lambda: self.index.fetch(ids=[SENTINEL], namespace=self.namespace))
        vectors = found.vectors if hasattr(found, "vectors") else found.get("vectors", {})
        record = vectors.get(SENTINEL)
        if record is None:
            return None
        md = record.metadata if hasattr(record, "metadata") else record.get("metadata", {})
        return (md or {}).get("embedding_model")

    def check_model(self) -> None:
        recorded = self.recorded_model()
        if recorded is not None and recorded != self.model_id:
            raise ConfigError(f"Pinecone namespace {self.namespace!r} holds vectors of {recorded!r}, not "
                              f"{self.model_id!r}; reindex into a new namespace instead of mixing models")

    # --- writing ------------------------------------------------------------------------------
    def sync(self, chunk_ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]],
             state_file: Path, batch_size: int = 100, full: bool = False) -> dict[str, int]:
        """Upsert new/changed vectors, delete vanished ids; `state_file` remembers what was sent.

        `full` re-sends everything (what `citewise reindex` does: rebuild Pinecone from SQLite).
        """
        self.check_model()
        if len(vectors):
            self.dim = int(vectors.shape[1])
        try:
            sent: dict[str, str] = {} if full else json.loads(state_file.read_text())
        except (OSError, ValueError):
            sent = {}
        digests = {cid: hashlib.sha1(vec.tobytes() + json.dumps(md, sort_keys=True).encode()).hexdigest()
                   for cid, vec, md in zip(chunk_ids, vectors, metadatas, strict=True)}
        todo = [i for i, cid in enumerate(chunk_ids) if sent.get(cid) != digests[cid]]
        for start in range(0, len(todo), batch_size):
            part = todo[start:start + batch_size]
            ids = [chunk_ids[i] for i in part]
            self.embeddings.vectors = {chunk_ids[i]: [float(x) for x in vectors[i]] for i in part}
            mds = [_clean_metadata(metadatas[i]) for i in part]
            with_retry(lambda ids=ids, mds=mds: self.store.add_texts(ids, metadatas=mds, ids=ids,
                                                                      batch_size=batch_size, async_req=False))
            sent.update({chunk_ids[i]: digests[chunk_ids[i]] for i in part})
            state_file.write_text(json.dumps(sent))  # progress survives an interrupted sync
        gone = [cid for cid in sent if cid not in digests]
        for start in range(0, len(gone), 1000):
            part = gone[start:start + 1000]
            with_retry(lambda part=part: self.index.delete(ids=part, namespace=self.namespace))
            for cid in part:
                sent.pop(cid, None)
        marker = [0.0] * self.dim
        marker[0] = 1.0  # Pinecone rejects all-zero dense vectors
        with_retry(lambda: self.index.upsert(vectors=[(SENTINEL, marker, {"embedding_model": self.model_id})],
                                             namespace=self.namespace))
        state_file.write_text(json.dumps(sent))
        return {"upserted": len(todo), "deleted": len(gone)}

    # --- reading ------------------------------------------------------------------------------
    def scores_for(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        if self.local is None:
            return np.zeros(len(rows), dtype=np.float32)
        return self.local.scores_for(query, rows)

    def search(self, query: np.ndarray, k: int, mask: np.ndarray | None = None,
               flt: dict[str, Any] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Filters go to Pinecone natively; ids come back and map to local rows."""
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        vector = [float(x) for x in np.asarray(query, dtype=np.float32)]
        results = with_retry(lambda: self.store.similarity_search_by_vector_with_score(
            vector, k=k + 1, filter=flt or None, namespace=self.namespace))
        rows, scores = [], []
        for doc, score in results:
            row = self.row_of.get(doc.id or doc.page_content)
            if row is None or (mask is not None and not mask[row]):
                continue
            rows.append(row)
            scores.append(score)
            if len(rows) == k:
                break
        return np.asarray(rows, dtype=np.int64), np.asarray(scores, dtype=np.float32)
