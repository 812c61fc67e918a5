"""OpenAI (or OpenAI-compatible) embeddings, e.g. `text-embedding-3-small`, behind the Embedder shape.

Chunks are at most ~1000 tokens, well inside the model's input limit, so no windowing. Vectors are
cached on disk like MiniLM's, keyed by model id, and queries in an LRU.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from ..errors import ConfigError
from .embeddings import VectorCache, text_key


class OpenAIEmbedder:
    def __init__(self, model: str, base_url: str = "", cache: VectorCache | None = None, batch_size: int = 256):
        from langchain_openai import OpenAIEmbeddings

        from ..llm.chat import operator_key

        api_key = operator_key(base_url, "embedding_base_url")
        if not api_key and not base_url:
            raise ConfigError(f"embedding model openai:{model} needs OPENAI_API_KEY (or an embedding_base_url)")
        self.model_id = f"openai:{model}"
        self.client = OpenAIEmbeddings(model=model, base_url=base_url or None, api_key=api_key or "not-needed",
                                       check_embedding_ctx_length=False, max_retries=3)
        self._cache = cache
        self.batch_size = batch_size
        self.dim = 0
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def cache(self) -> VectorCache:
        if self._cache is None:
            self._cache = VectorCache()
        return self._cache

    @staticmethod
    def _normalise(vecs: list[list[float]]) -> np.ndarray:
        arr = np.asarray(vecs, dtype=np.float32)
        return arr / np.maximum(np.linalg.norm(arr, axis=1, keepdims=True), 1e-12)

    def embed_documents(self, texts: Sequence[str], progress=None) -> np.ndarray:
        keys = [text_key(t) for t in texts]
        found = self.cache.get_many(self.model_id, list(dict.fromkeys(keys)))
        todo = list(dict.fromkeys(k for k in keys if k not in found))
        by_key = dict(zip(keys, texts, strict=True))
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start:start + self.batch_size]
            vecs = self._normalise(self.client.embed_documents([by_key[k] for k in batch]))
            new = dict(zip(batch, vecs, strict=True))
            self.cache.put_many(self.model_id, new)
            found.update(new)
            if progress is not None:
                progress(len(batch))
        if not texts:
            return np.zeros((0, self.dim or 1), dtype=np.float32)
        out = np.stack([found[k] for k in keys]).astype(np.float32)
        self.dim = out.shape[1]
        return out

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            hit = self._queries.get(text)
            if hit is not None:
                return hit
        vec = self._normalise([self.client.embed_query(text)])[0]
        with self._lock:
            self._queries[text] = vec
            if len(self._queries) > 4096:
                self._queries.popitem(last=False)
        return vec
