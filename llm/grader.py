"""Optional model-based groundedness grader (when a chat model is configured and `llm_grader` is on).

The lexical support check catches claims whose words are not in their sources; the grader also
catches claims that reuse the words but change the meaning, and checks the `Never:` rules, which are
prose and cannot be matched lexically.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from citewise.config import Context
from citewise.llm.openai_chat import chat_model, structured_call
from citewise.prompts import render


class ClaimVerdict(BaseModel):
    claim: int = Field(description="Claim number.")
    supported: bool
    reason: str = ""


class RuleBreak(BaseModel):
    claim: int
    rule: str


class GraderOutput(BaseModel):
    verdicts: list[ClaimVerdict] = Field(default_factory=list)
    rule_breaks: list[RuleBreak] = Field(default_factory=list)


def grade(ctx: Context, claims: list[str], context_text: str, never_rules: list[str]) -> dict[str, Any]:
    """{claim index: reason} for claims to drop; empty when the grader cannot be reached or parsed."""
    if not claims:
        return {}
    numbered = "\n".join(f"{i}. {c}" for i, c in enumerate(claims, start=1))
    rules = "\n".join(f"- {r}" for r in never_rules) or "- (none)"
    prompt = render("grader", "", never_rules=rules, context=context_text, claims=numbered)
    notes: dict[str, Any] = {}
    model = chat_model(ctx).with_config(tags=["citewise:grader"])
    try:
        out = structured_call(model, [("user", prompt)], GraderOutput, notes)
    except Exception as exc:  # the grader is advisory: never fail the answer because it is down
        return {"_error": f"{type(exc).__name__}: {str(exc)[:120]}"}
    if out is None:
        return {"_error": notes.get("fallback", "grader output invalid")}
    assert isinstance(out, GraderOutput)
    drops: dict[str, Any] = {}
    for v in out.verdicts:
        if not v.supported and 1 <= v.claim <= len(claims):
            drops[str(v.claim - 1)] = ("ungrounded_claim", v.reason or "not stated by its sources")
    for b in out.rule_breaks:
        if 1 <= b.claim <= len(claims):
            drops[str(b.claim - 1)] = ("never_rule", b.rule)
    return drops
