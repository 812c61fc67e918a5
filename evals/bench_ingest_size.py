"""Ingest cost against size: many headings, long runs without sentence ends, large prose, MiniLM.
(evals/bench_ingest.py measures throughput on a mixed-format corpus instead.)

    python -m citewise.evals.bench_ingest_size [--headings 1000,2500,5000,10000] [--words 25000,100000,400000]
                                               [--prose-mb 1,5] [--minilm 10000] [--torch-threads N] [--json]

  headings  an article of N `##` sections: parse + chunk, and a whole ingest with a stand-in embedder
            (store writes, BM25, index files: everything but MiniLM)
  words     one section of N words without a sentence end: chunking, now and with the previous cut
            (which re-tokenized the whole remainder for every piece; run up to 100k words only)
  prose     N MB of sentences in paragraphs: a whole ingest with the stand-in embedder
  minilm    the N-heading article ingested for real in a fresh process with an empty embedding cache,
            then again into a new home (every vector cached)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .bench_faults import ENV


def headings_article(n: int, tag: str = "") -> str:
    lines = ["---", f"id: big{tag}", f"title: Big article {tag}", "topic: loan", "---", ""]
    for i in range(n):
        lines += [f"## Section {i}", f"Paragraph {i} says something about loans, number {i} {tag}.", ""]
    return "\n".join(lines)


def prose(mb: float, seed: int = 0) -> str:
    rng = random.Random(seed)
    words = ["loan", "rollover", "vesting", "match", "hardship", "beneficiary", "distribution", "contribution",
             "fee", "statement", "deadline", "form", "signature", "spouse", "balance", "account", "transfer",
             "withholding", "penalty", "notice", "plan", "participant"]
    out, size = [], 0
    while size < mb * 1_000_000:
        para = " ".join(" ".join(rng.choice(words) for _ in range(rng.randint(8, 20))).capitalize() + "."
                        for _ in range(rng.randint(2, 6)))
        out.append(para)
        size += len(para) + 2
    return "\n\n".join(out)


class StandInEmbedder:
    """Constant vectors at no cost: what an ingest costs besides the embedding model."""

    model_id, dim = "bench-stand-in", 8

    def embed_documents(self, texts: list[str], progress: Any = None) -> np.ndarray:
        if progress:
            progress(len(texts))
        return np.ones((len(texts), self.dim), dtype=np.float32) / np.sqrt(self.dim)

    def embed_query(self, text: str) -> np.ndarray:
        return np.ones(self.dim, dtype=np.float32) / np.sqrt(self.dim)


def ingest_without_model(path: Path, home: Path) -> dict[str, Any]:
    import citewise.kb.ingest as ingest_module

    original = ingest_module.get_embedder
    ingest_module.get_embedder = lambda *a, **k: StandInEmbedder()
    try:
        started = time.perf_counter()
        summary = ingest_module.ingest([path], home, progress=False)
        return {"ingest_s": round(time.perf_counter() - started, 2), "chunks": summary["chunks_total"]}
    finally:
        ingest_module.get_embedder = original


def bench_headings(n: int, work: Path) -> dict[str, Any]:
    from ..kb.articles import parse_markdown
    from ..kb.chunker import chunk_document

    text = headings_article(n)
    started = time.perf_counter()
    chunks = chunk_document(parse_markdown(text, source="big.md", default_id="big", default_title="big"))
    parse_chunk = time.perf_counter() - started
    path = work / f"headings-{n}.md"
    path.write_text(text)
    home = work / f"home-headings-{n}"
    whole = ingest_without_model(path, home)
    return {"headings": n, "chunks": len(chunks), "parse_chunk_s": round(parse_chunk, 2),
            "ingest_without_model_s": whole["ingest_s"], **verify_cost(home)}


def verify_cost(home: Path) -> dict[str, Any]:
    """What proving a snapshot costs at load: sha256 of every index file (and the row order)."""
    from ..retrieval.snapshot import check_snapshot, index_files

    directory = (home / "index").resolve()
    size = sum((directory / rel).stat().st_size for rel in index_files(directory))
    started = time.perf_counter()
    state = check_snapshot(home).state
    seconds = time.perf_counter() - started
    if state != "current":
        raise RuntimeError(f"the index of {home} is {state} right after its ingest")
    return {"index_mb": round(size / 1e6, 2), "verify_ms": round(seconds * 1000, 1),
            "verify_mb_per_s": round(size / 1e6 / seconds, 1)}


def previous_fit(unit: str, size: int) -> list[str]:
    """The chunker's cut before issue 11, kept here to measure what the linear cut replaced."""
    from ..kb.text import split_sentences
    from ..kb.tokens import count_tokens, truncate_to_tokens

    if count_tokens(unit) <= size:
        return [unit]
    pieces: list[str] = []
    for sentence in split_sentences(unit):
        while count_tokens(sentence) > size:
            head = truncate_to_tokens(sentence, size)
            if not head.strip():
                head = sentence[: max(1, len(sentence) // 2)]
            pieces.append(head)
            sentence = sentence[len(head):].lstrip()
        if sentence:
            pieces.append(sentence)
    return pieces


def bench_words(n: int, before_up_to: int) -> dict[str, Any]:
    from ..kb.chunker import split_section

    text = " ".join(f"word{i}" for i in range(n))
    started = time.perf_counter()
    now = split_section(text, 800, 120)
    out: dict[str, Any] = {"words": n, "mb": round(len(text) / 1e6, 2), "pieces": len(now),
                           "chunk_s": round(time.perf_counter() - started, 2)}
    if n <= before_up_to:
        started = time.perf_counter()
        before = previous_fit(text, 800)
        out["previous_cut_s"] = round(time.perf_counter() - started, 2)
        out["same_text"] = "".join(before).replace(" ", "") == "".join(now).replace(" ", "")
    return out


def bench_prose(mb: float, work: Path) -> dict[str, Any]:
    path = work / f"prose-{mb}.md"
    path.write_text(prose(mb))
    return {"prose_mb": mb, **ingest_without_model(path, work / f"home-prose-{mb}")}


def bench_minilm(n: int, work: Path, threads: str) -> dict[str, Any]:
    tag = os.urandom(4).hex()
    path = work / f"minilm-{n}.md"
    path.write_text(headings_article(n, tag))
    env = {**ENV, "CITEWISE_CACHE_DIR": str(work / "fresh-cache")}
    if threads:
        env["CITEWISE_TORCH_THREADS"] = threads
    out: dict[str, Any] = {"headings": n, "torch_threads": threads or "all CPUs"}
    for label, home in (("cold_cache", work / "minilm-home-1"), ("warm_cache", work / "minilm-home-2")):
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "citewise.cli", "ingest", str(path), "--home", str(home),
                               "--json"], env=env, capture_output=True, text=True, timeout=7200)
        out[f"{label}_process_s"] = round(time.perf_counter() - started, 1)
        out[f"{label}_ingest_s"] = json.loads(proc.stdout)["seconds"] if proc.returncode == 0 else proc.stderr[-300:]
    out["chunks_per_s_cold"] = round(n / out["cold_cache_process_s"], 1)
    return out


def _table(rows: list[dict[str, Any]]) -> str:
    cols = list(dict.fromkeys(k for r in rows for k in r))
    lines = [" | ".join(cols), " | ".join("---" for _ in cols)]
    lines += [" | ".join(str(r.get(c, "")) for c in cols) for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m citewise.evals.bench_ingest_size")
    parser.add_argument("--headings", default="1000,2500,5000,10000")
    parser.add_argument("--words", default="25000,100000,400000")
    parser.add_argument("--before-up-to", type=int, default=100000, help="largest size timed with the old cut")
    parser.add_argument("--prose-mb", default="1,5")
    parser.add_argument("--minilm", type=int, default=10000, help="headings ingested with MiniLM (0: skip)")
    parser.add_argument("--torch-threads", default="")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="citewise-ingest-") as tmp:
        work = Path(tmp)
        report["headings"] = [bench_headings(int(n), work) for n in args.headings.split(",") if n]
        report["words"] = [bench_words(int(n), args.before_up_to) for n in args.words.split(",") if n]
        report["prose"] = [bench_prose(float(mb), work) for mb in args.prose_mb.split(",") if mb]
        if args.minilm:
            report["minilm"] = bench_minilm(args.minilm, work, args.torch_threads)
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    for part in ("headings", "words", "prose"):
        print(_table(report[part]) + "\n")
    if "minilm" in report:
        print(_table([report["minilm"]]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
