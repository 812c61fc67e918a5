"""Synthetic scale benchmark of the retrieval engine: 10k / 100k / 1M chunks, 384-d vectors.

    python -m citewise.evals.bench_scale [--sizes 10000,100000,1000000] [--queries 200] [--json]

Text is generated from topic vocabularies plus a Zipfian background; vectors are noisy copies of
topic centres (so an IVF index faces realistic structure). Each size builds the engine's own BM25,
vector (exact below ANN_MIN_ROWS, IVF-SQ8 above) and metadata indexes, then times hybrid search one
query at a time (query embedding excluded: vectors are given), unfiltered and with a 10% filter, and
reports ANN recall@10 against exact search, build time and RSS.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from typing import Any

import numpy as np

from ..retrieval.ann import ANN_MIN_ROWS, IVFIndex
from ..retrieval.bm25 import BM25Index, query_terms
from ..retrieval.filters import MetadataIndex
from ..retrieval.hybrid import SearchParams, hybrid_search
from ..retrieval.vectors import ExactIndex
from .bench_retrieval import PeakRSS, rss_mb

DIM, TOPICS, VOCAB = 384, 1000, 50_000
NOISE = 1.3 / np.sqrt(DIM)  # noise norm ~1.3 around a unit topic centre: cosine to the centre ~0.6
LETTERS = np.array(list("bcdfghjklmnpqrstvwxz"))


def words(n: int) -> np.ndarray:
    """Pronounceable pseudo-words, so the analyser treats them like real terms."""
    ids = np.arange(n)
    parts = [LETTERS[(ids // 20 ** i) % 20] for i in range(4)]
    vowels = np.array(list("aeiou"))[ids % 5]
    return np.char.add(np.char.add(np.char.add(parts[0], vowels), np.char.add(parts[1], parts[2])), parts[3])


def corpus(n: int, seed: int = 0) -> tuple[list[str], np.ndarray, list[dict[str, Any]], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    vocab = words(VOCAB)
    topic_words = rng.integers(0, VOCAB, size=(TOPICS, 60))
    centers = rng.normal(size=(TOPICS, DIM)).astype(np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    topic = rng.integers(0, TOPICS, size=n)
    zipf = np.minimum(rng.zipf(1.2, size=(n, 25)) - 1, VOCAB - 1)
    own = topic_words[topic[:, None], rng.integers(0, 60, size=(n, 35))]
    tokens = np.concatenate([own, zipf], axis=1)
    texts = [" ".join(vocab[row]) for row in tokens]
    vectors = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        part = slice(start, min(n, start + 100_000))
        noise = rng.normal(size=(part.stop - part.start, DIM)).astype(np.float32) * NOISE
        v = centers[topic[part]] + noise
        vectors[part] = v / np.linalg.norm(v, axis=1, keepdims=True)
    meta = [{"record_keeper": f"rk{i % 10}", "topic": f"t{t % 20}", "year": 2000 + i % 25}
            for i, t in enumerate(topic)]
    return texts, vectors, meta, topic_words, centers


def run_size(n: int, n_queries: int, seed: int = 0) -> dict[str, Any]:
    texts, vectors, meta, topic_words, centers = corpus(n, seed)
    vocab = words(VOCAB)
    out: dict[str, Any] = {"chunks": n}
    with PeakRSS() as mem:
        t = time.perf_counter()
        bm25 = BM25Index.build(texts)
        out["build_bm25_s"] = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        vec = IVFIndex.build(vectors) if n >= ANN_MIN_ROWS else ExactIndex(vectors)
        out["build_vectors_s"] = round(time.perf_counter() - t, 2)
        out["vector_index"] = type(vec).__name__
        t = time.perf_counter()
        meta_index = MetadataIndex(meta)
        out["build_metadata_s"] = round(time.perf_counter() - t, 2)
    del texts, meta
    gc.collect()
    out["build_peak_rss_mb"] = round(mem.peak, 1)
    rng = np.random.default_rng(seed + 1)
    queries = []
    for _ in range(n_queries):
        tp = rng.integers(0, TOPICS)
        q_text = " ".join(vocab[rng.choice(topic_words[tp], 4, replace=False)])
        q_vec = centers[tp] + rng.normal(size=DIM).astype(np.float32) * NOISE
        queries.append((q_text, q_vec / np.linalg.norm(q_vec)))
    params = SearchParams(k=12, candidate_k=100, method="hybrid", fusion="zscore")
    mask = meta_index.mask({"record_keeper": "rk3"})
    for label, m in (("", None), ("filtered_", mask)):
        hybrid_search(bm25, vec, query_terms(queries[0][0]), queries[0][1], m, params)  # warm-up
        lat = []
        for text, qv in queries:
            t = time.perf_counter()
            hits = hybrid_search(bm25, vec, query_terms(text), qv, m, params)
            lat.append((time.perf_counter() - t) * 1000)
            if m is not None and not all(m[h.row] for h in hits):
                raise RuntimeError("a filtered search returned a row outside its filter")
        out[f"{label}p50_ms"] = round(float(np.percentile(lat, 50)), 3)
        out[f"{label}p95_ms"] = round(float(np.percentile(lat, 95)), 3)
    if isinstance(vec, IVFIndex):
        exact = ExactIndex(vectors)
        recall = [len(set(vec.search(qv, 10)[0]) & set(exact.search(qv, 10)[0])) / 10 for _, qv in queries[:50]]
        out["ann_recall@10"] = round(float(np.mean(recall)), 4)
    out["resident_rss_mb"] = round(rss_mb(), 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m citewise.evals.bench_scale")
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        results.append(run_size(n, args.queries))
        print(json.dumps(results[-1]), file=sys.stderr)
        gc.collect()
    if args.json:
        json.dump({"ann_min_rows": ANN_MIN_ROWS, "results": results}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        cols = ["chunks", "vector_index", "build_bm25_s", "build_vectors_s", "p50_ms", "p95_ms", "filtered_p50_ms",
                "filtered_p95_ms", "ann_recall@10", "build_peak_rss_mb", "resident_rss_mb"]
        print("".join(f"{c:>18}" for c in cols))
        for r in results:
            print("".join(f"{r.get(c, '-')!s:>18}" for c in cols))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
