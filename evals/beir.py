"""Reading a BEIR-format collection: corpus.jsonl, queries.jsonl, qrels/<split>.tsv."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from ..errors import InputError


def load_queries(dataset: Path) -> dict[str, str]:
    path = dataset / "queries.jsonl"
    if not path.is_file():
        raise InputError(f"{dataset}: no queries.jsonl (is this a BEIR dataset folder?)")
    out = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                out[str(rec["_id"])] = rec["text"]
    return out


def load_qrels(dataset: Path, split: str) -> dict[str, dict[str, int]]:
    path = dataset / "qrels" / f"{split}.tsv"
    if not path.is_file():
        raise InputError(f"{dataset}: no qrels/{split}.tsv")
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            qrels.setdefault(str(row["query-id"]), {})[str(row["corpus-id"])] = int(row["score"])
    return qrels


def corpus_path(dataset: Path) -> Path:
    path = dataset / "corpus.jsonl"
    if not path.is_file():
        raise InputError(f"{dataset}: no corpus.jsonl")
    return path
