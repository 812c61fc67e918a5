"""citewise: a grounded knowledge-base answering agent built as a LangGraph state graph.

    import citewise
    citewise.ingest(["examples/kb"], home=".citewise")
    result = citewise.ask("How do I roll over my 401(k)?", home=".citewise")
    checklist = citewise.artifact("checklist", "hardship withdrawal", home=".citewise")["artifact"]["markdown"]

The heavy parts (torch, the embedding model, indexes) load lazily on first use and then stay
loaded for the life of the process.

No module of the package is named `ask`, `ingest` or `required_data`, so importing a submodule never
replaces these functions with a module (a test imports every submodule and checks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["artifact", "ask", "ingest", "required_data"]

if TYPE_CHECKING:
    from pathlib import Path


def ingest(paths: Any, home: str | Path | None = None, *, prune: bool = False,
           tags: dict[str, Any] | None = None) -> dict[str, Any]:
    """Ingest files or folders into a KB home; returns the ingest summary. `tags` ({"team": "ops"})
    become filterable metadata of every document of this ingest (front matter wins over them).

    `paths` is one path (a str is one path) or a list of paths.
    """
    from .arguments import as_flag, as_home, as_mapping, as_paths
    from .kb.ingest import ingest as _ingest

    return _ingest(as_paths(paths), as_home(home), prune=as_flag(prune, "prune"), tags=as_mapping(tags, "tags"))


def ask(question: str, *, home: str | Path | None = None, filters: dict[str, Any] | None = None,
        collected_data: dict[str, Any] | None = None, max_tokens: int | None = None, mode: str = "answer",
        **context: Any) -> dict[str, Any]:
    """Run the citewise graph once and return its output (the same JSON as `citewise ask --json`);
    `max_tokens` None takes the engine's default budget, as every other surface does."""
    from .api import ask as _ask

    return _ask(question, home=home, filters=filters, collected_data=collected_data, max_tokens=max_tokens,
                mode=mode, **context)


def required_data(question: str, *, home: str | Path | None = None, filters: dict[str, Any] | None = None,
                  collected_data: dict[str, Any] | None = None, **context: Any) -> dict[str, Any]:
    """Which data must be collected before the question can be answered."""
    from .api import required_data as _required_data

    return _required_data(question, home=home, filters=filters, collected_data=collected_data, **context)


def artifact(artifact_type: str, subject: str, *, home: str | Path | None = None,
             filters: dict[str, Any] | None = None, collected_data: dict[str, Any] | None = None,
             max_tokens: int | None = None, **context: Any) -> dict[str, Any]:
    """A cited checklist, workflow, call_script, brief or blueprint built from the knowledge base; the
    Markdown is in `result["artifact"]["markdown"]` (the same JSON as `citewise artifact --json`)."""
    from .api import artifact as _artifact

    return _artifact(artifact_type, subject, home=home, filters=filters, collected_data=collected_data,
                     max_tokens=max_tokens, **context)
