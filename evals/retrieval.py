"""Retrieval quality on a BEIR collection, through citewise's own ingest and search path.

    citewise eval retrieval --dataset ../shared/data/scifact [--method bm25|dense|hybrid|all]
                            [--split test] [--fusion rrf|zscore] [--alpha A] [--json]

Metrics (ir-measures): nDCG@10, R@10, R@100, RR@10 (MRR@10), P@3, and per-query latency p50/p95 of
the search call with the query embedding excluded (queries are embedded first) and included.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
from ir_measures import RR, P, R, nDCG

from ..retrieval.hybrid import SearchParams
from .beir import corpus_path, load_qrels, load_queries

MEASURES = [nDCG @ 10, R @ 10, R @ 100, RR @ 10, P @ 3]
NAMES = {"nDCG@10": "ndcg@10", "R@10": "recall@10", "R@100": "recall@100", "RR@10": "mrr@10", "P@3": "p@3"}


def eval_home(dataset: Path) -> Path:
    """A persistent home per dataset so repeated evaluations re-ingest nothing."""
    from ..retrieval.embeddings import cache_dir

    key = hashlib.sha1(str(dataset.resolve()).encode()).hexdigest()[:10]
    return cache_dir() / "eval-homes" / f"{dataset.name}-{key}"


def prepare(dataset: Path, home: Path | None = None) -> Path:
    from ..kb.ingest import ingest

    home = home or eval_home(dataset)
    ingest([corpus_path(dataset)], home, progress=sys.stderr.isatty())
    return home


def doc_run(kb: Any, hits: list[Any], depth: int) -> dict[str, float]:
    """Chunk hits -> document ranking (a document scores as its best chunk)."""
    run: dict[str, float] = {}
    n = len(hits)
    for i, h in enumerate(hits):
        doc = kb.doc_of_row[h.row]
        if doc not in run:
            run[doc] = float(n - i)  # rank-preserving score, robust to ties and negative fused scores
        if len(run) >= depth:
            break
    return run


def evaluate(kb: Any, queries: dict[str, str], qrels: dict[str, dict[str, int]], params: SearchParams,
             depth: int = 100) -> dict[str, Any]:
    ids = [q for q in qrels if q in queries]
    if params.method != "bm25":
        started = time.perf_counter()
        for q in ids:
            kb.embedder.embed_query(queries[q])
        embed_ms = (time.perf_counter() - started) * 1000 / max(len(ids), 1)
    else:
        embed_ms = 0.0
    run: dict[str, dict[str, float]] = {}
    latencies = []
    for q in ids:
        started = time.perf_counter()
        hits = kb.search_rows(queries[q], params=params, expansions=[])
        latencies.append((time.perf_counter() - started) * 1000)
        run[q] = doc_run(kb, hits, depth)
    scores = ir_measures.calc_aggregate(MEASURES, qrels, run)
    lat = np.asarray(latencies)
    out = {NAMES[str(m)]: round(float(v), 4) for m, v in scores.items()}
    out.update(queries=len(ids), latency_ms_p50=round(float(np.percentile(lat, 50)), 3),
               latency_ms_p95=round(float(np.percentile(lat, 95)), 3),
               latency_ms_p50_with_embedding=round(float(np.percentile(lat, 50)) + embed_ms, 3),
               query_embedding_ms=round(embed_ms, 3))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="citewise eval retrieval")
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--method", choices=["bm25", "dense", "hybrid", "all"], default="all")
    parser.add_argument("--fusion", choices=["rrf", "zscore"])
    parser.add_argument("--alpha", type=float)
    parser.add_argument("--candidate-k", type=int)
    parser.add_argument("--home", type=Path, help="KB home to ingest into (default: a cache per dataset)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from ..config import Context
    from ..retrieval.snapshot import open_kb

    ctx = Context()
    home = prepare(args.dataset, args.home)
    kb = open_kb(home)
    queries, qrels = load_queries(args.dataset), load_qrels(args.dataset, args.split)
    methods = ["bm25", "dense", "hybrid"] if args.method == "all" else [args.method]
    results = {}
    for method in methods:
        params = SearchParams(k=100, candidate_k=args.candidate_k or ctx.candidate_k, method=method,
                              fusion=args.fusion or ctx.fusion, rrf_k=ctx.rrf_k,
                              alpha=ctx.fusion_alpha if args.alpha is None else args.alpha)
        results[method] = evaluate(kb, queries, qrels, params)
    report = {"dataset": str(args.dataset), "split": args.split, "documents": len(kb.docs),
              "chunks": len(kb.chunk_ids), "fusion": args.fusion or ctx.fusion, "results": results}
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        cols = ["ndcg@10", "recall@10", "recall@100", "mrr@10", "p@3", "latency_ms_p50", "latency_ms_p95"]
        print(f"{args.dataset.name} ({args.split}, {next(iter(results.values()))['queries']} queries, "
              f"{report['documents']} docs)")
        print(f"{'method':<8}" + "".join(f"{c:>16}" for c in cols))
        for method, r in results.items():
            print(f"{method:<8}" + "".join(f"{r[c]:>16}" for c in cols))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
