"""The store interface, on SQLite and on PostgreSQL alike (every test here runs on both)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from citewise.errors import ConfigError, InputError, StoreError
from citewise.kb.chunker import Chunk
from citewise.store import Store, open_store, redact, store_exists
from citewise.store import sqlite as sqlite_store
from tests.paths import SAMPLE_KB


def _chunk(doc_id: str, ordinal: int, text: str, **metadata: object) -> Chunk:
    return Chunk(chunk_id=f"{doc_id}#{ordinal}", doc_id=doc_id, ordinal=ordinal, section="Overview",
                 chunk_type="overview", tier="medium", text=text, tokens=len(text.split()),
                 metadata={"record_keeper": "Acme", **metadata})


def _put(store: Store, doc_id: str, texts: list[str], source: str = "/kb/a.md") -> None:
    with store.transaction() as conn:
        store.put_document(conn, doc_id=doc_id, source=source, title=doc_id.title(), metadata={"topic": "loan"},
                           content_hash=f"h-{doc_id}-{len(texts)}", structured=True,
                           fields=[{"key": "date_of_birth"}], guardrails={"never": ["x"]},
                           chunks=[_chunk(doc_id, i, t, z=1, a=[1, 2]) for i, t in enumerate(texts)])
        store.bump_generation(conn)


def test_open_store_picks_the_store_and_migrates(tmp_path: Path, database_url: str) -> None:
    store = open_store(tmp_path, database_url)
    assert store.kind == ("postgresql" if database_url else "sqlite")
    assert isinstance(store, Store)  # the Protocol, checked at run time
    assert store.schema_version() >= 2 and store.generation() == 0 and store.count() == (0, 0)
    again = open_store(tmp_path, database_url)  # migrations are idempotent
    assert again.schema_version() == store.schema_version() and again.store_id() == store.store_id() != ""
    assert store_exists(tmp_path, database_url)


def test_documents_chunks_and_generation(tmp_path: Path, database_url: str) -> None:
    store = open_store(tmp_path, database_url)
    started = time.time_ns() // 1000
    _put(store, "b-doc", ["beta one", "beta two"])
    first = store.generation()  # a new store starts at the time in microseconds, then counts up by one
    assert started <= first <= time.time_ns() // 1000
    _put(store, "a-doc", ["alpha"], source="/kb/b.md")
    assert store.generation() == first + 1 and store.count() == (2, 3)
    rows = list(store.iter_chunks())
    assert [(r["doc_id"], r["ordinal"]) for r in rows] == [("a-doc", 0), ("b-doc", 0), ("b-doc", 1)]
    assert isinstance(rows[0]["metadata"], str)  # JSON text: the snapshot build parses it
    assert json.loads(rows[0]["metadata"]) == {"a": [1, 2], "record_keeper": "Acme", "z": 1}
    assert rows[0]["title"] == "A-Doc"
    got = store.chunks_by_id(["b-doc#1", "missing", "a-doc#0"])
    assert set(got) == {"b-doc#1", "a-doc#0"} and got["b-doc#1"]["text"] == "beta two"
    assert got["b-doc#1"]["metadata"]["z"] == 1
    assert [c["text"] for c in store.chunks_of("b-doc")] == ["beta one", "beta two"]
    doc = store.document("a-doc")
    assert doc == {"doc_id": "a-doc", "source": "/kb/b.md", "title": "A-Doc", "metadata": {"topic": "loan"},
                   "structured": True, "fields": [{"key": "date_of_birth"}], "guardrails": {"never": ["x"]}}
    assert store.document("nope") is None
    assert sorted(d["doc_id"] for d in store.documents()) == ["a-doc", "b-doc"]
    assert store.document_hashes("/kb/a.md") == {"b-doc": "h-b-doc-2"} and store.document_source("a-doc") == "/kb/b.md"

    _put(store, "b-doc", ["beta only"])  # a rewrite replaces every chunk of the document
    assert store.count() == (2, 2) and [c["text"] for c in store.chunks_of("b-doc")] == ["beta only"]
    with store.transaction() as conn:
        assert store.delete_documents(conn, ["a-doc"]) == 1
        store.bump_generation(conn)
    assert store.count() == (1, 1) and store.generation() == first + 3


def test_a_failed_transaction_leaves_nothing(tmp_path: Path, database_url: str) -> None:
    store = open_store(tmp_path, database_url)
    with pytest.raises(RuntimeError), store.transaction() as conn:
        store.put_document(conn, doc_id="d", source="/s", title="T", metadata={}, content_hash="h", structured=False,
                           fields=[], guardrails={}, chunks=[_chunk("d", 0, "text")])
        store.bump_generation(conn)
        raise RuntimeError("boom")
    assert store.count() == (0, 0) and store.generation() == 0


def test_sources_synonyms_and_meta(tmp_path: Path, database_url: str) -> None:
    store = open_store(tmp_path, database_url)
    _put(store, "d1", ["one"], source="/kb/x.md")
    with store.transaction() as conn:
        store.record_source(conn, "/kb/x.md", "abc", 10, 1.5)
        store.put_synonyms(conn, "/kb/synonyms.yaml", {"401k": ["401(k)"], "rmd": ["required minimum distribution"]})
        store.put_synonyms(conn, "/other/synonyms.yaml", {"401k": ["retirement plan", "401(k)"]})
        store.set_meta(conn, "parser_version", "7")
    assert store.source_hash("/kb/x.md") == "abc" and store.sources() == ["/kb/x.md"]
    assert store.synonyms() == {"401k": ["401(k)", "retirement plan"], "rmd": ["required minimum distribution"]}
    assert sorted(store.synonym_sources()) == ["/kb/synonyms.yaml", "/other/synonyms.yaml"]
    assert store.get_meta("parser_version") == "7" and store.get_meta("absent", "dflt") == "dflt"
    with store.transaction() as conn:
        assert store.forget_source(conn, "/kb/x.md") == 1
        store.delete_synonyms(conn, "/other/synonyms.yaml")
    assert store.sources() == [] and store.count() == (0, 0) and list(store.synonyms()) == ["401k", "rmd"]


def test_reading_sees_one_state(tmp_path: Path, database_url: str) -> None:
    store = open_store(tmp_path, database_url)
    _put(store, "d1", ["one"])
    seen: list[int] = []
    with store.reading():
        before = store.generation()
        writer = threading.Thread(target=_put, args=(open_store(tmp_path, database_url), "d2", ["two"]))
        writer.start()
        writer.join(timeout=30)
        seen = [store.generation(), len(list(store.iter_chunks())), store.count()[0]]
    assert seen == [before, 1, 1]  # the write committed meanwhile, and this read did not see it
    assert store.generation() == before + 1 and store.count() == (2, 2)


def test_query_log_and_eval_runs(tmp_path: Path, database_url: str) -> None:
    """The query log's semantics (engine/querylog.py, GET /v1/queries) are the same on both stores."""
    store = open_store(tmp_path, database_url)
    now = time.time()
    first = store.log_query({"id": "q1", "time": now - 3600, "identity": "alice", "decision": "can_proceed",
                             "question": "a", "x": {"y": [1]}})
    second = store.log_query({"time": now - 60, "identity": "bob", "decision": "out_of_scope", "question": "b"})
    third = store.log_query({"id": "q1", "time": now, "identity": "alice", "decision": "can_proceed", "question": "c"})
    fourth = store.log_query({"time": "1970-01-01T00:25:00Z", "question": "old\x00one"})  # ISO in, NUL kept apart
    assert first == "q1" and second and third not in ("q1", second)  # a taken id gets a fresh one
    got = store.query("q1")
    assert got is not None and got["question"] == "a" and got["x"] == {"y": [1]} and got["id"] == "q1"
    assert got["time"].endswith("+00:00") and abs(datetime.fromisoformat(got["time"]).timestamp() - (now - 3600)) < 1e-3
    assert store.query(fourth)["time"] == "1970-01-01T00:25:00.000+00:00"
    assert store.query("missing") is None
    assert [q["question"] for q in store.queries()][:3] == ["c", "b", "a"]  # newest first
    assert [q["question"] for q in store.queries(decision="can_proceed")] == ["c", "a"]
    assert [q["question"] for q in store.queries(since=now - 120)] == ["c", "b"]
    assert [q["question"] for q in store.queries(since="1970-01-01T00:00:00Z", limit=1)] == ["c"]
    assert [q["question"] for q in store.queries(since=datetime.fromtimestamp(now - 120, UTC))] == ["c", "b"]
    assert [q["question"] for q in store.queries(owner="bob")] == ["b"]
    assert [q["question"] for q in store.queries(owner="")] == [store.query(fourth)["question"]]
    assert store.queries(limit=0) == []
    tied = [store.log_query({"time": now + 10, "question": f"t{i}"}) for i in range(3)]
    assert [q["id"] for q in store.queries(limit=3)] == tied[::-1]  # one instant: the last written first
    assert store.prune_queries(now - 600) == 2 and store.query("q1") is None and store.query(fourth) is None
    assert store.query(second) is not None

    run_id = store.put_eval_run({"set": "sample", "split": "test", "pass_rate": 0.9, "rows": [{"id": "a"}]})
    store.put_eval_run({"set": "sample", "pass_rate": 0.8, "created_at": 1.0})
    assert [r["pass_rate"] for r in store.eval_runs(limit=5)] == [0.9, 0.8]
    assert store.eval_run(run_id)["rows"] == [{"id": "a"}] and store.eval_run("nope") is None
    assert store.generation() == 0  # logs are not content

    with pytest.raises(InputError, match="JSON"):
        store.put_eval_run({"when": object()})
    with pytest.raises(InputError, match="dict"):
        store.put_eval_run(["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="limit"):
        store.eval_runs(limit=0)
    with pytest.raises(ValueError):
        store.queries(since="yesterday")


def test_ingest_gives_the_same_rows_on_both_stores(tmp_path: Path, pg_url: str) -> None:
    from citewise.config import Context
    from citewise.kb.ingest import ingest

    sq = ingest([SAMPLE_KB], tmp_path / "sqlite", progress=False)
    pg = ingest([SAMPLE_KB], tmp_path / "pg", context=Context(database_url=pg_url), progress=False)
    assert (sq["documents_total"], sq["chunks_total"]) == (pg["documents_total"], pg["chunks_total"])
    a, b = open_store(tmp_path / "sqlite", ""), open_store(tmp_path / "pg", pg_url)
    rows_a, rows_b = [dict(r) for r in a.iter_chunks()], [dict(r) for r in b.iter_chunks()]
    # Each store's first generation is the time it was first written (in microseconds): the generations
    # a chunk's position records (indexVersion) agree counted from there.
    first_a, first_b = _first_generation(rows_a), _first_generation(rows_b)
    assert _relative(rows_a, first_a) == _relative(rows_b, first_b)  # byte-identical JSON too
    assert a.synonyms() == b.synonyms() and a.generation() - first_a == b.generation() - first_b
    assert sorted(a.documents(), key=lambda d: d["doc_id"]) == sorted(b.documents(), key=lambda d: d["doc_id"])


def _first_generation(rows: list[dict]) -> int:
    return min(json.loads(r["position"])["indexVersion"] for r in rows)


def _relative(rows: list[dict], first: int) -> list[dict]:
    """The rows with each position's indexVersion counted from the store's first generation (JSON text
    rebuilt as the stores write it: sorted keys)."""
    out = []
    for row in rows:
        position = json.loads(row["position"])
        position["indexVersion"] -= first
        out.append({**row, "position": json.dumps(position, sort_keys=True)})
    return out


def test_a_new_store_starts_its_generation_at_the_time_in_microseconds(tmp_path: Path, database_url: str) -> None:
    """An index left beside a store that was deleted and re-created can never match the new store's generation."""
    store = open_store(tmp_path, database_url)
    assert store.generation() == 0
    started = time.time_ns() // 1000
    with store.transaction() as conn:
        created = store.bump_generation(conn)
        assert store.bump_generation(conn) == created + 1
    assert started <= created <= time.time_ns() // 1000 and store.generation() == created + 1


def test_a_home_from_before_migrations_is_adopted(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / sqlite_store.DB_NAME)
    conn.executescript(sqlite_store.MIGRATIONS[0][2])  # the schema homes had, at user_version 0
    conn.execute("INSERT INTO meta VALUES ('generation', '5')")
    conn.commit()
    conn.close()
    store = open_store(tmp_path, "")
    assert store.schema_version() == sqlite_store.MIGRATIONS[-1][0] and store.generation() == 5
    assert store.log_query({"question": "q"}) and store.store_id()


# --- homes and databases created by earlier versions keep their rows ------------------------------------
MAIN_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sources (path TEXT PRIMARY KEY, hash TEXT NOT NULL, size INTEGER, mtime REAL, ingested_at REAL);
CREATE TABLE documents (doc_id TEXT PRIMARY KEY, source TEXT NOT NULL, title TEXT NOT NULL, metadata TEXT NOT NULL,
    content_hash TEXT NOT NULL, structured INTEGER NOT NULL, fields TEXT NOT NULL, guardrails TEXT NOT NULL,
    ingested_at REAL NOT NULL);
CREATE INDEX documents_source ON documents(source);
CREATE TABLE chunks (chunk_id TEXT PRIMARY KEY, doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL, section TEXT NOT NULL, chunk_type TEXT NOT NULL, tier TEXT NOT NULL,
    text TEXT NOT NULL, tokens INTEGER NOT NULL, metadata TEXT NOT NULL, position TEXT NOT NULL DEFAULT '{}');
CREATE INDEX chunks_doc ON chunks(doc_id);
CREATE TABLE synonyms (source TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE query_log (
    id TEXT PRIMARY KEY, ts REAL NOT NULL, owner TEXT NOT NULL DEFAULT '', decision TEXT, record TEXT NOT NULL);
CREATE INDEX query_log_ts ON query_log(ts);
CREATE INDEX query_log_owner_ts ON query_log(owner, ts);
"""  # what a home written by the query-log release (unversioned, user_version 0) holds
FIRST_LOG_SCHEMA = """
CREATE TABLE query_log (id TEXT PRIMARY KEY, created_at REAL NOT NULL, decision TEXT, record TEXT NOT NULL);
CREATE INDEX query_log_created ON query_log(created_at);
CREATE TABLE eval_runs (id TEXT PRIMARY KEY, created_at REAL NOT NULL, record TEXT NOT NULL);
CREATE INDEX eval_runs_created ON eval_runs(created_at);
"""  # the first versioned schema's migration 2 (query log without owners)


def test_a_home_with_the_unversioned_query_log_is_adopted(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / sqlite_store.DB_NAME)
    conn.executescript(MAIN_SCHEMA)
    conn.execute("INSERT INTO meta VALUES ('generation', '3')")
    conn.execute("INSERT INTO documents VALUES ('d', 'd.pdf', 'D', '{}', 'h', 0, '[]', '{}', 0)")
    conn.execute("INSERT INTO chunks VALUES ('d#00', 'd', 0, '', 'content', 'medium', 'text', 1, '{}', "
                 "'{\"page\": 2}')")
    record = {"id": "r1", "time": "2026-05-01T12:00:00.000+00:00", "identity": "alice", "question": "q"}
    conn.execute("INSERT INTO query_log VALUES ('r1', ?, 'alice', 'can_proceed', ?)",
                 (datetime.fromisoformat(record["time"]).timestamp(), json.dumps(record)))
    conn.commit()
    conn.close()
    store = open_store(tmp_path, "")
    assert store.schema_version() == sqlite_store.MIGRATIONS[-1][0] and store.generation() == 3
    assert store.chunks_of("d")[0]["position"] == {"page": 2}
    assert store.queries(owner="alice") == [record] and store.query("r1") == record
    assert store.store_id() and store.put_eval_run({"pass_rate": 1.0})  # eval runs were added
    store.log_query({"time": time.time(), "identity": "bob", "question": "new"})
    assert [r["question"] for r in store.queries()] == ["new", "q"]


def test_a_home_with_the_first_versioned_query_log_keeps_its_rows(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / sqlite_store.DB_NAME)
    conn.executescript(sqlite_store.MIGRATIONS[0][2])  # chunks without positions
    conn.executescript(FIRST_LOG_SCHEMA)
    conn.execute("INSERT INTO meta VALUES ('generation', '1')")
    conn.execute("INSERT INTO documents VALUES ('d', 'd.md', 'D', '{}', 'h', 0, '[]', '{}', 0)")
    conn.execute("INSERT INTO chunks VALUES ('d#00', 'd', 0, '', 'content', 'medium', 'text', 1, '{}')")
    for rid, created, who in (("a", 1000.0, "alice"), ("b", 2000.0, None)):
        record = {"id": rid, "created_at": created, "question": rid, "decision": "can_proceed", "identity": who}
        conn.execute("INSERT INTO query_log VALUES (?, ?, 'can_proceed', ?)", (rid, created, json.dumps(record)))
    conn.execute("INSERT INTO eval_runs VALUES ('e', 5.0, '{\"id\": \"e\", \"created_at\": 5.0}')")
    conn.execute("PRAGMA user_version=2")
    conn.commit()
    conn.close()
    store = open_store(tmp_path, "")
    assert store.schema_version() == sqlite_store.MIGRATIONS[-1][0]
    assert store.chunks_of("d")[0]["position"] == {}
    assert [r["question"] for r in store.queries()] == ["b", "a"]
    assert [r["question"] for r in store.queries(owner="alice")] == ["a"]
    assert store.query("a")["time"] == "1970-01-01T00:16:40.000+00:00" and store.query("a")["created_at"] == 1000.0
    assert store.prune_queries(1500) == 1 and store.eval_run("e") == {"id": "e", "created_at": 5.0}
    columns = [r[1] for r in sqlite3.connect(tmp_path / sqlite_store.DB_NAME).execute("PRAGMA table_info(query_log)")]
    assert columns == ["id", "ts", "owner", "decision", "record"]


def test_a_postgres_database_of_the_first_schema_keeps_its_rows(tmp_path: Path, pg_url: str) -> None:
    from citewise.store import postgres

    with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
        conn.execute("CREATE TABLE citewise_schema (version integer PRIMARY KEY, name text NOT NULL, "
                     "applied_at timestamptz NOT NULL DEFAULT now())")
        for number, name, script in postgres.MIGRATIONS[:3]:
            for statement in filter(str.strip, script.split(";")):
                conn.execute(statement)
            conn.execute("INSERT INTO citewise_schema(version, name) VALUES (%s, %s)", (number, name))
        conn.execute("INSERT INTO documents VALUES ('d', 'd.md', 'D', '{}', 'h', false, '[]', '{}', 0)")
        conn.execute("INSERT INTO chunks VALUES ('d#00', 'd', 0, '', 'content', 'medium', 'text', 1, '{}')")
        for rid, created, who in (("a", 1000.0, "alice"), ("b", 2000.0, None)):
            record = {"id": rid, "created_at": created, "question": rid, "decision": "can_proceed", "identity": who}
            conn.execute("INSERT INTO query_log VALUES (%s, %s, 'can_proceed', %s)", (rid, created, json.dumps(record)))
    store = open_store(tmp_path, pg_url)
    assert store.schema_version() == postgres.MIGRATIONS[-1][0]
    assert store.chunks_of("d")[0]["position"] == {}
    assert [r["question"] for r in store.queries()] == ["b", "a"]
    assert [r["question"] for r in store.queries(owner="alice")] == ["a"]
    assert store.query("a")["time"] == "1970-01-01T00:16:40.000+00:00" and store.query("a")["created_at"] == 1000.0
    assert store.prune_queries(1500) == 1 and store.query("a") is None


def test_positions_round_trip_on_both_stores(tmp_path: Path, database_url: str) -> None:
    store = open_store(tmp_path, database_url)
    chunk = _chunk("p-doc", 0, "fee text")
    chunk.position = {"page": 2, "pages": [2], "heading_path": ["Loans", "Fees"], "start_time": 1.5, "tags": []}
    with store.transaction() as conn:
        store.put_document(conn, doc_id="p-doc", source="/kb/p.pdf", title="P", metadata={}, content_hash="h",
                           structured=False, fields=[], guardrails={}, chunks=[chunk])
        created = store.bump_generation(conn)
    assert created == store.generation() > 0  # bump_generation returns the generation its transaction creates
    assert store.chunks_of("p-doc")[0]["position"] == chunk.position
    assert store.chunks_by_id(["p-doc#0"])["p-doc#0"]["position"] == chunk.position
    row = next(iter(store.iter_chunks()))
    assert row["position"] == json.dumps(chunk.position, sort_keys=True)  # JSON text, as SQLite stores it


def test_database_url_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="postgresql://"):
        open_store(tmp_path, "mysql://x@localhost/db")
    with pytest.raises(StoreError, match=r"cannot connect to PostgreSQL at postgresql://u:\*\*\*@127\.0\.0\.1:9/db"):
        open_store(tmp_path, "postgresql://u:secret@127.0.0.1:9/db?connect_timeout=2")
    assert redact("postgresql://u:secret@h/db") == "postgresql://u:***@h/db"


def test_cli_reports_an_unreachable_database_in_one_line(tmp_path: Path) -> None:
    env = {"CITEWISE_DATABASE_URL": "postgresql://u:secret@127.0.0.1:9/db?connect_timeout=2", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "citewise.cli", "ingest", str(SAMPLE_KB), "--home", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "cannot connect to PostgreSQL" in out.stderr and "secret" not in out.stderr


def test_postgres_notifies_watchers_of_new_generations(tmp_path: Path, pg_url: str) -> None:
    store = open_store(tmp_path, pg_url)
    heard: list[int] = []
    assert store.watch(heard.append)
    deadline = time.monotonic() + 10
    while not heard and time.monotonic() < deadline:
        time.sleep(0.05)
    assert heard == [0]  # the listener's first poll
    _put(store, "d1", ["one"])
    created = store.generation()  # the first generation: the time in microseconds
    deadline = time.monotonic() + 5
    while heard[-1] != created and time.monotonic() < deadline:
        time.sleep(0.02)
    assert heard[-1] == created > 0
