import math

import pytest

from cfaug.judges.ngram_lm import EOS, UNK, NgramLM


def test_witten_bell_bigram_hand_computed():
    lm = NgramLM(order=2).fit(["a b", "a c"])
    # vocabulary: a b c <unk> </s> (5); unigram counts a2 b1 c1 </s>2: total 6, 4 types
    p_uni = {w: (c + 4 * 0.2) / (6 + 4) for w, c in {"a": 2, "b": 1, "c": 1, EOS: 2, UNK: 0}.items()}
    assert lm.prob("a", ["<s>"]) == pytest.approx((2 + 1 * p_uni["a"]) / (2 + 1))  # 0.76
    assert lm.prob("b", ["a"]) == pytest.approx((1 + 2 * p_uni["b"]) / (2 + 2))  # 0.34
    assert lm.prob(EOS, ["b"]) == pytest.approx((1 + 1 * p_uni[EOS]) / (1 + 1))  # 0.64
    assert lm.prob("zebra", ["a"]) == pytest.approx((0 + 2 * p_uni[UNK]) / 4)
    assert lm.perplexity("a b") == pytest.approx((0.76 * 0.34 * 0.64) ** (-1 / 3))


def test_probabilities_sum_to_one():
    lm = NgramLM(order=3).fit(["the film was good .", "the plot was bad ."])
    for hist in (["<s>", "<s>"], ["the", "film"], ["was", "zebra"]):
        assert sum(lm.prob(w, hist) for w in lm.vocab) == pytest.approx(1.0)


def test_log_prob_counts_the_end_symbol():
    lm = NgramLM(order=1).fit(["x y"])
    lp, n = lm.log_prob("x")
    assert n == 2
    assert lp == pytest.approx(math.log(lm.prob("x", [])) + math.log(lm.prob(EOS, [])))
    with pytest.raises(ValueError):
        NgramLM(order=2).fit([""])
