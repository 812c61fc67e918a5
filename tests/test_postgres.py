"""PostgreSQL as the shared source of truth: the same answers as SQLite, ingests that survive kill -9
and run concurrently, replicas that follow the database, and durable threads."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from citewise.config import Context
from citewise.evals.questions import SETS, load_questions, run
from citewise.kb.ingest import ingest
from tests.paths import SAMPLE_KB

ZEPHYR = """---
id: zephyr-widget-fee
title: The Zephyr widget fee
record_keeper: Acme Retirement
plan_type: 401(k)
topic: fees
---

## Overview
The Zephyr widget fee is 17 dollars per quarter, charged to every participant who keeps a Zephyr widget.
"""


def _env(url: str, home: Path) -> dict[str, str]:
    return {**os.environ, "CITEWISE_DATABASE_URL": url, "CITEWISE_HOME": str(home), "HF_HUB_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false"}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "citewise.cli", *args]


def _state(url: str) -> dict[str, object]:
    """What a knowledge base holds, for comparing two ingests: every chunk, document and source."""
    with psycopg.connect(url) as conn:
        chunks = conn.execute("SELECT chunk_id, doc_id, ordinal, md5(text), metadata::text FROM chunks "
                              "ORDER BY chunk_id").fetchall()
        docs = conn.execute("SELECT doc_id, source, content_hash FROM documents ORDER BY doc_id").fetchall()
        sources = conn.execute("SELECT path, hash FROM sources ORDER BY path").fetchall()
        dupes = conn.execute("SELECT count(*) FROM (SELECT doc_id, ordinal FROM chunks GROUP BY 1, 2 "
                             "HAVING count(*) > 1) d").fetchone()[0]
    return {"chunks": chunks, "documents": docs, "sources": sources, "duplicates": dupes}


def _corpus(root: Path, docs_per_file: int = 150, markdown: int = 40) -> Path:
    """A corpus big enough that an ingest takes a few seconds: BEIR lines and plain markdown files."""
    rng = random.Random(7)
    words = ["loan", "rollover", "vesting", "hardship", "withdrawal", "beneficiary", "distribution", "fee", "plan",
             "participant", "employer", "match", "contribution", "limit", "tax", "penalty", "deadline", "form",
             "custodian", "account", "balance"]
    part1, part2 = root / "part1", root / "part2"
    part1.mkdir(parents=True)
    part2.mkdir()
    for name, folder in (("a", part1), ("b", part2)):
        with (folder / f"corpus-{name}.jsonl").open("w") as fh:
            for i in range(docs_per_file):
                text = " ".join(rng.choice(words) for _ in range(rng.randint(40, 120)))
                fh.write(json.dumps({"_id": f"{name}{i}", "title": f"Note {name}{i}", "text": text}) + "\n")
    for i in range(markdown):
        folder = part1 if i % 2 else part2
        body = "\n\n".join(" ".join(rng.choice(words) for _ in range(60)) for _ in range(3))
        (folder / f"article-{i:02d}.md").write_text(f"# Article {i}\n\n{body}\n")
    return root


def _engine(question: str, *, home: Path, database_url: str = "", **given: object) -> dict[str, object]:
    """The eval's answer function through `citewise.engine.answer` (the graph routes the same way and is
    tested to; this keeps two full evals within the suite's time)."""
    from citewise.engine import answer

    return answer(question, ctx=Context(home=str(home), database_url=database_url), **given)  # type: ignore[arg-type]


@pytest.mark.slow
def test_sample_eval_is_identical_on_sqlite_and_postgresql(tmp_path: Path, pg_url: str) -> None:
    questions = load_questions(SETS["sample"].questions)
    sq_home, pg_home = tmp_path / "sqlite", tmp_path / "pg"
    ingest([SAMPLE_KB], sq_home, progress=False)
    ingest([SAMPLE_KB], pg_home, context=Context(database_url=pg_url), progress=False)
    sq = run(questions, sq_home, split="test", answer=_engine)
    pg = run(questions, pg_home, split="test", answer=_engine, database_url=pg_url)

    def rows(report: dict) -> list[tuple]:
        return [(r["id"], r["got"]["decision"], r["got"]["article"], r["confidence"], r["pass"], r["checks"])
                for r in report["rows"]]

    assert len(sq["rows"]) >= 10 and rows(sq) == rows(pg)
    assert sq["pass_rate"] == pg["pass_rate"]


def test_threads_live_in_postgresql(tmp_path: Path, pg_url: str) -> None:
    """A paused inquiry resumes from another process, on another home: the thread is in the database."""
    from citewise import api

    ingest([SAMPLE_KB], tmp_path / "a", context=Context(database_url=pg_url), progress=False)
    paused = api.ask("How do I roll over my 401(k)?", home=tmp_path / "a", interrupt_on_missing_data=True,
                     database_url=pg_url, top_k=10)
    assert paused["status"] == "interrupted" and paused["interrupt"]["fields"]
    assert not (tmp_path / "a" / api.THREADS_DB).exists()
    script = ("import json, sys; from citewise import api; "
              "print(json.dumps(api.resume(sys.argv[1], {'record_keeper': 'Acme Retirement', "
              "'separation_date': '2026-03-31', 'receiving_institution': 'Example Bank', "
              "'receiving_account_type': 'IRA', 'date_of_birth': '1960-05-01', 'vested_balance': 40000}, "
              "home=sys.argv[2])))")
    out = subprocess.run([sys.executable, "-c", script, paused["thread_id"], str(tmp_path / "b")],
                         env=_env(pg_url, tmp_path / "b"), capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    done = json.loads(out.stdout.strip().splitlines()[-1])
    assert done["status"] == "done" and done["citations"]
    assert api.load_settings(tmp_path / "b", paused["thread_id"], pg_url) == {"interrupt_on_missing_data": True,
                                                                              "top_k": 10}
    with pytest.raises(Exception, match="no thread"):
        api.pending("no-such-thread", home=tmp_path / "a", database_url=pg_url)


def test_a_replica_follows_the_database_without_blocking(tmp_path: Path, pg_url: str, kb_copy: Path) -> None:
    """Replica B (its own home) picks up an ingest made through home A, and keeps answering meanwhile."""
    from citewise.retrieval.snapshot import follower_stats, open_kb

    ctx = Context(database_url=pg_url)
    ingest([kb_copy], tmp_path / "a", context=ctx, progress=False)
    first = open_kb(tmp_path / "b", database_url=pg_url)
    article = kb_copy / "zephyr.md"
    article.write_text(ZEPHYR)
    ingest([kb_copy], tmp_path / "a", context=ctx, progress=False)
    started, served = time.monotonic(), []
    while time.monotonic() - started < 10:
        kb = open_kb(tmp_path / "b", database_url=pg_url)  # never waits for the rebuild
        served.append(kb.generation)
        if "zephyr-widget-fee" in kb.docs:
            break
        time.sleep(0.05)
    assert "zephyr-widget-fee" in kb.docs and time.monotonic() - started < 5
    assert served[0] in (first.generation, kb.generation)
    deadline = time.monotonic() + 5
    while not (follower_stats(tmp_path / "b") or [{}])[0].get("refreshes") and time.monotonic() < deadline:
        time.sleep(0.05)  # a question may load the new snapshot just before the refresher counts its build
    stats = follower_stats(tmp_path / "b")
    assert stats[0]["refreshes"] >= 1 and stats[0]["last_seconds"] < 5
    assert open_kb(tmp_path / "b", database_url=pg_url, generation=first.generation) is first  # still pinned


@pytest.fixture(scope="module")
def corpus_and_clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """The test corpus, and what a clean, uninterrupted ingest of it leaves in the database."""
    from citewise.store.postgres import close_pools
    from tests.pg import fresh_schema_url

    tmp = tmp_path_factory.mktemp("pg-corpus")
    corpus = _corpus(tmp / "corpus")
    clean_url = fresh_schema_url("clean")
    done = subprocess.run(_cli("ingest", str(corpus), "--json"), env=_env(clean_url, tmp / "clean"),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    close_pools()
    return corpus, _state(clean_url)


@pytest.mark.slow
def test_kill_9_during_ingest_then_rerun_equals_a_clean_ingest(tmp_path: Path, pg_url: str,
                                                               corpus_and_clean: tuple[Path, dict]) -> None:
    corpus, clean = corpus_and_clean
    total = len(clean["documents"])
    assert total == 340 and clean["duplicates"] == 0

    rng = random.Random(int(os.environ.get("CITEWISE_TEST_SEED", "14")))
    moments = [*sorted(rng.sample(range(1, total), 4)), "build"]  # 4 mid-write moments, one during the build
    home = tmp_path / "killed"
    killed = 0
    for moment in moments:
        proc = subprocess.Popen(_cli("ingest", str(corpus), "--json"), env=_env(pg_url, home),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        with psycopg.connect(pg_url, autocommit=True) as conn:
            while proc.poll() is None and time.monotonic() < deadline:
                try:
                    docs = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
                except psycopg.errors.UndefinedTable:  # the first ingest has not migrated the schema yet
                    docs = 0
                if moment == "build" and docs == total:
                    time.sleep(rng.uniform(0.0, 0.5))  # the index build (or the last file records)
                    break
                if moment != "build" and docs >= moment:
                    break
                time.sleep(0.005)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            killed += 1
        proc.wait()
    assert killed >= 3  # most kills landed while the ingest was running
    rerun = subprocess.run(_cli("ingest", str(corpus), "--json"), env=_env(pg_url, home),
                           capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert json.loads(rerun.stdout)["errors"] == []
    assert _state(pg_url) == clean  # same chunks, documents and sources; no duplicates


@pytest.mark.slow
def test_two_concurrent_ingests_of_overlapping_folders(tmp_path: Path, pg_url: str,
                                                       corpus_and_clean: tuple[Path, dict]) -> None:
    corpus, clean = corpus_and_clean
    # A: everything; B: part2 and one file of part1, started together, each from its own "machine" (home).
    a = subprocess.Popen(_cli("ingest", str(corpus), "--json"), env=_env(pg_url, tmp_path / "a"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    b = subprocess.Popen(_cli("ingest", str(corpus / "part2"), str(corpus / "part1" / "corpus-a.jsonl"), "--json"),
                         env=_env(pg_url, tmp_path / "b"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out_a, err_a = a.communicate(timeout=600)
    out_b, err_b = b.communicate(timeout=600)
    assert a.returncode == 0 and b.returncode == 0, (err_a[-2000:], err_b[-2000:])
    assert json.loads(out_a)["errors"] == [] and json.loads(out_b)["errors"] == []
    state = _state(pg_url)
    assert state["duplicates"] == 0 and state == clean


def test_replica_homes_are_caches_only(tmp_path: Path, pg_url: str) -> None:
    """With PostgreSQL nothing of the knowledge base is in the home: deleting it loses nothing."""
    from citewise.retrieval.snapshot import forget, open_kb

    ingest([SAMPLE_KB], tmp_path / "a", context=Context(database_url=pg_url), progress=False)
    assert not (tmp_path / "a" / "citewise.db").exists()
    generation = open_kb(tmp_path / "a", database_url=pg_url).generation
    forget(tmp_path / "a")
    shutil.rmtree(tmp_path / "a")
    kb = open_kb(tmp_path / "a", database_url=pg_url)  # rebuilt from the database
    assert kb.generation == generation and len(kb.chunk_ids) > 200


def test_a_replica_keeps_answering_when_the_database_is_unreachable(tmp_path: Path, pg_url: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from citewise.engine import answer
    from citewise.errors import StoreError
    from citewise.retrieval.snapshot import open_kb

    ingest([SAMPLE_KB], tmp_path / "a", context=Context(database_url=pg_url), progress=False)
    kb = open_kb(tmp_path / "a", database_url=pg_url)
    calls: list[int] = []

    def down() -> int:
        calls.append(1)
        raise StoreError("database postgresql://...: connection refused")

    monkeypatch.setattr(kb.store, "generation", down)
    out = answer("How do I roll over my 401(k)?", ctx=Context(home=str(tmp_path / "a"), database_url=pg_url))
    assert out["citations"] and out["metadata"]["kb_generation"] == kb.generation
    assert open_kb(tmp_path / "a", database_url=pg_url) is kb and calls == [1]  # no second wait within 5 s


def test_doctor_checks_a_postgresql_knowledge_base(tmp_path: Path, pg_url: str) -> None:
    """doctor on PostgreSQL: the schema and the counts of the shared database, then the replica's snapshot."""
    from citewise.kb.doctor import doctor

    ctx = Context(database_url=pg_url)
    ingest([SAMPLE_KB], tmp_path / "a", context=ctx, progress=False)

    def found(report: dict, check: str) -> dict:
        return next(f for f in report["findings"] if f["check"] == check)

    report = doctor(tmp_path / "a", context=ctx)
    assert report["healthy"] and "citewise_test:***@" in report["database"]
    assert "schema version" in found(report, "store")["detail"] and "counts agree" in found(report, "store")["detail"]
    assert found(report, "index")["ok"] and not any(f["check"] == "threads" for f in report["findings"])

    replica = tmp_path / "replica"  # a replica that has not built its snapshot yet
    report = doctor(replica, context=ctx)
    assert not report["healthy"] and found(report, "index")["detail"].startswith("missing")
    repaired = doctor(replica, repair=True, context=ctx)
    assert repaired["healthy"] and "rebuilt the index" in found(repaired, "index")["fixed"]

    with psycopg.connect(pg_url, autocommit=True) as conn:  # a document position held by two chunks
        conn.execute("INSERT INTO chunks SELECT chunk_id || '-twin', doc_id, ordinal, section, chunk_type, tier, "
                     "text, tokens, metadata, position FROM chunks ORDER BY chunk_id LIMIT 1")
    report = doctor(replica, repair=True, context=ctx)
    assert not report["healthy"] and "held by more than one chunk" in found(report, "store")["detail"]


def test_a_read_only_database_stops_an_ingest_with_a_store_error(tmp_path: Path, pg_url: str, kb_copy: Path) -> None:
    """PostgreSQL's faults are StoreErrors like SQLite's: the ingest stops, naming the database (no password)."""
    from citewise.errors import StoreError

    ingest([kb_copy], tmp_path / "a", context=Context(database_url=pg_url), progress=False)
    (kb_copy / "zephyr.md").write_text(ZEPHYR)
    read_only = pg_url + "%20-cdefault_transaction_read_only%3Don"  # e.g. a hot standby, or a read-only role
    with pytest.raises(StoreError, match=r"read-only") as exc:
        ingest([kb_copy], tmp_path / "a", context=Context(database_url=read_only), progress=False)
    assert "citewise_test:***@" in str(exc.value) and ":citewise_test@" not in str(exc.value)
