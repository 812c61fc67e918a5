"""Readable renderings of results for a terminal (`--json` prints the result itself)."""

from __future__ import annotations

import textwrap
from typing import Any

WIDTH = 100


def format_answer(result: dict[str, Any]) -> str:
    lines = [f"Decision: {result.get('decision')}   confidence: {result.get('confidence', 0):.2f}"]
    ref = result.get("article_reference")
    if ref:
        lines.append(f"Article: {ref['article_id']} ({ref.get('title', '')}), confidence {ref['confidence']:.2f}")
    text = (result.get("response") or {}).get("text", "")
    if text:
        lines.append("")
        for para in text.splitlines():
            lines.extend(textwrap.wrap(para, WIDTH, subsequent_indent="   ") or [""])
    if result.get("missing_fields"):
        lines += ["", "Still to collect: " + ", ".join(result["missing_fields"])]
    for key, reason in (result.get("invalid_fields") or {}).items():
        lines.append(f"  {key}: {reason}")
    cites = result.get("citations") or []
    if cites:
        lines += ["", "Sources:"]
        lines += [f"  [{c['id']}] {c.get('reference') or c['title']} - {c['chunk_type']} ({c['chunk_id']})"
                  for c in cites]
    violations = (result.get("guardrails") or {}).get("violations") or []
    if violations:
        lines += ["", "Guardrail checks:"] + [f"  {v['rule']}: {v['detail']} ({v['action']})" for v in violations]
    return "\n".join(lines)


def format_required(result: dict[str, Any]) -> str:
    ref = result.get("article_reference")
    if not ref:
        return "No article in this knowledge base governs that inquiry."
    lines = [f"Article: {ref['article_id']} (confidence {ref['confidence']:.2f})"]
    if result.get("decision") == "uncertain":  # e.g. another provider's article: its data is not listed
        return "\n".join([*lines, ((result.get("response") or {}).get("text") or "")])
    if ref.get("alternatives"):
        lines.append(f"  or, depending on the answers below: {', '.join(ref['alternatives'])}")
    for group, label in (("participant_data", "Participant data"), ("plan_data", "Plan data")):
        fields = (result.get("required_fields") or {}).get(group) or []
        if fields:
            lines.append(f"{label}:")
            for f in fields:
                flag = "required" if f["required"] else "optional"
                said = f" [the question says: {f['stated_in_question']}; confirm]" if "stated_in_question" in f else ""
                lines.append(f"  - {f['name']} [{f['key']}] ({f['data_type']}, {flag}): {f['why_needed']}{said}")
    missing = result.get("missing_fields") or []
    lines.append("Missing: " + (", ".join(missing) if missing else "nothing"))
    return "\n".join(lines)
