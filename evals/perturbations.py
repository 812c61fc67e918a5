"""Verification that can fail, measured: perturbed claims against the KB sentences they came from.

    python -m citewise.evals.perturbations [--split dev|test|all] [--json]

tests/data/perturbations.yaml holds claims made from sample-KB sentences: negation flips, number,
percent, date, duration, unit, entity and modal swaps (each must be dropped) and faithful paraphrases,
reorderings and verbatim copies (each must be kept). Each claim is verified against the chunk that
holds its source sentence, exactly as a cited claim is in an answer. The rules were chosen on dev.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from .questions import ROOT, split_of

DATA = ROOT / "tests" / "data" / "perturbations.yaml"


def evaluate(home: Path, split: str = "test") -> dict[str, Any]:
    from ..engine.entailment import entails
    from ..engine.verify import support_score
    from ..retrieval.snapshot import open_kb

    kb = open_kb(home)
    rows = []
    for e in yaml.safe_load(DATA.read_text()):
        if split != "all" and split_of(e["id"]) != split:
            continue
        chunk = next(c for c in kb.chunks_of(e["article"])
                     if e["source"][:40] in " ".join(c.text.replace("**", "").split()))
        lexical = support_score(e["claim"], [f"{chunk.text} {chunk.title}"])
        finding = entails(e["claim"], [chunk.text], [chunk.title])
        kept = lexical >= 0.5 and finding.ok
        rows.append({"id": e["id"], "kind": e["kind"], "expect": e["expect"], "kept": kept,
                     "lexical_only_kept": lexical >= 0.5, "reason": finding.reason, "claim": e["claim"]})
    drops = [r for r in rows if r["expect"] == "drop"]
    keeps = [r for r in rows if r["expect"] == "keep"]
    by_kind = Counter(r["kind"] for r in drops if r["kept"])
    return {"split": split, "claims": len(rows), "unfaithful": len(drops), "faithful": len(keeps),
            "detection_rate": round(sum(not r["kept"] for r in drops) / len(drops), 4) if drops else None,
            "false_drop_rate": round(sum(not r["kept"] for r in keeps) / len(keeps), 4) if keeps else None,
            "detection_rate_term_overlap_only": round(sum(not r["lexical_only_kept"] for r in drops) / len(drops), 4)
            if drops else None,
            "missed_by_kind": dict(by_kind),
            "errors": [r for r in rows if r["kept"] != (r["expect"] == "keep")]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m citewise.evals.perturbations")
    parser.add_argument("--split", choices=["dev", "test", "all"], default="test")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from ..kb.ingest import ingest

    with tempfile.TemporaryDirectory(prefix="citewise-perturb-") as tmp:
        ingest([ROOT / "examples" / "kb"], tmp, progress=False)
        report = evaluate(Path(tmp), args.split)
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    for r in report["errors"]:
        print(f"{'MISSED' if r['kept'] else 'FALSE DROP'} {r['kind']:<20} {r['reason']:<45} {r['claim'][:70]}")
    print(f"\n[{report['split']}] {report['unfaithful']} unfaithful claims: detected {report['detection_rate']:.1%} "
          f"(term overlap alone: {report['detection_rate_term_overlap_only']:.1%}); {report['faithful']} faithful: "
          f"dropped {report['false_drop_rate']:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
