"""Retrieval ablation on a BEIR collection: what each choice buys, tuned on one split, reported on another.

    python -m citewise.evals.ablation --dataset ../shared/data/scifact [--tune-split train] [--report-split test]

Builds variants of the engine's own components (BM25Index, pooled MiniLM vectors, hybrid_search) over
the chunks citewise ingested, picks parameters on the tuning split only, and prints nDCG@10 for every
step on both splits, so BENCHMARKS.md can show gains and the steps that did not help.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
from ir_measures import nDCG

from ..retrieval.bm25 import BM25Index, BM25Params, query_terms
from ..retrieval.hybrid import SearchParams, hybrid_search
from ..retrieval.vectors import ExactIndex
from .beir import load_qrels, load_queries
from .retrieval import prepare


class Bench:
    def __init__(self, dataset: Path, tune: str, report: str):
        from ..retrieval.embeddings import get_embedder
        from ..retrieval.snapshot import index_text
        from ..store import open_store

        home = prepare(dataset)
        self.store = open_store(home)
        rows = list(self.store.iter_chunks())
        self.titles = [r["title"] for r in rows]
        self.bodies = [r["text"] for r in rows]
        self.docs = [r["doc_id"] for r in rows]
        self.texts = [index_text(r["title"], r["section"], r["text"]) for r in rows]
        self.embedder = get_embedder()
        self.windows = self.embedder.window_vectors(self.texts)
        queries = load_queries(dataset)
        self.splits = {s: load_qrels(dataset, s) for s in {tune, report}}
        self.queries = {q: queries[q] for qr in self.splits.values() for q in qr if q in queries}
        self.qvec = {q: self.embedder.embed_query(t) for q, t in self.queries.items()}

    def vectors(self, pooling: str) -> ExactIndex:
        def pool(w: np.ndarray) -> np.ndarray:
            v = {"mean": lambda: w.mean(0), "max": lambda: w.max(0), "first": lambda: w[0]}[pooling]()
            return v / np.linalg.norm(v)

        return ExactIndex(np.stack([pool(w) for w in self.windows]).astype(np.float32))

    def ndcg(self, split: str, search: Callable[[str, str], list[int]]) -> float:
        qrels = self.splits[split]
        run = {}
        for q in qrels:
            if q in self.queries:
                seen: dict[str, float] = {}
                for i, row in enumerate(search(q, self.queries[q])):
                    seen.setdefault(self.docs[row], float(1000 - i))
                run[q] = seen
        return round(float(ir_measures.calc_aggregate([nDCG @ 10], qrels, run)[nDCG @ 10]), 4)

    def searcher(self, bm25: BM25Index, vec: ExactIndex, p: SearchParams,
                 prf: tuple[int, int, float] | None = None) -> Callable[[str, str], list[int]]:
        def search(qid: str, text: str) -> list[int]:
            terms = query_terms(text)
            if prf is not None:
                terms = expand_prf(bm25, terms, *prf)
            return [h.row for h in hybrid_search(bm25, vec, terms, self.qvec[qid], None, p)]

        return search


def expand_prf(bm25: BM25Index, terms: dict[str, float], fb_docs: int, fb_terms: int,
               weight: float) -> dict[str, float]:
    """RM3-style pseudo-relevance feedback on BM25 (kept here while it is only an experiment)."""
    rows, _ = bm25.search(terms, fb_docs)
    if not len(rows):
        return terms
    csr = bm25.doc_term_matrix()
    contrib = np.asarray(csr[rows].sum(axis=0)).ravel()
    inverse = bm25.inverse_vocab()
    best = np.argsort(-contrib)[: fb_terms + len(terms)]
    out = dict(terms)
    top = contrib[best[0]] or 1.0
    added = 0
    for tid in best:
        term = inverse.get(int(tid))
        if term and term not in out and contrib[tid] > 0:
            out[term] = weight * float(contrib[tid] / top)
            added += 1
            if added >= fb_terms:
                break
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m citewise.evals.ablation")
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--tune-split", default="train")
    parser.add_argument("--report-split", default="test")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    b = Bench(args.dataset, args.tune_split, args.report_split)
    tune, report = args.tune_split, args.report_split
    steps: list[dict[str, Any]] = []

    def record(name: str, search: Callable[[str, str], list[int]], **config: Any) -> float:
        row = {"step": name, tune: b.ndcg(tune, search), report: b.ndcg(report, search), **config}
        steps.append(row)
        print(json.dumps(row), file=sys.stderr)
        return row[tune]

    truncated = b.vectors("first")
    default_bm25 = BM25Index.build(b.texts, BM25Params(k1=1.5, b=0.75))
    bm25_only = SearchParams(k=100, method="bm25")
    dense_only = SearchParams(k=100, method="dense")
    record("bm25 (bm25s defaults k1=1.5 b=0.75, Snowball + stopwords, title+text)",
           b.searcher(default_bm25, truncated, bm25_only))
    # BM25 parameters, tuned on the tuning split
    best_bm25, best_cfg, best_score = default_bm25, {"k1": 1.5, "b": 0.75}, -1.0
    for k1, bb in itertools.product([0.6, 0.9, 1.2, 1.5, 2.0], [0.5, 0.65, 0.75, 0.9, 1.0]):
        idx = BM25Index.build(b.texts, BM25Params(k1=k1, b=bb))
        score = b.ndcg(tune, b.searcher(idx, truncated, bm25_only))
        if score > best_score:
            best_bm25, best_cfg, best_score = idx, {"k1": k1, "b": bb}, score
    record("bm25 tuned k1/b", b.searcher(best_bm25, truncated, bm25_only), **best_cfg)
    title2 = BM25Index.build([f"{t}\n{t}\n{x}" for t, x in zip(b.titles, b.bodies)], BM25Params(**best_cfg))
    record("bm25 + title weighted x2", b.searcher(title2, truncated, bm25_only), **best_cfg)
    record("dense, first 256 word pieces (truncated)", b.searcher(best_bm25, truncated, dense_only))
    pooled = {p: b.vectors(p) for p in ("mean", "max")}
    for p, vec in pooled.items():
        record(f"dense, windows pooled by {p}", b.searcher(best_bm25, vec, dense_only))
    vec = pooled["mean"]
    record("hybrid rrf k=60, truncated dense", b.searcher(best_bm25, truncated,
                                                          SearchParams(k=100, fusion="rrf", rrf_k=60)))
    record("hybrid rrf k=60", b.searcher(best_bm25, vec, SearchParams(k=100, fusion="rrf", rrf_k=60)))
    record("hybrid z-score alpha=0.5", b.searcher(best_bm25, vec, SearchParams(k=100, fusion="zscore", alpha=0.5)))
    best_alpha, best_score = 0.5, -1.0
    for alpha in (0.3, 0.4, 0.5, 0.6, 0.7):
        score = b.ndcg(tune, b.searcher(best_bm25, vec, SearchParams(k=100, fusion="zscore", alpha=alpha)))
        if score > best_score:
            best_alpha, best_score = alpha, score
    record("hybrid z-score, alpha tuned", b.searcher(best_bm25, vec, SearchParams(k=100, fusion="zscore",
                                                                                  alpha=best_alpha)), alpha=best_alpha)
    for depth in (30, 300):
        record(f"  candidate depth {depth}", b.searcher(best_bm25, vec, SearchParams(
            k=100, candidate_k=depth, fusion="zscore", alpha=best_alpha)), alpha=best_alpha)
    best_prf, best_score = None, -1.0
    for fb_docs, fb_terms, w in itertools.product((3, 5, 10), (10, 20), (0.2, 0.4)):
        score = b.ndcg(tune, b.searcher(best_bm25, vec, SearchParams(k=100, fusion="zscore", alpha=best_alpha),
                                        prf=(fb_docs, fb_terms, w)))
        if score > best_score:
            best_prf, best_score = (fb_docs, fb_terms, w), score
    record("hybrid z-score + BM25 pseudo-relevance feedback", b.searcher(
        best_bm25, vec, SearchParams(k=100, fusion="zscore", alpha=best_alpha), prf=best_prf),
        prf=best_prf, alpha=best_alpha)
    if args.json:
        json.dump(steps, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"{'step':<70}{tune:>10}{report:>10}")
        for s in steps:
            print(f"{s['step']:<70}{s[tune]:>10}{s[report]:>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
