"""The perturbation set (tests/data/perturbations.yaml) is well formed and grounded in the sample KB.

The set measures whether claim verification catches a claim that changes one fact of the sentence
it cites; these checks keep the set itself honest: every source is quoted verbatim from its article,
every unfaithful claim is one contiguous edit away from its source, and every faithful claim keeps
the source's numbers, negations and modal words.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
import yaml

from tests.paths import SAMPLE_KB

DATA = Path(__file__).resolve().parent / "data" / "perturbations.yaml"

UNFAITHFUL = {"negation_flip", "number_swap", "entity_swap", "modal_change", "date_swap", "duration_swap",
              "percent_swap", "unit_swap"}
FAITHFUL = {"faithful_paraphrase", "faithful_verbatim", "faithful_reorder"}
KEYS = {"id", "article", "source", "claim", "kind", "expect"}

NEGATION_WORDS = {"no", "not", "never", "cannot", "without", "none", "nor"}
MODAL_WORDS = {"must", "may", "can", "cannot", "could", "will", "would", "should", "shall", "only", "always",
               "usually", "generally", "never", "required", "requires", "most", "all", "every"}
NUMBER_WORDS = {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve",
                "twice", "double"}
NUMBER = re.compile(r"\$?\d+(?:[,.]\d+)*½?%?")
WORD = re.compile(r"[a-z]+")
LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")

MINIMUMS = {"negation_flip": 25, "number_swap": 25, "percent_swap": 15, "entity_swap": 15, "modal_change": 15}


def _normalize(text: str) -> str:
    return " ".join(text.replace("**", "").split())


@cache
def _articles() -> dict[str, dict]:
    """Article id -> {record_keeper, lines (normalized body lines without list markers), body}."""
    out = {}
    for path in sorted(SAMPLE_KB.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
        assert match, path
        meta = yaml.safe_load(match.group(1))
        lines = [_normalize(LIST_MARKER.sub("", line)) for line in match.group(2).splitlines()]
        lines = [line for line in lines if line]
        out[meta["id"]] = {"record_keeper": meta["record_keeper"], "lines": lines, "body": " ".join(lines)}
    return out


@cache
def _entries() -> list[dict]:
    entries = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    assert isinstance(entries, list)
    return entries


def _words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def _numbers(text: str) -> Counter:
    return Counter(NUMBER.findall(text)) + Counter(w for w in _words(text) if w in NUMBER_WORDS)


def _negations(text: str) -> Counter:
    return Counter(w for w in _words(text) if w in NEGATION_WORDS)


def _modals(text: str) -> Counter:
    return Counter(w for w in _words(text) if w in MODAL_WORDS)


def _quoted_as_unit(source: str, lines: list[str]) -> bool:
    """The source is a whole line, or a sentence of one (starts a line or follows '. ', ': ', '? ')."""
    for line in lines:
        start = line.find(source)
        while start != -1:
            end = start + len(source)
            before_ok = start == 0 or line[start - 2:start] in {". ", ": ", "? "}
            after_ok = end == len(line) or line[end] == " "
            if before_ok and after_ok:
                return True
            start = line.find(source, start + 1)
    return False


def test_the_file_parses_and_every_entry_has_the_expected_shape() -> None:
    entries = _entries()
    assert len(entries) >= 160
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    for e in entries:
        assert set(e) == KEYS, e
        assert re.fullmatch(r"p\d{3}", e["id"]), e["id"]
        assert e["kind"] in UNFAITHFUL | FAITHFUL, e
        assert e["expect"] == ("keep" if e["kind"] in FAITHFUL else "drop"), e
        assert all(isinstance(e[k], str) and e[k].strip() == e[k] and e[k] for k in ("source", "claim")), e


@pytest.mark.parametrize("entry", _entries(), ids=lambda e: e["id"])
def test_source_is_quoted_verbatim_from_its_article(entry: dict) -> None:
    articles = _articles()
    assert entry["article"] in articles, entry["article"]
    assert _quoted_as_unit(_normalize(entry["source"]), articles[entry["article"]]["lines"]), entry["source"]


@pytest.mark.parametrize("entry", _entries(), ids=lambda e: e["id"])
def test_claim_relates_to_its_source_as_its_kind_says(entry: dict) -> None:
    source, claim, kind = entry["source"], entry["claim"], entry["kind"]
    if kind == "faithful_verbatim":
        assert claim == source
        return
    assert claim != source
    if kind in FAITHFUL:
        assert _numbers(claim) == _numbers(source), (_numbers(claim), _numbers(source))
        assert _negations(claim) == _negations(source)
        assert _modals(claim) == _modals(source)
        return
    # unfaithful: one local edit (a window of at most 5 words on either side: "2 to 3" -> "5 to 7" is one
    # change), and the claim is not said anywhere in the article
    ops = [op for op in difflib.SequenceMatcher(a=source.split(), b=claim.split(), autojunk=False).get_opcodes()
           if op[0] != "equal"]
    assert ops and ops[-1][2] - ops[0][1] <= 5 and ops[-1][4] - ops[0][3] <= 5, ops
    assert _normalize(claim) not in _articles()[entry["article"]]["body"]
    if kind == "negation_flip":
        assert _negations(claim) != _negations(source)
    elif kind in {"number_swap", "percent_swap"}:
        assert _numbers(claim) != _numbers(source)
        if kind == "percent_swap":
            assert {n for n in set(_numbers(claim)) ^ set(_numbers(source)) if n.endswith("%")}
    elif kind == "modal_change":
        assert _negations(claim) == _negations(source) and _modals(claim) != _modals(source)


def test_the_set_covers_kinds_articles_and_record_keepers() -> None:
    entries = _entries()
    kinds = Counter(e["kind"] for e in entries)
    for kind, minimum in MINIMUMS.items():
        assert kinds[kind] >= minimum, (kind, kinds[kind])
    assert kinds["date_swap"] + kinds["duration_swap"] >= 15
    assert sum(kinds[k] for k in FAITHFUL) >= 50 and kinds["faithful_paraphrase"] >= 25
    articles = {e["article"] for e in entries}
    assert len(articles) >= 20
    assert len({_articles()[a]["record_keeper"] for a in articles}) == 3
