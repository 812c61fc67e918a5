"""Refusals at the door: every invalid request is a 400 whose `detail` names each offending field.

One status for every invalid payload (not FastAPI's 422): the answer endpoint spec asks for 400 on
an empty query, an out-of-range topK, a similarityThreshold above 1 and a non-boolean stream, and a
client should not have to know which route prefers which code. Engine refusals (InputError: a
filter in the wrong shape, a token budget too small for the context share) and settings the server
cannot serve (ConfigError: a model without an API key) are 400 too, with the field they concern.
Only a knowledge base that was never ingested is the server's own problem (503).
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from ..errors import CitewiseError, ConfigError, InputError, NotIngestedError


class ApiError(Exception):
    """A refusal with its status, code, message and field-level items."""

    def __init__(self, status: int, error: str, message: str, detail: list[dict[str, str]] | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.error, self.message = status, error, message
        self.detail, self.headers = detail or [], headers

    def body(self) -> dict[str, Any]:
        return {"error": self.error, "message": self.message, "detail": self.detail}


def invalid(field: str, message: str) -> ApiError:
    return ApiError(400, "invalid_request", message, [{"field": field, "message": message}])


# Engine messages start with the input they concern (engine/inquiry.py, retrieval/filters.py).
_ENGINE_FIELDS = (("question", "question"), ("filter", "filters"), ("collected_data", "collected_data"),
                  ("max_tokens", "max_tokens"), ("mode", "mode"), ("invalid configuration", "context"),
                  ("unknown configuration", "context"), ("llm_model", "context.llm_model"),
                  ("reranker", "context.reranker"), ("cross-encoder", "context.reranker"))


def from_citewise(exc: CitewiseError, names: dict[str, str] | None = None) -> ApiError:
    """The HTTP refusal for an engine error; `names` renames engine inputs to the route's field names
    (the engine's `question` is the seeds' `inquiry` or `query`)."""
    message = str(exc)
    if isinstance(exc, NotIngestedError):
        return ApiError(503, "not_ingested", message)
    if isinstance(exc, InputError | ConfigError):
        field = next((f for prefix, f in _ENGINE_FIELDS if message.startswith(prefix)), "")
        field = (names or {}).get(field, field)
        if field and message.startswith("question"):
            message = field + message[len("question"):]
        return invalid(field, message)
    return ApiError(400, "invalid_request", message, [{"field": "", "message": message}])


def _field(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    return ".".join(parts)


def _message(err: dict[str, Any]) -> str:
    kind, msg = err.get("type", ""), str(err.get("msg", ""))
    if kind == "json_invalid":
        return "the request body is not valid JSON"
    if kind == "missing" and tuple(err.get("loc", ())) == ("body",):
        return "a JSON request body is required"
    if kind == "extra_forbidden":
        return "unknown field (not part of this request)"
    return msg.removeprefix("Value error, ")


def validation_detail(exc: RequestValidationError) -> list[dict[str, str]]:
    out = []
    for err in exc.errors():
        loc = tuple(err.get("loc", ()))
        field = "" if err.get("type") == "json_invalid" else _field(loc)
        out.append({"field": field, "message": _message(err)})
    return out


async def on_validation_error(request: Request, exc: Exception) -> JSONResponse:
    if not isinstance(exc, RequestValidationError):  # registered for this type only
        raise exc
    detail = validation_detail(exc)
    first = detail[0] if detail else {"field": "", "message": "invalid request"}
    where = f"{first['field']}: " if first["field"] and not first["message"].startswith(first["field"]) else ""
    more = f" (and {len(detail) - 1} more)" if len(detail) > 1 else ""
    return JSONResponse({"error": "invalid_request", "message": f"{where}{first['message']}{more}", "detail": detail},
                        status_code=400)


async def on_api_error(request: Request, exc: Exception) -> JSONResponse:
    if not isinstance(exc, ApiError):
        raise exc
    if exc.status == 401:  # the same body the LangGraph server's auth middleware sends
        return JSONResponse({"detail": exc.message}, status_code=401, headers=exc.headers)
    return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)


OUR_PREFIXES = ("/v1/", "/api/v1/")


async def on_http_exception(request: Request, exc: Exception) -> Response:
    """HTTP errors raised by the framework (a body that cannot be decoded, ...): our error body on our
    routes. The LangGraph server shares this app's handlers, so its own routes keep their `{"detail"}`."""
    if not isinstance(exc, HTTPException):
        raise exc
    headers = getattr(exc, "headers", None)
    if exc.status_code < 200 or exc.status_code in (204, 205, 304):
        return Response(status_code=exc.status_code, headers=headers)
    detail = exc.detail if isinstance(exc.detail, str) and exc.detail else "request failed"
    if not request.url.path.startswith(OUR_PREFIXES) or exc.status_code == 401:
        return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=headers)
    error = {400: "invalid_request", 404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return JSONResponse({"error": error, "message": detail, "detail": [{"field": "", "message": detail}]},
                        status_code=exc.status_code, headers=headers)
