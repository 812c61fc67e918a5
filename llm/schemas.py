"""Structured-output schemas (pydantic) for the chat model, and their conversion to the answer JSON."""

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


def to_sections(answer: AnswerOutput) -> list[dict]:
    """Items become strings with inline [C#] markers, the shape every generator returns."""

    def item(i: CitedItem) -> str:
        cites = "".join(f" [{c.strip().strip('[]')}]" for c in i.citations if c.strip())
        return f"{i.text.strip()}{cites}"

    if answer.cannot_answer:
        return []
    return [{"topic": s.topic, "answer_components": [item(i) for i in s.answer_components],
             "steps": [item(i) for i in s.steps], "warnings": [item(i) for i in s.warnings]}
            for s in answer.sections]
