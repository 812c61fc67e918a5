"""Component speed on a BEIR collection, side by side with raw bm25s in the same run.

    python -m citewise.evals.bench_speed --dataset ../shared/data/scifact [--json]

BM25 branch: citewise (its analyser, weighted terms, np.bincount scoring, filter-aware top-k) vs
raw bm25s (`bm25s.tokenize` with the same Snowball stemmer + `BM25.retrieve`) on the same index,
one query at a time and batched. Hybrid: p50/p95 of `KnowledgeBase.search_rows` with the query
embedding excluded. Query embedding: first call vs LRU-cached repeat.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import Stemmer

from ..kb.text import STOPWORDS
from ..retrieval.bm25 import query_terms
from ..retrieval.hybrid import SearchParams
from .beir import load_qrels, load_queries
from .retrieval import prepare


def timed(fn: Any, items: list[Any], repeat: int = 3) -> tuple[float, list[float]]:
    best = float("inf")
    lat: list[float] = []
    for _ in range(repeat):
        lat = []
        start = time.perf_counter()
        for item in items:
            t = time.perf_counter()
            fn(item)
            lat.append((time.perf_counter() - t) * 1000)
        best = min(best, time.perf_counter() - start)
    return len(items) / best, lat


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m citewise.evals.bench_speed")
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from ..retrieval.snapshot import open_kb

    kb = open_kb(prepare(args.dataset))
    queries = load_queries(args.dataset)
    texts = [queries[q] for q in load_qrels(args.dataset, args.split) if q in queries]
    retriever = kb.bm25.retriever
    stemmer = Stemmer.Stemmer("english")
    stop = sorted(STOPWORDS)

    def raw_one(q: str) -> None:
        tokens = bm25s.tokenize([q], stemmer=stemmer, stopwords=stop, show_progress=False, return_ids=False)
        retriever.retrieve(tokens, k=10, show_progress=False, n_threads=1)

    def ours_one(q: str) -> None:
        kb.bm25.search(query_terms(q), 10)

    report: dict[str, Any] = {"dataset": args.dataset.name, "queries": len(texts), "chunks": len(kb.chunk_ids)}
    raw_qps, _ = timed(raw_one, texts)
    ours_qps, ours_lat = timed(ours_one, texts)
    start = time.perf_counter()
    tokens = bm25s.tokenize(texts, stemmer=stemmer, stopwords=stop, show_progress=False, return_ids=False)
    retriever.retrieve(tokens, k=10, show_progress=False, n_threads=1)
    raw_batch_qps = len(texts) / (time.perf_counter() - start)
    report["bm25"] = {"citewise_qps": round(ours_qps), "raw_bm25s_qps": round(raw_qps),
                      "raw_bm25s_batched_qps": round(raw_batch_qps),
                      "ratio_citewise_over_raw": round(ours_qps / raw_qps, 2),
                      "citewise_p50_ms": round(float(np.percentile(ours_lat, 50)), 3)}
    cold = []
    for q in texts[:100]:
        t = time.perf_counter()
        kb.embedder.embed_query(q + " (cold)")
        cold.append((time.perf_counter() - t) * 1000)
    warm = []
    for q in texts[:100]:
        t = time.perf_counter()
        kb.embedder.embed_query(q + " (cold)")
        warm.append((time.perf_counter() - t) * 1000)
    report["query_embedding"] = {"first_ms_p50": round(float(np.percentile(cold, 50)), 3),
                                 "cached_ms_p50": round(float(np.percentile(warm, 50)), 4)}
    for q in texts:
        kb.embedder.embed_query(q)
    for fusion in ("zscore", "rrf"):
        params = SearchParams(k=10, candidate_k=100, method="hybrid", fusion=fusion)
        qps, lat = timed(lambda q, p=params: kb.search_rows(q, params=p, expansions=[]), texts)
        report[f"hybrid_{fusion}"] = {"qps": round(qps), "p50_ms": round(float(np.percentile(lat, 50)), 3),
                                      "p95_ms": round(float(np.percentile(lat, 95)), 3)}
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        b = report["bm25"]
        print(f"{report['dataset']}: {report['queries']} queries over {report['chunks']} chunks")
        print(f"BM25 branch   citewise {b['citewise_qps']} q/s vs raw bm25s {b['raw_bm25s_qps']} q/s one at a time "
              f"(ratio {b['ratio_citewise_over_raw']}); raw bm25s batched {b['raw_bm25s_batched_qps']} q/s")
        for fusion in ("zscore", "rrf"):
            h = report[f"hybrid_{fusion}"]
            print(f"hybrid {fusion:<7}{h['qps']} q/s, p50 {h['p50_ms']} ms, p95 {h['p95_ms']} ms "
                  "(query embedding excluded)")
        e = report["query_embedding"]
        print(f"query embedding  first {e['first_ms_p50']} ms, repeated (LRU) {e['cached_ms_p50']} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
