"""The graph served by `langgraph dev`, driven through langgraph_sdk: thread, run, wait, state."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from tests.openai_standin import OpenAIStandIn
from tests.server import langgraph_dev

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llm() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn() as server:
        yield server


@pytest.fixture(scope="module")
def served(kb_home: Path, llm: OpenAIStandIn,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The operator's server and its log: extractive by default; a caller may pick the one model it offers."""
    log = tmp_path_factory.mktemp("server") / "langgraph-dev.log"
    env = {"CITEWISE_LLM_BASE_URL": llm.base_url, "CITEWISE_LLM_MODELS": "standin-model"}
    with langgraph_dev(kb_home, log, extra_env=env) as url:
        yield url, log


@pytest.fixture(scope="module")
def server(served: tuple[str, Path]) -> str:
    return served[0]


def test_served_graph_answers_from_citewise_home(server: str) -> None:
    client = get_sync_client(url=server)
    assistants = client.assistants.search(graph_id="kb_agent")
    assert assistants and assistants[0]["graph_id"] == "kb_agent"
    thread = client.threads.create()
    out = client.runs.wait(thread["thread_id"], "kb_agent", input={"question": "How do I roll over my 401(k)?"})
    assert out["decision"] in ("needs_data", "can_proceed") and out["citations"]
    assert out["metadata"]["context_tokens"] <= out["metadata"]["context_budget"]
    state = client.threads.get_state(thread["thread_id"])
    assert state["values"]["decision"] == out["decision"] and state["next"] == []

    # Same thread, second run: outputs are fresh, not carried over.
    out2 = client.runs.wait(thread["thread_id"], "kb_agent", input={"question": "What is the capital of France?"})
    assert out2["decision"] == "out_of_scope" and out2["citations"] == []


def test_per_run_context_and_schemas(server: str) -> None:
    client = get_sync_client(url=server)
    out = client.runs.wait(None, "kb_agent", input={"question": "How do I roll over my 401(k)?", "max_tokens": 400},
                           context={"top_k": 3, "confidence_threshold": 0.99})
    assert out["decision"] == "uncertain" and out["needs_review"]  # the per-run threshold was applied
    assert out["metadata"]["context_budget"] == 280
    schemas = client.assistants.get_schemas(client.assistants.search(graph_id="kb_agent")[0]["assistant_id"])
    assert "question" in schemas["input_schema"]["properties"]
    assert "citations" in schemas["output_schema"]["properties"]
    assert "confidence_threshold" in schemas["context_schema"]["properties"]


def test_bad_input_fails_the_run_with_the_message(server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create()
    run = client.runs.create(thread["thread_id"], "kb_agent", input={"question": "hi"})
    client.runs.join(thread["thread_id"], run["run_id"])
    final = client.runs.get(thread["thread_id"], run["run_id"])
    assert final["status"] == "error"


def test_tokens_and_node_updates_stream_through_the_server(server: str, llm: OpenAIStandIn) -> None:
    client = get_sync_client(url=server)
    llm.requests.clear()
    events = list(client.runs.stream(
        None, "kb_agent", input={"question": "How do I roll over my 401(k)?"},
        context={"llm_model": "standin-model", "llm_required_fields": False},
        stream_mode=["messages-tuple", "updates"]))
    assert llm.chat_requests() and llm.chat_requests()[0]["body"]["stream"] is True
    tokens = [e.data[0]["content"] for e in events if e.event == "messages" and e.data[1].get("langgraph_node") ==
              "generate" and e.data[0].get("content")]
    updates = [node for e in events if e.event == "updates" for node in e.data]
    assert len(tokens) > 3 and "".join(tokens).startswith('{"cannot_answer"')
    assert updates[:3] == ["intake", "extract_required_data", "retrieve"] and "check_guardrails" in updates


def test_extractive_draft_streams_as_custom_events(server: str) -> None:
    client = get_sync_client(url=server)
    events = list(client.runs.stream(None, "kb_agent", input={"question": "How do I roll over my 401(k)?"},
                                     stream_mode=["custom"]))
    text = "".join(e.data["token"] for e in events if e.event == "custom")
    assert "[C1]" in text


def test_interrupt_and_resume_through_the_server(server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create()
    context = {"interrupt_on_missing_data": True}
    client.runs.wait(thread["thread_id"], "kb_agent", input={"question": "How do I roll over my 401(k)?"},
                     context=context)
    state = client.threads.get_state(thread["thread_id"])
    assert state["next"] == ["extract_required_data"]
    request = state["tasks"][0]["interrupts"][0]["value"]
    assert request["fields"][0]["key"] == "record_keeper" and request["kind"] == "missing_data"

    client.runs.wait(thread["thread_id"], "kb_agent", command={"resume": {"record_keeper": "Acme Retirement"}},
                     context=context)
    state = client.threads.get_state(thread["thread_id"])
    keys = [f["key"] for f in state["tasks"][0]["interrupts"][0]["value"]["fields"]]
    assert "record_keeper" not in keys and "separation_date" in keys  # now Acme's own fields

    values = {"separation_date": "2026-03-31", "receiving_institution": "Example Bank",
              "receiving_account_type": "Traditional IRA", "date_of_birth": "1960-05-01", "vested_balance": 40000}
    out = client.runs.wait(thread["thread_id"], "kb_agent", command={"resume": values}, context=context)
    assert out["decision"] == "can_proceed" and out["article_reference"]["article_id"] == "acme-401k-rollover"
    assert client.threads.get_state(thread["thread_id"])["next"] == []


def test_user_errors_return_the_message_and_log_one_line_without_traceback(served: tuple[str, Path]) -> None:
    url, log = served
    client = get_sync_client(url=url)
    before = log.read_text(errors="replace")
    bad = [({"question": "hi"}, None, "3-1000 characters"),
           ({"question": 42}, None, "question must be a string"),
           ({"question": "How do I roll over my 401(k)?", "filters": {"$near": 1}}, None, "unknown operator"),
           ({"question": "How do I roll over my 401(k)?"}, {"top_k": "many"}, "invalid configuration top_k"),
           # the home is the operator's: a caller that names another one is refused with the reason
           ({"question": "How do I roll over my 401(k)?"}, {"home": str(log.parent / "no-kb")}, "set by the operator")]
    for payload, context, message in bad:
        thread = client.threads.create()
        with pytest.raises(Exception, match=message):  # the SDK raises the run's error: the citewise message
            client.runs.wait(thread["thread_id"], "kb_agent", input=payload, context=context)
    time.sleep(1.0)  # the worker logs after the run's status is written
    added = log.read_text(errors="replace")[len(before):]
    reports = [line for line in added.splitlines() if "citewise.errors." in line]
    assert len(reports) == len(bad), reports  # one line per failed run ...
    assert "Traceback" not in added and "An internal error occurred" not in added  # ... and no traceback


def test_small_load_slice_has_no_errors(server: str) -> None:
    from citewise.evals.bench_load import run_level

    level = run_level(server, runs=12, concurrency=6)
    assert level["errors"] == 0, level["error_samples"]
    assert level["p50_ms"] > 0 and level["throughput_rps"] > 0
