"""The seeds' HTTP contracts, served by the LangGraph server beside its run API (langgraph.json "http").

    POST /v1/required-data        inquiry (+ record_keeper, plan_type, topic) -> article_reference, required_fields
    POST /v1/answer               ... + collected_data, max_tokens -> decision, confidence, response, guardrails, ...
    POST /v1/answer/stream        the same as server-sent events: status, sources, delta..., answer
    POST /v1/query                retrieval only: passages with scores and metadata
    GET  /v1/queries              the query log (the caller's own rows; every row for admins)
    GET  /v1/queries/{id}         one row
    GET  /v1/health               liveness and the knowledge base's size (no token needed)
    POST /api/v1/query/answer     the answer endpoint spec, field for field (stream: true for SSE)

Every answer runs the same compiled graph the run API runs (`citewise.graphs.kb_agent:graph`, in
this process), with the caller's identity as `langgraph_auth_user`, so access filtering and the
query log behave as on the run API; retrieval-only requests run the engine's search directly.
Requests may set caller-scope settings only (`context`, see models.CallerContext); the knowledge
base, URLs, prompts and limits are the operator's (environment, `CITEWISE_*`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request, Response
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from ..api import run_config
from ..config import Context
from ..engine import querylog
from ..engine.access import Access, from_user
from ..engine.facets import combine_filters
from ..engine.inquiry import validate
from ..engine.pipeline import open_snapshot, search_passages
from ..errors import CitewiseError, ConfigError, InputError
from ..store import open_store, store_exists
from . import tokens
from .auth import NOBODY, PUBLIC_PATHS, mode
from .errors import ApiError, from_citewise, invalid, on_api_error, on_http_exception, on_validation_error
from .guard import RequestGuard
from .models import (
    AnswerRequest,
    AnswerResponse,
    ArtifactRequest,
    ArtifactResponse,
    Decision,
    ErrorBody,
    Health,
    QueryList,
    QueryRecord,
    QueryRequest,
    QueryResponse,
    RequiredDataRequest,
    RequiredDataResponse,
    SpecAnswerRequest,
    SpecAnswerResponse,
)

log = logging.getLogger("citewise.server")
OPENAPI_FILE = Path(__file__).with_name("openapi.json")  # the committed document (tests compare it with the app's)
VERSION = "1.0.0"
QUERY_ID_HEADER = "X-Query-Id"



def known_query_parameters(request: Request) -> None:
    """Unknown query parameters are refused like unknown body fields: a misspelt `limit` must not be ignored."""
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return
    known = {p.alias for p in dependant.query_params}
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        raise ApiError(400, "invalid_request", f"{unknown[0]}: unknown query parameter",
                       [{"field": name, "message": "unknown query parameter"} for name in unknown])


@contextlib.asynccontextmanager
async def preload(_app: FastAPI) -> AsyncIterator[None]:
    """At server start, before it reports ready: load the graph, the query embedder, the token encoder and
    the KB snapshot, and run one unlogged answer (`api.warm_up`), so the first request (on these routes
    or the run API, which share this process) is as fast as later ones. langgraph-api runs this app's
    lifespan with its own. A failure is logged and the server starts anyway: the first request then
    loads what it needs, and reports what is wrong, as it always did."""
    from ..api import warm_up

    try:
        log.info("citewise preloaded: %s", await asyncio.to_thread(warm_up))
    except Exception as exc:
        log.warning("citewise preload failed (%s: %s); the first request will load what it needs",
                    type(exc).__name__, exc)
    yield


app = FastAPI(title="citewise HTTP API", version=VERSION, openapi_url="/v1/openapi.json", docs_url="/v1/docs",
              redoc_url=None, description=__doc__, dependencies=[Depends(known_query_parameters)], lifespan=preload)
app.add_middleware(RequestGuard)  # global on the LangGraph server too: bounded bodies, runs' input masked
app.add_exception_handler(RequestValidationError, on_validation_error)
app.add_exception_handler(ApiError, on_api_error)
app.add_exception_handler(HTTPException, on_http_exception)

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Invalid request: `detail` names each offending field."},
    401: {"description": "Missing or unknown bearer token.",
          "content": {"application/json": {"schema": {"type": "object", "required": ["detail"],
                                                      "properties": {"detail": {"type": "string"}}}}}},
    503: {"model": ErrorBody, "description": "The knowledge base has not been ingested."},
}
_QUERY_ID = {QUERY_ID_HEADER: {"description": "Id of this request's query-log row (GET /v1/queries/{id}).",
                               "schema": {"type": "string"}}}


def _event(name: str, payload: dict[str, Any]) -> dict[str, Any]:
    """One server-sent event in OpenAPI 3.2's `itemSchema` form: its name, and its JSON `data`."""
    return {"type": "object", "required": ["event", "data"],
            "properties": {"event": {"const": name},
                           "data": {"type": "string", "contentMediaType": "application/json",
                                    "contentSchema": payload}}}


_STATUS = {"type": "object", "properties": {"status": {"const": "started"}, "query_id": {"type": "string"},
                                            "queryId": {"type": "string"}, "node": {"type": "string"}}}
_DELTA = {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}
_SOURCES = {"type": "object", "required": ["sources"], "properties": {"sources": {"type": "array", "items": {
    "type": "object", "required": ["chunk_id", "doc_id", "title", "score"],
    "properties": {"chunk_id": {"type": "string"}, "doc_id": {"type": "string"}, "title": {"type": "string"},
                   "score": {"type": "number"}}}}}}
_ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}
_ANSWER_SSE = {"text/event-stream": {"itemSchema": {"oneOf": [
    _event("status", _STATUS), _event("sources", _SOURCES), _event("delta", _DELTA),
    _event("answer", {"$ref": "#/components/schemas/AnswerResponse"}), _event("error", _ERROR_REF)]}}}
_SPEC_SSE = {"text/event-stream": {"itemSchema": {"oneOf": [
    _event("status", _STATUS), _event("delta", _DELTA),
    _event("done", {"$ref": "#/components/schemas/SpecAnswerResponse"}), _event("error", _ERROR_REF)]}}}


@dataclass(frozen=True)
class Caller:
    """The identity as the auth layer produced it (passed on to the graph) and the access it grants."""

    user: Any
    access: Access


def caller(request: Request) -> Caller:
    """The request's identity: the LangGraph server's authentication (server/auth.py) when it ran on
    this route, else the same token store resolved here (the app served on its own)."""
    user = request.scope.get("user")
    if user is None or not getattr(user, "is_authenticated", False):
        try:
            user = tokens.resolve(request.headers.get("authorization"))
        except ConfigError as exc:
            raise ApiError(401, "unauthorized", f"authentication unavailable: {exc}") from None
        if user is None:
            if request.url.path not in PUBLIC_PATHS:
                raise ApiError(401, "unauthorized", "a bearer token is required" if not
                               request.headers.get("authorization") else "unknown or malformed bearer token",
                               headers={"WWW-Authenticate": 'Bearer realm="citewise"'})
            user = dict(NOBODY)
    return Caller(user, from_user(user))


def make_context(given: BaseModel | None, **settings: Any) -> Context:
    """The run's configuration: the caller's caller-scope settings over the operator's environment."""
    values = given.model_dump(exclude_none=True) if given is not None else {}
    values.update({k: v for k, v in settings.items() if v is not None})
    try:
        return Context(**values)
    except InputError as exc:
        raise from_citewise(exc) from None


def facet_filter(body: RequiredDataRequest) -> dict[str, Any]:
    facets = {k: v for k in ("record_keeper", "plan_type", "topic") if (v := getattr(body, k)) is not None}
    return combine_filters(facets, body.filters or {})


def checked_payload(payload: dict[str, Any], ctx: Context, names: dict[str, str]) -> dict[str, Any]:
    """Refuse at the door what the graph's intake would refuse mid-run (same rules: engine.inquiry)."""
    try:
        validate(payload, ctx)
    except InputError as exc:
        raise from_citewise(exc, names) from None
    return payload


def invoke(payload: dict[str, Any], ctx: Context, who: Caller, names: dict[str, str]) -> dict[str, Any]:
    from ..graphs.kb_agent import graph

    try:
        return graph.invoke(payload, config=run_config("http", user=who.user), context=ctx)
    except CitewiseError as exc:
        raise from_citewise(exc, names) from None


def sse(event: str, data: Any) -> bytes:
    # ASCII only: U+0085, U+2028 and the like are line breaks to many clients' line splitters (Python's
    # splitlines among them), and an event cut there is not JSON any more. Escaped, every client agrees.
    return f"event: {event}\ndata: {json.dumps(data, default=str)}\n\n".encode()


async def graph_events(payload: dict[str, Any], ctx: Context, config: dict[str, Any], names: dict[str, str],
                       sources: bool = True) -> AsyncIterator[tuple[str, Any]]:
    """The graph's stream as (event, data): `sources` once retrieval is done (before generation),
    `delta` for each generated piece of text, `status` per finished step, and the final state as
    `final` (or `error`). With a chat model the deltas are its raw structured-output tokens; the
    verified answer is in the final event either way."""
    from ..graphs.kb_agent import graph

    final: dict[str, Any] = {}
    try:
        async for kind, chunk in graph.astream(payload, config=config, context=ctx,
                                               stream_mode=["updates", "custom", "messages", "values"]):
            if kind == "updates":
                for node, update in (chunk or {}).items():
                    hits = ((update or {}).get("retrieval") or {}).get("hits") if isinstance(update, dict) else None
                    if node == "retrieve" and sources:
                        yield "sources", {"sources": [{"chunk_id": h["chunk_id"], "doc_id": h["doc_id"],
                                                       "title": h["title"], "score": h["score"]}
                                                      for h in hits or []]}
                    yield "status", {"node": node}
            elif kind == "custom" and isinstance(chunk, dict) and chunk.get("token"):
                yield "delta", {"text": chunk["token"]}
            elif kind == "messages":
                message, meta = chunk
                content = getattr(message, "content", None)
                if meta.get("langgraph_node") == "generate" and isinstance(content, str) and content:
                    yield "delta", {"text": content}
            elif kind == "values":
                final = chunk
    except CitewiseError as exc:
        yield "error", from_citewise(exc, names).body()
        return
    except Exception:  # a bug: the response is already under way, so it ends with an error event, and is logged
        log.exception("the answer stream failed")
        yield "error", {"error": "internal_error", "message": "the answer failed; the server log has the details",
                        "detail": []}
        return
    yield "final", final


def answer_body(out: dict[str, Any]) -> dict[str, Any]:
    return {**out, "query_id": (out.get("metadata") or {}).get("query_id")}


# --- the 401(k) engine's endpoints ---------------------------------------------------------------
INQUIRY = {"question": "inquiry"}


def engine_route(body: RequiredDataRequest, request: Request, response: Response, mode: str,
                 **extra: Any) -> dict[str, Any]:
    """One graph run for an engine route: the caller's identity and settings, the inquiry as graph input
    (checked at the door like the graph's intake would), the output with its query-log id."""
    who = caller(request)
    ctx = make_context(body.context)
    payload = checked_payload({"question": body.inquiry, "filters": facet_filter(body),
                               "collected_data": body.collected_data or {}, "mode": mode, **extra}, ctx, INQUIRY)
    out = answer_body(invoke(payload, ctx, who, INQUIRY))
    response.headers[QUERY_ID_HEADER] = str(out["query_id"] or "")
    return out


@app.post("/v1/required-data", response_model=RequiredDataResponse, tags=["401(k) engine"],
          responses={**_ERRORS, 200: {"headers": _QUERY_ID}})
def required_data(body: RequiredDataRequest, request: Request, response: Response) -> dict[str, Any]:
    """The governing article and the data to collect before answering (no answer is generated)."""
    out = engine_route(body, request, response, "required_data")
    return {**out, "note": (out.get("response") or {}).get("text") or ""}


@app.post("/v1/answer", response_model=AnswerResponse, tags=["401(k) engine"],
          responses={**_ERRORS, 200: {"headers": _QUERY_ID}})
def answer(body: AnswerRequest, request: Request, response: Response) -> dict[str, Any]:
    """A checked, cited answer: decision, confidence, response sections, citations, guardrails, metadata."""
    return engine_route(body, request, response, "answer", max_tokens=body.max_tokens)


@app.post("/v1/artifacts", response_model=ArtifactResponse, tags=["401(k) engine"],
          responses={**_ERRORS, 200: {"headers": _QUERY_ID}})
def artifacts(body: ArtifactRequest, request: Request, response: Response) -> dict[str, Any]:
    """A cited artifact (checklist, workflow, call script, brief, blueprint) about the inquiry, checked like
    an answer: every item cited and verified; a subject the KB cannot support abstains with no content."""
    return engine_route(body, request, response, "artifact", max_tokens=body.max_tokens,
                        artifact_type=body.artifact_type)


@app.post("/v1/answer/stream", tags=["401(k) engine"],
          responses={**_ERRORS, 200: {"description": (
              "Server-sent events: `status` at once (with the query id), `sources` when retrieval is done "
              "(before generation), `delta` for each piece of generated text, `status` per finished step, then "
              "`answer` (the /v1/answer body) or `error` (an ErrorBody)."),
                               "content": _ANSWER_SSE, "headers": _QUERY_ID}})
async def answer_stream(body: AnswerRequest, request: Request) -> StreamingResponse:
    """/v1/answer as server-sent events; the first event is sent before any retrieval or generation."""
    # Files may be read on the way (token store, tokenizer): never on the event loop.
    who = await asyncio.to_thread(caller, request)
    ctx = make_context(body.context)
    payload = await asyncio.to_thread(checked_payload, {
        "question": body.inquiry, "filters": facet_filter(body), "collected_data": body.collected_data or {},
        "max_tokens": body.max_tokens, "mode": "answer"}, ctx, INQUIRY)
    config = run_config("http", user=who.user)
    query_id = config["metadata"]["citewise_query_id"]

    async def events() -> AsyncIterator[bytes]:
        yield sse("status", {"status": "started", "query_id": query_id})
        async for event, data in graph_events(payload, ctx, config, INQUIRY):
            if event == "final":
                data = AnswerResponse.model_validate(answer_body(data)).model_dump(mode="json")
                event = "answer"
            yield sse(event, data)

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={QUERY_ID_HEADER: query_id, "Cache-Control": "no-cache"})


# --- retrieval and the query log ----------------------------------------------------------------
@app.post("/v1/query", response_model=QueryResponse, tags=["retrieval"],
          responses={**_ERRORS, 200: {"headers": _QUERY_ID}})
def query(body: QueryRequest, request: Request, response: Response) -> dict[str, Any]:
    """Retrieval only: hybrid search under the filters (and the caller's access), scored passages."""
    who = caller(request)
    ctx = make_context(body.context)
    names = {"question": "query"}
    checked_payload({"question": body.query, "filters": body.filters or {}}, ctx, names)
    try:
        with querylog.surface("http"):
            out = search_passages(body.query, ctx=ctx, filters=body.filters or {}, k=body.top_k, access=who.access)
    except CitewiseError as exc:
        raise from_citewise(exc, names) from None
    response.headers[QUERY_ID_HEADER] = str(out["query_id"] or "")
    return out


@app.get("/v1/queries", response_model=QueryList, tags=["query log"], responses=_ERRORS)
def queries(request: Request,
            since: Annotated[str | None, Query(max_length=64, description=(
                "ISO-8601 date/time (UTC when no offset) or a duration back from now: 30m, 12h, 7d."))] = None,
            decision: Annotated[Decision | None, Query(description="Only answers with this decision.")] = None,
            limit: Annotated[int, Query(ge=1, le=1000, description="At most this many rows, newest first.")] = 100,
            ) -> dict[str, Any]:
    """The query log, newest first: the caller's own rows (an admin token reads everyone's)."""
    who = caller(request)
    try:
        after = querylog.parse_since(since) if since else None
    except ValueError as exc:
        raise invalid("since", str(exc)) from None
    store = querylog.open_log(make_context(None))
    if store is None:
        return {"queries": []}
    owner = None if who.access.can_read_log(None) else who.access.identity
    return {"queries": store.queries(since=after, decision=decision, limit=limit, owner=owner)}


@app.get("/v1/queries/{query_id:path}", response_model=QueryRecord, tags=["query log"],
         responses={**_ERRORS, 404: {"model": ErrorBody, "description": "No such row (or not the caller's)."}})
def query_record(request: Request, query_id: Annotated[str, PathParam(max_length=100)]) -> dict[str, Any]:
    """One query-log row, if it is the caller's (another identity's row is reported as not found)."""
    who = caller(request)
    store = querylog.open_log(make_context(None))
    row = store.query(query_id) if store is not None else None
    if row is None or not who.access.can_read_log(row.get("identity")):
        raise ApiError(404, "not_found", f"no query {query_id!r} in the log")
    return row


@app.get("/v1/health", response_model=Health, tags=["service"])
def health() -> dict[str, Any]:
    """Liveness, the knowledge base's size and generation, and how requests are authenticated."""
    ctx = make_context(None)
    kb = None
    if store_exists(ctx.home_path, ctx.database_url):
        store = open_store(ctx.home_path, ctx.database_url)
        docs, chunks = store.count()
        kb = {"generation": store.generation(), "documents": docs, "chunks": chunks}
    return {"status": "ok" if kb and kb["chunks"] else "not_ingested", "kb": kb, "query_log": ctx.query_log,
            "auth": mode()}


# --- the answer endpoint spec ---------------------------------------------------------------------
SPEC_NAMES = {"question": "query"}


def spec_context(body: SpecAnswerRequest) -> Context:
    return make_context(None, top_k=body.topK, relevance_threshold=body.similarityThreshold)


def spec_filter(body: SpecAnswerRequest) -> dict[str, Any]:
    parts = []
    if body.source is not None:
        parts.append({"source": body.source})
    if body.tags:
        parts.append({"tags": {"$in": list(body.tags)}})
    return combine_filters(*parts)


def spec_body(out: dict[str, Any], ctx: Context, started: float) -> dict[str, Any]:
    """The graph's output in the spec's words. Nothing relevant: its explicit message, no sources."""
    meta = out.get("metadata") or {}
    usage = meta.get("model") or {}
    citations = out.get("citations") or []
    ordinals: dict[str, int] = {}
    if citations:
        kb = open_snapshot(ctx, meta.get("kb_generation"))
        for c in citations:
            row = kb.row_of.get(c["chunk_id"])
            ordinals[c["chunk_id"]] = int(kb.passages.get(row)["ordinal"]) if row is not None else 0
    sources = [{"documentId": c["doc_id"], "title": c["title"], "chunkIndex": ordinals.get(c["chunk_id"], 0),
                "score": c["score"], "source": _text_or_none((c.get("metadata") or {}).get("source")),
                "tags": [str(t) for t in _as_list((c.get("metadata") or {}).get("tags"))]} for c in citations]
    return {"answer": (out.get("response") or {}).get("text", ""), "sources": sources,
            "contextUsed": [c["snippet"] for c in citations],
            "latencyMs": round((time.perf_counter() - started) * 1000),
            "promptTokens": int(usage.get("prompt_tokens") or 0),
            "completionTokens": int(usage.get("completion_tokens") or 0)}


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


@app.post("/api/v1/query/answer", response_model=SpecAnswerResponse, tags=["answer endpoint spec"],
          responses={**_ERRORS, 200: {"description": (
              "The answer (application/json), or with `stream: true` server-sent events: `status` at once, "
              "`delta` for each piece of generated text, then `done` with the full answer body (sources in the last "
              "event), or `error`."), "content": _SPEC_SSE, "headers": _QUERY_ID}})
async def spec_answer(body: SpecAnswerRequest, request: Request) -> Any:
    """The answer endpoint spec. When nothing relevant is found: 200, an explicit message, empty sources."""
    started = time.perf_counter()
    who = await asyncio.to_thread(caller, request)  # files may be read on the way: never on the event loop
    ctx = spec_context(body)
    payload = await asyncio.to_thread(checked_payload, {"question": body.query, "filters": spec_filter(body),
                                                        "mode": "answer"}, ctx, SPEC_NAMES)
    config = run_config("http", user=who.user)
    query_id = config["metadata"]["citewise_query_id"]
    headers = {QUERY_ID_HEADER: query_id}
    if not body.stream:
        from ..graphs.kb_agent import graph

        try:
            out = await graph.ainvoke(payload, config=config, context=ctx)
        except CitewiseError as exc:
            raise from_citewise(exc, SPEC_NAMES) from None
        spec = await asyncio.to_thread(spec_body, out, ctx, started)

        return JSONResponse(SpecAnswerResponse.model_validate(spec).model_dump(mode="json"), headers=headers)

    async def events() -> AsyncIterator[bytes]:
        yield sse("status", {"status": "started", "queryId": query_id})
        async for event, data in graph_events(payload, ctx, config, SPEC_NAMES, sources=False):
            if event == "status":
                continue
            if event == "final":
                spec = await asyncio.to_thread(spec_body, data, ctx, started)
                data, event = SpecAnswerResponse.model_validate(spec).model_dump(mode="json"), "done"
            yield sse(event, data)

    return StreamingResponse(events(), media_type="text/event-stream", headers={**headers, "Cache-Control": "no-cache"})


# --- the OpenAPI document (committed as server/openapi.json; tests/test_http_api.py keeps them equal) ----
def build_openapi() -> dict[str, Any]:
    """FastAPI's document with our error model: 400 instead of 422, bearer auth on every route but health."""
    schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    schema.setdefault("components", {}).setdefault("securitySchemes", {})["bearer"] = {
        "type": "http", "scheme": "bearer",
        "description": "A token from the server's token store (CITEWISE_AUTH_TOKENS_FILE); none needed when the "
                       "server runs without one."}
    for path, ops in schema["paths"].items():
        for op in ops.values():
            op["responses"].pop("422", None)
            if path in PUBLIC_PATHS:
                op["security"] = []
                op["responses"].pop("401", None)
            else:
                op["security"] = [{"bearer": []}]
    for name in ("HTTPValidationError", "ValidationError"):
        schema["components"].get("schemas", {}).pop(name, None)
    return schema


_OPENAPI = build_openapi()  # built once from this app's own routes, before the LangGraph server adds its routes


def openapi() -> dict[str, Any]:
    """The document served at /v1/openapi.json (FastAPI would rebuild it from every mounted route)."""
    return _OPENAPI


app.openapi = openapi  # type: ignore[method-assign]


def openapi_text() -> str:
    """The committed form of the document (stable key order, one trailing newline)."""
    return json.dumps(_OPENAPI, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
