"""Slips of the keyboard in a provider's name, read as the name.

A misspelt name ("Harbovriew", "Copperifeld", "Wattlgeum") is a word the index has never seen: it names
no provider, so the question was answered from another provider's article ("What happens to my
Harbovriew 401(k) loan?" got Acme's). A word is read as a name's word only when

  - it is at least MIN_LENGTH letters and not an acronym, a code or a number;
  - neither it nor a synonym the KB lists for it is known to the index (a word the KB uses is no slip);
  - one slip away (two neighbouring letters swapped, a letter added or left out, in a longer word one struck
    for another) is a word that tells a name-valued facet in this KB (FacetDetector.name_words: a word
    written as a name, found nearly only in that value's documents).

Only names are read so: a general word the KB lacks is too often a real word one slip from one it has
("twins" / "wins", "heart" / "heat", "costs" / "coasts": measured on the eval questions, where reading
every unknown word as the KB's nearest cost three dev questions and fixed none), and the KB's names are
few, long and unlike everyday words.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable

from ..kb.text import STOPWORDS, stem

MIN_LENGTH = 5  # a shorter word is too often another word one slip away
_WORD = re.compile(r"(?<![\w'-])[A-Za-z][a-z]+(?![\w'-])")  # not "WCHC", "401k", "e-mail", "don't"


STRUCK_LENGTH = 7  # a wrong letter only in a longer word: "submit" is one letter from "Summit"


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


def corrected(question: str, names: dict[str, str], known: Callable[[str], bool]
              ) -> tuple[str, list[tuple[str, str]]]:
    """The question with each slip in a name read as the name's word, and the (as written, as read) pairs.

    `names`: stem -> the word as the name writes it; `known(word)`: whether the KB knows the word as
    written (its stem is indexed, or its synonyms list it)."""
    fixes: list[tuple[str, str]] = []
    if not names:
        return question, fixes

    def fix(found: re.Match[str]) -> str:
        written = found.group(0)
        word = written.lower()
        if len(word) < MIN_LENGTH or word in STOPWORDS or known(word):
            return written
        matches = sorted({names[st] for c in slips(word) if (st := stem(c)) in names})
        if len(matches) != 1:
            return written  # no name, or two names one slip away: not ours to choose
        fixes.append((written, matches[0]))
        return matches[0]

    return _WORD.sub(fix, question), fixes
