"""Planted-instruction detection, measured on three probe sets written blind by helpers.

    python -m citewise.evals.injection [--json]

tests/data/injection/probe{1,2,3}.yaml: lines an attacker could plant in an article for the AI that reads
it (injection: true) and ordinary article text that shares their words (injection: false: AI products,
governance, second-person guidance to agents, documentation about models and prompts). Each writer saw no
code and no other probe. The detector's paragraph rule (kb/text.py `addressed_orders`) was written after
reading probe 1's misses and widened after probe 2's, then narrowed after a review's false flags; probe 3
was never read to write it (measured after the first version and after the narrowing), so it is the
held-out number. Reported for the two places the check runs: an article written for the KB
(`instruction_snippets`: its section is held back) and a converted page or transcript (`addressed_sentences`).
"""

from __future__ import annotations

from typing import Any

import yaml

from .probe_report import probe_main
from .questions import ROOT

PROBES = {"probe1": "tuning", "probe2": "tuning", "probe3": "held out"}
DATA = ROOT / "tests" / "data" / "injection"


def evaluate() -> dict[str, Any]:
    from ..kb.text import addressed_sentences, instruction_snippets

    out: dict[str, Any] = {}
    for name, role in PROBES.items():
        rows = yaml.safe_load((DATA / f"{name}.yaml").read_text(encoding="utf-8"))
        planted = [r["text"] for r in rows if r["injection"]]
        ordinary = [r["text"] for r in rows if not r["injection"]]
        entry: dict[str, Any] = {"role": role, "planted": len(planted), "ordinary": len(ordinary)}
        for where, check in (("article", instruction_snippets), ("converted", addressed_sentences)):
            entry[where] = {"detected": round(sum(bool(check(t)) for t in planted) / len(planted), 3),
                            "false_flags": round(sum(bool(check(t)) for t in ordinary) / len(ordinary), 3)}
        out[name] = entry
    return out


def main(argv: list[str] | None = None) -> int:
    return probe_main("citewise.evals.injection", __doc__ or "", evaluate,
                      ["probe", "role", "planted", "detected (article / converted)", "ordinary",
                       "false flags (article / converted)"],
                      lambda name, e: [name, e["role"], e["planted"],
                                       f"{e['article']['detected']:.0%} / {e['converted']['detected']:.0%}",
                                       e["ordinary"],
                                       f"{e['article']['false_flags']:.0%} / {e['converted']['false_flags']:.0%}"],
                      argv)


if __name__ == "__main__":
    raise SystemExit(main())
