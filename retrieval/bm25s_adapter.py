"""The one place that reads bm25s internals: its precomputed (term, doc) scores and its vocabulary.

bm25s stores BM25 contributions as a CSC matrix in `BM25.scores` ({"data", "indices", "indptr",
"num_docs"}) and the term ids in `BM25.vocab_dict`. These are not public API, so citewise reads
them here only; tests/test_bm25s_adapter.py checks them against bm25s's public `get_scores`, so a
bm25s upgrade that changes them fails loudly instead of scoring wrongly.

A saved index is read back by `load_postings` straight from the files `BM25.save` writes, without
importing bm25s: importing it imports scipy, ~0.3 s of every cold `citewise ask`, and a query only
needs the arrays. The same test file checks that it reads what `bm25s.BM25.load` reads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import bm25s

# The files `bm25s.BM25.save` writes (its default names) that hold what a query needs.
DATA_FILE, INDICES_FILE, INDPTR_FILE = "data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy"
VOCAB_FILE, BM25S_PARAMS_FILE = "vocab.index.json", "params.index.json"


@dataclass(frozen=True)
class Postings:
    data: np.ndarray  # float32 BM25 contribution per (term, doc) entry
    indices: np.ndarray  # doc (row) of each entry
    indptr: np.ndarray  # entries of term t are data[indptr[t]:indptr[t + 1]]
    num_docs: int
    vocab: dict[str, int]  # term -> term id


def postings(retriever: bm25s.BM25) -> Postings:
    scores = retriever.scores
    return Postings(data=np.asarray(scores["data"], dtype=np.float32),
                    indices=np.asarray(scores["indices"], dtype=np.int64),
                    indptr=np.asarray(scores["indptr"], dtype=np.int64), num_docs=int(scores["num_docs"]),
                    vocab=dict(retriever.vocab_dict))


def load_postings(directory: Path) -> Postings:
    """The postings of an index saved by `bm25s.BM25.save(directory)`, read without importing bm25s."""
    directory = Path(directory)
    params = json.loads((directory / BM25S_PARAMS_FILE).read_text(encoding="utf-8"))
    vocab = json.loads((directory / VOCAB_FILE).read_text(encoding="utf-8"))
    return Postings(data=np.asarray(np.load(directory / DATA_FILE), dtype=np.float32),
                    indices=np.asarray(np.load(directory / INDICES_FILE), dtype=np.int64),
                    indptr=np.asarray(np.load(directory / INDPTR_FILE), dtype=np.int64),
                    num_docs=int(params["num_docs"]), vocab={str(k): int(v) for k, v in vocab.items()})
