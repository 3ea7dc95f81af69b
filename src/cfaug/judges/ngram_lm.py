"""An interpolated Witten-Bell n-gram language model: the offline fallback for fluency when no causal LM
is available. It is trained on a reference corpus the user names, so its perplexities measure closeness
to that corpus, not general fluency, and are labelled as such.

Each text is one sequence: lower-cased word and punctuation tokens (:func:`cfaug.nlp.tokens.tokenize`)
with ``order - 1`` start symbols before and one end symbol after; the end symbol is predicted and
counted. Words unseen in the reference map to ``<unk>``. The recursion bottoms out in a uniform
distribution over the vocabulary (reference words, ``<unk>`` and the end symbol)::

    P(w | h) = (c(h, w) + T(h) * P(w | h')) / (c(h) + T(h))     (P(w | h') when c(h) = 0)

where ``c`` counts n-grams in the reference, ``T(h)`` is the number of distinct words seen after ``h``
and ``h'`` drops the oldest word of ``h``.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from cfaug.nlp.tokens import tokenize

BOS, EOS, UNK = "<s>", "</s>", "<unk>"


class NgramLM:
    """Interpolated Witten-Bell n-gram model (see module docstring)."""

    def __init__(self, order: int = 3) -> None:
        if order < 1:
            raise ValueError("order must be at least 1")
        self.order = order
        self.vocab: set[str] = set()
        self._counts: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
        self._totals: dict[tuple[str, ...], tuple[int, int]] = {}
        self._corpus_hash = ""
        self.n_texts = 0

    def fit(self, texts: Iterable[str]) -> NgramLM:
        h = hashlib.sha256()
        seqs = []
        for t in texts:
            h.update(t.encode("utf-8", "replace") + b"\n")
            seqs.append(tokenize(t))
        self.n_texts = len(seqs)
        if not any(seqs):
            raise ValueError("the reference corpus for the n-gram model has no tokens")
        self.vocab = {w for s in seqs for w in s} | {UNK, EOS}
        for s in seqs:
            padded = [BOS] * (self.order - 1) + s + [EOS]
            for i in range(self.order - 1, len(padded)):
                w = padded[i]
                for k in range(self.order):  # history lengths 0 .. order-1
                    self._counts[tuple(padded[i - k: i])][w] += 1
        self._totals = {ctx: (sum(c.values()), len(c)) for ctx, c in self._counts.items()}
        self._corpus_hash = h.hexdigest()[:16]
        return self

    def prob(self, word: str, history: Sequence[str]) -> float:
        """P(word | history), using at most the last ``order - 1`` history words."""
        word = word if word in self.vocab else UNK
        hist = tuple(w if (w in self.vocab or w == BOS) else UNK for w in history)
        hist = hist[len(hist) - (self.order - 1):] if self.order > 1 else ()
        p = 1.0 / len(self.vocab)
        for k in range(0, len(hist) + 1):
            ctx = hist[len(hist) - k:] if k else ()
            counts = self._counts.get(ctx)
            if not counts:
                continue
            total, types = self._totals[ctx]
            p = (counts.get(word, 0) + types * p) / (total + types)
        return p

    def log_prob(self, text: str) -> tuple[float, int]:
        """(natural-log probability of the text, number of predicted tokens incl. the end symbol)."""
        s = [BOS] * (self.order - 1) + tokenize(text) + [EOS]
        total = 0.0
        for i in range(self.order - 1, len(s)):
            total += math.log(self.prob(s[i], s[max(0, i - self.order + 1): i]))
        return total, len(s) - (self.order - 1)

    def perplexity(self, text: str) -> float:
        lp, n = self.log_prob(text)
        return math.exp(-lp / n)

    def describe(self) -> dict[str, object]:
        return {"model": "n-gram (fallback, not a neural LM)", "order": self.order,
                "smoothing": "interpolated Witten-Bell, uniform base", "tokenization": "cfaug tokenize (lower-cased)",
                "end_symbol_counted": True, "vocabulary": len(self.vocab), "reference_texts": self.n_texts,
                "reference_sha256": self._corpus_hash}
