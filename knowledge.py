"""A knowledge base on disk, opened once per process: store + derived indexes + KB-level facts.

`open_kb(home)` returns a cached instance while the store's generation is unchanged, so models and
indexes load once per process (CLI, API, LangGraph server workers) rather than per call.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from citewise.errors import ConfigError, NotIngestedError
from citewise.kb.synonyms import SynonymExpander
from citewise.kb.text import ANALYZER_ID
from citewise.retrieval.ann import ANN_FILE, ANN_MIN_ROWS, IVFIndex
from citewise.retrieval.bm25 import BM25Index, query_terms
from citewise.retrieval.embeddings import Embedder, get_embedder
from citewise.retrieval.filters import Filter, MetadataIndex, validate_filter
from citewise.retrieval.hybrid import Hit, SearchParams, hybrid_search
from citewise.retrieval.vectors import ExactIndex, VectorIndex
from citewise.store.sqlite import Store

INDEX_DIR = "index"
MANIFEST = "manifest.json"
FACETS = ("record_keeper", "plan_type", "topic")


def index_text(title: str, section: str, text: str) -> str:
    """What both branches index for a chunk: its article title and section give it context."""
    return "\n".join(p for p in (title, section, text) if p)


@dataclass
class DocInfo:
    doc_id: str
    title: str
    metadata: dict[str, Any]
    structured: bool
    fields: list[dict[str, Any]]
    guardrails: dict[str, Any]


@dataclass
class KnowledgeBase:
    home: Path
    store: Store
    generation: int
    chunk_ids: list[str]
    doc_of_row: list[str]
    meta: MetadataIndex
    bm25: BM25Index
    vectors: VectorIndex
    embedder: Embedder
    docs: dict[str, DocInfo]
    synonyms: SynonymExpander
    facets: dict[str, list[str]] = field(default_factory=dict)
    row_of: dict[str, int] = field(default_factory=dict)
    _detector: Any = None
    _memo: OrderedDict = field(default_factory=OrderedDict)
    _memo_lock: threading.Lock = field(default_factory=threading.Lock)

    # --- loading ------------------------------------------------------------------------------
    @classmethod
    def load(cls, home: Path, vector_store: str = "local", embedding_model: str = "minilm",
             embedding_base_url: str = "") -> KnowledgeBase:
        home = Path(home)
        if not Store.exists(home):
            raise NotIngestedError(f"no knowledge base at {home}: run `citewise ingest PATH --home {home}` first")
        store = Store(home)
        if store.count()[0] == 0:
            raise NotIngestedError(f"the knowledge base at {home} is empty: run `citewise ingest PATH` first")
        embedder = get_embedder(embedding_model, embedding_base_url)
        index_dir = home / INDEX_DIR
        manifest = _read_manifest(index_dir)
        if manifest is not None and manifest.get("embedding_model") != embedder.model_id:
            raise ConfigError(f"the index at {home} was built with {manifest.get('embedding_model')!r}, not "
                              f"{embedder.model_id!r}; vectors of two models are never mixed: use the same model or "
                              f"rebuild with `citewise reindex --home {home} --embedding-model ...`")
        if (manifest is None or manifest.get("generation") != store.generation()
                or manifest.get("analyzer") != ANALYZER_ID):
            build_indexes(store, embedder, vector_store=vector_store)
            manifest = _read_manifest(index_dir)
        assert manifest is not None
        rows = json.loads((index_dir / "rows.json").read_text())
        vectors: VectorIndex
        local: VectorIndex = IVFIndex.load(index_dir) if (index_dir / ANN_FILE).exists() else ExactIndex.load(index_dir)
        vectors = local
        if vector_store == "pinecone":
            from citewise.retrieval.pinecone import PineconeVectorIndex

            vectors = PineconeVectorIndex.from_env(home, rows["chunk_ids"], embedder.model_id)
            vectors.check_model()
            vectors.local = local  # exact re-scoring of fusion candidates stays local
        docs = {d["doc_id"]: DocInfo(d["doc_id"], d["title"], d["metadata"], d["structured"], d["fields"],
                                     d["guardrails"]) for d in store.documents()}
        meta = MetadataIndex.load(str(index_dir / "metadata.npz"))
        kb = cls(home=home, store=store, generation=manifest["generation"], chunk_ids=rows["chunk_ids"],
                 doc_of_row=rows["doc_ids"], meta=meta, bm25=BM25Index.load(index_dir / "bm25"),
                 vectors=vectors, embedder=embedder, docs=docs, synonyms=SynonymExpander(store.synonyms()))
        kb.row_of = {cid: i for i, cid in enumerate(kb.chunk_ids)}
        kb.facets = {f: meta.values(f) for f in FACETS}
        return kb

    @property
    def facet_detector(self) -> Any:
        """Built on first use and kept with this (immutable) index generation."""
        if self._detector is None:
            from citewise.query import FacetDetector, term_precision_fn

            self._detector = FacetDetector(self.facets, self.synonyms.groups, term_precision_fn(self))
        return self._detector

    def is_current(self) -> bool:
        return self.store.generation() == self.generation

    # --- search -------------------------------------------------------------------------------
    def search(self, query: str, *, filters: Filter | None = None, params: SearchParams | None = None,
               expansions: list[str] | None = None) -> list[dict[str, Any]]:
        """Hybrid (or single-branch) search returning chunk records with their branch scores.

        Memoised per knowledge-base generation: within one question `extract_required_data` and
        `retrieve` issue the same search, and an interrupted run replays its node on every resume.
        """
        key = json.dumps([query, filters or {}, asdict(params or SearchParams()), expansions], sort_keys=True)
        with self._memo_lock:
            cached = self._memo.get(key)
            if cached is not None:
                self._memo.move_to_end(key)
        if cached is None:
            cached = self.records(self.search_rows(query, filters=filters, params=params, expansions=expansions))
            with self._memo_lock:
                self._memo[key] = cached
                if len(self._memo) > 256:
                    self._memo.popitem(last=False)
        return [dict(r) for r in cached]  # callers may annotate their copies

    def search_rows(self, query: str, *, filters: Filter | None = None, params: SearchParams | None = None,
                    expansions: list[str] | None = None) -> list[Hit]:
        """The search itself, without reading chunk text from SQLite (what benchmarks time)."""
        params = params or SearchParams()
        flt = validate_filter(filters or {})
        mask = self.meta.mask(flt)
        extra = self.synonyms.expansions(query) if expansions is None else expansions
        weighted = query_terms(query, extra)
        qvec = self.embedder.embed_query(query) if params.method != "bm25" else None
        return hybrid_search(self.bm25, self.vectors, weighted, qvec, mask, params, flt)

    def records(self, hits: list[Hit]) -> list[dict[str, Any]]:
        chunks = self.store.chunks_by_id(self.chunk_ids[h.row] for h in hits)
        out = []
        for h in hits:
            rec = dict(chunks[self.chunk_ids[h.row]])
            rec.update(score=h.score, bm25=h.bm25, dense=h.dense, bm25_rank=h.bm25_rank, dense_rank=h.dense_rank,
                       row=h.row)
            out.append(rec)
        return out

    def chunks_of(self, doc_id: str) -> list[dict[str, Any]]:
        return self.store.chunks_of(doc_id)

    def vectors_of(self, rows: list[int]) -> np.ndarray:
        """Dense vectors of some rows (from the local index, also kept when Pinecone serves queries)."""
        local = getattr(self.vectors, "local", None) or self.vectors
        return np.asarray(local.vectors[np.asarray(rows, dtype=np.int64)], dtype=np.float32)


_CACHE: dict[tuple[Path, str, str, str], KnowledgeBase] = {}
_CACHE_LOCK = threading.Lock()


def open_kb(home: Path, vector_store: str = "local", embedding_model: str = "minilm",
            embedding_base_url: str = "") -> KnowledgeBase:
    key = (Path(home).resolve(), vector_store, embedding_model, embedding_base_url)
    with _CACHE_LOCK:
        kb = _CACHE.get(key)
        if kb is not None and kb.is_current():
            return kb
        kb = KnowledgeBase.load(*key)
        _CACHE[key] = kb
        return kb


def forget(home: Path) -> None:
    with _CACHE_LOCK:
        for key in [k for k in _CACHE if k[0] == Path(home).resolve()]:
            del _CACHE[key]


# --- building the derived indexes ---------------------------------------------------------------
def _read_manifest(index_dir: Path) -> dict[str, Any] | None:
    try:
        return json.loads((index_dir / MANIFEST).read_text())
    except (OSError, ValueError):
        return None


def recorded_model(home: Path) -> str | None:
    manifest = _read_manifest(Path(home) / INDEX_DIR)
    return manifest.get("embedding_model") if manifest else None


def build_indexes(store: Store, embedder: Embedder | None = None,
                  progress: Callable[[int], None] | None = None, vector_store: str = "local",
                  full_sync: bool = False) -> dict[str, Any]:
    """Rebuild BM25, vectors and metadata columns from SQLite; atomic swap of the index directory.

    With vector_store="pinecone" the vectors are also synced to the Pinecone namespace of this home.
    """
    embedder = embedder or get_embedder()
    started = time.perf_counter()
    generation = store.generation()
    chunk_ids, doc_ids, texts, metadata = [], [], [], []
    for r in store.iter_chunks():
        chunk_ids.append(r["chunk_id"])
        doc_ids.append(r["doc_id"])
        texts.append(index_text(r["title"], r["section"], r["text"]))
        metadata.append(json.loads(r["metadata"]))
    final = store.home / INDEX_DIR
    tmp = store.home / f"{INDEX_DIR}.tmp-{int(time.time() * 1000)}"
    tmp.mkdir(parents=True)
    try:
        BM25Index.build(texts).save(tmp / "bm25")
        vectors = embedder.embed_documents(texts, progress=progress) if texts else np.zeros((0, embedder.dim))
        ExactIndex(vectors).save(tmp)
        if len(chunk_ids) >= ANN_MIN_ROWS:  # exact search stops meeting latency targets around here
            IVFIndex.build(vectors).save(tmp)
        MetadataIndex(metadata).save(str(tmp / "metadata.npz"))
        if vector_store == "pinecone":
            from citewise.retrieval.pinecone import PineconeVectorIndex, namespace_for

            remote = PineconeVectorIndex.from_env(store.home, chunk_ids, embedder.model_id)
            remote.sync(chunk_ids, vectors, metadata, store.home / f"pinecone-{namespace_for(store.home)}.json",
                        full=full_sync)
        (tmp / "rows.json").write_text(json.dumps({"chunk_ids": chunk_ids, "doc_ids": doc_ids}))
        manifest = {"generation": generation, "embedding_model": embedder.model_id, "analyzer": ANALYZER_ID,
                    "chunks": len(chunk_ids),
                    "built_at": time.time(), "seconds": round(time.perf_counter() - started, 3)}
        (tmp / MANIFEST).write_text(json.dumps(manifest))
        old = store.home / f"{INDEX_DIR}.old-{int(time.time() * 1000)}"
        if final.exists():
            final.rename(old)
        tmp.rename(final)
        if old.exists():
            _rmtree(old)
    except BaseException:
        _rmtree(tmp)
        raise
    return manifest


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
