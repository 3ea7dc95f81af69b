"""Exact-match triplet scores: a partial span or a wrong polarity is wrong, duplicates count once."""

import pytest

from cfaug.aste.grid_tagger import ScoredTriplet
from cfaug.aste.metrics import prf, term_scores, triplet_scores
from cfaug.data.aste import Triplet

FOOD = Triplet((1,), (3,), "POS")
SERVICE = Triplet((6, 7), (9,), "NEG")


def test_perfect_predictions_score_100():
    s = triplet_scores([[FOOD, SERVICE], []], [[SERVICE, FOOD], []])
    assert s == {"precision": 100.0, "recall": 100.0, "f1": 100.0, "n_gold": 2, "n_pred": 2, "n_correct": 2}


def test_partial_span_is_wrong():
    partial = Triplet((7,), (9,), "NEG")  # "service" of "customer service"
    s = triplet_scores([[FOOD, SERVICE]], [[FOOD, partial]])
    assert s["n_correct"] == 1 and s["precision"] == 50.0 and s["recall"] == 50.0 and s["f1"] == 50.0
    longer = Triplet((1,), (3, 4), "POS")
    assert triplet_scores([[FOOD]], [[longer]])["n_correct"] == 0


def test_wrong_polarity_is_wrong():
    s = triplet_scores([[FOOD]], [[Triplet((1,), (3,), "NEU")]])
    assert s["n_correct"] == 0 and s["f1"] == 0.0


def test_duplicates_count_once():
    s = triplet_scores([[FOOD, FOOD]], [[FOOD, FOOD, FOOD, Triplet((1,), (3,), "NEG")]])
    assert (s["n_gold"], s["n_pred"], s["n_correct"]) == (1, 2, 1)
    assert s["precision"] == 50.0 and s["recall"] == 100.0
    assert s["f1"] == pytest.approx(200 / 3)


def test_micro_average_over_sentences():
    s = triplet_scores([[FOOD], [SERVICE], [FOOD]], [[FOOD], [], [SERVICE]])
    assert (s["n_gold"], s["n_pred"], s["n_correct"]) == (3, 2, 1)
    assert s["precision"] == 50.0 and s["recall"] == pytest.approx(100 / 3)


def test_a_triplet_in_the_wrong_sentence_is_wrong():
    assert triplet_scores([[FOOD], []], [[], [FOOD]])["n_correct"] == 0


def test_nothing_predicted_or_nothing_to_find_gives_zeros():
    assert triplet_scores([[FOOD]], [[]])["f1"] == 0.0
    s = triplet_scores([[]], [[FOOD]])
    assert s["precision"] == 0.0 and s["recall"] == 0.0 and s["f1"] == 0.0
    assert triplet_scores([], [])["f1"] == 0.0
    assert isinstance(triplet_scores([[FOOD]], [[FOOD]])["f1"], float)


def test_lengths_must_match():
    with pytest.raises(ValueError, match="differ in length"):
        triplet_scores([[FOOD], []], [[FOOD]])


def test_scored_predictions_are_accepted():
    s = triplet_scores([[FOOD]], [[ScoredTriplet(FOOD, 0.9), ScoredTriplet(SERVICE, 0.2)]])
    assert (s["n_pred"], s["n_correct"]) == (2, 1)


def test_term_scores_separate_aspects_opinions_and_pairs():
    wrong_polarity = Triplet((1,), (3,), "NEG")
    wrong_opinion = Triplet((6, 7), (8, 9), "NEG")
    s = term_scores([[FOOD, SERVICE]], [[wrong_polarity, wrong_opinion]])
    assert s["aspect"]["f1"] == 100.0
    assert s["opinion"]["n_correct"] == 1 and s["opinion"]["f1"] == 50.0
    assert s["pair"]["n_correct"] == 1
    assert triplet_scores([[FOOD, SERVICE]], [[wrong_polarity, wrong_opinion]])["f1"] == 0.0


def test_an_aspect_with_two_opinions_counts_once_as_a_term():
    s = term_scores([[FOOD, Triplet((1,), (5,), "POS")]], [[FOOD]])
    assert s["aspect"]["n_gold"] == 1 and s["aspect"]["f1"] == 100.0
    assert s["pair"]["n_gold"] == 2 and s["pair"]["recall"] == 50.0


def test_prf():
    assert prf(4, 2, 2)["f1"] == pytest.approx(2 * 100 * 50 / 150)
