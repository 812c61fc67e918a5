"""Talking to an OpenAI-compatible chat model: the client, structured output, and a time budget.

Everything citewise asks a model (the answer, the grader, implied fields, reranking) goes through
`structured_call`: the pydantic schema is sent as a JSON-schema `response_format`, the reply is
validated here, and a malformed reply gets one repair turn. Any fault — HTTP errors, timeouts, a
200 with a body that is not JSON, a reply that never validates — is reported as `ModelFault`, which
callers turn into a fallback with a note; it never escapes as an internal error.

All model work of one answer shares one `ModelClock`: every call's timeout is what is left of it,
and retries (with backoff, on 429 / 5xx / timeouts / connection errors) happen inside it, so a
hanging server costs at most `llm_deadline` seconds per answer however many calls the answer makes.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..config import Context
from ..errors import ConfigError

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)
S = TypeVar("S", bound=BaseModel)


class ModelFault(Exception):
    """The model could not give a usable reply within the time budget; the message says why."""


@dataclass
class ModelClock:
    """Seconds of model work left for one answer; `spent` carries over an interrupt and resume."""

    limit: float
    spent: float = 0.0
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})

    def remaining(self) -> float:
        return self.limit - self.spent


def chat_model(ctx: Context) -> Any:
    """One client per configuration per process; retries are ours (inside the clock), not the client's."""
    key = (ctx.llm_model, ctx.llm_base_url, ctx.llm_temperature)
    with _LOCK:
        model = _MODELS.get(key)
        if model is None:
            from langchain_openai import ChatOpenAI

            api_key = operator_key(ctx.llm_base_url)
            if not api_key and not ctx.llm_base_url:
                raise ConfigError("llm_model is set but OPENAI_API_KEY is not (and no llm_base_url for a local server)")
            model = _MODELS[key] = ChatOpenAI(model=ctx.llm_model, base_url=ctx.llm_base_url or None,
                                              api_key=api_key or "not-needed", temperature=ctx.llm_temperature,
                                              max_retries=0, stream_usage=True)
        return model


def operator_key(base_url: str, setting: str = "llm_base_url") -> str | None:
    """OPENAI_API_KEY, but only for the endpoint the operator configured: a base URL a caller chose
    (where the operator opened that field) never receives the server's credentials."""
    return os.environ.get("OPENAI_API_KEY") if base_url == getattr(Context(), setting) else None


_MODELS: dict[tuple, Any] = {}
_LOCK = threading.Lock()


def response_format(schema: type[BaseModel]) -> dict[str, Any]:
    return {"type": "json_schema",
            "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": False}}


def invoke(model: Any, messages: list[tuple[str, str]], clock: ModelClock, *, per_call_timeout: float,
           retries: int, **kwargs: Any) -> Any:
    """One model call with retries and backoff, each attempt bounded by what is left of the clock."""
    import openai

    retryable = (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError,
                 openai.InternalServerError)
    attempt = 0
    while True:
        budget = min(per_call_timeout, clock.remaining())
        if budget <= 0.05:
            raise ModelFault(f"model time budget of {clock.limit:g}s used up")
        started = time.monotonic()
        try:
            reply = model.invoke(messages, timeout=budget, **kwargs)
        except retryable as exc:
            clock.spent += time.monotonic() - started
            attempt += 1
            if attempt > retries:
                raise ModelFault(f"model unavailable after {attempt} attempt(s): {type(exc).__name__}") from None
            pause = min(0.5 * 2 ** (attempt - 1), 8.0, max(0.0, clock.remaining() - 0.05))
            time.sleep(pause)
            clock.spent += pause
            continue
        except openai.APIError as exc:  # 4xx, or a body the client cannot parse
            clock.spent += time.monotonic() - started
            raise ModelFault(f"model request failed: {type(exc).__name__}: {str(exc)[:160]}") from None
        except Exception as exc:
            # A 200 whose body is not a chat completion fails inside the client, in ways that depend on the
            # body and the path: JSONDecodeError for a JSON content type; for an HTML page from a proxy the
            # client hands langchain a str (AttributeError: no .choices), and a stream of it yields no chunk
            # (AssertionError). Whatever the third-party call raised, the answer falls back, with the type noted.
            clock.spent += time.monotonic() - started
            raise ModelFault(f"model reply unreadable (not a chat completion): {type(exc).__name__}") from None
        clock.spent += time.monotonic() - started
        usage = getattr(reply, "usage_metadata", None) or {}
        clock.usage["prompt_tokens"] += int(usage.get("input_tokens") or 0)
        clock.usage["completion_tokens"] += int(usage.get("output_tokens") or 0)
        return reply


def structured_call(ctx: Context, messages: list[tuple[str, str]], schema: type[S], clock: ModelClock,
                    notes: dict[str, Any], *, max_tokens: int | None = None, tags: list[str] | None = None) -> S:
    """The model's reply parsed into `schema`; one repair turn on an invalid reply; ModelFault otherwise."""
    model = chat_model(ctx)
    if tags:
        model = model.with_config(tags=tags)
    kwargs: dict[str, Any] = {"response_format": response_format(schema)}
    if max_tokens:
        kwargs["max_tokens"] = max_tokens
    call = {"per_call_timeout": ctx.llm_timeout, "retries": ctx.llm_max_retries, **kwargs}
    raw = _content(invoke(model, messages, clock, **call))
    try:
        return schema.model_validate_json(_FENCE.sub("", raw).strip())
    except ValidationError as exc:
        error = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])
    notes["repair_attempts"] = notes.get("repair_attempts", 0) + 1
    repair = [*messages, ("assistant", raw[:4000]),
              ("user", f"That reply does not match the required JSON schema ({error}). Reply again with only "
                       "valid JSON for the schema.")]
    raw = _content(invoke(model, repair, clock, **call))
    try:
        return schema.model_validate_json(_FENCE.sub("", raw).strip())
    except ValidationError as exc:
        raise ModelFault(f"model output invalid after one repair: {exc.errors()[0]['msg']}") from None


def _content(reply: Any) -> str:
    content = getattr(reply, "content", "")
    if isinstance(content, str):
        return content
    try:
        return json.dumps(content)
    except (TypeError, ValueError):
        return str(content)
