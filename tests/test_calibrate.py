"""The calibration tooling measures what it says (the fit itself runs in evals/calibrate.py, on dev)."""

from __future__ import annotations

from citewise.engine.records import Relevance
from citewise.engine.score import CONFIDENCE_BIAS, CONFIDENCE_WEIGHTS, confidence
from citewise.evals import calibrate


def row(decision: str, expected: str, passed: bool, dense: float, focus: float) -> dict:
    feats = dict.fromkeys(calibrate.PARTS, 0.0) | {"dense_top": dense, "focus": focus}
    return {"decision": decision, "expected": expected, "pass": passed, "features": feats}


def test_auroc_and_ece_on_known_cases() -> None:
    assert calibrate.auroc([0.9, 0.8, 0.2, 0.1], [1, 1, 0, 0]) == 1.0
    assert calibrate.auroc([0.1, 0.2, 0.8, 0.9], [1, 1, 0, 0]) == 0.0
    assert calibrate.auroc([0.5, 0.5], [1, 0]) == 0.5
    assert calibrate.ece([0.05] * 10 + [0.95] * 10, [0] * 10 + [1] * 10) == 0.05
    assert calibrate.ece([0.9] * 10, [0] * 10) == 0.9


def test_the_threshold_trades_false_answers_for_false_abstentions() -> None:
    rows = [row("can_proceed", "can_proceed", True, 0.8, 0.9) for _ in range(8)]
    rows += [row("can_proceed", "uncertain", False, 0.3, 0.2) for _ in range(2)]
    w, b = {"dense_top": 4.0, "focus": 2.0}, -3.0
    assert calibrate.rates(rows, 0.0, w, b) == {"false_abstain": 0.0, "false_answer": 1.0}
    t = calibrate.choose_threshold(rows, w, b)
    assert calibrate.rates(rows, t, w, b) == {"false_abstain": 0.0, "false_answer": 0.0}
    # every threshold from 0.25 to 0.83 is as good (confidences 0.198 and 0.881): the most cautious is taken
    assert t == 0.83


def test_the_threshold_is_not_a_one_question_dip() -> None:
    """Raw costs 2 everywhere except a dip to 1 at exactly 0.60 (one abstaining question with
    confidence just below it, a right answer just above); the chosen threshold is good around it."""
    w, b = {"dense_top": 1.0, "focus": 0.0}, 0.0  # confidence = sigmoid(dense_top)

    def at(p: float) -> float:  # the dense_top whose confidence is p
        import math
        return math.log(p / (1 - p))

    rows = [row("can_proceed", "uncertain", False, at(0.595), 0.0),
            row("can_proceed", "can_proceed", True, at(0.605), 0.0),
            row("can_proceed", "uncertain", False, at(0.90), 0.0)]
    raw = {t: sum(calibrate.rates(rows, t / 100, w, b).values()) for t in range(5, 96)}
    assert raw[60] < raw[59] and raw[60] < raw[61]  # the dip
    t = calibrate.choose_threshold(rows, w, b)
    assert t != 0.60 and sum(calibrate.rates(rows, t, w, b).values()) == min(raw[u] for u in raw if u != 60)


def test_the_engine_computes_the_confidence_the_calibration_fitted() -> None:
    rel = Relevance(score=0.7, dense_top=0.62, coverage=0.8, agreement=1.0)
    conf, parts = confidence(rel, 0.9, 1.0, True, 0, focus=0.75, match=0.6)
    assert abs(conf - calibrate.confidence(parts | {"answered": 1.0}, CONFIDENCE_WEIGHTS, CONFIDENCE_BIAS)) < 1e-4
    low, _ = confidence(rel, 0.9, 1.0, True, 0, focus=0.1)
    assert low < conf  # an answer that states less of the question is less likely right
    assert set(CONFIDENCE_WEIGHTS) == set(calibrate.FEATURES)


def test_select_cross_validates_each_subset_on_the_rows_it_is_given() -> None:
    import random

    rng = random.Random(7)
    rows = []
    for _ in range(60):
        dense = rng.random()
        rows.append(row("can_proceed", "can_proceed", dense > 0.5, dense, rng.random()))
    rows.append(row("uncertain", "uncertain", True, 0.99, 0.99))  # not answered: not a training row
    scored = {tuple(r["features"]): r["cv_auroc"] for r in calibrate.select(rows)}
    assert set(scored) == set(calibrate.SUBSETS)
    assert scored[("dense_top",)] > 0.95 and scored[("focus",)] < 0.75  # the informative part wins


def test_required_data_runs_are_not_routed_by_confidence() -> None:
    """`required_data` mode ends with the field list before confidence is checked: such a run neither
    trains the model nor moves the rates, however low its confidence."""
    rows = [row("can_proceed", "can_proceed", True, 0.8, 0.9) for _ in range(4)]
    field_list = row("needs_data", "needs_data", False, 0.1, 0.1) | {"mode": "required_data"}
    w, b = {"dense_top": 4.0, "focus": 2.0}, -3.0
    assert calibrate.rates([*rows, field_list], 0.9, w, b)["false_abstain"] == calibrate.rates(rows, 0.9, w, b)[
        "false_abstain"] * 4 / 5  # counted as answerable, never abstained
    assert calibrate._xy([*rows, field_list], ("dense_top",)) == calibrate._xy(rows, ("dense_top",))


def test_the_report_gives_each_set_its_own_numbers_beside_the_pooled_ones() -> None:
    """Pooled numbers can hide a set whose confidence says nothing: one set ranks its answers perfectly,
    the other backwards, and the pooled AUROC sits between."""
    good = [row("can_proceed", "can_proceed", True, 2.0, 1.0) | {"set": "a"},
            row("can_proceed", "can_proceed", False, -2.0, 0.0) | {"set": "a"}]
    bad = [row("can_proceed", "can_proceed", True, -1.0, 0.0) | {"set": "b"},
           row("can_proceed", "can_proceed", False, 1.0, 1.0) | {"set": "b"}]
    by_set = {name: calibrate.summary(rows, 0.5) for name, rows in (("a", good), ("b", bad))}
    assert by_set["a"]["auroc"] == 1.0 and by_set["b"]["auroc"] == 0.0
    pooled = calibrate.summary(good + bad, 0.5)
    assert pooled["answers"] == 4 and 0.0 < pooled["auroc"] < 1.0
    lines = calibrate.table({**pooled, "by_set": by_set}).splitlines()
    assert [line.split()[0] for line in lines] == ["set", "a", "b", "pooled"]
    assert lines[1].split()[2] == "1.000" and lines[2].split()[2] == "0.000"
