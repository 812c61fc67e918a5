"""What one caller may read: an identity's namespaces and clearance, as a filter nobody can relax.

The server's authentication turns a bearer token into an identity (server/auth.py); every surface
hands that identity to the engine, which ANDs `Access.filter()` with the caller's filters and the
detected facets on every search. Facet relaxation drops only detected facets, never this filter.
`UNRESTRICTED` (no identity: the CLI, the Python API, a server without tokens) reads everything,
as citewise always did.

The identity arrives in whatever shape the server produced it (a langgraph `ProxyUser`, a plain
dict after serialisation); `from_user` reads it by key, so the engine needs no LangGraph import.
An identity that does not say which namespaces it may read gets none: access fails closed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..kb.access import CONFIDENTIALITY_KEY, LEVELS, NAMESPACE_KEY, levels_up_to

ALL_NAMESPACES = "*"


@dataclass(frozen=True)
class Access:
    """An identity's reach. `namespaces` None means every namespace; an empty tuple means none."""

    identity: str = ""
    namespaces: tuple[str, ...] | None = None
    clearance: str = LEVELS[-1]
    admin: bool = False  # may read every identity's query-log rows
    restricted: bool = False  # False only for UNRESTRICTED (no identity at all)

    def filter(self) -> dict[str, Any]:
        """The metadata filter of what this identity may read ({} when it may read everything).

        A clause is left out only when it could exclude nothing (every namespace, the top clearance),
        so an identity that reads everything also reads documents indexed before namespaces existed.
        """
        if not self.restricted:
            return {}
        parts: list[dict[str, Any]] = []
        if self.namespaces is not None:
            parts.append({NAMESPACE_KEY: {"$in": list(self.namespaces)}})
        if self.clearance != LEVELS[-1]:
            parts.append({CONFIDENTIALITY_KEY: {"$in": levels_up_to(self.clearance)}})
        if not parts:
            return {}
        return parts[0] if len(parts) == 1 else {"$and": parts}

    def allows(self, metadata: Mapping[str, Any]) -> bool:
        """Whether a document or chunk with this metadata is readable (same rule as `filter`)."""
        if not self.restricted:
            return True
        if self.namespaces is not None and metadata.get(NAMESPACE_KEY) not in self.namespaces:
            return False
        return self.clearance == LEVELS[-1] or metadata.get(CONFIDENTIALITY_KEY) in levels_up_to(self.clearance)

    def can_read_log(self, owner: str | None) -> bool:
        """Query-log rows belong to the identity that asked; admins and unrestricted callers read all."""
        return not self.restricted or self.admin or (bool(self.identity) and owner == self.identity)

    def as_dict(self) -> dict[str, Any]:
        return {"identity": self.identity, "namespaces": None if self.namespaces is None else list(self.namespaces),
                "clearance": self.clearance, "restricted": self.restricted}


UNRESTRICTED = Access()


def _get(user: Any, key: str) -> Any:
    if isinstance(user, Mapping):
        return user.get(key)
    getter = getattr(user, "get", None)
    if callable(getter):
        try:
            return getter(key)
        except Exception:  # a user object whose `get` means something else
            pass
    return getattr(user, key, None)


def from_user(user: Any) -> Access:
    """The access of an authenticated user (server/auth.py's identity), or UNRESTRICTED for None."""
    if user is None:
        return UNRESTRICTED
    if isinstance(user, Access):
        return user
    identity = str(_get(user, "identity") or "")
    raw = _get(user, "namespaces")
    if isinstance(raw, str):
        raw = [raw]
    names = [str(n) for n in raw] if isinstance(raw, list | tuple) else []
    namespaces = None if ALL_NAMESPACES in names else tuple(dict.fromkeys(names))
    clearance = _get(user, "clearance")
    return Access(identity=identity, namespaces=namespaces,
                  clearance=clearance if clearance in LEVELS else "",  # unknown clearance reads nothing
                  admin=_get(user, "admin") is True, restricted=True)


def visible_facets(kb: Any, access_filter: dict[str, Any],
                   facets: Mapping[str, list[str]] | None = None) -> dict[str, list[str]]:
    """The facet values (all of the KB's, or the given ones) that occur in documents the caller may read.

    Facet values are content too: a record keeper that exists only in another tenant's articles
    must not be offered as a choice, detected in a question, accepted as collected data or listed
    as a covered topic.
    """
    source = kb.facets if facets is None else facets
    if not access_filter:
        return {facet: list(values) for facet, values in source.items()}
    out: dict[str, list[str]] = {}
    for facet, values in source.items():
        keep = [v for v in values if bool(kb.meta.mask({"$and": [access_filter, {facet: v}]}).any())]
        if keep:
            out[facet] = keep
    return out
