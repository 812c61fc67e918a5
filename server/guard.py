"""Every request the server takes, before any route sees it: bounded in size, personal data masked.

The LangGraph server stores what callers send (threads and their metadata, state updates, run input,
commands, crons, store items, assistants) before the graph's first node could mask it, so the masking
the engine does at entry (engine/inquiry.validate) comes too late for what the server keeps. This ASGI
middleware, registered on the custom app, runs in front of the built-in API as well (langgraph.json
"http", middleware first). For every write (POST, PUT, PATCH) outside citewise's own `/v1` routes
(which mask at entry themselves) it masks personal data in every string, key and whole number of the
JSON body with the engine's own patterns, so the server never holds the raw values; ids (UUIDs) are
kept, since masking digits inside one would break the reference. It answers 400 to a body nested
deeper than any request needs (instead of passing what it cannot mask) and 413 to a body over
`CITEWISE_MAX_REQUEST_BYTES` (default 1 MiB) instead of reading it into memory. Paths are matched
below the mount prefix (`root_path`), so `LANGGRAPH_MOUNT_PREFIX` does not turn the masking off.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ..arguments import MAX_DEPTH
from ..engine.privacy import mask_scalar, masked

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

ENV_MAX_BYTES = "CITEWISE_MAX_REQUEST_BYTES"
DEFAULT_MAX_BYTES = 1 << 20
WRITES = ("POST", "PUT", "PATCH")
OWN_ROUTES = re.compile(r"^/v1(?:/|$)")  # citewise's HTTP contracts: validated and masked by the engine
UUID = re.compile(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})")


class TooDeep(ValueError):
    """A body nested deeper than MAX_DEPTH: refused, never passed on unmasked."""


def max_request_bytes() -> int:
    raw = os.environ.get(ENV_MAX_BYTES, "")
    try:
        return max(1024, int(raw)) if raw else DEFAULT_MAX_BYTES
    except ValueError:
        return DEFAULT_MAX_BYTES


def mask_tree(value: Any, depth: int = 0) -> Any:
    """Every string, key and whole number of a JSON value masked; UUIDs (ids) kept as they are."""
    if depth > MAX_DEPTH:
        raise TooDeep(f"the request body is nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, list):
        return [mask_tree(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {mask_text(k): mask_tree(v, depth + 1) for k, v in value.items()}
    return mask_scalar(value)


def mask_text(text: str) -> str:
    """Masked around the UUIDs in it (`checkpoint_ns` is "node:<uuid>"; a UUID's last group can be 12
    digits, which the card-number pattern would take)."""
    parts = UUID.split(text)  # the UUIDs are at the odd indexes
    return "".join(part if i % 2 else masked(part) for i, part in enumerate(parts))


def route_path(scope: Scope) -> str:
    """The path below the mount prefix: what the routes (and our patterns) see."""
    path, root = scope.get("path", ""), scope.get("root_path", "")
    return path[len(root):] if root and path.startswith(root) else path


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
        if scope["method"] in WRITES and not OWN_ROUTES.match(route_path(scope)):
            try:
                data = masked_body(data)
            except TooDeep as exc:
                await refuse(send, 400, str(exc))
                return
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
    except (ValueError, UnicodeDecodeError, RecursionError):
        return data
    return json.dumps(mask_tree(payload)).encode()


async def too_large(send: Send, limit: int) -> None:
    await refuse(send, 413, f"request body is larger than {limit} bytes")


async def refuse(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
