"""Every request the server takes, before any route sees it: bounded in size, personal data masked in runs.

The LangGraph server stores a run's input (the thread, the run record, checkpoints) before the graph's
first node can mask it, so the masking the engine does at entry (engine/inquiry.validate) comes too
late for what the server keeps. This ASGI middleware, registered on the custom app, runs in front of
the built-in run API as well (langgraph.json "http", middleware first): it masks personal data in the
`input` and `command.resume` of run-creating requests with the engine's own patterns, so the server
never holds the raw values; and it answers 413 to a body over `CITEWISE_MAX_REQUEST_BYTES` (default
1 MiB) instead of reading it into memory.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ..engine.privacy import masked

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

ENV_MAX_BYTES = "CITEWISE_MAX_REQUEST_BYTES"
DEFAULT_MAX_BYTES = 1 << 20
# POST /runs, /runs/stream, /runs/wait, /runs/batch and the same under /threads/{id}: what starts a run.
RUN_PATH = re.compile(r"^/(?:threads/[^/]+/)?runs(?:/stream|/wait|/batch)?/?$")
MAX_DEPTH = 32


def max_request_bytes() -> int:
    raw = os.environ.get(ENV_MAX_BYTES, "")
    try:
        return max(1024, int(raw)) if raw else DEFAULT_MAX_BYTES
    except ValueError:
        return DEFAULT_MAX_BYTES


def mask_tree(value: Any, depth: int = 0) -> Any:
    """Every string in a JSON value masked (keys kept: they name fields, not people)."""
    if depth > MAX_DEPTH:
        return value  # deeper than any run input; the route refuses it on its own terms
    if isinstance(value, str):
        return masked(value)
    if isinstance(value, list):
        return [mask_tree(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: mask_tree(v, depth + 1) for k, v in value.items()}
    return value


def mask_run_payload(payload: Any) -> Any:
    """A run request (or a batch of them) with its caller data masked: `input` and `command.resume`."""
    if isinstance(payload, list):
        return [mask_run_payload(p) for p in payload]
    if not isinstance(payload, dict):
        return payload
    out = dict(payload)
    if "input" in out:
        out["input"] = mask_tree(out["input"])
    command = out.get("command")
    if isinstance(command, dict) and "resume" in command:
        out["command"] = {**command, "resume": mask_tree(command["resume"])}
    return out


class RequestGuard:
    """Pure ASGI (no BaseHTTPMiddleware): streaming responses pass through untouched."""

    def __init__(self, app: ASGIApp, max_bytes: int | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS", "DELETE"):
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes or max_request_bytes()
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await too_large(send, limit)
            return
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > limit:
                await too_large(send, limit)
                return
        data = bytes(body)
        if scope["method"] == "POST" and RUN_PATH.match(scope.get("path", "")):
            data = masked_body(data)
            scope = {**scope, "headers": [(k, v) for k, v in scope.get("headers") or [] if k != b"content-length"]
                     + [(b"content-length", str(len(data)).encode())]}
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": data, "more_body": False}
            return await receive()  # after the body: the disconnect, when it comes

        await self.app(scope, replay, send)


def masked_body(data: bytes) -> bytes:
    """The body with personal data masked; a body that is not JSON passes as is (the route refuses it)."""
    try:
        payload = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return data
    return json.dumps(mask_run_payload(payload)).encode()


async def too_large(send: Send, limit: int) -> None:
    body = json.dumps({"detail": f"request body is larger than {limit} bytes"}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
