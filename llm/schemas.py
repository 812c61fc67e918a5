"""Structured-output schemas (pydantic) for what citewise asks a chat model."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class CitedItem(BaseModel):
    text: str = Field(description="One statement, taken from the excerpts.")
    citations: list[str] = Field(description="Excerpt ids that support it, e.g. ['C2'].")


class AnswerSection(BaseModel):
    topic: str = Field(description="Short topic of this section.")
    answer_components: list[CitedItem] = Field(default_factory=list)
    steps: list[CitedItem] = Field(default_factory=list, description="Ordered procedure steps, if any.")
    warnings: list[CitedItem] = Field(default_factory=list, description="Deadlines, penalties, taxes, risks.")


class AnswerOutput(BaseModel):
    cannot_answer: bool = Field(default=False, description="True when the excerpts do not answer the question.")
    reason: str = Field(default="", description="When cannot_answer: what the excerpts lack, in one sentence.")
    sections: list[AnswerSection] = Field(default_factory=list)


class ExtractedField(BaseModel):
    key: str
    name: str
    data_type: Literal["text", "currency", "date", "boolean", "number"]
    required: bool = True
    group: Literal["participant", "plan"] = "participant"
    description: str = ""
    why_needed: str = ""
    citation: str = Field(description="Excerpt id that implies this field, e.g. 'C3'.")


class RequiredDataOutput(BaseModel):
    fields: list[ExtractedField] = Field(default_factory=list)


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


class RerankScore(BaseModel):
    id: int = Field(description="Passage number.")
    score: float = Field(description="0 = unrelated, 10 = answers the question directly.")


class RerankOutput(BaseModel):
    scores: list[RerankScore] = Field(default_factory=list)
