"""Python API: run the compiled graph once per call; the graph, models and indexes stay loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from citewise.config import Context


def _context(home: str | Path | None, overrides: dict[str, Any]) -> Context:
    ctx = Context()
    changes = dict(overrides)
    if home is not None:
        changes["home"] = str(home)
    return ctx.with_overrides(**changes) if changes else ctx


def _payload(question: str, filters: dict[str, Any] | None, collected_data: dict[str, Any] | None,
             max_tokens: int, mode: str | None) -> dict[str, Any]:
    payload: dict[str, Any] = {"question": question, "filters": filters or {}, "collected_data": collected_data or {},
                               "max_tokens": max_tokens}
    if mode is not None:
        payload["mode"] = mode
    return payload


def ask(question: str, *, home: str | Path | None = None, filters: dict[str, Any] | None = None,
        collected_data: dict[str, Any] | None = None, max_tokens: int = 1500, mode: str | None = "answer",
        **context: Any) -> dict[str, Any]:
    from citewise.graphs.kb_agent import graph

    return graph.invoke(_payload(question, filters, collected_data, max_tokens, mode), context=_context(home, context))


def required_data(question: str, *, home: str | Path | None = None, filters: dict[str, Any] | None = None,
                  collected_data: dict[str, Any] | None = None, **context: Any) -> dict[str, Any]:
    out = ask(question, home=home, filters=filters, collected_data=collected_data, mode="required_data", **context)
    return {k: out.get(k) for k in ("article_reference", "required_fields", "missing_fields", "invalid_fields")}
