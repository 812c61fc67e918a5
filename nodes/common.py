"""What every node needs: its configuration, the run's pinned KB snapshot, the model clock, timing.

Nodes are adapters of (state, runtime) -> partial update: they load records from the JSON state,
call one engine step, and dump the result back. This module is the only shared piece.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from ..config import Context, context_from
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


def node(name: str) -> Callable[[Node], Node]:
    """Record the node's wall time in metadata.timings_ms (shown in the output and in Studio)."""

    def wrap(fn: Node) -> Node:
        @functools.wraps(fn)
        def run(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
            started = time.perf_counter()
            update = fn(state, runtime)
            ms = round((time.perf_counter() - started) * 1000, 3)
            meta = update.get("metadata")
            if isinstance(meta, Overwrite):
                update["metadata"] = Overwrite({**meta.value, "timings_ms": {name: ms}})
            else:
                update["metadata"] = {**(meta or {}), "timings_ms": {name: ms}}
            return update

        return run

    return wrap
