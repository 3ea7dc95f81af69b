"""A bigram language model of the input corpus, used to judge whether a replacement fits its context."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable


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
