"""Cold start: a one-shot `citewise ask`, a fresh `langgraph dev` server's first run, and MiniLM embedding
on onnxruntime vs torch (sentence-transformers), all in one run.

    python -m citewise.evals.bench_cold [--dataset ../shared/data/scifact] [--repeats 3] [--texts 2000]
                                        [--no-ask] [--no-server] [--baseline DIR] [--json]

Why: a one-shot `citewise ask` is a cold process; the issue's target is that it costs at most 2x a
bare `python -c "import langgraph.graph"` on the same machine. Measured, each in fresh processes,
interleaved round by round (so a busy machine slows every variant alike), medians reported, with the
CPU seconds of each child (user + system, steadier than wall time on a shared machine):

  a  python -c "import langgraph.graph"                        (the yardstick)
  b  import citewise's embedder (ONNX backend) + embed one query, from a cached export
  c  the same with the torch backend (imports torch + sentence_transformers)
  ask_onnx / ask_torch  a whole cold `citewise ask` on the sample KB, each backend (skip: --no-ask)
  server  `langgraph dev` on a free port over the same home (skip: --no-server): seconds from
          starting it to `/ok` (ready), the first `runs.wait` after ready, start to that first
          answer, and a second run (warm), each round a fresh server
  --baseline DIR  the cold ask and the server again with another checkout's code (DIR/citewise, put
          first on PYTHONPATH), interleaved with the rest: before and after a change in one run

plus the one-time first use of the ONNX backend (export into an empty cache), peak RSS of each
cold process (os.wait4), and in-process document throughput (texts/s) on the same SciFact
abstracts: torch batch 64 (today's setting) vs ONNX, alternating slices, with a sweep of
batch-by-length sorting, batch size, intra-op threads and spinning on a smaller slice (and an
int8-quantised copy, for reference only). Throughput is given per wall second and per CPU second
of the process: on a shared machine the second is the steadier. The torch-vs-ONNX cosine of
every abstract is reported as a parity check.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

QUERY = "How do I roll over my 401(k) into an IRA after leaving my employer?"
_EMBED_ONE = """
import json, sys, time
t0 = time.perf_counter()
from citewise.retrieval.embeddings import MiniLMEmbedder
emb = MiniLMEmbedder(backend={backend!r})
t1 = time.perf_counter()
vec = emb.embed_query({query!r})
t2 = time.perf_counter()
print(json.dumps({{"import_s": t1 - t0, "embed_s": t2 - t1, "backend": emb.backend, "dim": int(vec.shape[0]),
                   "torch_imported": "torch" in sys.modules,
                   "transformers_imported": "transformers" in sys.modules}}))
"""


def default_dataset() -> Path:
    here = Path(__file__).resolve().parent.parent
    return Path(os.environ.get("CITEWISE_SCIFACT_DIR") or here.parent / "shared" / "data" / "scifact")


def child_env(cache: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITEWISE_")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               LANGSMITH_TRACING="false", CITEWISE_CACHE_DIR=str(cache), **extra)
    return env


def run_cold(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Wall time, CPU time and peak RSS (os.wait4's rusage of that one child) and the JSON the child
    printed, if any."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read().decode("utf-8", "replace")
        if proc.returncode != 0:
            raise RuntimeError(f"{argv[:3]} exited {proc.returncode}: {err.read().decode('utf-8', 'replace')[-2000:]}")
    row: dict[str, Any] = {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
                           "peak_rss_mb": usage.ru_maxrss / 1024}
    last = text.strip().splitlines()[-1:] if text.strip() else []
    if last and last[0].startswith("{"):
        row.update(json.loads(last[0]))
    return row


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"runs": len(rows),
                           "wall_s": [round(r["wall_s"], 3) for r in rows],
                           "median_s": round(statistics.median(r["wall_s"] for r in rows), 3),
                           "median_cpu_s": round(statistics.median(r["cpu_s"] for r in rows), 3),
                           "peak_rss_mb": round(statistics.median(r["peak_rss_mb"] for r in rows), 1)}
    for key in ("import_s", "embed_s"):
        if all(key in r for r in rows):
            out[f"median_{key}"] = round(statistics.median(r[key] for r in rows), 3)
    for key in ("backend", "torch_imported", "transformers_imported"):
        if rows and key in rows[0]:
            out[key] = rows[0][key]
    return out


def cold_runs(repeats: int, cache: Path, home: Path | None, baseline: Path | None = None) -> dict[str, Any]:
    py = sys.executable
    variants: dict[str, list[str]] = {
        "python_startup": [py, "-c", "pass"],
        "a_import_langgraph": [py, "-c", "import langgraph.graph"],
        "b_onnx_query": [py, "-c", _EMBED_ONE.format(backend="onnx", query=QUERY)],
        "c_torch_query": [py, "-c", _EMBED_ONE.format(backend="torch", query=QUERY)],
    }
    envs = {name: child_env(cache) for name in variants}
    if home is not None:
        ask = [py, "-m", "citewise.cli", "ask", QUERY, "--home", str(home), "--json"]
        variants["ask_onnx"] = ask
        variants["ask_torch"] = ask
        envs["ask_onnx"] = child_env(cache, CITEWISE_EMBEDDINGS_BACKEND="onnx")
        envs["ask_torch"] = child_env(cache, CITEWISE_EMBEDDINGS_BACKEND="torch")
        if baseline is not None:  # the same command, another checkout's code (before/after in one run)
            variants["ask_onnx_baseline"] = ask
            envs["ask_onnx_baseline"] = child_env(cache, CITEWISE_EMBEDDINGS_BACKEND="onnx", PYTHONPATH=str(baseline))
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, argv in variants.items():
            rows[name].append(run_cold(argv, envs[name]))
    out = {name: summarise(r) for name, r in rows.items()}
    base, base_cpu = out["a_import_langgraph"]["median_s"], out["a_import_langgraph"]["median_cpu_s"]
    for row in out.values():
        row["ratio_to_a"] = round(row["median_s"] / base, 2)
        row["cpu_ratio_to_a"] = round(row["median_cpu_s"] / base_cpu, 2)
    return out


def server_round(cache: Path, home: Path, work: Path, timeout: float = 300.0,
                 baseline: Path | None = None) -> dict[str, float]:
    """One fresh `langgraph dev` (in-memory runtime, no reload) over `home`: seconds from its start to
    `/ok`, the first `runs.wait` after that, start to the first answer, and a second (warm) run."""
    from langgraph_sdk import get_sync_client

    from .devserver import langgraph_dev

    env = child_env(cache)
    if baseline is not None:
        env["PYTHONPATH"] = str(baseline)
    # the in-memory runtime keeps its files in the working directory: one per round
    with langgraph_dev(home, work / "server.log", base_env=env, cwd=work, timeout=timeout, poll=0.05) as server:
        client = get_sync_client(url=server.url, timeout=timeout)
        thread = client.threads.create()
        out = client.runs.wait(thread["thread_id"], "kb_agent", input={"question": QUERY})
        first = time.perf_counter()
        if not isinstance(out, dict) or not out.get("decision"):
            raise RuntimeError(f"the first run did not answer: {str(out)[:300]}")
        thread = client.threads.create()
        client.runs.wait(thread["thread_id"], "kb_agent", input={"question": QUERY})
        second = time.perf_counter()
    start, ready = server.started, server.ready
    return {"start_to_ready_s": ready - start, "first_run_after_ready_s": first - ready,
            "start_to_first_answer_s": first - start, "second_run_s": second - first}


def server_runs(repeats: int, cache: Path, home: Path, work: Path, base: float,
                baseline: Path | None = None) -> dict[str, Any]:
    """Fresh servers, round by round; with `baseline`, a round of the other checkout after each."""
    rows: dict[str, list[dict[str, float]]] = {"server": [], "server_baseline": []}
    for i in range(repeats):
        rows["server"].append(server_round(cache, home, work / f"round-{i}"))
        if baseline is not None:
            rows["server_baseline"].append(server_round(cache, home, work / f"baseline-{i}", baseline=baseline))
    out: dict[str, Any] = {}
    for name, found in rows.items():
        if not found:
            continue
        out[name] = {"runs": len(found)}
        for key in found[0]:
            values = [r[key] for r in found]
            out[name][key] = {"median_s": round(statistics.median(values), 3), "runs": [round(v, 3) for v in values],
                              "ratio_to_a": round(statistics.median(values) / base, 2)}
    return out


def load_abstracts(dataset: Path, n: int) -> list[str]:
    texts: list[str] = []
    with (dataset / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                if rec.get("text"):
                    texts.append(rec["text"])
            if len(texts) >= n:
                break
    return texts


def clock(fn: Any) -> tuple[float, float, Any]:
    """(wall s, CPU s of this process, result): CPU time is the steadier number on a shared machine."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def throughput(texts: list[str], sweep_n: int, work_dir: Path, slice_size: int = 250) -> dict[str, Any]:
    """texts/s of torch (batch 64, as MiniLMEmbedder uses it) vs ONNX (defaults), alternating slices,
    then a sweep of ONNX settings (and, for reference only, a dynamically int8-quantised copy)."""
    import torch

    from citewise.retrieval import onnx_minilm
    from citewise.retrieval.embeddings import MiniLMEmbedder, _load_sentence_transformer

    emb = MiniLMEmbedder(backend="torch")
    st = _load_sentence_transformer(emb.path)
    src = Path(emb.path)
    onnx_file = onnx_minilm.ensure_exported(src)
    tok_file = src / "tokenizer.json"
    threads = onnx_minilm.default_threads()
    default = onnx_minilm.OnnxMiniLM(onnx_file, tok_file)
    bs = emb.onnx_batch_size

    def torch_encode(batch: list[str], size: int = emb.batch_size) -> np.ndarray:
        return np.asarray(st.encode(batch, batch_size=size, normalize_embeddings=True, convert_to_numpy=True,
                                    show_progress_bar=False), dtype=np.float32)

    torch_encode(texts[:16])
    default.encode(texts[:16])
    totals = {"torch_wall": 0.0, "torch_cpu": 0.0, "onnx_wall": 0.0, "onnx_cpu": 0.0}
    tv, ov = [], []
    for start in range(0, len(texts), slice_size):
        part = texts[start:start + slice_size]
        wall, cpu, vecs = clock(lambda part=part: torch_encode(part))
        totals["torch_wall"] += wall
        totals["torch_cpu"] += cpu
        tv.append(vecs)
        wall, cpu, vecs = clock(lambda part=part: default.encode(part, batch_size=bs))
        totals["onnx_wall"] += wall
        totals["onnx_cpu"] += cpu
        ov.append(vecs)
    cos = (np.concatenate(tv) * np.concatenate(ov)).sum(axis=1)
    n = len(texts)
    n_tokens = [min(len(default.token_ids(t)) + 2, onnx_minilm.MAX_LENGTH) for t in texts]
    main = {"texts": n, "mean_tokens": round(float(np.mean(n_tokens)), 1),
            "torch_texts_per_s": round(n / totals["torch_wall"], 1),
            "onnx_texts_per_s": round(n / totals["onnx_wall"], 1),
            "speedup_wall": round(totals["torch_wall"] / totals["onnx_wall"], 2),
            "torch_texts_per_cpu_s": round(n / totals["torch_cpu"], 1),
            "onnx_texts_per_cpu_s": round(n / totals["onnx_cpu"], 1),
            "speedup_cpu": round(totals["torch_cpu"] / totals["onnx_cpu"], 2),
            "torch_threads": torch.get_num_threads(), "onnx_threads": threads, "onnx_batch_size": bs,
            "parity_cosine_min": round(float(cos.min()), 7), "parity_cosine_mean": round(float(cos.mean()), 7)}

    sub = texts[:sweep_n]
    one = onnx_minilm.OnnxMiniLM(onnx_file, tok_file, threads=1)
    spin = onnx_minilm.OnnxMiniLM(onnx_file, tok_file, spinning=True)

    def torch_one_thread() -> np.ndarray:
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return torch_encode(sub)
        finally:
            torch.set_num_threads(before)

    configs: list[tuple[str, Any]] = [
        ("torch bs64 (today)", lambda: torch_encode(sub, 64)),
        ("torch bs16", lambda: torch_encode(sub, 16)),
        ("torch bs64 1 thread", torch_one_thread),
        (f"onnx bs{bs} sorted t{threads} (default)", lambda: default.encode(sub, bs)),
        (f"onnx bs{bs} unsorted t{threads}", lambda: default.encode(sub, bs, sort_by_length=False)),
        (f"onnx bs{bs} sorted t1", lambda: one.encode(sub, bs)),
        (f"onnx bs{bs} sorted t{threads} spinning", lambda: spin.encode(sub, bs)),
        *[(f"onnx bs{size} sorted t{threads}", lambda size=size: default.encode(sub, size)) for size in (8, 16, 64)],
    ]
    quantised = _int8_copy(onnx_file, work_dir / "int8.onnx")
    if quantised is not None:
        int8 = onnx_minilm.OnnxMiniLM(quantised, tok_file)
        int8.encode(sub[:8])
        configs.append((f"onnx INT8 bs{bs} t{threads} (reference)", lambda: int8.encode(sub, bs)))
    one.encode(sub[:8])
    spin.encode(sub[:8])
    reference = default.encode(sub, bs)
    sweep = []
    for name, fn in configs:
        wall, cpu, vecs = clock(fn)
        row = {"config": name, "texts_per_s": round(len(sub) / wall, 1), "texts_per_cpu_s": round(len(sub) / cpu, 1)}
        if "INT8" in name:
            row["cosine_min_vs_fp32"] = round(float((vecs * reference).sum(axis=1).min()), 4)
        sweep.append(row)
    return {"main": main, "sweep_texts": len(sub), "sweep": sweep}


def _int8_copy(onnx_file: Path, out: Path) -> Path | None:
    """Dynamic per-channel int8 quantisation (onnxruntime.quantization): measured only, never used —
    its vectors differ from fp32 (cosine ~0.99), which would invalidate existing indexes."""
    try:
        import logging

        from onnxruntime.quantization import QuantType, quantize_dynamic

        logging.getLogger().setLevel(logging.ERROR)
        quantize_dynamic(str(onnx_file), str(out), weight_type=QuantType.QInt8, per_channel=True,
                         extra_options={"DefaultTensorType": 1})  # 1 = float: shape inference misses some outputs
        return out
    except Exception:
        return None


def first_use(cache: Path) -> dict[str, Any]:
    """The one-time cost: a cold process with an empty cache exports the model, then embeds a query."""
    return run_cold([sys.executable, "-c", _EMBED_ONE.format(backend="onnx", query=QUERY)], child_env(cache))


def ingest_sample(cache: Path, home: Path) -> float:
    from citewise.cli.evals import sample_kb

    t = time.perf_counter()
    run_cold([sys.executable, "-m", "citewise.cli", "ingest", str(sample_kb()), "--home", str(home)],
             child_env(cache, CITEWISE_EMBEDDINGS_BACKEND="onnx"))
    return time.perf_counter() - t


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("onnxruntime", "onnx", "tokenizers", "torch", "sentence-transformers", "transformers"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "-"
    return out


def table(result: dict[str, Any]) -> str:
    lines = [f"machine: {result['cpus']} CPUs, load average {result['load_before']} -> {result['load_after']}",
             f"first use (export into an empty cache + one query): {result['first_use']['median_s']:.2f} s, "
             f"peak RSS {result['first_use']['peak_rss_mb']:.0f} MB",
             "", f"{'cold process':<22}{'median s':>10}{'x (a)':>8}{'CPU s':>8}{'x (a)':>8}{'peak RSS MB':>13}  runs"]
    for name, row in result["cold"].items():
        lines.append(f"{name:<22}{row['median_s']:>10.2f}{row['ratio_to_a']:>8.2f}{row['median_cpu_s']:>8.2f}"
                     f"{row['cpu_ratio_to_a']:>8.2f}{row['peak_rss_mb']:>13.0f}  {row['wall_s']}")
    for name, server in result.get("server", {}).items():
        lines += ["", f"{'langgraph dev, fresh' + (' (baseline)' if 'baseline' in name else ''):<32}"
                      f"{'median s':>10}{'x (a)':>8}  runs"]
        for key, row in server.items():
            if isinstance(row, dict):
                lines.append(f"{key:<32}{row['median_s']:>10.2f}{row['ratio_to_a']:>8.2f}  {row['runs']}")
    if "throughput" in result:
        m = result["throughput"]["main"]
        lines += ["", f"throughput on {m['texts']} SciFact abstracts (mean {m['mean_tokens']} tokens), texts/s "
                      f"(per CPU-second): torch {m['torch_texts_per_s']} ({m['torch_texts_per_cpu_s']}), "
                      f"onnx {m['onnx_texts_per_s']} ({m['onnx_texts_per_cpu_s']}), "
                      f"x{m['speedup_wall']} wall, x{m['speedup_cpu']} CPU",
                  f"parity over those abstracts: cosine min {m['parity_cosine_min']} mean {m['parity_cosine_mean']}",
                  f"sweep on {result['throughput']['sweep_texts']} abstracts:{'texts/s':>26}{'per CPU-s':>11}"]
        lines += [f"  {row['config']:<40}{row['texts_per_s']:>8.1f}{row['texts_per_cpu_s']:>11.1f}"
                  + (f"  cosine vs fp32 >= {row['cosine_min_vs_fp32']}" if "cosine_min_vs_fp32" in row else "")
                  for row in result["throughput"]["sweep"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m citewise.evals.bench_cold")
    parser.add_argument("--dataset", type=Path, default=default_dataset())
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--texts", type=int, default=2000, help="abstracts for the throughput run (0: skip)")
    parser.add_argument("--sweep-texts", type=int, default=256)
    parser.add_argument("--no-ask", action="store_true", help="skip the cold `citewise ask` runs and the server")
    parser.add_argument("--no-server", action="store_true", help="skip the fresh `langgraph dev` runs")
    parser.add_argument("--baseline", type=Path, help="a folder holding another checkout as citewise/ (e.g. "
                        "`git archive main | tar -x -C DIR/citewise`): its cold ask and server are measured too, "
                        "interleaved, on PYTHONPATH (before/after in one run)")
    parser.add_argument("--json", action="store_true", help="print only the JSON")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"cpus": os.cpu_count(), "load_before": [round(x, 2) for x in os.getloadavg()],
                              "versions": versions(), "query": QUERY}
    with tempfile.TemporaryDirectory(prefix="citewise-bench-cold-") as tmp:
        cache = Path(tmp) / "cache"
        result["first_use"] = summarise([first_use(cache)])
        home = None
        if not args.no_ask:
            home = Path(tmp) / "home"
            result["ingest_sample_kb_s"] = round(ingest_sample(cache, home), 2)
        result["cold"] = cold_runs(args.repeats, cache, home, args.baseline)
        if home is not None and not args.no_server:
            base = result["cold"]["a_import_langgraph"]["median_s"]
            result["server"] = server_runs(args.repeats, cache, home, Path(tmp) / "server", base, args.baseline)
        if args.texts > 0:
            os.environ["CITEWISE_CACHE_DIR"] = str(cache)
            texts = load_abstracts(args.dataset, args.texts)
            result["throughput"] = throughput(texts, min(args.sweep_texts, len(texts)), Path(tmp))
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    if not args.json:
        print(table(result))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
