"""Shared fixtures: one ingested copy of the sample KB per test session (embeddings cached on disk)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.paths import SAMPLE_KB

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("LANGSMITH_TEST_TRACKING", "false")
for var in [v for v in os.environ if v.startswith("CITEWISE_") and v != "CITEWISE_CACHE_DIR"
            and not v.startswith("CITEWISE_TEST_")]:
    del os.environ[var]  # tests define their own configuration (CITEWISE_TEST_* say where PostgreSQL is)


@pytest.fixture(scope="session")
def kb_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from citewise.kb.ingest import ingest

    home = tmp_path_factory.mktemp("kb-home")
    summary = ingest([SAMPLE_KB], home, progress=False)
    assert summary["errors"] == [], summary["errors"]
    return home


@pytest.fixture
def pg_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A URL whose search_path is a fresh schema of the test database (a clean knowledge base per test).

    Skipped only outside CI when no server was given; in CI (CITEWISE_TEST_REQUIRE_POSTGRES) it fails.
    The test's pools and listeners are closed after it, so connections do not pile up on the server.
    """
    from tests.pg import fresh_schema_url

    yield fresh_schema_url(request.node.name)
    from citewise.store.postgres import close_pools

    close_pools()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """Runs a test on both stores: "" is SQLite in the home, else a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield ""
        return
    from tests.pg import fresh_schema_url

    yield fresh_schema_url(request.node.name)
    from citewise.store.postgres import close_pools

    close_pools()


@pytest.fixture
def kb_copy(tmp_path: Path) -> Path:
    """A private, writable copy of the sample KB sources."""
    dest = tmp_path / "kb"
    shutil.copytree(SAMPLE_KB, dest)
    return dest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Numbers some tests measure (e.g. the sample-questions pass rate), shown in every run's summary."""
    for outcome in ("passed", "failed"):
        for report in terminalreporter.stats.get(outcome, []):
            for name, value in getattr(report, "user_properties", []):
                if name.startswith("report:"):
                    terminalreporter.write_line(f"{name[7:]}: {value}")
