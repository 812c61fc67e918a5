"""Run a questions file through the graph and score decision + article (the sample-questions eval).

    python -m citewise.evals.questions [--questions FILE] [--kb DIR] [--home DIR] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError

ROOT = Path(__file__).resolve().parent.parent


def split_of(entry_id: str) -> str:
    """The fixed dev/test rule of evals/QUESTIONS.md: dev when sha256(id)'s first byte is even."""
    return "dev" if hashlib.sha256(str(entry_id).encode()).digest()[0] % 2 == 0 else "test"


def load_questions(path: Path) -> list[dict[str, Any]]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"{path}: cannot read questions: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(q, dict) and "question" in q for q in data):
        raise InputError(f"{path}: expected a list of entries with a 'question'")
    return data


def judge(entry: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    expected_article = entry.get("article")
    allowed = expected_article if isinstance(expected_article, list) else [expected_article]
    got_article = (result.get("article_reference") or {}).get("article_id")
    decision_ok = result.get("decision") == entry["decision"]
    article_ok = got_article in allowed if expected_article is not None else True
    groups = result.get("required_fields") or {}
    fields_got = {f["key"] for g in ("participant_data", "plan_data") for f in groups.get(g, [])}
    fields_ok = set(entry.get("fields") or []) <= fields_got
    return {"id": entry.get("id"), "kind": entry.get("kind"), "question": entry["question"],
            "expected": {"decision": entry["decision"], "article": expected_article, "fields": entry.get("fields")},
            "got": {"decision": result.get("decision"), "article": got_article,
                    "confidence": result.get("confidence"), "fields": sorted(fields_got)},
            "decision_ok": decision_ok, "article_ok": article_ok, "fields_ok": fields_ok,
            "pass": decision_ok and article_ok}


def run(questions: list[dict[str, Any]], home: Path, **context: Any) -> dict[str, Any]:
    from ..api import ask

    rows = []
    latencies = []
    for entry in questions:
        started = time.perf_counter()
        result = ask(entry["question"], home=home, collected_data=entry.get("collected_data"),
                     filters=entry.get("filters"), mode=entry.get("mode"), **context)
        latencies.append((time.perf_counter() - started) * 1000)
        rows.append(judge(entry, result))
    n = len(rows)
    latencies.sort()
    with_fields = [r for r in rows if r["expected"]["fields"]]
    return {
        "questions": n,
        "pass_rate": round(sum(r["pass"] for r in rows) / n, 4) if n else 0.0,
        "decision_accuracy": round(sum(r["decision_ok"] for r in rows) / n, 4) if n else 0.0,
        "article_accuracy": round(sum(r["article_ok"] for r in rows) / n, 4) if n else 0.0,
        "fields_recall": round(sum(r["fields_ok"] for r in with_fields) / len(with_fields), 4) if with_fields else None,
        "latency_ms_p50": round(latencies[n // 2], 1) if n else None,
        "latency_ms_p95": round(latencies[min(n - 1, int(n * 0.95))], 1) if n else None,
        "rows": rows,
    }


def synonym_effect(questions: list[dict[str, Any]], home: Path, kinds: tuple[str, ...] = ("acronym", "colloquial"),
                   method: str = "bm25") -> dict[str, Any]:
    """Rank of the expected article in one retrieval branch, with and without synonym expansion."""
    from ..retrieval.hybrid import SearchParams
    from ..retrieval.snapshot import open_kb

    kb = open_kb(home)
    params = SearchParams(k=50, candidate_k=100, method=method)  # type: ignore[arg-type]
    rows = []
    for q in questions:
        if q.get("kind") not in kinds or not q.get("article"):
            continue
        allowed = q["article"] if isinstance(q["article"], list) else [q["article"]]
        expansions = kb.synonyms.expansions(q["question"])

        def rank(extra: list[str], q: dict[str, Any] = q, allowed: list[str] = allowed) -> int | None:
            docs = list(dict.fromkeys(h.doc_id for h in kb.search(q["question"], params=params, expansions=extra)))
            return next((i + 1 for i, d in enumerate(docs) if d in allowed), None)

        rows.append({"id": q["id"], "question": q["question"], "expansions": expansions,
                     "rank_without": rank([]), "rank_with": rank(expansions)})

    def mrr(key: str) -> float:
        return round(sum(1 / r[key] for r in rows if r[key]) / len(rows), 4) if rows else 0.0

    return {"method": method, "questions": len(rows), "mrr_without": mrr("rank_without"),
            "mrr_with": mrr("rank_with"), "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="citewise eval questions")
    parser.add_argument("--questions", type=Path, default=ROOT / "examples" / "questions.yaml")
    parser.add_argument("--kb", type=Path, default=ROOT / "examples" / "kb")
    parser.add_argument("--home", type=Path, help="use an already-ingested home instead of ingesting --kb")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--synonyms", action="store_true",
                        help="report the BM25 rank of the expected article with and without synonym expansion")
    args = parser.parse_args(argv)
    questions = load_questions(args.questions)
    with tempfile.TemporaryDirectory(prefix="citewise-eval-") as tmp:
        home = args.home
        if home is None:
            from ..kb.ingest import ingest

            home = Path(tmp)
            ingest([args.kb], home, progress=False)
        report = synonym_effect(questions, home) if args.synonyms else run(questions, home)
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif args.synonyms:
        for r in report["rows"]:
            print(f"{r['id']:<4} rank without {r['rank_without']!s:>4}  with {r['rank_with']!s:>4}  "
                  f"{r['question'][:60]}  + {r['expansions']}")
        print(f"\n{report['method']} MRR of the expected article: {report['mrr_without']} without synonyms, "
              f"{report['mrr_with']} with ({report['questions']} acronym/colloquial questions)")
    else:
        for r in report["rows"]:
            mark = "ok " if r["pass"] else "FAIL"
            print(f"{mark} {r['id']:<4} {r['got']['decision']:<13} {r['got']['article']!s:<45} "
                  f"conf={r['got']['confidence'] or 0:.2f}  {r['question'][:60]}")
            if not r["pass"]:
                print(f"       expected {r['expected']['decision']} / {r['expected']['article']}")
        print(f"\npass rate {report['pass_rate']:.1%}  decision {report['decision_accuracy']:.1%}  "
              f"article {report['article_accuracy']:.1%}  fields recall {report['fields_recall']}  "
              f"p50 {report['latency_ms_p50']} ms  p95 {report['latency_ms_p95']} ms  "
              f"({report['questions']} questions)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
