"""The whole answering flow without LangGraph: the same steps and routing decisions as the graph.

    understand -> resolve --(mode required_data)--> end
    resolve --(answer)--> search --(nothing relevant)--> abstain
    search --(relevant)--> assemble --(answer)--> generate --(model: cannot answer)--> abstain
    generate --> check --(failed, retries left)--> generate
    check --(failed / low confidence)--> uncertain;  check --(passed)--> end
    assemble --(mode artifact)--> build_artifact --(no material)--> abstain
    build_artifact --(failed, retries left)--> build_artifact;  --(failed / low confidence)--> uncertain
    build_artifact --(passed)--> end

Use it to embed citewise where LangGraph is not wanted, and to test the engine alone. One KB
snapshot serves the whole run. It returns the graph's output JSON. It does not pause for missing
data (that needs a checkpointer: use the graph or `citewise.api`); it answers with `needs_data`.
Like the graph, it writes one query-log row per answer (engine/querylog.py), failures included.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..arguments import as_filters, as_home, as_mapping
from ..config import Context
from ..errors import InputError
from ..llm.chat import ModelClock
from ..retrieval.snapshot import KnowledgeBase, open_kb
from . import outcomes, querylog, routes
from .access import UNRESTRICTED, Access
from .artifact import build_artifact
from .assemble import assemble
from .check import check
from .generate import generate
from .inquiry import understand, validate
from .records import Feedback, Resolution, Verdict
from .resolve import governing_chunks, resolve
from .search import search


def open_snapshot(ctx: Context, generation: int | None = None) -> KnowledgeBase:
    """The KB snapshot of the context's home (the one a run pinned, when `generation` is given)."""
    return open_kb(ctx.home_path, ctx.vector_store, ctx.embedding_model, ctx.embedding_base_url, generation=generation,
                   database_url=ctx.database_url)


class _Timer:
    """Per-step wall times, reported under the graph's node names."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}

    def __call__(self, name: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            ms = (time.perf_counter() - started) * 1000
            self.timings[name] = round(self.timings.get(name, 0.0) + ms, 3)


def answer(question: str, *, ctx: Context | None = None, home: str | Path | None = None,
           filters: dict[str, Any] | None = None, collected_data: dict[str, Any] | None = None,
           max_tokens: int | None = None, mode: str | None = None, artifact_type: str | None = None,
           access: Access = UNRESTRICTED) -> dict[str, Any]:
    """Answer one question (or, with `artifact_type`, build that artifact about it) from the knowledge
    base; returns the same JSON as the graph's output.

    `access` limits what may be read (engine.access; default: everything). The answer's query-log
    row id is `metadata.query_id` (None when logging is off).
    """
    if ctx is not None and not isinstance(ctx, Context):
        raise InputError(f"ctx must be a citewise.config.Context, got {type(ctx).__name__}")
    ctx = ctx or Context()
    home = as_home(home)
    if home is not None:
        ctx = ctx.with_overrides(home=home)
    filters, collected_data = as_filters(filters), as_mapping(collected_data, "collected_data")
    raw: Mapping[str, Any] = {"question": question, "filters": filters, "collected_data": collected_data,
                              "max_tokens": max_tokens, "mode": mode, "artifact_type": artifact_type}
    timed, seen = _Timer(), {}
    surface, query_id = querylog.current_surface("engine"), querylog.new_id()

    def log(out: dict[str, Any] | None, error: BaseException | None = None) -> str | None:
        inquiry = seen.get("inquiry")
        record = querylog.build_record(
            surface=surface, question=inquiry.question if inquiry else question,
            filters=inquiry.filters if inquiry else filters, mode=inquiry.mode if inquiry else mode, output=out,
            retrieved=seen.get("retrieved"), access=access, ctx=ctx, error=error, timings_ms=timed.timings,
            query_id=query_id)
        return querylog.write(ctx, record)

    with querylog.traced("citewise.engine.answer", query_id, {"surface": surface}):
        try:
            out = _answer(ctx, raw, access, timed, seen)
        except Exception as exc:
            log(None, exc)
            raise
        out["metadata"]["query_id"] = log(out)
    return out


def _answer(ctx: Context, raw: Mapping[str, Any], access: Access, timed: _Timer,
            seen: dict[str, Any]) -> dict[str, Any]:
    validate(raw, ctx)  # argument errors before the knowledge base is opened, as in the graph's intake
    kb = open_snapshot(ctx)
    clock = ModelClock(ctx.llm_deadline)
    inquiry = seen["inquiry"] = timed("intake", understand, kb, ctx, raw, access)
    out: dict[str, Any] = {"decision": "uncertain", "confidence": 0.0, "response": {"text": "", "sections": []},
                           "citations": [], "guardrails": {"passed": True, "violations": []}, "needs_review": False,
                           "review": {"dropped": []}, "artifact": None}
    meta = outcomes.start_metadata(inquiry, ctx, kb.generation)

    def finish(*updates: dict[str, Any]) -> dict[str, Any]:
        for update in updates:
            meta.update(update.pop("metadata", {}))
            out.update(update)
        out["metadata"] = {**meta, "timings_ms": timed.timings, "model": dict(clock.usage)}
        return out

    resolution = timed("extract_required_data", resolve, kb, ctx, inquiry, clock=clock)
    out.update(outcomes.resolution_output(resolution))
    meta.update(outcomes.resolution_metadata(resolution))
    if routes.after_required_data(inquiry.mode) == "end":
        return finish(outcomes.required_data_outcome(resolution))
    retrieval = timed("retrieve", search, kb, ctx, inquiry, facet_filters=resolution.facet_filters, clock=clock)
    seen["retrieved"] = [h.chunk_id for h in retrieval.hits]
    meta.update(outcomes.retrieval_metadata(retrieval, ctx))
    if routes.after_retrieve(bool(retrieval.hits), retrieval.relevance, ctx, resolution.named_by_data) == "abstain":
        return finish(timed("abstain", outcomes.abstained, kb, inquiry, retrieval.relevance))
    pack = timed("assemble_context", assemble, retrieval.hits, governing_chunks(kb, resolution), resolution.article_id,
                 int(ctx.context_share * inquiry.max_tokens), lead=resolution.lead_document)
    meta.update(outcomes.pack_metadata(pack))
    feedback, attempts = Feedback(), 0

    def settle(verdict: Verdict) -> Resolution:
        """The resolution the answer stands on: its own article's, where it settled on one (as the graph's
        state holds it after the check)."""
        if verdict.settled is None:
            return resolution
        out.update(outcomes.resolution_output(verdict.settled))
        return verdict.settled

    while routes.after_context(inquiry.mode) == "build_artifact":
        built = timed("build_artifact", build_artifact, kb, ctx, inquiry, resolution, retrieval.relevance, pack,
                      feedback, clock)
        attempts += 1
        resolution = settle(built.verdict)
        update = outcomes.artifact_answered(built, resolution.missing)
        meta.update({**outcomes.draft_metadata(built.draft, attempts), **outcomes.verdict_metadata(built.verdict)})
        step = routes.after_artifact(built.draft, built.artifact, built.verdict.passed, built.verdict.confidence,
                                     attempts, ctx, bool(built.verdict.unserved))
        if step == "build_artifact":
            feedback = built.verdict.feedback()
            continue
        if step == "abstain":
            reason = built.draft.reason if built.draft.cannot_answer else ""
            return finish(update, timed("abstain", outcomes.abstained, kb, inquiry, retrieval.relevance, reason))
        if step == "uncertain":
            return finish(update, timed("uncertain", outcomes.uncertain, ctx, inquiry, built.verdict, pack,
                                        resolution.missing, built.artifact))
        return finish(update)
    while True:
        draft = timed("generate", generate, kb, ctx, inquiry, resolution, pack, feedback, clock)
        attempts += 1
        meta.update(outcomes.draft_metadata(draft, attempts))
        if routes.after_generate(draft) == "abstain":
            return finish(outcomes.abstained(kb, inquiry, retrieval.relevance, draft.reason))
        verdict = timed("check_guardrails", check, kb, ctx, inquiry, resolution, retrieval.relevance, pack, draft,
                        clock)
        resolution = settle(verdict)
        update = outcomes.answered(verdict, resolution.missing)
        meta.update(outcomes.verdict_metadata(verdict))
        step = routes.after_check(verdict.passed, verdict.confidence, attempts, ctx, not verdict.unanswered)
        if step == "generate":
            feedback = verdict.feedback()
            continue
        if step == "uncertain":
            return finish(update, timed("uncertain", outcomes.uncertain, ctx, inquiry, verdict, pack,
                                        resolution.missing))
        return finish(update)


def search_passages(question: str, *, ctx: Context | None = None, home: str | Path | None = None,
                    filters: dict[str, Any] | None = None, k: int | None = None,
                    access: Access = UNRESTRICTED) -> dict[str, Any]:
    """Retrieval only: the passages the question finds under its filters (and `access`), with their
    scores and metadata, and the relevance an answer would be gated on. Logged with mode `query`."""
    ctx = ctx or Context()
    if home is not None:
        ctx = ctx.with_overrides(home=str(home))
    timed, surface, query_id = _Timer(), querylog.current_surface("engine"), querylog.new_id()
    try:
        with querylog.traced("citewise.engine.search_passages", query_id, {"surface": surface}):
            kb = open_snapshot(ctx)
            inquiry = timed("intake", understand, kb, ctx,
                            {"question": question, "filters": filters, "mode": "answer"}, access)
            retrieval = timed("retrieve", search, kb, ctx, inquiry, k=k or ctx.top_k)
    except Exception as exc:
        querylog.write(ctx, querylog.build_record(surface=surface, question=question, filters=filters, mode="query",
                                                  access=access, ctx=ctx, error=exc, timings_ms=timed.timings,
                                                  query_id=query_id))
        raise
    passages = [{"chunk_id": p.chunk_id, "doc_id": p.doc_id, "title": p.title, "section": p.section,
                 "chunk_type": p.chunk_type, "tier": p.tier, "ordinal": p.ordinal, "score": round(float(p.score), 6),
                 "bm25": round(float(p.bm25), 6), "dense": round(float(p.dense), 6), "text": p.text,
                 "metadata": p.metadata} for p in retrieval.hits]
    out = {"relevance": {name: round(float(v), 6) for name, v in vars(retrieval.relevance).items() if v is not None},
           "filters_applied": retrieval.filters, "facets_relaxed": retrieval.relaxed, "passages": passages,
           "metadata": {"kb_generation": kb.generation, "timings_ms": timed.timings,
                        "spelling": [list(pair) for pair in inquiry.corrections]}}
    out["query_id"] = querylog.write(ctx, querylog.build_record(
        surface=surface, question=inquiry.question, filters=inquiry.filters, mode="query", output=out,
        retrieved=[p.chunk_id for p in retrieval.hits], access=access, ctx=ctx, timings_ms=timed.timings,
        query_id=query_id))
    return out
