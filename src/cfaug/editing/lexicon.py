"""The opinion lexicon (Hu & Liu 2004, shipped in cfaug/resources), negators and the antonym table."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

#: Negators and what a negation edit does with them ("" = delete).
NEGATORS: dict[str, str] = {
    "not": "", "n't": "", "no": "", "never": "", "cannot": "can", "hardly": "", "without": "with",
    "nor": "and", "neither": "either",
}
#: Auxiliary forms left behind when n't is deleted ("won't" -> "will", "can't" -> "can").
AUX_AFTER_NT = {"wo": "will", "ca": "can", "sha": "shall", "ai": "is"}
#: Words that say nothing about polarity on their own even though the lexicon lists them.
STOP_OPINION = {"like", "well", "right", "work", "works", "pretty", "enough", "plot", "character"}
#: Opinion words that take a complement as a preposition does ("worth seeing", "worth it"): no adjective can
#: stand before that complement ("worthless seeing"), so they are negated instead, and never proposed as a
#: replacement ("this worthless piece" -> "this worth piece").
NEGATED_ONLY = frozenset({"worth"})


@dataclass
class Lexicon:
    positive: frozenset[str]
    negative: frozenset[str]
    antonyms: dict[str, list[str]] = field(default_factory=dict)

    def polarity(self, word: str) -> str | None:
        w = word.lower()
        if w in STOP_OPINION:
            return None
        if w in self.positive:
            return "positive"
        if w in self.negative:
            return "negative"
        return None

    def words(self, polarity: str) -> frozenset[str]:
        return self.positive if polarity == "positive" else self.negative

    def words_in(self, text: str, polarity: str) -> list[str]:
        """The distinct words of ``text`` (lower-cased, in order) the lexicon gives ``polarity``."""
        out: list[str] = []
        for word in re.findall(r"[a-z][a-z'-]*", text.lower()):
            if word not in out and self.polarity(word) == polarity:
                out.append(word)
        return out

    def forms(self, words: list[str], polarity: str) -> list[str]:
        """``words`` and the other words of ``polarity`` that extend them by at most three letters ("love":
        "loved", "loves", "lovely"), in order: what a model given one of them would reach for next."""
        pool = self.words(polarity)
        out: list[str] = []
        for word in words:
            stem = word[:-1] if word.endswith("e") and len(word) > 4 else word
            for form in [word, *sorted(v for v in pool if v.startswith(stem) and 0 < len(v) - len(stem) <= 3)]:
                if form not in out and self.polarity(form) == polarity:
                    out.append(form)
        return out


def _read_words(path: Path) -> frozenset[str]:
    return frozenset(w.strip().lower() for w in path.read_text(encoding="utf-8").splitlines()
                     if w.strip() and not w.startswith(";"))


def _read_antonyms(path: Path) -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        a, b = (x.strip().lower() for x in line.split("\t")[:2])
        table.setdefault(a, []).append(b)
        table.setdefault(b, []).append(a)
    return table


@lru_cache(maxsize=4)
def load_lexicon(positive: str | None = None, negative: str | None = None) -> Lexicon:
    """The shipped lexicon, or user word lists (one word per line, ``;`` comments)."""
    res = resources.files("cfaug") / "resources"
    pos = Path(positive) if positive else Path(str(res / "opinion_lexicon" / "positive.txt"))
    neg = Path(negative) if negative else Path(str(res / "opinion_lexicon" / "negative.txt"))
    return Lexicon(_read_words(pos), _read_words(neg), _read_antonyms(Path(str(res / "antonyms.tsv"))))
