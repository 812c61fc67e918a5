"""The citewise graph, whole, in one place: nodes, the edges between them, and why each edge routes.

    START -> intake -> extract_required_data --(mode=required_data)--> END
                                             --(answer)-------------> retrieve
    retrieve --(nothing relevant)--> abstain -> END
             --(relevant)----------> assemble_context -> generate -> check_guardrails
    check_guardrails --(failed, retries left)--> generate          (bounded by max_regenerations)
                     --(failed / low confidence)--> uncertain -> END
                     --(passed)--> END   (decision can_proceed, or needs_data if fields are missing)
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from citewise.config import Context, context_from
from citewise.graphs.state import InputState, OutputState, State
from citewise.nodes import (
    abstain,
    assemble_context,
    check_guardrails,
    extract_required_data,
    generate,
    intake,
    retrieve,
    uncertain,
)


def route_after_required_data(state: dict[str, Any]) -> Literal["retrieve", "__end__"]:
    """`required_data` mode ends with the field list; `answer` mode goes on to retrieval."""
    return END if state.get("mode") == "required_data" else "retrieve"


def route_after_retrieve(state: dict[str, Any], runtime: Runtime[Context]) -> Literal["assemble_context", "abstain"]:
    """Abstain before any generation when retrieval found nothing relevant enough."""
    ctx = context_from(runtime.context)
    relevance = (state.get("relevance") or {}).get("score", 0.0)
    if not state.get("hits") or relevance < ctx.relevance_threshold:
        return "abstain"
    return "assemble_context"


def route_after_guardrails(state: dict[str, Any],
                           runtime: Runtime[Context]) -> Literal["generate", "uncertain", "__end__"]:
    """A failed check earns a bounded regeneration; a second failure or low confidence is `uncertain`."""
    ctx = context_from(runtime.context)
    passed = (state.get("guardrails") or {}).get("passed", False)
    if not passed and int(state.get("attempts") or 0) <= ctx.max_regenerations:
        return "generate"
    if not passed or float(state.get("confidence") or 0.0) < ctx.confidence_threshold:
        return "uncertain"
    return END


def build_graph(*, checkpointer: Any = None, name: str = "kb_agent") -> Any:
    """Compile the agent; pass a checkpointer for threads/interrupts, or none when used as a subgraph."""
    builder = StateGraph(State, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    builder.add_node("intake", intake)
    builder.add_node("extract_required_data", extract_required_data)
    builder.add_node("retrieve", retrieve)
    builder.add_node("assemble_context", assemble_context)
    builder.add_node("generate", generate)
    builder.add_node("check_guardrails", check_guardrails)
    builder.add_node("abstain", abstain)
    builder.add_node("uncertain", uncertain)

    builder.add_edge(START, "intake")
    builder.add_edge("intake", "extract_required_data")
    builder.add_conditional_edges("extract_required_data", route_after_required_data, ["retrieve", END])
    builder.add_conditional_edges("retrieve", route_after_retrieve, ["assemble_context", "abstain"])
    builder.add_edge("assemble_context", "generate")
    builder.add_edge("generate", "check_guardrails")
    builder.add_conditional_edges("check_guardrails", route_after_guardrails, ["generate", "uncertain", END])
    builder.add_edge("abstain", END)
    builder.add_edge("uncertain", END)
    return builder.compile(checkpointer=checkpointer, name=name)


graph = build_graph()


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
