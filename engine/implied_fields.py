"""Fields implied by an article's eligibility and business-rule chunks, extracted by a chat model.

Offline (no model) the parsed `Required data` section is the whole answer; with a model, rules such
as "only active employees may borrow" add the data they depend on. Every extracted field must cite
an excerpt of the article; uncited or malformed fields are discarded, and a model fault adds nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ..config import Context
from ..kb.text import slug
from ..llm.chat import ModelClock, ModelFault, structured_call
from ..llm.schemas import RequiredDataOutput
from ..prompts import render, render_passages
from ..retrieval.passage import Passage
from .records import FieldSpec

_MEMO: OrderedDict[tuple, tuple[list[FieldSpec], dict[str, Any]]] = OrderedDict()


def implied_fields(ctx: Context, question: str, title: str, chunks: list[Passage], known: list[str],
                   clock: ModelClock | None = None) -> tuple[list[FieldSpec], dict[str, Any]]:
    """Memoised per process: an interrupted run replays this step on every resume."""
    key = (ctx.llm_model, ctx.llm_base_url, ctx.required_data_prompt, question,
           tuple(c.chunk_id + c.text for c in chunks), tuple(known))
    if key not in _MEMO:
        _MEMO[key] = _extract(ctx, question, title, chunks, known, clock or ModelClock(ctx.llm_deadline))
        if len(_MEMO) > 512:
            _MEMO.popitem(last=False)
    fields, notes = _MEMO[key]
    return list(fields), dict(notes)


def _extract(ctx: Context, question: str, title: str, chunks: list[Passage], known: list[str],
             clock: ModelClock) -> tuple[list[FieldSpec], dict[str, Any]]:
    rules = [c for c in chunks if c.chunk_type in ("eligibility", "business_rules")]
    if not rules:
        return [], {}
    labels = {f"C{i}": c for i, c in enumerate(rules, start=1)}
    context = render_passages([(label, c.title, c.text) for label, c in labels.items()])
    prompt = render("required_data", ctx.required_data_prompt, title=title, known_fields=", ".join(known) or "none",
                    question=question, context=context)
    notes: dict[str, Any] = {}
    try:
        out = structured_call(ctx, [("user", prompt)], RequiredDataOutput, clock, notes,
                              tags=["citewise:required_fields"])
    except ModelFault as exc:  # extraction is an extra: the parsed fields stand on their own
        return [], {**notes, "error": str(exc)}
    fields: list[FieldSpec] = []
    for f in out.fields:
        key = slug(f.key or f.name)
        source = labels.get(f.citation.strip().strip("[]"))
        if not key or key in known or source is None or any(x.key == key for x in fields):
            continue
        fields.append(FieldSpec(key=key, name=f.name[:120], data_type=f.data_type, required=f.required,
                                group=f.group, description=f.description[:300], why_needed=f.why_needed[:300],
                                chunk_id=source.chunk_id, source="model"))
    return fields, notes
