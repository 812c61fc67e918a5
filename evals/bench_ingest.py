"""Ingest throughput over a generated corpus of real-format files: files/s, chunks/s, embedding share.

    python -m citewise.evals.bench_ingest [--files 240] [--formats pdf,docx,html,vtt,pptx,xlsx] [--json-only]

Generates the corpus with evals/bench_convert.py's generators (PDFs written by reportlab, DOCX by
python-docx, PPTX by python-pptx, XLSX by openpyxl, HTML and WebVTT as text), then in one process:

1. ingests it into a fresh home with a cold vector cache (CITEWISE_CACHE_DIR is a new temporary folder):
   the total, and the embedding time inside it, give files/s and chunks/s with and without embeddings;
2. embeds the very same chunk texts with `get_embedder().embed_documents`, again with a cold cache:
   the model's raw throughput, which the total ingest is compared with (ingest chunks/s ÷ raw chunks/s);
3. ingests the corpus into a second fresh home with the cache now warm (what "without embeddings" costs
   when every vector is already known), and re-ingests the first home unchanged (should be ~free).

Prints JSON, then a table. No network: the model is the packaged all-MiniLM-L6-v2.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

TARGET_FILES_PER_S = 20.0  # ingest without embeddings
TARGET_RAW_SHARE = 0.8  # total ingest throughput / the embedding model's raw throughput on the same texts


def _timed_ingest(corpus: Path, home: Path) -> tuple[dict[str, Any], float]:
    from ..kb.ingest import ingest

    started = time.perf_counter()
    summary = ingest([corpus], home, progress=False)
    return summary, time.perf_counter() - started


def run(files: int, formats: tuple[str, ...]) -> dict[str, Any]:
    from .bench_convert import generate

    load_before = os.getloadavg()[0]  # the machine is shared: say how busy it was
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        root = Path(tmp)
        os.environ["CITEWISE_CACHE_DIR"] = str(root / "cache-ingest")  # cold: read when the cache first opens
        started = time.perf_counter()
        paths = generate(root / "corpus", files, formats)
        generate_s = time.perf_counter() - started

        from ..retrieval.embeddings import VectorCache, get_embedder
        from ..retrieval.passage import index_text
        from ..store.sqlite import Store

        embedder = get_embedder()
        getattr(embedder, "model", None)  # load the model outside every timed step (both sides pay it once)
        embedder.embed_query("warm up the model once")  # query vectors are never cached on disk

        cold, cold_s = _timed_ingest(root / "corpus", root / "home-cold")
        texts = [index_text(r["title"], r["section"], r["text"]) for r in Store(root / "home-cold").iter_chunks()]

        if hasattr(embedder, "_cache"):  # the raw run gets its own cold cache, like the ingest had
            embedder._cache = VectorCache(root / "cache-raw" / "embeddings.sqlite")
        started = time.perf_counter()
        embedder.embed_documents(texts)
        raw_s = time.perf_counter() - started

        if hasattr(embedder, "_cache"):
            embedder._cache = VectorCache(root / "cache-ingest" / "embeddings.sqlite")  # warm: the ingest's vectors
        warm, warm_s = _timed_ingest(root / "corpus", root / "home-warm")
        unchanged, unchanged_s = _timed_ingest(root / "corpus", root / "home-cold")

    chunks = cold["chunks_total"]
    embedding_s = float(cold["timings"].get("embedding", 0.0))
    without_s = cold_s - embedding_s
    ingest_cps = chunks / cold_s
    raw_cps = len(texts) / raw_s
    report = {
        "date": dt.date.today().isoformat(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_average_1min": [round(load_before, 1), round(os.getloadavg()[0], 1)]},
        "files": len(paths),
        "formats": dict(sorted(Counter(p.suffix.lstrip(".") for p in paths).items())),
        "generate_s": round(generate_s, 2),
        "documents": cold["documents_total"],
        "chunks": chunks,
        "skipped": len(cold["skipped"]),
        "cold": {
            "seconds": round(cold_s, 2),
            "embedding_s": round(embedding_s, 2),
            "embedding_share": round(embedding_s / cold_s, 3),
            "files_per_s": round(len(paths) / cold_s, 1),
            "chunks_per_s": round(ingest_cps, 1),
            "files_per_s_without_embedding": round(len(paths) / without_s, 1),
            "chunks_per_s_without_embedding": round(chunks / without_s, 1),
            "timings": cold["timings"],
        },
        "raw_embedding": {"texts": len(texts), "seconds": round(raw_s, 2), "chunks_per_s": round(raw_cps, 1)},
        "ingest_vs_raw": round(ingest_cps / raw_cps, 3),
        "warm_cache": {"seconds": round(warm_s, 2), "files_per_s": round(len(paths) / warm_s, 1),
                       "embedding_s": float(warm["timings"].get("embedding", 0.0))},
        "unchanged_reingest": {"seconds": round(unchanged_s, 2), "files_unchanged": unchanged["files_unchanged"],
                               "reindexed": unchanged["reindexed"]},
    }
    report["targets"] = {
        "files_per_s_without_embedding>=20": report["cold"]["files_per_s_without_embedding"] >= TARGET_FILES_PER_S,
        "ingest_vs_raw>=0.8": report["ingest_vs_raw"] >= TARGET_RAW_SHARE,
    }
    return report


def table(report: dict[str, Any]) -> str:
    cold, raw = report["cold"], report["raw_embedding"]
    rows = [
        ("corpus", f"{report['files']} files ({', '.join(f'{k} {v}' for k, v in report['formats'].items())}), "
                   f"{report['chunks']} chunks"),
        ("ingest, cold vector cache", f"{cold['seconds']} s: {cold['files_per_s']} files/s, {cold['chunks_per_s']} "
                                      f"chunks/s; embedding {cold['embedding_s']} s = "
                                      f"{100 * cold['embedding_share']:.0f}% of the time"),
        ("ingest without embeddings (cold run minus embedding)",
         f"**{cold['files_per_s_without_embedding']} files/s**, {cold['chunks_per_s_without_embedding']} chunks/s "
         f"(target ≥ {TARGET_FILES_PER_S:g})"),
        ("ingest, warm vector cache (fresh home)", f"{report['warm_cache']['seconds']} s: "
                                                   f"{report['warm_cache']['files_per_s']} files/s"),
        ("raw `embed_documents` on the same chunk texts, cold cache", f"{raw['seconds']} s: {raw['chunks_per_s']} "
                                                                      "chunks/s"),
        ("ingest ÷ raw embedding throughput", f"**{report['ingest_vs_raw']:.2f}** (target ≥ {TARGET_RAW_SHARE})"),
        ("re-ingest, nothing changed", f"{report['unchanged_reingest']['seconds']} s "
                                       f"({report['unchanged_reingest']['files_unchanged']} files unchanged, "
                                       f"reindexed: {report['unchanged_reingest']['reindexed']})"),
    ]
    return "\n".join(["| what | result |", "|---|---|", *(f"| {a} | {b} |" for a, b in rows)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=240)
    parser.add_argument("--formats", default="pdf,docx,html,vtt,pptx,xlsx",
                        help="comma-separated generator names from bench_convert (rotated)")
    parser.add_argument("--json-only", action="store_true")
    args = parser.parse_args(argv)
    formats = tuple(f.strip() for f in args.formats.split(",") if f.strip())
    from .bench_convert import MAKERS

    unknown = [f for f in formats if f not in MAKERS]
    if unknown or args.files < 1:
        sys.stderr.write(f"bench_ingest: error: unknown format(s) {unknown} (choose from {sorted(MAKERS)})\n"
                         if unknown else "bench_ingest: error: --files must be at least 1\n")
        raise SystemExit(2)
    report = run(args.files, formats)
    print(json.dumps(report, indent=2))
    if not args.json_only:
        print()
        print(table(report))


if __name__ == "__main__":
    main()
