"""Graph nodes, one module per node. Each is a small function (state, runtime) -> partial update."""

from citewise.nodes.abstain import abstain
from citewise.nodes.assemble_context import assemble_context
from citewise.nodes.check_guardrails import check_guardrails
from citewise.nodes.extract_required_data import extract_required_data
from citewise.nodes.generate import generate
from citewise.nodes.intake import intake
from citewise.nodes.retrieve import retrieve
from citewise.nodes.uncertain import uncertain

__all__ = ["abstain", "assemble_context", "check_guardrails", "extract_required_data", "generate", "intake",
           "retrieve", "uncertain"]
