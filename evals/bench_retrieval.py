"""Side by side, one process, one run: citewise hybrid vs LangChain and LlamaIndex hybrids.

    python -m citewise.evals.bench_retrieval --dataset ../shared/data/scifact [--split test] [--json]
    citewise eval peers --dataset ...

All three systems get the same all-MiniLM-L6-v2 vectors: document vectors are computed once
(citewise's embedding cache) and handed to the peers through a lookup "embedding model", and query
vectors are computed once up front, so the comparison is of retrieval, not of embedding. Latency is
reported excluding query embedding and, separately, including the measured MiniLM query cost.
Peers run with their documented defaults:
  LangChain  EnsembleRetriever([BM25Retriever, InMemoryVectorStore retriever], weights 0.5/0.5)
  LlamaIndex QueryFusionRetriever([VectorStoreIndex retriever, BM25Retriever], mode=reciprocal_rerank,
             num_queries=1)
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
from ir_measures import R, nDCG

from .beir import corpus_path, load_qrels, load_queries
from .retrieval import prepare

DEPTH = 100


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class PeakRSS:
    """Samples this process's RSS in a thread: the peak while a system builds and answers."""

    def __init__(self, interval: float = 0.01):
        self.interval, self.peak, self._stop = interval, 0.0, threading.Event()

    def __enter__(self) -> PeakRSS:
        self.baseline = self.peak = rss_mb()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_mb())
            time.sleep(self.interval)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mb())


class Lookup:
    """Precomputed vectors by text, shaped as LangChain and LlamaIndex embedding models."""

    def __init__(self, vectors: dict[str, np.ndarray]):
        self.vectors = vectors

    def get(self, text: str) -> list[float]:
        return self.vectors[text].tolist()


def load_corpus(dataset: Path) -> tuple[list[str], list[str]]:
    ids, texts = [], []
    with corpus_path(dataset).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                ids.append(str(rec["_id"]))
                texts.append("\n".join(p for p in (rec.get("title", ""), rec.get("text", "")) if p))
    return ids, texts


# --- the systems ----------------------------------------------------------------------------------
def citewise_system(home: Path, **_: Any) -> tuple[Callable[[str], list[str]], float]:
    from ..config import Context
    from ..retrieval.hybrid import SearchParams
    from ..retrieval.snapshot import build_indexes, forget, open_kb
    from ..store import open_store

    ctx = Context()
    started = time.perf_counter()
    forget(home)
    build_indexes(open_store(home))
    kb = open_kb(home)
    build = time.perf_counter() - started
    params = SearchParams(k=DEPTH, candidate_k=max(ctx.candidate_k, DEPTH), method="hybrid", fusion=ctx.fusion,
                          rrf_k=ctx.rrf_k, alpha=ctx.fusion_alpha)

    def search(query: str) -> list[str]:
        out: list[str] = []
        for h in kb.search_rows(query, params=params, expansions=[]):
            doc = kb.doc_of_row[h.row]
            if doc not in out:
                out.append(doc)
        return out

    return search, build


def langchain_system(ids: Sequence[str], texts: Sequence[str], lookup: Lookup,
                     **_: Any) -> tuple[Callable[[str], list[str]], float]:
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore

    class Precomputed(Embeddings):
        def embed_documents(self, docs: list[str]) -> list[list[float]]:
            return [lookup.get(t) for t in docs]

        def embed_query(self, text: str) -> list[float]:
            return lookup.get(text)

    started = time.perf_counter()
    metadatas = [{"doc_id": i} for i in ids]
    bm25 = BM25Retriever.from_texts(list(texts), metadatas=metadatas, k=DEPTH)
    store = InMemoryVectorStore(embedding=Precomputed())
    store.add_texts(list(texts), metadatas=metadatas)
    ensemble = EnsembleRetriever(retrievers=[bm25, store.as_retriever(search_kwargs={"k": DEPTH})],
                                 weights=[0.5, 0.5])
    build = time.perf_counter() - started

    def search(query: str) -> list[str]:
        return list(dict.fromkeys(d.metadata["doc_id"] for d in ensemble.invoke(query)))[:DEPTH]

    return search, build


def llamaindex_system(ids: Sequence[str], texts: Sequence[str], lookup: Lookup,
                      **_: Any) -> tuple[Callable[[str], list[str]], float]:
    from llama_index.core import Settings, VectorStoreIndex
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.llms.mock import MockLLM
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.core.schema import TextNode
    from llama_index.retrievers.bm25 import BM25Retriever

    class Precomputed(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return lookup.get(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return lookup.get(text)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return lookup.get(query)

    Settings.embed_model = Precomputed()
    Settings.llm = MockLLM()
    started = time.perf_counter()
    nodes = [TextNode(text=t, id_=i, embedding=lookup.get(t)) for i, t in zip(ids, texts)]
    index = VectorStoreIndex(nodes, embed_model=Settings.embed_model, show_progress=False)
    bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=DEPTH)
    fusion = QueryFusionRetriever([index.as_retriever(similarity_top_k=DEPTH), bm25], similarity_top_k=DEPTH,
                                  num_queries=1, mode="reciprocal_rerank", use_async=False, llm=MockLLM())
    build = time.perf_counter() - started

    def search(query: str) -> list[str]:
        return list(dict.fromkeys(n.node.node_id for n in fusion.retrieve(query)))[:DEPTH]

    return search, build


SYSTEMS: dict[str, Callable[..., tuple[Callable[[str], list[str]], float]]] = {
    "citewise": citewise_system, "langchain": langchain_system, "llamaindex": llamaindex_system}


def run_system(name: str, queries: dict[str, str], qrels: dict[str, dict[str, int]], embed_ms: float,
               **inputs: Any) -> dict[str, Any]:
    gc.collect()
    with PeakRSS() as mem:
        search, build = SYSTEMS[name](**inputs)
        search(next(iter(queries.values())))  # warm-up (lazy imports, first-call caches)
        run: dict[str, dict[str, float]] = {}
        lat = []
        for qid, text in queries.items():
            started = time.perf_counter()
            docs = search(text)
            lat.append((time.perf_counter() - started) * 1000)
            run[qid] = {d: float(DEPTH - i) for i, d in enumerate(docs)}
    scores = ir_measures.calc_aggregate([nDCG @ 10, R @ 100], qrels, run)
    p50, p95 = float(np.percentile(lat, 50)), float(np.percentile(lat, 95))
    return {"ndcg@10": round(scores[nDCG @ 10], 4), "recall@100": round(scores[R @ 100], 4),
            "latency_ms_p50": round(p50, 3), "latency_ms_p95": round(p95, 3),
            "latency_ms_p50_with_query_embedding": round(p50 + embed_ms, 3),
            "latency_ms_p95_with_query_embedding": round(p95 + embed_ms, 3),
            "build_s": round(build, 3), "peak_rss_mb": round(mem.peak, 1),
            "rss_increase_mb": round(mem.peak - mem.baseline, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="citewise eval peers")
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--systems", default="citewise,langchain,llamaindex")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    names = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [n for n in names if n not in SYSTEMS]
    if unknown:
        parser.error(f"unknown system(s): {', '.join(unknown)}")

    from ..retrieval.embeddings import get_embedder

    home = prepare(args.dataset)
    ids, texts = load_corpus(args.dataset)
    all_queries, qrels = load_queries(args.dataset), load_qrels(args.dataset, args.split)
    queries = {q: all_queries[q] for q in qrels if q in all_queries}
    embedder = get_embedder()
    doc_vecs = embedder.embed_documents(texts)  # cached by ingest: no model call
    started = time.perf_counter()
    query_vecs = {t: embedder.embed_query(t) for t in queries.values()}
    embed_ms = (time.perf_counter() - started) * 1000 / max(len(queries), 1)
    lookup = Lookup({**dict(zip(texts, doc_vecs)), **query_vecs})

    results = {name: run_system(name, queries, qrels, embed_ms, home=home, ids=ids, texts=texts, lookup=lookup)
               for name in names}
    if "citewise" in results:
        cw = results["citewise"]
        for name, r in results.items():
            if name != "citewise":
                r["citewise_ndcg_ratio"] = round(cw["ndcg@10"] / r["ndcg@10"], 3) if r["ndcg@10"] else None
                r["citewise_latency_speedup"] = round(r["latency_ms_p50"] / cw["latency_ms_p50"], 1)
    report = {"dataset": args.dataset.name, "split": args.split, "queries": len(queries), "documents": len(ids),
              "query_embedding_ms": round(embed_ms, 3), "machine": f"{platform.machine()}, {platform.processor() or ''}"
              f" {__import__('os').cpu_count()} cores, Python {platform.python_version()}",
              "date": time.strftime("%Y-%m-%d"), "results": results}
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        cols = ["ndcg@10", "recall@100", "latency_ms_p50", "latency_ms_p95", "build_s", "peak_rss_mb",
                "rss_increase_mb"]
        print(f"{report['dataset']} {args.split}: {report['queries']} queries, {report['documents']} docs, "
              f"query embedding {report['query_embedding_ms']} ms/query (excluded below)")
        print(f"{'system':<12}" + "".join(f"{c:>16}" for c in cols) + f"{'nDCG ratio':>12}{'speed-up':>10}")
        for name, r in results.items():
            print(f"{name:<12}" + "".join(f"{r[c]:>16}" for c in cols)
                  + f"{r.get('citewise_ndcg_ratio', '-')!s:>12}{r.get('citewise_latency_speedup', '-')!s:>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
