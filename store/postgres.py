"""PostgreSQL store: the source of truth that every replica shares (psycopg 3, one pool per URL).

The tables mirror the SQLite store's (documents, chunks, synonyms, sources, meta) plus the query
log, eval runs and the CLI/API thread settings. JSON columns of the content tables are `json`, not
`jsonb`: `json` keeps the text byte for byte, so a snapshot built from PostgreSQL is the one SQLite
would give; the logs and the chunks' source positions are `jsonb`, which can be queried and indexed
(a position is handed to the snapshot build as JSON text with sorted keys, as SQLite stores it).

Concurrency (two machines ingesting at once): every document write takes a transaction-scoped
advisory lock on the document id before its delete-and-insert, and the generation row is updated
last. Primary keys alone would make an overlapping ingest fail with a unique violation (plain
insert) or merge two versions' chunk lists (upsert); the lock makes the second writer wait for the
first to commit and then replace the whole document, so each document is always one version and
never duplicated. Locks that cover several documents are taken in sorted order (no deadlock), and a
transaction-scoped lock is released by the server when its session dies (kill -9 leaves none).

Replicas learn of changes without polling the tables: `bump_generation` sends `NOTIFY
citewise_generation '<store id>:<generation>'` in the same transaction, delivered on commit, and
`watch()` runs one listener thread per process (with a slow poll as a safety net after reconnects).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from ..errors import StoreError
from ..kb.chunker import Chunk
from . import redact
from .base import Since, check_limit, log_ids, prepare_record, query_limit, query_log_row, to_epoch
from .sqlite import check_home

log = logging.getLogger("citewise.store")

CHANNEL = "citewise_generation"
POOL_MAX = 10  # a server's worker threads share these; index builds hold one for their read
CONNECT_TIMEOUT = 10  # seconds, for the first connection (a clear error beats a hanging start)
WAIT_TIMEOUT = 5.0  # seconds a call waits for a pooled connection (the server down must not hang questions)
POLL_SECONDS = 5.0  # the listener's safety-net poll (notifications normally arrive within milliseconds)

# (version, name, SQL). Each runs once, in order, with its row in `citewise_schema`, in one transaction.
MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "documents, chunks, synonyms, sources, meta", """
CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE sources (path text PRIMARY KEY, hash text NOT NULL, size bigint, mtime double precision,
                      ingested_at double precision);
CREATE TABLE documents (doc_id text PRIMARY KEY, source text NOT NULL, title text NOT NULL, metadata json NOT NULL,
                        content_hash text NOT NULL, structured boolean NOT NULL, fields json NOT NULL,
                        guardrails json NOT NULL, ingested_at double precision NOT NULL);
CREATE INDEX documents_source ON documents(source);
CREATE TABLE chunks (chunk_id text PRIMARY KEY,
                     doc_id text NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
                     ordinal integer NOT NULL, section text NOT NULL, chunk_type text NOT NULL, tier text NOT NULL,
                     text text NOT NULL, tokens integer NOT NULL, metadata json NOT NULL);
CREATE INDEX chunks_doc ON chunks(doc_id, ordinal);
CREATE TABLE synonyms (source text PRIMARY KEY, data json NOT NULL);
INSERT INTO meta(key, value) VALUES ('generation', '0'), ('store_id', md5(random()::text || clock_timestamp()::text))
"""),
    (2, "query log and eval runs", """
CREATE TABLE query_log (id text PRIMARY KEY, created_at double precision NOT NULL, decision text,
                        record jsonb NOT NULL);
CREATE INDEX query_log_created ON query_log(created_at);
CREATE INDEX query_log_decision ON query_log(decision, created_at);
CREATE TABLE eval_runs (id text PRIMARY KEY, created_at double precision NOT NULL, record jsonb NOT NULL);
CREATE INDEX eval_runs_created ON eval_runs(created_at)
"""),
    (3, "settings of the CLI's and Python API's threads", """
CREATE TABLE citewise_threads (thread_id text PRIMARY KEY, settings jsonb NOT NULL)
"""),
    # The query log as the SQLite store keeps it (engine/querylog.py): epoch `ts`, the `owner` GET
    # /v1/queries filters on, the record's `time` in ISO-8601; `seq` orders rows of one instant.
    (4, "chunk positions; the query log's owner and epoch time", """
ALTER TABLE chunks ADD COLUMN position jsonb NOT NULL DEFAULT '{}';
ALTER TABLE query_log RENAME COLUMN created_at TO ts;
ALTER TABLE query_log ADD COLUMN owner text NOT NULL DEFAULT '';
ALTER TABLE query_log ADD COLUMN seq bigserial;
UPDATE query_log SET owner = coalesce(record->>'identity', ''),
    record = record || jsonb_build_object('id', id, 'time',
        to_char(to_timestamp(ts) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"'));
DROP INDEX query_log_created;
DROP INDEX query_log_decision;
CREATE INDEX query_log_ts ON query_log(ts);
CREATE INDEX query_log_owner_ts ON query_log(owner, ts);
CREATE INDEX query_log_decision ON query_log(decision, ts)
"""),
]

_CHUNK_COLUMNS = ("c.chunk_id, c.doc_id, c.ordinal, c.section, c.chunk_type, c.tier, c.text, c.tokens, "
                  "c.metadata::text AS metadata, c.position, d.title")
_POOLS: dict[str, ConnectionPool] = {}
_IDS: dict[str, str] = {}
_WATCHERS: dict[str, _Watcher] = {}
_POOLS_LOCK = threading.Lock()


def pool_for(url: str) -> ConnectionPool:
    """The process's pool for a database URL, opened (and the schema migrated) on first use."""
    with _POOLS_LOCK:
        pool = _POOLS.get(url)
        if pool is None:
            _check_connect(url)
            pool = ConnectionPool(url, min_size=1, max_size=POOL_MAX, kwargs={"autocommit": True},
                                  timeout=WAIT_TIMEOUT, open=False, name="citewise")
            try:
                pool.open(wait=True, timeout=CONNECT_TIMEOUT)
            except PoolTimeout:
                pool.close()
                raise StoreError(f"cannot open a connection pool to {redact(url)}") from None
            try:
                migrate(pool)
            except BaseException:
                pool.close()
                raise
            _POOLS[url] = pool
        return pool


@atexit.register
def close_pools() -> None:
    """Close every pool and listener of this process (at exit, and in tests that drop their schema)."""
    with _POOLS_LOCK:
        pools, watchers = list(_POOLS.values()), list(_WATCHERS.values())
        _POOLS.clear()
        _IDS.clear()
        _WATCHERS.clear()
    for watcher in watchers:
        watcher.stop()
    for pool in pools:
        pool.close(timeout=2)


def _check_connect(url: str) -> None:
    """One direct connection first: the pool would only say it timed out, libpq says why."""
    try:
        psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT, autocommit=True).close()
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise StoreError(f"cannot connect to PostgreSQL at {redact(url)}: {reason}") from None


def migrate(pool: ConnectionPool) -> int:
    """Apply missing migrations under an advisory lock (replicas starting together apply each once).

    An up-to-date schema is only read, so replicas whose role may not create tables still start.
    """
    latest = MIGRATIONS[-1][0]
    with pool.connection() as conn:
        if conn.execute("SELECT to_regclass('citewise_schema')").fetchone()[0] is not None:
            row = conn.execute("SELECT max(version) FROM citewise_schema").fetchone()
            if row[0] is not None and row[0] >= latest:
                return int(row[0])
    with pool.connection() as conn, conn.transaction():
        schema = conn.execute("SELECT current_schema()").fetchone()[0]
        if schema is None:
            raise StoreError("the database URL's search_path names no existing schema: create it first "
                             "(CREATE SCHEMA ...) or fix options=-csearch_path=...")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key(f"citewise:migrate:{schema}"),))
        conn.execute("CREATE TABLE IF NOT EXISTS citewise_schema (version integer PRIMARY KEY, name text NOT NULL, "
                     "applied_at timestamptz NOT NULL DEFAULT now())")
        done = {r[0] for r in conn.execute("SELECT version FROM citewise_schema")}
        for number, name, script in MIGRATIONS:
            if number in done:
                continue
            for statement in filter(str.strip, script.split(";")):
                conn.execute(statement)
            conn.execute("INSERT INTO citewise_schema(version, name) VALUES (%s, %s)", (number, name))
            log.info("citewise: applied schema migration %d (%s) in schema %s", number, name, schema)
        return max(done | {n for n, _, _ in MIGRATIONS})


def advisory_key(text: str) -> int:
    """A stable signed 64-bit advisory-lock key (the same on every machine)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big", signed=True)


class PostgresStore:
    """The store interface over PostgreSQL; `home` only holds this process's derived index snapshots."""

    kind = "postgresql"

    def __init__(self, home: Path, url: str):
        self.home = Path(home)
        self.url = url
        self.location = redact(url)
        check_home(self.home, write=True)  # this replica's snapshots live there
        self._pool = pool_for(url)
        self._local = threading.local()  # the connection of this thread's open transaction, if any

    # --- connections and transactions ---------------------------------------------------------
    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection]:
        """This thread's transaction connection when inside one, else a pooled one for the call."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
            return
        try:
            with self._pool.connection() as pooled:
                yield pooled
        except PoolTimeout:
            raise StoreError(f"no database connection available from {self.location} (pool exhausted or "
                             "server unreachable)") from None
        except psycopg.Error as exc:
            err = store_error(self.location, exc)
            if err is None:
                raise
            raise err from None

    def _rows(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        with self._conn() as conn:
            return conn.execute(sql, params).fetchall()

    def _one(self, sql: str, params: Any = None) -> tuple[Any, ...] | None:
        with self._conn() as conn:
            return conn.execute(sql, params).fetchone()

    @contextmanager
    def _bound(self, conn: psycopg.Connection) -> Iterator[psycopg.Connection]:
        previous = getattr(self._local, "conn", None)
        self._local.conn = conn
        try:
            yield conn
        finally:
            self._local.conn = previous

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        """A read-write transaction (READ COMMITTED; the advisory locks do the serialising)."""
        with self._conn() as conn, conn.transaction(), self._bound(conn):
            yield conn

    @contextmanager
    def reading(self) -> Iterator[psycopg.Connection]:
        """One consistent read: REPEATABLE READ, so every read inside sees the same committed state."""
        with self._conn() as conn, conn.transaction(), self._bound(conn):
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn

    def close(self) -> None:
        """Pools are per process and per URL, shared by every store object: nothing to release here."""

    def checkpoint(self) -> None:
        """Every commit is durable in the server: nothing to fold in."""

    def store_id(self) -> str:
        return _IDS.get(self.url) or _IDS.setdefault(self.url, self.get_meta("store_id") or "")

    def schema_version(self) -> int:
        row = self._one("SELECT max(version) FROM citewise_schema")
        return int(row[0]) if row and row[0] is not None else 0

    # --- meta and generation --------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self._one("SELECT value FROM meta WHERE key=%s", (key,))
        return row[0] if row else default

    def set_meta(self, conn: psycopg.Connection, key: str, value: str) -> None:
        conn.execute("INSERT INTO meta(key, value) VALUES(%s, %s) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                     (key, value))

    def generation(self) -> int:
        return int(self.get_meta("generation", "0") or 0)

    def bump_generation(self, conn: psycopg.Connection) -> int:
        """Next generation, and a notification that replicas receive when this transaction commits.

        A new store (generation 0) starts at the current time in microseconds, as the SQLite store does:
        a replica's index left from a database that was dropped and re-created never matches it."""
        row = conn.execute("UPDATE meta SET value = (CASE WHEN value::bigint = 0 THEN %s ELSE value::bigint + 1 END)"
                           "::text WHERE key='generation' RETURNING value", (time.time_ns() // 1000,)).fetchone()
        conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{self.store_id()}:{row[0]}"))
        return int(row[0])

    def watch(self, callback: Callable[[int], None]) -> bool:
        """Call `callback(generation)` from a listener thread whenever the generation changes."""
        with _POOLS_LOCK:
            watcher = _WATCHERS.get(self.url)
            if watcher is None:
                watcher = _WATCHERS[self.url] = _Watcher(self.url, self.store_id())
                watcher.start()
        watcher.add(callback)
        return True

    # --- locks ----------------------------------------------------------------------------------
    def _lock_documents(self, conn: psycopg.Connection, doc_ids: Iterable[str]) -> None:
        keys = sorted({advisory_key(f"{self.store_id()}:doc:{d}") for d in doc_ids})
        if keys:
            conn.execute("SELECT pg_advisory_xact_lock(k) FROM unnest(%s::bigint[]) AS k ORDER BY k", (keys,))

    # --- sources ------------------------------------------------------------------------------
    def source_hash(self, path: str) -> str | None:
        row = self._one("SELECT hash FROM sources WHERE path=%s", (path,))
        return row[0] if row else None

    def record_source(self, conn: psycopg.Connection, path: str, digest: str, size: int, mtime: float) -> None:
        conn.execute("INSERT INTO sources(path, hash, size, mtime, ingested_at) VALUES(%s,%s,%s,%s,%s) "
                     "ON CONFLICT(path) DO UPDATE SET hash=excluded.hash, size=excluded.size, "
                     "mtime=excluded.mtime, ingested_at=excluded.ingested_at",
                     (path, digest, size, mtime, time.time()))

    def sources(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT path FROM sources ORDER BY path")]

    def forget_source(self, conn: psycopg.Connection, path: str) -> int:
        ids = [r[0] for r in conn.execute("SELECT doc_id FROM documents WHERE source=%s", (path,))]
        self._lock_documents(conn, ids)
        removed = conn.execute("DELETE FROM documents WHERE source=%s", (path,)).rowcount
        conn.execute("DELETE FROM sources WHERE path=%s", (path,))
        return removed

    # --- documents and chunks -------------------------------------------------------------------
    def document_hashes(self, source: str) -> dict[str, str]:
        return {r[0]: r[1] for r in self._rows("SELECT doc_id, content_hash FROM documents WHERE source=%s",
                                               (source,))}

    def document_source(self, doc_id: str) -> str | None:
        row = self._one("SELECT source FROM documents WHERE doc_id=%s", (doc_id,))
        return row[0] if row else None

    def put_document(self, conn: psycopg.Connection, *, doc_id: str, source: str, title: str,
                     metadata: dict[str, Any], content_hash: str, structured: bool,
                     fields: list[dict[str, Any]], guardrails: dict[str, Any], chunks: list[Chunk]) -> None:
        """Replace a document and all its chunks (within the caller's transaction, under the document's lock)."""
        self._lock_documents(conn, [doc_id])
        conn.execute("DELETE FROM documents WHERE doc_id=%s", (doc_id,))
        conn.execute(
            "INSERT INTO documents(doc_id, source, title, metadata, content_hash, structured, fields, guardrails, "
            "ingested_at) VALUES(%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            (doc_id, source, title, json.dumps(metadata, sort_keys=True), content_hash, bool(structured),
             json.dumps(fields), json.dumps(guardrails), time.time()))
        if chunks:
            with conn.cursor() as cur, cur.copy(
                    "COPY chunks(chunk_id, doc_id, ordinal, section, chunk_type, tier, text, tokens, metadata, "
                    "position) FROM STDIN") as copy:
                for c in chunks:
                    copy.write_row((c.chunk_id, c.doc_id, c.ordinal, c.section, c.chunk_type, c.tier, c.text,
                                    c.tokens, json.dumps(c.metadata, sort_keys=True),
                                    json.dumps(getattr(c, "position", None) or {}, sort_keys=True)))

    def delete_documents(self, conn: psycopg.Connection, doc_ids: Iterable[str]) -> int:
        ids = list(doc_ids)
        self._lock_documents(conn, ids)
        if ids:
            conn.execute("DELETE FROM documents WHERE doc_id = ANY(%s)", (ids,))
        return len(ids)

    def count(self) -> tuple[int, int]:
        row = self._one("SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM chunks)")
        return int(row[0]), int(row[1])

    def iter_chunks(self) -> Iterator[dict[str, Any]]:
        """All chunks in a stable order (the row order of the derived indexes), streamed from a server cursor."""
        with self._conn() as conn:
            if conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS:
                yield from self._stream(conn)
            else:
                with conn.transaction():
                    yield from self._stream(conn)

    def _stream(self, conn: psycopg.Connection) -> Iterator[dict[str, Any]]:
        with conn.cursor(name=f"citewise_chunks_{threading.get_ident()}", row_factory=dict_row) as cur:
            cur.itersize = 2000
            cur.execute(f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN documents d USING(doc_id) "
                        "ORDER BY c.doc_id COLLATE \"C\", c.ordinal")
            for r in cur:  # the position as the SQLite store gives it: JSON text, sorted keys
                yield {**r, "position": json.dumps(r["position"] or {}, sort_keys=True)}

    def chunks_by_id(self, chunk_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return {}
        with self._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
            cur.execute(f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN documents d USING(doc_id) "
                        "WHERE c.chunk_id = ANY(%s)", (ids,))
            return {r["chunk_id"]: _chunk_row(r) for r in cur}

    def chunks_of(self, doc_id: str) -> list[dict[str, Any]]:
        with self._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
            cur.execute(f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN documents d USING(doc_id) WHERE c.doc_id=%s "
                        "ORDER BY c.ordinal", (doc_id,))
            return [_chunk_row(r) for r in cur]

    def document(self, doc_id: str) -> dict[str, Any] | None:
        with self._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
            r = cur.execute("SELECT doc_id, source, title, metadata, structured, fields, guardrails FROM documents "
                            "WHERE doc_id=%s", (doc_id,)).fetchone()
        return dict(r) if r else None

    def documents(self) -> Iterator[dict[str, Any]]:
        with self._conn() as conn, conn.cursor(row_factory=dict_row) as cur:
            cur.execute("SELECT doc_id, title, metadata, structured, fields, guardrails FROM documents "
                        "ORDER BY doc_id COLLATE \"C\"")
            rows = cur.fetchall()
        yield from rows

    # --- synonyms -----------------------------------------------------------------------------
    def put_synonyms(self, conn: psycopg.Connection, source: str, data: dict[str, list[str]]) -> None:
        conn.execute("INSERT INTO synonyms(source, data) VALUES(%s, %s) ON CONFLICT(source) DO UPDATE SET "
                     "data=excluded.data", (source, json.dumps(data, sort_keys=True)))

    def synonyms(self) -> dict[str, list[str]]:
        merged: dict[str, list[str]] = {}
        for (data,) in self._rows("SELECT data FROM synonyms ORDER BY source COLLATE \"C\""):
            for key, values in data.items():
                merged[key] = list(dict.fromkeys(merged.get(key, []) + values))
        return merged

    def synonym_sources(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT source FROM synonyms")]

    def delete_synonyms(self, conn: psycopg.Connection, source: str) -> None:
        conn.execute("DELETE FROM synonyms WHERE source=%s", (source,))

    # --- query log ----------------------------------------------------------------------------
    def log_query(self, record: dict[str, Any]) -> str:
        """Store one answer's record; returns its id (the record's own, or a new one if absent or taken).

        The same semantics as the SQLite store: `time` (epoch or ISO-8601) is kept as epoch `ts` and as
        ISO text in the record, and the row belongs to `record["identity"]`.
        """
        ts, owner, decision, row = query_log_row(record)
        for candidate in log_ids(row):
            row["id"] = candidate
            text = json.dumps(_no_nul(json.loads(json.dumps(row, default=str))), ensure_ascii=False)
            with self._conn() as conn:
                cur = conn.execute("INSERT INTO query_log(id, ts, owner, decision, record) VALUES(%s,%s,%s,%s,%s) "
                                   "ON CONFLICT(id) DO NOTHING",
                                   (_no_nul(candidate), ts, _no_nul(owner), _no_nul(decision), text))
            if cur.rowcount:
                return candidate
        raise RuntimeError("could not store a query-log row")  # two uuid4 collisions: not reachable

    def queries(self, since: Since = None, decision: str | None = None, limit: int = 100, *,
                owner: str | None = None) -> list[dict[str, Any]]:
        """Query-log records, newest first: from `since` on, of one `decision`, of one `owner` (None: all)."""
        sql, args = "SELECT record FROM query_log WHERE true", []
        if since is not None:
            sql, args = sql + " AND ts >= %s", [*args, to_epoch(since)]
        if decision is not None:
            sql, args = sql + " AND decision = %s", [*args, _no_nul(decision)]
        if owner is not None:
            sql, args = sql + " AND owner = %s", [*args, _no_nul(owner)]
        rows = self._rows(sql + " ORDER BY ts DESC, seq DESC LIMIT %s", [*args, query_limit(limit)])
        return [r[0] for r in rows]

    def query(self, id: str) -> dict[str, Any] | None:
        row = self._one("SELECT record FROM query_log WHERE id=%s", (_no_nul(id),))
        return row[0] if row else None

    def prune_queries(self, before: float | str | datetime) -> int:
        """Delete query-log rows older than `before` (the retention setting); returns how many."""
        with self._conn() as conn:
            return conn.execute("DELETE FROM query_log WHERE ts < %s", (to_epoch(before),)).rowcount

    # --- eval runs ----------------------------------------------------------------------------
    def put_eval_run(self, run: dict[str, Any]) -> str:
        rid, created, stored = prepare_record(run, "eval run")
        with self._conn() as conn:
            conn.execute("INSERT INTO eval_runs(id, created_at, record) VALUES(%s,%s,%s) ON CONFLICT(id) DO UPDATE "
                         "SET created_at=excluded.created_at, record=excluded.record",
                         (rid, created, json.dumps(stored)))
        return rid

    def eval_runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """Stored eval runs, newest first."""
        rows = self._rows("SELECT record FROM eval_runs ORDER BY created_at DESC, id LIMIT %s", (check_limit(limit),))
        return [r[0] for r in rows]

    def eval_run(self, id: str) -> dict[str, Any] | None:
        row = self._one("SELECT record FROM eval_runs WHERE id=%s", (id,))
        return row[0] if row else None

    # --- health (citewise doctor) ---------------------------------------------------------------
    def check_integrity(self) -> list[str]:
        """What can be checked of a shared database without a superuser: the schema is the one this
        citewise expects, the generation and store id are set, and the counts agree (no chunk without its
        document, no document position held twice). Page-level checks are the server's own (amcheck,
        data checksums), not citewise's."""
        problems: list[str] = []
        latest = MIGRATIONS[-1][0]
        version = self.schema_version()
        if version != latest:
            problems.append(f"schema version {version}, this citewise expects {latest}")
        generation = self.get_meta("generation")
        if generation is None or not generation.lstrip("-").isdigit():
            problems.append(f"meta.generation is {generation!r}, not a number")
        if not self.get_meta("store_id"):
            problems.append("meta.store_id is missing")
        row = self._one(
            "SELECT (SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.doc_id = "
            "c.doc_id)), (SELECT count(*) FROM (SELECT 1 FROM chunks GROUP BY doc_id, ordinal HAVING count(*) > 1) x)")
        orphans, doubled = (int(v) for v in row) if row else (0, 0)
        if orphans:
            problems.append(f"{orphans} chunk(s) refer to a missing document")
        if doubled:
            problems.append(f"{doubled} (document, ordinal) pair(s) are held by more than one chunk")
        return problems

    def repair(self) -> list[str]:
        """What can be repaired in the database without losing content: chunks whose document is gone
        removed (never reachable: every read joins documents). Missing migrations are applied whenever a
        process opens the database; a replica's index is rebuilt by `citewise doctor --repair`'s index check."""
        with self.transaction() as conn:
            orphans = conn.execute("DELETE FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM documents d "
                                   "WHERE d.doc_id = c.doc_id)").rowcount
        return [f"removed {orphans} chunk(s) whose document no longer exists"] if orphans else []

    # --- thread settings (api.py) -----------------------------------------------------------------
    def thread_settings(self, thread_id: str) -> dict[str, Any]:
        row = self._one("SELECT settings FROM citewise_threads WHERE thread_id=%s", (thread_id,))
        return row[0] if row else {}

    def put_thread_settings(self, thread_id: str, settings: dict[str, Any]) -> None:
        with self._conn() as conn:
            conn.execute("INSERT INTO citewise_threads(thread_id, settings) VALUES(%s, %s) ON CONFLICT(thread_id) "
                         "DO UPDATE SET settings=excluded.settings", (thread_id, json.dumps(settings, default=str)))


def store_error(location: str, exc: psycopg.Error) -> StoreError | None:
    """The user-facing error for a PostgreSQL failure that is about the database (unreachable, the server
    shutting down, a full disk, a read-only server or role, a missing privilege), else None: an error
    about one statement or row is a bug, and surfaces as one."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return StoreError(f"database {location} is read-only for this connection ({reason}): point "
                          "CITEWISE_DATABASE_URL at the primary, or use a role that may write")
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return StoreError(f"database {location}: the role lacks a privilege ({reason}): grant it, or use the "
                          "role that owns citewise's tables")
    if isinstance(exc, psycopg.OperationalError):  # connection lost, admin shutdown, disk full, too many clients
        return StoreError(f"database {location}: {reason}")
    return None


def _chunk_row(r: dict[str, Any]) -> dict[str, Any]:
    return {**r, "metadata": json.loads(r["metadata"]), "position": r["position"] or {}}


def _no_nul(value: Any) -> Any:
    """PostgreSQL text and jsonb cannot hold U+0000 (SQLite can): it becomes U+FFFD in the log."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {_no_nul(k): _no_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_nul(v) for v in value]
    return value


class _Watcher(threading.Thread):
    """One LISTEN connection per process and URL; calls back with each new generation of its store."""

    def __init__(self, url: str, store_id: str):
        super().__init__(name="citewise-generation-listener", daemon=True)
        self.url, self.store_id = url, store_id
        self._callbacks: list[Callable[[int], None]] = []
        self._lock = threading.Lock()
        self._seen = -1
        self._stopped = threading.Event()

    def stop(self) -> None:
        """Ends the thread (and its connection) within one poll interval."""
        self._stopped.set()

    def add(self, callback: Callable[[int], None]) -> None:
        with self._lock:
            self._callbacks.append(callback)

    def _dispatch(self, generation: int) -> None:
        if generation == self._seen:
            return
        self._seen = generation
        with self._lock:
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback(generation)
            except Exception:  # a listener must never die of one callback
                log.exception("citewise: generation callback failed")

    def run(self) -> None:
        backoff = 0.5
        while not self._stopped.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    backoff = 0.5
                    while not self._stopped.is_set():  # a poll first: changes made while (re)connecting
                        row = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
                        self._dispatch(int(row[0]) if row else 0)
                        for note in conn.notifies(timeout=POLL_SECONDS):
                            store_id, _, generation = note.payload.partition(":")
                            if store_id == self.store_id and generation.isdigit():
                                self._dispatch(int(generation))
            except Exception as exc:  # the server restarted or the network dropped: reconnect
                if self._stopped.is_set():
                    return
                log.warning("citewise: generation listener lost %s (%s); reconnecting", redact(self.url), exc)
                self._stopped.wait(backoff)
                backoff = min(backoff * 2, 30.0)

