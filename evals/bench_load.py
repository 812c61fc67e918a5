"""Load on a real `langgraph dev`: errors and latency percentiles at several concurrencies, and the
server's RSS over many runs.

    python -m citewise.evals.bench_load [--runs 200] [--concurrency 1,10,50] [--rss-runs 1000]
                                        [--reingests N] [--torch-threads N] [--json]

The server is `langgraph dev` with the repository's langgraph.json (in-memory runtime, its default of
10 jobs per worker: at concurrency 50 runs queue), answering from a home holding the sample KB with
the offline extractive generator. With `--reingests N`, this process re-ingests the home N times
(each changes one article, so each builds and swaps in a snapshot) while the levels run. Each run is
`runs.wait` of a stateless run through langgraph_sdk; a run counts as an error when it raises,
returns an `__error__`, or returns no valid decision. RSS is the resident memory of the server's
whole process group, sampled every 100 runs after a warm-up.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from .bench_faults import ENV, SAMPLE_KB, questions
from .devserver import langgraph_dev

DECISIONS = ("can_proceed", "needs_data", "uncertain", "out_of_scope")


def group_rss_mb(pgid: int) -> float:
    """Resident memory of every process in a process group (Linux /proc)."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[2]) != pgid:  # fields after "comm)": state ppid pgrp
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return round(total / 1024, 1)


_CLIENTS = threading.local()


def one_run(url: str, question: str) -> tuple[float, str | None]:
    """Latency (ms) of one stateless run and its error, if any."""
    from langgraph_sdk import get_sync_client

    client = getattr(_CLIENTS, url, None)
    if client is None:
        client = get_sync_client(url=url, timeout=600)
        setattr(_CLIENTS, url, client)
    started = time.perf_counter()
    try:
        out = client.runs.wait(None, "kb_agent", input={"question": question})
        if not isinstance(out, dict) or "__error__" in out or out.get("decision") not in DECISIONS:
            error = f"bad output: {str(out)[:200]}"
        else:
            error = None
    except Exception as exc:  # every failure counts
        error = f"{type(exc).__name__}: {str(exc)[:200]}"
    return (time.perf_counter() - started) * 1000, error


def run_level(url: str, runs: int, concurrency: int, qs: list[str] | None = None) -> dict[str, Any]:
    qs = qs or questions()
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        results = list(pool.map(lambda i: one_run(url, qs[i % len(qs)]), range(runs)))
    wall = time.perf_counter() - started
    lat = np.asarray([ms for ms, _ in results])
    errors = [e for _, e in results if e]
    return {"concurrency": concurrency, "runs": runs, "errors": len(errors), "error_samples": errors[:3],
            "p50_ms": round(float(np.percentile(lat, 50)), 1), "p95_ms": round(float(np.percentile(lat, 95)), 1),
            "p99_ms": round(float(np.percentile(lat, 99)), 1), "max_ms": round(float(lat.max()), 1),
            "throughput_rps": round(runs / wall, 2)}


def rss_growth(url: str, pgid: int, runs: int, concurrency: int = 10, every: int = 100) -> dict[str, Any]:
    samples = [group_rss_mb(pgid)]
    errors = 0
    qs = questions()
    done = 0
    while done < runs:
        batch = min(every, runs - done)
        level = run_level(url, batch, concurrency, qs[done % len(qs):] + qs[:done % len(qs)])
        errors += level["errors"]
        done += batch
        samples.append(group_rss_mb(pgid))
    half = len(samples) // 2
    return {"runs": runs, "errors": errors, "rss_mb_samples": samples, "rss_start_mb": samples[0],
            "rss_end_mb": samples[-1], "growth_mb": round(samples[-1] - samples[0], 1),
            "growth_second_half_mb": round(samples[-1] - samples[half], 1)}


def reingest_while_serving(src: Path, home: Path, count: int, stop: threading.Event,
                           out: list[dict[str, Any]]) -> None:
    """Re-ingest `count` times, evenly while the levels run (until `stop`), recording each outcome."""
    from ..kb.ingest import ingest

    article = src / "acme" / "acme-401k-loan.md"
    original = article.read_text()
    for i in range(count):
        if stop.wait(3.0):
            break
        article.write_text(original + f"\n\nRevision note {i}: reviewed while the server answered.\n")
        started = time.perf_counter()
        try:
            summary = ingest([src], home, progress=False)
            out.append({"reingest": i, "reindexed": summary["reindexed"], "error": None,
                        "seconds": round(time.perf_counter() - started, 2)})
        except Exception as exc:  # every failure counts
            out.append({"reingest": i, "reindexed": False, "error": f"{type(exc).__name__}: {exc}"})


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def server_timings(log_text: str) -> dict[str, Any]:
    """Where a run's time goes, from the server's own "Background run succeeded" lines: queued before a
    worker took it (run_wait_time_ms) and executing the graph (run_exec_ms)."""
    text = _ANSI.sub("", log_text)
    out: dict[str, Any] = {}
    for field in ("run_wait_time_ms", "run_exec_ms"):
        values = [int(v) for v in re.findall(rf"Background run succeeded.*?{field}=(\d+)", text)]
        if values:
            out[field] = {"runs": len(values), "p50": float(np.percentile(values, 50)),
                          "p95": float(np.percentile(values, 95))}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m citewise.evals.bench_load")
    parser.add_argument("--runs", type=int, default=200, help="runs per concurrency level")
    parser.add_argument("--concurrency", default="1,10,50")
    parser.add_argument("--rss-runs", type=int, default=1000)
    parser.add_argument("--reingests", type=int, default=0, help="re-ingests of the served home during the levels")
    parser.add_argument("--torch-threads", default="", help="CITEWISE_TORCH_THREADS for the server "
                                                            "(default: langgraph.json's setting)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from ..kb.ingest import ingest

    report: dict[str, Any] = {"levels": []}
    with tempfile.TemporaryDirectory(prefix="citewise-load-") as tmp:
        work = Path(tmp)
        home, src = work / "home", work / "kb"
        shutil.copytree(SAMPLE_KB, src)
        ingest([src], home, progress=False)
        env = {"CITEWISE_TORCH_THREADS": args.torch_threads} if args.torch_threads else {}
        with langgraph_dev(home, work / "langgraph-dev.log", env=env, base_env=ENV, cwd=work, timeout=240.0) as server:
            url, pid, log = server.url, server.pid, server.log
            report["warmup"] = run_level(url, 10, 2)
            report["rss_after_warmup_mb"] = group_rss_mb(pid)
            stop, writes = threading.Event(), report.setdefault("reingests", [])
            writer = threading.Thread(target=reingest_while_serving, args=(src, home, args.reingests, stop, writes))
            writer.start()
            for c in (int(x) for x in args.concurrency.split(",")):
                report["levels"].append(run_level(url, args.runs, c))
                print(json.dumps(report["levels"][-1]), file=sys.stderr)
            stop.set()
            writer.join()
            if args.rss_runs:
                report["rss"] = rss_growth(url, pid, args.rss_runs)
            text = log.read_text(errors="replace")
            report["server_log"] = {"lines": len(text.splitlines()), "tracebacks": text.count("Traceback"),
                                    **server_timings(text)}
    report["torch_threads"] = args.torch_threads or "langgraph.json"
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    cols = ["concurrency", "runs", "errors", "p50_ms", "p95_ms", "p99_ms", "max_ms", "throughput_rps"]
    print(" | ".join(cols))
    for r in report["levels"]:
        print(" | ".join(str(r[c]) for c in cols))
    if "rss" in report:
        r = report["rss"]
        print(f"RSS over {r['runs']} runs (concurrency 10): {r['rss_start_mb']} -> {r['rss_end_mb']} MB "
              f"(+{r['growth_mb']} MB; second half +{r['growth_second_half_mb']} MB), errors {r['errors']}")
    if report["reingests"]:
        failed = [w for w in report["reingests"] if w["error"] or not w["reindexed"]]
        print(f"re-ingests while serving: {len(report['reingests'])}, failed {len(failed)}")
    log = report["server_log"]
    print(f"server log: {log['lines']} lines, {log['tracebacks']} tracebacks; per run (server's own timing): "
          f"queued p50 {log.get('run_wait_time_ms', {}).get('p50')} ms, executing p50 "
          f"{log.get('run_exec_ms', {}).get('p50')} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
