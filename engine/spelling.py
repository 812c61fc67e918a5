"""Slips of the keyboard, read as the word the knowledge base uses.

A misspelt word ("Harbovriew", "withdarwals", "retirmeent") is a word the index has never seen: it finds
nothing in BM25, a misspelt name names no provider (the question was answered from another provider's
article), and every such word lowers the share of the question an answer states. A word is read as
another only when

  - it is at least MIN_LENGTH letters and not an acronym, a code or a number;
  - neither it nor a synonym the KB lists for it is known to the index (a word the KB uses is no slip);
  - one slip away (two neighbouring letters swapped, a letter added or left out, in a word of STRUCK_LENGTH
    letters or more one struck for another) is
      a word that tells a name-valued facet in this KB (FacetDetector.name_words), or
      a word the index has. Of several, an English word first, then the KB's most frequent (lowest IDF);
  - and the word as written is no English word: not one token of the cl100k vocabulary, which holds
    common English words whole (" costs", " twins") but never a slip (" withdarwals", " Harbovriew").

A real word the KB lacks is left alone: reading every unknown word as the KB's nearest read "twins" as
"wins", "heart" as "heat" and "costs" as "coasts" in the eval questions and cost three dev questions.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field

from ..kb.text import STOPWORDS, stem

MIN_LENGTH = 5  # a shorter word is too often another word one slip away
STRUCK_LENGTH = 7  # a wrong letter only in a longer word: "submit" is one letter from "Summit"
_WORD = re.compile(r"(?<![\w'-])[A-Za-z][a-z]+(?![\w'-])")  # not "WCHC", "401k", "e-mail", "don't"


@dataclass
class Lexicon:
    """What the knowledge base knows of words, as the spelling step reads it."""

    indexed: Callable[[str], bool]  # whether the index has this stem
    rarity: Callable[[str], float] = lambda st: 0.0  # a stem's IDF
    names: dict[str, str] = field(default_factory=dict)  # stem -> a name's word as written ("Harborview")
    listed: Callable[[str], bool] = lambda word: False  # whether the KB's synonyms know the word as written
    english: Callable[[str], bool] | None = None  # whether a word is a common English word (None: names only)


def slips(word: str) -> set[str]:
    """The words one slip of the keyboard from `word` (lower case): a swap, an extra or a missing letter,
    and in a word of STRUCK_LENGTH letters or more a wrong one."""
    letters = string.ascii_lowercase
    swapped = {word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1) if word[i] != word[i + 1]}
    dropped = {word[:i] + word[i + 1:] for i in range(len(word))}
    added = {word[:i] + c + word[i:] for i in range(len(word) + 1) for c in letters}
    struck = ({word[:i] + c + word[i + 1:] for i in range(len(word)) for c in letters}
              if len(word) >= STRUCK_LENGTH else set())
    return (swapped | dropped | added | struck) - {word}


def corrected(question: str, lexicon: Lexicon) -> tuple[str, list[tuple[str, str]]]:
    """The question with each slip read as the KB's word, and the (as written, as read) pairs."""
    fixes: list[tuple[str, str]] = []

    def fix(found: re.Match[str]) -> str:
        written = found.group(0)
        word = written.lower()
        if (len(word) < MIN_LENGTH or word in STOPWORDS or lexicon.indexed(stem(word)) or lexicon.listed(word)
                or (lexicon.english is not None and lexicon.english(word))):
            return written  # too short to tell, a word the KB knows, or a real word it lacks
        near = slips(word)
        names = sorted({lexicon.names[st] for c in near if (st := stem(c)) in lexicon.names})
        if names:
            read = names[0] if len(names) == 1 else None  # two names one slip away: not ours to choose
        elif (english := lexicon.english) is not None:
            words = [c for c in near if c not in STOPWORDS and lexicon.indexed(stem(c))]
            # an English word first ("retirement", not "retireent", whose stem the index also has)
            read = min(words, key=lambda c: (not english(c), lexicon.rarity(stem(c)), c)) if words else None
            if read is not None and written[0].isupper():
                read = read.capitalize()
        else:
            read = None
        if read is None:
            return written
        fixes.append((written, read))
        return read

    return _WORD.sub(fix, question), fixes
