"""SQLite store of sources, documents and chunks (the source of truth), and the query log.

Indexes (BM25, vectors, metadata columns) are derived from this file and can always be rebuilt
from it. A `generation` counter changes whenever content changes, so a process that cached the
indexes knows when to reload them. The query log (one row per answer, engine/querylog.py) lives
here too, so a home's questions and the knowledge they were answered from stay together.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
    text TEXT NOT NULL, tokens INTEGER NOT NULL, metadata TEXT NOT NULL, position TEXT NOT NULL DEFAULT '{}');
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE TABLE IF NOT EXISTS synonyms (source TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS query_log (
    id TEXT PRIMARY KEY, ts REAL NOT NULL, owner TEXT NOT NULL DEFAULT '', decision TEXT, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS query_log_ts ON query_log(ts);
CREATE INDEX IF NOT EXISTS query_log_owner_ts ON query_log(owner, ts);
"""
# Columns added after a table was first released: (table, column, declaration). A store created by an
# older citewise gets them on open (ALTER TABLE ... ADD COLUMN, so existing rows keep their data and
# read the default); a newer one already has them from SCHEMA.
ADDED_COLUMNS = (
    # where a chunk came from: ordinal, offsets, page(s)/slide(s)/heading path/time range, tags (JSON)
    ("chunks", "position", "TEXT NOT NULL DEFAULT '{}'"),
)
CHUNK_COLUMNS = ("c.chunk_id, c.doc_id, c.ordinal, c.section, c.chunk_type, c.tier, c.text, c.tokens, c.metadata, "
                 "c.position, d.title")
DB_NAME = "citewise.db"


class Store:
    """Thread-safe access (one connection per thread) to `<home>/citewise.db`."""

    def __init__(self, home: Path):
        self.home = Path(home)
        self.path = self.home / DB_NAME
        self._local = threading.local()
        self.home.mkdir(parents=True, exist_ok=True)
        self.conn().executescript(SCHEMA)  # executescript manages its own transaction
        self._migrate()

    def _migrate(self) -> None:
        """Add the columns an older store lacks. Idempotent, and safe with concurrent openers: the check
        runs inside an immediate transaction, so two processes cannot both add the same column."""
        conn = self.conn()
        missing = [(t, c, d) for t, c, d in ADDED_COLUMNS
                   if c not in {r[1] for r in conn.execute(f"PRAGMA table_info({t})")}]
        if not missing:
            return
        with self.transaction() as tx:
            for table, column, declaration in missing:
                if column not in {r[1] for r in tx.execute(f"PRAGMA table_info({table})")}:
                    tx.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")

    @classmethod
    def exists(cls, home: Path) -> bool:
        return (Path(home) / DB_NAME).is_file()

    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
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
        current = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        self.set_meta(conn, "generation", str(int(current[0]) + 1 if current else 1))

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
        row = dict(record)
        ts = _epoch(row.get("time")) if row.get("time") is not None else time.time()
        row["time"] = datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")
        wanted = str(row.get("id") or "") or uuid.uuid4().hex
        for candidate in (wanted, uuid.uuid4().hex):
            row["id"] = candidate
            text = json.dumps(row, default=str, ensure_ascii=False)
            cur = self.conn().execute(
                "INSERT OR IGNORE INTO query_log(id, ts, owner, decision, record) VALUES(?,?,?,?,?)",
                (candidate, ts, str(row.get("identity") or ""), row.get("decision"), text))
            if cur.rowcount:
                return candidate
        raise RuntimeError("could not store a query-log row")  # two uuid4 collisions: not reachable

    def queries(self, since: float | str | datetime | None = None, decision: str | None = None,
                limit: int = 100, *, owner: str | None = None) -> list[dict[str, Any]]:
        """Query-log records, newest first: from `since` on, of one `decision`, of one `owner` (None: all)."""
        sql, args = "SELECT record FROM query_log WHERE 1=1", []
        if since is not None:
            sql += " AND ts >= ?"
            args.append(_epoch(since))
        if decision is not None:
            sql += " AND decision = ?"
            args.append(decision)
        if owner is not None:
            sql += " AND owner = ?"
            args.append(owner)
        sql += " ORDER BY ts DESC, rowid DESC LIMIT ?"
        args.append(max(0, int(limit)))
        return [json.loads(r[0]) for r in self.conn().execute(sql, args)]

    def query(self, id: str) -> dict[str, Any] | None:
        row = self.conn().execute("SELECT record FROM query_log WHERE id=?", (id,)).fetchone()
        return json.loads(row[0]) if row else None

    def prune_queries(self, before: float | str | datetime) -> int:
        """Delete query-log rows older than `before` (the retention setting); returns how many."""
        return self.conn().execute("DELETE FROM query_log WHERE ts < ?", (_epoch(before),)).rowcount


def _epoch(value: float | int | str | datetime) -> float:
    """Epoch seconds from epoch seconds, an ISO-8601 string (naive means UTC) or a datetime."""
    if isinstance(value, bool):
        raise ValueError("a time must be epoch seconds, ISO-8601 text or a datetime")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    raise ValueError("a time must be epoch seconds, ISO-8601 text or a datetime")

def _chunk_row(r: sqlite3.Row) -> dict[str, Any]:
    return {"chunk_id": r["chunk_id"], "doc_id": r["doc_id"], "ordinal": r["ordinal"], "section": r["section"],
            "chunk_type": r["chunk_type"], "tier": r["tier"], "text": r["text"], "tokens": r["tokens"],
            "metadata": json.loads(r["metadata"]), "title": r["title"], "position": json.loads(r["position"] or "{}")}
