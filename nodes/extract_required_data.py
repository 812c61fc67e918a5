"""extract_required_data: the governing article and the data to collect (engine.resolve).

With `interrupt_on_missing_data`, missing fields pause the graph (LangGraph `interrupt`); the run
resumes with Command(resume={field: value}), and the article is resolved again with the values
(a record keeper chosen on resume changes which article governs).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from ..config import Context
from ..engine import outcomes
from ..engine.records import Inquiry, dump, load
from ..engine.resolve import missing_data_request, resolve
from .common import clock_of, model_update, node, snapshot


@node("extract_required_data")
def extract_required_data(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    kb, ctx = snapshot(state, runtime)
    inquiry, clock = load(Inquiry, state["inquiry"]), clock_of(state, ctx)
    collected, rounds = dict(inquiry.collected_data), 0
    while True:
        resolution = resolve(kb, ctx, inquiry, collected, clock)
        if not (ctx.interrupt_on_missing_data and resolution.to_ask):
            break
        reply = interrupt(missing_data_request(resolution, inquiry.question))
        rounds += 1
        if isinstance(reply, dict):
            collected.update({str(k): v for k, v in reply.items() if v not in (None, "")})
    update = {"resolution": dump(resolution), "collected_data": resolution.collected,
              **outcomes.resolution_output(resolution), **model_update(clock, float(state.get("model_seconds") or 0))}
    if inquiry.mode == "required_data":
        update.update(outcomes.required_data_outcome(resolution))
    update["metadata"] = {**update["metadata"], **outcomes.resolution_metadata(resolution, rounds)}
    return update
