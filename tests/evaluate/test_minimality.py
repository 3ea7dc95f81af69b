import pytest

from cfaug.evaluate.minimality import edit_rate, mover_distance
from cfaug.judges.mover import mover_score
from cfaug.judges.token_embeddings import TokenEncoder


def test_edit_rate_hand_computed():
    r = edit_rate(["the film is good .", "a b c d", "It's fine"], ["the film is bad .", "a c d e", "It's fine"])
    # one substitution in five tokens; a deletion and an insertion in four; nothing
    assert r.per_item == pytest.approx([0.2, 0.5, 0.0])
    assert r.value == pytest.approx(0.7 / 3)
    assert r.higher_is_better is False
    assert "Levenshtein" in r.settings["distance"]


def test_mover_distance_zero_for_identical_texts(tiny_bert):
    enc = TokenEncoder(tiny_bert)
    r = mover_distance(["the plot was boring .", "it was good"], ["the plot was boring .", "it was bad"], enc)
    assert r.per_item[0] == pytest.approx(0.0, abs=1e-5)
    assert 0.0 < r.per_item[1] <= 2.0
    assert r.details["similarity"] == pytest.approx(1 - r.value)
    assert r.per_item[1] == pytest.approx(1 - mover_score(enc, ["it was good"], ["it was bad"])[0])  # one part


def test_mover_distance_counts_an_edit_beyond_the_window(tiny_bert):
    enc = TokenEncoder(tiny_bert, max_length=8)  # six words per window
    body = "the plot was boring and the acting was not fun . "
    r = mover_distance([body + "it was good"], [body + "it was bad"], enc)
    assert r.per_item[0] > 1e-3
