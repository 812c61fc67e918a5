"""The sample questions file, run through the whole graph: decision and article must match >= 90%."""

from __future__ import annotations

from pathlib import Path

from citewise.evals.questions import load_questions, run
from tests.paths import QUESTIONS


def test_sample_questions_pass_rate(kb_home: Path, record_property) -> None:
    questions = load_questions(QUESTIONS)
    assert len(questions) >= 40 and sum(q["decision"] == "out_of_scope" for q in questions) >= 10
    report = run(questions, kb_home)
    failures = [f"{r['id']}: got {r['got']['decision']}/{r['got']['article']}, expected "
                f"{r['expected']['decision']}/{r['expected']['article']}" for r in report["rows"] if not r["pass"]]
    record_property("report:sample questions", f"pass rate {report['pass_rate']:.1%} ({report['questions']} "
                    f"questions), decision {report['decision_accuracy']:.1%}, "
                    f"article {report['article_accuracy']:.1%}, "
                    f"required-fields recall {report['fields_recall']:.0%}, p50 {report['latency_ms_p50']} ms; "
                    f"failures: {failures}")
    assert report["pass_rate"] >= 0.90, failures
    assert report["decision_accuracy"] >= 0.90
