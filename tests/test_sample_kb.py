"""The sample knowledge base meets the spec it was written to: a test, so it stays that way."""

from __future__ import annotations

from collections import Counter

from citewise.kb.articles import parse_markdown
from citewise.kb.fields import parse_required_data
from citewise.kb.guardrails import parse_guardrails
from citewise.kb.synonyms import load_synonyms
from tests.paths import SAMPLE_KB

REQUIRED = {"decision_guide", "required_data", "guardrails", "steps"}
EXTRAS = {"fees", "common_issues", "examples", "faqs"}


def _articles() -> list:
    return [parse_markdown(p.read_text(), source=str(p), default_id=p.name, default_title=p.stem)
            for p in sorted(SAMPLE_KB.rglob("*.md"))]


def test_every_article_has_the_required_sections_and_two_extras() -> None:
    articles = _articles()
    assert len(articles) >= 30
    for doc in articles:
        kinds = {s.chunk_type for s in doc.sections}
        assert doc.structured and kinds >= REQUIRED, (doc.doc_id, REQUIRED - kinds)
        assert len(kinds & EXTRAS) >= 2, (doc.doc_id, kinds & EXTRAS)
        rd = next(s for s in doc.sections if s.chunk_type == "required_data")
        fields, warnings = parse_required_data(rd.text)
        assert fields and not warnings, (doc.doc_id, warnings)
        rules = parse_guardrails(next(s for s in doc.sections if s.chunk_type == "guardrails").text)
        assert rules.never_say and rules.always, doc.doc_id


def test_coverage_of_record_keepers_plan_types_and_topics() -> None:
    articles = _articles()
    keepers = Counter(d.metadata["record_keeper"] for d in articles)
    plans = {d.metadata["plan_type"] for d in articles}
    topics = {d.metadata["topic"] for d in articles}
    assert len(keepers) >= 3 and {"401(k)", "403(b)"} <= plans
    assert {"rollover", "loan", "hardship_withdrawal", "required_minimum_distribution", "beneficiary_change",
            "distribution_after_separation", "contribution_change"} <= topics
    assert load_synonyms(SAMPLE_KB / "synonyms.yaml")


def test_the_wheel_ships_every_sample_article(tmp_path) -> None:
    """`citewise demo` in a regular install reads the sample KB from the package."""
    import shutil
    import subprocess
    import sys
    import zipfile

    from tests.paths import ROOT

    src = tmp_path / "src"  # build from a copy: setuptools leaves build/ behind in the tree it builds
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", ".citewise",
                                                             "__pycache__", ".*_cache", ".hypothesis"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(src)], check=True, capture_output=True)
    names = zipfile.ZipFile(next(tmp_path.glob("citewise-*.whl"))).namelist()
    shipped = {n.split("/")[-1] for n in names if n.startswith("citewise/examples/kb/") and n.endswith(".md")}
    assert shipped == {p.name for p in SAMPLE_KB.rglob("*.md")}
    assert not any(n.startswith(("tests/", "graphs/", "evals/")) for n in names)
    # every package directory of the source tree is in the wheel (a new sub-package must be listed)
    packages = {p.parent.relative_to(ROOT).as_posix() for p in ROOT.glob("*/__init__.py")} - {"tests"}
    assert {n.split("/")[1] for n in names if n.startswith("citewise/") and n.count("/") >= 2} >= packages
