"""A bigram language model of the input corpus, used to judge whether a replacement fits its context."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any


class BigramModel:
    """Add-k smoothed bigram model over lower-cased tokens, with ``<s>``/``</s>`` sentence bounds."""

    def __init__(self, k: float = 0.1) -> None:
        self.k = k
        self.unigrams: Counter[str] = Counter()
        self.bigrams: Counter[tuple[str, str]] = Counter()
        self.total = 0

    def fit(self, sentences: Iterable[list[str]]) -> BigramModel:
        for toks in sentences:
            seq = ["<s>", *toks, "</s>"]
            self.unigrams.update(seq)
            self.bigrams.update(zip(seq, seq[1:]))
        self.total = sum(self.unigrams.values())
        return self

    @property
    def vocab_size(self) -> int:
        return len(self.unigrams) + 1

    def logp(self, word: str, prev: str) -> float:
        """log P(word | prev)."""
        return math.log((self.bigrams[(prev, word)] + self.k) / (self.unigrams[prev] + self.k * self.vocab_size))

    def sentence_logp(self, words: list[str]) -> float:
        """log P of a whole sentence (lower-cased words), with its ``<s>``/``</s>`` bounds."""
        seq = ["<s>", *words, "</s>"]
        return sum(self.logp(w, p) for p, w in zip(seq, seq[1:]))

    def context_logp(self, word: str, left: str, right: str) -> float:
        """log P(word | left) + log P(right | word): how well ``word`` fits between its neighbours."""
        return self.logp(word, left) + self.logp(right, word)

    def count(self, word: str) -> int:
        return self.unigrams[word]

    def sample(self, prev: str, rng: Any) -> str:
        """A word drawn from P(. | prev) over the words seen after ``prev`` (a unigram draw when ``prev``
        was never seen); never a sentence bound."""
        follow = self._followers().get(prev)
        if not follow:
            follow = self._followers().get("", ([], []))
        words, weights = follow
        if not words:
            return prev
        return words[int(rng.choice(len(words), p=weights))]

    def _followers(self) -> dict[str, tuple[list[str], Any]]:
        """For each word, the words seen after it with their probabilities ("" = the unigram
        distribution); built once."""
        cached = getattr(self, "_follow", None)
        if cached is not None:
            return cached
        import numpy as np

        table: dict[str, dict[str, int]] = {}
        for (a, b), n in self.bigrams.items():
            if b != "</s>":
                table.setdefault(a, {})[b] = n
        table[""] = {w: n for w, n in self.unigrams.items() if w not in ("<s>", "</s>")}
        out = {}
        for a, nexts in table.items():
            words = sorted(nexts)
            counts = np.array([nexts[w] for w in words], dtype=float)
            out[a] = (words, counts / counts.sum()) if len(words) else ([], counts)
        self._follow = out
        return out
