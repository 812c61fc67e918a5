"""Fields implied by an article's eligibility and business-rule chunks, extracted by a chat model.

Offline (no model) the parsed `Required data` section is the whole answer; with a model, rules such
as "only active employees may borrow" add the data they depend on. Every extracted field must cite
an excerpt of the article; uncited or malformed fields are discarded.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from citewise.assembly import render_chunk
from citewise.config import Context
from citewise.kb.text import slug
from citewise.llm.openai_chat import chat_model, structured_call
from citewise.llm.schemas import RequiredDataOutput
from citewise.prompts import render

_MEMO: OrderedDict[tuple, tuple[list[dict[str, Any]], dict[str, Any]]] = OrderedDict()


def implied_fields(ctx: Context, question: str, title: str, chunks: list[dict[str, Any]],
                   known: list[str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Memoised per process: an interrupted run replays this node on every resume."""
    key = (ctx.llm_model, ctx.llm_base_url, ctx.required_data_prompt, question,
           tuple(c["chunk_id"] + c["text"] for c in chunks), tuple(known))
    if key not in _MEMO:
        _MEMO[key] = _extract(ctx, question, title, chunks, known)
        if len(_MEMO) > 512:
            _MEMO.popitem(last=False)
    fields, notes = _MEMO[key]
    return [dict(f) for f in fields], dict(notes)


def _extract(ctx: Context, question: str, title: str, chunks: list[dict[str, Any]],
             known: list[str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rules = [c for c in chunks if c["chunk_type"] in ("eligibility", "business_rules")]
    if not rules:
        return [], {}
    labels = {f"C{i}": c for i, c in enumerate(rules, start=1)}
    context = "<context>\n" + "".join(render_chunk(lb, c) for lb, c in labels.items()) + "</context>"
    prompt = render("required_data", ctx.required_data_prompt, title=title, known_fields=", ".join(known) or "none",
                    question=question, context=context)
    notes: dict[str, Any] = {}
    try:
        out = structured_call(chat_model(ctx), [("user", prompt)], RequiredDataOutput, notes)
    except Exception as exc:  # extraction is an extra: the parsed fields stand on their own
        return [], {"error": f"{type(exc).__name__}: {str(exc)[:120]}"}
    if out is None:
        return [], notes
    assert isinstance(out, RequiredDataOutput)
    fields = []
    for f in out.fields:
        key = slug(f.key or f.name)
        source = labels.get(f.citation.strip().strip("[]"))
        if not key or key in known or source is None or any(x["key"] == key for x in fields):
            continue
        fields.append({"key": key, "name": f.name, "data_type": f.data_type, "required": f.required,
                       "group": f.group, "description": f.description, "why_needed": f.why_needed,
                       "chunk_id": source["chunk_id"], "source": "model"})
    return fields, notes
