from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typing_extensions import TypedDict

from citewise.config import Context
from citewise.engine.inquiry import minimum_max_tokens
from citewise.errors import InputError
from citewise.graphs.kb_agent import build_graph, graph
from citewise.store.sqlite import Store

ROLLOVER = "How do I roll over my 401(k)?"


def run(home: Path, question: str, **inputs: Any) -> dict[str, Any]:
    return graph.invoke({"question": question, **inputs}, context=Context(home=str(home)))


def test_rollover_answer_is_cited_and_every_citation_resolves(kb_home: Path) -> None:
    out = run(kb_home, ROLLOVER)
    assert out["decision"] in ("needs_data", "can_proceed")
    assert out["citations"] and out["response"]["sections"]
    known = Store(kb_home).chunks_by_id(c["chunk_id"] for c in out["citations"])
    assert set(known) == {c["chunk_id"] for c in out["citations"]}
    ids = {c["id"] for c in out["citations"]}
    for section in out["response"]["sections"]:
        for item in section["answer_components"] + section["steps"] + section["warnings"]:
            cited = set(__import__("re").findall(r"\[(C\d+)\]", item))
            assert cited and cited <= ids  # every item cited, every citation listed
    meta = out["metadata"]
    assert meta["context_tokens"] <= meta["context_budget"] == int(0.7 * 2000)
    assert set(meta["timings_ms"]) >= {"intake", "extract_required_data", "retrieve", "assemble_context",
                                        "generate", "check_guardrails"}
    assert meta["generator"] == "extractive" and out["guardrails"]["passed"]
    assert any("60" in w for s in out["response"]["sections"] for w in s["warnings"])  # the Always: rule


def test_off_topic_question_abstains_without_citations(kb_home: Path) -> None:
    out = run(kb_home, "What is the capital of France?")
    assert out["decision"] == "out_of_scope" and out["citations"] == []
    assert "I don't have information about that in this knowledge base" in out["response"]["text"]
    assert "generate" not in out["metadata"]["timings_ms"]  # abstained before any generation
    # what was asked, in its own words (a bag of its words read "capital france")
    assert out["metadata"]["suggested_content"] == "capital of France"
    # a question of plain words only suggests nothing to ingest (the text says "this subject", metadata nothing)
    out = run(kb_home, "What about it, from before?")
    assert out["decision"] == "out_of_scope" and out["metadata"]["suggested_content"] == ""


def test_required_data_mode_stops_after_extraction(kb_home: Path) -> None:
    out = run(kb_home, "What do I need to collect for an Acme 401(k) loan?", mode="required_data",
              collected_data={"Vested Balance": "$40,000"})
    assert out["article_reference"]["article_id"] == "acme-401k-loan"
    keys = [f["key"] for f in out["required_fields"]["plan_data"]]
    assert "vested_balance" in keys and "vested_balance" not in out["missing_fields"]
    assert "loan_amount_requested" in out["missing_fields"] and out["decision"] == "needs_data"
    assert "retrieve" not in out["metadata"]["timings_ms"]


def test_collected_data_completes_the_inquiry(kb_home: Path) -> None:
    data = {"current_deferral_percentage": 5, "new_deferral_percentage": 8, "contribution_type": "pre-tax"}
    out = run(kb_home, "How do I change my contribution rate at Acme?", collected_data=data)
    assert out["missing_fields"] == [] and out["decision"] == "can_proceed"


def test_detected_facets_become_filters_unless_the_caller_gave_them(kb_home: Path) -> None:
    out = run(kb_home, "What fees does Summit charge for a 403(b) loan?")
    assert out["metadata"]["facets_detected"]["record_keeper"] == ["Summit Plan Services"]
    assert all(c["metadata"]["record_keeper"] == "Summit Plan Services" for c in out["citations"])
    out = run(kb_home, "What fees does Summit charge for a loan?", filters={"record_keeper": "Acme Retirement"})
    assert {c["metadata"]["record_keeper"] for c in out["citations"]} == {"Acme Retirement"}


def test_a_common_word_of_a_name_pins_no_facet(kb_home: Path) -> None:
    """Most chunks that say "retirement" are Acme Retirement's, but the KB writes it in lower case: the
    word is not the name, so "my retirement account" leaves the record keeper to ask for."""
    out = run(kb_home, "How do I roll over my retirement account?")
    assert "record_keeper" not in out["metadata"]["facets_detected"]
    assert out["missing_fields"][0] == "record_keeper"
    assert run(kb_home, "How do I roll over my Acme account?")["metadata"]["facets_detected"]["record_keeper"] == [
        "Acme Retirement"]  # the brand word, written as a name, still does


def test_a_preposition_names_no_facet() -> None:
    """"days off" is not "paid time off", however often "off" occurs in its documents."""
    from citewise.engine.facets import FacetDetector

    facets = {"plan_type": ["paid time off", "paid leave"], "record_keeper": ["Meridel People Solutions"]}
    detector = FacetDetector(facets, term_precision=lambda term, facet, value: 1.0,
                             name_case=lambda term: 1.0 if term == "meridel" else 0.1)
    assert detector.detect("How many paid days off can I get through Meridel?") == {
        "record_keeper": ["Meridel People Solutions"]}
    assert detector.detect("How much paid time off carries over?") == {"plan_type": ["paid time off"]}


def test_a_word_shared_by_a_provider_and_a_plan_names_the_provider_it_tells() -> None:
    """"Aurelis" is a word of the airline Aurelis Air and of its loyalty plan Aurelis Miles: it names the airline
    (one value of that facet, always Aurelis Air's documents); as a plan type it is not telling (Aurelis's
    Economy and Business articles say it too)."""
    from citewise.engine.facets import FacetDetector

    facets = {"record_keeper": ["Aurelis Air", "Cindervale Air"], "plan_type": ["Aurelis Miles", "Economy"]}
    precision = {("aur", "record_keeper", "Aurelis Air"): 1.0, ("aur", "plan_type", "Aurelis Miles"): 0.3}  # stems
    detector = FacetDetector(facets, term_precision=lambda term, facet, value: precision.get((term, facet, value), 1.0),
                             name_case=lambda term: 1.0)
    assert detector.detect("Will Aurelis match my Gold status?") == {"record_keeper": ["Aurelis Air"]}


def test_a_provider_is_named_by_its_initials_in_capitals() -> None:
    """"When does TVEC give me back my deposit?" names Tamarack Valley Electric Cooperative; a lower-case
    word that spells the same letters, a two-word name's initials and an acronym two names share do not."""
    from citewise.engine.facets import FacetDetector

    facets = {"record_keeper": ["Tamarack Valley Electric Cooperative", "Northmere Gas", "Cedar Hill Water",
                                "Copper Hollow Works", "Bank of the West"]}
    detector = FacetDetector(facets)
    assert detector.detect("When does TVEC give me back my deposit?") == {
        "record_keeper": ["Tamarack Valley Electric Cooperative"]}
    assert detector.detect("what is tvec?") == {}
    assert detector.detect("Is NG cheaper?") == {}
    assert detector.detect("Does CHW bill monthly?") == {}  # Cedar Hill Water or Copper Hollow Works
    assert detector.detect("Does BOTW charge?") == detector.detect("Does BW charge?") == {}
    # letters the KB's text uses for something else name no provider; its own acronym, used by it, does
    banks = {"record_keeper": ["Alpha Trust Mutual", "Copper National Bank"]}
    precision = {("atm", "record_keeper", "Alpha Trust Mutual"): 0.1,
                 ("cnb", "record_keeper", "Copper National Bank"): 1.0}
    detector = FacetDetector(banks, term_precision=lambda term, facet, value: precision.get((term, facet, value), 0.0),
                             occurs=lambda term: term in ("atm", "cnb"))
    assert detector.detect("Is there an ATM fee?") == {}
    assert detector.detect("Does CNB charge for it?") == {"record_keeper": ["Copper National Bank"]}


def test_a_facet_value_none_of_the_named_providers_documents_has_is_dropped() -> None:
    """"my Corvane apartment" read as the plan type another landlord's articles use ("apartment lease")
    filtered out every Corvane article; the provider, a name, wins. A value the provider's documents
    have stays, and without a provider nothing is dropped."""
    from types import SimpleNamespace

    from citewise.engine.inquiry import with_the_provider
    from citewise.retrieval.filters import MetadataIndex

    kb = SimpleNamespace(meta=MetadataIndex([
        {"record_keeper": "Corvane", "plan_type": "residential tenancy", "topic": "subletting"},
        {"record_keeper": "Wrenfield", "plan_type": "apartment lease", "topic": "subletting"}]), facets={})
    detected = {"record_keeper": ["Corvane"], "plan_type": ["apartment lease"], "topic": ["subletting"]}
    assert with_the_provider(kb, detected) == {"record_keeper": ["Corvane"], "topic": ["subletting"]}
    assert with_the_provider(kb, {"plan_type": ["apartment lease"]}) == {"plan_type": ["apartment lease"]}
    both = {"record_keeper": ["Corvane", "Wrenfield"], "plan_type": ["apartment lease"]}
    assert with_the_provider(kb, both) == both
    # read as the search filters: a document for every provider, or for none, is the named provider's too
    shared = SimpleNamespace(meta=MetadataIndex([
        {"record_keeper": "Corvane", "topic": "repairs"}, {"record_keeper": "All providers", "topic": "lost_card"},
        {"topic": "fraud"}]), facets={"record_keeper": ["All providers", "Corvane"]})
    asked = {"record_keeper": ["Corvane"], "topic": ["lost_card", "fraud", "joint_accounts"]}
    assert with_the_provider(shared, asked) == {"record_keeper": ["Corvane"], "topic": ["lost_card", "fraud"]}
    # ... and only what the caller may read: Corvane's apartment lease in another namespace is not Corvane's here
    split = SimpleNamespace(meta=MetadataIndex([
        {"record_keeper": "Corvane", "plan_type": "residential tenancy", "namespace": "a"},
        {"record_keeper": "Corvane", "plan_type": "apartment lease", "namespace": "b"}]), facets={})
    assert "plan_type" not in with_the_provider(split, detected, {"namespace": "a"})
    assert with_the_provider(split, detected, {"namespace": "b"})["plan_type"] == ["apartment lease"]


def test_a_names_case_is_read_as_the_index_reads_its_words() -> None:
    """"Zürich", "O'Neil" and "Acme’s" are counted where BM25 counts them (the index's analyser), and a
    word the text writes in lower case is not a name."""
    from types import SimpleNamespace

    import numpy as np

    from citewise.engine.facets import name_case_fn
    from citewise.kb.text import terms

    texts = ["Zürich Pensions pays in 5 days.", "Call O'Neil Partners.", "Acme’s fee is $50; see Acme's page.",
             "Your retirement account."]

    def rows_containing(term: str) -> np.ndarray:
        return np.asarray([i for i, t in enumerate(texts) if term in terms(t)], dtype=np.int64)

    kb = SimpleNamespace(bm25=SimpleNamespace(rows_containing=rows_containing),
                         passages=SimpleNamespace(get=lambda row: {"text": texts[row]}))
    share = name_case_fn(kb)
    for name in ("Zürich", "O'Neil", "Acme’s"):
        assert share(terms(name)[0]) == 1.0, name
    assert share(terms("retirement")[0]) == 0.0


@pytest.mark.parametrize("inputs,message", [
    ({"question": "hi"}, "3-1000 characters"), ({"question": "x" * 1001}, "3-1000 characters"),
    ({"question": "valid question", "max_tokens": 10}, "max_tokens"),
    ({"question": "valid question", "filters": {"$bad": 1}}, "unknown operator"),
    ({"question": "valid question", "mode": "poem"}, "mode must be"),
    ({"question": "valid question", "collected_data": {"a": {"nested": 1}}}, "collected_data"),
])
def test_invalid_input_is_a_clear_error(kb_home: Path, inputs: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        graph.invoke(inputs, context=Context(home=str(kb_home)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(max_tokens=st.integers(min_value=minimum_max_tokens(Context()), max_value=16000),
       question=st.sampled_from([ROLLOVER, "Can I take a hardship withdrawal from my Summit 403(b)?",
                                 "What happens to my Harborview 401(k) loan if I leave?"]))
def test_context_tokens_never_exceed_the_budget(kb_home: Path, max_tokens: int, question: str) -> None:
    meta = run(kb_home, question, max_tokens=max_tokens)["metadata"]
    assert meta["context_budget"] == int(0.7 * max_tokens)
    assert meta["context_tokens"] <= meta["context_budget"]


class Parent(TypedDict, total=False):
    question: str
    decision: str
    citations: list
    note: str


def test_graph_works_as_a_subgraph(kb_home: Path) -> None:
    from langgraph.graph import END, START, StateGraph

    def after(state: Parent) -> dict:
        return {"note": f"{state['decision']} with {len(state['citations'])} citations"}

    parent = StateGraph(Parent, context_schema=Context)
    parent.add_node("kb_agent", build_graph())
    parent.add_node("after", after)
    parent.add_edge(START, "kb_agent")
    parent.add_edge("kb_agent", "after")
    parent.add_edge("after", END)
    out = parent.compile().invoke({"question": ROLLOVER}, context=Context(home=str(kb_home)))
    assert out["decision"] in ("needs_data", "can_proceed") and out["citations"]
    assert out["note"].endswith(f"{len(out['citations'])} citations")


def test_graph_as_a_tool(kb_home: Path) -> None:
    from citewise.graphs.kb_agent import as_tool

    tool = as_tool(home=str(kb_home))
    out = tool.invoke({"question": ROLLOVER})
    assert out["decision"] in ("needs_data", "can_proceed") and out["citations"]


def test_studio_schemas_describe_input_output_and_context() -> None:
    inp, out, ctx = graph.get_input_jsonschema(), graph.get_output_jsonschema(), graph.get_context_jsonschema()
    assert inp["required"] == ["question"] and set(inp["properties"]) == {"question", "filters", "collected_data",
                                                                          "max_tokens", "mode", "artifact_type"}
    assert {"decision", "confidence", "response", "citations", "article_reference", "required_fields",
            "missing_fields", "guardrails", "metadata"} <= set(out["properties"])
    assert ctx["properties"]["confidence_threshold"]["default"] == 0.63
    assert "description" in ctx["properties"]["relevance_threshold"]
    nodes = set(graph.get_graph().nodes) - {"__start__", "__end__"}
    assert nodes == {"intake", "extract_required_data", "retrieve", "assemble_context", "generate",
                     "check_guardrails", "build_artifact", "abstain", "uncertain", "record"}


def test_readme_shows_the_current_graph_and_the_two_commands() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert graph.get_graph().draw_mermaid().strip() in readme
    assert "./run demo" in readme and "./run test" in readme


def test_only_the_graph_layer_imports_langgraph() -> None:
    """graphs -> nodes -> engine: the engine and what it stands on never import LangGraph (the API and
    the CLI and the HTTP server run the graph, so they may)."""
    root = Path(__file__).resolve().parent.parent
    allowed = ("graphs", "nodes", "tests", "evals", "cli", "server", ".venv", "build")
    engine = [p for p in root.rglob("*.py") if p.parts[len(root.parts)] not in allowed
              and re.search(r"^\s*(from|import) langgraph", p.read_text(), re.M)]
    assert [str(p.relative_to(root)) for p in engine if p.name != "api.py"] == []


def test_tokens_stream_from_an_embedded_subgraph(kb_home: Path) -> None:
    from langgraph.graph import END, START, StateGraph

    from tests.openai_standin import OpenAIStandIn

    parent = StateGraph(Parent, context_schema=Context)
    parent.add_node("kb_agent", build_graph())
    parent.add_edge(START, "kb_agent")
    parent.add_edge("kb_agent", END)
    with OpenAIStandIn() as llm:
        ctx = Context(home=str(kb_home), llm_model="standin-model", llm_base_url=llm.base_url)
        chunks = list(parent.compile().stream({"question": ROLLOVER}, context=ctx, stream_mode="messages",
                                              subgraphs=True))
    generated = [(ns, msg.content) for ns, (msg, meta) in chunks if meta.get("langgraph_node") == "generate"]
    assert len(generated) > 3 and all(ns and ns[0].startswith("kb_agent") for ns, _ in generated)


def test_plain_markdown_and_text_kbs_answer_without_structure(tmp_path: Path) -> None:
    from citewise.kb.ingest import ingest

    src = tmp_path / "plain"
    src.mkdir()
    (src / "vpn.md").write_text("# Connecting to the VPN\n\nInstall the VPN client from the software portal.\n\n"
                                "## Troubleshooting\n\nIf the connection drops every few minutes, switch the "
                                "protocol to TCP in the client settings.\n")
    (src / "expenses.txt").write_text("Travel expenses\n\nExpenses must be submitted within 30 days of the trip. "
                                      "Meals are reimbursed up to $75 per day.\n")
    ingest([src], tmp_path / "home", progress=False)
    ctx = Context(home=str(tmp_path / "home"))
    out = graph.invoke({"question": "What is the daily meal limit for travel expenses?"}, context=ctx)
    assert out["decision"] == "can_proceed" and out["confidence"] >= ctx.confidence_threshold
    assert out["article_reference"] is None and out["required_fields"] == {"participant_data": [], "plan_data": []}
    assert any("$75 per day" in c for s in out["response"]["sections"] for c in s["answer_components"])
    assert "article" not in out["metadata"]["confidence_parts"]  # structure-only terms do not apply
    assert graph.invoke({"question": "How do I bake sourdough bread?"}, context=ctx)["decision"] == "out_of_scope"


def _texts(value: Any, key: str = "") -> str:
    """Every text in the output, keys included, but not its numbers (scores, timings, generations) or its
    random query id: four digits of an SSN can turn up in those by chance (it failed once on "6789")."""
    if isinstance(value, dict):
        return " ".join(f"{k} {_texts(v, k)}" for k, v in value.items())
    if isinstance(value, list):
        return " ".join(_texts(v) for v in value)
    return value if isinstance(value, str) and key != "query_id" else ""


def test_personal_data_in_the_question_is_never_echoed(kb_home: Path) -> None:
    question = "My SSN is 123-45-6789 and my email is jo@example.com, what is my balance at the bank?"
    out = run(kb_home, question)
    dumped = _texts(out)
    assert out["decision"] == "out_of_scope"
    assert "6789" not in dumped and "example.com" not in dumped and "jo@" not in dumped
    out = run(kb_home, "My SSN is 123-45-6789. How do I roll over my Acme 401(k)?")
    assert "6789" not in _texts(out) and out["response"]["text"]


def test_a_facet_value_of_all_covers_whichever_value_a_question_names(tmp_path: Path) -> None:
    """`plan_type: all aid` applies to grants too: "my Pell Grant" pins plan type "grant" but still reaches
    the all-aid article (and the answer is not sent to `uncertain` for lacking "grant")."""
    from citewise import api
    from citewise.engine.facets import is_universal
    from citewise.kb.ingest import ingest

    assert is_universal("all aid") and is_universal("Any plan") and is_universal("All") and is_universal("every_plan")
    assert not is_universal("All Points Retirement") and not is_universal("grant") and not is_universal("Allstate")
    assert not is_universal("All-State") and not is_universal("any_device_access", "topic")  # a name, a topic
    from citewise.engine.facets import FacetDetector
    from citewise.engine.records import ArticleCandidate
    from citewise.engine.resolve import parallel_articles

    detector = FacetDetector({"plan_type": ["all aid", "grant", "loan"]})
    assert detector.detect("Does this apply to all aid?") == {}  # names no plan type
    ranked = [ArticleCandidate("drop", "Drop", 1.0, []), ArticleCandidate("loan-drop", "Loan drop", 0.95, [])]
    metadata = {"drop": {"topic": "enrollment", "plan_type": "all aid"},
                "loan-drop": {"topic": "enrollment", "plan_type": "loan"}}
    assert parallel_articles(ranked, metadata, set()) == ([], [])  # "all aid" or "loan" is no choice to ask
    from citewise.engine.answerability import unnamed_facets  # (consulted when a search had to relax facets)

    assert unnamed_facets({"plan_type": ["grant"]}, {"plan_type": "all aid"}) == []
    assert unnamed_facets({"plan_type": ["grant"]}, {"plan_type": "loan"}) == ["grant"]
    src = tmp_path / "kb"
    src.mkdir()
    head = "---\nid: {id}\ntitle: {title}\nrecord_keeper: Larkspur\nplan_type: {plan}\ntopic: {topic}\n---\n"
    (src / "drop.md").write_text(
        head.format(id="drop-classes", title="Dropping classes and your aid", plan="all aid", topic="enrollment")
        + "## Business rules\n- Pell Grant is prorated by credits at the census date: 9 credits pays 75%.\n"
        "- Dropping below 6 credits cancels Direct Loans.\n")
    (src / "appeal.md").write_text(
        head.format(id="income-appeal", title="Income change appeal", plan="grant", topic="appeal")
        + "## Business rules\n- An income appeal may raise a Pell Grant when family income fell by 10% or more.\n"
        "- What happens to the Pell Grant after an appeal: it is recalculated for the credits you take.\n"
        "- Appeals are decided within 20 business days.\n")
    (src / "loan.md").write_text(
        head.format(id="loan-counseling", title="Loan entrance counseling", plan="loan", topic="loan")
        + "## Business rules\n- Entrance counseling takes about 30 minutes online.\n")
    ingest([src], tmp_path / "home", progress=False)
    out = api.ask("I'm dropping to 9 credits. What happens to my Pell Grant?", home=tmp_path / "home",
                  confidence_threshold=0.0)
    assert out["metadata"]["facets_detected"]["plan_type"] == ["grant"]
    assert out["article_reference"]["article_id"] == "drop-classes", out["article_reference"]
    assert out["decision"] != "uncertain" and "75%" in out["response"]["text"], out["response"]["text"]
    # a plan type the question names stays a filter: the loan article is not reached
    assert "loan-counseling" not in {c["chunk_id"].split("#")[0] for c in out["citations"]}


def test_plain_documents_do_not_dilute_a_brand_word() -> None:
    """Half the chunks saying "Meadowlark" are a plain FAQ page (no record keeper): among the chunks that
    carry a record keeper, all are Meadowlark's, so the word still pins it."""
    from types import SimpleNamespace

    import numpy as np

    from citewise.engine.facets import term_precision_fn

    keepers = ["Meadowlark Pet Health", "Meadowlark Pet Health", None, None, "PawSure", None]
    says = [0, 1, 2, 3]  # rows whose text holds "meadowlark"

    def mask(flt: dict) -> np.ndarray:
        ((_facet, cond),) = flt.items()
        if isinstance(cond, dict):
            return np.asarray([k is not None for k in keepers])
        return np.asarray([k == cond for k in keepers])

    kb = SimpleNamespace(bm25=SimpleNamespace(rows_containing=lambda term: np.asarray(says, dtype=np.int64)),
                         meta=SimpleNamespace(mask=mask))
    precision = term_precision_fn(kb)
    assert precision("meadowlark", "record_keeper", "Meadowlark Pet Health") == 1.0
    assert precision("meadowlark", "record_keeper", "PawSure") == 0.0
