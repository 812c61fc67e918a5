"""What every node needs: its configuration, the (process-cached) knowledge base, and timing."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from citewise.config import Context, context_from
from citewise.knowledge import KnowledgeBase, open_kb
from citewise.retrieval.hybrid import SearchParams


def ctx_of(runtime: Runtime[Context] | None) -> Context:
    return context_from(getattr(runtime, "context", None))


def kb_of(ctx: Context) -> KnowledgeBase:
    return open_kb(ctx.home_path, ctx.vector_store, ctx.embedding_model, ctx.embedding_base_url)


def search_params(ctx: Context, k: int | None = None) -> SearchParams:
    return SearchParams(k=k or ctx.top_k, candidate_k=ctx.candidate_k, method="hybrid", fusion=ctx.fusion,
                        rrf_k=ctx.rrf_k, alpha=ctx.fusion_alpha)


def timed(name: str) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    """Record the node's wall time in metadata.timings_ms (shown in the output and in Studio)."""

    def wrap(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        @functools.wraps(fn)
        def node(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
            started = time.perf_counter()
            update = fn(state, runtime)
            ms = round((time.perf_counter() - started) * 1000, 3)
            meta = update.get("metadata")
            if isinstance(meta, Overwrite):
                update["metadata"] = Overwrite({**meta.value, "timings_ms": {name: ms}})
            else:
                update["metadata"] = {**(meta or {}), "timings_ms": {name: ms}}
            return update

        return node

    return wrap


def plain(value: Any) -> Any:
    """NumPy scalars -> Python numbers, recursively, so state stays JSON/msgpack friendly."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    return value
