"""Start `langgraph dev` on a free loopback port for a test, and stop it afterwards (evals/devserver.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from citewise.evals.devserver import free_port
from citewise.evals.devserver import langgraph_dev as dev_server

__all__ = ["free_port", "langgraph_dev"]


@contextlib.contextmanager
def langgraph_dev(home: Path, log: Path, extra_env: dict[str, str] | None = None,
                  timeout: float = 120.0) -> Iterator[str]:
    """The server's base URL; its state lives in the repository root, as under `langgraph dev` run there."""
    with dev_server(home, log, env=extra_env, timeout=timeout) as server:
        yield server.url
