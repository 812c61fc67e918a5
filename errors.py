"""Error types whose messages are meant for people.

The CLI prints `str(error)` on one line and exits 2; the Python API lets them propagate. Anything
that is not a `CitewiseError` is a bug and is allowed to surface as one.
"""

from __future__ import annotations


class CitewiseError(Exception):
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
    """The knowledge base's database cannot be used (unreachable, refused the login, wrong URL)."""
