"""Every request the server takes, before any route sees it: bounded in size, personal data masked.

The LangGraph server stores what callers send (threads and their metadata, state updates, run input,
commands, crons, store items, assistants) before the graph's first node could mask it, so the masking
the engine does at entry (engine/inquiry.validate) comes too late for what the server keeps. This ASGI
middleware, registered on the custom app, runs in front of the built-in API as well (langgraph.json
"http", middleware first). For every write (POST, PUT, PATCH) outside citewise's own `/v1` and
`/api/v1` routes (which mask at entry themselves) it masks personal data in every string and whole number of the JSON
body with the engine's own patterns, so the server never holds the raw values; UUIDs and settings
(webhook, limit: SETTINGS) are kept. Personal data in a key, an id (thread_id...) or a store item's
namespace or key is refused (400) rather than masked, since masked alike two of them would merge.
It answers 400 to a body nested deeper than any request needs or that is not JSON (instead of passing
what it cannot mask) and 413 to a body over
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
OWN_ROUTES = re.compile(r"^/(?:api/)?v1(?:/|$)")  # citewise's HTTP contracts: validated and masked by the engine
UUID = re.compile(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})")


class Refused(ValueError):
    """A body the guard cannot pass on safely: refused with 400, never passed on unmasked."""


# Settings, never a person's data: passed as they are (masking a webhook's credentials or a large
# `limit` would break them).
SETTINGS = frozenset({"webhook", "limit", "offset", "schedule", "after_seconds", "recursion_limit", "ttl"})
# What a thing is found by: personal data there is refused, since masked alike two ids would be one.
IDS = frozenset({"assistant_id", "thread_id", "run_id", "checkpoint_id", "graph_id", "cron_id"})
STORE_IDS = ("namespace", "namespace_prefix", "key")  # a store item's ids (on /store routes)


def max_request_bytes() -> int:
    raw = os.environ.get(ENV_MAX_BYTES, "")
    try:
        return max(1024, int(raw)) if raw else DEFAULT_MAX_BYTES
    except ValueError:
        return DEFAULT_MAX_BYTES


def mask_tree(value: Any, depth: int = 0) -> Any:
    """Every string and whole number of a JSON value masked; UUIDs, ids and SETTINGS kept.

    A key with personal data in it is refused rather than masked: two keys masked alike would merge, and
    one of the values would be lost without a word."""
    if depth > MAX_DEPTH:
        raise Refused(f"the request body is nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, list):
        return [mask_tree(v, depth + 1) for v in value]
    if isinstance(value, dict):
        for key, item in value.items():
            if mask_text(key) != key:
                raise Refused("a key of the request body holds personal data; keys name fields, values hold data")
            if key in IDS and isinstance(item, str) and mask_text(item) != item:
                raise Refused(f"{key} holds personal data; use an opaque id")
        return {k: v if k in SETTINGS or k in IDS else mask_tree(v, depth + 1) for k, v in value.items()}
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1e11:
        return mask_scalar(int(value)) if mask_scalar(int(value)) != int(value) else value
    return mask_scalar(value)


def check_store_ids(payload: Any) -> None:
    """A store item's namespace and key are how it is found: personal data there is refused (masked, two
    people's items would land on one id and overwrite each other)."""
    items = payload if isinstance(payload, list) else [payload]
    for item in items:
        if not isinstance(item, dict):
            continue
        for name in STORE_IDS:
            ids = item.get(name)
            for part in ids if isinstance(ids, list) else [ids]:
                if isinstance(part, str) and mask_text(part) != part:
                    raise Refused(f"the store {name} holds personal data; use an id instead")


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
        path = route_path(scope)
        if scope["method"] in WRITES and not OWN_ROUTES.match(path):
            try:
                data = masked_body(data, store=path.startswith("/store"))
            except Refused as exc:
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


def masked_body(data: bytes, store: bool = False) -> bytes:
    """The body with personal data masked. An empty body passes (some writes have none); one that is not
    JSON, or that the parser gives up on (nesting, huge numbers), is refused: passing it on would pass it
    unmasked to a server whose own parser may accept it."""
    if not data.strip():
        return data
    try:
        payload = json.loads(data)
    except RecursionError:
        raise Refused(f"the request body is nested more than {MAX_DEPTH} levels deep") from None
    except (ValueError, UnicodeDecodeError):
        raise Refused("the request body is not valid JSON") from None
    if store:
        check_store_ids(payload)
    return json.dumps(mask_tree(payload)).encode()


async def too_large(send: Send, limit: int) -> None:
    await refuse(send, 413, f"request body is larger than {limit} bytes")


async def refuse(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
