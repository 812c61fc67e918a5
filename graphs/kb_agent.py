"""The citewise graph, whole, in one place: nodes, the edges between them, and why each edge routes.

    START -> intake -> extract_required_data --(mode=required_data)--> record
                                             --(answer)-------------> retrieve
    retrieve --(nothing relevant)--> abstain -> record
             --(relevant)----------> assemble_context --(answer)--> generate
                                                      --(mode=artifact)--> build_artifact
    generate --(model: excerpts do not answer)--> abstain -> record
             --(draft)--> check_guardrails
    check_guardrails --(failed, retries left)--> generate          (bounded by max_regenerations)
                     --(failed / low confidence / unanswered)--> uncertain -> record
                     --(passed)--> record   (decision can_proceed, or needs_data if fields are missing)
    build_artifact --(no material for its core headings)--> abstain -> record
                   --(failed, retries left)--> build_artifact      (bounded by max_regenerations)
                   --(failed / low confidence)--> uncertain -> record
                   --(passed)--> record
    record -> END   (writes the answer's query-log row: every run's last step, whatever its path)

Each node is a thin adapter over one engine step (citewise.engine); each routing function below
asks `engine.routes`, which `engine.answer` asks too, so the graph and the plain pipeline agree.
Where the engine's routes say "end", the graph goes to `record`, its one way out.
"""

from __future__ import annotations

import sys
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from ..config import Context, ServedContext, context_from
from ..engine import routes
from ..engine.records import Artifact, Draft, Retrieval, Verdict, load
from ..nodes import (
    abstain,
    assemble_context,
    build_artifact,
    check_guardrails,
    extract_required_data,
    generate,
    intake,
    record,
    retrieve,
    uncertain,
)
from .state import InputState, OutputState, State


def route_after_required_data(state: dict[str, Any]) -> Literal["retrieve", "record"]:
    """`required_data` mode ends with the field list (recorded); `answer` mode goes on to retrieval."""
    return "record" if routes.after_required_data(state.get("mode") or "answer") == "end" else "retrieve"


def route_after_retrieve(state: dict[str, Any], runtime: Runtime[Context]) -> Literal["assemble_context", "abstain"]:
    """Abstain before any generation when retrieval found nothing relevant enough (unless the collected
    data is the governing article's fields)."""
    retrieval = load(Retrieval, state["retrieval"])
    named = bool((state.get("resolution") or {}).get("named_by_data"))
    return routes.after_retrieve(bool(retrieval.hits), retrieval.relevance, context_from(runtime.context), named)


def route_after_context(state: dict[str, Any]) -> Literal["generate", "build_artifact"]:
    """Mode `artifact` builds the requested document from the context; anything else is answered."""
    return routes.after_context(state.get("mode") or "answer")


def route_after_artifact(state: dict[str, Any], runtime: Runtime[Context]) -> Literal[
        "build_artifact", "abstain", "uncertain", "record"]:
    """No material abstains; a failed check earns a bounded rebuild; then failure or low confidence is
    `uncertain`, as for answers, and so is an artifact from another provider's article."""
    guard = state.get("guardrails") or {}
    step = routes.after_artifact(load(Draft, state["draft"]), load(Artifact, state["artifact"]),
                                 bool(guard.get("passed")), float(state.get("confidence") or 0.0),
                                 int(state.get("attempts") or 0), context_from(runtime.context),
                                 bool((state.get("resolution") or {}).get("elsewhere")))
    return "record" if step == "end" else step


def route_after_generate(state: dict[str, Any]) -> Literal["check_guardrails", "abstain"]:
    """A model that finds the excerpts do not answer the question abstains with its reason."""
    return routes.after_generate(load(Draft, state["draft"]))


def route_after_guardrails(state: dict[str, Any],
                           runtime: Runtime[Context]) -> Literal["generate", "uncertain", "record"]:
    """A failed check earns a bounded regeneration; a second failure, low confidence or an unanswered
    question is `uncertain`; a passed check is the answer (recorded)."""
    verdict = load(Verdict, state["verdict"])
    step = routes.after_check(verdict.passed, verdict.confidence, int(state.get("attempts") or 0),
                              context_from(runtime.context), not verdict.unanswered)
    return "record" if step == "end" else step


def build_graph(*, checkpointer: Any = None, name: str = "kb_agent", context_schema: type[Context] = Context) -> Any:
    """Compile the agent; pass a checkpointer for threads/interrupts, or none when used as a subgraph."""
    builder = StateGraph(State, context_schema=context_schema, input_schema=InputState, output_schema=OutputState)
    builder.add_node("intake", intake)
    builder.add_node("extract_required_data", extract_required_data)
    builder.add_node("retrieve", retrieve)
    builder.add_node("assemble_context", assemble_context)
    builder.add_node("generate", generate)
    builder.add_node("build_artifact", build_artifact)
    builder.add_node("check_guardrails", check_guardrails)
    builder.add_node("abstain", abstain)
    builder.add_node("uncertain", uncertain)
    builder.add_node("record", record)

    builder.add_edge(START, "intake")
    builder.add_edge("intake", "extract_required_data")
    builder.add_conditional_edges("extract_required_data", route_after_required_data, ["retrieve", "record"])
    builder.add_conditional_edges("retrieve", route_after_retrieve, ["assemble_context", "abstain"])
    builder.add_conditional_edges("assemble_context", route_after_context, ["generate", "build_artifact"])
    builder.add_conditional_edges("build_artifact", route_after_artifact,
                                  ["build_artifact", "abstain", "uncertain", "record"])
    builder.add_conditional_edges("generate", route_after_generate, ["check_guardrails", "abstain"])
    builder.add_conditional_edges("check_guardrails", route_after_guardrails, ["generate", "uncertain", "record"])
    builder.add_edge("abstain", "record")
    builder.add_edge("uncertain", "record")
    builder.add_edge("record", END)
    return builder.compile(checkpointer=checkpointer, name=name)


graph = build_graph()
# What `langgraph dev` serves: a run that changes an operator setting (home, URLs, prompts...) is refused.
served = build_graph(context_schema=ServedContext)

if "langgraph_api" in sys.modules:  # served by `langgraph dev` / langgraph-api: user errors log one line
    from .server_log import install

    install()


def as_tool(name: str = "citewise_kb", **context: Any) -> Any:
    """The agent as a LangChain tool for other agents: question in, the cited JSON answer out."""
    from langchain_core.tools import StructuredTool

    ctx = Context().with_overrides(**context) if context else Context()

    def answer(question: str, filters: dict[str, Any] | None = None, collected_data: dict[str, Any] | None = None,
               mode: Literal["answer", "required_data"] = "answer") -> dict[str, Any]:
        payload = {"question": question, "filters": filters or {}, "collected_data": collected_data or {}, "mode": mode}
        return graph.invoke(payload, context=ctx)

    return StructuredTool.from_function(
        answer, name=name,
        description=("Answer a question from the knowledge base with citations, or (mode='required_data') list the "
                     "data that must be collected first. Returns decision, response, citations, required_fields."))
