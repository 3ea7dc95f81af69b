import math
import random

import pytest

from cfaug.evaluate.diversity import distinct_n, self_bleu
from cfaug.nlp.tokens import tokenize


def test_distinct_n_hand_computed():
    assert distinct_n(["a b a b"], n=1).value == pytest.approx(2 / 4)
    assert distinct_n(["a b a b"], n=2).value == pytest.approx(2 / 3)
    assert distinct_n(["a b", "b a"], n=2).value == pytest.approx(1.0)
    assert distinct_n(["a"], n=2).value is None


def test_self_bleu_hand_computed():
    assert self_bleu(["a b c d", "a b c d"]).value == pytest.approx(100.0)
    assert self_bleu(["a b c d", "e f g h"]).value == 0.0
    # p1..p4 = 3/4, 2/3, 1/2, (0 -> 0.1)/1; equal lengths so no brevity penalty; symmetric
    expected = 100 * (0.75 * (2 / 3) * 0.5 * 0.1) ** 0.25
    assert self_bleu(["a b c d", "a b c e"]).value == pytest.approx(expected)


def test_self_bleu_brevity_penalty_and_short_texts():
    r = self_bleu(["a b c d", "a b"])
    long_vs_short = 100 * (0.5 * (1 / 3) * (0.1 / 2) * (0.1 / 1)) ** 0.25  # longer than its reference: BP 1
    short_vs_long = 100 * math.exp(1 - 4 / 2) * (1 * 1 * 0.1 * 0.1) ** 0.25  # no 3- or 4-grams: 0.1 / 1
    assert r.per_item == pytest.approx([long_vs_short, short_vs_long])
    assert self_bleu(["just one"]).value is None


def test_self_bleu_agrees_with_nltk():
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    rng = random.Random(3)
    words = "the a film movie good bad plot acting was is not very".split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 14))) for _ in range(25)]
    texts.append(texts[4])
    toks = [tokenize(t) for t in texts]
    ref = [100 * sentence_bleu(toks[:i] + toks[i + 1:], toks[i], smoothing_function=SmoothingFunction().method1,
                               auto_reweigh=False) for i in range(len(toks))]
    assert self_bleu(texts).per_item == pytest.approx(ref, abs=1e-9)
