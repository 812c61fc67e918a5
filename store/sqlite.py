"""SQLite store of sources, documents and chunks (the embedded source of truth, one file per home), and
the query log.

Indexes (BM25, vectors, metadata columns) are derived from this file and can always be rebuilt
from it. A `generation` counter changes whenever content changes, so a process that cached the
indexes knows when to reload them. The query log (one row per answer, engine/querylog.py) and eval
runs live here too, so a home's questions and the knowledge they were answered from stay together.
The schema is versioned (`PRAGMA user_version`): migrations run in order when a store is opened, so
an older home is upgraded in place rather than rebuilt.

A file that is not a database, a corrupted page, a read-only or full disk, or a lock held past the
wait surface as `StoreError` naming the file and what to do (from any query, also mid-iteration),
never as sqlite3 exceptions: the caller of `citewise reindex` on a damaged store needs to know which
file and what next.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..kb.chunker import Chunk
from .base import Since, check_limit, log_ids, prepare_record, query_limit, query_log_row, to_epoch


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def _adopt_v3(conn: sqlite3.Connection) -> None:
    """Bring any older home to one schema, whichever citewise created it:

    - chunks gain `position` (JSON, '{}' for rows written before positions existed);
    - a query log from before owners (`created_at` instead of `ts`, no `owner`) is rebuilt in the
      current shape, every row kept in its order: `ts` from `created_at`, the owner from the record's
      `identity`, and the record's `time` set as the log now writes it.
    """
    if "position" not in _columns(conn, "chunks"):
        conn.execute("ALTER TABLE chunks ADD COLUMN position TEXT NOT NULL DEFAULT '{}'")
    columns = _columns(conn, "query_log")
    if "ts" not in columns:
        conn.execute("CREATE TABLE query_log_v3 (id TEXT PRIMARY KEY, ts REAL NOT NULL, owner TEXT NOT NULL "
                     "DEFAULT '', decision TEXT, record TEXT NOT NULL)")
        for rid, created, decision, text in conn.execute(
                "SELECT id, created_at, decision, record FROM query_log ORDER BY created_at, rowid").fetchall():
            record = json.loads(text)
            _, owner, _, row = query_log_row({**record, "time": created})
            conn.execute("INSERT INTO query_log_v3(id, ts, owner, decision, record) VALUES(?,?,?,?,?)",
                         (rid, float(created), owner, decision, json.dumps(row, default=str, ensure_ascii=False)))
        conn.execute("DROP TABLE query_log")
        conn.execute("ALTER TABLE query_log_v3 RENAME TO query_log")
    elif "owner" not in columns:
        conn.execute("ALTER TABLE query_log ADD COLUMN owner TEXT NOT NULL DEFAULT ''")
        conn.execute("UPDATE query_log SET owner = coalesce(json_extract(record, '$.identity'), '')")
    conn.execute("CREATE INDEX IF NOT EXISTS query_log_ts ON query_log(ts)")
    conn.execute("CREATE INDEX IF NOT EXISTS query_log_owner_ts ON query_log(owner, ts)")


# Each migration runs once, in order, in one transaction with the version bump: SQL text, or a function
# of the transaction's connection when what it does depends on what an older home holds. Version 1 is
# the schema homes had before versioning (IF NOT EXISTS: such a home is adopted as it is).
Migration = tuple[int, str, "str | Callable[[sqlite3.Connection], None]"]
MIGRATIONS: list[Migration] = [(1, "documents, chunks, synonyms, sources, meta", """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources (
    path TEXT PRIMARY KEY, hash TEXT NOT NULL, size INTEGER, mtime REAL, ingested_at REAL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY, source TEXT NOT NULL, title TEXT NOT NULL, metadata TEXT NOT NULL,
    content_hash TEXT NOT NULL, structured INTEGER NOT NULL, fields TEXT NOT NULL,
    guardrails TEXT NOT NULL, ingested_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS documents_source ON documents(source);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY, doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL, section TEXT NOT NULL, chunk_type TEXT NOT NULL, tier TEXT NOT NULL,
    text TEXT NOT NULL, tokens INTEGER NOT NULL, metadata TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE TABLE IF NOT EXISTS synonyms (source TEXT PRIMARY KEY, data TEXT NOT NULL);
"""), (2, "query log and eval runs", """
CREATE TABLE IF NOT EXISTS query_log (
    id TEXT PRIMARY KEY, ts REAL NOT NULL, owner TEXT NOT NULL DEFAULT '', decision TEXT, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS query_log_ts ON query_log(ts);
CREATE INDEX IF NOT EXISTS query_log_owner_ts ON query_log(owner, ts);
CREATE TABLE IF NOT EXISTS eval_runs (id TEXT PRIMARY KEY, created_at REAL NOT NULL, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS eval_runs_created ON eval_runs(created_at);
"""), (3, "chunk positions; the query log's owner and epoch time in every home", _adopt_v3)]
CHUNK_COLUMNS = ("c.chunk_id, c.doc_id, c.ordinal, c.section, c.chunk_type, c.tier, c.text, c.tokens, c.metadata, "
                 "c.position, d.title")
DB_NAME = "citewise.db"


# Primary SQLite result codes that mean "this file cannot serve as the store" (sqlite3.h).
_SQLITE_MESSAGES = {
    11: "is corrupted (SQLite reports a malformed database image)",  # SQLITE_CORRUPT
    26: "is not a SQLite database (corrupted or overwritten)",  # SQLITE_NOTADB
    8: "is read-only for this process",  # SQLITE_READONLY
    14: "cannot be opened (check the directory's permissions)",  # SQLITE_CANTOPEN
    3: "cannot be accessed (permission denied)",  # SQLITE_PERM
    10: "could not be read or written (disk I/O error)",  # SQLITE_IOERR
    13: "cannot be written: the disk is full",  # SQLITE_FULL
    5: "is locked by another process for longer than the 30 s wait",  # SQLITE_BUSY
}


def store_error(path: Path, exc: sqlite3.Error) -> StoreError | None:
    """The user-facing error for a SQLite failure that is about the file, else None (a bug: let it surface)."""
    code = getattr(exc, "sqlite_errorcode", None)
    what = _SQLITE_MESSAGES.get(code & 0xFF) if isinstance(code, int) else None
    if what is None:
        return None
    home = path.parent
    if code & 0xFF in (11, 26):
        advice = (f"run `citewise doctor --home {home}` to check it; if it cannot be repaired, move the file aside "
                  f"(nothing was deleted) and re-ingest your sources with `citewise ingest PATH --home {home}`")
    elif code & 0xFF == 5:
        advice = "retry when the other ingest has finished"
    else:
        advice = "fix the file's or directory's permissions or free disk space, then retry"
    return StoreError(f"{path} {what}: {advice}")


class _GuardedCursor(sqlite3.Cursor):
    """A cursor whose SQLite failures about the file become StoreError, also while rows are fetched."""

    def _guard(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except sqlite3.Error as exc:
            err = store_error(self.connection.store_path, exc)  # type: ignore[attr-defined]
            if err is None:
                raise
            raise err from None

    def execute(self, sql: str, parameters: Any = ()) -> _GuardedCursor:
        return self._guard(super().execute, sql, parameters)

    def executemany(self, sql: str, seq: Any) -> _GuardedCursor:
        return self._guard(super().executemany, sql, seq)

    def executescript(self, script: str) -> _GuardedCursor:
        return self._guard(super().executescript, script)

    def fetchone(self) -> Any:
        return self._guard(super().fetchone)

    def fetchall(self) -> list[Any]:
        return self._guard(super().fetchall)

    def __next__(self) -> Any:
        return self._guard(super().__next__)


class _GuardedConnection(sqlite3.Connection):
    store_path: Path

    def execute(self, sql: str, parameters: Any = ()) -> _GuardedCursor:  # type: ignore[override]
        return self.cursor(_GuardedCursor).execute(sql, parameters)

    def executemany(self, sql: str, seq: Any) -> _GuardedCursor:  # type: ignore[override]
        return self.cursor(_GuardedCursor).executemany(sql, seq)

    def executescript(self, script: str) -> _GuardedCursor:  # type: ignore[override]
        return self.cursor(_GuardedCursor).executescript(script)


def check_home(home: Path, *, write: bool) -> None:
    """A home must be a directory (created when missing, for writers) this process can use: the SQLite
    store's file lives there, and with either store the index snapshots do."""
    if home.exists() and not home.is_dir():
        raise StoreError(f"the knowledge-base home {home} is a file, not a directory: pass a directory to --home")
    if not home.exists():
        if not write:
            return
        try:
            home.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the knowledge-base home {home}: {exc.strerror}") from None
    if write and not os.access(home, os.W_OK | os.X_OK):
        raise StoreError(f"the knowledge-base home {home} is not writable by this user: choose another --home "
                         "or fix its permissions")


class Store:
    """Thread-safe access (one connection per thread) to `<home>/citewise.db`."""

    kind = "sqlite"

    def __init__(self, home: Path):
        self.home = Path(home)
        self.path = self.home / DB_NAME
        self._local = threading.local()
        check_home(self.home, write=not self.path.is_file())
        self._migrate()

    @classmethod
    def exists(cls, home: Path) -> bool:
        return (Path(home) / DB_NAME).is_file()

    def _migrate(self) -> None:
        """Apply the migrations this file lacks; BEGIN IMMEDIATE makes two processes apply each once."""
        conn = self.conn()
        if conn.execute("PRAGMA user_version").fetchone()[0] >= MIGRATIONS[-1][0]:
            return
        conn.execute("PRAGMA journal_mode=WAL")  # persistent, and not allowed inside a transaction
        with self.transaction() as tx:
            version = tx.execute("PRAGMA user_version").fetchone()[0]
            for number, _name, step in MIGRATIONS:
                if number > version:
                    if callable(step):
                        step(tx)
                    else:
                        for statement in filter(str.strip, step.split(";")):
                            tx.execute(statement)
                    tx.execute(f"PRAGMA user_version={number}")
            if tx.execute("SELECT 1 FROM meta WHERE key='store_id'").fetchone() is None:
                self.set_meta(tx, "store_id", uuid.uuid4().hex)

    def schema_version(self) -> int:
        return int(self.conn().execute("PRAGMA user_version").fetchone()[0])

    def store_id(self) -> str:
        """Names this knowledge base, so a snapshot built from another store is never taken for its own."""
        return self.get_meta("store_id") or ""

    def watch(self, callback: Callable[[int], None]) -> bool:
        """No push notifications: one home's processes share its index directory and check per question."""
        return False

    def checkpoint(self) -> None:
        """Fold the write-ahead log into citewise.db (an ingest does when it ends): the file alone then
        holds the whole store, so a copy or backup of it loses nothing, and damage to it is seen at once
        instead of hidden behind newer copies of its pages in the log. Waits at most 2 s for readers
        (under load the log is folded in by a later ingest, or by SQLite's own checkpoints)."""
        conn = self.conn()
        conn.execute("PRAGMA busy_timeout=2000")
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            conn.execute("PRAGMA busy_timeout=30000")

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, factory=_GuardedConnection)
            except sqlite3.Error as exc:
                err = store_error(self.path, exc)
                if err is None:
                    raise
                raise err from None
            conn.store_path = self.path
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.row_factory = sqlite3.Row
            self._local.conn = conn
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        conn = self.conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every read inside it sees the same committed state (WAL snapshot)."""
        conn = self.conn()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    # --- meta ---------------------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn().execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, conn: sqlite3.Connection, key: str, value: str) -> None:
        conn.execute("INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                     (key, value))

    def generation(self) -> int:
        return int(self.get_meta("generation", "0") or 0)

    def bump_generation(self, conn: sqlite3.Connection) -> int:
        """The next generation, returned. A new store starts at the current time in microseconds, not at 1: an
        index left beside a store that was deleted and re-created must never match the new store's generation."""
        current = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        generation = int(current[0]) + 1 if current else time.time_ns() // 1000
        self.set_meta(conn, "generation", str(generation))
        return generation

    # --- sources ------------------------------------------------------------------------------
    def source_hash(self, path: str) -> str | None:
        row = self.conn().execute("SELECT hash FROM sources WHERE path=?", (path,)).fetchone()
        return row[0] if row else None

    def record_source(self, conn: sqlite3.Connection, path: str, digest: str, size: int, mtime: float) -> None:
        conn.execute("INSERT INTO sources(path, hash, size, mtime, ingested_at) VALUES(?,?,?,?,?) "
                     "ON CONFLICT(path) DO UPDATE SET hash=excluded.hash, size=excluded.size, "
                     "mtime=excluded.mtime, ingested_at=excluded.ingested_at",
                     (path, digest, size, mtime, time.time()))

    def sources(self) -> list[str]:
        return [r[0] for r in self.conn().execute("SELECT path FROM sources ORDER BY path")]

    def forget_source(self, conn: sqlite3.Connection, path: str) -> int:
        removed = conn.execute("DELETE FROM documents WHERE source=?", (path,)).rowcount
        conn.execute("DELETE FROM sources WHERE path=?", (path,))
        return removed

    # --- documents and chunks -------------------------------------------------------------------
    def document_hashes(self, source: str) -> dict[str, str]:
        rows = self.conn().execute("SELECT doc_id, content_hash FROM documents WHERE source=?", (source,))
        return {r[0]: r[1] for r in rows}

    def document_source(self, doc_id: str) -> str | None:
        row = self.conn().execute("SELECT source FROM documents WHERE doc_id=?", (doc_id,)).fetchone()
        return row[0] if row else None

    def put_document(self, conn: sqlite3.Connection, *, doc_id: str, source: str, title: str,
                     metadata: dict[str, Any], content_hash: str, structured: bool,
                     fields: list[dict[str, Any]], guardrails: dict[str, Any], chunks: list[Chunk]) -> None:
        """Replace a document and all its chunks atomically (within the caller's transaction)."""
        conn.execute("DELETE FROM documents WHERE doc_id=?", (doc_id,))
        conn.execute(
            "INSERT INTO documents(doc_id, source, title, metadata, content_hash, structured, fields, guardrails, "
            "ingested_at) VALUES(?,?,?,?,?,?,?,?,?)",
            (doc_id, source, title, json.dumps(metadata, sort_keys=True), content_hash, int(structured),
             json.dumps(fields), json.dumps(guardrails), time.time()))
        conn.executemany(
            "INSERT INTO chunks(chunk_id, doc_id, ordinal, section, chunk_type, tier, text, tokens, metadata, "
            "position) VALUES(?,?,?,?,?,?,?,?,?,?)",
            [(c.chunk_id, c.doc_id, c.ordinal, c.section, c.chunk_type, c.tier, c.text, c.tokens,
              json.dumps(c.metadata, sort_keys=True), json.dumps(getattr(c, "position", None) or {}, sort_keys=True))
             for c in chunks])

    def delete_documents(self, conn: sqlite3.Connection, doc_ids: Iterable[str]) -> int:
        ids = list(doc_ids)
        conn.executemany("DELETE FROM documents WHERE doc_id=?", [(d,) for d in ids])
        return len(ids)

    def count(self) -> tuple[int, int]:
        docs = self.conn().execute("SELECT COUNT(*) FROM documents").fetchone()[0]
        chunks = self.conn().execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        return int(docs), int(chunks)

    def iter_chunks(self) -> Iterator[sqlite3.Row]:
        """All chunks in a stable order (the row order of the derived indexes)."""
        yield from self.conn().execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks c JOIN documents d USING(doc_id) ORDER BY c.doc_id, c.ordinal")

    def chunks_by_id(self, chunk_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            marks = ",".join("?" * len(part))
            for r in self.conn().execute(
                    f"SELECT {CHUNK_COLUMNS} FROM chunks c JOIN documents d USING(doc_id) "
                    f"WHERE c.chunk_id IN ({marks})", part):
                out[r["chunk_id"]] = _chunk_row(r)
        return out

    def chunks_of(self, doc_id: str) -> list[dict[str, Any]]:
        rows = self.conn().execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks c JOIN documents d USING(doc_id) WHERE c.doc_id=? ORDER BY c.ordinal",
            (doc_id,))
        return [_chunk_row(r) for r in rows]

    def document(self, doc_id: str) -> dict[str, Any] | None:
        r = self.conn().execute("SELECT * FROM documents WHERE doc_id=?", (doc_id,)).fetchone()
        if r is None:
            return None
        return {"doc_id": r["doc_id"], "source": r["source"], "title": r["title"],
                "metadata": json.loads(r["metadata"]), "structured": bool(r["structured"]),
                "fields": json.loads(r["fields"]), "guardrails": json.loads(r["guardrails"])}

    def documents(self) -> Iterator[dict[str, Any]]:
        for r in self.conn().execute("SELECT doc_id, title, metadata, structured, fields, guardrails FROM documents"):
            yield {"doc_id": r["doc_id"], "title": r["title"], "metadata": json.loads(r["metadata"]),
                   "structured": bool(r["structured"]), "fields": json.loads(r["fields"]),
                   "guardrails": json.loads(r["guardrails"])}

    # --- health (citewise doctor) ---------------------------------------------------------------
    def check_integrity(self) -> list[str]:
        """SQLite's own checks: page and index structure (integrity_check), then dangling references
        (foreign_key_check); empty when the file is sound."""
        conn = self.conn()
        problems = [str(r[0]) for r in conn.execute("PRAGMA integrity_check") if r[0] != "ok"]
        problems += [f"{r[0]} row {r[1]} refers to a missing row of {r[2]}"
                     for r in conn.execute("PRAGMA foreign_key_check")]
        return problems

    def repair(self) -> list[str]:
        """What can be repaired in place without losing content: indexes rebuilt from their tables
        (REINDEX), chunks whose document is gone (never reachable: every read joins documents) removed."""
        done: list[str] = []
        conn = self.conn()
        conn.execute("REINDEX")
        done.append("rebuilt the SQLite indexes (REINDEX)")
        with self.transaction() as tx:  # orphans were never indexed (reads join documents): no new generation
            orphans = tx.execute("DELETE FROM chunks WHERE doc_id NOT IN (SELECT doc_id FROM documents)").rowcount
        if orphans:
            done.append(f"removed {orphans} chunk(s) whose document no longer exists")
        return done

    # --- synonyms -----------------------------------------------------------------------------
    def put_synonyms(self, conn: sqlite3.Connection, source: str, data: dict[str, list[str]]) -> None:
        conn.execute("INSERT INTO synonyms(source, data) VALUES(?, ?) ON CONFLICT(source) DO UPDATE SET "
                     "data=excluded.data", (source, json.dumps(data, sort_keys=True)))

    def synonyms(self) -> dict[str, list[str]]:
        merged: dict[str, list[str]] = {}
        for (data,) in self.conn().execute("SELECT data FROM synonyms ORDER BY source"):
            for key, values in json.loads(data).items():
                merged[key] = list(dict.fromkeys(merged.get(key, []) + values))
        return merged

    def synonym_sources(self) -> list[str]:
        return [r[0] for r in self.conn().execute("SELECT source FROM synonyms")]

    def delete_synonyms(self, conn: sqlite3.Connection, source: str) -> None:
        conn.execute("DELETE FROM synonyms WHERE source=?", (source,))

    # --- query log ----------------------------------------------------------------------------
    def log_query(self, record: dict[str, Any]) -> str:
        """Store one answer's record; returns its id (the record's own, or a new one if absent or taken).

        `time` may be epoch seconds or ISO-8601; it is stored as both (epoch for ordering, ISO in the
        record). Rows belong to `record["identity"]` (the owner that GET /v1/queries filters on).
        """
        ts, owner, decision, row = query_log_row(record)
        for candidate in log_ids(row):
            row["id"] = candidate
            text = json.dumps(row, default=str, ensure_ascii=False)
            cur = self.conn().execute(
                "INSERT OR IGNORE INTO query_log(id, ts, owner, decision, record) VALUES(?,?,?,?,?)",
                (candidate, ts, owner, decision, text))
            if cur.rowcount:
                return candidate
        raise RuntimeError("could not store a query-log row")  # two uuid4 collisions: not reachable

    def queries(self, since: Since = None, decision: str | None = None, limit: int = 100, *,
                owner: str | None = None) -> list[dict[str, Any]]:
        """Query-log records, newest first: from `since` on, of one `decision`, of one `owner` (None: all)."""
        sql, args = "SELECT record FROM query_log WHERE 1=1", []
        if since is not None:
            sql += " AND ts >= ?"
            args.append(to_epoch(since))
        if decision is not None:
            sql += " AND decision = ?"
            args.append(decision)
        if owner is not None:
            sql += " AND owner = ?"
            args.append(owner)
        sql += " ORDER BY ts DESC, rowid DESC LIMIT ?"
        args.append(query_limit(limit))
        return [json.loads(r[0]) for r in self.conn().execute(sql, args)]

    def query(self, id: str) -> dict[str, Any] | None:
        row = self.conn().execute("SELECT record FROM query_log WHERE id=?", (id,)).fetchone()
        return json.loads(row[0]) if row else None

    def prune_queries(self, before: float | str | datetime) -> int:
        """Delete query-log rows older than `before` (the retention setting); returns how many."""
        return self.conn().execute("DELETE FROM query_log WHERE ts < ?", (to_epoch(before),)).rowcount

    # --- eval runs ----------------------------------------------------------------------------
    def put_eval_run(self, run: dict[str, Any]) -> str:
        rid, created, stored = prepare_record(run, "eval run")
        with self.transaction() as conn:
            conn.execute("INSERT INTO eval_runs(id, created_at, record) VALUES(?,?,?) ON CONFLICT(id) DO UPDATE SET "
                         "created_at=excluded.created_at, record=excluded.record", (rid, created, json.dumps(stored)))
        return rid

    def eval_runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """Stored eval runs, newest first."""
        rows = self.conn().execute("SELECT record FROM eval_runs ORDER BY created_at DESC, id LIMIT ?",
                                   (check_limit(limit),))
        return [json.loads(r[0]) for r in rows]

    def eval_run(self, id: str) -> dict[str, Any] | None:
        row = self.conn().execute("SELECT record FROM eval_runs WHERE id=?", (id,)).fetchone()
        return json.loads(row[0]) if row else None


def _chunk_row(r: sqlite3.Row) -> dict[str, Any]:
    return {"chunk_id": r["chunk_id"], "doc_id": r["doc_id"], "ordinal": r["ordinal"], "section": r["section"],
            "chunk_type": r["chunk_type"], "tier": r["tier"], "text": r["text"], "tokens": r["tokens"],
            "metadata": json.loads(r["metadata"]), "title": r["title"], "position": json.loads(r["position"] or "{}")}
