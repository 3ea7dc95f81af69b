import pytest

from cfaug.evaluate.harmonic import h_score, harmonic_mean
from cfaug.evaluate.result import MetricResult


def test_harmonic_mean_hand_computed():
    assert harmonic_mean(0.75, 0.5) == pytest.approx(0.6)
    assert harmonic_mean(0.78, 0.66) == pytest.approx(2 * 0.78 * 0.66 / 1.44)
    assert harmonic_mean(0.0, 0.0) == 0.0
    with pytest.raises(ValueError):
        harmonic_mean(1.5, 0.5)


def test_h_score_names_its_ingredients():
    content = MetricResult("bertscore_f1", 0.8, 10, {"model": "m"})
    flip = MetricResult("flip_rate", 0.4, 10, {"independent": True})
    h = h_score(content, flip)
    assert h.value == pytest.approx(2 * 0.8 * 0.4 / 1.2)
    assert h.settings["content"] == content.signature and h.settings["flip_rate"] == flip.signature
    assert h_score(content, MetricResult("flip_rate", None, 0)).value is None
