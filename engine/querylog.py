"""The query log: one record per answer, whichever surface asked, kept in the knowledge base's store
(the home's SQLite file, or the PostgreSQL database every replica shares).

Where records are written (each answer exactly once):
  - the graph's last node, `record` (nodes/record.py), for every run of the compiled graph: the
    LangGraph run API, the HTTP routes, `citewise.ask` / `citewise.api` and the CLI all run it;
  - the graph's node wrapper (nodes/common.py) when a node fails, so a failed run has its row too;
  - `engine.answer` (the LangGraph-free pipeline), at its end or on its failure;
  - the retrieval-only route (POST /v1/query), which runs no graph.

A record never holds personal data: the question and any error text are masked
(`privacy.masked`), and collected data values are not recorded at all. Logging never breaks an
answer: a failed write is reported on the `citewise.querylog` logger and the answer goes on.

The record's id is the LangGraph run id when the server runs the graph (the id LangSmith gives
that run's trace), and otherwise a fresh id that the in-process callers also pass to LangGraph as
the root `run_id`, with `citewise_query_id` in the run metadata: with LangSmith tracing on, a
record and its trace share one id.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from ..config import Context
from ..store import Store, open_store, resolve_url, store_exists
from .access import UNRESTRICTED, Access
from .privacy import masked

log = logging.getLogger("citewise.querylog")

SURFACES = ("http", "run_api", "cli", "python", "engine", "graph")
_SURFACE: ContextVar[str | None] = ContextVar("citewise_surface", default=None)
_STORES: dict[tuple[Path, str], Store] = {}
_PRUNED: dict[tuple[Path, str], float] = {}
_LOCK = threading.Lock()
PRUNE_EVERY_SECONDS = 60.0
MAX_QUESTION = 1000


def current_surface(default: str = "python") -> str:
    """The surface a record is attributed to: the innermost `surface(...)` block, else `default`."""
    return _SURFACE.get() or default


@contextlib.contextmanager
def surface(name: str) -> Iterator[None]:
    """Attribute the answers given inside this block to a surface (the CLI wraps its commands in it)."""
    token = _SURFACE.set(name)
    try:
        yield
    finally:
        _SURFACE.reset(token)


def new_id() -> str:
    return str(uuid.uuid4())


def _masked_value(value: Any, depth: int = 0) -> Any:
    """Filters are recorded as given, with any personal data in their strings masked; a filter too
    deep to be valid (it was refused) is recorded as a marker, not walked."""
    if depth > 10:
        return "[nested too deeply]"
    if isinstance(value, str):
        return masked(value)
    if isinstance(value, Mapping):
        return {str(k): _masked_value(v, depth + 1) for k, v in list(value.items())[:200]}
    if isinstance(value, list | tuple):
        return [_masked_value(v, depth + 1) for v in list(value)[:200]]
    return value


def _safe_text(value: Any, limit: int) -> str:
    """Masked text that SQLite and JSON can always hold (lone surrogates replaced)."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return masked(text.encode("utf-8", "replace").decode("utf-8"))[:limit]


def build_record(*, surface: str, question: Any, filters: Any = None, mode: Any = None,
                 output: Mapping[str, Any] | None = None, retrieved: list[str] | None = None,
                 access: Access = UNRESTRICTED, ctx: Context | None = None, error: BaseException | str | None = None,
                 timings_ms: Mapping[str, float] | None = None, latency_ms: float | None = None,
                 query_id: str | None = None, run: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One answer as a log record (JSON-ready). `output` is the graph's output state (or engine.answer's)."""
    out = dict(output or {})
    meta = dict(out.get("metadata") or {})
    usage = dict(meta.get("model") or {})
    timings = dict(timings_ms if timings_ms is not None else (meta.get("timings_ms") or {}))
    cited = [c.get("chunk_id") for c in out.get("citations") or [] if isinstance(c, Mapping)]
    generator = meta.get("generator")
    if isinstance(error, BaseException):
        error = f"{type(error).__name__}: {error}"
    return {
        "id": query_id or new_id(),
        "time": time.time(),
        "surface": surface,
        "identity": access.identity,
        "namespaces": None if access.namespaces is None else list(access.namespaces),
        "clearance": access.clearance if access.restricted else None,
        "question": _safe_text(question if question is not None else "", MAX_QUESTION),
        "filters": _masked_value(filters or {}) if isinstance(filters, Mapping) else _safe_text(filters, 2000),
        "mode": mode if isinstance(mode, str) else meta.get("mode"),
        "retrieved": [str(c) for c in (retrieved or [])],
        "cited": [str(c) for c in cited if c],
        "decision": out.get("decision") if not error else None,
        "confidence": out.get("confidence") if not error else None,
        "generator": generator,
        "model": (ctx.llm_model or None) if ctx is not None and str(generator or "").startswith("openai:") else None,
        "timings_ms": timings,
        "latency_ms": round(latency_ms if latency_ms is not None else sum(timings.values()), 3),
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
        "kb_generation": meta.get("kb_generation"),
        "error": _safe_text(error, 2000) if error else None,
        "run": dict(run or {}),
    }


def _store(ctx: Context) -> Store | None:
    """The context's store, or None when the home has no database (nothing was ever ingested there):
    a question asked of a wrong home must not create one. With a database URL it is PostgreSQL."""
    key = (ctx.home_path.resolve(), resolve_url(ctx.database_url))
    with _LOCK:
        store = _STORES.get(key)
        if store is None and store_exists(*key):
            store = _STORES[key] = open_store(*key)
        return store


def write(ctx: Context, record: dict[str, Any]) -> str | None:
    """Store the record in the context's home; its id, or None when logging is off or impossible."""
    if not ctx.query_log:
        return None
    try:
        store = _store(ctx)
        if store is None:
            return None
        query_id = store.log_query(record)
        _prune(store, ctx)
        return query_id
    except Exception:  # the log must never cost the caller an answer
        log.warning("could not write the query log of %s", ctx.home_path, exc_info=True)
        return None


def _prune(store: Store, ctx: Context) -> None:
    """Apply the retention setting, at most once a minute per home."""
    if ctx.query_log_retention_days <= 0:
        return
    now = time.time()
    key = (ctx.home_path.resolve(), resolve_url(ctx.database_url))
    with _LOCK:
        if now - _PRUNED.get(key, 0.0) < PRUNE_EVERY_SECONDS:
            return
        _PRUNED[key] = now
    store.prune_queries(now - ctx.query_log_retention_days * 86400)


def open_log(ctx: Context) -> Store | None:
    """The store holding the context's query log (None when the home has no database)."""
    return _store(ctx)


@contextlib.contextmanager
def traced(name: str, query_id: str, metadata: Mapping[str, Any]) -> Iterator[None]:
    """A LangSmith trace with the record's id as its run id, when LangSmith tracing is on (else nothing).

    The graph is traced by LangGraph itself; this is for `engine.answer`, which runs no LangGraph.
    """
    try:
        from langsmith import utils as ls_utils

        enabled = bool(ls_utils.tracing_is_enabled())
    except Exception:
        enabled = False
    if not enabled:
        yield
        return
    from langsmith import trace

    with trace(name, run_type="chain", run_id=query_id, metadata={"citewise_query_id": query_id, **metadata},
               tags=["citewise", f"surface:{metadata.get('surface', 'engine')}"]):
        yield


_DURATION = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str, now: float | None = None) -> float:
    """Epoch seconds from an ISO-8601 date/time (naive means UTC) or a duration back from now (30m, 12h, 7d).

    ValueError with a sentence for anything else (the CLI and the HTTP route both show it).
    """
    from datetime import UTC, datetime

    raw = text.strip()
    unit = raw[-1:].lower()
    if unit in _DURATION and raw[:-1].strip().replace(".", "", 1).isdigit():
        return (time.time() if now is None else now) - float(raw[:-1]) * _DURATION[unit]
    try:
        when = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"since must be an ISO-8601 date or time (2026-05-01, 2026-05-01T12:00Z) or a duration "
                         f"such as 30m, 12h or 7d (got {text!r})") from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
