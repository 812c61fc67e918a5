"""Two `langgraph dev` servers, each with its own home (index cache), on one PostgreSQL database.

What a change through one replica looks like from the other: an article ingested is answered within
5 s of its commit, a deleted one stops being cited within 5 s, and questions sent to both during a
re-ingest all succeed, each answered from one KB generation.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph_sdk import get_sync_client

from citewise.config import Context
from citewise.evals.questions import SETS, load_questions
from citewise.kb.ingest import ingest
from tests.server import langgraph_dev
from tests.test_postgres import ZEPHYR, _env

pytestmark = pytest.mark.slow
ZEPHYR_Q = "What is the Zephyr widget fee?"
STALE = "no longer loaded"  # what a replica logs if a run's pinned snapshot were gone (generations mixed)


def _ask(url: str, question: str) -> dict[str, Any]:
    return get_sync_client(url=url, timeout=120).runs.wait(None, "kb_agent", input={"question": question})


def _cited(out: dict[str, Any], doc_id: str) -> bool:
    return any(c.get("doc_id") == doc_id for c in out.get("citations") or [])


def _when(url: str, sql: str, done: Callable[[Any], bool]) -> tuple[threading.Thread, list[float]]:
    """Watch the database from a thread: the time at which `done(result of sql)` first holds (the commit)."""
    seen: list[float] = []

    def poll() -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:
                if done(conn.execute(sql).fetchone()[0]):
                    seen.append(time.monotonic())
                    return
                time.sleep(0.01)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    return thread, seen


def _until(url: str, question: str, ok: Callable[[dict[str, Any]], bool], limit: float = 60) -> float:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if ok(_ask(url, question)):
            return time.monotonic()
        time.sleep(0.1)
    raise AssertionError(f"{url} did not see the change within {limit}s")


@contextlib.contextmanager
def _servers(*specs: tuple[Path, Path, dict[str, str]]) -> Iterator[list[str]]:
    """Several `langgraph dev` servers, started in parallel (each takes a while to load)."""
    managers = [langgraph_dev(*spec) for spec in specs]
    with ThreadPoolExecutor(max_workers=len(managers)) as pool:
        started = [pool.submit(m.__enter__) for m in managers]
        errors = [f.exception() for f in started]
    try:
        if any(errors):
            raise next(e for e in errors if e)
        yield [f.result() for f in started]
    finally:
        for manager, future in zip(managers, started):
            if future.exception() is None:
                manager.__exit__(None, None, None)


def test_two_servers_follow_one_database(tmp_path: Path, pg_url: str, kb_copy: Path,
                                        record_property: Callable[[str, object], None]) -> None:
    home_a, home_b = tmp_path / "a", tmp_path / "b"
    ingest([kb_copy], home_a, context=Context(database_url=pg_url), progress=False)
    db = {"CITEWISE_DATABASE_URL": pg_url}
    with _servers((home_a, tmp_path / "a.log", db), (home_b, tmp_path / "b.log", db)) as (url_a, url_b):
        assert not _cited(_ask(url_b, ZEPHYR_Q), "zephyr-widget-fee")

        # 1. An article ingested through replica A's home is answered by replica B within 5 s of its commit.
        (kb_copy / "zephyr.md").write_text(ZEPHYR)
        watcher, committed = _when(pg_url, "SELECT count(*) FROM documents WHERE doc_id='zephyr-widget-fee'",
                                   lambda n: n == 1)
        cli = subprocess.Popen([sys.executable, "-m", "citewise.cli", "ingest", str(kb_copy), "--json"],
                               env=_env(pg_url, home_a), stdout=subprocess.DEVNULL)
        watcher.join(timeout=300)
        seen_b = _until(url_b, ZEPHYR_Q, lambda out: _cited(out, "zephyr-widget-fee"))
        assert cli.wait(timeout=300) == 0
        assert seen_b - committed[0] < 5.0, f"replica B took {seen_b - committed[0]:.1f}s"
        record_property("report:replica answers a new article (s after commit)", round(seen_b - committed[0], 2))
        assert _cited(_ask(url_a, ZEPHYR_Q), "zephyr-widget-fee")

        # 2. Deleted (file removed, ingest --prune through A): B stops citing it within 5 s.
        (kb_copy / "zephyr.md").unlink()
        watcher, committed = _when(pg_url, "SELECT count(*) FROM documents WHERE doc_id='zephyr-widget-fee'",
                                   lambda n: n == 0)
        cli = subprocess.Popen([sys.executable, "-m", "citewise.cli", "ingest", str(kb_copy), "--prune", "--json"],
                               env=_env(pg_url, home_a), stdout=subprocess.DEVNULL)
        watcher.join(timeout=300)
        gone_b = _until(url_b, ZEPHYR_Q, lambda out: not _cited(out, "zephyr-widget-fee"))
        assert cli.wait(timeout=300) == 0
        assert gone_b - committed[0] < 5.0, f"replica B took {gone_b - committed[0]:.1f}s"
        record_property("report:replica stops citing a deleted article (s after commit)",
                        round(gone_b - committed[0], 2))

        # 3. 200 questions to both replicas while every article is re-ingested (each commit a new generation).
        for path in sorted(kb_copy.rglob("*.md")):
            path.write_text(path.read_text() + "\nReviewed for the 2026 plan year.\n")
        questions = [q["question"] for q in load_questions(SETS["sample"].questions)]
        outcomes: list[dict[str, Any] | BaseException] = []
        started = threading.Event()

        def one(i: int) -> None:
            try:
                outcomes.append(_ask((url_a, url_b)[i % 2], questions[i % len(questions)]))
            except BaseException as exc:  # counted as an error
                outcomes.append(exc)
            if len(outcomes) >= 20:
                started.set()

        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = [pool.submit(one, i) for i in range(200)]
            started.wait(timeout=300)
            reingest = subprocess.run([sys.executable, "-m", "citewise.cli", "ingest", str(kb_copy), "--json"],
                                      env=_env(pg_url, home_a), capture_output=True, text=True, timeout=600)
            for f in futures:
                f.result()
        assert reingest.returncode == 0, reingest.stderr[-2000:]
    errors = [o for o in outcomes if isinstance(o, BaseException) or "__error__" in o or "decision" not in o]
    assert len(outcomes) == 200 and errors == []
    generations = [o["metadata"]["kb_generation"] for o in outcomes]  # type: ignore[index]
    assert all(isinstance(g, int) for g in generations)
    assert len(set(generations)) >= 2  # the questions did span the re-ingest
    record_property("report:questions during re-ingest (errors / generations seen)",
                    f"{len(errors)} / {len(set(generations))}")
    for log in (tmp_path / "a.log", tmp_path / "b.log"):
        assert STALE not in log.read_text(errors="replace")  # no run continued on another generation
