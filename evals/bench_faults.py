"""Fault injection: kills during ingests, re-ingests while another process answers, damaged files.

    python -m citewise.evals.bench_faults [--kills 20] [--reingests 10] [--questions 500] [--json]

Each part is a function that tests/test_faults.py runs as a small slice; this script runs them larger
and prints JSON and a table (RELIABILITY.md holds the results).

  kill_trials   kill -9 an ingest that adds documents to a home (at a random moment while it writes
                the store, while it builds the index, or anywhere), then rerun the same ingest: the rerun
                must succeed and leave the index current — every checksum and the row order matching the
                store at its generation — with exactly the chunks of an uninterrupted ingest
  concurrent    re-ingest (each changes one article, so each builds and swaps in a new snapshot) while
                another process answers questions through the graph: errors must be 0
  corruptions   damage one index or store file at a time: each must be healed by a rebuild with a log
                line (and never answered from) or refused with an error naming the file
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_KB = ROOT / "examples" / "kb"
QUESTIONS = ROOT / "examples" / "questions.yaml"
LOAN_QUESTION = "What is the minimum loan amount at Acme?"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
       "LANGSMITH_TRACING": "false"}


def cli(*args: str, env: dict[str, str] | None = None, **popen: Any) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "citewise.cli", *args], env=env or ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


# --- a corpus to add: the sample KB beside a base part, plus generated articles --------------------
def make_sources(workdir: Path, generated: int = 200, seed: int = 0) -> tuple[Path, Path]:
    """`base` (Summit's articles) is ingested first; `add` (Acme, Harborview and `generated` articles of
    five sections each) is what the killed ingests add."""
    base, add = workdir / "src" / "base", workdir / "src" / "add"
    shutil.copytree(SAMPLE_KB / "summit", base / "summit")
    shutil.copy(SAMPLE_KB / "synonyms.yaml", base / "synonyms.yaml")
    for part in ("acme", "harborview"):
        shutil.copytree(SAMPLE_KB / part, add / part)
    rng = random.Random(seed)
    words = ["loan", "rollover", "vesting", "match", "hardship", "beneficiary", "distribution", "contribution",
             "fee", "statement", "deadline", "form", "signature", "spouse", "balance", "account", "transfer",
             "withholding", "penalty", "notice"]
    (add / "generated").mkdir(parents=True)
    for i in range(generated):
        sections = []
        for name in ("Steps", "Fees", "Eligibility", "Common issues", "Background"):
            sentences = [" ".join(rng.choice(words) for _ in range(12)).capitalize() + f" ({i}-{name})."
                         for _ in range(3)]
            sections.append(f"## {name}\n" + "\n".join(f"- {s}" for s in sentences))
        (add / "generated" / f"gen-{i:04d}.md").write_text(
            f"---\nid: gen-{i:04d}\ntitle: Generated procedure {i}\ntopic: generated\n---\n" + "\n\n".join(sections))
    return base, add


def home_state(home: Path) -> dict[str, Any]:
    """Generation, counts and index status of a home, read from outside any citewise process cache."""
    from ..kb.doctor import store_rows
    from ..retrieval.snapshot import check_snapshot, orphan_builds, stale_builds
    from ..store.sqlite import Store

    store = Store(home)
    generation, chunks, order = store_rows(store)
    status = check_snapshot(home, generation)
    with store.reading():
        ids = [r["chunk_id"] for r in store.iter_chunks()]
    return {"generation": generation, "chunks": chunks, "documents": store.count()[0], "index": status.state,
            "index_detail": status.detail, "row_order_matches": (status.manifest or {}).get("row_order") == order,
            "stale_temporaries": [p.name for p in stale_builds(home)],
            "orphan_builds": [p.name for p in orphan_builds(home)], "chunk_ids": ids}


def _phase(home: Path, base_generation: int, ref_docs: int) -> str:
    """Where a killed ingest stopped, judged from what it left."""
    from ..retrieval.snapshot import check_snapshot
    from ..store.sqlite import Store

    store = Store(home)
    generation, docs = store.generation(), store.count()[0]
    if generation == base_generation:
        return "before any store write"
    if docs < ref_docs:
        return "while writing the store"
    status = check_snapshot(home, generation)
    if status.state == "current":
        return "after the index swap"
    if list(home.glob("index.tmp-*")):
        return "while building the index"
    return "store written, index build not started"


def _generation(home: Path) -> int:
    """The store's generation, read the lightest way (read-only, no schema statements) while an ingest writes."""
    with contextlib.closing(sqlite3.connect(f"file:{home / 'citewise.db'}?mode=ro", uri=True, timeout=5)) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
    return int(row[0]) if row else 0


def _wait_for(predicate: Callable[[], bool], proc: subprocess.Popen, timeout: float = 120.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        with contextlib.suppress(sqlite3.Error, OSError, ValueError):
            if predicate():
                return True
        time.sleep(0.005)
    return False


def kill_trials(workdir: Path, trials: int = 5, seed: int = 0, generated: int = 200,
                cold_cache_every: int = 0) -> dict[str, Any]:
    """kill -9 an add-ingest at random moments; rerun it; compare with an uninterrupted ingest."""
    from ..kb.ingest import ingest

    base, add = make_sources(workdir, generated, seed)
    base_home, ref_home = workdir / "base-home", workdir / "ref-home"
    ingest([base], base_home, progress=False)
    reference = ingest([base, add], ref_home, progress=False)  # also fills the embedding cache
    ref_ids = sorted(home_state(ref_home)["chunk_ids"])
    base_generation = _generation(base_home)
    started = time.perf_counter()  # one uninterrupted add-ingest in a process of its own: the kill window
    timing_home = workdir / "timing-home"
    shutil.copytree(base_home, timing_home, symlinks=True)
    proc = cli("ingest", str(base), str(add), "--home", str(timing_home), "--json")
    proc.communicate(timeout=900)
    window = time.perf_counter() - started
    rng = random.Random(seed)
    targets = ["store", "build", "build", "anywhere"]
    results = []
    for i in range(trials):
        home = workdir / f"trial-{i:02d}"
        shutil.copytree(base_home, home, symlinks=True)
        env = dict(ENV)
        if cold_cache_every and i % cold_cache_every == cold_cache_every - 1:
            env["CITEWISE_CACHE_DIR"] = str(workdir / f"cache-{i:02d}")  # nothing cached: the kill hits embedding
        target = targets[i % len(targets)]
        proc = cli("ingest", str(base), str(add), "--home", str(home), "--json", env=env)
        t0 = time.perf_counter()
        if target == "store":
            _wait_for(lambda h=home: _generation(h) != base_generation, proc)
            time.sleep(rng.uniform(0.0, 0.3))
        elif target == "build":
            _wait_for(lambda h=home: bool(list(h.glob("index.tmp-*"))), proc)
            time.sleep(rng.uniform(0.0, 0.4))
        else:
            time.sleep(rng.uniform(0.0, window))
        finished_first = proc.poll() is not None
        proc.kill()
        proc.communicate()
        killed_after = time.perf_counter() - t0
        phase = "completed before the kill" if finished_first else _phase(home, base_generation, reference[
            "documents_total"])
        after_kill = {k: v for k, v in home_state(home).items() if k != "chunk_ids"}
        t1 = time.perf_counter()
        rerun = cli("ingest", str(base), str(add), "--home", str(home), "--json", env=env)
        out, err = rerun.communicate(timeout=1800)
        state = home_state(home)
        summary = json.loads(out) if rerun.returncode == 0 else {}
        ok = (rerun.returncode == 0 and state["index"] == "current" and state["row_order_matches"]
              and sorted(state["chunk_ids"]) == ref_ids and not state["stale_temporaries"])
        results.append({"trial": i, "target": target, "cold_cache": "CITEWISE_CACHE_DIR" in env,
                        "killed_after_s": round(killed_after, 2), "phase": phase,
                        "index_after_kill": after_kill["index"], "temporaries_after_kill":
                        len(after_kill["stale_temporaries"]), "rerun_rc": rerun.returncode,
                        "rerun_reindexed": summary.get("reindexed"), "rerun_s": round(time.perf_counter() - t1, 2),
                        "index_after_rerun": state["index"], "chunks": state["chunks"],
                        "same_chunks_as_uninterrupted": sorted(state["chunk_ids"]) == ref_ids,
                        "orphans_left": len(state["orphan_builds"]), "ok": ok,
                        "stderr": err.strip().splitlines()[-1:] if rerun.returncode else []})
    return {"trials": results, "kill_window_s": round(window, 2), "reference_chunks": len(ref_ids),
            "failures": sum(not r["ok"] for r in results)}


# --- re-ingests while another process answers -------------------------------------------------------
def questions(limit: int = 60) -> list[str]:
    entries = yaml.safe_load(QUESTIONS.read_text())
    return [e["question"] for e in entries if isinstance(e, dict) and e.get("question")][:limit]


def reader(home: Path, out: Path, stop: Path, minimum: int, progress: Path) -> None:
    """Answer questions through the graph until told to stop (and at least `minimum`); write a report."""
    import citewise

    qs = questions()
    latencies: list[float] = []
    errors: list[str] = []
    generations: set[int] = set()
    n = 0
    while not (stop.exists() and n >= minimum):
        started = time.perf_counter()
        try:
            result = citewise.ask(qs[n % len(qs)], home=str(home))
            generations.add(int(result["metadata"]["kb_generation"]))
            if result["decision"] not in ("can_proceed", "needs_data", "uncertain", "out_of_scope"):
                errors.append(f"unexpected decision {result['decision']!r}")
        except Exception as exc:  # every failure counts: this is what is measured
            errors.append(f"{type(exc).__name__}: {exc}")
        latencies.append((time.perf_counter() - started) * 1000)
        n += 1
        if n % 5 == 0:
            progress.write_text(str(n))
    out.write_text(json.dumps({"answered": n, "errors": errors, "generations": sorted(generations),
                               "p50_ms": round(float(np.percentile(latencies, 50)), 1),
                               "p95_ms": round(float(np.percentile(latencies, 95)), 1),
                               "max_ms": round(max(latencies), 1)}))


def concurrent(workdir: Path, reingests: int = 10, minimum: int = 500,
               reader_env: dict[str, str] | None = None) -> dict[str, Any]:
    """`reingests` re-ingests in this process, spread over >= `minimum` questions answered by another."""
    from ..kb.ingest import ingest
    from ..store.sqlite import Store

    src = workdir / "kb"
    shutil.copytree(SAMPLE_KB, src)
    home = workdir / "home"
    ingest([src], home, progress=False)
    out, stop, progress = workdir / "reader.json", workdir / "stop", workdir / "progress"
    proc = subprocess.Popen([sys.executable, "-m", "citewise.evals.bench_faults", "reader", "--home", str(home),
                             "--out", str(out), "--stop", str(stop), "--minimum", str(minimum), "--progress",
                             str(progress)], env={**ENV, **(reader_env or {})}, stderr=subprocess.PIPE, text=True)
    article = src / "acme" / "acme-401k-loan.md"
    original = article.read_text()
    writes: list[dict[str, Any]] = []

    def answered() -> int:
        with contextlib.suppress(OSError, ValueError):
            return int(progress.read_text())
        return 0

    try:
        for i in range(reingests):
            target = (i + 1) * minimum // (reingests + 1)
            while answered() < target and proc.poll() is None:
                time.sleep(0.05)
            article.write_text(original + f"\n\nRevision note {i}: the loan article was reviewed.\n")
            started = time.perf_counter()
            summary = ingest([src], home, progress=False)
            writes.append({"reingest": i, "during_question": answered(), "reindexed": summary["reindexed"],
                           "generation": Store(home).generation(),
                           "seconds": round(time.perf_counter() - started, 2)})
    finally:
        stop.write_text("stop")
        _, err = proc.communicate(timeout=1800)
    report = json.loads(out.read_text()) if out.exists() else {"answered": 0, "errors": [err[-2000:]]}
    return {"reingests": writes, "reader": report, "errors": len(report["errors"]),
            "final_generation": Store(home).generation()}


# --- damaged files -------------------------------------------------------------------------------
def _index(home: Path) -> Path:
    return (home / "index").resolve()


def _shuffle_rows(home: Path) -> None:
    path = _index(home) / "rows.json"
    rows = json.loads(path.read_text())
    pairs = list(zip(rows["chunk_ids"], rows["doc_ids"], strict=True))
    random.Random(1).shuffle(pairs)
    rows["chunk_ids"], rows["doc_ids"] = [c for c, _ in pairs], [d for _, d in pairs]
    path.write_text(json.dumps(rows))


def _truncate(path: Path, keep: float = 0.5) -> None:
    with path.open("r+b") as fh:
        fh.truncate(int(path.stat().st_size * keep))


def _scribble(path: Path, offset: int = 200, length: int = 64) -> None:
    with path.open("r+b") as fh:
        fh.seek(offset)
        fh.write(bytes(random.Random(2).randrange(256) for _ in range(length)))


def _edit_passages(home: Path) -> None:
    path = _index(home) / "passages.jsonl"
    path.write_text(path.read_text().replace("$1,000", "$9,000"))


def _dangling_link(home: Path) -> None:
    link = home / "index"
    link.unlink()
    link.symlink_to("index-g0-gone")


def _stale_temporary(home: Path) -> None:
    (home / "index.tmp-999999-deadbeef").mkdir()  # no such process: a build killed long ago
    (home / "index.tmp-999999-deadbeef" / "vectors.npy").write_bytes(b"partial")


CORRUPTIONS: dict[str, tuple[Callable[[Path], None], str]] = {
    "rows.json shuffled": (_shuffle_rows, "healed"),
    "vectors.npy truncated": (lambda h: _truncate(_index(h) / "vectors.npy"), "healed"),
    "bm25 data corrupted": (lambda h: _scribble(_index(h) / "bm25" / "data.csc.index.npy"), "healed"),
    "passages.jsonl edited": (_edit_passages, "healed"),
    "manifest.json unreadable": (lambda h: (_index(h) / "manifest.json").write_text("{"), "healed"),
    "index link dangling": (_dangling_link, "healed"),
    "stale build temporary": (_stale_temporary, "cleaned"),
    "citewise.db overwritten": (lambda h: _scribble(h / "citewise.db", 0, 4096), "refused"),
    "citewise.db emptied": (lambda h: _truncate(h / "citewise.db", 0.0), "refused"),
}


@contextlib.contextmanager
def captured_log() -> Iterator[list[str]]:
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    handler, logger = Keep(level=logging.WARNING), logging.getLogger("citewise")
    logger.addHandler(handler)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)


def corruption(name: str, pristine: Path, workdir: Path) -> dict[str, Any]:
    """Damage one file of a copy of `pristine`, then: doctor, ask, doctor again."""
    import citewise

    from ..errors import CitewiseError
    from ..kb.doctor import doctor
    from ..kb.ingest import ingest

    damage, expected = CORRUPTIONS[name]
    home = workdir / name.replace(" ", "-").replace(".", "_")
    shutil.copytree(pristine, home, symlinks=True)
    damage(home)
    before = doctor(home)
    problem = next((f["detail"] for f in before["findings"] if not f["ok"]), "")
    outcome: dict[str, Any] = {"corruption": name, "expected": expected, "detected": not before["healthy"],
                               "doctor": problem[:200]}
    with captured_log() as log:
        try:
            if expected == "cleaned":
                ingest([SAMPLE_KB], home, progress=False)  # the next ingest cleans what dead builders left
            answer = citewise.ask(LOAN_QUESTION, home=str(home))
            ref = answer.get("article_reference") or {}
            outcome.update(outcome="answered", article=ref.get("article_id"),
                           cites_changed_text=any("$9,000" in c["snippet"] for c in answer["citations"]))
        except CitewiseError as exc:
            outcome.update(outcome="refused", error=str(exc)[:1000], error_type=type(exc).__name__)
    outcome["log"] = log[:2]
    after = doctor(home) if expected != "refused" else before
    outcome["healthy_after"] = after["healthy"]
    healed = (outcome["outcome"] == "answered" and outcome["article"] == "acme-401k-loan"
              and not outcome["cites_changed_text"] and after["healthy"])
    if expected == "healed":
        outcome["ok"] = healed and outcome["detected"] and any("rebuil" in line for line in log)
    elif expected == "cleaned":
        outcome["ok"] = healed and outcome["detected"]
    else:
        outcome["ok"] = (outcome["outcome"] == "refused" and outcome["detected"]
                         and "citewise.db" in outcome.get("error", ""))
    return outcome


def corruptions(workdir: Path, names: list[str] | None = None) -> dict[str, Any]:
    from ..kb.ingest import ingest

    pristine = workdir / "pristine"
    ingest([SAMPLE_KB], pristine, progress=False)
    results = [corruption(name, pristine, workdir) for name in (names or list(CORRUPTIONS))]
    return {"results": results, "failures": sum(not r["ok"] for r in results)}


# --- command line --------------------------------------------------------------------------------
def _table(rows: list[dict[str, Any]], cols: list[str]) -> str:
    widths = [max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in cols]
    lines = [" | ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))]
    lines.append("-+-".join("-" * w for w in widths))
    lines += [" | ".join(str(r.get(c, "")).ljust(w) for c, w in zip(cols, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m citewise.evals.bench_faults")
    sub = parser.add_subparsers(dest="command")
    r = sub.add_parser("reader", help="(internal) the answering process of the concurrency run")
    for flag in ("--home", "--out", "--stop", "--progress"):
        r.add_argument(flag, type=Path, required=True)
    r.add_argument("--minimum", type=int, default=500)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--cold-cache-every", type=int, default=4, help="every k-th kill trial starts with an "
                                                                         "empty embedding cache")
    parser.add_argument("--generated", type=int, default=200, help="generated articles added by each kill trial")
    parser.add_argument("--reingests", type=int, default=10)
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--reader-torch-threads", default="", help="CITEWISE_TORCH_THREADS of the answering process")
    parser.add_argument("--parts", default="kills,concurrent,corruptions")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "reader":
        reader(args.home, args.out, args.stop, args.minimum, args.progress)
        return 0
    logging.getLogger("citewise").setLevel(logging.WARNING)
    parts = args.parts.split(",")
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="citewise-faults-") as tmp:
        work = Path(tmp)
        if "kills" in parts:
            report["kills"] = kill_trials(work / "kills", args.kills, generated=args.generated,
                                          cold_cache_every=args.cold_cache_every)
        if "concurrent" in parts:
            env = {"CITEWISE_TORCH_THREADS": args.reader_torch_threads} if args.reader_torch_threads else {}
            report["concurrent"] = concurrent(work / "concurrent", args.reingests, args.questions, env)
        if "corruptions" in parts:
            report["corruptions"] = corruptions(work / "corruptions")
    if args.json:
        json.dump(report, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return 0
    if "kills" in report:
        k = report["kills"]
        print(f"kill -9 trials: {len(k['trials'])}, failures {k['failures']}, uninterrupted ingest "
              f"{k['kill_window_s']} s, {k['reference_chunks']} chunks")
        print(_table(k["trials"], ["trial", "target", "cold_cache", "killed_after_s", "phase", "index_after_kill",
                                    "temporaries_after_kill", "rerun_rc", "rerun_reindexed", "rerun_s",
                                    "index_after_rerun", "same_chunks_as_uninterrupted", "ok"]))
    if "concurrent" in report:
        c = report["concurrent"]
        rd = c["reader"]
        print(f"\nre-ingests while answering: {len(c['reingests'])} re-ingests, {rd['answered']} answers, "
              f"errors {c['errors']}, generations seen {len(rd.get('generations', []))}, "
              f"p50 {rd.get('p50_ms')} ms, p95 {rd.get('p95_ms')} ms, max {rd.get('max_ms')} ms")
        print(_table(c["reingests"], ["reingest", "during_question", "reindexed", "seconds"]))
    if "corruptions" in report:
        print()
        print(_table(report["corruptions"]["results"], ["corruption", "detected", "outcome", "article", "ok"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
