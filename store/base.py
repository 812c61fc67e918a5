"""The store interface: what ingest, the index builder, the API and the evals need from a source of truth.

Two implementations: `sqlite.Store` (embedded, one file in the home, the default) and
`postgres.PostgresStore` (shared by every replica, chosen by `CITEWISE_DATABASE_URL`). Code outside
`store/` gets one from `open_store(home, database_url)` and relies on this protocol only, so the same
ingest and the same snapshot build run on either.

Conventions both keep:
- writes take the connection of a `transaction()` (one per document at ingest); content changes
  call `bump_generation(conn)` in that same transaction (it returns the generation the transaction
  creates), so a generation number always names one committed state;
- `reading()` is one consistent read: every read inside it, on this thread, sees the same state;
- `iter_chunks()` rows are mappings with the chunk columns, `title`, and `metadata` and `position`
  (where the chunk came from: page, slide, heading path, time range...) as JSON text (sorted keys);
  `chunks_by_id()` / `chunks_of()` give both parsed;
- the query log (engine/querylog.py) stores one record per answer: its `time` (epoch seconds or
  ISO-8601 in, ISO-8601 UTC out) is also kept as epoch seconds for ordering and retention, its rows
  belong to `record["identity"]` (the owner `queries(owner=...)` filters on), and a taken id gets a
  fresh one rather than overwriting another answer's row;
- eval runs take and return JSON-able dicts, each stored with an `id` and a `created_at` (seconds
  since the epoch);
- neither log changes the generation;
- a new store's first generation is the current time in microseconds (then +1 per change), so an
  index left from a deleted and re-created store never matches the new one's generation;
- faults of the store itself (damaged, locked, read-only or full; unreachable) raise `StoreError`
  naming the file or the redacted URL and what to do;
- `checkpoint()` makes what was committed complete in the store's own files (SQLite folds its
  write-ahead log into citewise.db; PostgreSQL has nothing to do): ingest calls it when it ends;
- `check_integrity()` lists problems of the store (empty: sound) and `repair()` fixes what it can
  without losing content, saying what it did (`citewise doctor`).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..errors import InputError
from ..kb.chunker import Chunk

Since = float | datetime | str | None  # epoch seconds, an aware/naive datetime, or ISO-8601 text


@runtime_checkable
class Store(Protocol):
    """A knowledge base's source of truth (documents, chunks, synonyms, sources, meta, logs)."""

    home: Path  # where this process keeps derived files (index snapshots) for this store
    kind: str  # "sqlite" or "postgresql"

    # --- connections and transactions ---------------------------------------------------------
    def transaction(self) -> AbstractContextManager[Any]: ...
    def reading(self) -> AbstractContextManager[Any]: ...
    def close(self) -> None: ...
    def checkpoint(self) -> None: ...
    def store_id(self) -> str: ...
    def schema_version(self) -> int: ...

    # --- meta and generation --------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None: ...
    def set_meta(self, conn: Any, key: str, value: str) -> None: ...
    def generation(self) -> int: ...
    def bump_generation(self, conn: Any) -> int: ...
    def watch(self, callback: Callable[[int], None]) -> bool: ...

    # --- sources --------------------------------------------------------------------------------
    def source_hash(self, path: str) -> str | None: ...
    def record_source(self, conn: Any, path: str, digest: str, size: int, mtime: float) -> None: ...
    def sources(self) -> list[str]: ...
    def forget_source(self, conn: Any, path: str) -> int: ...

    # --- documents and chunks -------------------------------------------------------------------
    def document_hashes(self, source: str) -> dict[str, str]: ...
    def document_source(self, doc_id: str) -> str | None: ...
    def put_document(self, conn: Any, *, doc_id: str, source: str, title: str, metadata: dict[str, Any],
                     content_hash: str, structured: bool, fields: list[dict[str, Any]],
                     guardrails: dict[str, Any], chunks: list[Chunk]) -> None: ...
    def delete_documents(self, conn: Any, doc_ids: Iterable[str]) -> int: ...
    def count(self) -> tuple[int, int]: ...
    def iter_chunks(self) -> Iterator[Mapping[str, Any]]: ...
    def chunks_by_id(self, chunk_ids: Iterable[str]) -> dict[str, dict[str, Any]]: ...
    def chunks_of(self, doc_id: str) -> list[dict[str, Any]]: ...
    def document(self, doc_id: str) -> dict[str, Any] | None: ...
    def documents(self) -> Iterator[dict[str, Any]]: ...

    # --- synonyms -------------------------------------------------------------------------------
    def put_synonyms(self, conn: Any, source: str, data: dict[str, list[str]]) -> None: ...
    def synonyms(self) -> dict[str, list[str]]: ...
    def synonym_sources(self) -> list[str]: ...
    def delete_synonyms(self, conn: Any, source: str) -> None: ...

    # --- query log and eval runs ----------------------------------------------------------------
    def log_query(self, record: dict[str, Any]) -> str: ...
    def queries(self, since: Since = None, decision: str | None = None, limit: int = 100, *,
                owner: str | None = None) -> list[dict[str, Any]]: ...
    def query(self, id: str) -> dict[str, Any] | None: ...
    def prune_queries(self, before: float | str | datetime) -> int: ...
    def put_eval_run(self, run: dict[str, Any]) -> str: ...
    def eval_runs(self, limit: int = 20) -> list[dict[str, Any]]: ...
    def eval_run(self, id: str) -> dict[str, Any] | None: ...

    # --- health (citewise doctor) ---------------------------------------------------------------
    def check_integrity(self) -> list[str]: ...
    def repair(self) -> list[str]: ...


# --- helpers both stores share (so a record means the same on either) --------------------------------
def prepare_record(record: Any, what: str) -> tuple[str, float, dict[str, Any]]:
    """Validate a log record; return its id, its creation time and the record as stored (with both)."""

    if not isinstance(record, dict):
        raise InputError(f"a {what} must be a JSON object (dict), got {type(record).__name__}")
    rid = record.get("id") or uuid.uuid4().hex
    if not isinstance(rid, str):
        raise InputError(f"a {what}'s id must be a string")
    created = record.get("created_at", time.time())
    if isinstance(created, bool) or not isinstance(created, int | float):
        raise InputError(f"a {what}'s created_at must be seconds since the epoch")
    stored = {**record, "id": rid, "created_at": float(created)}
    try:
        json.dumps(stored, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"a {what} must be JSON-able: {exc}") from None
    return rid, float(created), stored


def query_log_row(record: dict[str, Any]) -> tuple[float, str, str | None, dict[str, Any]]:
    """A query-log record as both stores keep it: (epoch seconds, owner, decision, the record with `time`
    as ISO-8601 UTC). The record's own id, if any, is tried first (`log_ids`)."""
    row = dict(record)
    ts = to_epoch(row["time"]) if row.get("time") is not None else time.time()
    row["time"] = datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")
    decision = row.get("decision")
    return ts, str(row.get("identity") or ""), decision if isinstance(decision, str) else None, row


def log_ids(record: dict[str, Any]) -> Iterator[str]:
    """The ids a query-log row may take, in order: its own (when it has one), then a fresh one."""
    yield str(record.get("id") or "") or uuid.uuid4().hex
    yield uuid.uuid4().hex


def to_epoch(value: float | int | str | datetime) -> float:
    """Epoch seconds from epoch seconds, an ISO-8601 string (naive means UTC; Z allowed) or a datetime."""
    if isinstance(value, bool):
        raise ValueError("a time must be epoch seconds, ISO-8601 text or a datetime")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    raise ValueError("a time must be epoch seconds, ISO-8601 text or a datetime")


def query_limit(limit: Any) -> int:
    """The query log's row limit, as the SQLite store always took it (0 or less: no rows)."""
    return max(0, int(limit))


def check_limit(limit: Any) -> int:
    """Bounded, so a typo cannot ask a shared database for every row it has."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100_000:
        raise InputError("limit must be an integer within 1..100000")
    return limit
