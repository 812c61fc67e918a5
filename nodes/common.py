"""What every node needs: its configuration, the run's pinned KB snapshot, the model clock, timing,
who is asking (access) and on which surface, and the query-log row of a run that fails.

Nodes are adapters of (state, runtime) -> partial update: they load records from the JSON state,
call one engine step, and dump the result back. This module is the only shared piece.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from ..config import Context, context_from
from ..engine import querylog
from ..engine.access import Access, from_user
from ..engine.pipeline import open_snapshot
from ..llm.chat import ModelClock
from ..retrieval.snapshot import KnowledgeBase

Node = Callable[[dict[str, Any], Runtime[Context]], dict[str, Any]]


def ctx_of(runtime: Runtime[Context] | None) -> Context:
    return context_from(getattr(runtime, "context", None))


def snapshot(state: dict[str, Any], runtime: Runtime[Context]) -> tuple[KnowledgeBase, Context]:
    """The KB snapshot this run pinned at intake (so every node sees one generation), and the context."""
    ctx = ctx_of(runtime)
    return open_snapshot(ctx, state.get("kb_generation")), ctx


def clock_of(state: dict[str, Any], ctx: Context) -> ModelClock:
    """Model time left for this answer: the budget minus what earlier nodes (and runs before a resume) spent."""
    return ModelClock(limit=ctx.llm_deadline, spent=float(state.get("model_seconds") or 0.0))


def model_update(clock: ModelClock, before: float) -> dict[str, Any]:
    """The model time and tokens a node used, for the state's accumulating channels."""
    return {"model_seconds": round(clock.spent - before, 4), "metadata": {"model": dict(clock.usage)}}


@dataclass(frozen=True)
class RunInfo:
    """Who runs the graph and through what: the access filter comes from here, and so do the
    query-log row's surface and id."""

    access: Access
    surface: str
    query_id: str
    ids: dict[str, Any]  # run / thread / assistant ids, for joining a log row with its trace


def run_info() -> RunInfo:
    """Read the run's config. The identity is only ever taken from `langgraph_auth_user`, which the
    LangGraph server sets from its authentication (a caller cannot set it: the key is reserved) and
    the HTTP routes pass from theirs; without one (CLI, Python API, no auth) access is unrestricted."""
    try:
        config = get_config()
    except RuntimeError:  # called outside a run (a node function invoked directly)
        config = {}
    configurable = config.get("configurable") or {}
    metadata = config.get("metadata") or {}
    served = "langgraph_api_version" in metadata  # set by the LangGraph server on every run it executes
    if served:
        surface = "run_api"
        query_id = str(metadata.get("run_id") or configurable.get("run_id") or "") or querylog.new_id()
    else:
        surface = str(configurable.get("citewise_surface") or "graph")
        query_id = str(metadata.get("citewise_query_id") or "") or querylog.new_id()
    ids = {k: str(v) for k in ("run_id", "thread_id", "assistant_id")
           if (v := metadata.get(k) or configurable.get(k))}
    return RunInfo(from_user(configurable.get("langgraph_auth_user")), surface, query_id, ids)


def log_run(state: dict[str, Any], ctx: Context, output: dict[str, Any] | None = None,
            error: BaseException | None = None) -> str | None:
    """Write the run's query-log row (from the final state, or the state a failing node saw)."""
    info = run_info()
    inquiry = state.get("inquiry") or {}
    retrieval = state.get("retrieval") or {}
    record = querylog.build_record(
        surface=info.surface, question=inquiry.get("question", state.get("question")),
        filters=inquiry.get("filters", state.get("filters")), mode=inquiry.get("mode", state.get("mode")),
        output=output if output is not None else state, access=info.access, ctx=ctx, error=error,
        retrieved=[h.get("chunk_id") for h in retrieval.get("hits") or []], query_id=info.query_id, run=info.ids)
    return querylog.write(ctx, record)


def _log_context(runtime: Runtime[Context]) -> Context:
    try:
        return ctx_of(runtime)
    except Exception:  # an invalid per-run setting: log into the home the server was started with
        return Context()


def node(name: str) -> Callable[[Node], Node]:
    """Record the node's wall time in metadata.timings_ms (shown in the output and in Studio); a node
    that fails writes the run's query-log row with the error before the failure ends the run."""

    def wrap(fn: Node) -> Node:
        @functools.wraps(fn)
        def run(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
            started = time.perf_counter()
            try:
                update = fn(state, runtime)
            except GraphBubbleUp:  # an interrupt pauses the run: it has not answered yet
                raise
            except Exception as exc:
                with contextlib.suppress(Exception):  # the configuration itself may be what failed
                    log_run(state, _log_context(runtime), error=exc)
                raise
            ms = round((time.perf_counter() - started) * 1000, 3)
            meta = update.get("metadata")
            if isinstance(meta, Overwrite):
                update["metadata"] = Overwrite({**meta.value, "timings_ms": {name: ms}})
            else:
                update["metadata"] = {**(meta or {}), "timings_ms": {name: ms}}
            return update

        return run

    return wrap
