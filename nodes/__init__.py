"""Graph nodes, one module per node. Each is a small function (state, runtime) -> partial update."""

from .abstain import abstain
from .assemble_context import assemble_context
from .build_artifact import build_artifact
from .check_guardrails import check_guardrails
from .extract_required_data import extract_required_data
from .generate import generate
from .intake import intake
from .record import record
from .retrieve import retrieve
from .uncertain import uncertain

__all__ = ["abstain", "assemble_context", "build_artifact", "check_guardrails", "extract_required_data", "generate",
           "intake", "record", "retrieve", "uncertain"]
