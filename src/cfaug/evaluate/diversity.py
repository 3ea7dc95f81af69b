"""Diversity of a set of counterfactuals: Self-BLEU and distinct-n.

Both use lower-cased word and punctuation tokens (:func:`cfaug.nlp.tokens.tokenize`).

* ``self_bleu`` (lower = more diverse): each text is scored by sentence BLEU against all the *other*
  texts as references, and the scores are averaged; reported on a 0-100 scale. BLEU settings: n-gram
  order ``max_n`` (default 4) with uniform weights, counts clipped by the maximum count in any single
  reference, brevity penalty against the reference length closest to the hypothesis length (the
  shorter on a tie), smoothing "method 1" of Chen & Cherry (2014): an order with no match gets
  ``epsilon / max(1, total)`` (epsilon 0.1) instead of zero; a text with no unigram match scores 0.
  These settings agree with NLTK's ``sentence_bleu`` with ``SmoothingFunction().method1``.
* ``distinct_n`` (higher = more diverse): distinct n-grams divided by all n-grams, pooled over the set.

>>> from cfaug.evaluate.diversity import distinct_n
>>> distinct_n(["a b a b"], n=2).value
0.6666666666666666
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Sequence

from cfaug.evaluate.result import MetricResult
from cfaug.nlp.tokens import tokenize

TOKENIZATION = "lower-cased words and punctuation (cfaug tokenize)"


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i: i + n]) for i in range(len(tokens) - n + 1))


def self_bleu(texts: Sequence[str], max_n: int = 4, epsilon: float = 0.1) -> MetricResult:
    """Self-BLEU x 100 of ``texts`` (see module docstring). Needs at least two texts."""
    settings = {"tokenization": TOKENIZATION, "max_n": max_n, "weights": "uniform",
                "smoothing": f"Chen & Cherry method 1 (epsilon {epsilon})", "references": "all other texts",
                "scale": "0-100"}
    toks = [tokenize(t) for t in texts]
    if len(toks) < 2:
        return MetricResult("self_bleu", None, len(toks), settings, per_item=[None] * len(toks),
                            higher_is_better=False)
    counts = [[_ngrams(t, n) for n in range(1, max_n + 1)] for t in toks]
    # for every n-gram: the largest and second-largest count in any single text, and who holds the largest
    best: list[dict[tuple[str, ...], tuple[int, int, int]]] = [dict() for _ in range(max_n)]
    for i, per_n in enumerate(counts):
        for k, c in enumerate(per_n):
            table = best[k]
            for g, v in c.items():
                top, holder, second = table.get(g, (0, -1, 0))
                if v > top:
                    table[g] = (v, i, top)
                elif v > second:
                    table[g] = (top, holder, v)
    lengths = sorted(len(t) for t in toks)
    scores: list[float | None] = []
    for i, per_n in enumerate(counts):
        hyp_len = len(toks[i])
        log_p = 0.0
        for k, c in enumerate(per_n):
            table = best[k]
            matched = 0
            for g, v in c.items():
                top, holder, second = table[g]
                matched += min(v, second if holder == i else top)
            if k == 0 and matched == 0:
                break
            log_p += math.log((matched if matched else epsilon) / max(1, sum(c.values()))) / max_n
        else:
            ref_len = _closest_other_length(lengths, hyp_len)
            bp = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
            scores.append(100.0 * bp * math.exp(log_p))
            continue
        scores.append(0.0)
    return MetricResult("self_bleu", sum(scores) / len(scores), len(scores), settings,  # type: ignore[arg-type]
                        per_item=scores, higher_is_better=False)


def _closest_other_length(lengths: list[int], own: int) -> int:
    """The length in ``lengths`` (sorted, holding ``own`` once for the hypothesis itself) closest to
    ``own`` after removing that one copy; the shorter wins a tie."""
    lo, hi = bisect.bisect_left(lengths, own), bisect.bisect_right(lengths, own)
    if hi - lo > 1:
        return own
    cands = [lengths[x] for x in (lo - 1, hi) if 0 <= x < len(lengths)]
    return min(cands, key=lambda r: (abs(r - own), r))


def distinct_n(texts: Sequence[str], n: int = 2) -> MetricResult:
    """Distinct n-grams / total n-grams over all ``texts``."""
    pooled: Counter[tuple[str, ...]] = Counter()
    for t in texts:
        pooled.update(_ngrams(tokenize(t), n))
    total = sum(pooled.values())
    return MetricResult(f"distinct_{n}", len(pooled) / total if total else None, len(texts),
                        {"tokenization": TOKENIZATION, "n": n, "pooling": "over the whole set"})
