"""uncertain: keep what is supported, say what is missing, flag the answer for review."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ..config import Context
from ..engine.outcomes import uncertain as uncertain_outcome
from ..engine.records import Artifact, ContextPack, Inquiry, Verdict, load
from .common import ctx_of, node


@node("uncertain")
def uncertain(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    verdict = load(Verdict, state["verdict"]) if state.get("verdict") else None
    artifact = load(Artifact, state["artifact"]) if state.get("artifact") else None
    return uncertain_outcome(ctx_of(runtime), load(Inquiry, state["inquiry"]), verdict,
                             load(ContextPack, state["context"]), state.get("missing_fields") or [], artifact)
