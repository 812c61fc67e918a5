"""`citewise eval retrieval` on small BEIR collections (the full SciFact run is a benchmark, not a test)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from citewise.cli import main
from citewise.evals.questions import load_questions
from citewise.kb.articles import split_front_matter
from tests.paths import QUESTIONS, ROOT, SAMPLE_KB

SCIFACT = Path(os.environ.get("CITEWISE_SCIFACT_DIR") or ROOT.parent / "shared" / "data" / "scifact")


def _write_beir(dest: Path, corpus: list[dict], queries: dict[str, str], qrels: list[tuple[str, str]]) -> Path:
    (dest / "qrels").mkdir(parents=True)
    (dest / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    (dest / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()))
    rows = "".join(f"{q}\t{d}\t1\n" for q, d in qrels)
    (dest / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + rows)
    return dest


def _run(capsys: pytest.CaptureFixture, dataset: Path, home: Path) -> dict:
    assert main(["eval", "retrieval", "--dataset", str(dataset), "--home", str(home), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_eval_on_a_collection_built_from_the_sample_kb(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    corpus = []
    for path in sorted(SAMPLE_KB.rglob("*.md")):
        front, body = split_front_matter(path.read_text(), str(path))
        corpus.append({"_id": front["id"], "title": front["title"], "text": body})
    questions = [q for q in load_questions(QUESTIONS) if isinstance(q.get("article"), str)]
    dataset = _write_beir(tmp_path / "kb-beir", corpus, {q["id"]: q["question"] for q in questions},
                          [(q["id"], q["article"]) for q in questions])
    report = _run(capsys, dataset, tmp_path / "home")
    assert report["documents"] == 31 and set(report["results"]) == {"bm25", "dense", "hybrid"}
    hybrid = report["results"]["hybrid"]
    assert set(hybrid) >= {"ndcg@10", "recall@10", "recall@100", "mrr@10", "p@3", "latency_ms_p50", "latency_ms_p95"}
    assert hybrid["queries"] == len(questions) and hybrid["ndcg@10"] >= 0.75
    assert hybrid["ndcg@10"] >= min(report["results"]["bm25"]["ndcg@10"], report["results"]["dense"]["ndcg@10"])


@pytest.mark.skipif(not SCIFACT.is_dir(), reason="../shared/data/scifact is not on this machine")
def test_eval_on_a_scifact_slice(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rng = random.Random(0)
    qrels = [line.split("\t")[:2] for line in (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]][:60]
    wanted = {d for _, d in qrels}
    docs = [json.loads(line) for line in (SCIFACT / "corpus.jsonl").read_text().splitlines()]
    corpus = [d for d in docs if d["_id"] in wanted] + rng.sample([d for d in docs if d["_id"] not in wanted], 400)
    queries = {json.loads(line)["_id"]: json.loads(line)["text"] for line in
               (SCIFACT / "queries.jsonl").read_text().splitlines()}
    dataset = _write_beir(tmp_path / "scifact-slice", corpus, {q: queries[q] for q, _ in qrels}, qrels)
    results = _run(capsys, dataset, tmp_path / "home")["results"]
    assert results["hybrid"]["ndcg@10"] > max(results["bm25"]["ndcg@10"], results["dense"]["ndcg@10"]) - 0.02
    assert results["bm25"]["ndcg@10"] > 0.6 and results["hybrid"]["latency_ms_p50"] < 50


@pytest.fixture
def kb_beir(tmp_path: Path) -> Path:
    corpus = []
    for path in sorted(SAMPLE_KB.rglob("*.md")):
        front, body = split_front_matter(path.read_text(), str(path))
        corpus.append({"_id": front["id"], "title": front["title"], "text": body})
    questions = [q for q in load_questions(QUESTIONS) if isinstance(q.get("article"), str)]
    return _write_beir(tmp_path / "kb-beir", corpus, {q["id"]: q["question"] for q in questions},
                       [(q["id"], q["article"]) for q in questions])


def test_peer_benchmark_runs_all_three_systems_on_a_small_slice(kb_beir: Path, capsys: pytest.CaptureFixture,
                                                               monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CITEWISE_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["eval", "peers", "--dataset", str(kb_beir), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["results"]) == {"citewise", "langchain", "llamaindex"}
    for name in ("langchain", "llamaindex"):
        r = report["results"][name]
        assert r["ndcg@10"] > 0.3 and r["citewise_ndcg_ratio"] > 0 and r["citewise_latency_speedup"] > 1
    assert report["results"]["citewise"]["peak_rss_mb"] > 0


def test_speed_and_scale_benchmarks_run(kb_beir: Path, capsys: pytest.CaptureFixture) -> None:
    from citewise.evals import bench_scale, bench_speed

    assert bench_speed.main(["--dataset", str(kb_beir), "--json"]) == 0
    speed = json.loads(capsys.readouterr().out)
    assert speed["bm25"]["citewise_qps"] > 0 and speed["hybrid_zscore"]["p50_ms"] > 0
    assert bench_scale.main(["--sizes", "3000", "--queries", "20", "--json"]) == 0
    scale = json.loads(capsys.readouterr().out)["results"][0]
    assert scale["chunks"] == 3000 and scale["vector_index"] == "ExactIndex" and scale["p50_ms"] > 0
