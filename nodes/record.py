"""record: the last step of every run, which writes the answer's query-log row (engine.querylog).

Every path to the end of the graph passes here, so each answer is logged exactly once whichever
surface ran the graph (LangGraph run API, HTTP routes, Python API, CLI). A run that fails is logged
by the node that failed (nodes/common.py); a run paused by an interrupt is logged when it ends.
The row's id goes back to the caller as `metadata.query_id`.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ..config import Context
from .common import ctx_of, log_run


def record(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    query_id = log_run(state, ctx_of(runtime))
    return {"metadata": {"query_id": query_id}}
