import pytest

from cfaug.config import ConfigError
from cfaug.filters import FILTERS, apply_filters, build_filter
from cfaug.judges.base import Candidate


def cand(old: str, new: str, **scores: float) -> Candidate:
    return Candidate({"text": old}, {"text": new}, "negative", scores=dict(scores))


@pytest.fixture(scope="module")
def mover_filter():
    return build_filter({"@filters": "moverscore", "min": 0.55})


def test_registered_name_resolves(mover_filter):
    assert FILTERS.resolve("moverscore") == "moverscore.v1"
    assert FILTERS.get("moverscore").Config().min == 0.55 and FILTERS.get("moverscore").Config().model is None
    assert mover_filter.name == "moverscore" and mover_filter.min == 0.55
    assert mover_filter.judge.describe()["judge"] == "moverscore"
    with pytest.raises(ConfigError, match="above the maximum"):
        build_filter({"@filters": "moverscore.v1", "min": 1.5})
    with pytest.raises(ConfigError, match="model"):
        build_filter({"@filters": "moverscore", "model": "no/such-model-here"})


def test_threshold_keeps_and_rejects_and_records_scores(mover_filter):
    same = cand("A great film.", "A great film.")
    far = cand("A great film.", "Interest rates rose sharply in March.")
    assert mover_filter.check([same, far]) == [True, False]
    assert same.scores["moverscore"] == pytest.approx(1.0, abs=1e-6)
    assert far.scores["moverscore"] < 0.55
    # the threshold decides: the same pair passes a low enough minimum
    low = type(mover_filter)(-1.0, mover_filter.judge)  # same judge, lower minimum
    again = cand("A great film.", "Interest rates rose sharply in March.")
    assert low.check([again]) == [True]
    assert again.scores["moverscore"] == pytest.approx(far.scores["moverscore"], abs=1e-6)


def test_a_score_already_recorded_is_reused(mover_filter):
    class Refuses:
        def score(self, batch):
            raise AssertionError("the judge should not be asked")

    f = type(mover_filter)(0.55, Refuses())
    assert f.check([cand("x", "y", moverscore=0.7), cand("x", "z", moverscore=0.2)]) == [True, False]


def test_runs_in_a_filter_chain(mover_filter):
    unchanged, edited = cand("A great film.", "A great film."), cand("A great film.", "Stocks fell in March.")
    verdicts = apply_filters([unchanged, edited], [build_filter("changed"), mover_filter])
    assert verdicts == [{"changed": False, "moverscore": None}, {"changed": True, "moverscore": False}]
    assert "moverscore" not in unchanged.scores and "moverscore" in edited.scores


def test_an_empty_rewrite_fails_without_a_score(mover_filter):
    empty = cand("A great film.", "")
    assert mover_filter.check([empty]) == [False]
    assert "moverscore" not in empty.scores
