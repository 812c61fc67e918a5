"""The development token store: bearer token -> identity (namespaces it may read, clearance, admin).

Configured by the operator, never by a request:
  CITEWISE_AUTH_TOKENS_FILE   a JSON file (re-read when it changes), or
  CITEWISE_AUTH_TOKENS        the same JSON inline (an environment setting, e.g. in langgraph.json "env").

    {"dev-token-acme": {"identity": "alice", "namespaces": ["acme"], "clearance": "internal"},
     "sha256:9f86d081...": {"identity": "ops", "namespaces": ["*"], "clearance": "restricted", "admin": true}}

A key is the token itself or `sha256:` and the hex digest of it (so the file need not hold the
secret). `namespaces` lists the tenants the identity reads ("*": all); `clearance` is the highest
confidentiality level it reads (public < internal < confidential < restricted); `admin` reads every
identity's query-log rows. With neither setting, the server is open: every request is the
`anonymous` identity, which reads everything (local development, as before tokens existed).

Production: keep tokens out of files in the image (a secret store mounting the file, hashed keys),
or replace `resolve` here with the verification of your identity provider's JWTs,
mapping its claims to the same three fields.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.access import ALL_NAMESPACES
from ..errors import ConfigError
from ..kb.access import LEVELS, valid_namespace

ENV_FILE, ENV_INLINE = "CITEWISE_AUTH_TOKENS_FILE", "CITEWISE_AUTH_TOKENS"
ANONYMOUS: dict[str, Any] = {"identity": "anonymous", "namespaces": [ALL_NAMESPACES], "clearance": LEVELS[-1],
                             "admin": True}


@dataclass(frozen=True)
class TokenTable:
    by_token: dict[str, dict[str, Any]]
    by_digest: dict[str, dict[str, Any]]

    def lookup(self, token: str) -> dict[str, Any] | None:
        """The identity of a token; digests are compared in constant time."""
        found = None
        for known, identity in self.by_token.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                found = identity
        digest = hashlib.sha256(token.encode()).hexdigest()
        for known, identity in self.by_digest.items():
            if hmac.compare_digest(known, digest):
                found = identity
        return found


def parse_tokens(data: Any, where: str) -> TokenTable:
    """Validate a token table; ConfigError names the entry and the field that is wrong."""
    if not isinstance(data, dict) or not data:
        raise ConfigError(f"{where}: must be a non-empty JSON object of token -> identity")
    by_token: dict[str, dict[str, Any]] = {}
    by_digest: dict[str, dict[str, Any]] = {}
    for key, entry in data.items():
        label = f"{where}: token {key[:12]}..."
        if not isinstance(key, str) or len(key) < 8:
            raise ConfigError(f"{where}: a token must be a string of at least 8 characters")
        if not isinstance(entry, dict):
            raise ConfigError(f"{label} must map to an object with identity, namespaces, clearance")
        identity = entry.get("identity")
        if not isinstance(identity, str) or not identity.strip() or identity == ANONYMOUS["identity"]:
            raise ConfigError(f"{label}: identity must be a non-empty string other than 'anonymous'")
        namespaces = entry.get("namespaces")
        if not isinstance(namespaces, list) or not all(n == ALL_NAMESPACES or valid_namespace(n) for n in namespaces):
            raise ConfigError(f"{label}: namespaces must be a list of namespace names (or '*')")
        clearance = entry.get("clearance")
        if clearance not in LEVELS:
            raise ConfigError(f"{label}: clearance must be one of {', '.join(LEVELS)}")
        admin = entry.get("admin", False)
        if not isinstance(admin, bool):
            raise ConfigError(f"{label}: admin must be true or false")
        clean = {"identity": identity, "namespaces": list(namespaces), "clearance": clearance, "admin": admin}
        if key.startswith("sha256:"):
            by_digest[key[7:].lower()] = clean
        else:
            by_token[key] = clean
    return TokenTable(by_token, by_digest)


class TokenStore:
    """The configured table, re-read when its file changes (so tokens can be added without a restart)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stamp: tuple[str, float] | None = None
        self._table: TokenTable | None = None

    def configured(self) -> bool:
        return bool(os.environ.get(ENV_FILE) or os.environ.get(ENV_INLINE))

    def table(self) -> TokenTable | None:
        """The current table, or None when no token store is configured (the server is open)."""
        path, inline = os.environ.get(ENV_FILE), os.environ.get(ENV_INLINE)
        if not path and not inline:
            return None
        with self._lock:
            if path:
                try:
                    stamp = (path, Path(path).stat().st_mtime)
                except OSError:
                    raise ConfigError(f"{ENV_FILE}={path}: cannot read the token file") from None
                if stamp != self._stamp or self._table is None:
                    try:
                        data = json.loads(Path(path).read_text(encoding="utf-8"))
                    except (OSError, ValueError) as exc:
                        raise ConfigError(f"{ENV_FILE}={path}: not a readable JSON file ({exc})") from None
                    self._table, self._stamp = parse_tokens(data, path), stamp
            elif self._stamp != ("inline", float(hash(inline))) or self._table is None:
                try:
                    data = json.loads(inline or "")
                except ValueError as exc:
                    raise ConfigError(f"{ENV_INLINE} is not valid JSON ({exc})") from None
                self._table, self._stamp = parse_tokens(data, ENV_INLINE), ("inline", float(hash(inline)))
            return self._table


STORE = TokenStore()


def bearer(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (None when absent or another scheme)."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def resolve(authorization: str | None) -> dict[str, Any] | None:
    """The identity of a request's Authorization header: ANONYMOUS when no token store is configured,
    None when a store is configured and the token is missing or unknown."""
    table = STORE.table()
    if table is None:
        return dict(ANONYMOUS)
    token = bearer(authorization)
    return table.lookup(token) if token else None
