"""SQLite store of sources, documents and chunks (the source of truth).

Indexes (BM25, vectors, metadata columns) are derived from this file and can always be rebuilt
from it. A `generation` counter changes whenever content changes, so a process that cached the
indexes knows when to reload them.

A file that is not a database, a corrupted page, a read-only or full disk surface as `StoreError`
naming the file and what to do (from any query, also mid-iteration), never as sqlite3 exceptions:
the caller of `citewise reindex` on a damaged store needs to know which file and what next.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..kb.chunker import Chunk

SCHEMA = """
PRAGMA journal_mode=WAL;
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
"""
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
    """A home must be a directory (created when missing, for writers) this process can use."""
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

    def __init__(self, home: Path):
        self.home = Path(home)
        self.path = self.home / DB_NAME
        self._local = threading.local()
        check_home(self.home, write=not self.path.is_file())
        self.conn().executescript(SCHEMA)  # executescript manages its own transaction

    @classmethod
    def exists(cls, home: Path) -> bool:
        return (Path(home) / DB_NAME).is_file()

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

    def bump_generation(self, conn: sqlite3.Connection) -> None:
        """The next generation. A new store starts at the current time in microseconds, not at 1: an index
        left beside a store that was deleted and re-created must never match the new store's generation."""
        current = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        self.set_meta(conn, "generation", str(int(current[0]) + 1 if current else time.time_ns() // 1000))

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
            "INSERT INTO chunks(chunk_id, doc_id, ordinal, section, chunk_type, tier, text, tokens, metadata) "
            "VALUES(?,?,?,?,?,?,?,?,?)",
            [(c.chunk_id, c.doc_id, c.ordinal, c.section, c.chunk_type, c.tier, c.text, c.tokens,
              json.dumps(c.metadata, sort_keys=True)) for c in chunks])

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
            "SELECT c.chunk_id, c.doc_id, c.ordinal, c.section, c.chunk_type, c.tier, c.text, c.tokens, "
            "c.metadata, d.title FROM chunks c JOIN documents d USING(doc_id) ORDER BY c.doc_id, c.ordinal")

    def chunks_by_id(self, chunk_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            marks = ",".join("?" * len(part))
            for r in self.conn().execute(
                    f"SELECT c.chunk_id, c.doc_id, c.ordinal, c.section, c.chunk_type, c.tier, c.text, c.tokens, "
                    f"c.metadata, d.title FROM chunks c JOIN documents d USING(doc_id) WHERE c.chunk_id IN ({marks})",
                    part):
                out[r["chunk_id"]] = _chunk_row(r)
        return out

    def chunks_of(self, doc_id: str) -> list[dict[str, Any]]:
        rows = self.conn().execute(
            "SELECT c.chunk_id, c.doc_id, c.ordinal, c.section, c.chunk_type, c.tier, c.text, c.tokens, c.metadata, "
            "d.title FROM chunks c JOIN documents d USING(doc_id) WHERE c.doc_id=? ORDER BY c.ordinal", (doc_id,))
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


def _chunk_row(r: sqlite3.Row) -> dict[str, Any]:
    return {"chunk_id": r["chunk_id"], "doc_id": r["doc_id"], "ordinal": r["ordinal"], "section": r["section"],
            "chunk_type": r["chunk_type"], "tier": r["tier"], "text": r["text"], "tokens": r["tokens"],
            "metadata": json.loads(r["metadata"]), "title": r["title"]}
