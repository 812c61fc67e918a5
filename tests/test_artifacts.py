"""Artifacts (mode `artifact`): every type built from the sample KB through the whole graph, with each item
cited, verified against the chunk it cites and drawn from the section type its heading names; abstaining
when the KB lacks the material; the model path against the loopback stand-in; the CLI and the API."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args, get_type_hints

import pytest

from citewise.config import Context
from citewise.engine.artifact_types import ARTIFACT_TYPES, NOTHING
from citewise.engine.verify import citations_in, strip_citations, support_score
from citewise.errors import InputError
from citewise.graphs.kb_agent import graph
from citewise.graphs.state import InputState
from citewise.kb.guardrails import reflects
from citewise.kb.text import contains_phrase, squash
from citewise.store.sqlite import Store
from tests.openai_standin import OpenAIStandIn

# (type, subject, governing article): each subject's article has every section its type reads.
CASES = [
    ("checklist", "hardship withdrawal at Acme", "acme-401k-hardship-withdrawal"),
    ("workflow", "rolling over an Acme 401(k) to an IRA", "acme-401k-rollover"),
    ("call_script", "a loan request from a Summit 403(b)", "summit-403b-loan"),
    ("brief", "loans from an Acme 401(k)", "acme-401k-loan"),
    ("blueprint", "loans from an Acme 401(k)", "acme-401k-loan"),
]
# A 401(k) KB describes no project: these blueprint headings must say so rather than be filled.
NOT_A_PROJECT = {"Goals", "Architecture", "Features"}


def build(home: Path, artifact_type: str, subject: str, **inputs: Any) -> dict[str, Any]:
    ctx = inputs.pop("ctx", None) or Context(home=str(home))
    return graph.invoke({"question": subject, "mode": "artifact", "artifact_type": artifact_type, **inputs},
                        context=ctx)


def section_of(markdown: str, heading: str) -> str:
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", markdown, re.S | re.M)
    assert match, f"no heading {heading!r}"
    return match.group(1)


@pytest.mark.parametrize("artifact_type,subject,article", CASES)
def test_every_type_is_cited_verified_and_drawn_from_its_section_types(kb_home: Path, artifact_type: str,
                                                                        subject: str, article: str) -> None:
    kind = ARTIFACT_TYPES[artifact_type]
    out = build(kb_home, artifact_type, subject)
    art = out["artifact"]
    assert out["decision"] in ("needs_data", "can_proceed") and out["guardrails"]["passed"]
    assert out["article_reference"]["article_id"] == article and out["review"]["dropped"] == []
    assert art["type"] == artifact_type and art["title"].startswith(kind.label + ": ")
    assert [h["heading"] for h in art["headings"]] == [h.name for _, h in kind.headings]  # fixed, in order
    assert out["response"]["text"] == art["markdown"]
    positions = [art["markdown"].index(f"\n## {h.name}\n") for _, h in kind.headings]
    assert positions == sorted(positions)

    by_id = {c["id"]: c for c in out["citations"]}
    chunks = Store(kb_home).chunks_by_id(c["chunk_id"] for c in out["citations"])
    assert set(chunks) == {c["chunk_id"] for c in out["citations"]}  # every citation resolves to a stored chunk
    rules = {"never_say": [], "always": []}
    for c in out["citations"]:
        for key in rules:
            rules[key] += [r for r in _guardrails(kb_home, c["doc_id"])[key] if r not in rules[key]]
    for heading in art["headings"]:
        spec = kind.heading(heading["heading"])
        body = section_of(art["markdown"], heading["heading"])
        if heading["empty"]:
            assert heading["items"] == [] and spec.empty in body
            continue
        types = set()
        for item in heading["items"]:
            labels = citations_in(item)
            assert labels and set(labels) <= set(by_id), item  # cited, and every citation is listed
            claim, sources = strip_citations(item), [chunks[by_id[lb]["chunk_id"]]["text"] for lb in labels]
            if heading["quotes_guardrails"]:  # the article's own guardrail line, word for word
                assert any(squash(claim) in squash(s) for s in sources), item
            else:  # supported by what it cites, and free of never-say phrases
                assert support_score(claim, sources) >= 0.5, item
                assert not any(contains_phrase(claim, p) for p in rules["never_say"]), item
            assert claim in body
            types |= {by_id[lb]["chunk_type"] for lb in labels}
        assert types & set(spec.types), (heading["heading"], types)  # at least one from the expected section type
    filled = {h["heading"] for h in art["headings"] if not h["empty"]}
    if artifact_type == "blueprint":
        assert NOT_A_PROJECT.isdisjoint(filled) and filled == {h.name for _, h in kind.headings} - NOT_A_PROJECT
    else:
        assert filled == {h.name for _, h in kind.headings}
    warnings = next(h for h in art["headings"] if h["heading"] == kind.always_heading.name)["items"]
    for rule in _guardrails(kb_home, article)["always"]:  # every Always-rule of the article is present
        assert any(reflects(rule, strip_citations(w)) for w in warnings), rule
    meta = out["metadata"]
    assert meta["context_budget"] == int(0.7 * 4000) and meta["context_tokens"] <= meta["context_budget"]


def _guardrails(home: Path, doc_id: str) -> dict[str, list[str]]:
    from citewise.retrieval.snapshot import open_kb

    return open_kb(home).docs[doc_id].guardrails


def test_rendering_is_deterministic_and_the_engine_builds_the_same_artifact(kb_home: Path) -> None:
    from citewise.engine import answer

    ctx = Context(home=str(kb_home))
    first = build(kb_home, "workflow", "hardship withdrawal from a Summit 403(b)")
    again = build(kb_home, "workflow", "hardship withdrawal from a Summit 403(b)")
    ours = answer("hardship withdrawal from a Summit 403(b)", ctx=ctx, mode="artifact", artifact_type="workflow")
    assert first["artifact"] == again["artifact"] == ours["artifact"]
    for key in ("decision", "confidence", "response", "citations", "guardrails", "article_reference"):
        assert ours[key] == first[key], key
    steps = section_of(first["artifact"]["markdown"], "Steps")
    assert re.search(r"^1\. .+\[C\d+\]$", steps, re.M) and re.search(r"^2\. ", steps, re.M)  # numbered, in order
    checklist = build(kb_home, "checklist", "hardship withdrawal at Acme")["artifact"]["markdown"]
    assert re.search(r"^- \[ \] .+\[C\d+\]$", section_of(checklist, "Data to collect"), re.M)


def test_a_request_the_kb_cannot_support_abstains_with_empty_headings(kb_home: Path) -> None:
    out = build(kb_home, "workflow", "adopting a rescue dog from an animal shelter")
    assert out["decision"] == "out_of_scope" and out["citations"] == []
    art = out["artifact"]
    assert art["type"] == "workflow" and all(h["empty"] and h["items"] == [] for h in art["headings"])
    assert "[C" not in art["markdown"] and art["markdown"].count(NOTHING) == len(art["headings"])
    assert "I don't have information about that in this knowledge base" in out["response"]["text"]
    assert "build_artifact" not in out["metadata"]["timings_ms"]  # abstained before anything was built


def test_relevant_documents_without_the_material_abstain_after_building(tmp_path: Path) -> None:
    """A KB that covers the subject but has no procedure for it: a workflow has nothing for its steps."""
    from citewise.engine import answer
    from citewise.kb.ingest import ingest

    src = tmp_path / "kb"
    src.mkdir()
    (src / "espresso.md").write_text(
        "# The espresso machine\n\nThe office espresso machine is a dual-boiler model on the third floor.\n\n"
        "## Costs\n\nEach espresso costs 40 cents, charged to the team's coffee budget.\n")
    ingest([src], tmp_path / "home", progress=False)
    ctx = Context(home=str(tmp_path / "home"))
    out = graph.invoke({"question": "the office espresso machine", "artifact_type": "workflow"}, context=ctx)
    assert out["decision"] == "out_of_scope" and out["citations"] == []
    assert "workflow needs (Steps)" in out["metadata"]["abstain_reason"]
    assert all(h["empty"] for h in out["artifact"]["headings"]) and "40 cents" not in out["artifact"]["markdown"]
    assert answer("the office espresso machine", ctx=ctx, artifact_type="workflow")["decision"] == "out_of_scope"
    brief = graph.invoke({"question": "the office espresso machine", "artifact_type": "brief"}, context=ctx)
    fees = next(h for h in brief["artifact"]["headings"] if h["heading"] == "Fees")
    assert brief["decision"] == "can_proceed" and any("40 cents" in i for i in fees["items"])  # "Costs" -> Fees



def test_a_workflow_for_an_article_without_steps_is_uncertain_with_what_the_article_has(tmp_path: Path) -> None:
    """The article governs (its data and decision points are known) but states no procedure: the workflow
    goes out as `uncertain` with its Steps heading marked empty, not as "nothing on this"; the route
    says why. Without a governing article the request still abstains (the test above)."""
    from citewise.kb.ingest import ingest

    src = tmp_path / "kb"
    src.mkdir()
    (src / "changes.md").write_text(
        "---\nid: fare-changes\ntitle: Changing an economy ticket\nrecord_keeper: Aurelis\ntopic: changes\n---\n"
        "## Decision guide\n- If the ticket is Economy Flex, there is no change fee, only the fare difference.\n"
        "- If the ticket is Economy Standard, charge the $75 change fee plus any fare difference.\n"
        "## Business rules\n- A change must be made at least 3 hours before departure.\n"
        "## Required data\n- Booking reference (text, required, participant): The booking. Why: finds the ticket.\n")
    ingest([src], tmp_path / "home", progress=False)
    # confidence routing off: a one-article KB reads low confidence, and a partial artifact is offered only
    # above the threshold (the article must surely be the one asked about)
    ctx = Context(home=str(tmp_path / "home"), confidence_threshold=0.0)
    out = graph.invoke({"question": "changing an Aurelis economy ticket", "artifact_type": "workflow"}, context=ctx)
    assert out["decision"] == "uncertain", out["decision"]
    headings = {h["heading"]: h for h in out["artifact"]["headings"]}
    assert headings["Steps"]["empty"] and not headings["Decision points"]["empty"]
    assert "$75 change fee" in out["artifact"]["markdown"] and "does not state the Steps a workflow needs" in \
        out["response"]["text"]
    assert out["citations"] and {c["doc_id"] for c in out["citations"]} == {"fare-changes"}



def test_only_the_governing_article_s_own_sections_make_a_partial_artifact() -> None:
    """A workflow whose only item is an Always-rule (carried by every answer of the nearest article) or a
    decision point from another article is no partial workflow of the governing one: it abstains."""
    from citewise.engine.artifact import own_material
    from citewise.engine.records import Artifact, ArtifactHeading, Citation, Verdict

    kind = ARTIFACT_TYPES["workflow"]
    cites = [Citation(id=f"C{i}", chunk_id=f"{doc}#0", doc_id=doc, title=doc, chunk_type="decision_guide",
                      tier="critical", score=1.0, snippet="") for i, doc in ((1, "article-a"), (2, "article-b"))]

    def artifact(heading: str, item: str) -> Artifact:
        return Artifact(type="workflow", title="t", headings=[ArtifactHeading(heading, [item], False)])

    verdict = Verdict(sections=[], citations=cites, violations=[], passed=True, confidence=0.9, parts={})
    assert not own_material(kind, artifact("Warnings", "The carrier replaces the bag. [C1]"), verdict, "article-a")
    assert not own_material(kind, artifact("Decision points", "If late, rebook. [C2]"), verdict, "article-a")
    assert own_material(kind, artifact("Decision points", "If late, rebook. [C1]"), verdict, "article-a")
    # a call script's quoted guardrails are the article's words, not material for its script
    script = Artifact(type="call_script", title="t", headings=[ArtifactHeading("Never say", ["Never say: free. [C1]"],
                                                                                 False, True)])
    assert not own_material(ARTIFACT_TYPES["call_script"], script, verdict, "article-a")


PROJECT = {
    "README.md": """# Nimbus

Nimbus is a self-hosted job scheduler for small teams that runs cron-style jobs in containers.

## Goals

Nimbus aims to replace ad-hoc crontabs with one auditable place where every scheduled job is declared.
It should run on a single machine without any external database.

## Architecture

A scheduler process reads job definitions from YAML files and stores run history in an embedded SQLite file.
Each job runs in its own container, started by a worker pool that the scheduler supervises.

## Features

- Cron expressions with time zones for every job.
- Retries with exponential backoff when a job exits with an error.
- A web dashboard that shows the history and logs of every run.

## Known limitations

The scheduler is a single process, so a machine failure stops all jobs until it restarts.
Jobs longer than 24 hours are killed by the worker pool.

## Roadmap

Clustering of several schedulers with leader election is planned for the next major release.
A plugin interface for notifications is planned after that.
""",
    "office.md": "# Office plants\n\nWater the office plants every Tuesday; the ferns need more water in summer.\n",
}


@pytest.fixture(scope="module")
def project_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from citewise.kb.ingest import ingest

    src = tmp_path_factory.mktemp("project-kb")
    for name, text in PROJECT.items():
        (src / name).write_text(text)
    home = tmp_path_factory.mktemp("project-home")
    ingest([src], home, progress=False)
    return home


def test_blueprint_of_a_project_kb_maps_sections_by_their_heading_words(project_home: Path) -> None:
    kind = ARTIFACT_TYPES["blueprint"]
    out = build(project_home, "blueprint", "the Nimbus job scheduler")
    assert out["decision"] == "can_proceed" and out["guardrails"]["passed"]
    by_id = {c["id"]: c for c in out["citations"]}
    assert {c["doc_id"] for c in out["citations"]} == {"README.md"}  # the other document is another subject
    for heading in out["artifact"]["headings"]:
        spec = kind.heading(heading["heading"])
        assert not heading["empty"] and heading["items"], heading["heading"]  # every heading filled
        cited = [by_id[lb] for item in heading["items"] for lb in citations_in(item)]
        assert any(spec.matches(c["chunk_type"], c["section"], c["title"]) for c in cited), heading["heading"]
    text = out["artifact"]["markdown"]
    assert "embedded SQLite file" in section_of(text, "Architecture")
    assert "leader election" in section_of(text, "Next Steps") and "24 hours" in section_of(text, "Risks")


@pytest.mark.parametrize("inputs,message", [
    ({"mode": "artifact"}, "needs an artifact_type, one of: checklist, workflow, call_script, brief, blueprint"),
    ({"artifact_type": "poem"}, "artifact_type must be one of"),
    ({"mode": "answer", "artifact_type": "brief"}, "artifact_type goes with mode 'artifact'"),
    ({"artifact_type": "brief", "max_tokens": 10}, "max_tokens"),
])
def test_invalid_artifact_requests_are_clear_errors(kb_home: Path, inputs: dict, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        graph.invoke({"question": "hardship withdrawal", **inputs}, context=Context(home=str(kb_home)))


def test_the_input_schema_lists_every_artifact_type() -> None:
    assert set(get_args(get_type_hints(InputState)["artifact_type"])) == set(ARTIFACT_TYPES)


def test_a_larger_budget_is_still_never_exceeded(kb_home: Path) -> None:
    out = build(kb_home, "brief", "required minimum distributions", max_tokens=400)
    meta = out["metadata"]
    assert meta["context_budget"] == 280 and 0 < meta["context_tokens"] <= 280
    big = build(kb_home, "brief", "required minimum distributions", max_tokens=8000)["metadata"]
    assert big["context_budget"] == 5600 and big["context_tokens"] <= 5600
    assert big["chunks_used"] > meta["chunks_used"] and big["chunks_retrieved"] == 2 * Context().top_k


# --- the model path -------------------------------------------------------------------------------
INVENTED = "Acme approves every hardship request within one hour and waives all taxes."


@pytest.fixture(scope="module")
def llm() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn() as server:
        yield server


def model_ctx(home: Path, llm: OpenAIStandIn, **extra: Any) -> Context:
    llm.script.clear()
    llm.requests.clear()
    return Context(home=str(home), llm_model="standin-model", llm_base_url=llm.base_url, llm_timeout=5,
                   llm_max_retries=1, llm_required_fields=False, **extra)


def scripted_checklist(offline: dict[str, Any]) -> dict[str, Any]:
    """What a careful model would return (the offline items, as structured output), plus one invented item."""
    kind = ARTIFACT_TYPES["checklist"]
    reply: dict[str, Any] = {"cannot_answer": False}
    for name, spec in kind.headings:
        heading = next(h for h in offline["artifact"]["headings"] if h["heading"] == spec.name)
        reply[name] = [{"text": strip_citations(i), "citations": citations_in(i)} for i in heading["items"]]
    reply["rules_to_check"].append({"text": INVENTED, "citations": reply["rules_to_check"][0]["citations"]})
    return reply


def test_the_model_fills_the_schema_and_an_invented_item_is_dropped(kb_home: Path, llm: OpenAIStandIn) -> None:
    subject = "hardship withdrawal at Acme"
    offline = build(kb_home, "checklist", subject)
    ctx = model_ctx(kb_home, llm, llm_temperature=0.7, max_regenerations=0)
    llm.script = [{"json": scripted_checklist(offline)}]
    out = build(kb_home, "checklist", subject, ctx=ctx)
    assert out["metadata"]["generator"] == "openai:standin-model"
    body = llm.chat_requests()[0]["body"]
    schema = body["response_format"]["json_schema"]
    assert schema["name"] == "Checklist"
    assert {"data_to_collect", "eligibility", "rules_to_check", "warnings"} <= set(schema["schema"]["properties"])
    assert body["temperature"] == 0.1  # artifacts are capped at a low temperature
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    assert "empty list" in system and "<guardrails>" in user and '"Data to collect"' in user and subject in user
    assert INVENTED not in out["artifact"]["markdown"] and INVENTED not in out["response"]["text"]
    assert any(d["claim"] == INVENTED and d["rule"] == "unsupported_claim" for d in out["review"]["dropped"])
    assert out["decision"] == "uncertain" and out["needs_review"]  # failed verification, no rebuild allowed
    rules = next(h for h in out["artifact"]["headings"] if h["heading"] == "Rules to check")
    offline_rules = next(h for h in offline["artifact"]["headings"] if h["heading"] == "Rules to check")
    assert rules["items"] == offline_rules["items"]  # what was supported is kept


def test_a_failed_model_artifact_is_rebuilt_with_the_violations(kb_home: Path, llm: OpenAIStandIn) -> None:
    subject = "hardship withdrawal at Acme"
    offline = build(kb_home, "checklist", subject)
    ctx = model_ctx(kb_home, llm)
    clean = scripted_checklist(offline)
    clean["rules_to_check"].pop()
    llm.script = [{"json": scripted_checklist(offline)}, {"json": clean}]
    out = build(kb_home, "checklist", subject, ctx=ctx)
    assert out["metadata"]["attempts"] == 2 and out["guardrails"]["passed"] and out["decision"] == "needs_data"
    feedback = llm.chat_requests()[1]["body"]["messages"][1]["content"]
    assert "unsupported_claim" in feedback and "failed verification" in feedback
    assert out["artifact"]["headings"] == offline["artifact"]["headings"]


def test_quoted_guardrails_come_from_the_kb_not_the_model(kb_home: Path, llm: OpenAIStandIn) -> None:
    subject = "a loan request from a Summit 403(b)"
    offline = build(kb_home, "call_script", subject)
    ctx = model_ctx(kb_home, llm)
    reply = {name: [{"text": strip_citations(i), "citations": citations_in(i)} for i in h["items"]]
             for (name, _), h in zip(ARTIFACT_TYPES["call_script"].headings, offline["artifact"]["headings"],
                                     strict=True)}
    reply["never_say"] = [{"text": "Never say: nothing at all.", "citations": ["C1"]}]
    llm.script = [{"json": reply}]
    out = build(kb_home, "call_script", subject, ctx=ctx)
    never = next(h for h in out["artifact"]["headings"] if h["heading"] == "Never say")
    assert never == next(h for h in offline["artifact"]["headings"] if h["heading"] == "Never say")
    assert '"guaranteed approval"' in section_of(out["artifact"]["markdown"], "Never say")


def test_a_model_that_cannot_build_it_abstains_and_a_broken_one_falls_back(kb_home: Path,
                                                                           llm: OpenAIStandIn) -> None:
    ctx = model_ctx(kb_home, llm)
    llm.script = [{"json": {"cannot_answer": True, "reason": "no excerpt lists the documents to bring"}}]
    out = build(kb_home, "checklist", "hardship withdrawal at Acme", ctx=ctx)
    assert out["decision"] == "out_of_scope" and "documents to bring" in out["response"]["text"]
    assert all(h["empty"] for h in out["artifact"]["headings"])

    llm.script = [{"content": "not json"}, {"content": "still not json"}]
    out = build(kb_home, "checklist", "hardship withdrawal at Acme", ctx=ctx)
    assert out["metadata"]["generator"] == "openai:standin-model->extractive"
    assert "invalid after one repair" in out["metadata"]["generation_notes"]["fallback"]
    assert out["guardrails"]["passed"] and not any(h["empty"] for h in out["artifact"]["headings"])


def test_the_operator_can_override_the_artifact_prompts(kb_home: Path, llm: OpenAIStandIn) -> None:
    ctx = model_ctx(kb_home, llm, artifact_system_prompt="House rules: cite everything.",
                    artifact_user_prompt="Make a {artifact} on {subject}.\n{context}\n{headings}")
    llm.script = [{"json": {"cannot_answer": True, "reason": "stand-in"}}]
    build(kb_home, "brief", "Acme loans", ctx=ctx)
    system, user = (m["content"] for m in llm.chat_requests()[0]["body"]["messages"])
    assert system == "House rules: cite everything." and user.startswith("Make a brief on Acme loans.")
    assert Context.__dataclass_fields__["artifact_user_prompt"].metadata["scope"] == "operator"


# --- surfaces -------------------------------------------------------------------------------------
def test_cli_writes_markdown_and_prints_json(kb_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from citewise.cli import main

    target = tmp_path / "script.md"
    assert main(["artifact", "call_script", "a loan request from a Summit 403(b)", "--home", str(kb_home),
                 "--out", str(target)]) == 0
    assert target.read_text().startswith("# Call script: ") and "## Never say" in target.read_text()
    assert "wrote" in capsys.readouterr().out
    assert main(["artifact", "brief", "Acme loans", "--home", str(kb_home), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["artifact"]["type"] == "brief" and result["citations"]
    with pytest.raises(SystemExit) as exc:
        main(["artifact", "poem", "Acme loans"])
    assert exc.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_python_api(kb_home: Path) -> None:
    import citewise

    out = citewise.artifact("checklist", "hardship withdrawal at Acme", home=kb_home)
    assert out["artifact"]["markdown"].startswith("# Checklist: ") and out["decision"] == "needs_data"
