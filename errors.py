"""Error types whose messages are meant for people.

The CLI prints `str(error)` on one line and exits 2; the Python API lets them propagate; the
LangGraph server returns the message to the client and logs one line (see `graphs/server_log.py`).
Anything that is not a `CitewiseError` is a bug and is allowed to surface as one.

`CitewiseError` is a `ValueError` because that is how langgraph-api tells a caller's mistake from a
server fault: it returns the message of a ValueError to the client and replaces any other
exception's message with "An internal error occurred".
"""

from __future__ import annotations


class CitewiseError(ValueError):
    """Base class: the message is complete and user-facing."""


class InputError(CitewiseError, ValueError):
    """The caller asked for something malformed (question, filter, option, collected value)."""


class IngestError(CitewiseError):
    """A source file could not be read or parsed; ingestion skips it and reports why."""


class NotIngestedError(CitewiseError):
    """The knowledge-base home holds no ingested documents or its indexes are missing."""


class ConfigError(CitewiseError):
    """Configuration is inconsistent (e.g. an index built with another embedding model)."""


class StoreError(CitewiseError):
    """The knowledge base's store cannot be used: a corrupted, unreadable, locked, read-only or full
    `citewise.db`, a home that is a file or not writable, or a PostgreSQL database that is unreachable,
    refuses the login or has a wrong URL. The message names the file (or the redacted URL) and what to
    do; nothing is deleted."""
