"""Answer-level evaluation: run an eval set through citewise and check what the user gets.

    citewise eval questions [--set NAME]  (sample, telecom, docs, hr, solar, aid, pets, utilities, travel, tenancy,
                                          banking, rental, parcels, homeins, saas, gyms, tickets,
                                          cowork)
                            [--json] [--record]
    citewise eval questions --questions FILE --kb DIR

Each entry (format: evals/QUESTIONS.md) states what a correct answer must contain; an entry passes when
every check it states holds: decision, governing article, facts in `response.text`, phrases absent,
warnings carried, required-field keys, and citations from the right article. An entry with an
`artifact_type` asks for that artifact instead: its facts (and absent phrases) are looked for in
`artifact.markdown`, and its expected `headings` must each be a heading of it. The report gives the pass
rate, each check's rate, answer-fact recall, citation precision, never-say violations, false-abstain and
false-answer rates, broken down by category, for one split (dev to tune, test to report).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError

ROOT = Path(__file__).resolve().parent.parent
ANSWERED = ("can_proceed", "needs_data")
ABSTAINED = ("out_of_scope", "uncertain")


@dataclass(frozen=True)
class EvalSet:
    name: str
    questions: Path
    kb: Path | None  # None: built at run time (the documentation set)


SETS = {
    "sample": EvalSet("sample", ROOT / "examples" / "questions.yaml", ROOT / "examples" / "kb"),
    "telecom": EvalSet("telecom", ROOT / "examples" / "questions-telecom.yaml", ROOT / "examples" / "kb-telecom"),
    "docs": EvalSet("docs", ROOT / "examples" / "questions-docs.yaml", None),
    "hr": EvalSet("hr", ROOT / "examples" / "questions-hr.yaml", ROOT / "examples" / "kb-hr"),
    "solar": EvalSet("solar", ROOT / "examples" / "questions-solar.yaml", ROOT / "examples" / "kb-solar"),
    "aid": EvalSet("aid", ROOT / "examples" / "questions-aid.yaml", ROOT / "examples" / "kb-aid"),
    "pets": EvalSet("pets", ROOT / "examples" / "questions-pets.yaml", ROOT / "examples" / "kb-pets"),
    "utilities": EvalSet("utilities", ROOT / "examples" / "questions-utilities.yaml",
                         ROOT / "examples" / "kb-utilities"),
    "travel": EvalSet("travel", ROOT / "examples" / "questions-travel.yaml", ROOT / "examples" / "kb-travel"),
    "tenancy": EvalSet("tenancy", ROOT / "examples" / "questions-tenancy.yaml", ROOT / "examples" / "kb-tenancy"),
    "banking": EvalSet("banking", ROOT / "examples" / "questions-banking.yaml", ROOT / "examples" / "kb-banking"),
    "rental": EvalSet("rental", ROOT / "examples" / "questions-rental.yaml", ROOT / "examples" / "kb-rental"),
    "parcels": EvalSet("parcels", ROOT / "examples" / "questions-parcels.yaml", ROOT / "examples" / "kb-parcels"),
    "homeins": EvalSet("homeins", ROOT / "examples" / "questions-homeins.yaml", ROOT / "examples" / "kb-homeins"),
    "saas": EvalSet("saas", ROOT / "examples" / "questions-saas.yaml", ROOT / "examples" / "kb-saas"),
    "gyms": EvalSet("gyms", ROOT / "examples" / "questions-gyms.yaml", ROOT / "examples" / "kb-gyms"),
    "tickets": EvalSet("tickets", ROOT / "examples" / "questions-tickets.yaml", ROOT / "examples" / "kb-tickets"),
    "cowork": EvalSet("cowork", ROOT / "examples" / "questions-cowork.yaml", ROOT / "examples" / "kb-cowork"),
}


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
    ids = [q.get("id") for q in data]
    if any(i is None for i in ids) or len(set(ids)) != len(ids):
        raise InputError(f"{path}: every entry needs a unique 'id'")
    unchecked = [q["id"] for q in data if not any(q.get(k) not in (None, []) for k in CHECK_KEYS)]
    if unchecked:  # an entry that states nothing would pass whatever the answer
        raise InputError(f"{path}: entries state nothing to check ({', '.join(map(str, unchecked[:5]))}); "
                         f"give at least one of {', '.join(CHECK_KEYS)}")
    return data


# The keys a pass is judged on (evals/QUESTIONS.md); `article: null` checks nothing.
CHECK_KEYS = ("decision", "article", "facts", "must_not", "warnings", "fields", "cite", "headings")


def normalize(text: str) -> str:
    """Case-, Unicode- and spacing-folded text where `$50,000` = `$50000` and `401(k)` = `401k`."""
    from ..kb.text import normalize as fold

    text = unicodedata.normalize("NFKC", text).replace("\u2011", "-").replace("\u2013", "-").replace("\u2014", "-")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", fold(text))
    return re.sub(r"\s+", " ", text.replace("**", "").replace("`", "")).strip()


def _alternatives(item: Any) -> list[str]:
    return [str(a) for a in item] if isinstance(item, list) else [str(item)]


def contains(text: str, item: Any) -> bool:
    """True when any alternative of `item` occurs in `text`, after normalisation."""
    hay = normalize(text)
    return any(normalize(a) in hay for a in _alternatives(item))


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def artifact_texts(result: dict[str, Any]) -> tuple[str, str]:
    """An artifact's Markdown up to its list of sources (a fact must be in the artifact, not in a source's
    title), and the text of its own statements: its items without the headings that quote the KB's
    guardrails (a call script's "Never say" states the phrases it forbids)."""
    artifact = result.get("artifact") or {}
    markdown = (artifact.get("markdown") or "").split("\n## Sources\n")[0]
    own = [item for h in artifact.get("headings") or [] if not h.get("quotes_guardrails") for item in h["items"]]
    return markdown, "\n".join([artifact.get("title", ""), *own])


def judge(entry: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """Every check the entry states, with the evidence; `pass` when all hold."""
    # Only what the entry states is checked: an entry without a decision (facts only) is not counted as
    # expecting an abstention either (all() of no decisions would be vacuously true).
    checks: dict[str, bool] = {}
    if entry.get("decision") is not None:
        checks["decision"] = result.get("decision") in _as_list(entry.get("decision"))
    details: dict[str, Any] = {}
    response = result.get("response") or {}
    text = response.get("text") or ""
    stated = text
    if entry.get("artifact_type"):
        text, stated = artifact_texts(result)
        headings = entry.get("headings") or []
        got = re.findall(r"^## (.+)$", text, re.M)
        if headings:
            details["headings_missing"] = [h for h in headings if not any(normalize(h) == normalize(g) for g in got)]
            checks["headings"] = not details["headings_missing"]
    warnings = [w for s in response.get("sections") or [] for w in s.get("warnings", [])]
    got_article = (result.get("article_reference") or {}).get("article_id")
    decisions = _as_list(entry.get("decision"))
    if got_article is None and result.get("decision") in ANSWERED and result.get("citations"):
        got_article = result["citations"][0].get("doc_id")  # plain documents: the answer's main source
    # (an out_of_scope answer has no article: an entry that accepts one asks for its article only otherwise)
    if "article" in entry and not (result.get("decision") == "out_of_scope" and "out_of_scope" in decisions):
        allowed = _as_list(entry["article"])
        checks["article"] = got_article in allowed if allowed else True
    facts = entry.get("facts") or []
    if facts:
        found = [contains(text, f) for f in facts]
        details["facts_found"], details["facts_missing"] = sum(found), [f for f, ok in zip(facts, found) if not ok]
        checks["facts"] = all(found)
    must_not = entry.get("must_not") or []
    if must_not:
        present = [p for p in must_not if contains(stated, p)]
        details["must_not_present"] = present
        checks["must_not"] = not present
    wanted = entry.get("warnings") or []
    if wanted:
        missing = [w for w in wanted if not any(contains(x, w) for x in warnings)]
        details["warnings_missing"] = missing
        checks["warnings"] = not missing
    fields = entry.get("fields") or []
    if fields:
        groups = result.get("required_fields") or {}
        got = {f["key"] for g in ("participant_data", "plan_data") for f in groups.get(g, [])}
        details["fields_missing"] = sorted(set(fields) - got)
        checks["fields"] = not details["fields_missing"]
    cite_from = _as_list(entry.get("cite", entry.get("article")))
    cited = [c.get("doc_id") for c in result.get("citations") or []]
    if cite_from and cited and result.get("decision") in ANSWERED:
        details["citations_right"], details["citations"] = sum(d in cite_from for d in cited), len(cited)
        checks["citations"] = details["citations_right"] == len(cited)
    expects_answer = any(d in ANSWERED for d in decisions)
    expects_abstain = bool(decisions) and all(d in ABSTAINED for d in decisions)
    expected = {"decision": entry.get("decision"), "article": entry.get("article")}
    if entry.get("artifact_type"):
        expected["artifact_type"] = entry["artifact_type"]
    return {"id": entry["id"], "category": entry.get("category", ""), "split": split_of(entry["id"]),
            "question": entry["question"], "expected": expected,
            "got": {"decision": result.get("decision"), "article": got_article, "confidence": result.get("confidence")},
            "checks": checks, "details": details, "pass": all(checks.values()),
            "false_abstain": expects_answer and result.get("decision") in ABSTAINED,
            "false_answer": expects_abstain and result.get("decision") in ANSWERED,
            "never_say": len(details.get("must_not_present", []))}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Rates over judged rows (each check over the rows that state it)."""
    def rate(values: list[bool]) -> float | None:
        return round(sum(values) / len(values), 4) if values else None

    names = sorted({c for r in rows for c in r["checks"]})
    facts_stated = sum(r["details"].get("facts_found", 0) + len(r["details"].get("facts_missing", [])) for r in rows)
    cited = sum(r["details"].get("citations", 0) for r in rows)
    answerable = [r for r in rows if any(d in ANSWERED for d in _as_list(r["expected"]["decision"]))]
    abstaining = [r for r in rows if (d := _as_list(r["expected"]["decision"])) and all(x in ABSTAINED for x in d)]
    return {"questions": len(rows), "pass_rate": rate([r["pass"] for r in rows]),
            "checks": {n: rate([r["checks"][n] for r in rows if n in r["checks"]]) for n in names},
            "fact_recall": round(sum(r["details"].get("facts_found", 0) for r in rows) / facts_stated, 4)
            if facts_stated else None,
            "citation_precision": round(sum(r["details"].get("citations_right", 0) for r in rows) / cited, 4)
            if cited else None,
            "never_say_violations": sum(r["never_say"] for r in rows),
            "false_abstain_rate": rate([r["false_abstain"] for r in answerable]),
            "false_answer_rate": rate([r["false_answer"] for r in abstaining])}


def run(questions: list[dict[str, Any]], home: Path, *, split: str = "all",
        answer: Callable[..., dict[str, Any]] | None = None, **context: Any) -> dict[str, Any]:
    """Answer each entry of the split and judge it; the report holds totals, per-category rates and rows."""
    rows = []
    for entry in [q for q in questions if split == "all" or split_of(q["id"]) == split]:
        result, ms = answer_entry(entry, home, answer, context)
        rows.append({**judge(entry, result), "confidence": result.get("confidence"), "latency_ms": ms})
    return report_of(rows, split, quarantined(home, context))


def quarantined(home: Path, context: dict[str, Any]) -> dict[str, bool] | None:
    """Each document of the KB -> whether it is held back (it addresses the assistant: kb/articles.py
    quarantines it whole, and it is never answered from), read with the settings the answers used; None when
    the KB cannot be read (the count is then "not measured", and the eval's report is not lost for it)."""
    from dataclasses import fields

    from ..config import Context
    from ..engine.pipeline import open_snapshot
    from ..errors import CitewiseError

    known = {f.name for f in fields(Context)}
    try:
        kb = open_snapshot(Context(home=str(home), **{k: v for k, v in context.items() if k in known}))
    except (CitewiseError, OSError, ValueError):
        return None
    return {d: bool(info.metadata.get("quarantined")) for d, info in kb.docs.items()}


def source_quarantined(row: dict[str, Any], held: dict[str, bool]) -> bool:
    """An answerable question whose every accepted source in the KB (the entry may also list other spellings
    of a document's id) is quarantined: it cannot pass while that policy stands (a question expecting an
    abstention still can)."""
    expected = row["expected"]
    sources = [a for a in _as_list(expected.get("article")) if a in held]
    decisions = [d for d in _as_list(expected.get("decision")) if d is not None]
    return (bool(sources) and all(held[a] for a in sources)
            and (not decisions or any(d in ANSWERED for d in decisions)))


def answer_entry(entry: dict[str, Any], home: Path, answer: Callable[..., dict[str, Any]] | None,
                 context: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """One entry answered as a caller would ask it (mode, artifact type, filters, collected data), timed."""
    if answer is None:
        from ..api import ask as answer
    kind = {"mode": "artifact", "artifact_type": entry["artifact_type"]} if entry.get("artifact_type") else {
        "mode": entry.get("mode")}
    started = time.perf_counter()
    result = answer(entry["question"], home=home, collected_data=entry.get("collected_data"),
                    filters=entry.get("filters"), **kind, **context)
    return result, round((time.perf_counter() - started) * 1000, 1)


def report_of(rows: list[dict[str, Any]], split: str, held: dict[str, bool] | None = None) -> dict[str, Any]:
    """Totals, per-category rates and rows. `held`: the quarantined documents; the questions that expect one
    as their source are counted apart, so the policy's cost is measured, not hidden in the pass rate."""
    for row in rows:
        row["source_quarantined"] = None if held is None else source_quarantined(row, held)
    latencies = sorted(r["latency_ms"] for r in rows)
    n = len(rows)
    categories = sorted({r["category"] for r in rows})
    return {"split": split, **summarize(rows),
            "by_category": {c: summarize([r for r in rows if r["category"] == c]) for c in categories},
            "source_quarantined": None if held is None else {
                "questions": sum(bool(r["source_quarantined"]) for r in rows),
                "passed": sum(bool(r["source_quarantined"]) and r["pass"] for r in rows)},
            "latency_ms_p50": latencies[n // 2] if n else None,
            "latency_ms_p95": latencies[min(n - 1, int(n * 0.95))] if n else None,
            "rows": rows}


def run_langsmith(questions: list[dict[str, Any]], home: Path, *, name: str, split: str = "all",
                  answer: Callable[..., dict[str, Any]] | None = None, **context: Any) -> dict[str, Any]:
    """The same answers and the same judge, run through `langsmith.evaluate` so LangSmith users see them.

    Examples stay in memory and nothing is uploaded unless LANGSMITH_API_KEY is set; then the set is
    kept as the dataset `citewise-<name>` (examples upserted by entry id) and the experiment uploaded.
    Each check the judge makes is one feedback key, plus `pass`.
    """
    import logging
    import os
    import uuid
    import warnings

    from langsmith import Client, evaluate
    from langsmith.schemas import Example

    chosen = {q["id"]: q for q in questions if split == "all" or split_of(q["id"]) == split}
    upload = bool(os.environ.get("LANGSMITH_API_KEY"))
    ids = {qid: uuid.uuid5(uuid.NAMESPACE_URL, f"citewise:{name}:{qid}") for qid in chosen}
    if upload:
        client = Client()
        dataset = (client.read_dataset(dataset_name=f"citewise-{name}") if client.has_dataset(
            dataset_name=f"citewise-{name}") else client.create_dataset(f"citewise-{name}"))
        known = {e.id for e in client.list_examples(dataset_id=dataset.id)}
        new = [qid for qid in chosen if ids[qid] not in known]
        if new:
            client.create_examples(ids=[ids[q] for q in new], inputs=[{"entry_id": q} for q in new],
                                   outputs=[{"entry": chosen[q]} for q in new], dataset_id=dataset.id)
        data: Any = [e for e in client.list_examples(dataset_id=dataset.id) if e.id in set(ids.values())]
    else:
        logging.getLogger("langsmith.client").setLevel(logging.ERROR)  # offline: no "cannot reach" noise
        data = [Example(id=ids[qid], inputs={"entry_id": qid}, outputs={"entry": entry}, dataset_id=uuid.uuid4())
                for qid, entry in chosen.items()]
    latency: dict[str, float] = {}

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        result, latency[inputs["entry_id"]] = answer_entry(chosen[inputs["entry_id"]], home, answer, context)
        return result

    def checks(run: Any, example: Any) -> dict[str, Any]:
        row = judge(example.outputs["entry"], run.outputs or {})
        return {"results": [{"key": "pass", "score": int(row["pass"])},
                            *({"key": c, "score": int(ok)} for c, ok in row["checks"].items())]}

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*upload_runs.*beta")
        results = evaluate(target, data=data, evaluators=[checks], upload_runs=upload, max_concurrency=0,
                           experiment_prefix=f"citewise-{name}-{split}", metadata={"split": split, "set": name})
    rows = []
    for item in results:
        entry = item["example"].outputs["entry"]
        out = item["run"].outputs or {}
        rows.append({**judge(entry, out), "confidence": out.get("confidence"), "latency_ms": latency[entry["id"]]})
    return report_of(rows, split, quarantined(home, context))


def prepared_home(eval_set: EvalSet, tmp: Path) -> Path:
    """An ingested home for an eval set (the documentation KB is built from installed metadata first)."""
    from ..kb.ingest import ingest

    kb = eval_set.kb
    if kb is None:
        from .docs_kb import build_docs_kb

        kb = tmp / "docs-kb"
        build_docs_kb(kb)
    home = tmp / "home"
    ingest([kb], home, progress=False)
    return home


def synonym_effect(questions: list[dict[str, Any]], home: Path, kinds: tuple[str, ...] = ("acronym", "colloquial"),
                   method: str = "bm25") -> dict[str, Any]:
    """Rank of the expected article in one retrieval branch, with and without synonym expansion."""
    from ..retrieval.hybrid import SearchParams
    from ..retrieval.snapshot import open_kb

    kb = open_kb(home)
    params = SearchParams(k=50, candidate_k=100, method=method)  # type: ignore[arg-type]
    rows = []
    for q in questions:
        if q.get("category") not in kinds or not q.get("article"):
            continue
        allowed = _as_list(q["article"])
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


def print_report(report: dict[str, Any], name: str) -> None:
    for r in report["rows"]:
        if not r["pass"]:
            failed = [c for c, ok in r["checks"].items() if not ok]
            print(f"FAIL {r['id']:<44} {r['got']['decision']!s:<13} {r['got']['article']!s:<40} "
                  f"conf={r['confidence'] or 0:.2f} failed={failed} {r['details'].get('facts_missing', '')}")
    print(f"\n{name} [{report['split']}] {report['questions']} questions: pass {report['pass_rate']:.1%}  "
          f"fact recall {report['fact_recall']}  citation precision {report['citation_precision']}  "
          f"never-say {report['never_say_violations']}  false-abstain {report['false_abstain_rate']}  "
          f"false-answer {report['false_answer_rate']}  p50 {report['latency_ms_p50']} ms")
    print("checks: " + "  ".join(f"{k} {v:.1%}" for k, v in report["checks"].items() if v is not None))
    if (held := report.get("source_quarantined") or {}).get("questions"):
        print(f"source quarantined (addresses the assistant; never answered from): {held['questions']} questions, "
              f"{held['passed']} passed")
    print(f"{'category':<16}{'n':>5}{'pass':>8}")
    for c, s in report["by_category"].items():
        print(f"{c:<16}{s['questions']:>5}{s['pass_rate']:>8.1%}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="citewise eval questions")
    parser.add_argument("--set", choices=sorted(SETS), default="sample", help="a bundled eval set")
    parser.add_argument("--questions", type=Path, help="a questions file (with --kb or --home)")
    parser.add_argument("--kb", type=Path, help="the KB folder the questions are about")
    parser.add_argument("--home", type=Path, help="use an already-ingested home instead of ingesting the KB")
    parser.add_argument("--split", choices=["dev", "test", "all"], default="test")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--synonyms", action="store_true",
                        help="report the BM25 rank of the expected article with and without synonym expansion")
    parser.add_argument("--langsmith", action="store_true",
                        help="run through langsmith.evaluate (uploaded when LANGSMITH_API_KEY is set)")
    parser.add_argument("--runs-home", type=Path,
                        help="the home whose database keeps this run (default: --home, else the configured home)")
    parser.add_argument("--no-record", action="store_true", help="do not store this run as an EvalRun")
    args = parser.parse_args(argv)
    eval_set = SETS[args.set]
    if args.questions:
        eval_set = EvalSet(args.questions.stem, args.questions, args.kb)
    questions = load_questions(eval_set.questions)
    with tempfile.TemporaryDirectory(prefix="citewise-eval-") as tmp:
        home = args.home or prepared_home(eval_set, Path(tmp))
        if args.synonyms:
            report = synonym_effect(questions, home)
        elif args.langsmith:
            report = run_langsmith(questions, home, name=eval_set.name, split=args.split)
        else:
            report = run(questions, home, split=args.split)
    if not args.synonyms and not args.no_record:
        from ..config import Context
        from .runs import configuration, from_report, save

        runs_home = args.runs_home or args.home or Context().home_path
        record = from_report("questions", eval_set.name, report,
                             configuration(Context(), langsmith=args.langsmith))
        report["eval_run"] = save(record, runs_home)
        print(f"stored as eval run {report['eval_run']} in {runs_home} (citewise eval runs)", file=sys.stderr)
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif args.synonyms:
        for r in report["rows"]:
            print(f"{r['id']:<40} rank without {r['rank_without']!s:>4}  with {r['rank_with']!s:>4}  "
                  f"{r['question'][:60]}  + {r['expansions']}")
        print(f"\n{report['method']} MRR of the expected article: {report['mrr_without']} without synonyms, "
              f"{report['mrr_with']} with ({report['questions']} acronym/colloquial questions)")
    else:
        print_report(report, eval_set.name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
