"""Starting fast: what a server loads before it reports ready, and what a one-shot command overlaps.

Speeds are measured by evals/bench_cold.py (BENCHMARKS.md); these tests check the behaviour behind them.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from citewise import api
from citewise.retrieval import embeddings

ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def log_rows(home: Path) -> int:
    with sqlite3.connect(home / "citewise.db") as conn:
        return conn.execute("SELECT COUNT(*) FROM query_log").fetchone()[0]


def test_the_server_app_preloads_at_start_up_without_logging_an_answer(kb_home: Path) -> None:
    """langgraph-api runs the mounted app's lifespan at start-up: by then the embedder, the token encoder
    and the KB snapshot are loaded (in a fresh process, as the server is), and no query-log row was written."""
    code = """
import json
from fastapi.testclient import TestClient
import citewise.kb.tokens as tokens
import citewise.retrieval.embeddings as embeddings
import citewise.retrieval.snapshot as snapshot
from citewise.server.app import app

def loaded():
    emb = embeddings._EMBEDDERS.get(("minilm", ""))
    return [emb is not None and emb._backend is not None, len(snapshot._CURRENT), tokens.encoder.cache_info().currsize]

before = loaded()
with TestClient(app) as client:
    after = loaded()
    health = client.get("/v1/health").status_code
print(json.dumps([before, after, health]))
"""
    rows = log_rows(kb_home)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**ENV, "CITEWISE_HOME": str(kb_home)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    before, after, health = json.loads(proc.stdout.strip().splitlines()[-1])
    assert before == [False, 0, 0] and after == [True, 1, 1] and health == 200
    assert log_rows(kb_home) == rows  # the warm-up answer is not a query anyone asked


def test_warm_up_times_each_part_and_skips_a_home_never_ingested(kb_home: Path, tmp_path: Path) -> None:
    rows = log_rows(kb_home)
    timings = api.warm_up(kb_home)
    assert set(timings) == {"graph", "embedder", "encoder", "kb", "run"}
    assert all(isinstance(v, float) and v >= 0 for v in timings.values())
    assert log_rows(kb_home) == rows
    empty = api.warm_up(tmp_path / "never-ingested")
    assert empty["kb"] == "not ingested" and "run" not in empty


def test_a_one_shot_command_loads_the_query_model_on_a_helper_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    from citewise.retrieval import onnx_minilm

    onnx_minilm.ensure_exported()  # the state after an ingest
    fresh = embeddings.MiniLMEmbedder()
    monkeypatch.setitem(embeddings._EMBEDDERS, ("minilm", ""), fresh)
    thread = embeddings.load_in_background("minilm")
    assert thread is not None and thread.daemon
    thread.join(timeout=120)
    assert fresh._backend == "onnx"  # the answer path finds the session created
    monkeypatch.setenv("CITEWISE_EMBEDDINGS_BACKEND", "torch")
    assert embeddings.load_in_background("minilm") is None  # importing torch is not overlapped
    monkeypatch.delenv("CITEWISE_EMBEDDINGS_BACKEND")
    assert embeddings.load_in_background("openai:text-embedding-3-small") is None  # nothing local to load
