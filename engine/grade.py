"""Optional model-based groundedness grader (when a chat model is configured and `llm_grader` is on).

The lexical support check catches claims whose words are not in their sources; the grader also
catches claims that reuse the words but change the meaning, and checks the `Never:` rules, which are
prose and cannot be matched lexically. The grader is advisory: when it cannot be reached or its reply
is unusable, the answer stands on the other checks and the notes say so.
"""

from __future__ import annotations

from ..config import Context
from ..llm.chat import ModelClock, ModelFault, structured_call
from ..llm.schemas import GraderOutput
from ..prompts import render


def grade(ctx: Context, claims: list[str], context_text: str, never_rules: list[str],
          clock: ModelClock) -> tuple[dict[int, tuple[str, str]], str]:
    """({claim index: (rule, reason)} for claims to drop, a status note)."""
    if not claims:
        return {}, "ok"
    numbered = "\n".join(f"{i}. {c}" for i, c in enumerate(claims, start=1))
    rules = "\n".join(f"- {r}" for r in never_rules) or "- (none)"
    prompt = render("grader", "", never_rules=rules, context=context_text, claims=numbered)
    try:
        out = structured_call(ctx, [("user", prompt)], GraderOutput, clock, {}, tags=["citewise:grader"])
    except ModelFault as exc:
        return {}, f"grader unavailable: {exc}"
    drops: dict[int, tuple[str, str]] = {}
    for v in out.verdicts:
        if not v.supported and 1 <= v.claim <= len(claims):
            drops[v.claim - 1] = ("ungrounded_claim", v.reason or "not stated by its sources")
    for b in out.rule_breaks:
        if 1 <= b.claim <= len(claims):
            drops[b.claim - 1] = ("never_rule", b.rule)
    return drops, "ok"
