"""LangGraph custom auth (langgraph.json "auth"): a bearer token becomes an identity; threads are owned.

The identity (`identity`, `namespaces`, `clearance`, `admin`; see server/tokens.py) is what the
LangGraph server hands every run as `config["configurable"]["langgraph_auth_user"]`; the graph's
intake turns it into the access filter of every search (engine/access.py). The HTTP routes
(server/app.py) receive the same identity (`request.user`, langgraph.json
`"enable_custom_route_auth": true`) and pass it to the graph under the same key.

Resources: a thread (and its runs, state and history) is visible only to the identity that created
it; crons likewise. Assistants can be read by everyone (the graph's assistant is shared) and
changed only by admins. The store is per identity. Anything not listed is refused.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph_sdk import Auth

from ..errors import ConfigError
from .tokens import STORE, resolve

auth = Auth()

# Paths that answer without a token: the route list and the health probe.
PUBLIC_PATHS = frozenset({"/v1/health", "/v1/openapi.json", "/v1/docs"})
NOBODY: dict[str, Any] = {"identity": "public", "namespaces": [], "clearance": "", "admin": False}


@auth.authenticate
async def authenticate(authorization: str | None, path: str) -> dict[str, Any]:
    """The identity of the request's bearer token; 401 when tokens are configured and it is missing
    or unknown (public paths still answer, as an identity that can read nothing)."""
    try:
        identity = await asyncio.to_thread(resolve, authorization)  # may read the token file: not on the loop
    except ConfigError as exc:  # a broken token file refuses everyone rather than letting anyone in
        raise Auth.exceptions.HTTPException(status_code=401, detail=f"authentication unavailable: {exc}") from None
    if identity is None:
        if path in PUBLIC_PATHS:
            return dict(NOBODY)
        detail = "a bearer token is required" if not authorization else "unknown or malformed bearer token"
        raise Auth.exceptions.HTTPException(status_code=401, detail=detail,
                                            headers={"WWW-Authenticate": 'Bearer realm="citewise"'})
    return identity


def _owner(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    """Stamp the owner on what is created, and filter what is read to the owner's own."""
    owner = ctx.user.identity
    if isinstance(value, dict):
        metadata = value.get("metadata")
        if metadata is None and ctx.action in ("create", "create_run", "update"):
            metadata = value["metadata"] = {}
        if isinstance(metadata, dict) and ctx.action in ("create", "create_run", "update"):
            metadata["owner"] = owner
    return {"owner": owner}


@auth.on.threads
async def on_threads(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    """Threads (their runs, state, history) belong to whoever created them."""
    return _owner(ctx, value)


@auth.on.crons
async def on_crons(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    return _owner(ctx, value)


@auth.on.assistants
async def on_assistants(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Everyone may use and read the shared assistants; only admins may change them."""
    if ctx.action in ("read", "search"):
        return True
    return bool(ctx.user.get("admin"))


@auth.on.store
async def on_store(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Long-term memory is per identity: the namespace must start with the caller's identity."""
    namespace = tuple((value or {}).get("namespace") or ())
    return bool(namespace) and namespace[0] == ctx.user.identity


@auth.on
async def refuse_the_rest(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """A resource or action this file does not know is refused, not allowed by default."""
    return False


def mode() -> str:
    """'tokens' when a token store is configured, 'open' when every request is anonymous."""
    return "tokens" if STORE.configured() else "open"
