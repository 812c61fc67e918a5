"""Store benchmark: ingest and query latency on PostgreSQL vs SQLite, and what a replica's refresh costs.

    python -m citewise.evals.bench_store --database-url postgresql://... [--scifact ../shared/data/scifact]
        [--queries 200] [--json]

Per dataset (the sample KB, SciFact) and store, one run on a fresh home / fresh PostgreSQL schema:
- ingest: wall time, and the latency of each document's transaction (p50/p95) — the store's share;
  the window-vector cache is warmed first, so both stores embed nothing and compare like for like;
- query: `citewise.engine.answer` end to end (p50/p95); the store's part of a question is the
  generation check, the rest reads the local snapshot, the same on both stores;
- refresh (PostgreSQL): a replica with its own home builds its snapshot from the database (full
  build, warm cache), then follows a one-document change: commit -> new snapshot answering
  (an incremental rebuild: the vectors of unchanged text are copied from the previous snapshot).
Prints JSON (--json) or a table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..config import Context
from ..errors import InputError

ROOT = Path(__file__).resolve().parent.parent


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 2) if ordered else 0.0


class _Timed:
    """A store whose transactions are timed (each is one document at ingest)."""

    def __init__(self, store: Any):
        self._store, self.ms = store, []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        started = time.perf_counter()
        with self._store.transaction() as conn:
            yield conn
        self.ms.append((time.perf_counter() - started) * 1000)


def fresh_schema(url: str) -> str:
    import psycopg

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    return f"{url}{'&' if '?' in url else '?'}options={quote(f'-csearch_path={schema}')}"


def drop_schema(url: str) -> None:
    import psycopg

    from ..store.postgres import close_pools

    close_pools()
    schema = url.rsplit("%3D", 1)[-1]
    with psycopg.connect(url.split("?")[0], autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def timed_ingest(source: Path, home: Path, url: str) -> dict[str, Any]:
    from ..kb import ingest as ingest_module
    from ..store import open_store

    timed: list[_Timed] = []

    def opener(home_: Path, database_url: str | None = None) -> Any:
        timed.append(_Timed(open_store(home_, database_url)))
        return timed[-1]

    original = ingest_module.open_store
    ingest_module.open_store = opener  # type: ignore[assignment]
    try:
        started = time.perf_counter()
        summary = ingest_module.ingest([source], home, context=Context(database_url=url), progress=False)
        seconds = time.perf_counter() - started
    finally:
        ingest_module.open_store = original  # type: ignore[assignment]
    ms = timed[0].ms
    manifest = json.loads((home / "index" / "manifest.json").read_text())
    return {"documents": summary["documents_total"], "chunks": summary["chunks_total"],
            "ingest_s": round(seconds, 2), "index_build_s": manifest["seconds"],
            "write_s": round(sum(ms) / 1000, 2), "txn_ms_p50": _pct(ms, 0.5), "txn_ms_p95": _pct(ms, 0.95),
            "transactions": len(ms)}


def query_latency(homes: dict[str, tuple[Path, str]], questions: list[str]) -> dict[str, dict[str, Any]]:
    """Per store, `engine.answer` latency over the same questions, the stores interleaved question by
    question (so a busy moment of the machine costs both alike)."""
    from ..engine import answer
    from ..retrieval.embeddings import get_embedder

    contexts = {kind: Context(home=str(home), database_url=url) for kind, (home, url) in homes.items()}
    embedder = get_embedder()
    for q in questions:  # query vectors are cached per process: warm them, so neither store pays for them
        embedder.embed_query(q)
    for ctx in contexts.values():
        answer(questions[0], ctx=ctx)  # load each snapshot once
    ms: dict[str, list[float]] = {kind: [] for kind in contexts}
    for q in questions:
        for kind, ctx in contexts.items():
            started = time.perf_counter()
            answer(q, ctx=ctx)
            ms[kind].append((time.perf_counter() - started) * 1000)
    return {kind: {"queries": len(v), "query_ms_p50": _pct(v, 0.5), "query_ms_p95": _pct(v, 0.95)}
            for kind, v in ms.items()}


def generation_check_ms(home: Path, url: str, n: int = 200) -> float:
    from ..store import open_store

    store = open_store(home, url)
    ms = []
    for _ in range(n):
        started = time.perf_counter()
        store.generation()
        ms.append((time.perf_counter() - started) * 1000)
    return _pct(ms, 0.5)


def replica_refresh(url: str, tmp: Path, question: str) -> dict[str, Any]:
    """A replica home built from the database, then following a one-document change."""
    from ..kb.chunker import Chunk
    from ..retrieval.embeddings import get_embedder
    from ..retrieval.snapshot import build_indexes, open_kb
    from ..store import open_store

    home = tmp / f"replica-{uuid.uuid4().hex[:6]}"
    store = open_store(home, url)
    started = time.perf_counter()
    build_indexes(store, get_embedder())
    full = time.perf_counter() - started
    kb = open_kb(home, database_url=url)
    doc = f"bench-change-{uuid.uuid4().hex[:6]}"
    text = f"{question} This benchmark note {doc} changes one document."
    with store.transaction() as conn:
        store.put_document(conn, doc_id=doc, source=f"/bench/{doc}.md", title="Bench change", metadata={},
                           content_hash=doc, structured=False, fields=[], guardrails={},
                           chunks=[Chunk(f"{doc}#0", doc, 0, "Body", "content", "medium", text, 20, {})])
        store.bump_generation(conn)
    committed = time.perf_counter()
    while time.perf_counter() - committed < 60:
        current = open_kb(home, database_url=url)
        if current.generation != kb.generation and doc in current.docs:
            break
        time.sleep(0.01)
    follow = time.perf_counter() - committed
    return {"replica_full_build_s": round(full, 2), "replica_follow_change_s": round(follow, 2)}


def sample_questions() -> list[str]:
    from .questions import SETS, load_questions

    return [q["question"] for q in load_questions(SETS["sample"].questions)]


def scifact_queries(dataset: Path, n: int) -> list[str]:
    lines = (dataset / "queries.jsonl").read_text().splitlines()
    return [json.loads(line)["text"] for line in lines[:n]]


def bench(database_url: str, scifact: Path | None, n_queries: int) -> dict[str, Any]:
    from ..kb.ingest import ingest

    datasets: list[tuple[str, Path, list[str]]] = [("sample", ROOT / "examples" / "kb", sample_questions())]
    if scifact is not None:
        datasets.append(("scifact", scifact / "corpus.jsonl", scifact_queries(scifact, n_queries)))
    rows = []
    with tempfile.TemporaryDirectory(prefix="citewise-bench-store-") as tmp_dir:
        tmp = Path(tmp_dir)
        for name, source, questions in datasets:
            ingest([source], tmp / f"warm-{name}", progress=False)  # warms the window-vector cache
            url = fresh_schema(database_url)
            homes = {"sqlite": (tmp / f"{name}-sqlite", ""), "postgresql": (tmp / f"{name}-postgresql", url)}
            try:
                found = {kind: {"dataset": name, "store": kind, **timed_ingest(source, home, db)}
                         for kind, (home, db) in homes.items()}
                for kind, latency in query_latency(homes, questions).items():
                    found[kind].update(latency, generation_check_ms_p50=generation_check_ms(*homes[kind]))
                found["postgresql"].update(replica_refresh(url, tmp, questions[0]))
                rows.extend(found.values())
            finally:
                drop_schema(url)
    return {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "date": time.strftime("%Y-%m-%d"), "load_average": [round(x, 1) for x in os.getloadavg()], "rows": rows}


COLUMNS = [("dataset", 8), ("store", 10), ("documents", 9), ("chunks", 7), ("ingest_s", 9), ("write_s", 8),
           ("txn_ms_p50", 10), ("txn_ms_p95", 10), ("query_ms_p50", 12), ("query_ms_p95", 12),
           ("generation_check_ms_p50", 10), ("replica_full_build_s", 11), ("replica_follow_change_s", 12)]


def print_table(report: dict[str, Any]) -> None:
    heads = ["dataset", "store", "docs", "chunks", "ingest s", "write s", "txn p50", "txn p95", "query p50",
             "query p95", "gen chk", "replica bld", "follow s"]
    print(" ".join(h.rjust(w) for h, (_, w) in zip(heads, COLUMNS)))
    for row in report["rows"]:
        print(" ".join(str(row.get(k, "-")).rjust(w) for k, w in COLUMNS))
    print(f"(ms unless s; {report['machine']}; {report['date']}; load average {report['load_average']})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m citewise.evals.bench_store")
    parser.add_argument("--database-url", required=True, help="a PostgreSQL database to create schemas in")
    parser.add_argument("--scifact", type=Path, help="BEIR SciFact folder (corpus.jsonl, queries.jsonl)")
    parser.add_argument("--queries", type=int, default=200, help="SciFact queries to time")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.scifact is not None and not (args.scifact / "corpus.jsonl").is_file():
        raise InputError(f"{args.scifact}: no corpus.jsonl")
    report = bench(args.database_url, args.scifact, args.queries)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(json.dumps(report))
        print_table(report)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
