"""Storage: the source of truth for documents and chunks; every index is derived from it.

SQLite (one file in the home) is the embedded default; PostgreSQL, chosen by a database URL
(`CITEWISE_DATABASE_URL` / `Context.database_url`), is the one many replicas share. Everything
outside this package opens a store through `open_store`, so the choice is made in one place.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ConfigError, StoreError
from .base import Store
from .sqlite import check_home

ENV_URL = "CITEWISE_DATABASE_URL"
SCHEMES = ("postgresql://", "postgres://")


def resolve_url(value: str | None = None) -> str:
    """The URL to use: the one given ("" means SQLite), else $CITEWISE_DATABASE_URL, checked."""
    url = (os.environ.get(ENV_URL, "") if value is None else value).strip()
    if url and not url.startswith(SCHEMES):
        raise ConfigError(f"database_url must start with postgresql:// (got {redact(url)!r}); leave it empty for "
                          "the SQLite store in the home")
    return url


def open_store(home: str | Path, database_url: str | None = None) -> Store:
    """The store of a knowledge base: PostgreSQL when a database URL is set, else `<home>/citewise.db`.

    `home` is where this process keeps derived files (index snapshots); with PostgreSQL it is a
    local cache, private to the replica. `database_url=None` reads $CITEWISE_DATABASE_URL.
    """
    url = resolve_url(database_url)
    if url:
        from .postgres import PostgresStore

        return PostgresStore(Path(home), url)
    from .sqlite import Store as SQLiteStore

    return SQLiteStore(Path(home))


def store_exists(home: str | Path, database_url: str | None = None) -> bool:
    """Whether there is a store to read: the SQLite file, or (PostgreSQL) a URL, which is always one."""
    if resolve_url(database_url):
        return True
    from .sqlite import Store as SQLiteStore

    return SQLiteStore.exists(Path(home))


def is_database_error(exc: BaseException) -> bool:
    """Whether an exception is the store's own failure, not one input's: ingest stops on it instead of
    skipping a file and failing the same way on the next.

    One mechanism for both stores: each translates its faults into `StoreError` where they happen (a
    damaged, locked, read-only or full SQLite file in store/sqlite.py; an unreachable server, a refused
    login or privilege, a read-only or full database in store/postgres.py), naming the file or the
    redacted URL. A driver exception that arrives untranslated (sqlite3's or psycopg's) is a fault of
    the store layer itself, never of the file being ingested, so it stops the ingest too.
    """
    import sqlite3
    import sys

    if isinstance(exc, StoreError | sqlite3.Error):
        return True
    psycopg = sys.modules.get("psycopg")  # imported only once a PostgreSQL store was opened
    return psycopg is not None and isinstance(exc, psycopg.Error)


def redact(url: str) -> str:
    """A URL fit for messages and logs: the password replaced."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


__all__ = ["Store", "check_home", "is_database_error", "open_store", "redact", "resolve_url", "store_exists"]
