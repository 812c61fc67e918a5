"""Slips of the keyboard in a provider's name, and acronym plurals typed in lower case, read as the KB writes them.

A misspelt name ("Contsoo" for "Contoso") is a word the index has never seen: it names no provider, so the
question was answered from another provider's article. A word is read as a name's word only when

  - it is MIN_LENGTH to MAX_LENGTH letters, not an acronym, a code or a number;
  - neither it nor a synonym the KB lists for it is known to the index (a word the KB uses is no slip);
  - it is no English word: not one token of the cl100k vocabulary, nor the inflection of one (cl100k
    holds common English words whole, " costs", " tanked" as " tank" + "ed", but never a slip);
  - one slip away (two neighbouring letters swapped, a letter added or left out, in a word of STRUCK_LENGTH
    letters or more one struck for another) is exactly one word that tells a name-valued facet in this KB
    (FacetDetector.name_words: a word written as a name, found nearly only in that value's documents).

Only names are read so. Reading any unknown word as the KB's nearest word was tried: with no dictionary
of the language, uncommon real words the KB lacks were rewritten ("incurable" -> "insurable", "overage"
-> "average", "deferral" -> "referral"), and the rewrite is what the answer echoes. A KB's names are few,
long and unlike everyday words.

An acronym's plural of four letters or more typed in lower case or all capitals ("rmds", "RMDS"; "iras" the
stemmer handles) is read as its singular when the KB indexes the singular and not the plural: the analyser
strips the "s" of "RMDs" only as written so, and stripping it from every vowel-less word merged "GPS" with
"GP" (a three-letter one, "hrs", "Mrs", "GPS", is too often a word of its own).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field

from ..kb.text import STOPWORDS, stem

MIN_LENGTH, MAX_LENGTH = 5, 30  # shorter: too often another word one slip away; longer: no name, and slow
STRUCK_LENGTH = 7  # a wrong letter only in a longer word: a six-letter word is too often another word
# a word, with a possessive after it ("Contsoo's"), or a plural in capitals ("RMDS"); not "WCHC", "401k",
# "e-mail", "don't"
_WORD = re.compile(r"(?<![\w'’-])(?:[A-Za-z][a-z]+|[A-Z]{2,}S)(?=(?:['’]s)?(?![\w'’-]))")
_VOWELLESS_PLURAL = re.compile(r"[^aeiouy\W\d_]{3,}s")


@dataclass
class Lexicon:
    """What the knowledge base knows of words, as the spelling step reads it."""

    indexed: Callable[[str], bool]  # whether the index has this stem
    names: dict[str, str] = field(default_factory=dict)  # stem -> a name's word as written
    listed: Callable[[str], bool] = lambda word: False  # whether the KB's synonyms know the word as written
    english: Callable[[str], bool] = lambda word: False  # whether a word (or its base) is a common English word


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
    """The question with each slip in a name read as the name's word (and a lower-case acronym plural as its
    singular), and the (as written, as read) pairs."""
    fixes: list[tuple[str, str]] = []

    def fix(found: re.Match[str]) -> str:
        written = found.group(0)
        word = written.lower()
        if word in STOPWORDS or lexicon.indexed(stem(word)) or lexicon.listed(word):
            return written  # a word the KB knows is no slip
        if _VOWELLESS_PLURAL.fullmatch(word) and lexicon.indexed(stem(word[:-1])):
            read: str | None = written[:-1]  # "rmds" -> "rmd"
        elif written.isupper():
            read = None  # an acronym in capitals is no slip of a name
        elif MIN_LENGTH <= len(word) <= MAX_LENGTH and lexicon.names and not lexicon.english(word):
            names = {lexicon.names[st] for c in slips(word) if (st := stem(c)) in lexicon.names}
            read = names.pop() if len(names) == 1 else None  # two names one slip away: not ours to choose
        else:
            read = None
        if read is None:
            return written
        fixes.append((written, read))
        return read

    return _WORD.sub(fix, question), fixes
