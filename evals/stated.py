"""Values read out of the question for the agent to confirm (engine/stated.py), measured on two probes
written blind by helpers.

    python -m citewise.evals.stated [--json]

tests/data/stated/probe{1,2}.yaml: customers' messages about an article of the example KBs, each with the
currency, number and date fields whose value the message truly states (as a careful agent would take it),
among traps (thresholds, rule quotes, negations, other people's cases, another field's figure, ambiguous or
corrected figures). The writers read only the articles' Required data sections. Probe 1 is split by the
eval sets' rule (sha256 of the id): the reader's guards were chosen on its dev half, though three of its
test half's false values (a correction, "no wait", "after 14 days") were seen before the split. Probe 2 was
written after the first version was frozen (12 of 13 values shown right, 14% found); its one false value
was seen then, and the reader was narrowed after a review's adversarial messages (not here: they were
written against the code, and are reported as `review`: what the fixes were made on), which cost most of
the recall. A value counts as right when it normalises
(stated_value) to the expected one; precision is over the values shown, recall over the values written.
"""

from __future__ import annotations

from typing import Any

import yaml

from .probe_report import probe_main
from .questions import ROOT, split_of

DATA = ROOT / "tests" / "data" / "stated"
PROBES = {"probe1 dev": ("probe1", "dev"), "probe1 test": ("probe1", "test"), "probe2": ("probe2", None),
          "review": ("review", None)}


def article_fields() -> dict[str, list[Any]]:
    """Each example article's Required data fields, by article id."""
    from ..engine.records import FieldSpec
    from ..kb.articles import parse_markdown
    from ..kb.fields import parse_required_data

    out: dict[str, list[Any]] = {}
    for path in sorted((ROOT / "examples").glob("kb*/**/*.md")):
        doc = parse_markdown(path.read_text(encoding="utf-8"), source=str(path), default_id=path.stem,
                             default_title=path.stem)
        fields = [f for s in doc.sections if s.chunk_type == "required_data" for f in parse_required_data(s.text)[0]]
        out[doc.doc_id] = [FieldSpec(f.key, f.name, f.data_type, f.required, f.description, sensitive=f.sensitive)
                           for f in fields]
    return out


def evaluate() -> dict[str, Any]:
    from ..engine.privacy import masked
    from ..engine.stated import stated_data, stated_value

    fields = article_fields()
    out: dict[str, Any] = {}
    for label, (name, split) in PROBES.items():
        rows = yaml.safe_load((DATA / f"{name}.yaml").read_text(encoding="utf-8"))
        right = shown = written = 0
        for row in rows:
            if split is not None and split_of(row["id"]) != split:
                continue
            kinds = {f.key: f for f in fields[row["article"]]}
            # the question reaches the engine masked (engine/inquiry.py), as here
            found = stated_data(masked(row["message"]), fields[row["article"]], {})
            got, expected = ({k: stated_value(kinds[k], v)[1] for k, v in values.items()}
                             for values in (found, row["expect"]))
            right += sum(1 for k, v in got.items() if k in expected and expected[k] == v)
            shown, written = shown + len(got), written + len(expected)
        out[label] = {"messages": sum(1 for r in rows if split is None or split_of(r["id"]) == split),
                      "values_written": written, "values_shown": shown, "right": right,
                      "precision": round(right / shown, 3) if shown else None,
                      "recall": round(right / written, 3) if written else None}
    return out


def main(argv: list[str] | None = None) -> int:
    return probe_main("citewise.evals.stated", __doc__ or "", evaluate,
                      ["probe", "messages", "values written", "shown", "right", "precision", "recall"],
                      lambda name, e: [name, e["messages"], e["values_written"], e["values_shown"], e["right"],
                                       e["precision"], e["recall"]], argv)


if __name__ == "__main__":
    raise SystemExit(main())
