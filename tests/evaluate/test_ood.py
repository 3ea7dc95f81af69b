import numpy as np
import pytest

from cfaug.evaluate.ood import auroc_and_fpr95, ood_auroc, ood_scores


class MovieModel:
    """Confident (0.95) on texts containing 'movie', unsure (0.55) otherwise."""

    def __init__(self) -> None:
        self.calls = 0

    def predict_proba(self, inputs):
        self.calls += 1
        top = np.array([0.95 if "movie" in t else 0.55 for t in inputs])
        return np.stack([top, 1 - top], axis=1)


class LogitModel(MovieModel):
    def predict_logits(self, inputs):
        return np.array([[3.0, 0.0] if "movie" in t else [0.1, 0.0] for t in inputs])


MOVIES = ["a fine movie", "the movie was long", "movie night", "what a movie"]
OTHER = ["the soup was cold", "great service", "slow waiter"]


def test_perfect_separation():
    model = MovieModel()
    r = ood_auroc(model, MOVIES, OTHER)
    assert r.auroc == 100.0 and r.fpr_at_95_tpr == 0.0
    assert (r.n_in, r.n_out, r.score) == (4, 3, "msp")
    assert r.mean_score_in == pytest.approx(0.95) and r.mean_score_out == pytest.approx(0.55)
    assert model.calls == 1
    assert r.facts()["auroc"] == 100.0


def test_inverted_and_chance():
    inverted = ood_auroc(MovieModel(), OTHER, MOVIES)
    assert inverted.auroc == 0.0 and inverted.fpr_at_95_tpr == 100.0
    chance = ood_auroc(MovieModel(), ["movie a", "b"], ["movie c", "d"])
    assert chance.auroc == 50.0
    same = ood_auroc(MovieModel(), OTHER, ["x", "y"])  # every score ties
    assert same.auroc == 50.0 and same.fpr_at_95_tpr == 100.0


def test_fpr_at_95_tpr_hand_computed():
    # 20 in-distribution scores 1..20; keeping 95% of them (19) needs threshold 2
    in_s = np.arange(1, 21, dtype=float)
    out_s = np.array([0.0, 1.5, 2.5, 30.0])  # 2.5 and 30 are at or above 2
    auroc, fpr = auroc_and_fpr95(in_s, out_s)
    assert fpr == pytest.approx(50.0)
    assert auroc == pytest.approx(100.0 * (20 + 19 + 18 + 0) / 80)


def test_energy_score():
    r = ood_auroc(LogitModel(), MOVIES, OTHER, score="energy")
    assert r.auroc == 100.0 and r.score == "energy"
    assert ood_scores(LogitModel(), ["movie"], "energy")[0] == pytest.approx(np.log(np.exp(3.0) + 1.0))
    with pytest.raises(ValueError, match="predict_logits"):
        ood_auroc(MovieModel(), MOVIES, OTHER, score="energy")


def test_input_validation():
    with pytest.raises(ValueError, match="non-empty"):
        ood_auroc(MovieModel(), [], OTHER)
    with pytest.raises(ValueError, match="non-empty"):
        ood_auroc(MovieModel(), MOVIES, [])
    with pytest.raises(ValueError, match="unknown OOD score"):
        ood_auroc(MovieModel(), MOVIES, OTHER, score="mahalanobis")

    class Bad:
        def predict_proba(self, inputs):
            return np.ones(len(inputs))

    with pytest.raises(ValueError, match="shape"):
        ood_auroc(Bad(), MOVIES, OTHER)
