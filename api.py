"""Python API: run the compiled graph; the graph, models and indexes stay loaded per process.

Threads (needed for human-in-the-loop interrupts) are checkpointed in `<home>/threads.sqlite`, or,
when a database URL is set, in PostgreSQL (langgraph-checkpoint-postgres, beside the knowledge
base), so a paused inquiry can be resumed later, from another process or another machine, with
`resume(thread_id, values)`. A thread remembers the settings it was started with (a
`citewise_threads` table beside the checkpoints): a resume continues with them unless the caller
overrides some.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import uuid
from pathlib import Path
from typing import Any

from .arguments import as_filters, as_home, as_mapping, as_thread_id
from .config import Context
from .engine import querylog
from .engine.privacy import mask_values, masked
from .errors import InputError
from .store import redact, resolve_url
from .store.sqlite import check_home

THREADS_DB = "threads.sqlite"
_THREADED: dict[tuple[Path, str], Any] = {}
_LOCK = threading.Lock()
NOT_SAVED = {"database_url"}  # where a thread lives is not one of its settings (and may hold a password)


def _context(home: str | Path | None, overrides: dict[str, Any]) -> Context:
    changes = {k: v for k, v in overrides.items() if v is not None}
    home = as_home(home)
    if home is not None:
        changes["home"] = home
    return Context(**changes)


def _payload(question: str, filters: dict[str, Any] | None, collected_data: dict[str, Any] | None,
             max_tokens: int | None, mode: str | None, artifact_type: str | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {"question": question, "filters": as_filters(filters) or {},
                               "collected_data": as_mapping(collected_data, "collected_data") or {},
                               "max_tokens": max_tokens}
    if mode is not None:
        payload["mode"] = mode
    if artifact_type is not None:
        payload["artifact_type"] = artifact_type
    return payload


def _checked(payload: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Validate a run's input here, before the graph (and a checkpointer) sees it: bad arguments are an
    InputError for the caller, never a serializer's or a node's internal error. Returns the payload with
    the question and collected values masked: a checkpointed run persists its input as given."""
    from .engine.inquiry import validate

    validate(payload, ctx)
    return {**payload, "question": masked(payload["question"]),
            "collected_data": mask_values(payload["collected_data"])}


def threaded_graph(home: Path, database_url: str | None = None) -> Any:
    """The graph compiled with a checkpointer: PostgreSQL when a database URL is set, else SQLite in
    the home (one graph per place per process)."""
    from .graphs.kb_agent import build_graph

    url = resolve_url(database_url)
    key = (Path("/") if url else Path(home).resolve(), url)
    with _LOCK:
        graph = _THREADED.get(key)
        if graph is None:
            if url:
                saver = _postgres_saver(url)
            else:
                from langgraph.checkpoint.sqlite import SqliteSaver

                check_home(key[0], write=True)  # a file or an unwritable directory is a StoreError, not a crash
                saver = SqliteSaver(sqlite3.connect(key[0] / THREADS_DB, check_same_thread=False))
            graph = _THREADED[key] = build_graph(checkpointer=saver)
        return graph


def _postgres_saver(url: str) -> Any:
    """A PostgresSaver on its own pool (it needs dict rows and no prepared statements), set up once per
    process; an advisory lock keeps replicas that start together from racing through its setup."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    from .store.postgres import advisory_key, pool_for

    pool_for(url)  # checks the URL and says why a connection fails
    pool = ConnectionPool(url, min_size=1, max_size=4, open=True, name="citewise-threads",
                          kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row})
    saver = PostgresSaver(pool)  # type: ignore[arg-type]
    with psycopg.connect(url, autocommit=True) as conn:
        lock = advisory_key(f"citewise:threads-setup:{conn.execute('SELECT current_schema()').fetchone()[0]}")
        conn.execute("SELECT pg_advisory_lock(%s)", (lock,))
        try:
            saver.setup()
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (lock,))
    return saver


def _where(home: Path, database_url: str | None) -> str:
    url = resolve_url(database_url)
    return redact(url) if url else str(Path(home) / THREADS_DB)


def run_config(surface: str | None = None, thread_id: str | None = None, user: Any = None) -> dict[str, Any]:
    """The config of one in-process run: the surface its query-log row names, and one id for the row
    and the LangSmith trace (the root `run_id`, and `citewise_query_id` in the run metadata).

    `user` is an authenticated identity (server/auth.py); it travels as `langgraph_auth_user`, the
    key the LangGraph server uses for the run API, so the graph reads access one way everywhere.
    """
    surface = surface or querylog.current_surface("python")
    query_id = querylog.new_id()
    configurable: dict[str, Any] = {"citewise_surface": surface}
    if thread_id is not None:
        configurable["thread_id"] = thread_id
    if user is not None:
        configurable["langgraph_auth_user"] = user
    return {"configurable": configurable, "run_id": uuid.UUID(query_id),
            "metadata": {"citewise_query_id": query_id, "citewise_surface": surface},
            "tags": ["citewise", f"surface:{surface}"]}


def _config(thread_id: str) -> dict[str, Any]:
    return run_config(thread_id=thread_id)


def _settings_db(home: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(Path(home) / THREADS_DB, timeout=30)
    conn.execute("CREATE TABLE IF NOT EXISTS citewise_threads (thread_id TEXT PRIMARY KEY, settings TEXT NOT NULL)")
    return conn


def save_settings(home: Path, thread_id: str, settings: dict[str, Any], database_url: str | None = None) -> None:
    """The run settings a thread continues with (JSON-safe context fields the caller gave)."""
    settings = {k: v for k, v in settings.items() if k not in NOT_SAVED}
    url = resolve_url(database_url)
    if url:
        from .store.postgres import PostgresStore

        PostgresStore(Path(home), url).put_thread_settings(thread_id, settings)
        return
    with contextlib.closing(_settings_db(home)) as conn, conn:
        conn.execute("INSERT INTO citewise_threads(thread_id, settings) VALUES(?, ?) ON CONFLICT(thread_id) "
                     "DO UPDATE SET settings=excluded.settings", (thread_id, json.dumps(settings, default=str)))


def load_settings(home: Path, thread_id: str, database_url: str | None = None) -> dict[str, Any]:
    url = resolve_url(database_url)
    if url:
        from .store.postgres import PostgresStore

        return PostgresStore(Path(home), url).thread_settings(thread_id)
    with contextlib.closing(_settings_db(home)) as conn:
        row = conn.execute("SELECT settings FROM citewise_threads WHERE thread_id=?", (thread_id,)).fetchone()
    return json.loads(row[0]) if row else {}


def _result(graph: Any, out: dict[str, Any], thread_id: str) -> dict[str, Any]:
    result = {k: v for k, v in out.items() if k != "__interrupt__"}
    result["thread_id"] = thread_id
    interrupts = out.get("__interrupt__") or []
    if interrupts:
        state = graph.get_state({"configurable": {"thread_id": thread_id}}).values
        result = {**{k: state.get(k) for k in ("article_reference", "required_fields", "missing_fields",
                                                "invalid_fields", "collected_data")}, **result}
        result.update(status="interrupted", interrupt=interrupts[0].value)
    else:
        result["status"] = "done"
    return result


def ask(question: str, *, home: str | Path | None = None, filters: dict[str, Any] | None = None,
        collected_data: dict[str, Any] | None = None, max_tokens: int | None = None, mode: str | None = "answer",
        thread_id: str | None = None, artifact_type: str | None = None, **context: Any) -> dict[str, Any]:
    """One run. With `thread_id` (or interrupts on) the run is checkpointed and may pause for data."""
    ctx = _context(home, context)
    try:
        payload = _checked(_payload(question, filters, collected_data, max_tokens, mode, artifact_type), ctx)
        thread_id = as_thread_id(thread_id, required=False)
    except InputError as exc:  # refused before the graph ran: logged as a run that failed in intake is
        querylog.write(ctx, querylog.build_record(surface=querylog.current_surface("python"), question=question,
                                                  filters=filters, mode=mode, ctx=ctx, error=exc))
        raise
    if thread_id is None and not ctx.interrupt_on_missing_data:
        from .graphs.kb_agent import graph

        return graph.invoke(payload, config=run_config(), context=ctx)
    thread_id = thread_id or uuid.uuid4().hex
    graph = threaded_graph(ctx.home_path, ctx.database_url)
    save_settings(ctx.home_path, thread_id, {k: v for k, v in context.items() if v is not None}, ctx.database_url)
    # durability="exit": only the state the run ends (or pauses) with is stored — after intake masked the
    # question and the required-data step withheld sensitive values — never the raw input of its first step.
    out = graph.invoke(payload, config=_config(thread_id), context=ctx, durability="exit")
    return _result(graph, out, thread_id)


def _thread_state(thread_id: str, home: Path, database_url: str | None = None) -> Any:
    as_thread_id(thread_id)
    if not resolve_url(database_url) and not (Path(home) / THREADS_DB).is_file():
        raise InputError(f"no thread {thread_id!r}: {home} has no saved threads ({THREADS_DB})")
    graph = threaded_graph(home, database_url)
    state = graph.get_state({"configurable": {"thread_id": thread_id}})
    if not state.values and not state.next:
        raise InputError(f"no thread {thread_id!r} in {_where(home, database_url)}")
    return state


def pending(thread_id: str, *, home: str | Path | None = None,
            database_url: str | None = None) -> dict[str, Any] | None:
    """The interrupt a thread is waiting on, or None; InputError for an unknown thread."""
    ctx = _context(home, {"database_url": database_url})
    state = _thread_state(thread_id, ctx.home_path, ctx.database_url)
    for task in state.tasks:
        if task.interrupts:
            return task.interrupts[0].value
    return None


def resume(thread_id: str, values: dict[str, Any], *, home: str | Path | None = None, **context: Any) -> dict[str, Any]:
    """Continue a paused thread with field values (validated; invalid ones pause it again with reasons).

    The thread's own settings apply; keyword arguments override them for this and later runs.
    """
    from langgraph.types import Command

    values = as_mapping(values, "resume values")
    if values is None:
        raise InputError("resume values must be an object of field -> value")
    from .engine.inquiry import iso_dates

    values = iso_dates(values)  # as collected_data
    for key, value in values.items():
        if not isinstance(key, str) or (value is not None and not isinstance(value, str | int | float | bool)):
            raise InputError(f"resume values must map field names to a string, number, boolean or date (got {key!r})")
    place = _context(home, {"database_url": context.get("database_url")})
    home_path, url = place.home_path, place.database_url
    state = _thread_state(thread_id, home_path, url)
    if not any(task.interrupts for task in state.tasks):
        raise InputError(f"thread {thread_id!r} is not waiting for data")
    settings = {**load_settings(home_path, thread_id, url), **{k: v for k, v in context.items() if v is not None}}
    settings.setdefault("interrupt_on_missing_data", True)
    ctx = _context(home_path, {**settings, "database_url": url})  # invalid settings are refused before they are saved
    save_settings(home_path, thread_id, settings, url)
    graph = threaded_graph(home_path, url)
    out = graph.invoke(Command(resume=mask_values(values)), config=_config(thread_id), context=ctx,
                       durability="exit")
    return _result(graph, out, thread_id)


def required_data(question: str, *, home: str | Path | None = None, filters: dict[str, Any] | None = None,
                  collected_data: dict[str, Any] | None = None, **context: Any) -> dict[str, Any]:
    """The governing article and the data to collect; `decision` is `uncertain` (no fields) where the only
    article is another provider's than the one the question names, `out_of_scope` where there is none."""
    out = ask(question, home=home, filters=filters, collected_data=collected_data, mode="required_data", **context)
    return {k: out.get(k) for k in ("decision", "article_reference", "required_fields", "missing_fields",
                                    "invalid_fields", "response")}


def artifact(artifact_type: str, subject: str, *, home: str | Path | None = None,
             filters: dict[str, Any] | None = None, collected_data: dict[str, Any] | None = None,
             max_tokens: int | None = None, **context: Any) -> dict[str, Any]:
    """Build a cited artifact (checklist, workflow, call_script, brief, blueprint) about `subject`: the
    graph's output, with `artifact` = {type, title, headings, markdown}; out_of_scope when the KB lacks it."""
    return ask(subject, home=home, filters=filters, collected_data=collected_data, max_tokens=max_tokens,
               mode="artifact", artifact_type=artifact_type, **context)


def warm_up(home: str | Path | None = None) -> dict[str, Any]:
    """Load, once per process, what the first answer would otherwise load on its way, and say how long
    each part took (seconds): the compiled graph, the local query embedder, the token encoder, the
    home's KB snapshot, and whatever each step builds lazily, by one answer that is neither logged nor
    traced (and uses no chat model: the operator's model is not called for it).

    Why: a server's first `runs.wait` paid for all of this (BENCHMARKS.md, cold start); a server calls
    this at start-up, before it reports ready. A home that was never ingested is skipped: its first
    request reports that, as before. A remote embedder is not called either (no request at start-up).
    """
    import time

    from .errors import NotIngestedError
    from .kb.tokens import encoder
    from .retrieval.embeddings import MiniLMEmbedder, get_embedder

    timings: dict[str, Any] = {}
    started = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal started
        timings[name] = round(time.perf_counter() - started, 3)
        started = time.perf_counter()

    from .graphs.kb_agent import graph

    lap("graph")
    ctx = _context(home, {})
    embedder = get_embedder(ctx.embedding_model, ctx.embedding_base_url)
    local = isinstance(embedder, MiniLMEmbedder)
    if local:
        embedder.embed_query("How do I get started?")
    lap("embedder")
    encoder()
    lap("encoder")
    from .engine.pipeline import open_snapshot

    try:
        kb = open_snapshot(ctx)
    except NotIngestedError:
        timings["kb"] = "not ingested"
        return timings
    lap("kb")
    titles = sorted(str(doc.title) for doc in kb.docs.values() if len(str(doc.title or "")) >= 3)
    if local and titles:
        from langsmith import tracing_context

        run_ctx = ctx.with_overrides(query_log=False, llm_model="",
                                     reranker="heuristic" if ctx.reranker == "llm" else ctx.reranker)
        with tracing_context(enabled=False):
            graph.invoke({"question": titles[0][:200]}, config={"configurable": {"citewise_surface": "warm_up"}},
                         context=run_ctx)
        lap("run")
    return timings
