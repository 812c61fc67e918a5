"""Eval runs are records: what was run (configuration, git revision), on what (set, split), with what
result (metrics and every question's row), kept in the home's database so two runs can be compared.

    citewise eval questions --set telecom --split dev     # judged, printed, and stored as an EvalRun
    citewise eval runs [--limit 20] [--json]               # newest first
    citewise eval compare RUN_A RUN_B [--json]             # metric deltas, then question by question

Runs live in the home's store (SQLite file or PostgreSQL, like the query log), not in the temporary
home an eval set is ingested into, so they outlive the eval. An id may be given by a unique prefix.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field, fields
from pathlib import Path, PureWindowsPath
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..engine.records import dump, load
from ..errors import InputError

METRICS = ("pass_rate", "fact_recall", "citation_precision", "never_say_violations", "false_abstain_rate",
           "false_answer_rate", "latency_ms_p50", "latency_ms_p95")
# Context fields that never go into a record: where the KB lives, and prompt bodies (long, and an
# operator's own text). URLs are kept without credentials.
NOT_RECORDED = frozenset({"home", "database_url", "answer_system_prompt", "answer_user_prompt", "required_data_prompt",
                          "rerank_prompt", "artifact_system_prompt", "artifact_user_prompt"})


@dataclass
class EvalRun:
    kind: str  # "questions"
    eval_set: str
    split: str
    metrics: dict[str, Any]
    rows: list[dict[str, Any]]
    config: dict[str, Any] = field(default_factory=dict)
    revision: str = ""
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created_at: float = field(default_factory=time.time)


def revision() -> str:
    """The git commit of this checkout (`-dirty` when it has uncommitted changes); empty outside git."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return ""
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return head.stdout.strip() + ("-dirty" if dirty else "")


def without_credentials(url: str) -> str:
    """Scheme, host, port and path only: user, password, query (`?api_key=`) and fragment are dropped."""
    if "://" not in url:  # no scheme ("user:secret@host:8080/v1"): what stands before the last @ is a login
        return url.rpartition("@")[2].split("?", 1)[0].split("#", 1)[0]
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    host = parts.netloc.rpartition("@")[2]  # as written: an IPv6 host keeps its brackets
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def without_path(value: str) -> str:
    """A model given as a local path is recorded by its name: the directory says whose machine it was."""
    if re.match(r"^[A-Za-z]:[\\/]", value) or "\\" in value:  # a Windows path
        return PureWindowsPath(value).name or value
    if value.startswith(("/", "~", "./", "../")) or ("/" in value and Path(value).expanduser().exists()):
        return Path(value).name or value
    return value


def configuration(context: Any, **extra: Any) -> dict[str, Any]:
    """The answer settings a run used (a Context), without paths, prompt bodies or credentials."""
    out: dict[str, Any] = {}
    for f in fields(context):
        if f.name in NOT_RECORDED or f.name.startswith("_"):
            continue
        value = getattr(context, f.name)
        if isinstance(value, str):
            value = without_credentials(value) if "url" in f.name else without_path(value)
        out[f.name] = value
    return {**out, **extra}


def from_report(kind: str, eval_set: str, report: dict[str, Any], config: dict[str, Any]) -> EvalRun:
    metrics = {k: report.get(k) for k in (*METRICS, "questions", "checks", "by_category", "source_quarantined")
               if k in report}
    return EvalRun(kind=kind, eval_set=eval_set, split=report.get("split", "all"), metrics=metrics,
                   rows=report.get("rows", []), config=config, revision=revision())


def _store(home: Path | str) -> Any:
    from ..store import open_store

    return open_store(Path(home))


def save(run: EvalRun, home: Path | str) -> str:
    return _store(home).put_eval_run(dump(run))


def listing(home: Path | str, limit: int = 20) -> list[EvalRun]:
    return [load(EvalRun, r) for r in _store(home).eval_runs(limit=limit)]


def get(home: Path | str, ref: str) -> EvalRun:
    """A stored run by id or unique id prefix; a clear error otherwise."""
    store = _store(home)
    found = store.eval_run(ref)
    if found is not None:
        return load(EvalRun, found)
    matches = [r for r in store.eval_runs(limit=10_000) if str(r.get("id", "")).startswith(ref)] if ref else []
    if len(matches) == 1:
        return load(EvalRun, matches[0])
    if not matches:
        raise InputError(f"no eval run {ref!r} in {home} (citewise eval runs lists them)")
    raise InputError(f"{ref!r} matches {len(matches)} eval runs; give more of the id")


def compare(a: EvalRun, b: EvalRun) -> dict[str, Any]:
    """What changed from run A to run B: each metric, and each question that changed outcome or decision."""
    def delta(x: Any, y: Any) -> Any:
        return round(y - x, 4) if isinstance(x, int | float) and isinstance(y, int | float) else None

    metrics = {m: {"a": a.metrics.get(m), "b": b.metrics.get(m), "delta": delta(a.metrics.get(m), b.metrics.get(m))}
               for m in METRICS if m in a.metrics or m in b.metrics}
    rows_a, rows_b = {r["id"]: r for r in a.rows}, {r["id"]: r for r in b.rows}
    changed = []
    for qid in [q for q in rows_a if q in rows_b]:
        ra, rb = rows_a[qid], rows_b[qid]
        failed_a = sorted(c for c, ok in ra.get("checks", {}).items() if not ok)
        failed_b = sorted(c for c, ok in rb.get("checks", {}).items() if not ok)
        da, db = ra.get("got", {}).get("decision"), rb.get("got", {}).get("decision")
        if ra.get("pass") != rb.get("pass") or da != db or failed_a != failed_b:
            status = ("fixed" if rb.get("pass") and not ra.get("pass") else
                      "broken" if ra.get("pass") and not rb.get("pass") else "changed")
            changed.append({"id": qid, "status": status, "decision": [da, db], "failed_checks": [failed_a, failed_b],
                            "question": rb.get("question", "")})
    return {"a": summary(a), "b": summary(b), "metrics": metrics,
            "fixed": sum(c["status"] == "fixed" for c in changed),
            "broken": sum(c["status"] == "broken" for c in changed),
            "changed": changed, "only_in_a": sorted(set(rows_a) - set(rows_b)),
            "only_in_b": sorted(set(rows_b) - set(rows_a))}


def summary(run: EvalRun) -> dict[str, Any]:
    return {"id": run.id, "created": time.strftime("%Y-%m-%d %H:%M", time.gmtime(run.created_at)),
            "kind": run.kind, "set": run.eval_set, "split": run.split, "questions": len(run.rows),
            "pass_rate": run.metrics.get("pass_rate"), "revision": run.revision[:12] + (
                "-dirty" if run.revision.endswith("-dirty") else "")}


def _fmt(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def main(argv: list[str] | None = None, what: str = "runs") -> int:
    from ..config import Context

    parser = argparse.ArgumentParser(prog=f"citewise eval {what}")
    if what == "compare":
        parser.add_argument("run_a")
        parser.add_argument("run_b")
    else:
        parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--home", type=Path, help="the home whose database holds the runs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    home = args.home or Context().home_path
    if what == "compare":
        out = compare(get(home, args.run_a), get(home, args.run_b))
        if args.json:
            json.dump(out, sys.stdout, indent=2)
            sys.stdout.write("\n")
            return 0
        for side in ("a", "b"):
            r = out[side]
            print(f"{side.upper()} {r['id']} {r['set']}/{r['split']} {r['created']} {r['revision']}")
        print()
        print(f"{'metric':<24}{'A':>10}{'B':>10}{'B-A':>10}")
        for m, v in out["metrics"].items():
            print(f"{m:<24}{_fmt(v['a']):>10}{_fmt(v['b']):>10}{_fmt(v['delta']):>10}")
        print(f"\n{out['fixed']} fixed, {out['broken']} broken, {len(out['changed'])} changed in all")
        for c in out["changed"]:
            print(f"  {c['status']:<8} {c['id']:<44} {c['decision'][0]!s} -> {c['decision'][1]!s}  "
                  f"failed {c['failed_checks'][0]} -> {c['failed_checks'][1]}")
        for side in ("only_in_a", "only_in_b"):
            if out[side]:
                print(f"{side.replace('_', ' ')}: {', '.join(out[side])}")
        return 0
    runs = [summary(r) for r in listing(home, args.limit)]
    if args.json:
        json.dump(runs, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print(f"{'id':<14}{'created (UTC)':<18}{'set':<10}{'split':<7}{'n':>5}{'pass':>8}  revision")
    for r in runs:
        print(f"{r['id']:<14}{r['created']:<18}{r['set']:<10}{r['split']:<7}{r['questions']:>5}"
              f"{_fmt(r['pass_rate']):>8}  {r['revision']}")
    if not runs:
        print(f"(no eval runs stored in {home})")
    return 0

