"""The PostgreSQL server the tests use: `./run test` (and `./run pg`) start one and export its URL.

Each test gets its own schema in that database (`options=-csearch_path=...` in the URL), which is
cheaper than a database per test and keeps tests independent. Without a server the PostgreSQL tests
are skipped, except in CI, which sets CITEWISE_TEST_REQUIRE_POSTGRES=1 and so fails instead.
"""

from __future__ import annotations

import os
import re
import uuid
from urllib.parse import quote

import pytest

URL = os.environ.get("CITEWISE_TEST_DATABASE_URL", "")
REQUIRED = os.environ.get("CITEWISE_TEST_REQUIRE_POSTGRES", "") not in ("", "0", "false")


def server_url() -> str:
    """The test database's URL; skips (or, in CI, fails) when there is none or it does not answer."""
    if not URL:
        if REQUIRED:
            pytest.fail("CI requires PostgreSQL: CITEWISE_TEST_DATABASE_URL is not set (./run test sets it)")
        pytest.skip("no PostgreSQL server (run the tests with ./run test, or export ./run pg's URL)")
    import psycopg

    try:
        psycopg.connect(URL, connect_timeout=5).close()
    except psycopg.Error as exc:
        if REQUIRED:
            pytest.fail(f"CI requires PostgreSQL, and {URL} does not answer: {exc}")
        pytest.skip(f"PostgreSQL at {URL} does not answer: {exc}")
    return URL


def fresh_schema_url(label: str) -> str:
    """A new, empty schema in the test database, and a URL whose search_path selects it."""
    import psycopg

    url = server_url()
    schema = f"t_{re.sub(r'[^a-z0-9]+', '_', label.lower())[:40]}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options={quote(f'-csearch_path={schema}')}"


def schema_of(url: str) -> str:
    match = re.search(r"search_path%3D([a-z0-9_]+)", url)
    assert match, url
    return match.group(1)
