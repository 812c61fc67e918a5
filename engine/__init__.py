"""The answering engine: every step from a question to a checked, cited answer, without LangGraph.

    from citewise.engine import answer
    result = answer("How do I roll over my 401(k)?", home=".citewise")

Steps (one module each, typed records between them, see `records.py`):
    inquiry.understand -> resolve.resolve -> search.search -> assemble.assemble -> generate.generate
    -> check.check, with `routes` deciding where each goes next and `outcomes` shaping what the caller
    receives (answered, abstained, uncertain). `pipeline.answer` runs them in the graph's order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .pipeline import answer

__all__ = ["answer"]


def __getattr__(name: str) -> Any:
    if name == "answer":  # loaded on use: importing the package stays cheap
        from .pipeline import answer

        return answer
    raise AttributeError(name)
