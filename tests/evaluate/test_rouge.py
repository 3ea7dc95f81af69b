import pytest

from cfaug.evaluate.rouge import rouge


def test_rouge_hand_computed_with_stemmer():
    r = rouge(["the cat sat on the mat", "cats running"], ["the cat sat", "the cat runs"])
    # 1) 3 shared unigrams: P 3/6, R 3/3; 2 shared bigrams: P 2/5, R 2/2; LCS 3
    # 2) stemmed "cat run" vs "the cat run": unigrams P 2/2, R 2/3; bigram "cat run" P 1/1, R 1/2
    f = lambda p, r: 2 * p * r / (p + r)  # noqa: E731
    assert r.details["rouge1"] == pytest.approx((f(0.5, 1.0) + f(1.0, 2 / 3)) / 2)
    assert r.details["rouge2"] == pytest.approx((f(0.4, 1.0) + f(1.0, 0.5)) / 2)
    assert r.value == r.details["rougeL"] == pytest.approx((f(0.5, 1.0) + f(1.0, 2 / 3)) / 2)
    assert r.settings["stemmer"] is True and r.settings["package"].startswith("rouge-score")
    with pytest.raises(ValueError):
        rouge(["a"], [])
