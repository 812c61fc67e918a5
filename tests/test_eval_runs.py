"""Eval runs are stored records that can be listed and compared question by question."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.paths import ROOT

ENTRIES = [
    {"id": "runs-rollover", "category": "facet", "question": "How do I roll over my Acme 401(k) to an IRA?",
     "decision": "needs_data", "article": "acme-401k-rollover"},
    {"id": "runs-bread", "category": "out_of_scope", "question": "What is the best recipe for banana bread?",
     "decision": "out_of_scope"},
]


def cli(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "citewise.cli", "eval", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**__import__("os").environ, "CITEWISE_HOME": str(home)}, timeout=600)


def test_runs_are_stored_listed_and_compared(kb_home: Path, tmp_path: Path) -> None:
    entries = [dict(e) for e in ENTRIES]
    questions = tmp_path / "q.yaml"
    questions.write_text(yaml.safe_dump(entries))
    runs_home = tmp_path / "runs"
    first = cli("questions", "--questions", str(questions), "--home", str(kb_home), "--runs-home", str(runs_home),
                "--split", "all", "--json", home=runs_home)
    assert first.returncode == 0, first.stderr
    report_a = json.loads(first.stdout)
    assert report_a["pass_rate"] == 1.0 and report_a["eval_run"]
    entries[1]["decision"] = "can_proceed"  # the same answers judged against a changed expectation
    questions.write_text(yaml.safe_dump(entries))
    second = cli("questions", "--questions", str(questions), "--home", str(kb_home), "--runs-home", str(runs_home),
                 "--split", "all", "--json", home=runs_home)
    run_b = json.loads(second.stdout)["eval_run"]

    listed = json.loads(cli("runs", "--json", home=runs_home).stdout)
    assert [r["id"] for r in listed] == [run_b, report_a["eval_run"]]  # newest first
    assert listed[1]["pass_rate"] == 1.0 and listed[0]["pass_rate"] == 0.5 and listed[0]["questions"] == 2
    assert all(len(r["revision"]) >= 12 for r in listed)  # this checkout's commit

    diff = cli("compare", report_a["eval_run"][:8], run_b, "--json", home=runs_home)  # a prefix will do
    out = json.loads(diff.stdout)
    assert out["broken"] == 1 and out["fixed"] == 0 and [c["id"] for c in out["changed"]] == ["runs-bread"]
    assert out["metrics"]["pass_rate"]["delta"] == -0.5
    text = cli("compare", report_a["eval_run"], run_b, home=runs_home).stdout
    assert "broken   runs-bread" in text and "pass_rate" in text

    missing = cli("compare", "nope", run_b, home=runs_home)
    assert missing.returncode == 2 and "no eval run 'nope'" in missing.stderr and "Traceback" not in missing.stderr


def test_the_stored_config_has_no_credentials_or_paths() -> None:
    from citewise.config import Context
    from citewise.evals.runs import configuration

    cfg = configuration(Context(home="/srv/kb", llm_base_url="https://user:s3cret@llm.example/v1?api_key=sk-LIVE#x",
                                embedding_base_url="https://tok@[::1]:8080/v1", reranker_model="/home/alice/models/ce",
                                database_url="postgresql://u:pw@db/kb", top_k=7))
    assert cfg["top_k"] == 7 and cfg["llm_base_url"] == "https://llm.example/v1"
    assert cfg["embedding_base_url"] == "https://[::1]:8080/v1" and cfg["reranker_model"] == "ce"
    from citewise.evals.runs import without_credentials, without_path

    assert without_credentials("user:pw@host:8080/v1?key=sk-1") == "host:8080/v1"
    assert without_path(r"C:\Users\jane\models\e5") == "e5" and without_path("C:/Users/jane/e5") == "e5"
    assert without_path("intfloat/e5-small-v2") == "intfloat/e5-small-v2"  # a hub id, not a path here
    text = json.dumps(cfg)
    assert not any(secret in text for secret in ("s3cret", "sk-LIVE", "tok@", "alice", "/srv/kb", "pw@"))
    assert "home" not in cfg and "database_url" not in cfg and "answer_system_prompt" not in cfg


def test_langsmith_evaluate_runs_the_same_judge_locally(kb_home: Path) -> None:
    from citewise.evals.questions import run, run_langsmith

    entries = [dict(e, decision=d) for e, d in zip(ENTRIES, ("needs_data", "out_of_scope"), strict=True)]
    native = run(entries, kb_home)
    through = run_langsmith(entries, kb_home, name="test")
    assert [(r["id"], r["pass"], r["checks"]) for r in through["rows"]] == [
        (r["id"], r["pass"], r["checks"]) for r in native["rows"]]
    assert through["pass_rate"] == native["pass_rate"] == 1.0


@pytest.mark.live
@pytest.mark.skipif(not __import__("os").environ.get("LANGSMITH_API_KEY"), reason="needs LANGSMITH_API_KEY")
def test_langsmith_upload_keeps_the_dataset_and_experiment(kb_home: Path) -> None:
    from langsmith import Client

    from citewise.evals.questions import run_langsmith

    entries = [dict(e, decision=d) for e, d in zip(ENTRIES, ("needs_data", "out_of_scope"), strict=True)]
    report = run_langsmith(entries, kb_home, name="live-test")
    assert report["pass_rate"] == 1.0
    assert Client().has_dataset(dataset_name="citewise-live-test")
